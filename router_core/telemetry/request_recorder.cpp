#include "telemetry/request_recorder.h"

#include <algorithm>

namespace switchyard::telemetry {

void RequestRecorder::record(Trace trace)
{
    trace.sequence = ++m_sequence;
    if (m_pricer)
        m_pricer(trace);
    for (TraceSink *sink : std::as_const(m_sinks))
        sink->traceFinished(trace);
    m_ring.add(std::move(trace));
}

std::optional<Trace> RequestRecorder::find(const QByteArray &requestId, bool *running) const
{
    const TraceBuilder *live = m_live.value(requestId, nullptr);
    if (running)
        *running = live != nullptr;
    if (live)
        return live->traceSoFar();
    return m_ring.find(requestId);
}

void RequestRecorder::beginLive(TraceBuilder *builder)
{
    const QByteArray &id = builder->trace().requestId;
    m_live.insert(id, builder);
    if (!m_watched.isEmpty() && id == m_watched)
        builder->setWatched(true);
}

void RequestRecorder::endLive(TraceBuilder *builder)
{
    const auto found = m_live.constFind(builder->trace().requestId);
    // Client-chosen request ids may repeat: only the builder registered under it leaves.
    if (found != m_live.cend() && found.value() == builder) {
        // The watched request's last events (its end, or the error the client saw) arrive
        // after the last take: they wait for the next one.
        if (builder->watched())
            m_watchedTail.append(builder->takeLiveData());
        m_live.erase(found);
    }
}

QList<const TraceBuilder *> RequestRecorder::newestLive(int count) const
{
    QList<const TraceBuilder *> running;
    running.reserve(m_live.size());
    for (const TraceBuilder *builder : m_live)
        running.append(builder);
    // By start time, read once per builder: a comparison that read the clock would not be a
    // consistent order while it sorts.
    const auto newerFirst = [](const TraceBuilder *a, const TraceBuilder *b) {
        return b->startedAt() < a->startedAt();
    };
    if (running.size() > count) {
        std::partial_sort(running.begin(), running.begin() + count, running.end(), newerFirst);
        running.resize(count);
    } else {
        std::sort(running.begin(), running.end(), newerFirst);
    }
    return running;
}

void RequestRecorder::watch(const QByteArray &requestId)
{
    if (requestId == m_watched)
        return;
    if (TraceBuilder *previous = m_live.value(m_watched, nullptr))
        previous->setWatched(false);
    m_watched = requestId;
    m_watchedTail.clear();
    if (TraceBuilder *next = m_live.value(m_watched, nullptr))
        next->setWatched(true);
}

QByteArray RequestRecorder::takeWatchedData()
{
    TraceBuilder *builder = m_watched.isEmpty() ? nullptr : m_live.value(m_watched, nullptr);
    QByteArray data = std::exchange(m_watchedTail, {});
    if (builder)
        data.append(builder->takeLiveData());
    return data;
}

} // namespace switchyard::telemetry
