// OpenTelemetry export benchmark: what the export costs the engine thread per finished request
// (the sampling decision, sharing the record and spans, the queue's lock), and what encoding
// costs the export's own thread. The real SpanExporter with a poster that accepts at once, so
// the export thread runs beside the measured one as it does in the gateway. CPU time of the
// calling thread, the median of 7 runs; prints a Markdown table. A measurement, never a
// pass/fail test.
//
//   otlp_bench [--iterations N]

#include "otlp/span_encoding.h"
#include "otlp/span_exporter.h"
#include "thread_cpu.h"

#include <QCoreApplication>
#include <QLoggingCategory>
#include <QStringList>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>

using namespace Qt::StringLiterals;
using namespace switchyard;

namespace {

constexpr int kRuns = 7;

class AcceptingPoster final : public otlp::SpanPoster {
public:
    otlp::PostResult post(const QByteArray &body, const posting::CutOff &) override
    {
        bytes += quint64(body.size());
        otlp::PostResult result;
        result.outcome = otlp::PostResult::Outcome::Accepted;
        return result;
    }
    std::atomic<quint64> bytes{0};
};

telemetry::Span span(const QString &name, telemetry::SpanKind kind, qint64 start, qint64 duration,
                     const QString &detail)
{
    telemetry::Span result;
    result.name = name;
    result.kind = kind;
    result.startMicros = start;
    result.durationMicros = duration;
    result.detail = detail;
    return result;
}

// A streamed chat request as the gateway records one: three steps, one attempt, the events of
// a stream (choice, response head, first byte, usage, completion) and 40 chunk arrivals.
telemetry::Trace streamedTrace()
{
    telemetry::Trace trace;
    trace.requestId = "req_5f0c3a9e1b2d4c6e8f7a9b0c";
    trace.traceId = telemetry::newTraceId();
    trace.spanId = telemetry::newSpanId();
    trace.startedAtUtc = QDateTime::currentDateTimeUtc();
    trace.endpoint = u"/v1/chat/completions"_s;
    trace.method = "POST";
    trace.tenant = u"acme"_s;
    trace.model = u"demo-light"_s;
    trace.route = u"default"_s;
    trace.tier = u"light"_s;
    trace.provider = u"sim-swift"_s;
    trace.upstreamModel = u"demo-light"_s;
    trace.streamed = true;
    trace.status = 200;
    trace.outcome = u"ok"_s;
    trace.attempts = 1;
    trace.totalMicros = 850'000;
    trace.timeToFirstByteMicros = 120'000;
    trace.inputTokens = 42;
    trace.outputTokens = 24;
    trace.finishReason = u"stop"_s;
    using telemetry::SpanKind;
    trace.spans = {
        span(u"ingress"_s, SpanKind::Step, 0, 12, u"demo-light, 2 message(s)"_s),
        span(u"admission"_s, SpanKind::Step, 12, 2, u"admitted"_s),
        span(u"routing"_s, SpanKind::Step, 14, 9, u"2 candidate(s)"_s),
        span(u"choice"_s, SpanKind::Event, 23, 0, u"rule default: tier light"_s),
        span(u"upstream attempt"_s, SpanKind::Attempt, 25, 849'900,
             u"sim-swift, attempt 1: HTTP 200"_s),
        span(u"response head"_s, SpanKind::Event, 119'000, 0, u"HTTP 200"_s),
        span(u"first byte"_s, SpanKind::Event, 120'000, 0, u"after 120 ms"_s),
        span(u"usage"_s, SpanKind::Event, 849'000, 0, u"42 in, 24 out"_s),
        span(u"completion"_s, SpanKind::Event, 849'950, 0, u"ok"_s),
    };
    telemetry::Span &attempt = trace.spans[4];
    attempt.spanId = telemetry::newSpanId();
    attempt.attempt = 1;
    attempt.provider = u"sim-swift"_s;
    attempt.upstreamModel = u"demo-light"_s;
    attempt.outcome = u"success"_s;
    attempt.httpStatus = 200;
    attempt.bytes = 4096;
    for (int chunk = 0; chunk < 40; ++chunk)
        trace.chunks.push_back({120'000 + chunk * 18'000, 120});
    trace.chunkCount = 40;
    trace.chunkBytes = 4800;
    trace.requestHeaders = {{"content-type", "application/json"},
                            {"authorization", "[redacted]"},
                            {"user-agent", "OpenAI/JS 5.23.2"}};
    return trace;
}

template <typename Work>
double medianNanoseconds(int iterations, Work work)
{
    std::vector<double> runs;
    for (int run = 0; run < kRuns; ++run) {
        const double start = threadCpuNanoseconds();
        for (int i = 0; i < iterations; ++i)
            work(i);
        runs.push_back((threadCpuNanoseconds() - start) / iterations);
    }
    std::sort(runs.begin(), runs.end());
    return runs[runs.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QLoggingCategory::setFilterRules(u"switchyard.*=false"_s);
    int iterations = 20000;
    const QStringList arguments = app.arguments();
    const qsizetype at = arguments.indexOf(u"--iterations"_s);
    if (at >= 0 && at + 1 < arguments.size())
        iterations = std::max(1, arguments[at + 1].toInt());

    // Distinct trace ids, made before measuring, as live traffic brings them.
    const telemetry::Trace base = streamedTrace();
    std::vector<telemetry::Trace> traces(64, base);
    for (telemetry::Trace &trace : traces)
        trace.traceId = telemetry::newTraceId();

    config::OtlpExportConfig exportConfig;
    exportConfig.endpoint = QUrl(u"http://127.0.0.1:9"_s);
    // Large enough that nothing is dropped: the cost of queueing, not of refusing, is measured.
    exportConfig.queueSpans = 1'000'000;

    std::printf("| engine thread, per finished request | CPU ns |\n| --- | ---: |\n");
    {
        auto poster = std::make_unique<AcceptingPoster>();
        otlp::SpanExporter exporter(exportConfig, std::move(poster));
        const double sampled = medianNanoseconds(iterations, [&](int i) {
            exporter.traceFinished(traces[std::size_t(i) % traces.size()]);
        });
        std::printf("| sampled (ratio 1): decide, share, queue | %.0f |\n", sampled);
    }
    {
        config::OtlpExportConfig none = exportConfig;
        none.samplingRatio = 0.0;
        otlp::SpanExporter exporter(none, std::make_unique<AcceptingPoster>());
        const double unsampled = medianNanoseconds(iterations, [&](int i) {
            exporter.traceFinished(traces[std::size_t(i) % traces.size()]);
        });
        std::printf("| not sampled (ratio 0): decide only | %.0f |\n", unsampled);
    }

    // The export thread's share: one batch of 512 spans (128 such requests) encoded to JSON.
    QList<otlp::ExportedRequest> batch;
    for (int i = 0; i < 128; ++i)
        batch.append(otlp::ExportedRequest::from(traces[std::size_t(i) % traces.size()]));
    const otlp::ExportSource source = otlp::ExportSource::ofThisProcess();
    qsizetype bodyBytes = 0;
    const double perBatch = medianNanoseconds(std::max(1, iterations / 200), [&](int) {
        bodyBytes = otlp::encodeExportRequest(batch, source).size();
    });
    std::printf("\n| export thread | value |\n| --- | ---: |\n");
    std::printf("| encode one request (5 spans, 5 events) | %.1f µs |\n", perBatch / 128 / 1000);
    std::printf("| JSON bytes per request | %lld |\n", qlonglong(bodyBytes / 128));
    return 0;
}
