// The providers' admin API on the real engine: what GET providers shows, what operator actions
// do to traffic, simulator knobs changing what a simulated provider answers, active health
// probes taking a failing endpoint out and bringing it back, and the bridge carrying actions
// and knobs across threads.

#include "bridge/engine_host.h"
#include "control/operator_commands.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "health/health_registry.h"
#include "sim/simulated_provider.h"
#include "sim/simulator_host.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTest>
#include <algorithm>
#include <optional>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;

namespace {

const QString kModel = u"test-model"_s;

struct AdminAnswer {
    int status = 0;
    QJsonObject body;
    QByteArray contentType;
    QByteArray allow;
};

AdminAnswer admin(quint16 port, const QByteArray &method, const QByteArray &path,
                  const QByteArray &body = {})
{
    TestClient client(port);
    client.send(method, "/admin/v1/" + path, body);
    AdminAnswer answer;
    if (!client.waitForFinished())
        return answer;
    answer.status = client.status();
    answer.body = QJsonDocument::fromJson(client.body()).object();
    answer.contentType = client.header("content-type");
    answer.allow = client.header("allow");
    return answer;
}

QJsonObject openAiError(const QString &message, const QString &code,
                        const QJsonValue &param = QJsonValue::Null)
{
    return {{u"message"_s, message},
            {u"type"_s, u"invalid_request_error"_s},
            {u"param"_s, param},
            {u"code"_s, code}};
}

config::ProviderConfig simulatedProvider(const QString &id)
{
    config::ProviderConfig provider;
    provider.id = id;
    provider.kind = config::ProviderKind::Simulated;
    provider.models = {{u"sim-model"_s, u"sim-model"_s}};
    provider.simulated.latency = 0ms;
    provider.simulated.timeToFirstToken = 0ms;
    provider.simulated.tokensPerSecond = 1000;
    provider.simulated.answerTokens = 3;
    return provider;
}

config::ProbeConfig fastProbes()
{
    config::ProbeConfig probes;
    probes.interval = 50ms;
    probes.timeout = 50ms;
    return probes;
}

} // namespace

class ProviderAdminTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void listsEveryProviderWithItsHealth();
    void showsOneProvider();
    void actionsChangeTheEndpoint_data();
    void actionsChangeTheEndpoint();
    void unknownProviderIsNotFound_data();
    void unknownProviderIsNotFound();
    void unknownActionIsABadRequest();
    void unknownAdminPathIsNotFound();
    void trippedEndpointIsAvoidedAndResetBringsItBack();
    void simulatorKnobsChangeWhatTheProviderAnswers_data();
    void simulatorKnobsChangeWhatTheProviderAnswers();
    void hangingSimulatedProviderNeverAnswers();
    void simulatorKnobsAreMergedAndShown();
    void badSimulatorKnobsAreRefused_data();
    void badSimulatorKnobsAreRefused();
    void simulatorKnobsOnlyForRunningSimulatedProviders();
    void failingProbesTakeTheEndpointOutAndSuccessesBringItBack();
    void probeGetsTheConfiguredPath();
    void bridgeCarriesActionsAndKnobsAcrossThreads();
    void snapshotsArePublishedOnlyOnceWatched();

private:
    // Probes are off unless a test asks for them: none may reach the fakes behind its back.
    void startGateway(std::optional<config::ProbeConfig> probes = std::nullopt);
    void startSimulatedGateway();
    quint16 port() const { return m_engine->port(); }

    std::unique_ptr<FakeUpstream> m_alpha;
    std::unique_ptr<FakeUpstream> m_beta;
    std::unique_ptr<sim::SimulatorHost> m_simulator;
    QHash<QString, QUrl> m_simulatorUrls;
    std::unique_ptr<Engine> m_engine;
};

void ProviderAdminTest::initTestCase()
{
    QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
}

void ProviderAdminTest::init()
{
    m_alpha = std::make_unique<FakeUpstream>();
    m_beta = std::make_unique<FakeUpstream>();
}

