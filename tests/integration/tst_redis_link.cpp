// The fleet's Redis link against a real redis-server started by the test on a free loopback
// port: commands and their replies, authentication and database selection, and what the link does
// when Redis refuses, dies, hangs and comes back.
#include "redis/redis_link.h"
#include "redis_server.h"

#include <QSignalSpy>
#include <QTest>
#include <optional>

using namespace switchyard;
using namespace switchyard::redis;
using namespace std::chrono_literals;
using switchyard::testing::RedisServer;

namespace {

Link::Options optionsFor(const RedisServer &server, const QByteArray &password = {},
                         int database = 0)
{
    Link::Options options;
    options.address.host = QStringLiteral("127.0.0.1");
    options.address.port = server.port();
    options.address.database = database;
    options.password = password;
    options.timeout = 300ms;
    options.firstRetry = 20ms;
    options.longestRetry = 100ms;
    options.clientName = "switchyard-test";
    return options;
}

// Sends one command and waits for its callback; the result, or nothing if it never came.
std::optional<Result> roundTrip(Link &link, QList<QByteArray> arguments)
{
    std::optional<Result> result;
    link.send(std::move(arguments), [&result](const Result &answer) { result = answer; });
    if (!QTest::qWaitFor([&] { return result.has_value(); }, 5000))
        return std::nullopt;
    return result;
}

} // namespace

class TestRedisLink : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void repliesOfEveryType();
    void authenticatesAndSelectsTheDatabase();
    void aWrongPasswordKeepsTheLinkDown();
    void failsWhileDownOnTheNextTurnNeverInsideSend();
    void reconnectsAfterRedisDiesAndComesBackEmpty();
    void aRedisThatHangsCountsAsDown();
    void addressesParseAndRefuseWhatTheyCannotKeep();
};

void TestRedisLink::repliesOfEveryType()
{
    RedisServer server;
    QVERIFY(server.start());
    Link link(optionsFor(server));
    QSignalSpy up(&link, &Link::linkUp);
    link.start();
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 1, 5000);
    QVERIFY(link.isUp());
    QCOMPARE(link.downSinceMs(), 0);

    const quint64 sentBefore = link.commandsSent();
    std::optional<Result> set = roundTrip(link, {"SET", "greeting", QByteArray("a\0b", 3)});
    QVERIFY(set && set->ok());
    QCOMPARE(set->reply.type, Reply::Type::Status);
    QCOMPARE(set->reply.text, QByteArray("OK"));

    std::optional<Result> get = roundTrip(link, {"GET", "greeting"});
    QVERIFY(get && get->ok());
    QCOMPARE(get->reply.type, Reply::Type::String);
    QCOMPARE(get->reply.text, QByteArray("a\0b", 3)); // binary-safe both ways

    std::optional<Result> count = roundTrip(link, {"INCRBY", "counter", "41"});
    QVERIFY(count && count->ok());
    QCOMPARE(count->reply.type, Reply::Type::Integer);
    QCOMPARE(count->reply.integer, 41);

    std::optional<Result> several = roundTrip(link, {"MGET", "counter", "missing"});
    QVERIFY(several && several->ok());
    QCOMPARE(several->reply.type, Reply::Type::Array);
    QCOMPARE(several->reply.elements.size(), 2);
    QCOMPARE(several->reply.elements[0].text, QByteArray("41"));
    QVERIFY(several->reply.elements[1].isNil());

    std::optional<Result> wrongType = roundTrip(link, {"LPUSH", "greeting", "x"});
    QVERIFY(wrongType && wrongType->answered());
    QVERIFY(!wrongType->ok());
    QVERIFY(wrongType->problem().startsWith(QStringLiteral("WRONGTYPE")));
    QCOMPARE(link.commandsSent() - sentBefore, quint64(5));
    // The link names itself to Redis, so an operator finds it in CLIENT LIST.
    QVERIFY(server.command({"CLIENT", "LIST"}).contains("name=switchyard-test"));
}

void TestRedisLink::authenticatesAndSelectsTheDatabase()
{
    RedisServer server;
    QVERIFY(server.start("s3cret"));
    Link link(optionsFor(server, "s3cret", 3));
    QSignalSpy up(&link, &Link::linkUp);
    link.start();
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 1, 5000);
    std::optional<Result> set = roundTrip(link, {"SET", "in-three", "yes"});
    QVERIFY(set && set->ok());
    QVERIFY(server.command({"INFO", "keyspace"}).contains("db3:keys=1"));
    QVERIFY(!server.command({"INFO", "keyspace"}).contains("db0:"));
}

void TestRedisLink::aWrongPasswordKeepsTheLinkDown()
{
    RedisServer server;
    QVERIFY(server.start("right"));
    Link link(optionsFor(server, "wrong"));
    link.start();
    QTRY_VERIFY_WITH_TIMEOUT(link.problem().contains(QStringLiteral("refused the handshake")),
                             5000);
    QVERIFY(!link.isUp());
    QVERIFY(link.downSinceMs() > 0);
    std::optional<Result> refused = roundTrip(link, {"PING"});
    QVERIFY(refused && !refused->answered());
}

