#include "metrics/loop_lag_monitor.h"

#include <algorithm>

namespace switchyard::metrics {

LoopLagMonitor::LoopLagMonitor(Observer observer, QObject *parent)
    : QObject(parent), m_observer(std::move(observer))
{
    // A coarse timer may fire up to 5 % early or late by design: that slack is not lag.
    m_timer.setTimerType(Qt::PreciseTimer);
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &LoopLagMonitor::tick);
}

void LoopLagMonitor::start(std::chrono::milliseconds interval)
{
    m_interval = interval;
    m_clock.start();
    m_dueNanos = m_clock.nsecsElapsed() + m_interval.count();
    m_timer.start(interval);
}

void LoopLagMonitor::tick()
{
    const qint64 now = m_clock.nsecsElapsed();
    // A precise timer can still fire a fraction of a millisecond early: that is not negative lag.
    const double lagMs = double(std::max<qint64>(0, now - m_dueNanos)) / 1e6;
    m_lastLagMs = lagMs;
    if (m_observer)
        m_observer(lagMs / 1e3);
    m_dueNanos = now + m_interval.count();
    m_timer.start(std::chrono::duration_cast<std::chrono::milliseconds>(m_interval));
}

} // namespace switchyard::metrics
