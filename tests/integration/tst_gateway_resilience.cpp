// The executor against misbehaving providers: failover by error class, retries on the same
// endpoint when a 429 says when, timeouts stretched along the gradient, the request's time
// budget, streams that fail before and after their first byte, admission refusals, and the
// degradation ladder. Every answer carries the headers that say what happened.

#include "descriptors_taken.h"
#include "engine/engine.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "health/health_registry.h"
#include "http/gateway_server.h"
#include "resilience/retry_policy.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>
#include <QThread>

using namespace switchyard;
using namespace switchyard::testing;
using namespace std::chrono_literals;

namespace {

using Mode = FakeUpstream::Mode;
using Headers = QList<QPair<QByteArray, QByteArray>>;

const QString kModel = QStringLiteral("test-model");

// How the first provider fails in a failover case.
enum class Failure {
    Status500,
    Status503,
    Reset,
    CutBeforeFirstEvent,
    Garbage,
    NotAStream,
    Refused
};

// Backoff without waiting and without chance, so a test's outcome never depends on timing.
void noBackoff(config::Config &config)
{
    config.resilience.retries.backoffBase = 0ms;
    config.resilience.retries.backoffJitter = 0ms;
    config.resilience.retries.backoffMax = 0ms;
}

// `first` and `second` both serve test-model; `second` has weight 0, so it is always tried
// after `first` (a weighted draw never picks an endpoint weighted out).
config::Config poolOfTwo(const QByteArray &firstBaseUrl, const FakeUpstream &second)
{
    config::ProviderConfig backup = providerFor(QStringLiteral("second"), second, {kModel});
    backup.weight = 0;
    config::Config config =
        gatewayConfig({providerAt(QStringLiteral("first"), firstBaseUrl, {kModel}), backup});
    config.timeouts = shortTimeouts();
    noBackoff(config);
    // Probe calls would show up in the fakes' request counts.
    config.resilience.probes.enabled = false;
    return config;
}

// One rule sends everything to tier light: pool [first, second] with a 200 ms timeout and two
// retries; pro is empty.
config::Config lightTierOfTwo(const FakeUpstream &first, const FakeUpstream &second)
{
    config::Config config = poolOfTwo(first.baseUrl(), second);
    config.timeouts.total = 5s;
    config.routing.tiers = {config::TierConfig{QStringLiteral("light"),
                                               {QStringLiteral("first"), QStringLiteral("second")},
                                               200ms,
                                               2,
                                               0},
                            config::TierConfig{QStringLiteral("pro"), {}, 0ms, 1, 0}};
    config::RouteRule rule;
    rule.name = QStringLiteral("everything-light");
    rule.to.kind = config::RouteTarget::Kind::Tier;
    rule.to.names = {QStringLiteral("light")};
    config.routing.routes = {rule};
    return config;
}

bool isCompletion(const QByteArray &body)
{
    const QJsonObject object = QJsonDocument::fromJson(body).object();
    return object.value(QStringLiteral("object")).toString() == QLatin1String("chat.completion") &&
           !object.value(QStringLiteral("choices")).toArray().isEmpty();
}

// A clean stream: events that are not errors, ending with [DONE].
bool isCleanStream(const TestClient &client)
{
    if (client.framingError() || client.events().isEmpty() || !client.events().constLast().isDone())
        return false;
    for (const upstream::SseEvent &event : client.events()) {
        if (!errorOf(event.data).isEmpty())
            return false;
    }
    return true;
}

int retriesGrantedBy(Engine &engine)
{
    return int(engine.retryBudget().retriesGranted());
}

} // namespace

Q_DECLARE_METATYPE(Failure)

class GatewayResilienceTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void failsOverToTheNextEndpoint_data();
    void failsOverToTheNextEndpoint();
    void requestFaultIsNeverRetried();
    void rateLimitMovesOnAtOnceAndCoolsDown();
    void coolDownIsWaitedOutOnceWhenNothingElseCan();
    void everyEndpointRateLimitedAnswers429WithRetryAfter();
    void timeoutFailsOverWithAStretchedTimeout_data();
    void timeoutFailsOverWithAStretchedTimeout();
    void timeoutOfEveryEndpointNamesTheStretchedLimit();
    void spentTimeBudgetIsA504_data();
    void spentTimeBudgetIsA504();
    void timeBudgetEndsAStreamWithAnErrorEvent();
    void streamCutAfterTheFirstByteIsNeverSwitched();
    void retryBudgetWithoutAFloorKeepsALoneRequestFromRetrying();
    void failoverTakesOnlyItsShareOfTheBackup();
    void degradedTierShedsItsShare_data();
    void degradedTierShedsItsShare();
    void globalGateRefusesBeyondMaxInFlight();
    void runningOutOfDescriptorsIsTheGatewaysOverload();
    void aTimeoutWhileTheEngineCatchesUpIsTheGatewaysFault();
    void tenantOverItsRateIsRefused();
    void loopGuardRefusesDeepRequests();
    void depthIsForwardedOneHopDeeper_data();
    void depthIsForwardedOneHopDeeper();
    void degradationLadderAnswers_data();
    void degradationLadderAnswers();
    void degradationNeverHidesARequestFault();

private:
    std::unique_ptr<FakeUpstream> m_first;
    std::unique_ptr<FakeUpstream> m_second;
    std::unique_ptr<Engine> m_engine;
};

void GatewayResilienceTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayResilienceTest::init()
{
    m_first = std::make_unique<FakeUpstream>();
    m_second = std::make_unique<FakeUpstream>();
}

void GatewayResilienceTest::cleanup()
{
    if (m_engine) {
        // Nothing may leak: no request, provider call or retry slot stays counted.
        QTRY_COMPARE_WITH_TIMEOUT(m_engine->inFlight(), 0, 5000);
        QCOMPARE(healthInFlight(*m_engine), 0);
        QCOMPARE(m_engine->retryBudget().retriesInFlight(), 0);
        QCOMPARE(m_engine->retryBudget().requestsInFlight(), 0);
    }
    m_engine.reset();
    m_second.reset();
    m_first.reset();
}

void GatewayResilienceTest::failsOverToTheNextEndpoint_data()
{
    QTest::addColumn<Failure>("failure");
    QTest::addColumn<bool>("stream");

    QTest::newRow("500") << Failure::Status500 << false;
    QTest::newRow("500, streamed") << Failure::Status500 << true;
    QTest::newRow("503") << Failure::Status503 << false;
    QTest::newRow("connection reset") << Failure::Reset << false;
    QTest::newRow("connection reset, streamed") << Failure::Reset << true;
    QTest::newRow("stream cut before its first event") << Failure::CutBeforeFirstEvent << true;
    QTest::newRow("answer not JSON") << Failure::Garbage << false;
    QTest::newRow("JSON answer to a streamed request") << Failure::NotAStream << true;
    QTest::newRow("connect refused") << Failure::Refused << false;
    QTest::newRow("connect refused, streamed") << Failure::Refused << true;
}

