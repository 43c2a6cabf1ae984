// GET /metrics after real traffic: successes, a stream, failovers, a breaker opening, requests
// refused at the door and answers that failed. The scrape says what happened in the series a
// dashboard would query, and promtool, Prometheus's own checker, finds nothing to complain about.

#include "engine/engine.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QDeadlineTimer>
#include <QLoggingCategory>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>
#include <QThread>

using namespace switchyard;
using namespace switchyard::testing;
using namespace std::chrono_literals;

namespace {

using Mode = FakeUpstream::Mode;
const QByteArray kModel = "test-model";

// Every sample line as "name{labels}" -> value.
QHash<QByteArray, double> samplesOf(const QByteArray &text)
{
    QHash<QByteArray, double> samples;
    for (const QByteArray &line : text.split('\n')) {
        if (line.isEmpty() || line.startsWith('#'))
            continue;
        const qsizetype space = line.lastIndexOf(' ');
        samples.insert(line.left(space), line.mid(space + 1).toDouble());
    }
    return samples;
}

// The sum of a family's samples whose labels contain every one of `labels`.
double sumOf(const QHash<QByteArray, double> &samples, const QByteArray &name,
             const QList<QByteArray> &labels = {})
{
    double sum = 0;
    for (auto it = samples.cbegin(); it != samples.cend(); ++it) {
        if (!(it.key() == name || it.key().startsWith(name + '{')))
            continue;
        bool all = true;
        for (const QByteArray &label : labels)
            all = all && it.key().contains(label);
        if (all)
            sum += it.value();
    }
    return sum;
}

} // namespace

class GatewayMetricsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void scrapeIsPrometheusTextForLoopbackClients();
    void scrapeIsCleanUnderPromtool();
    void requestsAreCountedByConfiguredNamesAndStatusClass();
    void unconfiguredModelIsCountedAsUnknown();
    void failoversAndUpstreamErrorsNameTheFailedAttemptsClass();
    void breakerOpeningIsATransitionAndAState();
    void admissionRefusalIsCountedByItsCode();
    void streamHasTimeToFirstByteAndAddedLatency();
    void tokensAreCountedFromTheProvidersUsage();
    void genAiFamiliesFollowTheConventions();
    void loopLagShowsABlockedEngineThread();
    void wrongMethodIsRefused();

private:
    QByteArray scrape();
    int send(const QByteArray &body, const QList<QPair<QByteArray, QByteArray>> &headers = {});

    FakeUpstream m_first;
    FakeUpstream m_second;
    std::unique_ptr<Engine> m_engine;
    QByteArray m_text; // the scrape after all the traffic
    QHash<QByteArray, double> m_samples;
};

int GatewayMetricsTest::send(const QByteArray &body,
                             const QList<QPair<QByteArray, QByteArray>> &headers)
{
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", body, headers);
    if (!client.waitForFinished())
        return 0;
    return client.status();
}

QByteArray GatewayMetricsTest::scrape()
{
    TestClient client(m_engine->port());
    client.send("GET", "/metrics");
    if (!client.waitForFinished() || client.status() != 200)
        return {};
    return client.body();
}

void GatewayMetricsTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
    // `second` has weight 0: `first` is always tried first while its breaker lets it.
    config::ProviderConfig second =
        providerFor(QStringLiteral("second"), m_second, {QString::fromLatin1(kModel)});
    second.weight = 0;
    config::Config config = gatewayConfig(
        {providerFor(QStringLiteral("first"), m_first, {QString::fromLatin1(kModel)}), second});
    config.timeouts = shortTimeouts();
    config.resilience.retries.backoffBase = 0ms;
    config.resilience.retries.backoffJitter = 0ms;
    config.resilience.retries.backoffMax = 0ms;
    config.resilience.probes.enabled = false;
    config.resilience.breaker.consecutiveFailures = 2;
    config.routing.tiers = {
        config::TierConfig{
            QStringLiteral("light"), {QStringLiteral("first"), QStringLiteral("second")}, 5s, 2, 0},
        config::TierConfig{QStringLiteral("pro"), {}, 0ms, 1, 0}};
    config::RouteRule rule;
    rule.name = QStringLiteral("everything-light");
    rule.to.kind = config::RouteTarget::Kind::Tier;
    rule.to.names = {QStringLiteral("light")};
    config.routing.routes = {rule};
    m_engine = startEngine(config);
    QVERIFY(m_engine);

    m_first.completionBody = R"({"id":"chatcmpl-1","object":"chat.completion","model":"fake",)"
                             R"("choices":[{"index":0,"message":{"role":"assistant",)"
                             R"("content":"hi"},"finish_reason":"stop"}],)"
                             R"("usage":{"prompt_tokens":7,"completion_tokens":2,)"
                             R"("total_tokens":9,"prompt_tokens_details":{"cached_tokens":3}}})";
    QCOMPARE(send(chatBody(kModel, false)), 200);
    QCOMPARE(send(chatBody(kModel, true)), 200);
    // Two failures of `first` in a row, each answered by `second`, open first's breaker.
    m_first.scriptedModes = {Mode::Status, Mode::Status};
    QCOMPARE(send(chatBody(kModel, false)), 200);
    QCOMPARE(send(chatBody(kModel, false)), 200);
    // With `first` open, `second` failing leaves nothing to answer.
    m_second.mode = Mode::Status;
    QVERIFY(send(chatBody(kModel, false)) >= 500);
    m_second.mode = Mode::Answer;
    // The catch-all rule sends a model no provider declares to the tier as it is.
    QCOMPARE(send(chatBody("no-such-model", false)), 200);
    QCOMPARE(send("{not json"), 400);
    QCOMPARE(send(chatBody(kModel, false), {{"x-switchyard-depth", "6"}}), 508);

    m_text = scrape();
    QVERIFY(!m_text.isEmpty());
    m_samples = samplesOf(m_text);
}