void ProviderAdminTest::cleanup()
{
    m_engine.reset(); // before the providers it calls
    m_simulator.reset();
    m_beta.reset();
    m_alpha.reset();
}

void ProviderAdminTest::startGateway(std::optional<config::ProbeConfig> probes)
{
    config::Config config = gatewayConfig(
        {providerFor(u"alpha"_s, *m_alpha, {kModel}), providerFor(u"beta"_s, *m_beta, {kModel})});
    config.providers[0].apiKey = "sk-alpha";
    config.resilience.probes = probes.value_or(config::ProbeConfig());
    config.resilience.probes.enabled = probes.has_value();
    m_engine = startEngine(config);
    QVERIFY(m_engine);
}

// A simulated provider started on this thread the way the bridge starts them on the simulator
// thread, plus an OpenAI one; knobs reach the simulator through the engine's control.
void ProviderAdminTest::startSimulatedGateway()
{
    config::Config config =
        gatewayConfig({simulatedProvider(u"sim-a"_s), providerFor(u"alpha"_s, *m_alpha, {kModel})});
    config.resilience.probes.enabled = false;
    m_simulator = std::make_unique<sim::SimulatorHost>();
    QString error;
    m_simulatorUrls = m_simulator->start(config.providers, &error);
    QVERIFY2(error.isEmpty(), qPrintable(error));
    sim::applySimulatorUrls(config, m_simulatorUrls);
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    m_engine->commands().setSimulatorControl(
        [simulator = m_simulator.get()](const QString &id, const SimulatorKnobs &knobs) {
            simulator->setKnobs(id, knobs);
        });
}

void ProviderAdminTest::listsEveryProviderWithItsHealth()
{
    startGateway();

    const AdminAnswer answer = admin(port(), "GET", "providers");

    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.contentType, QByteArray("application/json"));
    QCOMPARE(answer.body.value(u"object"_s).toString(), u"list"_s);
    const QJsonArray data = answer.body.value(u"data"_s).toArray();
    QCOMPARE(data.size(), 2);
    const QJsonObject expected{
        {u"id"_s, u"alpha"_s},
        {u"kind"_s, u"openai"_s},
        {u"models"_s, QJsonArray{kModel}},
        {u"state"_s, u"up"_s},
        {u"breaker"_s, QJsonObject{{u"state"_s, u"closed"_s},
                                   {u"reason"_s, QJsonValue::Null},
                                   {u"ms_until_half_open"_s, QJsonValue::Null},
                                   {u"consecutive_failures"_s, 0}}},
        {u"operator_state"_s, u"enabled"_s},
        {u"ms_until_cool_down_ends"_s, QJsonValue::Null},
        {u"counters"_s,
         QJsonObject{
             {u"requests"_s, 0}, {u"errors"_s, 0}, {u"unusable"_s, 0}, {u"rate_limited"_s, 0}}},
        {u"recent"_s, QJsonObject{{u"calls"_s, 0}, {u"error_rate_percent"_s, 0}}},
        {u"latency_ms"_s, QJsonObject{{u"p50"_s, QJsonValue::Null},
                                      {u"p95"_s, QJsonValue::Null},
                                      {u"ttft_p50"_s, QJsonValue::Null}}},
        {u"in_flight"_s, 0},
        {u"traffic_share"_s, 1},
        {u"last_failure"_s, QJsonValue::Null},
        {u"simulated"_s, false}};
    QCOMPARE(data[0].toObject(), expected);
    QCOMPARE(data[1].toObject().value(u"id"_s).toString(), u"beta"_s);
}

void ProviderAdminTest::showsOneProvider()
{
    startGateway();
    TestClient client(port());
    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QString served = QString::fromLatin1(client.header("x-switchyard-provider"));

    const AdminAnswer answer = admin(port(), "GET", "providers/" + served.toUtf8());

    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.value(u"id"_s).toString(), served);
    const QJsonObject counters = answer.body.value(u"counters"_s).toObject();
    QCOMPARE(counters.value(u"requests"_s).toInt(), 1);
    QCOMPARE(answer.body.value(u"recent"_s).toObject().value(u"calls"_s).toInt(), 1);
    QVERIFY(answer.body.value(u"latency_ms"_s).toObject().value(u"p50"_s).toDouble() >= 0);
}