void GatewayResilienceTest::failsOverToTheNextEndpoint()
{
    QFETCH(Failure, failure);
    QFETCH(bool, stream);
    QByteArray firstUrl = m_first->baseUrl();
    switch (failure) {
    case Failure::Status500:
    case Failure::Status503:
        m_first->mode = Mode::Status;
        m_first->status = failure == Failure::Status500 ? 500 : 503;
        break;
    case Failure::Reset:
        m_first->mode = Mode::Reset;
        break;
    case Failure::CutBeforeFirstEvent:
        m_first->mode = Mode::CutStream;
        m_first->cutAfterEvents = 0;
        break;
    case Failure::Garbage:
        m_first->mode = Mode::Garbage;
        break;
    case Failure::NotAStream:
        m_first->mode = Mode::NotAStream;
        break;
    case Failure::Refused:
        firstUrl = "http://127.0.0.1:" + QByteArray::number(closedLoopbackPort()) + "/v1";
        break;
    }
    m_engine = startEngine(poolOfTwo(firstUrl, *m_second));
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), stream));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(stream ? isCleanStream(client) : isCompletion(client.body()));
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("second"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("2"));
    QCOMPARE(client.header("x-switchyard-degraded"), QByteArray("0"));
    QCOMPARE(client.header("x-switchyard-route"), QByteArray("default"));
    QCOMPARE(client.header("x-switchyard-tier"), QByteArray("none"));
    const QByteArray requestId = client.header("x-switchyard-request-id");
    if (failure != Failure::Refused)
        QCOMPARE(m_first->requestsWithId(requestId), 1);
    QCOMPARE(m_second->requestsWithId(requestId), 1);
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("first")).errors, quint64(1));
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("second")).errors, quint64(0));

    const auto trace = m_engine->traces().find(requestId);
    QVERIFY(trace);
    QCOMPARE(trace->outcome, QStringLiteral("ok"));
    QCOMPARE(trace->provider, QStringLiteral("second"));
    QStringList attempts;
    for (const telemetry::Span &span : trace->spans) {
        if (span.name == QLatin1String("upstream attempt")) {
            QVERIFY(span.durationMicros >= 0);
            attempts.append(span.detail);
        }
    }
    QCOMPARE(attempts.size(), 2);
    QVERIFY2(attempts[0].startsWith(QStringLiteral("first, attempt 1: ")), qPrintable(attempts[0]));
    QCOMPARE(attempts[1], QStringLiteral("second, attempt 2: ok"));
    QVERIFY(trace->span(QStringLiteral("retry")));
}

void GatewayResilienceTest::requestFaultIsNeverRetried()
{
    m_first->mode = Mode::Status;
    m_first->status = 400;
    m_first->statusBody = R"({"error":{"message":"bad temperature","type":"x"}})";
    m_engine = startEngine(poolOfTwo(m_first->baseUrl(), *m_second));
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 400);
    QCOMPARE(errorOf(client.body()).value(QStringLiteral("message")).toString(),
             QStringLiteral("Provider `first` rejected the request (HTTP 400): bad temperature"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("1"));
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("first"));
    QCOMPARE(m_second->requests().size(), 0);
    const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace);
    QCOMPARE(trace->span(QStringLiteral("no retry"))->detail,
             QStringLiteral("the request itself was refused; any endpoint would refuse it alike"));
}

void GatewayResilienceTest::rateLimitMovesOnAtOnceAndCoolsDown()
{
    m_first->mode = Mode::Status;
    m_first->status = 429;
    m_first->extraHeaders = {{"Retry-After", "30"}};
    m_engine = startEngine(poolOfTwo(m_first->baseUrl(), *m_second));
    QVERIFY(m_engine);

    for (int request = 0; request < 3; ++request) {
        TestClient client(m_engine->port());
        client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), true));
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
        QVERIFY(isCleanStream(client));
        QCOMPARE(client.header("x-switchyard-provider"), QByteArray("second"));
        // The first request met the 429; the later ones pass over the cooling endpoint.
        QCOMPARE(client.header("x-switchyard-attempts"), QByteArray(request == 0 ? "2" : "1"));
        if (request == 0) {
            const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
            QVERIFY(trace);
            QCOMPARE(trace->span(QStringLiteral("retry"))->detail,
                     QStringLiteral("rate limited: the endpoint cools down, the next endpoint at "
                                    "once"));
        }
    }
    QCOMPARE(m_first->requests().size(), 1);
    // A rate limit is not a failure: the breaker stays closed and counts nothing against it.
    const ProviderHealth first = providerHealth(*m_engine, QStringLiteral("first"));
    QCOMPARE(first.breaker, BreakerState::Closed);
    QCOMPARE(first.consecutiveFailures, 0);
}

