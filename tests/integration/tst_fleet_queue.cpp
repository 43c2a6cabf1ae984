// The fleet's queue of background responses on Redis Streams, for real: Switchyard processes
// (the shipped binary, headless) on one Redis (Debian's redis-server, started by the test on a
// free loopback port), and fake providers and agents on port 0. A task queued on one node is read,
// streamed, continued, cancelled and deleted through another; the node running a task is killed
// and another finishes it while the client's stream resumes there; a task that always fails ends
// in the dead letters and is retried; Redis restarted with its append-only file loses nothing;
// a run outlives Redis being away and its end is written when Redis is back; Redis gone refuses
// new tasks with 503; a task with an intent waits for an agent.
#include "fleet_test_bed.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);

// Quick enough for a test: a task whose node stops renewing it is taken after 2 s, a failed run
// is tried again 100 ms later, and the third failure is the last.
constexpr const char *kQueue = "responses:\n"
                               "  queue:\n"
                               "    visibility_timeout: 2s\n"
                               "    delivery_limit: 3\n"
                               "    retry_backoff: 100ms\n";

struct Answer {
    int status = 0;
    QByteArray body;
    QByteArray retryAfter;
    QJsonObject json() const { return QJsonDocument::fromJson(body).object(); }
};

Answer call(quint16 port, const QByteArray &method, const QByteArray &path,
            const QByteArray &body = {}, const QList<QPair<QByteArray, QByteArray>> &headers = {})
{
    TestClient client(port);
    client.send(method, path, body, headers);
    if (!client.waitForFinished(20000))
        return {};
    return {client.status(), client.body(), client.header("retry-after")};
}

QByteArray backgroundBody(const QByteArray &input = "hello")
{
    return R"({"model":"test-model","background":true,"input":")" + input + R"("})";
}

QString statusOf(quint16 port, const QByteArray &id)
{
    return call(port, "GET", "/v1/responses/" + id).json().value(u"status"_s).toString();
}

struct Event {
    qint64 sequence = -1;
    QString type;
};

// The events of an event stream, in order.
QList<Event> eventsOf(const QByteArray &stream)
{
    QList<Event> events;
    for (const QByteArray &line : stream.split('\n')) {
        if (!line.startsWith("data: "))
            continue;
        const QJsonObject data = QJsonDocument::fromJson(line.mid(6)).object();
        events.append(
            {data.value(u"sequence_number"_s).toInteger(-1), data.value(u"type"_s).toString()});
    }
    return events;
}

double metric(quint16 port, const QByteArray &name)
{
    const Answer answer = call(port, "GET", "/metrics");
    for (const QByteArray &line : answer.body.split('\n')) {
        if (line.startsWith(name + ' '))
            return line.mid(name.size() + 1).toDouble();
    }
    return -1;
}

QJsonArray deadLetters(quint16 port)
{
    return call(port, "GET", "/admin/v1/queue").json().value(u"dead_letters"_s).toArray();
}

} // namespace

class TestFleetQueue : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aTaskQueuedOnOneNodeIsTheFleets();
    void aKilledNodesTaskIsFinishedByAnotherAndItsStreamResumes();
    void aTaskThatAlwaysFailsIsDeadLetteredThenRetried();
    void redisRestartedMidQueueLosesNothing();
    void aRunOutlivesRedisBeingAwayAndItsEndIsWritten();
    void redisUnreachableRefusesNewTasks();
    void aTaskWithAnIntentWaitsForAnAgent();

private:
    std::unique_ptr<FleetTestBed> m_bed;
};

void TestFleetQueue::initTestCase()
{
    QVERIFY2(QFile::exists(kBinary), qPrintable(kBinary));
}

void TestFleetQueue::init()
{
    m_bed = std::make_unique<FleetTestBed>(kBinary);
    m_bed->config.extra = kQueue;
}

void TestFleetQueue::cleanup()
{
    m_bed.reset();
}

