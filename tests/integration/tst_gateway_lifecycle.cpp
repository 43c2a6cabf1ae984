// What happens around a request rather than in it: a client that leaves early, the trace each
// request leaves behind, and a shutdown that drains what is in flight.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/trace.h"
#include "test_client.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTest>
#include <algorithm>
#include <chrono>

using namespace switchyard;
using namespace switchyard::testing;
using namespace std::chrono_literals;

namespace {

QStringList spanNames(const telemetry::Trace &trace)
{
    QStringList names;
    for (const telemetry::Span &span : trace.spans)
        names.append(span.name);
    return names;
}

bool allSpansClosed(const telemetry::Trace &trace)
{
    return std::all_of(trace.spans.cbegin(), trace.spans.cend(),
                       [](const telemetry::Span &span) { return span.durationMicros >= 0; });
}

} // namespace

class GatewayLifecycleTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void clientLeavingMidStreamAbortsTheUpstreamCall();
    void clientLeavingBeforeTheAnswerAbortsTheUpstreamCall();
    void clientLeavingIsTracedButNotHeldAgainstTheProvider();

    void streamedRequestLeavesACompleteTrace();
    void streamedTraceIsDataTheProviderJoins();
    void nonStreamedRequestLeavesATrace();
    void refusedRequestLeavesATrace_data();
    void refusedRequestLeavesATrace();
    void failedCallLeavesATraceNamingTheError();

    void shutdownRefusesNewConnections();
    void shutdownAnswersRequestsOnOpenConnectionsWith503();
    void shutdownMakesReadinessFail();
    void shutdownLetsInFlightStreamsFinishBeforeDraining();
    void shutdownWithNothingInFlightDrainsAtOnce();
    void shutdownGraceAbandonsRequestsThatNeverFinish();
    void drainDelayFailsReadinessWhileStillServing();
    void drainDelayEndsInRefusingNewConnections();

private:
    // A started gateway in front of m_fake serving "test-model", with the default timeouts:
    // nothing in these tests may end because a timeout fired.
    void startGateway(std::chrono::milliseconds drainDelay = {});

    std::unique_ptr<FakeUpstream> m_fake;
    std::unique_ptr<Engine> m_engine;
};

void GatewayLifecycleTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayLifecycleTest::init()
{
    m_fake = std::make_unique<FakeUpstream>();
}

void GatewayLifecycleTest::cleanup()
{
    m_engine.reset();
    m_fake.reset();
}

void GatewayLifecycleTest::startGateway(std::chrono::milliseconds drainDelay)
{
    config::Config config = gatewayConfig(
        {providerFor(QStringLiteral("primary"), *m_fake, {QStringLiteral("test-model")})});
    config.server.drainDelay = drainDelay;
    m_engine = startEngine(config);
    QVERIFY(m_engine);
}

void GatewayLifecycleTest::clientLeavingMidStreamAbortsTheUpstreamCall()
{
    m_fake->manualStreaming = true;
    startGateway();
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", true));
    QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), 1, 5000);
    QCOMPARE(m_engine->inFlight(), 1);
    QCOMPARE(healthInFlight(*m_engine), 1);
    QCOMPARE(m_fake->openConnections(), 1);
    const int closedBefore = m_fake->closedConnections();

    client.disconnectNow();

    // Well inside the idle timeout (20 s): only the disconnect can have ended the call.
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->closedConnections(), closedBefore + 1, 5000);
    QCOMPARE(m_fake->openConnections(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(m_engine->inFlight(), 0, 5000);
    QCOMPARE(healthInFlight(*m_engine), 0);
}

void GatewayLifecycleTest::clientLeavingBeforeTheAnswerAbortsTheUpstreamCall()
{
    m_fake->mode = FakeUpstream::Mode::Hang;
    startGateway();
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->requests().size(), 1, 5000);
    QCOMPARE(m_engine->inFlight(), 1);
    const int closedBefore = m_fake->closedConnections();

    client.disconnectNow();

    // Well inside the total timeout (180 s): only the disconnect can have ended the call.
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->closedConnections(), closedBefore + 1, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(m_engine->inFlight(), 0, 5000);
    QCOMPARE(healthInFlight(*m_engine), 0);
}