void ProviderAdminTest::actionsChangeTheEndpoint_data()
{
    QTest::addColumn<QByteArray>("action");
    QTest::addColumn<QString>("state");
    QTest::addColumn<QString>("breaker");
    QTest::addColumn<QString>("operatorState");
    QTest::addColumn<QJsonValue>("reason");
    QTest::addColumn<bool>("selectable");

    QTest::newRow("disable") << QByteArray("disable") << u"down"_s << u"closed"_s << u"disabled"_s
                             << QJsonValue(QJsonValue::Null) << false;
    QTest::newRow("drain") << QByteArray("drain") << u"degraded"_s << u"closed"_s << u"draining"_s
                           << QJsonValue(QJsonValue::Null) << false;
    QTest::newRow("trip") << QByteArray("trip") << u"down"_s << u"open"_s << u"enabled"_s
                          << QJsonValue(u"tripped by operator; open for 60 s"_s) << false;
    QTest::newRow("reset") << QByteArray("reset") << u"up"_s << u"closed"_s << u"enabled"_s
                           << QJsonValue(u"reset by operator"_s) << true;
    QTest::newRow("enable") << QByteArray("enable") << u"up"_s << u"closed"_s << u"enabled"_s
                            << QJsonValue(QJsonValue::Null) << true;
}

void ProviderAdminTest::actionsChangeTheEndpoint()
{
    QFETCH(QByteArray, action);
    QFETCH(QString, state);
    QFETCH(QString, breaker);
    QFETCH(QString, operatorState);
    QFETCH(QJsonValue, reason);
    QFETCH(bool, selectable);
    startGateway();

    const AdminAnswer answer = admin(port(), "POST", "providers/alpha/" + action);

    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body.value(u"id"_s).toString(), u"alpha"_s);
    QCOMPARE(answer.body.value(u"state"_s).toString(), state);
    const QJsonObject breakerJson = answer.body.value(u"breaker"_s).toObject();
    QCOMPARE(breakerJson.value(u"state"_s).toString(), breaker);
    QCOMPARE(breakerJson.value(u"reason"_s), reason);
    QCOMPARE(answer.body.value(u"operator_state"_s).toString(), operatorState);
    QCOMPARE(m_engine->health().selectable(m_engine->health().indexOf(u"alpha"_s)), selectable);
    const QList<BreakerEvent> events = m_engine->snapshot().recentBreakerEvents;
    QCOMPARE(events.size(), 1);
    QCOMPARE(events.first().providerId, u"alpha"_s);
}

void ProviderAdminTest::unknownProviderIsNotFound_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::newRow("action") << QByteArray("POST") << QByteArray("providers/nope/trip");
    QTest::newRow("unknown action too") << QByteArray("POST") << QByteArray("providers/nope/x");
    QTest::newRow("one provider") << QByteArray("GET") << QByteArray("providers/nope");
    QTest::newRow("simulator") << QByteArray("POST") << QByteArray("simulator/nope");
}

void ProviderAdminTest::unknownProviderIsNotFound()
{
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, path);
    startGateway();

    const AdminAnswer answer = admin(port(), method, path, method == "POST" ? "{}" : "");

    QCOMPARE(answer.status, 404);
    QCOMPARE(answer.contentType, QByteArray("application/json"));
    QCOMPARE(answer.body.value(u"error"_s).toObject(),
             openAiError(u"No provider `nope`. GET /admin/v1/providers lists them."_s,
                         u"provider_not_found"_s));
}

void ProviderAdminTest::unknownActionIsABadRequest()
{
    startGateway();

    const AdminAnswer answer = admin(port(), "POST", "providers/alpha/explode");

    QCOMPARE(answer.status, 400);
    QCOMPARE(answer.body.value(u"error"_s).toObject(),
             openAiError(u"Unknown action `explode`; use enable, disable, drain, trip or reset."_s,
                         u"invalid_admin_request"_s, u"action"_s));
    QCOMPARE(m_engine->snapshot().recentBreakerEvents.size(), 0);
}