void GatewayResilienceTest::coolDownIsWaitedOutOnceWhenNothingElseCan()
{
    m_first->scriptedModes = {Mode::Status};
    m_first->status = 429;
    m_first->extraHeaders = {{"Retry-After", "1"}};
    m_second->mode = Mode::Status;
    m_second->status = 500;
    m_engine = startEngine(poolOfTwo(m_first->baseUrl(), *m_second));
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    // Streamed, with a budget that leaves room for the one-second wait (a plain request's
    // total timeout here is 400 ms).
    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), true),
                {{"x-switchyard-timeout-budget-ms", "10000"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(isCleanStream(client));
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("first"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("3"));
    const QByteArray requestId = client.header("x-switchyard-request-id");
    QCOMPARE(m_first->requestsWithId(requestId), 2);
    QCOMPARE(m_second->requestsWithId(requestId), 1);
    const auto trace = m_engine->traces().find(requestId);
    QVERIFY(trace);
    bool waited = false;
    for (const telemetry::Span &span : trace->spans)
        waited =
            waited || span.detail.startsWith(QStringLiteral("first: no other endpoint can "
                                                            "take it: wait out the cool-down"));
    QVERIFY(waited);
}

void GatewayResilienceTest::everyEndpointRateLimitedAnswers429WithRetryAfter()
{
    for (FakeUpstream *upstream : {m_first.get(), m_second.get()}) {
        upstream->mode = Mode::Status;
        upstream->status = 429;
    }
    m_first->extraHeaders = {{"Retry-After", "40"}};
    m_second->extraHeaders = {{"Retry-After", "20"}};
    m_engine = startEngine(poolOfTwo(m_first->baseUrl(), *m_second));
    QVERIFY(m_engine);

    for (int request = 0; request < 2; ++request) {
        TestClient client(m_engine->port());
        client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), request == 1));
        QVERIFY(client.waitForFinished());
        // What the official SDKs raise as RateLimitError, and wait out by its retry-after.
        QCOMPARE(client.status(), 429);
        QCOMPARE(client.header("retry-after"), QByteArray("20"));
        const QJsonObject error = errorOf(client.body());
        QCOMPARE(error.value(QStringLiteral("type")).toString(),
                 QStringLiteral("rate_limit_error"));
        QCOMPARE(error.value(QStringLiteral("code")).toString(),
                 QStringLiteral("upstream_rate_limited"));
        const QString message = error.value(QStringLiteral("message")).toString();
        QVERIFY2(message.contains(QStringLiteral("`first` for 40 s")), qPrintable(message));
        QVERIFY2(message.contains(QStringLiteral("`second` for 20 s")), qPrintable(message));
    }
    // The second request never reached a provider: both were cooling down.
    QCOMPARE(m_first->requests().size() + m_second->requests().size(), 2);
}

void GatewayResilienceTest::timeoutFailsOverWithAStretchedTimeout_data()
{
    QTest::addColumn<bool>("stream");
    QTest::newRow("plain") << false;
    QTest::newRow("streamed") << true;
}

void GatewayResilienceTest::timeoutFailsOverWithAStretchedTimeout()
{
    QFETCH(bool, stream);
    m_first->mode = Mode::Hang;
    m_engine = startEngine(lightTierOfTwo(*m_first, *m_second));
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), stream));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(stream ? isCleanStream(client) : isCompletion(client.body()));
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("second"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("2"));
    QCOMPARE(client.header("x-switchyard-route"), QByteArray("everything-light"));
    QCOMPARE(client.header("x-switchyard-tier"), QByteArray("light"));
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("first")).errors, quint64(1));
}

void GatewayResilienceTest::timeoutOfEveryEndpointNamesTheStretchedLimit()
{
    m_first->mode = Mode::Hang;
    m_second->mode = Mode::Hang;
    m_engine = startEngine(lightTierOfTwo(*m_first, *m_second));
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), true));

    // The tier's 200 ms, then 200 ms x 1.5 for the retry within the same tier.
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 504);
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("2"));
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("second"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("upstream_timeout"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Provider `second` timed out: no first token within 300 ms."));
    const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace);
    QCOMPARE(trace->span(QStringLiteral("no retry"))->detail,
             QStringLiteral("no other endpoint is left to try"));
}

void GatewayResilienceTest::spentTimeBudgetIsA504_data()
{
    QTest::addColumn<bool>("stream");
    QTest::newRow("plain") << false;
    QTest::newRow("streamed") << true;
}

