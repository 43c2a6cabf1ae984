#pragma once

#include "config/config.h"
#include "otlp/span_encoding.h"
#include "posting/background_poster.h"
#include "telemetry/request_recorder.h"
#include "telemetry/span_export_counts.h"

#include <QString>
#include <atomic>
#include <chrono>
#include <memory>

namespace switchyard::otlp {

// What one export request came to.
struct PostResult {
    enum class Outcome {
        Accepted,  // 2xx
        Retryable, // no answer, a timeout, 429, 502, 503, 504: OTLP's "try again later"
        Refused,   // any other status: sending the same spans again would be refused again
    };
    Outcome outcome = Outcome::Retryable;
    int httpStatus = 0;   // 0 when no answer came
    QString error;        // what went wrong, for the log; empty when accepted
    quint64 rejected = 0; // spans a 2xx answer's partialSuccess said it rejected
};

// The seam between the export's batching and the wire, so the batching can be tested with a
// poster that answers on command. Called on the export's own thread only.
class SpanPoster {
public:
    virtual ~SpanPoster() = default;
    // Sends one ExportTraceServiceRequest. Returns by itself within the configured timeout, and
    // soon after `cutOff` is reached (the export is stopping).
    virtual PostResult post(const QByteArray &body, const posting::CutOff &cutOff) = 0;
};

// Posts with a libcurl easy handle of its own, kept alive between exports: this thread is the
// only one using it, so the engine's multi handle is not involved (docs/architecture.md says why
// libcurl).
std::unique_ptr<SpanPoster> makeCurlPoster(const config::OtlpExportConfig &config);

// The OpenTelemetry export of finished requests (docs/opentelemetry.md). On the engine thread it
// only decides by trace id whether a request is sampled, shares its record and spans into an
// ExportedRequest and queues it under a lock held for a push: no encoding, no network. A
// background poster batches; its thread encodes and posts. When the queue (config.queueSpans)
// cannot take a request's spans they are dropped and counted; an export that fails is retried once
// at the next interval, then given up and counted. Counts are atomics any thread may read.
class SpanExporter final : public telemetry::TraceSink {
public:
    SpanExporter(config::OtlpExportConfig config, std::unique_ptr<SpanPoster> poster,
                 ExportSource source = ExportSource::ofThisProcess());
    // Sends what is still queued for at most kFlushOnStop, then stops the thread.
    ~SpanExporter() override = default;

    SpanExporter(const SpanExporter &) = delete;
    SpanExporter &operator=(const SpanExporter &) = delete;

    // Engine thread.
    void traceFinished(const telemetry::Trace &trace) override;

    telemetry::SpanExportCounts counts() const;
    const config::OtlpExportConfig &config() const { return m_config; }

    // How long stopping may take to send what is queued: a collector that hangs must not hold
    // the gateway's shutdown.
    static constexpr std::chrono::milliseconds kFlushOnStop{2000};
    // At most one warning per kind of problem in this period; the next one says how many more.
    static constexpr std::chrono::seconds kLogInterval{60};

private:
    using Poster = posting::BackgroundPoster<ExportedRequest>;

    Poster::RetryAfter send(const Poster::Batch &batch, const posting::CutOff &cutOff);
    void logDrops(quint64 dropped);
    void logFailure(const PostResult &result);

    const config::OtlpExportConfig m_config;
    const std::unique_ptr<SpanPoster> m_poster;
    const ExportSource m_source;
    const QString m_tracesUrl;

    posting::WarningThrottle m_failureWarnings{kLogInterval}; // the poster thread's own

    std::atomic<quint64> m_exported{0};
    std::atomic<quint64> m_abandoned{0};
    std::atomic<quint64> m_failed{0};

    Poster m_requests; // last: its thread starts once everything above exists, and stops first
};

} // namespace switchyard::otlp
