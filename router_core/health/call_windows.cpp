#include "health/call_windows.h"

#include <algorithm>

namespace switchyard::health {

OutcomeWindow::OutcomeWindow(int capacity) : m_failed(std::max(1, capacity), false) {}

void OutcomeWindow::record(bool failed)
{
    if (m_count == m_failed.size())
        m_failures -= m_failed[m_next] ? 1 : 0;
    else
        ++m_count;
    m_failed[m_next] = failed;
    m_failures += failed ? 1 : 0;
    m_next = (m_next + 1) % int(m_failed.size());
}

void OutcomeWindow::clear()
{
    m_next = 0;
    m_count = 0;
    m_failures = 0;
}

SlowCallWindow::SlowCallWindow(std::chrono::milliseconds span, double slowAboveMs)
    : m_sliceWidth(std::max<std::chrono::nanoseconds>(std::chrono::nanoseconds(1),
                                                      std::chrono::nanoseconds(span) / kBuckets)),
      m_slowAboveMs(slowAboveMs)
{}

qint64 SlowCallWindow::sliceOf(timing::Clock::TimePoint now) const
{
    return qint64(now.time_since_epoch() / m_sliceWidth);
}

void SlowCallWindow::expireBefore(qint64 slice)
{
    if (m_lastSlice < 0 || slice <= m_lastSlice)
        return;
    // Each slice between the last one seen and now has left the window (or is about to be
    // reused); after kBuckets of them every bucket has been cleared once.
    const qint64 steps = std::min<qint64>(slice - m_lastSlice, kBuckets);
    for (qint64 step = 1; step <= steps; ++step) {
        Bucket &bucket = m_buckets[std::size_t((m_lastSlice + step) % kBuckets)];
        m_calls -= bucket.calls;
        m_slow -= bucket.slow;
        bucket = {};
    }
    m_lastSlice = slice;
}

void SlowCallWindow::record(timing::Clock::TimePoint now, double latencyMs)
{
    const qint64 slice = sliceOf(now);
    if (m_lastSlice < 0)
        m_lastSlice = slice;
    expireBefore(slice);
    // A time before the newest slice (clocks do not go back, but be safe) counts as the newest.
    Bucket &bucket = m_buckets[std::size_t(m_lastSlice % kBuckets)];
    const bool slow = latencyMs > m_slowAboveMs;
    ++bucket.calls;
    ++m_calls;
    bucket.slow += slow ? 1 : 0;
    m_slow += slow ? 1 : 0;
}

void SlowCallWindow::clear()
{
    m_buckets = {};
    m_lastSlice = -1;
    m_calls = 0;
    m_slow = 0;
}

int SlowCallWindow::calls(timing::Clock::TimePoint now)
{
    expireBefore(sliceOf(now));
    return m_calls;
}

int SlowCallWindow::slowCalls(timing::Clock::TimePoint now)
{
    expireBefore(sliceOf(now));
    return m_slow;
}

bool SlowCallWindow::p95IsSlow(timing::Clock::TimePoint now)
{
    const int count = calls(now);
    if (count == 0)
        return false;
    // Nearest rank: p95 is the ceil(0.95 n)-th smallest sample. It is above the threshold when
    // the samples above it number at least n - ceil(0.95 n) + 1.
    const int rank = (95 * count + 99) / 100;
    return m_slow >= count - rank + 1;
}

} // namespace switchyard::health
