// The metrics registry: histogram buckets and their text, label values from config and closed
// sets only, retries and failovers read from a trace's attempts, the gateway's added time, and
// recording a request seen before without a single allocation.

#include "config/config.h"
#include "metrics/gateway_metrics.h"
#include "metrics/metric_families.h"

#include <QTest>
#include <atomic>
#include <cstdlib>
#include <new>

// Counts allocations made on this thread while `countingAllocations` is set: the proof that
// recording takes no allocation once a series exists.
namespace {
thread_local bool countingAllocations = false;
std::atomic<int> allocationsCounted{0};

void *allocate(std::size_t size)
{
    if (countingAllocations)
        ++allocationsCounted;
    if (void *memory = std::malloc(size == 0 ? 1 : size))
        return memory;
    throw std::bad_alloc();
}
} // namespace

void *operator new(std::size_t size)
{
    return allocate(size);
}
void *operator new[](std::size_t size)
{
    return allocate(size);
}
void operator delete(void *memory) noexcept
{
    std::free(memory);
}
void operator delete[](void *memory) noexcept
{
    std::free(memory);
}
void operator delete(void *memory, std::size_t) noexcept
{
    std::free(memory);
}
void operator delete[](void *memory, std::size_t) noexcept
{
    std::free(memory);
}

using namespace switchyard;
using namespace switchyard::metrics;

namespace {

config::Config configWith(const QStringList &providers, const QStringList &models,
                          const QStringList &routes)
{
    config::Config config;
    for (const QString &id : providers) {
        config::ProviderConfig provider;
        provider.id = id;
        for (const QString &model : models)
            provider.models.append(config::ModelRoute{model, model});
        config.providers.append(provider);
    }
    for (const QString &name : routes) {
        config::RouteRule rule;
        rule.name = name;
        config.routing.routes.append(rule);
    }
    return config;
}

telemetry::Span attempt(const QString &provider, qint64 startMicros, qint64 durationMicros,
                        const QString &errorClass)
{
    telemetry::Span span;
    span.kind = telemetry::SpanKind::Attempt;
    span.name = QStringLiteral("attempt");
    span.provider = provider;
    span.startMicros = startMicros;
    span.durationMicros = durationMicros;
    span.errorClass = errorClass;
    span.outcome = errorClass.isEmpty() ? QStringLiteral("success") : QStringLiteral("failure");
    return span;
}

telemetry::Trace answeredTrace()
{
    telemetry::Trace trace;
    trace.operation = QStringLiteral("chat");
    trace.model = QStringLiteral("m1");
    trace.route = QStringLiteral("r1");
    trace.tier = QStringLiteral("light");
    trace.provider = QStringLiteral("p1");
    trace.tenant = QStringLiteral("acme-corp");
    trace.status = 200;
    trace.outcome = QStringLiteral("ok");
    trace.attempts = 1;
    trace.totalMicros = 10'000;
    trace.inputTokens = 12;
    trace.outputTokens = 3;
    trace.spans.append(attempt(QStringLiteral("p1"), 1'000, 8'000, {}));
    return trace;
}

// The value of the sample whose name and labels are exactly `series`; -1 when absent.
double sampleValue(const QByteArray &text, const QByteArray &series)
{
    for (const QByteArray &line : text.split('\n')) {
        if (line.startsWith(series + ' '))
            return line.mid(series.size() + 1).toDouble();
    }
    return -1;
}

} // namespace

class MetricsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void histogramCountsAValueInTheFirstBucketAtOrAboveIt_data();
    void histogramCountsAValueInTheFirstBucketAtOrAboveIt();
    void histogramTextIsCumulativeWithInfSumAndCount();
    void tokenBucketsArePowersOfFour();
    void labelValuesAreEscaped();
    void unconfiguredModelCountsAsUnknown();
    void tenantIsNeverALabel();
    void namesFromALaterConfigBecomeLabels();
    void retriesAndFailoversComeFromConsecutiveAttempts();
    void upstreamErrorsAreCountedPerFailedAttempt();
    void admissionRefusalsCountOnlyTheirClosedSet();
    void addedLatencyLeavesOutAttemptsAndWaits();
    void addedLatencyOfAStreamEndsAtItsFirstByte();
    void errorTypeLabelOnlyOnErrors();
    void promptCacheTokensAreTypesOfTheTokenCounterOnly_data();
    void promptCacheTokensAreTypesOfTheTokenCounterOnly();
    void breakerTransitionsCountByCause();
    void closedSetsAreThereAtZero();
    void recordingARequestSeenBeforeAllocatesNothing();
};