void GatewayResilienceTest::spentTimeBudgetIsA504()
{
    QFETCH(bool, stream);
    m_first->mode = Mode::Hang;
    m_second->mode = Mode::Hang;
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    config.timeouts.firstToken = 5s;
    config.timeouts.total = 5s;
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), stream),
                {{"x-switchyard-timeout-budget-ms", "150"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 504);
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("1"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(), QStringLiteral("upstream_error"));
    QCOMPARE(error.value(QStringLiteral("code")).toString(),
             QStringLiteral("timeout_budget_exhausted"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("The request's time budget of 150 ms (x-switchyard-timeout-budget-ms) "
                            "ran out after 1 attempt(s); the last: Provider `first` had not "
                            "answered when the request's time budget ran out."));
    QCOMPARE(m_second->requests().size(), 0);
    // The client's impatience is not the provider's failure.
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("first")).errors, quint64(0));
}

void GatewayResilienceTest::timeBudgetEndsAStreamWithAnErrorEvent()
{
    m_first->manualStreaming = true; // the first event, then nothing
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    config.timeouts.idle = 5s;
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), true),
                {{"x-switchyard-timeout-budget-ms", "300"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(!client.framingError());
    QCOMPARE(client.events().size(), 2);
    QVERIFY(errorOf(client.events().at(0).data).isEmpty());
    const QJsonObject error = errorOf(client.events().at(1).data);
    QCOMPARE(error.value(QStringLiteral("code")).toString(),
             QStringLiteral("timeout_budget_exhausted"));
    QVERIFY(!client.events().constLast().isDone());
    QCOMPARE(m_second->requests().size(), 0);
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("first")).errors, quint64(0));
}

void GatewayResilienceTest::streamCutAfterTheFirstByteIsNeverSwitched()
{
    m_first->mode = Mode::CutStream;
    m_first->cutAfterEvents = 2;
    m_engine = startEngine(poolOfTwo(m_first->baseUrl(), *m_second));
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), true));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(!client.framingError());
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("first"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("1"));
    QCOMPARE(client.events().size(), 3);
    QCOMPARE(errorOf(client.events().at(2).data).value(QStringLiteral("code")).toString(),
             QStringLiteral("upstream_stream_interrupted"));
    for (const upstream::SseEvent &event : client.events())
        QVERIFY(!event.isDone());
    QCOMPARE(m_second->requests().size(), 0);
}

void GatewayResilienceTest::retryBudgetWithoutAFloorKeepsALoneRequestFromRetrying()
{
    m_first->mode = Mode::Status;
    m_first->status = 500;
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    // 20 % of one request in flight is no retry at all once the floor is gone.
    config.resilience.retries.minRetriesInFlight = 0;
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 502);
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("1"));
    QCOMPARE(m_second->requests().size(), 0);
    QCOMPARE(retriesGrantedBy(*m_engine), 0);
    const auto trace = m_engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace);
    QCOMPARE(trace->span(QStringLiteral("no retry"))->detail,
             QStringLiteral("the retry budget is spent: 0 retries in flight, 0 allowed"));
}

void GatewayResilienceTest::failoverTakesOnlyItsShareOfTheBackup()
{
    m_first->mode = Mode::Status;
    m_first->status = 500;
    m_second->manualStreaming = true; // holds each stream open after its first event
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    config.providers[1].capacity = 2; // half of it: one failed-over call at a time
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient held(m_engine->port());
    held.post("/v1/chat/completions", chatBody(kModel.toUtf8(), true));
    QTRY_COMPARE_WITH_TIMEOUT(held.events().size(), 1, 5000);

    TestClient refused(m_engine->port());
    refused.post("/v1/chat/completions", chatBody(kModel.toUtf8(), true));

    QVERIFY(refused.waitForFinished());
    QCOMPARE(refused.status(), 502);
    QCOMPARE(refused.header("x-switchyard-attempts"), QByteArray("1"));
    QCOMPARE(m_second->requests().size(), 1);
    const auto trace = m_engine->traces().find(refused.header("x-switchyard-request-id"));
    QVERIFY(trace);
    QCOMPARE(trace->span(QStringLiteral("skipped endpoint"))->detail,
             QStringLiteral("second: failover capacity full"));

    for (int i = 0; i < 4; ++i)
        m_second->releaseEvent();
    QVERIFY(held.waitForFinished());
    QVERIFY(isCleanStream(held));
}

