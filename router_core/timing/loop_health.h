#pragma once

#include <QtGlobal>
#include <algorithm>
#include <array>
#include <chrono>

namespace switchyard::timing {

// How well the engine thread keeps up: how late it ran its due timers, as the engine's lag
// monitor measured them. Executions read it when a provider seems slow: with the loop this late,
// the answer may be sitting unread in a socket, and the timeout is the gateway's own doing.
//
// The last tick alone is not enough to judge a timeout by: a timeout that fires as the loop
// catches up with a backlog may run before the monitor's own late tick does, or after a later
// tick that was on time. So the monitor keeps its recent ticks, and a timeout asks for the worst
// lateness within its own wait, the tick overdue at this moment included. Engine thread only.
struct LoopHealth {
    using Clock = std::chrono::steady_clock;

    double lagMs = 0.0; // the last tick's

    // The monitor's tick: how late it ran (at `atMs`, steady milliseconds), and when the next
    // one is due.
    void recordTick(qint64 atMs, double tickLagMs, qint64 nextDueMs)
    {
        lagMs = tickLagMs;
        m_ticks[m_next] = {atMs, tickLagMs};
        m_next = (m_next + 1) % int(m_ticks.size());
        m_nextDueMs = nextDueMs;
    }

    // The worst lateness of the loop over the last `windowMs` until now: of the ticks run in that
    // time (a tick late by L ran behind for the L before it), of the tick due and not yet run,
    // and the last tick's.
    double worstLagWithin(qint64 windowMs, qint64 nowMs) const
    {
        double worst = lagMs;
        if (m_nextDueMs > 0 && nowMs > m_nextDueMs)
            worst = std::max(worst, double(nowMs - m_nextDueMs));
        for (const Tick &tick : m_ticks) {
            if (tick.atMs > 0 && tick.atMs >= nowMs - windowMs)
                worst = std::max(worst, tick.lagMs);
        }
        return worst;
    }

    static qint64 nowMs()
    {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   Clock::now().time_since_epoch())
            .count();
    }

private:
    struct Tick {
        qint64 atMs = 0;
        double lagMs = 0.0;
    };
    // At the monitor's ten ticks a second, the last 25.6 s: longer than the default first-token
    // and idle limits.
    std::array<Tick, 256> m_ticks{};
    int m_next = 0;
    qint64 m_nextDueMs = 0;
};

} // namespace switchyard::timing