void ProviderAdminTest::unknownAdminPathIsNotFound()
{
    startGateway();

    const AdminAnswer unknown = admin(port(), "GET", "nothing/here");
    QCOMPARE(unknown.status, 404);
    QCOMPARE(unknown.body.value(u"error"_s).toObject(),
             openAiError(u"Unknown request URL: GET /admin/v1/nothing/here."_s, u"unknown_url"_s));

    const AdminAnswer wrongMethod = admin(port(), "GET", "providers/alpha/trip");
    QCOMPARE(wrongMethod.status, 405);
    QCOMPARE(wrongMethod.allow, QByteArray("POST"));
    QCOMPARE(wrongMethod.body.value(u"error"_s).toObject().value(u"code"_s).toString(),
             u"method_not_allowed"_s);
}

void ProviderAdminTest::trippedEndpointIsAvoidedAndResetBringsItBack()
{
    startGateway();
    QCOMPARE(admin(port(), "POST", "providers/alpha/trip").status, 200);

    for (int i = 0; i < 6; ++i) {
        TestClient client(port());
        client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
        QCOMPARE(client.header("x-switchyard-provider"), QByteArray("beta"));
    }
    QCOMPARE(m_alpha->requests().size(), 0);

    // With both out, nothing is sent anywhere.
    QCOMPARE(admin(port(), "POST", "providers/beta/disable").status, 200);
    {
        TestClient client(port());
        client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 503);
    }
    QCOMPARE(m_alpha->requests().size(), 0);
    QCOMPARE(m_beta->requests().size(), 6);

    const AdminAnswer reset = admin(port(), "POST", "providers/alpha/reset");
    QCOMPARE(reset.status, 200);
    QCOMPARE(reset.body.value(u"breaker"_s).toObject().value(u"state"_s).toString(), u"closed"_s);
    // Back, but ramping up from 5 % of its share.
    QCOMPARE(reset.body.value(u"state"_s).toString(), u"degraded"_s);
    const double share = reset.body.value(u"traffic_share"_s).toDouble();
    QVERIFY2(share >= 0.05 && share < 1.0, qPrintable(QString::number(share)));
    TestClient client(port());
    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("alpha"));
}

void ProviderAdminTest::simulatorKnobsChangeWhatTheProviderAnswers_data()
{
    QTest::addColumn<QByteArray>("knobs");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<int>("status"); // 0: no answer at all
    QTest::addColumn<QByteArray>("retryAfter");
    QTest::addColumn<bool>("complete");     // the whole answer arrived, framing included
    QTest::addColumn<int>("contentEvents"); // streamed: events with content

    QTest::newRow("ok") << QByteArray(R"({"mode":"ok"})") << false << 200 << QByteArray() << true
                        << 0;
    QTest::newRow("ok, streamed") << QByteArray(R"({"mode":"ok"})") << true << 200 << QByteArray()
                                  << true << 3;
    QTest::newRow("500") << QByteArray(R"({"mode":"500"})") << false << 500 << QByteArray() << true
                         << 0;
    QTest::newRow("429") << QByteArray(R"({"mode":"429"})") << false << 429 << QByteArray("1")
                         << true << 0;
    QTest::newRow("reset") << QByteArray(R"({"mode":"reset"})") << false << 0 << QByteArray()
                           << false << 0;
    QTest::newRow("cut-stream, streamed")
        << QByteArray(R"({"mode":"cut-stream"})") << true << 200 << QByteArray() << false << 2;
    QTest::newRow("cut-stream, whole answer")
        << QByteArray(R"({"mode":"cut-stream"})") << false << 200 << QByteArray() << false << 0;
    QTest::newRow("error rate 1") << QByteArray(R"({"mode":"ok","error_rate":1})") << false << 500
                                  << QByteArray() << true << 0;
}