void GatewayResilienceTest::degradedTierShedsItsShare_data()
{
    QTest::addColumn<double>("admitShare");
    QTest::addColumn<int>("status");
    QTest::newRow("nothing admitted to the fallback") << 0.0 << 503;
    QTest::newRow("everything admitted to the fallback") << 1.0 << 200;
}

void GatewayResilienceTest::degradedTierShedsItsShare()
{
    QFETCH(double, admitShare);
    QFETCH(int, status);
    // Light is `first` alone; pro, its failover, is `second`.
    config::Config config = lightTierOfTwo(*m_first, *m_second);
    config.routing.tiers[0].pool = {QStringLiteral("first")};
    config.routing.tiers[1].pool = {QStringLiteral("second")};
    config.resilience.admission.degradedAdmitShare = admitShare;
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    m_engine->health().applyAction(m_engine->health().indexOf(QStringLiteral("first")),
                                   ProviderAction::Trip);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    QCOMPARE(client.header("x-switchyard-tier"), QByteArray("light"));
    QCOMPARE(m_first->requests().size(), 0);
    if (status == 200) {
        QCOMPARE(client.header("x-switchyard-provider"), QByteArray("second"));
        QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("1"));
        return;
    }
    QCOMPARE(client.header("retry-after"), QByteArray("1"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("0"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("tier_degraded"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Every endpoint of tier `light` is unavailable and its fallbacks take "
                            "only part of its traffic; this request was not admitted. Retry "
                            "shortly."));
    QCOMPARE(m_second->requests().size(), 0);
}

void GatewayResilienceTest::globalGateRefusesBeyondMaxInFlight()
{
    m_first->mode = Mode::Hang;
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    config.resilience.admission.maxInFlight = 1;
    config.timeouts.firstToken = 30s; // the first request stays in flight until it is dropped
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient hanging(m_engine->port());
    hanging.post("/v1/chat/completions", chatBody(kModel.toUtf8(), true));
    QTRY_COMPARE_WITH_TIMEOUT(m_first->requests().size(), 1, 5000);

    TestClient refused(m_engine->port());
    refused.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));

    QVERIFY(refused.waitForFinished());
    QCOMPARE(refused.status(), 503);
    QCOMPARE(refused.header("retry-after"), QByteArray("1"));
    QVERIFY(!refused.header("x-switchyard-request-id").isEmpty());
    const QJsonObject error = errorOf(refused.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(), QStringLiteral("server_error"));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("gateway_overloaded"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Switchyard already has 1 request(s) in flight, its limit "
                            "(`admission.max_in_flight`); retry shortly."));
    QCOMPARE(m_first->requests().size(), 1);
    hanging.disconnectNow();
}

void GatewayResilienceTest::runningOutOfDescriptorsIsTheGatewaysOverload()
{
    m_engine = startEngine(poolOfTwo(m_first->baseUrl(), *m_second));
    QVERIFY(m_engine);
    // Connected, and kept alive, before descriptors run out; no provider connection opened yet.
    TestClient client(m_engine->port());
    client.send("GET", "/v1/models");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);

    {
        const DescriptorsTaken taken;
        QVERIFY(taken.full());
        client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));
        QVERIFY(client.waitForFinished());
    }
    QCOMPARE(client.status(), 503);
    QCOMPARE(client.header("retry-after"), QByteArray("1"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("1"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("gateway_overloaded"));
    const QString message = error.value(QStringLiteral("message")).toString();
    QVERIFY2(message.startsWith(QStringLiteral("Switchyard is overloaded: it could not open a "
                                               "connection to provider `first`")),
             qPrintable(message));
    // Neither provider is blamed, and `second` was not tried: it would need a socket too.
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("first")).errors, quint64(0));
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("first")).consecutiveFailures, 0);
    QCOMPARE(m_first->requests().size(), 0);
    QCOMPARE(m_second->requests().size(), 0);

    // Descriptors free again: the same connection's next request is served by `first`.
    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("first"));
}

