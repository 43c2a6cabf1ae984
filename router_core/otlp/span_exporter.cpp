#include "otlp/span_exporter.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcOtlp, "switchyard.otlp")

namespace switchyard::otlp {

using namespace Qt::StringLiterals;
using Clock = std::chrono::steady_clock;

namespace {
qint64 steadyNanos(Clock::time_point at)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}
} // namespace

SpanExporter::SpanExporter(config::OtlpExportConfig config, std::unique_ptr<SpanPoster> poster,
                           ExportSource source)
    : m_config(std::move(config)), m_poster(std::move(poster)), m_source(std::move(source)),
      m_tracesUrl(m_config.tracesUrl().toString(QUrl::RemoveUserInfo)), m_thread([this] { run(); })
{}

SpanExporter::~SpanExporter()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_cutOffAtNanos = steadyNanos(Clock::now() + kFlushOnStop);
    m_wake.notify_one();
    m_thread.join();
}

void SpanExporter::traceFinished(const telemetry::Trace &trace)
{
    if (!sampledAt(m_config.samplingRatio, trace.traceId))
        return;
    ExportedRequest request = ExportedRequest::from(trace);
    const int spans = request.spanCount;
    bool batchReady = false;
    {
        std::lock_guard lock(m_mutex);
        // The whole request or none of it: a collector shown half a trace would draw it wrong.
        if (m_waitingSpans + spans > m_config.queueSpans) {
            m_dropped.fetch_add(quint64(spans), std::memory_order_relaxed);
            return;
        }
        m_queue.push_back(std::move(request));
        m_waitingSpans += spans;
        batchReady = m_waitingSpans >= m_config.batchSpans;
        // Inside the lock: the export thread takes the batch under it, so it cannot count the
        // spans out before they were counted in.
        m_queued.fetch_add(quint64(spans), std::memory_order_relaxed);
    }
    if (batchReady)
        m_wake.notify_one();
}

telemetry::SpanExportCounts SpanExporter::counts() const
{
    telemetry::SpanExportCounts counts;
    counts.enabled = true;
    counts.exportedSpans = m_exported.load(std::memory_order_relaxed);
    counts.droppedSpans = m_dropped.load(std::memory_order_relaxed);
    counts.abandonedSpans = m_abandoned.load(std::memory_order_relaxed);
    counts.failedExports = m_failed.load(std::memory_order_relaxed);
    counts.queuedSpans = m_queued.load(std::memory_order_relaxed);
    return counts;
}

SpanExporter::Batch SpanExporter::takeBatch()
{
    Batch batch;
    // Whole requests up to the batch size; a request larger than a batch goes alone.
    while (!m_queue.empty()) {
        const int spans = m_queue.front().spanCount;
        if (!batch.requests.isEmpty() &&
            batch.spans + quint64(spans) > quint64(m_config.batchSpans))
            break;
        batch.requests.append(std::move(m_queue.front()));
        m_queue.pop_front();
        batch.spans += quint64(spans);
        m_waitingSpans -= spans;
    }
    return batch;
}

void SpanExporter::run()
{
    std::unique_lock lock(m_mutex);
    Clock::time_point nextExport = Clock::now() + m_config.interval;
    while (true) {
        // A full batch goes at once, unless a failed one waits for its retry: then the collector
        // gets its interval to recover.
        m_wake.wait_until(lock, nextExport, [this] {
            return m_stopping || (!m_retry && m_waitingSpans >= m_config.batchSpans);
        });
        const bool stopping = m_stopping;
        const bool due = stopping || Clock::now() >= nextExport ||
                         (!m_retry && m_waitingSpans >= m_config.batchSpans);
        if (!due)
            continue;
        std::optional<Batch> batch;
        if (m_retry) {
            batch = std::move(*m_retry);
            m_retry.reset();
        } else if (!m_queue.empty()) {
            batch = takeBatch();
        }
        if (!batch) {
            if (stopping)
                break;
            lock.unlock();
            logDrops();
            lock.lock();
            nextExport = Clock::now() + m_config.interval;
            continue;
        }
        lock.unlock();
        if (stopping && steadyNanos(Clock::now()) > m_cutOffAtNanos.load()) {
            // Out of time to stop: what is left is given up, counted.
            settle(*batch, 0, batch->spans);
        } else {
            send(std::move(*batch), stopping);
        }
        logDrops();
        lock.lock();
        nextExport = Clock::now() + m_config.interval;
    }
}

void SpanExporter::send(Batch batch, bool stopping)
{
    const QByteArray body = encodeExportRequest(batch.requests, m_source);
    const PostResult result = m_poster->post(body, m_cutOffAtNanos);
    if (result.outcome == PostResult::Outcome::Accepted) {
        const quint64 rejected = std::min(result.rejected, batch.spans);
        settle(batch, batch.spans - rejected, rejected);
        if (rejected > 0)
            logFailure(result);
        return;
    }
    m_failed.fetch_add(1, std::memory_order_relaxed);
    logFailure(result);
    // Once more at the next interval, so a collector restarting loses nothing; a second failure
    // gives the batch up, so a collector that stays down costs the queue no more than one batch.
    if (result.outcome == PostResult::Outcome::Retryable && !batch.retried && !stopping) {
        batch.retried = true;
        m_retry = std::move(batch);
        return;
    }
    settle(batch, 0, batch.spans);
}

void SpanExporter::settle(const Batch &batch, quint64 exported, quint64 abandoned)
{
    m_exported.fetch_add(exported, std::memory_order_relaxed);
    m_abandoned.fetch_add(abandoned, std::memory_order_relaxed);
    m_queued.fetch_sub(batch.spans, std::memory_order_relaxed);
}

void SpanExporter::logDrops()
{
    const quint64 dropped = m_dropped.load(std::memory_order_relaxed);
    if (dropped == m_droppedLogged)
        return;
    const Clock::time_point now = Clock::now();
    if (m_droppedLogged != 0 && now - m_lastDropLog < kLogInterval)
        return;
    qCWarning(lcOtlp).noquote()
        << u"%1 span(s) dropped: the OpenTelemetry export queue (trace.otlp.queue, %2 spans) was "
           u"full; the collector at %3 is slower than the traffic or not answering"_s.arg(
               QString::number(dropped - m_droppedLogged), QString::number(m_config.queueSpans),
               m_tracesUrl);
    m_droppedLogged = dropped;
    m_lastDropLog = now;
}

void SpanExporter::logFailure(const PostResult &result)
{
    ++m_failuresSinceLog;
    const Clock::time_point now = Clock::now();
    if (m_failureLogged && now - m_lastFailureLog < kLogInterval)
        return;
    const QString what = result.outcome == PostResult::Outcome::Accepted
                             ? u"the collector rejected %1 span(s)%2"_s.arg(
                                   QString::number(result.rejected),
                                   result.error.isEmpty() ? QString() : u": "_s + result.error)
                             : result.error;
    const QString more = m_failuresSinceLog > 1
                             ? u" (%1 problem(s) since the last message)"_s.arg(m_failuresSinceLog)
                             : QString();
    qCWarning(lcOtlp).noquote() << u"OpenTelemetry export to %1: %2%3"_s.arg(m_tracesUrl, what,
                                                                             more);
    m_failuresSinceLog = 0;
    m_failureLogged = true;
    m_lastFailureLog = now;
}

} // namespace switchyard::otlp