void TestFleetQueue::aTaskQueuedOnOneNodeIsTheFleets()
{
    QVERIFY(m_bed->start());
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);

    // Queued on a; read, streamed and listed on b.
    const Answer queued = call(a.port(), "POST", "/v1/responses", backgroundBody());
    QCOMPARE(queued.status, 200);
    const QByteArray id = queued.json().value(u"id"_s).toString().toUtf8();
    QCOMPARE(queued.json().value(u"status"_s).toString(), u"queued"_s);
    QTRY_COMPARE_WITH_TIMEOUT(statusOf(b.port(), id), u"completed"_s, 15000);
    const Answer streamed = call(b.port(), "GET", "/v1/responses/" + id + "?stream=true");
    QCOMPARE(streamed.status, 200);
    const QList<Event> events = eventsOf(streamed.body);
    QVERIFY(events.size() >= 4);
    for (qsizetype index = 0; index < events.size(); ++index)
        QCOMPARE(events.at(index).sequence, index);
    QCOMPARE(events.constLast().type, u"response.completed"_s);
    QCOMPARE(call(b.port(), "GET", "/v1/responses/" + id + "/input_items").status, 200);

    // A conversation stored on a continues on b.
    const Answer first = call(a.port(), "POST", "/v1/responses",
                              R"({"model":"test-model","store":true,"input":"first turn"})");
    QCOMPARE(first.status, 200);
    const QByteArray firstId = first.json().value(u"id"_s).toString().toUtf8();
    const Answer second =
        call(b.port(), "POST", "/v1/responses",
             R"({"model":"test-model","input":"second turn","previous_response_id":")" + firstId +
                 R"("})");
    QCOMPARE(second.status, 200);
    QVERIFY(m_bed->fake().requests().constLast().body.contains("first turn"));

    // Cancelled through b while it waits behind a hanging provider on a's worker or b's.
    m_bed->fake().mode = FakeUpstream::Mode::Hang;
    const QByteArray hanging = call(a.port(), "POST", "/v1/responses", backgroundBody())
                                   .json()
                                   .value(u"id"_s)
                                   .toString()
                                   .toUtf8();
    QTRY_COMPARE_WITH_TIMEOUT(statusOf(a.port(), hanging), u"in_progress"_s, 10000);
    const Answer cancelled = call(b.port(), "POST", "/v1/responses/" + hanging + "/cancel");
    QCOMPARE(cancelled.status, 200);
    QCOMPARE(cancelled.json().value(u"status"_s).toString(), u"cancelled"_s);
    QCOMPARE(statusOf(a.port(), hanging), u"cancelled"_s);
    // The running node stops the run at its next renewal: its worker is free for the next task.
    QTRY_COMPARE_WITH_TIMEOUT(
        call(a.port(), "GET", "/admin/v1/queue").json().value(u"running"_s).toInt(), 0, 10000);

    // Deleted through a: gone on b too.
    QCOMPARE(call(a.port(), "DELETE", "/v1/responses/" + id).status, 200);
    QCOMPARE(call(b.port(), "GET", "/v1/responses/" + id).status, 404);
    QVERIFY(m_bed->redis().keys("switchyard:default:resp:" + id + "*").isEmpty());
}

