// Traces as an operator reads them, on the real engine: the admin list with its filters and
// pages, one trace in full (running or finished), the live text/event-stream of finished and
// running requests, and the feed the console's Traces page is sent, with one request's text
// as it streams.

#include "bridge/engine_host.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/request_recorder.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

QByteArray chatBody(bool stream)
{
    return R"({"model":"test-model","stream":)" + QByteArray(stream ? "true" : "false") +
           R"(,"messages":[{"role":"user","content":"hi"}]})";
}

struct Answer {
    int status = 0;
    QJsonObject body;
};

Answer get(quint16 port, const QByteArray &path)
{
    TestClient client(port);
    client.send("GET", "/admin/v1/" + path);
    if (!client.waitForFinished())
        return {};
    return {client.status(), QJsonDocument::fromJson(client.body()).object()};
}

QStringList requestIds(const QJsonObject &list)
{
    QStringList ids;
    for (const QJsonValue &item : list.value(u"data"_s).toArray())
        ids.append(item[u"request_id"_s].toString());
    return ids;
}

} // namespace

class TraceAdminTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void listIsNewestFirstFilteredAndPaged();
    void badFiltersAreRefused();
    void oneTraceInFullRunningThenFinished();
    void unknownTraceIsNotFound();
    void liveStreamCarriesFinishedAndRunningThroughItsFilter();
    void feedCarriesFinishedRunningAndTheWatchedText();
    void watchedTextEndsWithTheErrorTheClientSaw();
    void liveStreamKeepsReportingWhenTheEngineRunsOnItsOwnThread();
    void bridgeCarriesTheFeedAndLoadsATrace();

private:
    void startGateway();
    // Sends one chat request with `id` and waits for its answer.
    void request(const QByteArray &id, bool stream = false);

    std::unique_ptr<FakeUpstream> m_fake;
    std::unique_ptr<Engine> m_engine;
};

void TraceAdminTest::initTestCase()
{
    QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
}

void TraceAdminTest::init()
{
    m_fake = std::make_unique<FakeUpstream>();
}

void TraceAdminTest::cleanup()
{
    m_engine.reset();
    m_fake.reset();
}

void TraceAdminTest::startGateway()
{
    m_engine = startEngine(gatewayConfig({providerFor(u"primary"_s, *m_fake, {u"test-model"_s})}));
    QVERIFY(m_engine);
    m_engine->collectTraceFeed(); // as the console's publishing does: the tests take the feed
}

void TraceAdminTest::request(const QByteArray &id, bool stream)
{
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody(stream), {{"x-request-id", id}});
    QVERIFY(client.waitForFinished());
}

void TraceAdminTest::listIsNewestFirstFilteredAndPaged()
{
    startGateway();
    request("ok-1");
    m_fake->mode = FakeUpstream::Mode::Status;
    m_fake->status = 500;
    request("failed-1");
    m_fake->mode = FakeUpstream::Mode::Answer;
    request("ok-2", true);
    request("ok-3");

    const Answer all = get(m_engine->port(), "traces");
    QCOMPARE(all.status, 200);
    QCOMPARE(requestIds(all.body), (QStringList{u"ok-3"_s, u"ok-2"_s, u"failed-1"_s, u"ok-1"_s}));
    QCOMPARE(all.body[u"has_more"_s].toBool(), false);
    QCOMPARE(all.body[u"ring"_s][u"kept"_s].toInt(), 4);
    const QJsonObject newest = all.body[u"data"_s][0].toObject();
    QCOMPARE(newest[u"status"_s].toInt(), 200);
    QCOMPARE(newest[u"provider"_s].toString(), u"primary"_s);
    QCOMPARE(newest[u"route"_s].toString(), u"default"_s);
    QCOMPARE(newest[u"attempts"_s].toInt(), 1);
    QVERIFY(newest[u"latency_ms"_s].toDouble() > 0);

    QCOMPARE(requestIds(get(m_engine->port(), "traces?errors_only=true").body),
             QStringList{u"failed-1"_s});
    QCOMPARE(requestIds(get(m_engine->port(), "traces?status=5xx").body),
             QStringList{u"failed-1"_s});
    QCOMPARE(requestIds(get(m_engine->port(), "traces?q=OK-2").body), QStringList{u"ok-2"_s});
    QCOMPARE(requestIds(get(m_engine->port(), "traces?provider=nobody").body), QStringList{});
    const QJsonObject failed =
        get(m_engine->port(), "traces?status=5xx").body[u"data"_s][0].toObject();
    QCOMPARE(failed[u"error_class"_s].toString(), u"server_error"_s);

    // Pages: two at a time, each next page from where the last one ended.
    const Answer first = get(m_engine->port(), "traces?limit=2");
    QCOMPARE(requestIds(first.body), (QStringList{u"ok-3"_s, u"ok-2"_s}));
    QVERIFY(first.body[u"has_more"_s].toBool());
    const QByteArray next = QByteArray::number(qint64(first.body[u"next_before"_s].toDouble()));
    const Answer second = get(m_engine->port(), "traces?limit=2&before=" + next);
    QCOMPARE(requestIds(second.body), (QStringList{u"failed-1"_s, u"ok-1"_s}));
    QVERIFY(!second.body[u"has_more"_s].toBool());
    QVERIFY(second.body[u"next_before"_s].isNull());
}

