// The duplicate guard across a fleet: an Idempotency-Key answered on one node is replayed by
// another without a second provider call, a duplicate of a running request is refused on any
// node, and while Redis is unreachable each node guards alone. Two Switchyard processes (the
// shipped binary, headless) on one Redis (Debian's redis-server, started by the test on a free
// loopback port) in front of one fake provider; and the Redis store itself on two links.
#include "answers/redis_answer_store.h"
#include "fleet_test_bed.h"
#include "redis/redis_link.h"
#include "test_client.h"
#include "timing/clock.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <memory>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);

std::unique_ptr<TestClient> post(quint16 port, bool stream, const QByteArray &key)
{
    auto client = std::make_unique<TestClient>(port);
    client->post("/v1/chat/completions", chatBody("test-model", stream),
                 {{"Idempotency-Key", key}});
    return client;
}

std::unique_ptr<TestClient> postAndWait(quint16 port, bool stream, const QByteArray &key)
{
    std::unique_ptr<TestClient> client = post(port, stream, key);
    client->waitForFinished(15000);
    return client;
}

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

// One claim, waited for.
std::optional<answers::ClaimResult> claimOf(answers::AnswerStore &store, const QByteArray &key,
                                            const QByteArray &fingerprint = "f1")
{
    std::optional<answers::ClaimResult> result;
    store.claim(key, fingerprint, "req", 10min,
                [&result](answers::ClaimResult claimed) { result = std::move(claimed); });
    if (!QTest::qWaitFor([&] { return result.has_value(); }, 5000))
        return std::nullopt;
    return result;
}

answers::StoredAnswer answerOf(const QByteArray &body)
{
    answers::StoredAnswer answer;
    answer.headers = {{"x-switchyard-provider", "fake"}};
    answer.contentType = "application/json";
    answer.body = body;
    answer.requestId = "req";
    return answer;
}

} // namespace

class TestFleetIdempotency : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void theRedisStoreSharesClaimsAndAnswersBetweenLinks();
    void theRedisStoreFallsBackToTheNodeWhileRedisIsDown();
    void aReplayedKeyOnAnotherNodeMakesNoSecondProviderCall_data();
    void aReplayedKeyOnAnotherNodeMakesNoSecondProviderCall();
    void aDuplicateOnAnotherNodeWhileTheFirstRunsGets409();
    void whileRedisIsDownEachNodeGuardsAlone();

private:
    std::unique_ptr<FleetTestBed> m_bed;
};

void TestFleetIdempotency::initTestCase()
{
    QVERIFY2(QFile::exists(kBinary), qPrintable(kBinary));
}

void TestFleetIdempotency::init()
{
    m_bed = std::make_unique<FleetTestBed>(kBinary);
    QVERIFY(m_bed->start());
}

void TestFleetIdempotency::cleanup()
{
    m_bed.reset();
}

void TestFleetIdempotency::theRedisStoreSharesClaimsAndAnswersBetweenLinks()
{
    redis::Link linkA(linkOptions(m_bed->redis()));
    redis::Link linkB(linkOptions(m_bed->redis()));
    QSignalSpy upA(&linkA, &redis::Link::linkUp);
    QSignalSpy upB(&linkB, &redis::Link::linkUp);
    linkA.start();
    linkB.start();
    QTRY_VERIFY_WITH_TIMEOUT(upA.count() == 1 && upB.count() == 1, 5000);
    timing::ManualClock clock;
    answers::LocalAnswerStore localA({}, clock);
    answers::LocalAnswerStore localB({}, clock);
    answers::RedisAnswerStore nodeA(linkA, "switchyard:test:", localA);
    answers::RedisAnswerStore nodeB(linkB, "switchyard:test:", localB);
    using Outcome = answers::ClaimResult::Outcome;

    const std::optional<answers::ClaimResult> claimed = claimOf(nodeA, "k");
    QVERIFY(claimed);
    QCOMPARE(claimed->outcome, Outcome::Claimed);
    QCOMPARE(claimed->where, QByteArray("redis"));
    QCOMPARE(claimOf(nodeB, "k")->outcome, Outcome::Running);
    QCOMPARE(claimOf(nodeB, "k", "f2")->outcome, Outcome::Mismatch);
    // The claim expires with the window Redis was given.
    const QByteArray ttl = m_bed->redis().command({"PTTL", "switchyard:test:answers:k"});
    QVERIFY2(ttl.toLongLong() > 590000 && ttl.toLongLong() <= 600000, ttl.constData());

    nodeA.put("k", claimed->token, answerOf("whole"), 10min);
    QTRY_VERIFY_WITH_TIMEOUT(claimOf(nodeB, "k")->outcome == Outcome::Answered, 5000);
    QCOMPARE(claimOf(nodeB, "k")->answer, std::optional(answerOf("whole")));
    QCOMPARE(localA.answerCount(), 0); // Redis took it: nothing kept beside it

    // A release frees the key for every node; a stale token frees nothing.
    const std::optional<answers::ClaimResult> second = claimOf(nodeB, "k2");
    nodeA.release("k2", "Rnot-the-token");
    QTest::qWait(50);
    QCOMPARE(claimOf(nodeA, "k2")->outcome, Outcome::Running);
    nodeB.release("k2", second->token);
    // A claim changes what it looks at: wait for the key to go, then claim once.
    QTRY_VERIFY_WITH_TIMEOUT(
        m_bed->redis().command({"EXISTS", "switchyard:test:answers:k2"}) == "0", 5000);
    QCOMPARE(claimOf(nodeA, "k2")->outcome, Outcome::Claimed);
}

