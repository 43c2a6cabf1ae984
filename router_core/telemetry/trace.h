#pragma once

#include "telemetry/request_record.h"
#include "timing/clock.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

namespace switchyard::telemetry {

// What a span stands for, so a waterfall and an exporter can tell an attempt from a wait.
enum class SpanKind : quint8 {
    Step,    // a phase of the gateway's own work: ingress, routing
    Attempt, // one call to one endpoint
    Wait,    // a backoff or a 429's cool-down being waited out
    Event,   // a point in time: first byte, usage, completion
};

// One step of a request: ingress, the routing decision, an upstream attempt, a wait, first byte,
// completion.
struct Span {
    QString name;
    qint64 startMicros = 0;     // from the start of the request
    qint64 durationMicros = -1; // -1 while open; 0 for a point event such as "first byte"
    QString detail;             // what happened, in words: "sim-swift HTTP 200", "timeout"
    SpanKind kind = SpanKind::Step;

    // An attempt's facts (kind Attempt); empty or zero for the other kinds. The two ints sit
    // beside `kind`, in what was its padding: a running request holds eight spans.
    int attempt = 0;    // 1-based
    int httpStatus = 0; // the provider's status; 0 when none arrived
    QByteArray spanId;  // 16 hex digits: the parent id the provider saw in `traceparent`
    QString provider;
    QString upstreamModel;
    QString outcome;    // "success", "failure", "unusable", "request_fault", "cancelled"...
    QString errorClass; // resilience::errorClassName, a closed set; empty on success. On a
                        // "fallback by error" event: the error that moved the request
                        // (config::fallbackErrorName)
    qint64 bytes = 0;   // body bytes received from the provider

    bool operator==(const Span &) const = default;
};

// The arrival of one streamed chunk: a time and a length, nothing else, so a stream of any
// length costs its trace no more than the bound (TraceLimits::chunkEvents) of these.
// Eight bytes, not sixteen: a long stream's trace holds up to 256 of them for as long as it runs.
struct ChunkMark {
    static constexpr qint64 kMaxBytes = (qint64(1) << 23) - 1; // larger chunks count as this

    qint64 atMicros : 40 = 0; // from the start of the request: 12 days at most
    qint64 bytes : 24 = 0;

    bool operator==(const ChunkMark &) const = default;
};
static_assert(sizeof(ChunkMark) == 8);

using HeaderPairs = QList<QPair<QByteArray, QByteArray>>;

// One step of a routing decision as the router explains it: its stage ("rule", "pool"...) and
// why it went as it did. A trace shows it as one line, "stage: detail".
struct ExplainStep {
    QString stage;
    QString detail;
};

// A finished (or, for the live view, running) request: its record plus the spans that explain it.
struct Trace : RequestRecord {
    QList<Span> spans;
    QStringList explainSteps; // the routing decision's steps, "step: detail"

    std::vector<ChunkMark> chunks; // the first TraceLimits::chunkEvents chunks
    quint32 chunkCount = 0;        // every chunk relayed, counted past the bound too
    qint64 chunkBytes = 0;

    // The request as the client sent it: method, path and headers always (credentials removed
    // by TraceBuilder); the bodies only when configured, cut at the cap.
    QByteArray method;
    QByteArray path;
    HeaderPairs requestHeaders;
    QByteArray requestBody;
    QByteArray responseBody;
    bool bodiesKept = false;
    bool requestBodyCut = false;
    bool responseBodyCut = false;

    const Span *span(const QString &name) const;

    bool operator==(const Trace &) const = default;
};

struct TraceLimits {
    int chunkEvents = 256;       // chunk arrivals kept per trace; later ones are only counted
    bool keepBodies = false;     // request and response bodies; off by default
    qint64 bodyMaxBytes = 16384; // each body is cut here
};

// Builds one request's trace as it happens; engine thread only. Its spans are timed and its
// start stamped by `clock` (the engine's, a manual one in tests), which must outlive it.
class TraceBuilder {
public:
    TraceBuilder(const timing::Clock &clock, QByteArray requestId, QByteArray traceId,
                 QByteArray parentSpanId = {});

    void setLimits(const TraceLimits &limits) { m_limits = limits; }
    const TraceLimits &limits() const { return m_limits; }
    // The request as received. Credentials (isCredentialHeader) never enter a trace: they are
    // replaced by "[redacted]". The headers and body are held as given (shared, not copied) and
    // written into the trace by writeHeld(), or when the trace is read (finish(),
    // traceSoFar()): the provider's call does not wait for the copy, which ran cold on every
    // request's path.
    void setRequest(QByteArray method, QByteArray path, HeaderPairs headers, QByteArray body);
    // Writes what the request's path held back into the trace now: the request (setRequest) and
    // the routing decision's lines (explainChoice). The engine calls it once the answer has
    // begun; calling it again does nothing.
    void writeHeld();
    // The answer the client was sent, when bodies are kept (a stream's events as they went out).
    void appendResponseBody(QByteArrayView bytes);
    // Whether appendResponseBody would keep anything: callers skip building the bytes if not.
    bool keepsMoreResponseBody() const { return m_limits.keepBodies && !m_trace->responseBodyCut; }

    // The routing decision's steps, and a "choice" event now whose detail is all of them on one
    // line. The steps are held as the router made them and written as lines ("stage: detail",
    // Trace::explainSteps) by writeHeld() or when the trace is read; the choice's line is joined
    // when the trace is read (finish(), traceSoFar(), spansSoFar()): a running request would
    // otherwise hold its explanation twice.
    void explainChoice(QList<ExplainStep> steps);

