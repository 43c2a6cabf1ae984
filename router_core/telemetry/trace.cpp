#include "telemetry/trace.h"

#include <QRandomGenerator>
#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

namespace switchyard::telemetry {

namespace {
// Headers that carry a credential: they never enter a trace, a log or an export.
bool isCredentialHeader(QByteArrayView name)
{
    for (const char *credential : {"authorization", "x-api-key", "api-key", "cookie",
                                   "proxy-authorization", "x-goog-api-key"}) {
        if (name.compare(QByteArrayView(credential), Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

// Live text is for a person reading along; a runaway stream keeps its last part only.
constexpr qsizetype kMaxLiveDataBytes = 1024 * 1024;
} // namespace

const Span *Trace::span(const QString &name) const
{
    for (const Span &candidate : spans) {
        if (candidate.name == name)
            return &candidate;
    }
    return nullptr;
}

TraceBuilder::TraceBuilder(const timing::Clock &clock, QByteArray requestId, QByteArray traceId,
                           QByteArray parentSpanId)
    : m_clock(&clock), m_startedAt(clock.now())
{
    m_trace.requestId = std::move(requestId);
    m_trace.traceId = std::move(traceId);
    m_trace.spanId = newSpanId();
    m_trace.parentSpanId = std::move(parentSpanId);
    m_trace.startedAtUtc = clock.utcNow();
    // A request served at the first attempt records eight spans (ingress, admission, routing,
    // choice, the attempt, its head, the first byte or the usage, the completion): room for
    // them at once, rather than four reallocations that move every span.
    m_trace.spans.reserve(8);
}

void TraceBuilder::setRequest(QByteArray method, QByteArray path, const HeaderPairs &headers,
                              QByteArrayView body)
{
    m_trace.method = std::move(method);
    m_trace.path = std::move(path);
    m_trace.requestHeaders.reserve(headers.size());
    for (const auto &[name, value] : headers) {
        m_trace.requestHeaders.append(
            {name, isCredentialHeader(name) ? QByteArray("[redacted]") : value});
    }
    m_trace.bodiesKept = m_limits.keepBodies;
    if (m_limits.keepBodies) {
        m_trace.requestBodyCut = body.size() > m_limits.bodyMaxBytes;
        m_trace.requestBody =
            body.first(std::min(body.size(), m_limits.bodyMaxBytes)).toByteArray();
    }
}

void TraceBuilder::appendResponseBody(QByteArrayView bytes)
{
    if (!m_limits.keepBodies || m_trace.responseBodyCut)
        return;
    const qsizetype room = m_limits.bodyMaxBytes - m_trace.responseBody.size();
    if (bytes.size() > room) {
        m_trace.responseBodyCut = true;
        bytes = bytes.first(std::max<qsizetype>(room, 0));
    }
    m_trace.responseBody.append(bytes);
}

int TraceBuilder::openSpan(const QString &name, const QString &detail, SpanKind kind)
{
    Span span;
    span.name = name;
    span.startMicros = elapsedMicros();
    span.detail = detail;
    span.kind = kind;
    m_trace.spans.append(std::move(span));
    return int(m_trace.spans.size()) - 1;
}

void TraceBuilder::closeSpan(int index, const QString &detail)
{
    Span &span = m_trace.spans[index];
    if (span.durationMicros >= 0)
        return;
    span.durationMicros = elapsedMicros() - span.startMicros;
    if (!detail.isEmpty())
        span.detail = detail;
}

void TraceBuilder::explainChoice(QStringList steps)
{
    m_trace.explainSteps = std::move(steps);
    pointEvent(QStringLiteral("choice"));
    m_choiceSpan = int(m_trace.spans.size()) - 1;
}

void TraceBuilder::fillChoice(QList<Span> &spans) const
{
    if (m_choiceSpan >= 0 && m_choiceSpan < spans.size() && spans[m_choiceSpan].detail.isEmpty())
        spans[m_choiceSpan].detail = m_trace.explainSteps.join(QStringLiteral("; "));
}

void TraceBuilder::pointEvent(const QString &name, const QString &detail)
{
    Span span;
    span.name = name;
    span.startMicros = elapsedMicros();
    span.durationMicros = 0;
    span.detail = detail;
    span.kind = SpanKind::Event;
    m_trace.spans.append(std::move(span));
}

void TraceBuilder::chunk(qint64 bytes)
{
    ++m_trace.chunkCount;
    m_trace.chunkBytes += bytes;
    if (int(m_trace.chunks.size()) < m_limits.chunkEvents)
        m_trace.chunks.push_back({elapsedMicros(), std::min(bytes, ChunkMark::kMaxBytes)});
}

void TraceBuilder::setWatched(bool watched)
{
    m_watched = watched;
    if (!watched)
        m_liveData.clear();
}

void TraceBuilder::appendLiveData(QByteArrayView eventData)
{
    if (!m_watched)
        return;
    if (m_liveData.size() + eventData.size() > kMaxLiveDataBytes)
        m_liveData.clear(); // nobody took it for a megabyte: start again rather than grow
    m_liveData.append(eventData);
    m_liveData.append('\n');
}

Trace TraceBuilder::finish(int status, const QString &outcome)
{
    for (int i = 0; i < m_trace.spans.size(); ++i)
        closeSpan(i);
    m_trace.status = status;
    m_trace.outcome = outcome;
    m_trace.totalMicros = elapsedMicros();
    fillChoice(m_trace.spans);
    return m_trace;
}

namespace {

// A trace packed for the ring (TraceRing), in one block: numbers as their bytes, text as its
// length and its UTF-16 or bytes, copied with memcpy both ways (one byte a character for Latin-1
// text measured slower: a pass over every character where memcpy moves them in bulk). The request
// id comes first, so that finding a trace reads no more than that; then the rest of the record, so
// that listing records unpacks no span. The "choice" event's detail is the explanation's steps
// joined (TraceBuilder::finish): it is marked, not held twice. The block never leaves the process:
// its layout may change with any build.
//
// pack() runs twice over a trace, once with a Measure to size the block and once with a Write
// to fill it, so that the block is allocated once at its size.
class Measure {
public:
    void raw(const void *, qsizetype size) { m_size += size; }
    qsizetype size() const { return m_size; }

private:
    qsizetype m_size = 0;
};

class Write {
public:
    explicit Write(char *to) : m_to(to) {}
    void raw(const void *from, qsizetype size)
    {
        if (size == 0)
            return; // `from` may be null then (an empty vector's data), which memcpy may not take
        std::memcpy(m_to, from, size_t(size));
        m_to += size;
    }

private:
    char *m_to;
};

class Read {
public:
    explicit Read(QByteArrayView from) : m_from(from) {}

    template <typename Number>
    Number number()
    {
        Number value;
        take(&value, sizeof value);
        return value;
    }
    QString text()
    {
        QString value(number<qint32>(), Qt::Uninitialized);
        take(value.data(), value.size() * qsizetype(sizeof(char16_t)));
        return value;
    }
    QByteArray bytes() { return bytesInPlace().toByteArray(); }
    QByteArrayView bytesInPlace()
    {
        const qint32 size = number<qint32>();
        Q_ASSERT(m_at + size <= m_from.size());
        const QByteArrayView value = m_from.sliced(m_at, size);
        m_at += size;
        return value;
    }

private:
    void take(void *to, qsizetype size)
    {
        Q_ASSERT(m_at + size <= m_from.size());
        if (size > 0)
            std::memcpy(to, m_from.data() + m_at, size_t(size));
        m_at += size;
    }

    QByteArrayView m_from;
    qsizetype m_at = 0;
};

template <typename Out, typename Number>
void number(Out &out, Number value)
{
    static_assert(std::is_trivially_copyable_v<Number>);
    out.raw(&value, sizeof value);
}
template <typename Out>
void text(Out &out, const QString &value)
{
    number(out, qint32(value.size()));
    out.raw(value.constData(), value.size() * qsizetype(sizeof(char16_t)));
}

// Whether `detail` is `steps` joined by "; ", as TraceBuilder::finish makes the choice's detail.
bool isJoinedExplanation(const QString &detail, const QStringList &steps)
{
    const QStringView separator = u"; ";
    QStringView rest = detail;
    for (qsizetype i = 0; i < steps.size(); ++i) {
        if (i > 0) {
            if (!rest.startsWith(separator))
                return false;
            rest = rest.sliced(separator.size());
        }
        if (!rest.startsWith(steps[i]))
            return false;
        rest = rest.sliced(steps[i].size());
    }
    return rest.isEmpty();
}
template <typename Out>
void bytes(Out &out, const QByteArray &value)
{
    number(out, qint32(value.size()));
    out.raw(value.constData(), value.size());
}

// A field added to these structs must be packed and unpacked below, and set in the round trip
// test of tst_telemetry_health. These sizes make the build say so for most new fields; not for
// one that fits in padding (a bool beside `priced`, an int beside `chunkCount`).
static_assert(sizeof(void *) != 8 || sizeof(RequestRecord) == 584,
              "RequestRecord changed: update packRecord and unpackRecordFrom");
static_assert(sizeof(void *) != 8 || sizeof(Span) == 208, "Span changed: update pack and unpack");
static_assert(sizeof(void *) != 8 || sizeof(Trace) == 800, "Trace changed: update pack and unpack");

template <typename Out>
void packRecord(Out &out, const RequestRecord &record)
{
    bytes(out, record.requestId);
    number(out, record.sequence);
    bytes(out, record.traceId);
    bytes(out, record.spanId);
    bytes(out, record.parentSpanId);
    bytes(out, record.shadowOf);
    bytes(out, record.shadowRequestId);
    number(out, record.startedAtUtc.isValid());
    number(out, record.startedAtUtc.isValid() ? record.startedAtUtc.toMSecsSinceEpoch() : 0);
    for (const QString *field :
         {&record.operation, &record.endpoint, &record.tenant, &record.keyId, &record.model,
          &record.route, &record.tier, &record.provider, &record.upstreamModel, &record.outcome,
          &record.errorClass, &record.responseCache, &record.finishReason})
        text(out, *field);
    number(out, record.streamed);
    number(out, record.status);
    number(out, record.attempts);
    number(out, record.degradedLevel);
    for (qint64 field :
         {record.totalMicros, record.timeToFirstByteMicros, record.queuedMicros, record.inputTokens,
          record.outputTokens, record.cacheReadTokens, record.cacheWriteTokens})
        number(out, field);
    number(out, record.tokensEstimated);
    number(out, record.costUsd);
    number(out, record.cacheSavedUsd);
    number(out, record.priced);
    number(out, record.responseCacheSavedUsd);
}

RequestRecord unpackRecordFrom(Read &in)
{
    RequestRecord record;
    record.requestId = in.bytes();
    record.sequence = in.number<quint64>();
    record.traceId = in.bytes();
    record.spanId = in.bytes();
    record.parentSpanId = in.bytes();
    record.shadowOf = in.bytes();
    record.shadowRequestId = in.bytes();
    const bool startedAtValid = in.number<bool>();
    const qint64 startedAtMs = in.number<qint64>();
    if (startedAtValid)
        record.startedAtUtc = QDateTime::fromMSecsSinceEpoch(startedAtMs, Qt::UTC);
    for (QString *field :
         {&record.operation, &record.endpoint, &record.tenant, &record.keyId, &record.model,
          &record.route, &record.tier, &record.provider, &record.upstreamModel, &record.outcome,
          &record.errorClass, &record.responseCache, &record.finishReason})
        *field = in.text();
    record.streamed = in.number<bool>();
    record.status = in.number<int>();
    record.attempts = in.number<int>();
    record.degradedLevel = in.number<int>();
    for (qint64 *field : {&record.totalMicros, &record.timeToFirstByteMicros, &record.queuedMicros,
                          &record.inputTokens, &record.outputTokens, &record.cacheReadTokens,
                          &record.cacheWriteTokens})
        *field = in.number<qint64>();
    record.tokensEstimated = in.number<bool>();
    record.costUsd = in.number<double>();
    record.cacheSavedUsd = in.number<double>();
    record.priced = in.number<bool>();
    record.responseCacheSavedUsd = in.number<double>();
    return record;
}

template <typename Out>
void pack(Out &out, const Trace &trace)
{
    packRecord(out, trace);
    number(out, qint32(trace.explainSteps.size()));
    for (const QString &step : trace.explainSteps)
        text(out, step);
    number(out, qint32(trace.spans.size()));
    for (const Span &span : trace.spans) {
        text(out, span.name);
        number(out, span.startMicros);
        number(out, span.durationMicros);
        const bool explanation = span.kind == SpanKind::Event && !span.detail.isEmpty() &&
                                 isJoinedExplanation(span.detail, trace.explainSteps);
        number(out, explanation);
        if (!explanation)
            text(out, span.detail);
        number(out, span.kind);
        number(out, span.attempt);
        number(out, span.httpStatus);
        bytes(out, span.spanId);
        text(out, span.provider);
        text(out, span.upstreamModel);
        text(out, span.outcome);
        text(out, span.errorClass);
        number(out, span.bytes);
    }
    number(out, qint32(trace.chunks.size()));
    out.raw(trace.chunks.data(), qsizetype(trace.chunks.size() * sizeof(ChunkMark)));
    number(out, trace.chunkCount);
    number(out, trace.chunkBytes);
    bytes(out, trace.method);
    bytes(out, trace.path);
    number(out, qint32(trace.requestHeaders.size()));
    for (const auto &[name, value] : trace.requestHeaders) {
        bytes(out, name);
        bytes(out, value);
    }
    bytes(out, trace.requestBody);
    bytes(out, trace.responseBody);
    number(out, trace.bodiesKept);
    number(out, trace.requestBodyCut);
    number(out, trace.responseBodyCut);
}

QByteArray packed(const Trace &trace)
{
    Measure measure;
    pack(measure, trace);
    QByteArray block(measure.size(), Qt::Uninitialized);
    Write write(block.data());
    pack(write, trace);
    return block;
}

} // namespace

qint64 TraceRing::bytesOf(const Stored &stored)
{
    // The block and its header, and the ring's own entry for it.
    return stored.packed.capacity() + 16 + qint64(sizeof(Stored));
}

RequestRecord TraceRing::unpackRecord(const QByteArray &packed)
{
    Read in(packed);
    return unpackRecordFrom(in);
}

Trace TraceRing::unpack(const QByteArray &packed)
{
    Read in(packed);
    Trace trace;
    static_cast<RequestRecord &>(trace) = unpackRecordFrom(in);
    const qint32 steps = in.number<qint32>();
    trace.explainSteps.reserve(steps);
    for (qint32 i = 0; i < steps; ++i)
        trace.explainSteps.append(in.text());
    trace.spans.resize(in.number<qint32>());
    for (Span &span : trace.spans) {
        span.name = in.text();
        span.startMicros = in.number<qint64>();
        span.durationMicros = in.number<qint64>();
        span.detail = in.number<bool>() ? trace.explainSteps.join(QStringLiteral("; ")) : in.text();
        span.kind = in.number<SpanKind>();
        span.attempt = in.number<int>();
        span.httpStatus = in.number<int>();
        span.spanId = in.bytes();
        span.provider = in.text();
        span.upstreamModel = in.text();
        span.outcome = in.text();
        span.errorClass = in.text();
        span.bytes = in.number<qint64>();
    }
    trace.chunks.resize(size_t(in.number<qint32>()));
    for (ChunkMark &mark : trace.chunks)
        mark = in.number<ChunkMark>();
    trace.chunkCount = in.number<quint32>();
    trace.chunkBytes = in.number<qint64>();
    trace.method = in.bytes();
    trace.path = in.bytes();
    const qint32 headers = in.number<qint32>();
    trace.requestHeaders.reserve(headers);
    for (qint32 i = 0; i < headers; ++i) {
        QByteArray name = in.bytes();
        trace.requestHeaders.append({std::move(name), in.bytes()});
    }
    trace.requestBody = in.bytes();
    trace.responseBody = in.bytes();
    trace.bodiesKept = in.number<bool>();
    trace.requestBodyCut = in.number<bool>();
    trace.responseBodyCut = in.number<bool>();
    return trace;
}

void TraceRing::add(const Trace &trace)
{
    Stored stored{trace.sequence, packed(trace)};
    m_bytes += bytesOf(stored);
    m_traces.push_back(std::move(stored));
    // The newest always stays, even a trace larger than the whole bound.
    while (m_traces.size() > 1 && (int(m_traces.size()) > m_capacity || m_bytes > m_maxBytes)) {
        m_bytes -= bytesOf(m_traces.front());
        m_traces.pop_front();
        ++m_dropped;
    }
}

std::optional<Trace> TraceRing::find(QByteArrayView requestId) const
{
    for (auto it = m_traces.rbegin(); it != m_traces.rend(); ++it) {
        Read in(it->packed);
        if (in.bytesInPlace() == requestId)
            return unpack(it->packed);
    }
    return std::nullopt;
}

QList<Trace> TraceRing::latest(int count) const
{
    QList<Trace> result;
    for (auto it = m_traces.rbegin(); it != m_traces.rend() && result.size() < count; ++it)
        result.append(unpack(it->packed));
    return result;
}

namespace {
// `prefix`, then `bytes` fresh random bytes as lower-case hex: one allocation, made by every
// request several times.
QByteArray randomHex(int bytes, QByteArrayView prefix = {})
{
    std::array<quint32, 4> words{};
    Q_ASSERT(bytes % 4 == 0 && bytes / 4 <= int(words.size()));
    QRandomGenerator::global()->fillRange(words.data(), qsizetype(bytes / 4));
    const auto *raw = reinterpret_cast<const unsigned char *>(words.data());
    static constexpr char kDigits[] = "0123456789abcdef";
    QByteArray text(prefix.size() + 2 * bytes, Qt::Uninitialized);
    char *out = std::copy(prefix.begin(), prefix.end(), text.data());
    for (int i = 0; i < bytes; ++i) {
        *out++ = kDigits[raw[i] >> 4];
        *out++ = kDigits[raw[i] & 0xf];
    }
    return text;
}

bool isLowerHex(QByteArrayView text)
{
    for (char c : text) {
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}
} // namespace

QByteArray newTraceId()
{
    return randomHex(16);
}

QByteArray newSpanId()
{
    return randomHex(8);
}

QByteArray newRequestId()
{
    return randomHex(12, "req_");
}

std::optional<TraceParent> parseTraceparent(QByteArrayView traceparent)
{
    // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters.
    const QByteArrayView value = traceparent.trimmed();
    if (value.size() != 55 || value[2] != '-' || value[35] != '-' || value[52] != '-')
        return std::nullopt;
    const QByteArrayView traceId = value.sliced(3, 32);
    const QByteArrayView parentId = value.sliced(36, 16);
    if (!isLowerHex(value.first(2)) || value.first(2) == "ff" || !isLowerHex(traceId) ||
        !isLowerHex(parentId) || !isLowerHex(value.sliced(53, 2)))
        return std::nullopt;
    if (traceId == QByteArrayView("00000000000000000000000000000000") ||
        parentId == QByteArrayView("0000000000000000"))
        return std::nullopt;
    return TraceParent{traceId.toByteArray(), parentId.toByteArray()};
}

QByteArray traceIdFromTraceparent(QByteArrayView traceparent)
{
    const std::optional<TraceParent> parsed = parseTraceparent(traceparent);
    return parsed ? parsed->traceId : QByteArray();
}

QByteArray formatTraceparent(const QByteArray &traceId, const QByteArray &spanId)
{
    QByteArray traceparent;
    traceparent.reserve(3 + traceId.size() + 1 + spanId.size() + 3);
    return traceparent.append("00-", 3).append(traceId).append('-').append(spanId).append("-01", 3);
}

} // namespace switchyard::telemetry