void TraceAdminTest::badFiltersAreRefused()
{
    startGateway();
    for (const QByteArray &query : {QByteArray("status=3xx"), QByteArray("errors_only=maybe"),
                                    QByteArray("slower_than_ms=-1"), QByteArray("limit=0"),
                                    QByteArray("limit=100000"), QByteArray("before=soon")}) {
        const Answer answer = get(m_engine->port(), "traces?" + query);
        QVERIFY2(answer.status == 400, query.constData());
        QCOMPARE(answer.body[u"error"_s][u"code"_s].toString(), u"invalid_admin_request"_s);
    }
    TestClient stream(m_engine->port());
    stream.send("GET", "/admin/v1/traces/stream?status=1xx");
    QVERIFY(stream.waitForFinished());
    QCOMPARE(stream.status(), 400);
}

void TraceAdminTest::oneTraceInFullRunningThenFinished()
{
    m_fake->manualStreaming = true;
    startGateway();
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody(true), {{"x-request-id", "streaming-1"}});
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->requests().size(), 1, 5000);
    m_fake->releaseEvent();
    QTRY_VERIFY_WITH_TIMEOUT(!client.events().isEmpty(), 5000);

    const Answer running = get(m_engine->port(), "traces/streaming-1");
    QCOMPARE(running.status, 200);
    QCOMPARE(running.body[u"state"_s].toString(), u"in_progress"_s);
    QVERIFY(running.body[u"ttft_ms"_s].toDouble() > 0);

    while (!client.finished()) {
        m_fake->releaseEvent();
        QTest::qWait(5);
    }
    const Answer finished = get(m_engine->port(), "traces/streaming-1");
    QCOMPARE(finished.status, 200);
    QCOMPARE(finished.body[u"state"_s].toString(), u"finished"_s);
    QCOMPARE(finished.body[u"status"_s].toInt(), 200);
    QCOMPARE(finished.body[u"finish_reason"_s].toString(), u"stop"_s);
    const QJsonArray spans = finished.body[u"spans"_s].toArray();
    QJsonObject attempt;
    for (const QJsonValue &span : spans) {
        if (span[u"kind"_s] == u"attempt"_s)
            attempt = span.toObject();
    }
    QCOMPARE(attempt[u"provider"_s].toString(), u"primary"_s);
    QCOMPARE(attempt[u"outcome"_s].toString(), u"success"_s);
    QCOMPARE(attempt[u"http_status"_s].toInt(), 200);
    QCOMPARE(attempt[u"span_id"_s].toString().size(), 16);
    QVERIFY(!finished.body[u"explain"_s].toArray().isEmpty());
    const QJsonObject chunks = finished.body[u"chunks"_s].toObject();
    QVERIFY(chunks[u"count"_s].toInt() >= 4); // three content events, the final one, [DONE]
    QCOMPARE(chunks[u"arrivals"_s].toArray().size(), chunks[u"count"_s].toInt());
    QCOMPARE(finished.body[u"request"_s][u"method"_s].toString(), u"POST"_s);
    QVERIFY(!finished.body.contains(u"response"_s)); // bodies are not kept by default
}

