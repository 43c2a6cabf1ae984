#include "posting/background_poster.h"

#include <utility>

namespace switchyard::posting {

namespace {

qint64 steadyNanos(std::chrono::steady_clock::time_point at)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

} // namespace

bool CutOff::reached() const
{
    return steadyNanos(std::chrono::steady_clock::now()) >= m_atSteadyNanos.load();
}

void CutOff::arriveAfter(std::chrono::milliseconds grace)
{
    m_atSteadyNanos = steadyNanos(std::chrono::steady_clock::now() + grace);
}

quint64 WarningThrottle::count(TimePoint now, quint64 happenings)
{
    m_unwarned += happenings;
    if (m_unwarned == 0)
        return 0;
    if (m_lastWarning && now - *m_lastWarning < m_period)
        return 0;
    m_lastWarning = now;
    return std::exchange(m_unwarned, 0);
}

} // namespace switchyard::posting