void GatewayLifecycleTest::clientLeavingIsTracedButNotHeldAgainstTheProvider()
{
    m_fake->mode = FakeUpstream::Mode::Hang;
    startGateway();
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", false),
                {{"x-request-id", "leaves-early"}});
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->requests().size(), 1, 5000);

    client.disconnectNow();

    QTRY_COMPARE_WITH_TIMEOUT(m_engine->inFlight(), 0, 5000);
    const auto trace = m_engine->traces().find("leaves-early");
    QVERIFY(trace);
    QCOMPARE(trace->status, 499);
    QCOMPARE(trace->outcome, QStringLiteral("client_disconnected"));
    const ProviderHealth health = providerHealth(*m_engine, QStringLiteral("primary"));
    QCOMPARE(health.errors, quint64(0));
    QCOMPARE(health.state, ProviderState::Up);
}

void GatewayLifecycleTest::streamedRequestLeavesACompleteTrace()
{
    startGateway();
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace);
    QCOMPARE(trace->traceId, client.header("x-switchyard-trace-id"));
    QCOMPARE(trace->status, 200);
    QCOMPARE(trace->outcome, QStringLiteral("ok"));
    QCOMPARE(trace->model, QStringLiteral("test-model"));
    QCOMPARE(trace->provider, QStringLiteral("primary"));
    QVERIFY(trace->streamed);
    const QStringList names = spanNames(*trace);
    for (const QString &name :
         {QStringLiteral("ingress"), QStringLiteral("choice"), QStringLiteral("upstream attempt"),
          QStringLiteral("first byte"), QStringLiteral("completion")})
        QVERIFY2(names.contains(name), qPrintable(names.join(QStringLiteral(", "))));
    QCOMPARE(names.constFirst(), QStringLiteral("ingress"));
    QCOMPARE(names.constLast(), QStringLiteral("completion"));
    QCOMPARE(trace->span(QStringLiteral("completion"))->detail, QStringLiteral("ok"));
    // The choice reads as the routing explanation on one line.
    QVERIFY(!trace->explainSteps.isEmpty());
    QCOMPARE(trace->span(QStringLiteral("choice"))->detail,
             trace->explainSteps.join(QStringLiteral("; ")));
    QVERIFY(allSpansClosed(*trace));
}

void GatewayLifecycleTest::streamedTraceIsDataTheProviderJoins()
{
    startGateway();
    TestClient client(m_engine->port());
    const QByteArray clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
    const QByteArray clientSpan = "00f067aa0ba902b7";

    client.post("/v1/chat/completions", chatBody("test-model", true),
                {{"traceparent", "00-" + clientTrace + "-" + clientSpan + "-01"},
                 {"x-switchyard-tenant", "team-a"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace);
    // The request is a child of the client's span; its attempt is the provider's parent.
    QCOMPARE(trace->traceId, clientTrace);
    QCOMPARE(trace->parentSpanId, clientSpan);
    QCOMPARE(trace->spanId.size(), 16);
    const telemetry::Span *attempt = trace->span(QStringLiteral("upstream attempt"));
    QVERIFY(attempt);
    QCOMPARE(attempt->kind, telemetry::SpanKind::Attempt);
    QCOMPARE(attempt->provider, QStringLiteral("primary"));
    QCOMPARE(attempt->outcome, QStringLiteral("success"));
    QCOMPARE(attempt->httpStatus, 200);
    QVERIFY(attempt->bytes > 0);
    QCOMPARE(m_fake->requests().constLast().header("traceparent"),
             "00-" + clientTrace + "-" + attempt->spanId + "-01");

    // The record every consumer reads.
    QCOMPARE(trace->tenant, QStringLiteral("team-a"));
    QCOMPARE(trace->endpoint, QStringLiteral("/v1/chat/completions"));
    QCOMPARE(trace->operation, QStringLiteral("chat"));
    QCOMPARE(trace->attempts, 1);
    QCOMPARE(trace->statusClass(), QStringLiteral("2xx"));
    QVERIFY(trace->timeToFirstByteMicros > 0);
    QVERIFY(trace->timeToFirstByteMicros <= trace->totalMicros);
    QVERIFY(trace->sequence > 0);
    QVERIFY(!trace->explainSteps.isEmpty());
    QCOMPARE(trace->finishReason, QStringLiteral("stop"));
    // Every chunk the client got is marked, in order, within the request's time.
    QVERIFY(trace->chunkCount > 0);
    QCOMPARE(int(trace->chunks.size()), int(trace->chunkCount));
    for (size_t i = 1; i < trace->chunks.size(); ++i)
        QVERIFY(trace->chunks[i].atMicros >= trace->chunks[i - 1].atMicros);
    QVERIFY(trace->chunks.front().atMicros >= trace->timeToFirstByteMicros);
    // Bodies are not kept unless configured; credentials never are.
    QVERIFY(!trace->bodiesKept);
    QVERIFY(trace->requestBody.isEmpty());
    QCOMPARE(trace->method, QByteArray("POST"));
}

void GatewayLifecycleTest::nonStreamedRequestLeavesATrace()
{
    startGateway();
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace);
    QCOMPARE(trace->status, 200);
    QCOMPARE(trace->outcome, QStringLiteral("ok"));
    QVERIFY(!trace->streamed);
    const QStringList names = spanNames(*trace);
    for (const QString &name : {QStringLiteral("ingress"), QStringLiteral("choice"),
                                QStringLiteral("upstream attempt"), QStringLiteral("completion")})
        QVERIFY2(names.contains(name), qPrintable(names.join(QStringLiteral(", "))));
    QVERIFY(!names.contains(QStringLiteral("first byte")));
    QVERIFY(allSpansClosed(*trace));
}

void GatewayLifecycleTest::refusedRequestLeavesATrace_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("outcome");

    QTest::newRow("malformed JSON")
        << QByteArray("{") << 400 << QStringLiteral("invalid_request_error");
    QTest::newRow("unknown model")
        << chatBody("no-such-model", false) << 404 << QStringLiteral("model_not_found");
}