void GatewayMetricsTest::cleanupTestCase()
{
    m_engine.reset();
}

void GatewayMetricsTest::scrapeIsPrometheusTextForLoopbackClients()
{
    TestClient client(m_engine->port());
    client.send("GET", "/metrics");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("content-type"), QByteArray("text/plain; version=0.0.4; charset=utf-8"));
    QVERIFY(client.body().startsWith("# HELP switchyard_requests_total "));
    // A scrape is not a request the gateway served.
    QCOMPARE(m_samples.value(R"(switchyard_requests_in_flight)"), 0.0);
}

void GatewayMetricsTest::scrapeIsCleanUnderPromtool()
{
    const QString promtool = QStandardPaths::findExecutable(QStringLiteral("promtool"));
    QVERIFY2(!promtool.isEmpty(),
             "promtool is missing: scripts/setup.sh installs it (Debian package prometheus)");
    QProcess check;
    check.start(promtool, {QStringLiteral("check"), QStringLiteral("metrics")});
    QVERIFY(check.waitForStarted());
    check.write(m_text);
    check.closeWriteChannel();
    QVERIFY(check.waitForFinished(60000));
    const QByteArray complaints = check.readAllStandardOutput() + check.readAllStandardError();
    QVERIFY2(complaints.isEmpty(), complaints.constData());
    QCOMPARE(check.exitStatus(), QProcess::NormalExit);
    QCOMPARE(check.exitCode(), 0);
}

void GatewayMetricsTest::requestsAreCountedByConfiguredNamesAndStatusClass()
{
    // Every client request once: /metrics itself is not counted.
    QCOMPARE(sumOf(m_samples, "switchyard_requests_total"), 8.0);
    QCOMPARE(m_samples.value(R"(switchyard_requests_total{provider="first",model="test-model",)"
                             R"(route="everything-light",tier="light",status_class="2xx"})"),
             2.0);
    QCOMPARE(m_samples.value(R"(switchyard_requests_total{provider="second",model="test-model",)"
                             R"(route="everything-light",tier="light",status_class="2xx"})"),
             2.0);
    // The failed request and the loop refused with 508.
    QCOMPARE(sumOf(m_samples, "switchyard_requests_total", {R"(status_class="5xx")"}), 2.0);
    // The bad body and the loop were refused before any routing; the loop's model was read.
    QCOMPARE(m_samples.value(R"(switchyard_requests_total{provider="none",model="none",)"
                             R"(route="none",tier="none",status_class="4xx"})"),
             1.0);
    QCOMPARE(m_samples.value(R"(switchyard_requests_total{provider="none",model="test-model",)"
                             R"(route="none",tier="none",status_class="5xx"})"),
             1.0);
    QCOMPARE(sumOf(m_samples, "switchyard_request_duration_seconds_count"), 8.0);
    QCOMPARE(m_samples.value(R"(switchyard_answers_total{degradation_level="0"})"), 5.0);
}

void GatewayMetricsTest::unconfiguredModelIsCountedAsUnknown()
{
    QVERIFY(!m_text.contains("no-such-model"));
    QCOMPARE(m_samples.value(R"(switchyard_requests_total{provider="second",model="unknown",)"
                             R"(route="everything-light",tier="light",status_class="2xx"})"),
             1.0);
}

void GatewayMetricsTest::failoversAndUpstreamErrorsNameTheFailedAttemptsClass()
{
    QCOMPARE(m_samples.value(R"(switchyard_failovers_total{reason="server_error"})"), 2.0);
    QCOMPARE(m_samples.value(R"(switchyard_upstream_errors_total{provider="first",)"
                             R"(error_class="server_error"})"),
             2.0);
    QVERIFY(m_samples.value(R"(switchyard_upstream_errors_total{provider="second",)"
                            R"(error_class="server_error"})") >= 1.0);
}

void GatewayMetricsTest::breakerOpeningIsATransitionAndAState()
{
    QCOMPARE(m_samples.value(R"(switchyard_breaker_transitions_total{provider="first",to="open",)"
                             R"(reason="consecutive_failures"})"),
             1.0);
    QCOMPARE(m_samples.value(R"(switchyard_breaker_state{provider="first",state="open"})"), 1.0);
    QCOMPARE(m_samples.value(R"(switchyard_breaker_state{provider="first",state="closed"})"), 0.0);
    QCOMPARE(sumOf(m_samples, "switchyard_breaker_state", {R"(provider="first")"}), 1.0);
}