void ProviderAdminTest::simulatorKnobsChangeWhatTheProviderAnswers()
{
    QFETCH(QByteArray, knobs);
    QFETCH(bool, stream);
    QFETCH(int, status);
    QFETCH(QByteArray, retryAfter);
    QFETCH(bool, complete);
    QFETCH(int, contentEvents);
    startSimulatedGateway();

    QCOMPARE(admin(port(), "POST", "simulator/sim-a", knobs).status, 200);

    // Straight to the simulated provider: what it answers, not what the gateway makes of it.
    TestClient client(quint16(m_simulatorUrls.value(u"sim-a"_s).port()));
    client.post("/v1/chat/completions", chatBody("sim-model", stream));
    if (complete) {
        QVERIFY(client.waitForFinished());
    } else {
        QTRY_VERIFY_WITH_TIMEOUT(client.connectionClosed(), 5000);
        QVERIFY(!client.finished());
    }
    QCOMPARE(client.status(), status);
    QCOMPARE(client.header("retry-after"), retryAfter);
    int withContent = 0;
    bool done = false;
    for (const upstream::SseEvent &event : client.events()) {
        withContent += event.data.contains(R"("content")") ? 1 : 0;
        done = done || event.data == "[DONE]";
    }
    QCOMPARE(withContent, contentEvents);
    QCOMPARE(done, stream && complete);
}

void ProviderAdminTest::hangingSimulatedProviderNeverAnswers()
{
    startSimulatedGateway();
    QCOMPARE(admin(port(), "POST", "simulator/sim-a", R"({"mode":"hang"})").status, 200);
    TestClient client(quint16(m_simulatorUrls.value(u"sim-a"_s).port()));
    client.post("/v1/chat/completions", chatBody("sim-model", false));

    QTest::qWait(300); // no timing is measured: nothing at all may arrive
    QVERIFY(!client.headReceived());
    QVERIFY(!client.connectionClosed());

    // Back to normal: new requests are answered, the hanging one stays as it is.
    QCOMPARE(admin(port(), "POST", "simulator/sim-a", R"({"mode":"ok"})").status, 200);
    TestClient next(quint16(m_simulatorUrls.value(u"sim-a"_s).port()));
    next.post("/v1/chat/completions", chatBody("sim-model", false));
    QVERIFY(next.waitForFinished());
    QCOMPARE(next.status(), 200);
    QVERIFY(!client.headReceived());
}

void ProviderAdminTest::simulatorKnobsAreMergedAndShown()
{
    startSimulatedGateway();

    const AdminAnswer first = admin(port(), "POST", "simulator/sim-a", R"({"latency_ms":5})");
    QCOMPARE(first.status, 200);
    QCOMPARE(first.body, (QJsonObject{{u"id"_s, u"sim-a"_s},
                                      {u"mode"_s, u"ok"_s},
                                      {u"latency_ms"_s, 5},
                                      {u"error_rate"_s, QJsonValue::Null}}));
    const AdminAnswer second = admin(port(), "POST", "simulator/sim-a", R"({"mode":"500"})");
    QCOMPARE(second.body.value(u"mode"_s).toString(), u"500"_s);
    QCOMPARE(second.body.value(u"latency_ms"_s).toInt(), 5); // kept
    const AdminAnswer third =
        admin(port(), "POST", "simulator/sim-a", R"({"latency_ms":null,"error_rate":0.25})");
    QCOMPARE(third.body, (QJsonObject{{u"id"_s, u"sim-a"_s},
                                      {u"mode"_s, u"500"_s},
                                      {u"latency_ms"_s, QJsonValue::Null},
                                      {u"error_rate"_s, 0.25}}));
    QCOMPARE(admin(port(), "GET", "simulator/sim-a").body, third.body);
    QCOMPARE(m_simulator->provider(u"sim-a"_s)->knobs().mode, SimulatorKnobs::Mode::ServerError);
    QCOMPARE(m_simulator->provider(u"sim-a"_s)->knobs().errorRate, 0.25);

    const AdminAnswer row = admin(port(), "GET", "providers/sim-a");
    QCOMPARE(row.body.value(u"simulated"_s).toBool(), true);
    QCOMPARE(row.body.value(u"simulator_mode"_s).toString(), u"500"_s);
    QCOMPARE(row.body.value(u"kind"_s).toString(), u"simulated"_s);
}