void GatewayLifecycleTest::refusedRequestLeavesATrace()
{
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, outcome);
    startGateway();
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", body);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace);
    QCOMPARE(trace->traceId, client.header("x-switchyard-trace-id"));
    QCOMPARE(trace->status, status);
    QCOMPARE(trace->outcome, outcome);
    const QStringList names = spanNames(*trace);
    QCOMPARE(names.constFirst(), QStringLiteral("ingress"));
    QCOMPARE(names.constLast(), QStringLiteral("completion"));
    QVERIFY(!names.contains(QStringLiteral("upstream attempt")));
    QVERIFY(allSpansClosed(*trace));
}

void GatewayLifecycleTest::failedCallLeavesATraceNamingTheError()
{
    m_fake->mode = FakeUpstream::Mode::Status;
    m_fake->status = 500;
    startGateway();
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 502);
    const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace);
    QCOMPARE(trace->status, 502);
    QCOMPARE(trace->outcome, QStringLiteral("upstream_error"));
    const telemetry::Span *attempt = trace->span(QStringLiteral("upstream attempt"));
    QVERIFY(attempt);
    QCOMPARE(attempt->detail, QStringLiteral("primary, attempt 1: HTTP 500 (server_error)"));
}

void GatewayLifecycleTest::shutdownRefusesNewConnections()
{
    startGateway();
    const quint16 port = m_engine->port();

    m_engine->beginShutdown(30s);

    TestClient client(port);
    QTRY_VERIFY_WITH_TIMEOUT(client.connectionFailed(), 5000);
}

void GatewayLifecycleTest::shutdownAnswersRequestsOnOpenConnectionsWith503()
{
    startGateway();
    TestClient client(m_engine->port());
    client.send("GET", "/healthz"); // opens the connection before the shutdown
    QVERIFY(client.waitForFinished());

    m_engine->beginShutdown(30s);
    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 503);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(), QStringLiteral("server_error"));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("unavailable"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Switchyard is shutting down and takes no new requests."));
    QVERIFY(m_fake->requests().isEmpty());
}

void GatewayLifecycleTest::shutdownMakesReadinessFail()
{
    startGateway();
    TestClient client(m_engine->port());
    client.send("GET", "/readyz");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);

    m_engine->beginShutdown(30s);
    client.send("GET", "/readyz");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 503);
    QCOMPARE(
        QJsonDocument::fromJson(client.body()).object().value(QStringLiteral("status")).toString(),
        QStringLiteral("not_ready"));
}