void TraceAdminTest::unknownTraceIsNotFound()
{
    startGateway();
    const Answer answer = get(m_engine->port(), "traces/never-ran");
    QCOMPARE(answer.status, 404);
    QCOMPARE(answer.body[u"error"_s][u"code"_s].toString(), u"trace_not_found"_s);
}

void TraceAdminTest::liveStreamCarriesFinishedAndRunningThroughItsFilter()
{
    startGateway();
    TestClient errors(m_engine->port());
    errors.send("GET", "/admin/v1/traces/stream?errors_only=true");
    TestClient everything(m_engine->port());
    everything.send("GET", "/admin/v1/traces/stream");
    QTRY_VERIFY_WITH_TIMEOUT(errors.headReceived() && everything.headReceived(), 5000);
    QCOMPARE(errors.status(), 200);
    QVERIFY(errors.header("content-type").startsWith("text/event-stream"));

    request("fine");
    m_fake->mode = FakeUpstream::Mode::Status;
    m_fake->status = 503;
    request("broken");

    const auto finishedIds = [](const TestClient &client) {
        QStringList ids;
        for (const upstream::SseEvent &event : client.events()) {
            if (event.event == "trace.finished")
                ids.append(QJsonDocument::fromJson(event.data)[u"request_id"_s].toString());
        }
        return ids;
    };
    QTRY_COMPARE_WITH_TIMEOUT(finishedIds(everything), (QStringList{u"fine"_s, u"broken"_s}), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(finishedIds(errors), QStringList{u"broken"_s}, 5000);

    // A running request shows in the next `trace.running` event.
    m_fake->mode = FakeUpstream::Mode::Hang;
    TestClient hanging(m_engine->port());
    hanging.post("/v1/chat/completions", chatBody(false), {{"x-request-id", "hanging"}});
    const auto runningIds = [](const TestClient &client) {
        QStringList ids;
        for (const upstream::SseEvent &event : client.events()) {
            if (event.event != "trace.running")
                continue;
            ids.clear();
            for (const QJsonValue &item : QJsonDocument::fromJson(event.data)[u"data"_s].toArray())
                ids.append(item[u"request_id"_s].toString());
        }
        return ids;
    };
    QTRY_COMPARE_WITH_TIMEOUT(runningIds(everything), QStringList{u"hanging"_s}, 5000);
    QVERIFY(!everything.finished()); // the stream stays open
}

void TraceAdminTest::feedCarriesFinishedRunningAndTheWatchedText()
{
    m_fake->manualStreaming = true;
    startGateway();
    m_engine->watchTrace("watched"); // before it starts: watched from its first byte
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody(true), {{"x-request-id", "watched"}});
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->requests().size(), 1, 5000);
    m_fake->releaseEvent();
    m_fake->releaseEvent();
    QTRY_VERIFY_WITH_TIMEOUT(client.events().size() >= 2, 5000);

    telemetry::TraceFeed feed = m_engine->takeTraceFeed();
    QCOMPARE(feed.runningCount, 1);
    QCOMPARE(feed.running.size(), 1);
    QCOMPARE(feed.running.first().requestId, QByteArray("watched"));
    QCOMPARE(feed.watchedId, QByteArray("watched"));
    // The watched request's text so far: the data of each event the client got, a line each.
    const QList<QByteArray> lines = feed.watchedData.split('\n');
    QVERIFY(lines.size() >= 2);
    QCOMPARE(lines.first(), client.events().first().data);
    QVERIFY(m_engine->takeTraceFeed().watchedData.isEmpty()); // taken once

    while (!client.finished()) {
        m_fake->releaseEvent();
        QTest::qWait(5);
    }
    feed = m_engine->takeTraceFeed();
    QCOMPARE(feed.runningCount, 0);
    QCOMPARE(feed.finished.size(), 1);
    QCOMPARE(feed.finished.first().requestId, QByteArray("watched"));
    QCOMPARE(feed.finished.first().status, 200);
    QVERIFY(m_engine->takeTraceFeed().finished.isEmpty());
}