void ProviderAdminTest::badSimulatorKnobsAreRefused_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QJsonValue>("param");
    QTest::addColumn<QString>("code");

    const QString notAnObject = u"The body must be a JSON object with `mode`, `latency_ms` or "
                                u"`error_rate`, such as {\"mode\": \"500\"}."_s;
    const QString badMode =
        u"`mode` must be one of ok, 500, 429, hang, reset, cut-stream; got %1."_s;
    const QString badLatency = u"`latency_ms` must be a whole number of milliseconds from 0 to "
                               u"600000, or null for the configured latency; got %1."_s;
    const QString badRate =
        u"`error_rate` must be a number from 0 to 1, or null for the configured rate; got %1."_s;
    QTest::newRow("not JSON") << QByteArray("mode=500") << notAnObject
                              << QJsonValue(QJsonValue::Null) << u"invalid_admin_request"_s;
    QTest::newRow("a list") << QByteArray("[]") << notAnObject << QJsonValue(QJsonValue::Null)
                            << u"invalid_admin_request"_s;
    QTest::newRow("empty body") << QByteArray() << notAnObject << QJsonValue(QJsonValue::Null)
                                << u"invalid_admin_request"_s;
    QTest::newRow("unknown mode") << QByteArray(R"({"mode":"explode"})")
                                  << badMode.arg(u"\"explode\""_s) << QJsonValue(u"mode"_s)
                                  << u"invalid_admin_request"_s;
    QTest::newRow("mode as a number") << QByteArray(R"({"mode":500})") << badMode.arg(u"500"_s)
                                      << QJsonValue(u"mode"_s) << u"invalid_admin_request"_s;
    QTest::newRow("negative latency")
        << QByteArray(R"({"latency_ms":-5})") << badLatency.arg(u"-5"_s)
        << QJsonValue(u"latency_ms"_s) << u"invalid_admin_request"_s;
    QTest::newRow("fractional latency")
        << QByteArray(R"({"latency_ms":1.5})") << badLatency.arg(u"1.5"_s)
        << QJsonValue(u"latency_ms"_s) << u"invalid_admin_request"_s;
    QTest::newRow("latency as text")
        << QByteArray(R"({"latency_ms":"5s"})") << badLatency.arg(u"\"5s\""_s)
        << QJsonValue(u"latency_ms"_s) << u"invalid_admin_request"_s;
    QTest::newRow("error rate above 1")
        << QByteArray(R"({"error_rate":2})") << badRate.arg(u"2"_s) << QJsonValue(u"error_rate"_s)
        << u"invalid_admin_request"_s;
    QTest::newRow("unknown field")
        << QByteArray(R"({"mode":"ok","speed":1})")
        << u"Unknown field `speed`; expected `mode`, `latency_ms` or `error_rate`."_s
        << QJsonValue(u"speed"_s) << u"invalid_admin_request"_s;
}

void ProviderAdminTest::badSimulatorKnobsAreRefused()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, message);
    QFETCH(QJsonValue, param);
    QFETCH(QString, code);
    startSimulatedGateway();

    const AdminAnswer answer = admin(port(), "POST", "simulator/sim-a", body);

    QCOMPARE(answer.status, 400);
    QCOMPARE(answer.body.value(u"error"_s).toObject(), openAiError(message, code, param));
    QCOMPARE(m_simulator->provider(u"sim-a"_s)->knobs().mode, SimulatorKnobs::Mode::Ok);
}

