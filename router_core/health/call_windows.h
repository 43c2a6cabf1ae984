#pragma once

#include "timing/clock.h"

#include <QList>
#include <array>
#include <chrono>

namespace switchyard::health {

// Whether each of the last `capacity` calls failed, with the failures counted as they come and
// go, so the breaker's failure-rate rule and routing's success ratio are O(1).
class OutcomeWindow {
public:
    explicit OutcomeWindow(int capacity);

    void record(bool failed);
    void clear();
    int size() const { return m_count; }
    int failures() const { return m_failures; }
    double failureRatio() const { return m_count == 0 ? 0.0 : double(m_failures) / m_count; }

private:
    QList<bool> m_failed;
    int m_next = 0;
    int m_count = 0;
    int m_failures = 0;
};

// Successful calls over the last `span` of time, and how many of them were slower than a
// threshold. Counting, not sorting: "p95 above T" holds exactly when more than 5 % of the calls
// took longer than T, so the slow rule needs no percentile. Time is cut into kBuckets slices;
// a slice leaves the window whole, so the span is honoured to within one slice.
class SlowCallWindow {
public:
    static constexpr int kBuckets = 60;

    SlowCallWindow(std::chrono::milliseconds span, double slowAboveMs);

    void record(timing::Clock::TimePoint now, double latencyMs);
    void clear();
    // Both forget the slices that have left the window first.
    int calls(timing::Clock::TimePoint now);
    int slowCalls(timing::Clock::TimePoint now);
    // True when the nearest-rank p95 of the calls in the window is above the threshold.
    bool p95IsSlow(timing::Clock::TimePoint now);
    double slowAboveMs() const { return m_slowAboveMs; }

private:
    struct Bucket {
        int calls = 0;
        int slow = 0;
    };
    qint64 sliceOf(timing::Clock::TimePoint now) const;
    void expireBefore(qint64 slice);

    std::chrono::nanoseconds m_sliceWidth;
    double m_slowAboveMs;
    std::array<Bucket, kBuckets> m_buckets{};
    qint64 m_lastSlice = -1; // -1 until the first call
    int m_calls = 0;
    int m_slow = 0;
};

} // namespace switchyard::health