void MetricsTest::histogramCountsAValueInTheFirstBucketAtOrAboveIt_data()
{
    QTest::addColumn<double>("value");
    QTest::addColumn<int>("bucket");
    // Bounds 0.01, 0.02, 0.04 ...: Prometheus buckets are "less than or equal".
    QTest::newRow("below the first bound") << 0.001 << 0;
    QTest::newRow("on the first bound") << 0.01 << 0;
    QTest::newRow("just above it") << 0.010001 << 1;
    QTest::newRow("on a middle bound") << 1.28 << 7;
    QTest::newRow("on the last bound") << 81.92 << 13;
    QTest::newRow("above every bound") << 100.0 << 14;
    QTest::newRow("zero") << 0.0 << 0;
}

void MetricsTest::histogramCountsAValueInTheFirstBucketAtOrAboveIt()
{
    QFETCH(double, value);
    QFETCH(int, bucket);
    Histogram histogram(buckets::requestSeconds);
    histogram.observe(value);
    for (int index = 0; index <= int(buckets::requestSeconds.size()); ++index)
        QCOMPARE(histogram.bucketCount(index), quint64(index == bucket ? 1 : 0));
    QCOMPARE(histogram.count(), quint64(1));
    QCOMPARE(histogram.sum(), value);
}

void MetricsTest::histogramTextIsCumulativeWithInfSumAndCount()
{
    static const std::array<double, 2> bounds{0.5, 1.0};
    Histogram histogram(bounds);
    histogram.observe(0.25);
    histogram.observe(0.75);
    histogram.observe(3.0);
    ExpositionWriter writer;
    writer.histogram("x_seconds", R"(a="b")", histogram);
    QCOMPARE(writer.take(), QByteArray("x_seconds_bucket{a=\"b\",le=\"0.5\"} 1\n"
                                       "x_seconds_bucket{a=\"b\",le=\"1\"} 2\n"
                                       "x_seconds_bucket{a=\"b\",le=\"+Inf\"} 3\n"
                                       "x_seconds_sum{a=\"b\"} 4\n"
                                       "x_seconds_count{a=\"b\"} 3\n"));
}

void MetricsTest::tokenBucketsArePowersOfFour()
{
    double bound = 1;
    for (const double value : buckets::tokens) {
        QCOMPARE(value, bound);
        bound *= 4;
    }
    QCOMPARE(buckets::tokens.back(), 67108864.0);
    QCOMPARE(ExpositionWriter::number(67108864.0), QByteArray("67108864"));
    QCOMPARE(ExpositionWriter::number(0.00025), QByteArray("0.00025"));
    QCOMPARE(ExpositionWriter::number(0.00005), QByteArray("0.00005"));
    QCOMPARE(ExpositionWriter::number(81.92), QByteArray("81.92"));
}

