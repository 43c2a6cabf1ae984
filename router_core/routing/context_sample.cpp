#include "routing/context_sample.h"

#include "telemetry/trace.h"

#include <algorithm>

namespace switchyard::routing {

ContextSample::ContextSample(const timing::Clock &clock, Bounds bounds)
    : m_clock(clock), m_bounds(bounds), m_startedAt(clock.now())
{}

void ContextSample::offer(const RequestContext &context, const RouteDecision &decision)
{
    ++m_offered;
    if (m_bounds.capacity <= 0 || m_bounds.perMinute <= 0)
        return;
    const timing::Clock::TimePoint now = m_clock.now();
    const qint64 minute = minuteOf(now);
    if (minute != m_minute) {
        m_stride = strideFor(minute);
        m_minute = minute;
        m_seenThisMinute = 0;
        m_takenThisMinute = 0;
    }
    const int position = m_seenThisMinute++;
    if (m_takenThisMinute >= m_bounds.perMinute || position % m_stride != 0)
        return;
    ++m_takenThisMinute;

    SampledRequest taken;
    taken.context = context;
    taken.context.switchyardKeyHeader.clear();
    // No rule should route on a credential, and a sample kept for an hour and shown through the
    // admin API must not hold one: the same headers a trace redacts.
    taken.context.headers.removeIf(
        [](const auto &header) { return telemetry::isCredentialHeader(header.first); });
    taken.routedAt = now;
    taken.routedAtMsSinceEpoch = m_clock.msSinceEpoch();
    taken.rule = decision.rule;
    taken.tier = decision.tier;
    if (decision.refusal == RouteDecision::Refusal::None && !decision.candidates.isEmpty())
        taken.provider = decision.candidates.first().providerId;
    if (m_ring.size() < std::size_t(m_bounds.capacity)) {
        m_ring.push_back(std::move(taken));
    } else {
        m_ring[m_next] = std::move(taken);
        m_next = (m_next + 1) % m_ring.size();
    }
}

qint64 ContextSample::minuteOf(timing::Clock::TimePoint time) const
{
    return std::chrono::duration_cast<std::chrono::minutes>(time - m_startedAt).count();
}

int ContextSample::strideFor(qint64 minute) const
{
    if (minute == m_minute)
        return m_stride;
    // The stride follows the minute before: a quiet gap in between means a quiet last minute.
    const int lastMinute = minute == m_minute + 1 ? m_seenThisMinute : 0;
    return std::max(1, (lastMinute + m_bounds.perMinute - 1) / m_bounds.perMinute);
}

int ContextSample::stride() const
{
    return strideFor(minuteOf(m_clock.now()));
}

QList<SampledRequest> ContextSample::requests() const
{
    // Steady time, so a wall clock set back or forward neither hides nor revives requests.
    const timing::Clock::TimePoint oldest = m_clock.now() - m_bounds.window;
    QList<SampledRequest> inWindow;
    inWindow.reserve(qsizetype(m_ring.size()));
    for (std::size_t i = 0; i < m_ring.size(); ++i) {
        const SampledRequest &request = m_ring[(m_next + i) % m_ring.size()];
        if (request.routedAt >= oldest)
            inWindow.append(request);
    }
    return inWindow;
}

} // namespace switchyard::routing
