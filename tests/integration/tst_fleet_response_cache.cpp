// The response cache across a fleet: an answer one node kept is a hit on another without a
// second provider call; the fleet's cache in Redis keeps within the same bounds as a node's
// (entries and bytes, least recently used first) with each answer's ttl as its key's expiry;
// and while Redis is unreachable each node answers from its own cache. Two Switchyard processes
// (the shipped binary, headless) on one Redis (Debian's redis-server, started by the test on a
// free loopback port) in front of one fake provider; and the Redis cache itself on two links.
#include "answers/redis_response_cache.h"
#include "fleet_test_bed.h"
#include "redis/redis_link.h"
#include "test_client.h"
#include "timing/clock.h"

#include <QFile>
#include <QSignalSpy>
#include <QTest>
#include <memory>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);
const QByteArray kPrefix = "switchyard:test:";

redis::Link::Options linkOptions(const RedisServer &server)
{
    redis::Link::Options options;
    options.address.host = u"127.0.0.1"_s;
    options.address.port = server.port();
    options.timeout = 300ms;
    options.firstRetry = 20ms;
    options.longestRetry = 100ms;
    return options;
}

answers::StoredAnswer answerOf(const QByteArray &body)
{
    answers::StoredAnswer answer;
    answer.headers = {{"x-switchyard-provider", "fake"}};
    answer.contentType = "application/json";
    answer.body = body;
    answer.requestId = "req";
    answer.model = u"test-model"_s;
    answer.costUsd = 0.25;
    answer.priced = true;
    return answer;
}

// One lookup, waited for: the answer, or nullopt for a miss; `where` says who answered.
std::optional<answers::StoredAnswer> lookUp(answers::ResponseCache &cache, const QByteArray &key,
                                            QByteArray *where = nullptr)
{
    bool done = false;
    std::optional<answers::StoredAnswer> found;
    cache.lookup(key, [&](std::optional<answers::StoredAnswer> answer, QByteArray answeredBy) {
        found = std::move(answer);
        if (where)
            *where = answeredBy;
        done = true;
    });
    if (!QTest::qWaitFor([&] { return done; }, 5000))
        qWarning("the lookup of %s was never answered", key.constData());
    return found;
}

std::unique_ptr<TestClient> ask(quint16 port)
{
    auto client = std::make_unique<TestClient>(port);
    client->post("/v1/chat/completions",
                 R"({"model":"test-model","temperature":0,"messages":[{"role":"user",)"
                 R"("content":"what is a fleet?"}]})");
    client->waitForFinished(15000);
    return client;
}

} // namespace

class TestFleetResponseCache : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void theRedisCacheIsSharedAndBounded();
    void theRedisCacheFallsBackToTheNodeWhileRedisIsDown();
    void anAnswerKeptOnOneNodeIsAHitOnAnother();

private:
    std::unique_ptr<FleetTestBed> m_bed;
};

void TestFleetResponseCache::initTestCase()
{
    QVERIFY2(QFile::exists(kBinary), qPrintable(kBinary));
}

void TestFleetResponseCache::init()
{
    m_bed = std::make_unique<FleetTestBed>(kBinary);
    QVERIFY(m_bed->start());
}

void TestFleetResponseCache::cleanup()
{
    m_bed.reset();
}