void GatewayResilienceTest::aTimeoutWhileTheEngineCatchesUpIsTheGatewaysFault()
{
    // Both providers hang: a first-token timeout is all that can end the request.
    m_first->mode = Mode::Hang;
    m_second->mode = Mode::Hang;
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    config.timeouts.firstToken = 2s;
    config.timeouts.total = 10s; // the first-token limit, not the request's budget, ends it
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));
    QTRY_COMPARE_WITH_TIMEOUT(m_first->requests().size() + m_second->requests().size(), 1, 5000);
    // The engine runs on this thread: blocked for a second early in the wait, as by a burst it
    // is busy accepting, then on time again. When the first-token limit runs out, the lag
    // monitor's last ticks were on time: the wait's own backlog still decides.
    QThread::msleep(1000);
    QVERIFY(client.waitForFinished());

    QCOMPARE(client.status(), 503);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("gateway_overloaded"));
    QVERIFY2(error.value(QStringLiteral("message"))
                 .toString()
                 .startsWith(QStringLiteral("Switchyard is overloaded: its engine ran")),
             qPrintable(error.value(QStringLiteral("message")).toString()));
    // Not retried on the other provider, and held against neither.
    QCOMPARE(m_first->requests().size() + m_second->requests().size(), 1);
    for (const QString &id : {QStringLiteral("first"), QStringLiteral("second")}) {
        QCOMPARE(providerHealth(*m_engine, id).errors, quint64(0));
        QCOMPARE(providerHealth(*m_engine, id).consecutiveFailures, 0);
    }
}

void GatewayResilienceTest::tenantOverItsRateIsRefused()
{
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    config.resilience.admission.tenants.insert(QStringLiteral("acme"), config::TenantLimit{1, 0});
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    const Headers acme{{"x-switchyard-tenant", "acme"}};
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false), acme);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false), acme);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 429);
    QCOMPARE(client.header("retry-after"), QByteArray("60"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(), QStringLiteral("rate_limit_error"));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("tenant_rate_limited"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Tenant `acme` is over its limit of 1 requests per minute; retry in "
                            "60 s."));
    QCOMPARE(m_first->requests().size(), 1);

    // Another tenant is not limited by acme's bucket.
    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false),
                {{"x-switchyard-tenant", "other"}});
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
}

void GatewayResilienceTest::loopGuardRefusesDeepRequests()
{
    m_engine = startEngine(poolOfTwo(m_first->baseUrl(), *m_second));
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false),
                {{"x-switchyard-depth", "6"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 508);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("loop_detected"));
    QCOMPARE(error.value(QStringLiteral("param")).toString(), QStringLiteral("x-switchyard-depth"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("The request has already passed through 6 Switchyard hop(s) "
                            "(x-switchyard-depth: 6), more than `admission.max_depth` (5) "
                            "allows; it is probably looping between gateways."));
    QCOMPARE(m_first->requests().size(), 0);
}

void GatewayResilienceTest::depthIsForwardedOneHopDeeper_data()
{
    QTest::addColumn<Headers>("headers");
    QTest::addColumn<QByteArray>("forwarded");
    QTest::newRow("first hop") << Headers() << QByteArray("1");
    QTest::newRow("deepest allowed") << Headers{{"x-switchyard-depth", "5"}} << QByteArray("6");
}

void GatewayResilienceTest::depthIsForwardedOneHopDeeper()
{
    QFETCH(Headers, headers);
    QFETCH(QByteArray, forwarded);
    m_engine = startEngine(poolOfTwo(m_first->baseUrl(), *m_second));
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false), headers);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(m_first->requests().size(), 1);
    QCOMPARE(m_first->requests().constFirst().header("x-switchyard-depth"), forwarded);
}