void ProviderAdminTest::simulatorKnobsOnlyForRunningSimulatedProviders()
{
    startSimulatedGateway();
    const AdminAnswer openAi = admin(port(), "POST", "simulator/alpha", R"({"mode":"500"})");
    QCOMPARE(openAi.status, 404);
    QCOMPARE(openAi.body.value(u"error"_s).toObject(),
             openAiError(u"Provider `alpha` is not simulated; only simulated providers have "
                         u"simulator knobs."_s,
                         u"not_simulated"_s));

    // An engine whose simulated providers nobody runs cannot change them.
    m_engine->commands().setSimulatorControl({});
    const AdminAnswer stopped = admin(port(), "POST", "simulator/sim-a", R"({"mode":"500"})");
    QCOMPARE(stopped.status, 503);
    QCOMPARE(stopped.body.value(u"error"_s).toObject().value(u"message"_s).toString(),
             u"The simulator is not running, so simulated providers cannot be changed."_s);
}

void ProviderAdminTest::failingProbesTakeTheEndpointOutAndSuccessesBringItBack()
{
    m_alpha->mode = FakeUpstream::Mode::Status;
    m_alpha->status = 503;
    startGateway(fastProbes());
    health::HealthRegistry &health = m_engine->health();
    const int alpha = health.indexOf(u"alpha"_s);

    QTRY_VERIFY_WITH_TIMEOUT(!health.probeHealthy(alpha), 5000);
    QVERIFY(!health.selectable(alpha));
    ProviderHealth row = providerHealth(*m_engine, u"alpha"_s);
    QCOMPARE(row.breaker, BreakerState::Open);
    QCOMPARE(row.breakerReason, u"3 failed health probes"_s);
    QCOMPARE(row.lastFailure, u"health probe: HTTP 503"_s);
    QCOMPARE(row.state, ProviderState::Down);
    QVERIFY(health.probeHealthy(health.indexOf(u"beta"_s)));
    // The probe: a one-token completion of the provider's first model, with its key.
    const FakeUpstream::ReceivedRequest probe = m_alpha->requests().first();
    QCOMPARE(probe.method, QByteArray("POST"));
    QCOMPARE(probe.path, QByteArray("/v1/chat/completions"));
    QCOMPARE(probe.header("authorization"), QByteArray("Bearer sk-alpha"));
    QCOMPARE(probe.header("x-switchyard-probe"), QByteArray("1"));
    const QJsonObject body = QJsonDocument::fromJson(probe.body).object();
    QCOMPARE(body.value(u"model"_s).toString(), kModel);
    QCOMPARE(body.value(u"max_tokens"_s).toInt(), 1);
    QCOMPARE(body.value(u"stream"_s).toBool(), false);

    m_alpha->mode = FakeUpstream::Mode::Answer;

    QTRY_VERIFY_WITH_TIMEOUT(health.probeHealthy(alpha), 5000);
    QVERIFY(health.selectable(alpha));
    row = providerHealth(*m_engine, u"alpha"_s);
    QCOMPARE(row.breaker, BreakerState::Closed);
    QCOMPARE(row.breakerReason, u"2 successful health probes"_s);
    QCOMPARE(row.state, ProviderState::Degraded); // ramping up over the next minute
    QVERIFY(row.trafficShare >= 0.05 && row.trafficShare < 1.0);
}

void ProviderAdminTest::probeGetsTheConfiguredPath()
{
    config::ProbeConfig probes = fastProbes();
    probes.path = u"/v1/models"_s;
    probes.pathByProvider.insert(u"beta"_s, u"/health"_s);
    startGateway(probes);

    QTRY_VERIFY_WITH_TIMEOUT(!m_alpha->requests().isEmpty() && !m_beta->requests().isEmpty(), 5000);

    QCOMPARE(m_alpha->requests().first().method, QByteArray("GET"));
    QCOMPARE(m_alpha->requests().first().path, QByteArray("/v1/models"));
    QCOMPARE(m_beta->requests().first().method, QByteArray("GET"));
    QCOMPARE(m_beta->requests().first().path, QByteArray("/health"));
    QVERIFY(m_engine->health().probeHealthy(0));
}