void TraceAdminTest::watchedTextEndsWithTheErrorTheClientSaw()
{
    m_fake->mode = FakeUpstream::Mode::CutStream;
    m_fake->cutAfterEvents = 2;
    startGateway();
    m_engine->watchTrace("cut");
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody(true), {{"x-request-id", "cut"}});
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200); // the stream had begun: the error is its last event

    // Taken after the request ended: its last events are still there, ending with the error.
    const telemetry::TraceFeed feed = m_engine->takeTraceFeed();
    QCOMPARE(feed.finished.size(), 1);
    QCOMPARE(feed.finished.first().outcome, u"upstream_stream_interrupted"_s);
    const QList<QByteArray> lines = feed.watchedData.trimmed().split('\n');
    QCOMPARE(lines.size(), 3); // two content events, then the error
    QCOMPARE(lines.first(), client.events().first().data);
    QCOMPARE(QJsonDocument::fromJson(lines.last())[u"error"_s][u"code"_s].toString(),
             u"upstream_stream_interrupted"_s);
    QVERIFY(m_engine->takeTraceFeed().watchedData.isEmpty());
    const auto trace = m_engine->traces().find("cut");
    QVERIFY(trace);
    QCOMPARE(trace->chunkCount, 2u);
}

void TraceAdminTest::liveStreamKeepsReportingWhenTheEngineRunsOnItsOwnThread()
{
    // As the binary runs it: the engine built here, then moved to its own thread. Every timer
    // of the stream must move with it, or subscribers hear of running requests only once.
    EngineHost host(gatewayConfig({providerFor(u"primary"_s, *m_fake, {u"test-model"_s})}));
    QString error;
    QVERIFY2(host.start(&error), qPrintable(error));
    TestClient stream(host.port());
    stream.send("GET", "/admin/v1/traces/stream");
    const auto runningEvents = [&stream] {
        return std::count_if(
            stream.events().cbegin(), stream.events().cend(),
            [](const upstream::SseEvent &event) { return event.event == "trace.running"; });
    };
    QTRY_VERIFY_WITH_TIMEOUT(runningEvents() >= 3, 10000);
}

void TraceAdminTest::bridgeCarriesTheFeedAndLoadsATrace()
{
    EngineHost host(gatewayConfig({providerFor(u"primary"_s, *m_fake, {u"test-model"_s})}));
    QString error;
    QVERIFY2(host.start(&error), qPrintable(error));
    QList<telemetry::RequestRecord> finished;
    connect(&host, &EngineBridge::traceFeedUpdated, this,
            [&finished](const telemetry::TraceFeed &feed) { finished.append(feed.finished); });
    std::optional<telemetry::Trace> loaded;
    connect(&host, &EngineBridge::traceLoaded, this,
            [&loaded](quint64 ticket, bool found, const telemetry::Trace &trace) {
                if (ticket == 7 && found)
                    loaded = trace;
            });

    TestClient client(host.port());
    client.post("/v1/chat/completions", chatBody(false), {{"x-request-id", "across"}});
    QVERIFY(client.waitForFinished());
    QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 5000);
    QCOMPARE(finished.first().requestId, QByteArray("across"));

    host.loadTrace(7, "across");
    QTRY_VERIFY_WITH_TIMEOUT(loaded.has_value(), 5000);
    QCOMPARE(loaded->status, 200);
    QVERIFY(loaded->span(u"upstream attempt"_s));
}

QTEST_GUILESS_MAIN(TraceAdminTest)
#include "tst_trace_admin.moc"
