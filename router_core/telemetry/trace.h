#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QElapsedTimer>
#include <QList>
#include <QString>
#include <deque>
#include <optional>

namespace switchyard::telemetry {

// One step of a request: ingress, choice, upstream attempt, first byte, completion.
struct Span {
    QString name;
    qint64 startMicros = 0;     // from the start of the request
    qint64 durationMicros = -1; // -1 while open; 0 for a point event such as "first byte"
    QString detail;             // what happened, in words: "sim-swift HTTP 200", "timeout"
};

struct Trace {
    QByteArray requestId;
    QByteArray traceId; // W3C trace id, honoured from an incoming traceparent
    QDateTime startedAtUtc;
    QString model;
    QString provider;
    bool streamed = false;
    int status = 0;
    QString outcome; // "ok", or the error code the client saw
    qint64 totalMicros = 0;
    QList<Span> spans;

    const Span *span(const QString &name) const;
};

// Builds one request's trace as it happens; engine thread only.
class TraceBuilder {
public:
    TraceBuilder(QByteArray requestId, QByteArray traceId);

    int openSpan(const QString &name, const QString &detail = {});
    void closeSpan(int index, const QString &detail = {});
    void pointEvent(const QString &name, const QString &detail = {});
    Trace &trace() { return m_trace; }
    const Trace &trace() const { return m_trace; }
    qint64 elapsedMicros() const { return m_clock.nsecsElapsed() / 1000; }
    // Closes whatever is still open and returns the finished trace.
    Trace finish(int status, const QString &outcome);

private:
    QElapsedTimer m_clock;
    Trace m_trace;
};

// The last `capacity` traces, oldest dropped first. Engine thread only.
class TraceRing {
public:
    explicit TraceRing(int capacity) : m_capacity(std::max(1, capacity)) {}

    void add(Trace trace);
    std::optional<Trace> find(const QByteArray &requestId) const;
    QList<Trace> latest(int count) const;
    int size() const { return int(m_traces.size()); }
    int capacity() const { return m_capacity; }
    quint64 droppedCount() const { return m_dropped; }

private:
    int m_capacity;
    std::deque<Trace> m_traces;
    quint64 m_dropped = 0;
};

// A fresh random W3C trace id (32 lowercase hex digits) or request id.
QByteArray newTraceId();
QByteArray newRequestId();
// The trace id of a valid `traceparent` header, or an empty array when it is absent or invalid.
QByteArray traceIdFromTraceparent(QByteArrayView traceparent);

} // namespace switchyard::telemetry