void ProviderAdminTest::bridgeCarriesActionsAndKnobsAcrossThreads()
{
    config::Config config = gatewayConfig({simulatedProvider(u"sim-a"_s)});
    config.resilience.probes.enabled = false;
    EngineHost bridge(config);
    QString error;
    QVERIFY2(bridge.start(&error), qPrintable(error));
    // A watcher, as the console is: snapshots are published only to one.
    QSignalSpy snapshots(&bridge, &EngineBridge::snapshotUpdated);
    const auto row = [&bridge]() -> ProviderHealth {
        const QList<ProviderHealth> providers = bridge.lastSnapshot().providers;
        return providers.isEmpty() ? ProviderHealth() : providers.first();
    };

    bridge.applyProviderAction(u"sim-a"_s, ProviderAction::Disable);
    QTRY_COMPARE_WITH_TIMEOUT(row().operatorState, OperatorState::Disabled, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(bridge.lastSnapshot().recentBreakerEvents.size(), 1, 5000);
    QCOMPARE(bridge.lastSnapshot().recentBreakerEvents.first().reason, u"disabled by operator"_s);
    bridge.applyProviderAction(u"no-such-provider"_s, ProviderAction::Trip); // ignored

    SimulatorKnobs knobs;
    knobs.mode = SimulatorKnobs::Mode::RateLimited;
    bridge.setSimulatorKnobs(u"sim-a"_s, knobs);
    QTRY_COMPARE_WITH_TIMEOUT(row().simulatorMode, SimulatorKnobs::Mode::RateLimited, 5000);
    QVERIFY(row().simulated);

    // The knobs reached the provider on the simulator thread: it now rate limits.
    bridge.applyProviderAction(u"sim-a"_s, ProviderAction::Enable);
    QTRY_COMPARE_WITH_TIMEOUT(row().operatorState, OperatorState::Enabled, 5000);
    const AdminAnswer shown = admin(bridge.port(), "GET", "simulator/sim-a");
    QCOMPARE(shown.body.value(u"mode"_s).toString(), u"429"_s);
    TestClient client(bridge.port());
    client.post("/v1/chat/completions", chatBody("sim-model", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 429);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("sim-a"));
}

QTEST_GUILESS_MAIN(ProviderAdminTest)
void ProviderAdminTest::snapshotsArePublishedOnlyOnceWatched()
{
    config::Config config = gatewayConfig({simulatedProvider(u"sim-a"_s)});
    config.resilience.probes.enabled = false;
    EngineHost bridge(config);
    QString error;
    QVERIFY2(bridge.start(&error), qPrintable(error));
    // Headless, nobody watches: no snapshot is built. Three publishing periods pass, and a
    // request's record that would be in the next feed.
    TestClient before(bridge.port());
    before.post("/v1/chat/completions", chatBody("sim-model", false));
    QVERIFY(before.waitForFinished());
    QCOMPARE(before.status(), 200);
    QTest::qWait(300);
    QVERIFY(bridge.lastSnapshot().providers.isEmpty());

    // The first watcher starts them, the trace feed with them; later ones change nothing.
    QSignalSpy snapshots(&bridge, &EngineBridge::snapshotUpdated);
    QSignalSpy feeds(&bridge, &EngineBridge::traceFeedUpdated);
    QVERIFY(snapshots.wait(5000));
    QCOMPARE(bridge.lastSnapshot().providers.size(), 1);
    QCOMPARE(bridge.lastSnapshot().providers.first().id, u"sim-a"_s);
    QTRY_VERIFY_WITH_TIMEOUT(!feeds.isEmpty(), 5000);
    // The request before anyone watched is not in the feed: records are kept for a watcher.
    for (const QList<QVariant> &feed : std::as_const(feeds))
        QVERIFY(feed.first().value<telemetry::TraceFeed>().finished.isEmpty());
    TestClient after(bridge.port());
    after.post("/v1/chat/completions", chatBody("sim-model", false));
    QVERIFY(after.waitForFinished());
    QCOMPARE(after.status(), 200);
    QTRY_VERIFY_WITH_TIMEOUT(
        std::any_of(feeds.cbegin(), feeds.cend(),
                    [](const QList<QVariant> &feed) {
                        return !feed.first().value<telemetry::TraceFeed>().finished.isEmpty();
                    }),
        5000);
}

#include "tst_provider_admin.moc"
