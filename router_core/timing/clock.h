#pragma once

#include <QDateTime>
#include <QtGlobal>
#include <chrono>

namespace switchyard::timing {

// The seam between health decisions and time: breaker periods, latency windows and ramps read
// the time only through a Clock, so tests step it by hand instead of sleeping.
class Clock {
public:
    using TimePoint = std::chrono::steady_clock::time_point;

    virtual ~Clock() = default;
    // Monotonic time for every duration.
    virtual TimePoint now() const = 0;
    // Wall-clock time, only to stamp events that people read.
    virtual qint64 msSinceEpoch() const = 0;
};

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

// A clock that moves only when told, for tests of timing rules.
class ManualClock final : public Clock {
public:
    // 2023-11-14T22:13:20Z: any fixed instant, so event timestamps in tests are exact.
    static constexpr qint64 kStartMsSinceEpoch = 1'700'000'000'000;

    TimePoint now() const override { return m_now; }
    qint64 msSinceEpoch() const override
    {
        return kStartMsSinceEpoch +
               std::chrono::duration_cast<std::chrono::milliseconds>(m_now - kStart).count();
    }
    void advance(std::chrono::milliseconds by) { m_now += by; }

private:
    // Far from the epoch of the steady clock, so "an hour ago" is still a valid time point.
    static constexpr TimePoint kStart = TimePoint(std::chrono::hours(24));
    TimePoint m_now = kStart;
};

} // namespace switchyard::timing
