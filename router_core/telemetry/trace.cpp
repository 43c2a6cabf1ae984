#include "telemetry/trace.h"

#include <QRandomGenerator>
#include <algorithm>
#include <array>

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

qint64 Trace::approximateBytes() const
{
    qint64 bytes = qint64(sizeof(Trace)) + requestBody.size() + responseBody.size() +
                   qint64(chunks.capacity() * sizeof(ChunkMark));
    for (const Span &span : spans)
        bytes += qint64(sizeof(Span)) + 2 * (span.name.size() + span.detail.size());
    for (const QString &step : explainSteps)
        bytes += 2 * step.size() + 16;
    for (const auto &[name, value] : requestHeaders)
        bytes += name.size() + value.size() + 32;
    return bytes;
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

void TraceRing::add(Trace trace)
{
    Stored stored;
    static_cast<Trace &>(stored) = std::move(trace);
    stored.bytes = stored.approximateBytes();
    m_bytes += stored.bytes;
    m_traces.push_back(std::move(stored));
    // The newest always stays, even a trace larger than the whole bound.
    while (m_traces.size() > 1 && (int(m_traces.size()) > m_capacity || m_bytes > m_maxBytes)) {
        m_bytes -= m_traces.front().bytes;
        m_traces.pop_front();
        ++m_dropped;
    }
}

std::optional<Trace> TraceRing::find(const QByteArray &requestId) const
{
    for (auto it = m_traces.rbegin(); it != m_traces.rend(); ++it) {
        if (it->requestId == requestId)
            return *it;
    }
    return std::nullopt;
}

QList<Trace> TraceRing::latest(int count) const
{
    QList<Trace> result;
    for (auto it = m_traces.rbegin(); it != m_traces.rend() && result.size() < count; ++it)
        result.append(*it);
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