    int openSpan(const QString &name, const QString &detail = {}, SpanKind kind = SpanKind::Step);
    void closeSpan(int index, const QString &detail = {});
    void pointEvent(const QString &name, const QString &detail = {});
    Span &spanAt(int index) { return m_trace->spans[index]; }
    // One streamed chunk went to the client: no allocation beyond the bounded mark.
    void chunk(qint64 bytes);

    // Live text, for the one request an operator inspects: while watched, the data of every
    // event relayed to the client is kept (bounded) until taken.
    void setWatched(bool watched);
    bool watched() const { return m_watched; }
    void appendLiveData(QByteArrayView eventData);
    QByteArray takeLiveData() { return std::exchange(m_liveData, {}); }

    Trace &trace() { return *m_trace; }
    const Trace &trace() const { return *m_trace; }
    qint64 elapsedMicros() const
    {
        return std::chrono::duration_cast<std::chrono::microseconds>(m_clock->now() - m_startedAt)
            .count();
    }
    // The trace as it stands, its latency so far: what a view of a running request shows.
    Trace traceSoFar() const
    {
        Trace soFar = *m_trace;
        soFar.totalMicros = elapsedMicros();
        fillHeld(soFar);
        fillChoice(soFar.spans);
        return soFar;
    }

    QList<Span> spansSoFar() const
    {
        QList<Span> spans = m_trace->spans;
        fillChoice(spans);
        return spans;
    }

    timing::Clock::TimePoint startedAt() const { return m_startedAt; }
    // Closes whatever is still open and returns the finished trace.
    Trace finish(int status, const QString &outcome);

private:
    struct HeldRequest {
        HeaderPairs headers;
        QByteArray body; // empty unless bodies are kept
    };
    void fillChoice(QList<Span> &spans) const;
    void fillHeld(Trace &into) const;
    QStringList explainLines() const;

    const timing::Clock *m_clock; // a pointer rather than a reference: builders stay assignable
    timing::Clock::TimePoint m_startedAt;
    // On the heap: a builder is handed down the request's path by value, and each hand moves one
    // pointer rather than the forty-odd members of a Trace.
    std::unique_ptr<Trace> m_trace;
    int m_choiceSpan = -1;                    // its detail is joined from explainSteps when read
    std::optional<HeldRequest> m_heldRequest; // setRequest's, until written
    QList<ExplainStep> m_heldSteps;           // explainChoice's, until written
    TraceLimits m_limits;
    bool m_watched = false;
    QByteArray m_liveData;
};

// The last `capacity` traces, bounded also by `maxBytes` in all; oldest dropped first. Engine
// thread only.
//
// Each trace is kept packed into one block of memory. A trace as built is some forty separate
// allocations (its strings, spans, explanation and headers), and the ring drops the oldest of
// two thousand for every request it adds: each of those blocks is cold by then, so dropping one
// trace cost a cache miss per block, and the ring's scattered blocks pushed the request path's
// own data out of the cache. Measured under the nonstreamed load of docs/benchmarks.md, the
// engine thread spent about a tenth more per request with the ring at its default size than
// with a ring of one. Reading a kept trace unpacks it; only the admin API and the console do.
class TraceRing {
public:
    explicit TraceRing(int capacity, qint64 maxBytes = 64 * 1024 * 1024)
        : m_capacity(std::max(1, capacity)), m_maxBytes(std::max<qint64>(1, maxBytes))
    {}

    void add(const Trace &trace);
    std::optional<Trace> find(QByteArrayView requestId) const;
    QList<Trace> latest(int count) const;
    // The kept traces' records, newest first, from the newest older than `beforeSequence` (0:
    // the newest of all), until `visit` returns false. Only the records are unpacked.
    template <typename Visit>
    void visitNewestFirst(quint64 beforeSequence, Visit visit) const
    {
        for (auto it = m_traces.rbegin(); it != m_traces.rend(); ++it) {
            if (beforeSequence != 0 && it->sequence >= beforeSequence)
                continue;
            if (!visit(unpackRecord(it->packed)))
                return;
        }
    }
    int size() const { return int(m_traces.size()); }
    int capacity() const { return m_capacity; }
    // What the kept traces hold in memory, their packed blocks and the ring's own entries.
    qint64 bytes() const { return m_bytes; }
    qint64 maxBytes() const { return m_maxBytes; }
    quint64 droppedCount() const { return m_dropped; }

private:
    struct Stored {
        quint64 sequence = 0;
        QByteArray packed;
    };
    static qint64 bytesOf(const Stored &stored);
    static RequestRecord unpackRecord(const QByteArray &packed);
    static Trace unpack(const QByteArray &packed);

    int m_capacity;
    qint64 m_maxBytes;
    std::deque<Stored> m_traces;
    qint64 m_bytes = 0;
    quint64 m_dropped = 0;
};

// Whether a header carries a credential (Authorization, Proxy-Authorization, x-api-key, api-key,
// x-goog-api-key, Cookie): its value never enters a trace, a context sample or an export.
bool isCredentialHeader(QByteArrayView name);

// A fresh random W3C trace id (32 lowercase hex digits), span id (16), or request id.
QByteArray newTraceId();
QByteArray newSpanId();
QByteArray newRequestId();

struct TraceParent {
    QByteArray traceId;
    QByteArray parentSpanId;
};
// The ids of a valid `traceparent` header, or nullopt when it is absent or invalid.
std::optional<TraceParent> parseTraceparent(QByteArrayView traceparent);
// The trace id of a valid `traceparent` header, or an empty array when it is absent or invalid.
QByteArray traceIdFromTraceparent(QByteArrayView traceparent);
// "00-{trace}-{span}-01": what an attempt sends on to its provider.
QByteArray formatTraceparent(const QByteArray &traceId, const QByteArray &spanId);

} // namespace switchyard::telemetry