void GatewayResilienceTest::degradationLadderAnswers_data()
{
    QTest::addColumn<bool>("stream");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<Headers>("headers");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("degraded");
    QTest::addColumn<QString>("reply");

    QTest::newRow("level 2: a canned answer")
        << false << QByteArray("where is my order?") << Headers() << 200 << QByteArray("2")
        << QStringLiteral("Orders ship within a day.");
    QTest::newRow("level 2, streamed")
        << true << QByteArray("where is my order?") << Headers() << 200 << QByteArray("2")
        << QStringLiteral("Orders ship within a day.");
    QTest::newRow("level 3: the fail-safe message")
        << false << QByteArray("hello") << Headers() << 200 << QByteArray("3")
        << QStringLiteral("We are busy; please try again in a minute.");
    QTest::newRow("level 3, streamed")
        << true << QByteArray("hello") << Headers() << 200 << QByteArray("3")
        << QStringLiteral("We are busy; please try again in a minute.");
    QTest::newRow("fallback level 2 stops before the fail-safe")
        << false << QByteArray("hello") << Headers{{"x-switchyard-fallback-level", "2"}} << 502
        << QByteArray("0") << QString();
    QTest::newRow("fallback level 1 keeps the real error")
        << false << QByteArray("where is my order?")
        << Headers{{"x-switchyard-fallback-level", "1"}} << 502 << QByteArray("0") << QString();
}

void GatewayResilienceTest::degradationLadderAnswers()
{
    QFETCH(bool, stream);
    QFETCH(QByteArray, content);
    QFETCH(Headers, headers);
    QFETCH(int, status);
    QFETCH(QByteArray, degraded);
    QFETCH(QString, reply);
    m_first->mode = Mode::Status;
    m_first->status = 500;
    m_second->mode = Mode::Status;
    m_second->status = 500;
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    config.resilience.degradation.canned = {
        config::CannedAnswer{QStringLiteral("test-*"),
                             {QStringLiteral("order")},
                             QStringLiteral("Orders ship within a day.")}};
    config.resilience.degradation.failSafe =
        QStringLiteral("We are busy; please try again in a minute.");
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), stream, content), headers);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    QCOMPARE(client.header("x-switchyard-degraded"), degraded);
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("2"));
    if (status != 200) {
        QCOMPARE(errorOf(client.body()).value(QStringLiteral("message")).toString(),
                 QStringLiteral("Provider `second` failed with HTTP 500: boom"));
        return;
    }
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("none"));
    const QString expectedReason = QStringLiteral("Provider `second` failed with HTTP 500: boom");
    if (stream) {
        QVERIFY(isCleanStream(client));
        QCOMPARE(client.events().size(), 3);
        const QJsonObject first = QJsonDocument::fromJson(client.events().at(0).data).object();
        QCOMPARE(first.value(QStringLiteral("choices"))
                     .toArray()
                     .at(0)
                     .toObject()
                     .value(QStringLiteral("delta"))
                     .toObject()
                     .value(QStringLiteral("content"))
                     .toString(),
                 reply);
        const QJsonObject note = QJsonDocument::fromJson(client.events().at(1).data)
                                     .object()
                                     .value(QStringLiteral("switchyard_degraded"))
                                     .toObject();
        QCOMPARE(note.value(QStringLiteral("level")).toInt(), degraded.toInt());
        QCOMPARE(note.value(QStringLiteral("reason")).toString(), expectedReason);
        return;
    }
    QVERIFY(isCompletion(client.body()));
    const QJsonObject body = QJsonDocument::fromJson(client.body()).object();
    QCOMPARE(body.value(QStringLiteral("model")).toString(), kModel);
    QCOMPARE(body.value(QStringLiteral("choices"))
                 .toArray()
                 .at(0)
                 .toObject()
                 .value(QStringLiteral("message"))
                 .toObject()
                 .value(QStringLiteral("content"))
                 .toString(),
             reply);
    const QJsonObject note = body.value(QStringLiteral("switchyard_degraded")).toObject();
    QCOMPARE(note.value(QStringLiteral("level")).toInt(), degraded.toInt());
    QCOMPARE(note.value(QStringLiteral("reason")).toString(), expectedReason);
}

void GatewayResilienceTest::degradationNeverHidesARequestFault()
{
    m_first->mode = Mode::Status;
    m_first->status = 422;
    config::Config config = poolOfTwo(m_first->baseUrl(), *m_second);
    config.resilience.degradation.failSafe = QStringLiteral("We are busy.");
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody(kModel.toUtf8(), false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 422);
    QCOMPARE(client.header("x-switchyard-degraded"), QByteArray("0"));
    QCOMPARE(m_second->requests().size(), 0);
}

QTEST_GUILESS_MAIN(GatewayResilienceTest)
#include "tst_gateway_resilience.moc"
