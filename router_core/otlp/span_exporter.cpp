#include "otlp/span_exporter.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcOtlp, "switchyard.otlp")

namespace switchyard::otlp {

using namespace Qt::StringLiterals;

namespace {

posting::BackgroundPosterOptions queueOptions(const config::OtlpExportConfig &config)
{
    posting::BackgroundPosterOptions options;
    options.capacity = quint64(std::max(config.queueSpans, 0));
    options.batchWeight = quint64(std::max(config.batchSpans, 0));
    options.interval = config.interval;
    options.flushOnStop = SpanExporter::kFlushOnStop;
    options.dropWarningPeriod = SpanExporter::kLogInterval;
    return options;
}

} // namespace

SpanExporter::SpanExporter(config::OtlpExportConfig config, std::unique_ptr<SpanPoster> poster,
                           ExportSource source)
    : m_config(std::move(config)), m_poster(std::move(poster)), m_source(std::move(source)),
      m_tracesUrl(m_config.tracesUrl().toString(QUrl::RemoveUserInfo)),
      m_requests(queueOptions(m_config),
                 {[this](const Poster::Batch &batch, const posting::CutOff &cutOff) {
                      return send(batch, cutOff);
                  },
                  // Out of time to stop: what is left is given up, counted.
                  [this](const Poster::Batch &batch) {
                      m_abandoned.fetch_add(batch.weight, std::memory_order_relaxed);
                  },
                  [this](quint64 dropped) { logDrops(dropped); }})
{}

void SpanExporter::traceFinished(const telemetry::Trace &trace)
{
    if (!sampledAt(m_config.samplingRatio, trace.traceId))
        return;
    ExportedRequest request = ExportedRequest::from(trace);
    const auto spans = quint64(request.spanCount);
    // The whole request or none of it: a collector shown half a trace would draw it wrong.
    m_requests.offer(std::move(request), spans);
}

telemetry::SpanExportCounts SpanExporter::counts() const
{
    telemetry::SpanExportCounts counts;
    counts.enabled = true;
    counts.exportedSpans = m_exported.load(std::memory_order_relaxed);
    counts.droppedSpans = m_requests.droppedWeight();
    counts.abandonedSpans = m_abandoned.load(std::memory_order_relaxed);
    counts.failedExports = m_failed.load(std::memory_order_relaxed);
    counts.queuedSpans = m_requests.queuedWeight();
    return counts;
}

SpanExporter::Poster::RetryAfter SpanExporter::send(const Poster::Batch &batch,
                                                    const posting::CutOff &cutOff)
{
    const QByteArray body = encodeExportRequest(batch.items, m_source);
    const PostResult result = m_poster->post(body, cutOff);
    if (result.outcome == PostResult::Outcome::Accepted) {
        const quint64 rejected = std::min(result.rejected, batch.weight);
        m_exported.fetch_add(batch.weight - rejected, std::memory_order_relaxed);
        m_abandoned.fetch_add(rejected, std::memory_order_relaxed);
        if (rejected > 0)
            logFailure(result);
        return {};
    }
    m_failed.fetch_add(1, std::memory_order_relaxed);
    logFailure(result);
    // Once more at the next interval, so a collector restarting loses nothing; a second failure
    // gives the batch up, so a collector that stays down costs the queue no more than one batch.
    if (result.outcome == PostResult::Outcome::Retryable && batch.sendsBefore == 0 &&
        !batch.stopping)
        return m_config.interval;
    m_abandoned.fetch_add(batch.weight, std::memory_order_relaxed);
    return {};
}

void SpanExporter::logDrops(quint64 dropped)
{
    qCWarning(lcOtlp).noquote()
        << u"%1 span(s) dropped: the OpenTelemetry export queue (trace.otlp.queue, %2 spans) was "
           u"full; the collector at %3 is slower than the traffic or not answering"_s.arg(
               QString::number(dropped), QString::number(m_config.queueSpans), m_tracesUrl);
}

void SpanExporter::logFailure(const PostResult &result)
{
    const quint64 problems = m_failureWarnings.count(std::chrono::steady_clock::now());
    if (problems == 0)
        return;
    const QString what = result.outcome == PostResult::Outcome::Accepted
                             ? u"the collector rejected %1 span(s)%2"_s.arg(
                                   QString::number(result.rejected),
                                   result.error.isEmpty() ? QString() : u": "_s + result.error)
                             : result.error;
    const QString more =
        problems > 1 ? u" (%1 problem(s) since the last message)"_s.arg(problems) : QString();
    qCWarning(lcOtlp).noquote() << u"OpenTelemetry export to %1: %2%3"_s.arg(m_tracesUrl, what,
                                                                             more);
}

} // namespace switchyard::otlp