void GatewayMetricsTest::admissionRefusalIsCountedByItsCode()
{
    QCOMPARE(m_samples.value(R"(switchyard_admission_refusals_total{reason="loop_detected"})"),
             1.0);
    QCOMPARE(m_samples.value(R"(switchyard_admission_refusals_total{reason="gateway_overloaded"})"),
             0.0);
}

void GatewayMetricsTest::streamHasTimeToFirstByteAndAddedLatency()
{
    QCOMPARE(m_samples.value(R"(switchyard_time_to_first_byte_seconds_count{)"
                             R"(route="everything-light",tier="light"})"),
             1.0);
    QCOMPARE(m_samples.value(R"(switchyard_added_latency_seconds_count{streamed="true"})"), 1.0);
    // The answered non-streamed requests: the first, two failovers and the unknown model's.
    QCOMPARE(m_samples.value(R"(switchyard_added_latency_seconds_count{streamed="false"})"), 4.0);
}

void GatewayMetricsTest::tokensAreCountedFromTheProvidersUsage()
{
    QCOMPARE(m_samples.value(R"(switchyard_tokens_total{provider="first",model="test-model",)"
                             R"(type="input"})"),
             7.0);
    QCOMPARE(m_samples.value(R"(switchyard_tokens_total{provider="first",model="test-model",)"
                             R"(type="output"})"),
             2.0);
    // OpenAI's cached_tokens are part of prompt_tokens: counted as a part, not added.
    QCOMPARE(m_samples.value(R"(switchyard_tokens_total{provider="first",model="test-model",)"
                             R"(type="cache_read"})"),
             3.0);
    QVERIFY(!m_samples.contains(R"(switchyard_tokens_total{provider="first",)"
                                R"(model="test-model",type="cache_write"})"));
}

void GatewayMetricsTest::genAiFamiliesFollowTheConventions()
{
    QCOMPARE(sumOf(m_samples, "gen_ai_server_request_duration_seconds_count"), 8.0);
    QCOMPARE(m_samples.value(R"(gen_ai_server_time_to_first_token_seconds_count{)"
                             R"(gen_ai_operation_name="chat",gen_ai_provider_name="first",)"
                             R"(gen_ai_request_model="test-model"})"),
             1.0);
    QCOMPARE(m_samples.value(R"(gen_ai_client_token_usage_bucket{gen_ai_operation_name="chat",)"
                             R"(gen_ai_provider_name="first",gen_ai_request_model="test-model",)"
                             R"(gen_ai_token_type="input",le="4"})"),
             0.0);
    QCOMPARE(m_samples.value(R"(gen_ai_client_token_usage_bucket{gen_ai_operation_name="chat",)"
                             R"(gen_ai_provider_name="first",gen_ai_request_model="test-model",)"
                             R"(gen_ai_token_type="input",le="16"})"),
             1.0);
    QCOMPARE(m_samples.value(R"(gen_ai_client_token_usage_bucket{gen_ai_operation_name="chat",)"
                             R"(gen_ai_provider_name="first",gen_ai_request_model="test-model",)"
                             R"(gen_ai_token_type="input",le="67108864"})"),
             1.0);
    QCOMPARE(sumOf(m_samples, "gen_ai_server_request_duration_seconds_count",
                   {R"(error_type="server_error")"}),
             1.0);
}

void GatewayMetricsTest::loopLagShowsABlockedEngineThread()
{
    // The engine runs on this thread: blocking it makes its 100 ms sampling timer run at least
    // 150 - 100 = 50 ms late, whatever the machine's speed.
    const auto lateTicks = [this] {
        const QHash<QByteArray, double> samples = samplesOf(scrape());
        return samples.value("switchyard_engine_loop_lag_seconds_count") -
               samples.value(R"(switchyard_engine_loop_lag_seconds_bucket{le="0.025"})");
    };
    const double before = lateTicks();
    QThread::msleep(150);
    // The console's snapshot holds the latest tick's lateness until the next tick, 100 ms on:
    // read it between every pass of the loop so the late one is seen.
    QDeadlineTimer deadline(5000);
    double seenLagMs = 0.0;
    while (seenLagMs < 50.0 && !deadline.hasExpired()) {
        QCoreApplication::processEvents();
        seenLagMs = std::max(seenLagMs, m_engine->snapshot().loopLagMs);
    }
    QVERIFY2(seenLagMs >= 50.0, qPrintable(QString::number(seenLagMs)));
    QVERIFY(lateTicks() >= before + 1);
}

void GatewayMetricsTest::wrongMethodIsRefused()
{
    TestClient client(m_engine->port());
    client.send("POST", "/metrics", "{}");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 405);
    QCOMPARE(client.header("allow"), QByteArray("GET"));
}

QTEST_GUILESS_MAIN(GatewayMetricsTest)
#include "tst_gateway_metrics.moc"