void TestFleetResponseCache::theRedisCacheIsSharedAndBounded()
{
    redis::Link linkA(linkOptions(m_bed->redis()));
    redis::Link linkB(linkOptions(m_bed->redis()));
    QSignalSpy upA(&linkA, &redis::Link::linkUp);
    QSignalSpy upB(&linkB, &redis::Link::linkUp);
    linkA.start();
    linkB.start();
    QTRY_VERIFY_WITH_TIMEOUT(upA.count() == 1 && upB.count() == 1, 5000);
    const answers::CacheBounds bounds{2, 1024 * 1024};
    answers::LocalResponseCache localA(bounds);
    answers::LocalResponseCache localB(bounds);
    answers::RedisResponseCache nodeA(linkA, kPrefix, localA, bounds);
    answers::RedisResponseCache nodeB(linkB, kPrefix, localB, bounds);

    nodeA.keep("k1", answerOf("first"), 10min);
    QTRY_COMPARE_WITH_TIMEOUT(m_bed->redis().command({"ZCARD", kPrefix + "cache:recency"}),
                              QByteArray("1"), 5000);
    QByteArray where;
    QCOMPARE(lookUp(nodeB, "k1", &where), std::optional(answerOf("first")));
    QCOMPARE(where, QByteArray("redis"));
    QCOMPARE(localA.counts().entries, 0); // Redis took it: nothing kept beside it
    QVERIFY(!lookUp(nodeB, "nothing-here", &where));
    QCOMPARE(where, QByteArray("redis"));
    // The ttl is the key's expiry in Redis.
    const qint64 ttl = m_bed->redis().command({"PTTL", kPrefix + "cache:entry:k1"}).toLongLong();
    QVERIFY2(ttl > 590000 && ttl <= 600000, QByteArray::number(ttl).constData());

    // Three answers into two places: the least recently used goes, from every index.
    nodeB.keep("k2", answerOf("second"), 10min);
    QTRY_COMPARE_WITH_TIMEOUT(m_bed->redis().command({"ZCARD", kPrefix + "cache:recency"}),
                              QByteArray("2"), 5000);
    QVERIFY(lookUp(nodeA, "k1")); // k1 is now the most recently used
    nodeA.keep("k3", answerOf("third"), 10min);
    QTRY_COMPARE_WITH_TIMEOUT(nodeA.counts().evictedByBound, quint64(1), 5000);
    QVERIFY(lookUp(nodeB, "k1"));
    QVERIFY(!lookUp(nodeB, "k2"));
    QVERIFY(lookUp(nodeB, "k3"));
    QCOMPARE(m_bed->redis().command({"ZCARD", kPrefix + "cache:recency"}), QByteArray("2"));
    QCOMPARE(m_bed->redis().command({"ZCARD", kPrefix + "cache:expiry"}), QByteArray("2"));
    QCOMPARE(m_bed->redis().command({"HLEN", kPrefix + "cache:sizes"}), QByteArray("2"));
    QCOMPARE(m_bed->redis().command({"EXISTS", kPrefix + "cache:entry:k2"}), QByteArray("0"));
    const qint64 bytes = m_bed->redis().command({"GET", kPrefix + "cache:bytes"}).toLongLong();
    QCOMPARE(nodeA.counts().entries, 2);
    QCOMPARE(nodeA.counts().bytes, bytes);
    QVERIFY(bytes > 0);

    // The byte bound: an answer larger than the whole cache is not kept, and a bound that
    // holds one answer keeps the newest.
    const answers::CacheBounds small{100, 2 * answers::encodeAnswer(answerOf("x")).size()};
    nodeA.setLimits(small);
    nodeA.keep("big", answerOf(QByteArray(4096, 'b')), 10min);
    nodeA.keep("k4", answerOf("x"), 10min);
    QTRY_VERIFY_WITH_TIMEOUT(lookUp(nodeB, "k4").has_value(), 5000);
    QVERIFY(!lookUp(nodeB, "big"));
    QCOMPARE(m_bed->redis().command({"ZCARD", kPrefix + "cache:recency"}), QByteArray("1"));
    QVERIFY(m_bed->redis().command({"GET", kPrefix + "cache:bytes"}).toLongLong() <=
            small.maxBytes);

    // A ttl that ran out: Redis dropped the value, the next lookup drops its place too.
    nodeA.keep("short", answerOf("brief"), 1ms);
    QTRY_COMPARE_WITH_TIMEOUT(
        m_bed->redis().command({"ZSCORE", kPrefix + "cache:expiry", "short"}).isEmpty(), false,
        5000);
    QTest::qWait(20);
    QVERIFY(!lookUp(nodeB, "short"));
    QVERIFY(m_bed->redis().command({"ZSCORE", kPrefix + "cache:expiry", "short"}).isEmpty());
}

void TestFleetResponseCache::theRedisCacheFallsBackToTheNodeWhileRedisIsDown()
{
    redis::Link link(linkOptions(m_bed->redis()));
    QSignalSpy up(&link, &redis::Link::linkUp);
    link.start();
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 1, 5000);
    answers::LocalResponseCache local({});
    answers::RedisResponseCache cache(link, kPrefix, local, {});

    m_bed->redis().kill();
    QTRY_VERIFY_WITH_TIMEOUT(!link.isUp(), 5000);
    const quint64 sent = link.commandsSent();
    cache.keep("alone", answerOf("made while Redis was away"), 10min);
    QByteArray where;
    QCOMPARE(lookUp(cache, "alone", &where)->body, QByteArray("made while Redis was away"));
    QCOMPARE(where, QByteArray("local"));
    QCOMPARE(local.counts().entries, 1);
    QCOMPARE(cache.counts().entries, 1);
    QCOMPARE(link.commandsSent(), sent); // decided on the node, without a command
}

void TestFleetResponseCache::anAnswerKeptOnOneNodeIsAHitOnAnother()
{
    m_bed->config.providers = "providers:\n"
                              "  - id: fake\n"
                              "    kind: openai\n"
                              "    base_url: " +
                              m_bed->fake().baseUrl() +
                              "\n"
                              "    capacity: 256\n"
                              "    models:\n"
                              "      - {name: test-model, cache: {ttl: 10m}}\n";
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    QVERIFY2(b.waitForPort(), b.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);

    std::unique_ptr<TestClient> original = ask(a.port());
    QCOMPARE(original->status(), 200);
    QCOMPARE(original->header("x-switchyard-cache"), QByteArray("miss"));
    QTRY_COMPARE_WITH_TIMEOUT(m_bed->redis().keys("switchyard:default:cache:entry:*").size(), 1,
                              5000);

    std::unique_ptr<TestClient> again = ask(b.port());
    QCOMPARE(again->status(), 200);
    QCOMPARE(again->header("x-switchyard-cache"), QByteArray("hit"));
    QCOMPARE(again->header("x-switchyard-replay-of"), original->header("x-switchyard-request-id"));
    QCOMPARE(again->body(), original->body());
    QCOMPARE(m_bed->fake().requests().size(), 1);
}

QTEST_GUILESS_MAIN(TestFleetResponseCache)
#include "tst_fleet_response_cache.moc"