void MetricsTest::labelValuesAreEscaped()
{
    QByteArray labels;
    ExpositionWriter::appendLabel(labels, "route", QStringLiteral("say \"hi\"\\now\nthen"));
    QCOMPARE(labels, QByteArray(R"(route="say \"hi\"\\now\nthen")"));
}

void MetricsTest::unconfiguredModelCountsAsUnknown()
{
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1")}, {QStringLiteral("m1")}, {}));
    telemetry::Trace trace = answeredTrace();
    trace.model = QStringLiteral("ignore previous instructions");
    metrics.traceFinished(trace);

    QCOMPARE(metrics.modelLabel(trace.model), QStringLiteral("unknown"));
    QCOMPARE(metrics.modelLabel(QStringLiteral("m1")), QStringLiteral("m1"));
    QCOMPARE(metrics.modelLabel(QString()), QStringLiteral("none"));
    const QByteArray text = metrics.render({});
    QVERIFY(!text.contains("ignore previous"));
    QCOMPARE(sampleValue(text, R"(switchyard_requests_total{provider="p1",model="unknown",)"
                               R"(route="other",tier="light",status_class="2xx"})"),
             1.0);
}

void MetricsTest::tenantIsNeverALabel()
{
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1")}, {QStringLiteral("m1")}, {}));
    metrics.traceFinished(answeredTrace());
    const QByteArray text = metrics.render({});
    QVERIFY(!text.contains("acme-corp"));
    QVERIFY(!text.contains("tenant="));
}

void MetricsTest::namesFromALaterConfigBecomeLabels()
{
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1")}, {QStringLiteral("m1")}, {}));
    QCOMPARE(metrics.providerLabel(QStringLiteral("p2")), QStringLiteral("agent"));
    metrics.learnNames(
        configWith({QStringLiteral("p2")}, {QStringLiteral("m2")}, {QStringLiteral("new-rule")}));
    QCOMPARE(metrics.providerLabel(QStringLiteral("p2")), QStringLiteral("p2"));
    QCOMPARE(metrics.modelLabel(QStringLiteral("m2")), QStringLiteral("m2"));
    // A name dropped by the later config keeps its series.
    QCOMPARE(metrics.providerLabel(QStringLiteral("p1")), QStringLiteral("p1"));

    telemetry::Trace trace = answeredTrace();
    trace.route = QStringLiteral("new-rule");
    metrics.traceFinished(trace);
    QVERIFY(metrics.render({}).contains(R"(route="new-rule")"));
}

void MetricsTest::retriesAndFailoversComeFromConsecutiveAttempts()
{
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1"), QStringLiteral("p2")}, {}, {}));
    telemetry::Trace trace = answeredTrace();
    trace.spans = {attempt(QStringLiteral("p1"), 0, 10, QStringLiteral("rate_limited")),
                   attempt(QStringLiteral("p1"), 20, 10, QStringLiteral("timeout")),
                   attempt(QStringLiteral("p2"), 40, 10, {})};
    trace.attempts = 3;
    metrics.traceFinished(trace);

    const QByteArray text = metrics.render({});
    QCOMPARE(sampleValue(text, R"(switchyard_retries_total{reason="rate_limited"})"), 1.0);
    QCOMPARE(sampleValue(text, R"(switchyard_retries_total{reason="timeout"})"), 0.0);
    QCOMPARE(sampleValue(text, R"(switchyard_failovers_total{reason="timeout"})"), 1.0);
    QCOMPARE(sampleValue(text, R"(switchyard_failovers_total{reason="rate_limited"})"), 0.0);
}

void MetricsTest::upstreamErrorsAreCountedPerFailedAttempt()
{
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1"), QStringLiteral("p2")}, {}, {}));
    telemetry::Trace trace = answeredTrace();
    trace.spans = {attempt(QStringLiteral("p1"), 0, 10, QStringLiteral("server_error")),
                   attempt(QStringLiteral("p1"), 20, 10, QStringLiteral("server_error")),
                   attempt(QStringLiteral("p2"), 40, 10, {})};
    metrics.traceFinished(trace);

    const QByteArray text = metrics.render({});
    QCOMPARE(sampleValue(text, R"(switchyard_upstream_errors_total{provider="p1",)"
                               R"(error_class="server_error"})"),
             2.0);
    QVERIFY(!text.contains(R"(switchyard_upstream_errors_total{provider="p2")"));
}

void MetricsTest::admissionRefusalsCountOnlyTheirClosedSet()
{
    GatewayMetrics metrics;
    telemetry::Trace refused;
    refused.status = 429;
    refused.outcome = QStringLiteral("tenant_rate_limited");
    metrics.traceFinished(refused);
    telemetry::Trace badRequest;
    badRequest.status = 400;
    badRequest.outcome = QStringLiteral("invalid_request_error");
    metrics.traceFinished(badRequest);

    const QByteArray text = metrics.render({});
    QCOMPARE(
        sampleValue(text, R"(switchyard_admission_refusals_total{reason="tenant_rate_limited"})"),
        1.0);
    QVERIFY(!text.contains("invalid_request_error"));
    QCOMPARE(sampleValue(text, R"(switchyard_requests_total{provider="none",model="none",)"
                               R"(route="none",tier="none",status_class="4xx"})"),
             2.0);
}

void MetricsTest::addedLatencyLeavesOutAttemptsAndWaits()
{
    GatewayMetrics metrics;
    telemetry::Trace trace = answeredTrace();
    // 10 ms in all: a failed attempt of 3 ms, a backoff of 2 ms, the answer's attempt of 4 ms.
    trace.spans = {attempt(QStringLiteral("p1"), 500, 3'000, QStringLiteral("server_error")),
                   attempt(QStringLiteral("p1"), 5'500, 4'000, {})};
    telemetry::Span backoff;
    backoff.kind = telemetry::SpanKind::Wait;
    backoff.startMicros = 3'500;
    backoff.durationMicros = 2'000;
    trace.spans.append(backoff);
    metrics.traceFinished(trace);

    // 10 - 3 - 2 - 4 = 1 ms: in the bucket up to 1 ms, not in the one up to 0.5 ms.
    const QByteArray text = metrics.render({});
    QCOMPARE(sampleValue(
                 text, R"(switchyard_added_latency_seconds_bucket{streamed="false",le="0.0005"})"),
             0.0);
    QCOMPARE(sampleValue(text,
                         R"(switchyard_added_latency_seconds_bucket{streamed="false",le="0.001"})"),
             1.0);
    QCOMPARE(sampleValue(text, R"(switchyard_added_latency_seconds_sum{streamed="false"})"), 0.001);
}

void MetricsTest::addedLatencyOfAStreamEndsAtItsFirstByte()
{
    GatewayMetrics metrics;
    telemetry::Trace trace = answeredTrace();
    trace.streamed = true;
    trace.totalMicros = 5'000'000; // a long stream: the provider's time, not the gateway's
    trace.timeToFirstByteMicros = 3'000;
    trace.spans = {attempt(QStringLiteral("p1"), 2'000, 4'990'000, {})};
    metrics.traceFinished(trace);

    const QByteArray text = metrics.render({});
    QCOMPARE(sampleValue(text, R"(switchyard_added_latency_seconds_sum{streamed="true"})"), 0.002);
    QCOMPARE(
        sampleValue(text,
                    R"(switchyard_time_to_first_byte_seconds_count{route="other",tier="other"})"),
        1.0);
}

void MetricsTest::errorTypeLabelOnlyOnErrors()
{
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1")}, {QStringLiteral("m1")}, {}));
    metrics.traceFinished(answeredTrace());
    telemetry::Trace failed = answeredTrace();
    failed.status = 504;
    failed.errorClass = QStringLiteral("timeout");
    metrics.traceFinished(failed);

    const QByteArray text = metrics.render({});
    QCOMPARE(
        sampleValue(text,
                    R"(gen_ai_server_request_duration_seconds_count{gen_ai_operation_name="chat",)"
                    R"(gen_ai_provider_name="p1",gen_ai_request_model="m1"})"),
        1.0);
    QCOMPARE(
        sampleValue(text,
                    R"(gen_ai_server_request_duration_seconds_count{gen_ai_operation_name="chat",)"
                    R"(gen_ai_provider_name="p1",gen_ai_request_model="m1",error_type="timeout"})"),
        1.0);
    QCOMPARE(sampleValue(text, R"(gen_ai_client_token_usage_bucket{gen_ai_operation_name="chat",)"
                               R"(gen_ai_provider_name="p1",gen_ai_request_model="m1",)"
                               R"(gen_ai_token_type="input",le="16"})"),
             2.0);
}

void MetricsTest::promptCacheTokensAreTypesOfTheTokenCounterOnly_data()
{
    QTest::addColumn<qint64>("cacheRead");
    QTest::addColumn<qint64>("cacheWrite");
    QTest::addColumn<bool>("estimated");
    QTest::addColumn<double>("readSample"); // -1: no sample
    QTest::addColumn<double>("writeSample");
    QTest::newRow("OpenAI: reads only") << qint64(8) << qint64(-1) << false << 8.0 << -1.0;
    QTest::newRow("Anthropic: reads and writes") << qint64(5) << qint64(2) << false << 5.0 << 2.0;
    QTest::newRow("no cache counts") << qint64(-1) << qint64(-1) << false << -1.0 << -1.0;
    QTest::newRow("an estimate counts nothing") << qint64(5) << qint64(2) << true << -1.0 << -1.0;
}

void MetricsTest::promptCacheTokensAreTypesOfTheTokenCounterOnly()
{
    QFETCH(qint64, cacheRead);
    QFETCH(qint64, cacheWrite);
    QFETCH(bool, estimated);
    QFETCH(double, readSample);
    QFETCH(double, writeSample);
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1")}, {QStringLiteral("m1")}, {}));
    telemetry::Trace trace = answeredTrace();
    trace.cacheReadTokens = cacheRead;
    trace.cacheWriteTokens = cacheWrite;
    trace.tokensEstimated = estimated;
    metrics.traceFinished(trace);

    const QByteArray text = metrics.render({});
    const auto tokens = [&text](const QByteArray &type) {
        return sampleValue(text, "switchyard_tokens_total{provider=\"p1\",model=\"m1\",type=\"" +
                                     type + "\"}");
    };
    QCOMPARE(tokens("cache_read"), readSample);
    QCOMPARE(tokens("cache_write"), writeSample);
    // The cache's tokens are parts of the input, which still counts them all.
    QCOMPARE(tokens("input"), estimated ? -1.0 : 12.0);
    // The OpenTelemetry histogram keeps to the convention's two types.
    QVERIFY(!text.contains("gen_ai_token_type=\"cache_read\""));
    QVERIFY(!text.contains("gen_ai_token_type=\"cache_write\""));
}

void MetricsTest::breakerTransitionsCountByCause()
{
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1")}, {}, {}));
    BreakerEvent opened;
    opened.providerId = QStringLiteral("p1");
    opened.from = BreakerState::Closed;
    opened.to = BreakerState::Open;
    opened.cause = BreakerCause::ConsecutiveFailures;
    opened.reason = QStringLiteral("5 consecutive call failures; open for 60 s");
    metrics.breakerChanged(opened);
    BreakerEvent drained = opened;
    drained.from = drained.to; // an operator action: no transition
    drained.cause = BreakerCause::OperatorDrain;
    metrics.breakerChanged(drained);

    ProviderHealth health;
    health.id = QStringLiteral("p1");
    health.breaker = BreakerState::Open;
    ProviderHealth agent;
    agent.id = QStringLiteral("self-registered");
    metrics::ScrapeState state;
    state.providers = {health, agent};
    const QByteArray text = metrics.render(state);
    QCOMPARE(sampleValue(text, R"(switchyard_breaker_transitions_total{provider="p1",to="open",)"
                               R"(reason="consecutive_failures"})"),
             1.0);
    QVERIFY(!text.contains("operator_drain"));
    QVERIFY(!text.contains("consecutive call failures"));
    QCOMPARE(sampleValue(text, R"(switchyard_breaker_state{provider="p1",state="open"})"), 1.0);
    QCOMPARE(sampleValue(text, R"(switchyard_breaker_state{provider="p1",state="closed"})"), 0.0);
    QVERIFY(!text.contains("self-registered"));
}

void MetricsTest::closedSetsAreThereAtZero()
{
    const QByteArray text = GatewayMetrics().render({});
    for (const char *code :
         {"loop_detected", "gateway_overloaded", "tenant_rate_limited", "tier_degraded"}) {
        QCOMPARE(sampleValue(text, "switchyard_admission_refusals_total{reason=\"" +
                                       QByteArray(code) + "\"}"),
                 0.0);
    }
    for (const char *level : {"0", "1", "2", "3"}) {
        QCOMPARE(sampleValue(text, "switchyard_answers_total{degradation_level=\"" +
                                       QByteArray(level) + "\"}"),
                 0.0);
    }
    QCOMPARE(sampleValue(text, R"(switchyard_failovers_total{reason="connect_failed"})"), 0.0);
    QVERIFY(!text.contains(R"(reason="ok")"));
}

void MetricsTest::recordingARequestSeenBeforeAllocatesNothing()
{
    GatewayMetrics metrics;
    metrics.learnNames(configWith({QStringLiteral("p1"), QStringLiteral("p2")},
                                  {QStringLiteral("m1")}, {QStringLiteral("r1")}));
    telemetry::Trace trace = answeredTrace();
    trace.streamed = true;
    trace.timeToFirstByteMicros = 2'000;
    trace.spans.prepend(attempt(QStringLiteral("p2"), 0, 500, QStringLiteral("server_error")));
    trace.attempts = 2;
    BreakerEvent opened;
    opened.providerId = QStringLiteral("p2");
    opened.to = BreakerState::Open;
    metrics.traceFinished(trace); // the first sight of each series allocates it
    metrics.breakerChanged(opened);

    allocationsCounted = 0;
    countingAllocations = true;
    for (int request = 0; request < 100; ++request) {
        metrics.traceFinished(trace);
        metrics.breakerChanged(opened);
    }
    countingAllocations = false;
    QCOMPARE(allocationsCounted.load(), 0);
}

QTEST_GUILESS_MAIN(MetricsTest)
#include "tst_metrics.moc"
