#pragma once

#include "telemetry/trace.h"

#include <QHash>
#include <QList>
#include <functional>

namespace switchyard::telemetry {

// Whatever reads finished requests: the trace ring, the request log, metrics, the OpenTelemetry
// export, the console's feed. Called on the engine thread as each request ends; a sink that has
// slow work to do (a network export) hands it to its own thread.
class TraceSink {
public:
    virtual ~TraceSink() = default;
    virtual void traceFinished(const Trace &trace) = 0;
};

// The one place a request's record goes when it is over, and where running requests can be
// found while they are not: each finished trace is numbered, handed to every sink, then kept in
// the ring. Engine thread only; sinks and builders are borrowed, never owned.
class RequestRecorder {
public:
    explicit RequestRecorder(TraceRing &ring) : m_ring(ring) {}

    // Prices each record before any sink sees it (the engine's pricer reads `pricing`), so every
    // sink and the ring read one cost. Without a pricer, records stay unpriced.
    using Pricer = std::function<void(RequestRecord &)>;
    void setPricer(Pricer pricer) { m_pricer = std::move(pricer); }
    void addSink(TraceSink *sink) { m_sinks.append(sink); }
    void removeSink(TraceSink *sink) { m_sinks.removeAll(sink); }
    void record(Trace trace);
    TraceRing &ring() { return m_ring; }
    const TraceRing &ring() const { return m_ring; }
    quint64 lastSequence() const { return m_sequence; }

    // Running requests, for the live views. An execution registers its builder when it starts
    // and unregisters it before the builder goes away.
    void beginLive(TraceBuilder *builder);
    void endLive(TraceBuilder *builder);
    const TraceBuilder *live(const QByteArray &requestId) const
    {
        return m_live.value(requestId, nullptr);
    }
    int liveCount() const { return int(m_live.size()); }
    // A running request's trace so far (`running` set), else a finished one from the ring.
    std::optional<Trace> find(const QByteArray &requestId, bool *running = nullptr) const;
    // Up to `count` running requests, those that started last first.
    QList<const TraceBuilder *> newestLive(int count) const;

    // The one request whose text an operator reads along with: its builder keeps the events'
    // data until taken. Watching a request that has not started yet (or is not running here)
    // holds until it does, so a request can be watched from its first byte.
    void watch(const QByteArray &requestId);
    const QByteArray &watched() const { return m_watched; }
    // The watched request's data since the last call: what it relayed while running, including
    // what it relayed last if it finished since.
    QByteArray takeWatchedData();

private:
    TraceRing &m_ring;
    Pricer m_pricer;
    QList<TraceSink *> m_sinks;
    quint64 m_sequence = 0;
    QHash<QByteArray, TraceBuilder *> m_live;
    QByteArray m_watched;
    QByteArray m_watchedTail; // the watched request's last data, when it finished untaken
};

} // namespace switchyard::telemetry