void TestRedisLink::failsWhileDownOnTheNextTurnNeverInsideSend()
{
    RedisServer server;
    QVERIFY(server.start());
    server.kill(); // the port is known and nothing listens on it
    Link link(optionsFor(server));
    link.start();
    QTRY_VERIFY_WITH_TIMEOUT(link.problem().contains(QStringLiteral("cannot connect")), 5000);

    bool called = false;
    Result seen;
    link.send({"PING"}, [&](const Result &result) {
        called = true;
        seen = result;
    });
    QVERIFY(!called); // an owner may hold a lock or be mid-change while it sends
    QTRY_VERIFY_WITH_TIMEOUT(called, 5000);
    QVERIFY(!seen.answered());
    QVERIFY(seen.failure.contains(QStringLiteral("cannot connect")));
    QVERIFY(link.commandsFailed() >= 1);

    // Redis appears on the port: the link finds it without being told.
    QSignalSpy up(&link, &Link::linkUp);
    QVERIFY(server.restart());
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 1, 5000);
    std::optional<Result> pong = roundTrip(link, {"PING"});
    QVERIFY(pong && pong->ok());
}

void TestRedisLink::reconnectsAfterRedisDiesAndComesBackEmpty()
{
    RedisServer server;
    QVERIFY(server.start());
    Link link(optionsFor(server));
    QSignalSpy up(&link, &Link::linkUp);
    QSignalSpy down(&link, &Link::linkDown);
    link.start();
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 1, 5000);
    QVERIFY(roundTrip(link, {"SET", "kept", "1"})->ok());

    server.kill();
    QTRY_COMPARE_WITH_TIMEOUT(down.count(), 1, 5000);
    QVERIFY(!link.isUp());
    QVERIFY(link.downSinceMs() > 0);
    QVERIFY(!link.problem().isEmpty());

    QVERIFY(server.restart());
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 2, 5000);
    // Empty, as a restarted Redis without persistence is: linkUp is the owner's cue to republish.
    std::optional<Result> gone = roundTrip(link, {"GET", "kept"});
    QVERIFY(gone && gone->ok());
    QVERIFY(gone->reply.isNil());
}

void TestRedisLink::aRedisThatHangsCountsAsDown()
{
    RedisServer server;
    QVERIFY(server.start());
    Link link(optionsFor(server));
    QSignalSpy up(&link, &Link::linkUp);
    QSignalSpy down(&link, &Link::linkDown);
    link.start();
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 1, 5000);

    server.suspend();
    std::optional<Result> hung = roundTrip(link, {"PING"});
    QVERIFY(hung); // answered by the link's own deadline, not left waiting
    QVERIFY(!hung->answered());
    QVERIFY2(hung->failure.contains(QStringLiteral("did not answer within 300 ms")),
             qPrintable(hung->failure));
    QCOMPARE(down.count(), 1);

    server.resume();
    QTRY_COMPARE_WITH_TIMEOUT(up.count(), 2, 5000);
    QVERIFY(roundTrip(link, {"PING"})->ok());
}

void TestRedisLink::addressesParseAndRefuseWhatTheyCannotKeep()
{
    const auto parsed = parseAddress(QStringLiteral("redis://10.0.0.5:6380/2"));
    QVERIFY(std::holds_alternative<Address>(parsed));
    const Address address = std::get<Address>(parsed);
    QCOMPARE(address.host, QStringLiteral("10.0.0.5"));
    QCOMPARE(address.port, quint16(6380));
    QCOMPARE(address.database, 2);
    QVERIFY(!address.isLoopback());
    QCOMPARE(address.toString(), QStringLiteral("redis://10.0.0.5:6380/2"));

    const auto defaults = parseAddress(QStringLiteral("redis://localhost"));
    QVERIFY(std::holds_alternative<Address>(defaults));
    QCOMPARE(std::get<Address>(defaults).port, quint16(6379));
    QVERIFY(std::get<Address>(defaults).isLoopback());
    QVERIFY(std::get<Address>(parseAddress(QStringLiteral("redis://[::1]:7000"))).isLoopback());

    const auto refusal = [](const char *text) {
        const auto result = parseAddress(QString::fromUtf8(text));
        return std::holds_alternative<QString>(result) ? std::get<QString>(result) : QString();
    };
    QVERIFY(refusal("rediss://127.0.0.1:6379").contains(QStringLiteral("no TLS")));
    QVERIFY(refusal("redis://:pw@127.0.0.1").contains(QStringLiteral("fleet.password")));
    QVERIFY(refusal("http://127.0.0.1").contains(QStringLiteral("redis://HOST")));
    QVERIFY(refusal("redis://127.0.0.1/db").contains(QStringLiteral("database number")));
    QVERIFY(refusal("redis://127.0.0.1:0").contains(QStringLiteral("port")));
}

QTEST_GUILESS_MAIN(TestRedisLink)
#include "tst_redis_link.moc"
