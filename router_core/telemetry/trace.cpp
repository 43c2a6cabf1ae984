#include "telemetry/trace.h"

#include <QRandomGenerator>

namespace switchyard::telemetry {

const Span *Trace::span(const QString &name) const
{
    for (const Span &candidate : spans) {
        if (candidate.name == name)
            return &candidate;
    }
    return nullptr;
}

TraceBuilder::TraceBuilder(QByteArray requestId, QByteArray traceId)
{
    m_clock.start();
    m_trace.requestId = std::move(requestId);
    m_trace.traceId = std::move(traceId);
    m_trace.startedAtUtc = QDateTime::currentDateTimeUtc();
}

int TraceBuilder::openSpan(const QString &name, const QString &detail)
{
    m_trace.spans.append(Span{name, elapsedMicros(), -1, detail});
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

void TraceBuilder::pointEvent(const QString &name, const QString &detail)
{
    m_trace.spans.append(Span{name, elapsedMicros(), 0, detail});
}

Trace TraceBuilder::finish(int status, const QString &outcome)
{
    for (int i = 0; i < m_trace.spans.size(); ++i)
        closeSpan(i);
    m_trace.status = status;
    m_trace.outcome = outcome;
    m_trace.totalMicros = elapsedMicros();
    return m_trace;
}

void TraceRing::add(Trace trace)
{
    if (int(m_traces.size()) == m_capacity) {
        m_traces.pop_front();
        ++m_dropped;
    }
    m_traces.push_back(std::move(trace));
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
QByteArray randomHex(int bytes)
{
    QByteArray raw(bytes, Qt::Uninitialized);
    QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(raw.data()), bytes / 4);
    return raw.toHex();
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

QByteArray newRequestId()
{
    return "req_" + randomHex(12);
}

QByteArray traceIdFromTraceparent(QByteArrayView traceparent)
{
    // version "-" trace-id "-" parent-id "-" flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters.
    const QByteArrayView value = traceparent.trimmed();
    if (value.size() != 55 || value[2] != '-' || value[35] != '-' || value[52] != '-')
        return {};
    const QByteArrayView traceId = value.sliced(3, 32);
    if (!isLowerHex(value.first(2)) || value.first(2) == "ff" || !isLowerHex(traceId) ||
        !isLowerHex(value.sliced(36, 16)) || !isLowerHex(value.sliced(53, 2)))
        return {};
    if (traceId == QByteArrayView("00000000000000000000000000000000"))
        return {};
    return traceId.toByteArray();
}

} // namespace switchyard::telemetry