void TestFleetQueue::aKilledNodesTaskIsFinishedByAnotherAndItsStreamResumes()
{
    QVERIFY(m_bed->start());
    // Twenty events 150 ms apart: three seconds of a stream to kill a node in the middle of.
    m_bed->fake().streamEvents = 20;
    m_bed->fake().eventIntervalMs = 150;
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());

    TestClient follower(a.port());
    follower.post("/v1/responses",
                  R"({"model":"test-model","background":true,"stream":true,"input":"long"})");
    QTRY_VERIFY_WITH_TIMEOUT(eventsOf(follower.body()).size() >= 6, 15000);
    const QByteArray id = [&] {
        for (const QByteArray &line : follower.body().split('\n')) {
            const QJsonObject data = QJsonDocument::fromJson(line.mid(6)).object();
            if (data.contains(u"response"_s))
                return data.value(u"response"_s).toObject().value(u"id"_s).toString().toUtf8();
        }
        return QByteArray();
    }();
    QVERIFY(!id.isEmpty());
    a.kill();
    const QList<Event> before = eventsOf(follower.body());
    const qint64 seen = before.constLast().sequence;
    for (qsizetype index = 0; index < before.size(); ++index)
        QCOMPARE(before.at(index).sequence, index);

    // b starts after the kill: only it can finish the task, once a's lock has lapsed.
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(b.waitForPort(), b.errors().constData());
    const Answer resumed =
        call(b.port(), "GET",
             "/v1/responses/" + id + "?stream=true&starting_after=" + QByteArray::number(seen));
    QCOMPARE(resumed.status, 200);
    const QList<Event> after = eventsOf(resumed.body);
    QVERIFY(!after.isEmpty());
    // Every event once, in order: the first after the last one seen, none repeated or skipped.
    for (qsizetype index = 0; index < after.size(); ++index)
        QCOMPARE(after.at(index).sequence, seen + 1 + index);
    QCOMPARE(after.constLast().type, u"response.completed"_s);
    QCOMPARE(statusOf(b.port(), id), u"completed"_s);
    const QJsonObject response = call(b.port(), "GET", "/v1/responses/" + id).json();
    QVERIFY(!response.value(u"output"_s).toArray().isEmpty());
    QCOMPARE(metric(b.port(), "switchyard_queue_claims_total"), 1.0);
    // Acknowledged and deleted from the stream once its result was stored.
    QCOMPARE(m_bed->redis().command({"XLEN", "switchyard:default:queue:normal"}), "0"_ba);
}