void GatewayLifecycleTest::shutdownLetsInFlightStreamsFinishBeforeDraining()
{
    m_fake->manualStreaming = true;
    m_fake->streamEvents = 3;
    startGateway();
    QSignalSpy drained(m_engine.get(), &Engine::drained);
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", true));
    QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), 1, 5000);

    m_engine->beginShutdown(30s);

    QCOMPARE(drained.count(), 0);
    for (int event = 2; event <= 3; ++event) {
        m_fake->releaseEvent();
        QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), event, 5000);
        QCOMPARE(drained.count(), 0);
    }
    m_fake->releaseEvent(); // the final event and [DONE]
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.events().constLast().data, QByteArray("[DONE]"));
    QTRY_COMPARE_WITH_TIMEOUT(drained.count(), 1, 5000);
    QCOMPARE(drained.constFirst().constFirst().toInt(), 0);
    QCOMPARE(m_engine->inFlight(), 0);
}

void GatewayLifecycleTest::shutdownWithNothingInFlightDrainsAtOnce()
{
    startGateway();
    QSignalSpy drained(m_engine.get(), &Engine::drained);

    m_engine->beginShutdown(30s);

    // Far inside the 30 s grace: nothing was in flight, so nothing was waited for.
    QTRY_COMPARE_WITH_TIMEOUT(drained.count(), 1, 5000);
    QCOMPARE(drained.constFirst().constFirst().toInt(), 0);
}

void GatewayLifecycleTest::shutdownGraceAbandonsRequestsThatNeverFinish()
{
    m_fake->mode = FakeUpstream::Mode::Hang;
    startGateway();
    QSignalSpy drained(m_engine.get(), &Engine::drained);
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->requests().size(), 1, 5000);

    QTest::ignoreMessage(QtWarningMsg, "shutdown grace period over; 1 request(s) still in "
                                       "flight are abandoned");
    m_engine->beginShutdown(200ms);

    QTRY_COMPARE_WITH_TIMEOUT(drained.count(), 1, 5000);
    QCOMPARE(drained.constFirst().constFirst().toInt(), 1);
}

void GatewayLifecycleTest::drainDelayFailsReadinessWhileStillServing()
{
    // An hour: the delay cannot end during the test, however slow the machine.
    startGateway(1h);
    QSignalSpy drained(m_engine.get(), &Engine::drained);
    TestClient kept(m_engine->port());
    kept.send("GET", "/readyz");
    QVERIFY(kept.waitForFinished());
    QCOMPARE(kept.status(), 200);

    m_engine->beginShutdown(30s);

    kept.send("GET", "/readyz");
    QVERIFY(kept.waitForFinished());
    QCOMPARE(kept.status(), 503);
    const QJsonObject ready = QJsonDocument::fromJson(kept.body()).object();
    QCOMPARE(ready.value(QStringLiteral("status")).toString(), QStringLiteral("not_ready"));
    QCOMPARE(ready.value(QStringLiteral("draining")).toBool(), true);
    // What a load balancer sends before its check noticed is served, on a kept-alive connection
    // and on a new one alike.
    kept.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(kept.waitForFinished());
    QCOMPARE(kept.status(), 200);
    TestClient fresh(m_engine->port());
    fresh.post("/v1/chat/completions", chatBody("test-model", true));
    QVERIFY(fresh.waitForFinished());
    QCOMPARE(fresh.status(), 200);
    QCOMPARE(fresh.events().constLast().data, QByteArray("[DONE]"));
    QCOMPARE(drained.count(), 0); // nothing in flight, but the delay is not over
}

void GatewayLifecycleTest::drainDelayEndsInRefusingNewConnections()
{
    startGateway(200ms);
    QSignalSpy drained(m_engine.get(), &Engine::drained);
    const quint16 port = m_engine->port();

    m_engine->beginShutdown(30s);

    QTRY_COMPARE_WITH_TIMEOUT(drained.count(), 1, 10000);
    QCOMPARE(drained.constFirst().constFirst().toInt(), 0);
    TestClient client(port);
    QTRY_VERIFY_WITH_TIMEOUT(client.connectionFailed(), 5000);
}

QTEST_GUILESS_MAIN(GatewayLifecycleTest)
#include "tst_gateway_lifecycle.moc"