void TestFleetIdempotency::theRedisStoreFallsBackToTheNodeWhileRedisIsDown()
{
    redis::Link link(linkOptions(m_bed->redis()));
    QSignalSpy up(&link, &redis::Link::linkUp);
    QSignalSpy down(&link, &redis::Link::linkDown);
    link.start();
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 1, 5000);
    timing::ManualClock clock;
    answers::LocalAnswerStore local({}, clock);
    answers::RedisAnswerStore store(link, "switchyard:test:", local);
    using Outcome = answers::ClaimResult::Outcome;

    // Claimed in Redis, then Redis goes away before the answer is put: kept on the node.
    const std::optional<answers::ClaimResult> inRedis = claimOf(store, "before");
    QCOMPARE(inRedis->where, QByteArray("redis"));
    m_bed->redis().kill();
    store.put("before", inRedis->token, answerOf("kept here"), 10min);
    QTRY_COMPARE_WITH_TIMEOUT(local.answerCount(), 1, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(!link.isUp(), 5000);
    const std::optional<answers::ClaimResult> kept = claimOf(store, "before");
    QCOMPARE(kept->outcome, Outcome::Answered);
    QCOMPARE(kept->where, QByteArray("local"));

    // Claimed while down: decided on the node at once, without a command.
    const quint64 sent = link.commandsSent();
    const std::optional<answers::ClaimResult> alone = claimOf(store, "during");
    QCOMPARE(alone->outcome, Outcome::Claimed);
    QCOMPARE(alone->where, QByteArray("local"));
    QCOMPARE(claimOf(store, "during")->outcome, Outcome::Running);
    store.put("during", alone->token, answerOf("local"), 10min);
    QCOMPARE(claimOf(store, "during")->answer->body, QByteArray("local"));
    QCOMPARE(link.commandsSent(), sent);
}

void TestFleetIdempotency::aReplayedKeyOnAnotherNodeMakesNoSecondProviderCall_data()
{
    QTest::addColumn<bool>("stream");
    QTest::newRow("whole") << false;
    QTest::newRow("streamed") << true;
}

void TestFleetIdempotency::aReplayedKeyOnAnotherNodeMakesNoSecondProviderCall()
{
    QFETCH(bool, stream);
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    QVERIFY2(b.waitForPort(), b.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);

    std::unique_ptr<TestClient> original = postAndWait(a.port(), stream, "fleet-key");
    QCOMPARE(original->status(), 200);
    QCOMPARE(m_bed->fake().requests().size(), 1);
    // The answer is in Redis under the fleet's prefix, once node a has written it.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const QList<QByteArray> keys =
                m_bed->redis().keys("switchyard:default:answers:idempotency:*");
            return keys.size() == 1 &&
                   m_bed->redis().command({"GET", keys.first()}).contains("\"answer\"");
        }(),
        5000);

    std::unique_ptr<TestClient> replay = postAndWait(b.port(), stream, "fleet-key");
    QCOMPARE(replay->status(), 200);
    QCOMPARE(replay->header("x-switchyard-idempotent-replay"), QByteArray("true"));
    QCOMPARE(replay->header("x-switchyard-replay-of"), original->header("x-switchyard-request-id"));
    QCOMPARE(replay->body(), original->body());
    QCOMPARE(replay->chunked(), stream);
    QCOMPARE(m_bed->fake().requests().size(), 1);
}

void TestFleetIdempotency::aDuplicateOnAnotherNodeWhileTheFirstRunsGets409()
{
    m_bed->fake().manualStreaming = true;
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    QVERIFY2(b.waitForPort(), b.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);

    std::unique_ptr<TestClient> first = post(a.port(), true, "running-key");
    QVERIFY(QTest::qWaitFor([&] { return m_bed->fake().requests().size() == 1; }, 10000));
    std::unique_ptr<TestClient> duplicate = postAndWait(b.port(), true, "running-key");
    QCOMPARE(duplicate->status(), 409);
    QCOMPARE(duplicate->header("retry-after"), QByteArray("1"));
    QCOMPARE(QJsonDocument::fromJson(duplicate->body())
                 .object()
                 .value(u"error"_s)
                 .toObject()
                 .value(u"code"_s)
                 .toString(),
             u"idempotency_key_in_use"_s);
    QVERIFY(QTest::qWaitFor(
        [&] {
            m_bed->fake().releaseEvent();
            return first->finished();
        },
        10000));
    QCOMPARE(first->status(), 200);
    QTRY_COMPARE_WITH_TIMEOUT(
        postAndWait(b.port(), true, "running-key")->header("x-switchyard-idempotent-replay"),
        QByteArray("true"), 5000);
    QCOMPARE(m_bed->fake().requests().size(), 1);
}

void TestFleetIdempotency::whileRedisIsDownEachNodeGuardsAlone()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 1, 10000);
    m_bed->redis().kill();
    QTRY_VERIFY_WITH_TIMEOUT(
        !getJson(a.port(), "/admin/v1/fleet").value(u"link"_s).toObject().value(u"up"_s).toBool(),
        10000);
    QCOMPARE(postAndWait(a.port(), false, "alone-key")->status(), 200);
    std::unique_ptr<TestClient> again = postAndWait(a.port(), false, "alone-key");
    QCOMPARE(again->status(), 200);
    QCOMPARE(again->header("x-switchyard-idempotent-replay"), QByteArray("true"));
    QCOMPARE(m_bed->fake().requests().size(), 1);
}

QTEST_MAIN(TestFleetIdempotency)
#include "tst_fleet_idempotency.moc"
