#pragma once

#include <QDateTime>
#include <QtGlobal>
#include <atomic>
#include <chrono>

namespace switchyard::timing {

// The one seam between the code and time. Breaker periods, latency windows, ramps, deadlines and
// a trace's spans read steady time through it; event stamps, a request's start and the budgets'
// UTC days and months read the wall time through it. Tests step a ManualClock by hand instead of
// sleeping, or waiting for midnight.
class Clock {
public:
    using TimePoint = std::chrono::steady_clock::time_point;

    virtual ~Clock() = default;
    // Monotonic time for every duration.
    virtual TimePoint now() const = 0;
    // Wall-clock time, only to stamp what people read and to place calendar windows.
    virtual qint64 msSinceEpoch() const = 0;
    // The same wall time as a UTC date and time.
    QDateTime utcNow() const { return QDateTime::fromMSecsSinceEpoch(msSinceEpoch(), Qt::UTC); }
};

// The system's clocks. Stateless, so any thread may read it.
class SteadyClock final : public Clock {
public:
    TimePoint now() const override { return std::chrono::steady_clock::now(); }
    qint64 msSinceEpoch() const override { return QDateTime::currentMSecsSinceEpoch(); }

    // One is enough for a process; the registry takes it by default.
    static const SteadyClock &instance()
    {
        static const SteadyClock clock;
        return clock;
    }
};

// A clock that moves only when told, for tests: its steady and wall times move together. Any
// thread may read it while the test moves it (a usage ledger reads it on its writer's thread).
class ManualClock final : public Clock {
public:
    // 2023-11-14T22:13:20Z: any fixed instant, so event timestamps in tests are exact.
    static constexpr qint64 kStartMsSinceEpoch = 1'700'000'000'000;

    explicit ManualClock(qint64 startMsSinceEpoch = kStartMsSinceEpoch)
        : m_startMsSinceEpoch(startMsSinceEpoch)
    {}
    explicit ManualClock(const QDateTime &start) : ManualClock(start.toMSecsSinceEpoch()) {}

    TimePoint now() const override { return kStart + TimePoint::duration(m_elapsed.load()); }
    qint64 msSinceEpoch() const override
    {
        return m_startMsSinceEpoch + std::chrono::duration_cast<std::chrono::milliseconds>(
                                         TimePoint::duration(m_elapsed.load()))
                                         .count();
    }
    void advance(TimePoint::duration by) { m_elapsed += by.count(); }
    // Moves both times on until the wall time reads `msSinceEpoch`. Steady time never runs
    // backwards, so an earlier time is a mistake in the test.
    void advanceTo(qint64 msSinceEpoch)
    {
        const qint64 step = msSinceEpoch - this->msSinceEpoch();
        if (step < 0)
            qFatal("ManualClock::advanceTo: %lld ms earlier than the clock", -step);
        advance(std::chrono::milliseconds(step));
    }
    void advanceTo(const QDateTime &at) { advanceTo(at.toMSecsSinceEpoch()); }

private:
    // Far from the epoch of the steady clock, so "an hour ago" is still a valid time point.
    static constexpr TimePoint kStart = TimePoint(std::chrono::hours(24));
    const qint64 m_startMsSinceEpoch;
    std::atomic<TimePoint::rep> m_elapsed{0}; // since kStart
};

} // namespace switchyard::timing