void TestFleetQueue::aTaskThatAlwaysFailsIsDeadLetteredThenRetried()
{
    QVERIFY(m_bed->start());
    m_bed->fake().mode = FakeUpstream::Mode::Status;
    m_bed->fake().status = 500;
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort(), a.errors().constData());

    const QByteArray id = call(a.port(), "POST", "/v1/responses", backgroundBody())
                              .json()
                              .value(u"id"_s)
                              .toString()
                              .toUtf8();
    QVERIFY(!id.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(statusOf(b.port(), id), u"failed"_s, 20000);
    QJsonArray dead;
    QTRY_COMPARE_WITH_TIMEOUT((dead = deadLetters(b.port())).size(), 1, 10000);
    const QJsonObject letter = dead.at(0).toObject();
    QCOMPARE(letter.value(u"id"_s).toString().toUtf8(), id);
    QCOMPARE(letter.value(u"runs"_s).toInt(), 3);
    QVERIFY(!letter.value(u"error"_s).toObject().value(u"message"_s).toString().isEmpty());
    QCOMPARE(call(a.port(), "GET", "/admin/v1/queue").json().value(u"dead_lettered"_s).toInt(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(metric(a.port(), "switchyard_queue_dead_letters"), 1.0, 5000);

    // Retried once the provider is back: it runs again and completes.
    m_bed->fake().mode = FakeUpstream::Mode::Answer;
    QCOMPARE(call(b.port(), "POST", "/admin/v1/queue/" + id + "/retry").status, 200);
    QTRY_COMPARE_WITH_TIMEOUT(statusOf(a.port(), id), u"completed"_s, 15000);
    QCOMPARE(deadLetters(a.port()).size(), 0);
    QCOMPARE(call(b.port(), "POST", "/admin/v1/queue/" + id + "/retry").status, 404);

    // Another dead letter, discarded: it stays failed and leaves the list.
    m_bed->fake().mode = FakeUpstream::Mode::Status;
    const QByteArray other = call(b.port(), "POST", "/v1/responses", backgroundBody())
                                 .json()
                                 .value(u"id"_s)
                                 .toString()
                                 .toUtf8();
    QTRY_COMPARE_WITH_TIMEOUT(deadLetters(a.port()).size(), 1, 20000);
    QCOMPARE(call(a.port(), "POST", "/admin/v1/queue/" + other + "/discard").status, 200);
    QCOMPARE(deadLetters(b.port()).size(), 0);
    QCOMPARE(statusOf(b.port(), other), u"failed"_s);
}

void TestFleetQueue::redisRestartedMidQueueLosesNothing()
{
    m_bed->redis().setPersistent(true);
    QVERIFY(m_bed->start());
    m_bed->fake().streamEvents = 6;
    m_bed->fake().eventIntervalMs = 100;
    m_bed->config.extra = QByteArray(kQueue) + "    workers: 1\n";
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    QList<QByteArray> ids;
    for (int index = 0; index < 4; ++index) {
        const Answer queued = call(a.port(), "POST", "/v1/responses", backgroundBody());
        QCOMPARE(queued.status, 200);
        ids.append(queued.json().value(u"id"_s).toString().toUtf8());
    }
    QTRY_COMPARE_WITH_TIMEOUT(statusOf(a.port(), ids.first()), u"in_progress"_s, 10000);
    // SIGKILL: what Redis holds is what its append-only file holds.
    QVERIFY(m_bed->redis().restart());
    for (const QByteArray &id : std::as_const(ids))
        QTRY_VERIFY2_WITH_TIMEOUT(
            statusOf(a.port(), id) == u"completed"_s,
            (id + " is not completed; the node said:\n" + a.errors().right(6000)).constData(),
            30000);
    QCOMPARE(m_bed->redis().command({"XLEN", "switchyard:default:queue:normal"}), "0"_ba);
}

void TestFleetQueue::aRunOutlivesRedisBeingAwayAndItsEndIsWritten()
{
    m_bed->redis().setPersistent(true);
    QVERIFY(m_bed->start());
    // Forty events 100 ms apart: a run of four seconds, Redis away for 2.5 s of it, longer than
    // the visibility timeout (2 s), so the run's lock lapses and the run takes it back with its
    // next write. A second worker is free all along: a take must not take the task from the run.
    m_bed->fake().streamEvents = 40;
    m_bed->fake().eventIntervalMs = 100;
    m_bed->config.extra = QByteArray(kQueue) + "    workers: 2\n";
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    const Answer queued = call(a.port(), "POST", "/v1/responses", backgroundBody());
    QCOMPARE(queued.status, 200);
    const QByteArray id = queued.json().value(u"id"_s).toString().toUtf8();
    QTRY_COMPARE_WITH_TIMEOUT(statusOf(a.port(), id), u"in_progress"_s, 10000);
    const qsizetype providerCalls = m_bed->fake().requests().size();
    const QByteArray eventsKey = "switchyard:default:resp:" + id + ":events";
    QVERIFY2(m_bed->redis().command({"LLEN", eventsKey}).toInt() < 30,
             "the run was nearly over before Redis went away");

    m_bed->redis().kill();
    QTest::qWait(2500);
    QVERIFY(m_bed->redis().restart());
    // The run is still streaming when Redis is back.
    QTRY_VERIFY_WITH_TIMEOUT(m_bed->redis().command({"LLEN", eventsKey}).toInt() > 0, 10000);
    QCOMPARE(m_bed->redis().command({"HGET", "switchyard:default:resp:" + id, "status"}),
             "in_progress"_ba);

    QTRY_VERIFY2_WITH_TIMEOUT(
        m_bed->redis().command({"HGET", "switchyard:default:resp:" + id, "status"}) == "completed",
        (id + " is not completed in Redis; the node said:\n" + a.errors().right(6000)).constData(),
        20000);
    // The run that did the work wrote its end: the provider was not called again.
    if (m_bed->fake().requests().size() != providerCalls)
        qWarning().noquote() << a.errors();
    QVERIFY2(m_bed->fake().requests().size() == providerCalls,
             "the provider was called again (the node's log is above)");
    QCOMPARE(m_bed->redis().command({"HGET", "switchyard:default:resp:" + id, "runs"}), "1"_ba);
    // The log in Redis is whole, each event once, in order, ending where the run ended.
    const Answer streamed = call(a.port(), "GET", "/v1/responses/" + id + "?stream=true");
    QCOMPARE(streamed.status, 200);
    const QList<Event> events = eventsOf(streamed.body);
    QVERIFY2(events.size() >= 40, streamed.body.left(2000).constData());
    for (qsizetype index = 0; index < events.size(); ++index)
        QCOMPARE(events.at(index).sequence, index);
    QCOMPARE(events.constLast().type, u"response.completed"_s);
    QCOMPARE(m_bed->redis().command({"XLEN", "switchyard:default:queue:normal"}), "0"_ba);
}

void TestFleetQueue::redisUnreachableRefusesNewTasks()
{
    QVERIFY(m_bed->start());
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 1, 10000);
    m_bed->redis().kill();
    QTRY_COMPARE_WITH_TIMEOUT(
        getJson(a.port(), "/admin/v1/fleet").value(u"link"_s).toObject().value(u"up"_s).toBool(),
        false, 10000);
    const Answer refused = call(a.port(), "POST", "/v1/responses", backgroundBody());
    QCOMPARE(refused.status, 503);
    QCOMPARE(refused.json().value(u"error"_s).toObject().value(u"code"_s).toString(),
             u"queue_unavailable"_s);
    QCOMPARE(refused.retryAfter, "5"_ba);
    // A request that keeps nothing is served as ever.
    QCOMPARE(
        call(a.port(), "POST", "/v1/responses", R"({"model":"test-model","input":"hi"})").status,
        200);
}

void TestFleetQueue::aTaskWithAnIntentWaitsForAnAgent()
{
    QVERIFY(m_bed->start());
    m_bed->config.extra = QByteArray(kQueue) + "    task_timeout: 3s\n";
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort(), a.errors().constData());
    const QList<QPair<QByteArray, QByteArray>> intent{
        {"x-switchyard-intent", "travel/book/flight"}};

    const Answer accepted =
        call(a.port(), "POST", "/v1/responses", backgroundBody("book it"), intent);
    QVERIFY2(accepted.status == 200, accepted.body.constData());
    const QByteArray waiting = accepted.json().value(u"id"_s).toString().toUtf8();
    QTest::qWait(1500);
    // Tried each second: waiting, or between a take and its putting back, never ended.
    const QString meanwhile = statusOf(b.port(), waiting);
    QVERIFY2(meanwhile == u"queued"_s || meanwhile == u"in_progress"_s, qPrintable(meanwhile));
    QCOMPARE(m_bed->fake().requests().size(), 0);

    // An agent registers on b: the task runs on it, not on the provider.
    FakeUpstream agent;
    QCOMPARE(call(b.port(), "POST", "/admin/v1/agents",
                  R"({"id":"booker","base_url":")" + agent.baseUrl() +
                      R"(","capabilities":["travel/book/flight"]})")
                 .status,
             201);
    QTRY_COMPARE_WITH_TIMEOUT(statusOf(a.port(), waiting), u"completed"_s, 15000);
    QCOMPARE(agent.requests().size(), 1);
    QCOMPARE(m_bed->fake().requests().size(), 0);

    // An intent no agent offers fails at the task's time limit.
    const QByteArray lonely = call(b.port(), "POST", "/v1/responses", backgroundBody("plan it"),
                                   {{"x-switchyard-intent", "travel/plan/trip"}})
                                  .json()
                                  .value(u"id"_s)
                                  .toString()
                                  .toUtf8();
    QTRY_COMPARE_WITH_TIMEOUT(statusOf(a.port(), lonely), u"failed"_s, 15000);
    const QJsonObject failed = call(a.port(), "GET", "/v1/responses/" + lonely).json();
    QCOMPARE(failed.value(u"error"_s).toObject().value(u"code"_s).toString(),
             u"no_agent_available"_s);
}

QTEST_GUILESS_MAIN(TestFleetQueue)
#include "tst_fleet_queue.moc"
