#include "health/latency_window.h"

#include <algorithm>
#include <cmath>

namespace switchyard::health {

namespace {

int nearestRank(double p, int count)
{
    return std::clamp(static_cast<int>(std::ceil(p / 100.0 * count)), 1, count);
}

// Copies the `count` samples held into `into` and returns the end of the copy. Until the window
// is full they are the first `count` (record() fills it from the start); the rest of the array
// holds nothing worth copying on every decision.
template <typename Samples>
auto copyHeld(const Samples &samples, int count, Samples &into)
{
    return std::copy_n(samples.begin(), count, into.begin());
}

} // namespace

void LatencyWindow::record(double milliseconds)
{
    m_samples[m_next] = milliseconds;
    m_next = (m_next + 1) % kCapacity;
    m_count = std::min(m_count + 1, kCapacity);
    if (m_count < kCapacity || ++m_samplesSinceRefresh >= kRefreshEvery) {
        m_cacheValid = false;
        m_samplesSinceRefresh = 0;
        // Now, as a call ends, rather than on the next routing decision: that one is on a
        // request's way to its provider, and the sort's two kilobytes have gone cold by then.
        refreshCache();
    }
}

void LatencyWindow::clear()
{
    m_next = 0;
    m_count = 0;
    m_cacheValid = false;
    m_samplesSinceRefresh = 0;
}

double LatencyWindow::percentile(double p) const
{
    if (m_count == 0)
        return -1.0;
    std::array<double, kCapacity> sorted;
    const auto end = copyHeld(m_samples, m_count, sorted);
    const int rank = nearestRank(p, m_count);
    std::nth_element(sorted.begin(), sorted.begin() + (rank - 1), end);
    return sorted[rank - 1];
}

void LatencyWindow::refreshCache() const
{
    if (m_cacheValid)
        return;
    m_cacheValid = true;
    if (m_count == 0) {
        m_p50 = m_p95 = -1.0;
        return;
    }
    std::array<double, kCapacity> sorted;
    copyHeld(m_samples, m_count, sorted);
    const auto begin = sorted.begin();
    const int rank95 = nearestRank(95, m_count);
    const int rank50 = nearestRank(50, m_count);
    // The p95 partition leaves everything below it in front, so the median is searched there.
    std::nth_element(begin, begin + (rank95 - 1), begin + m_count);
    m_p95 = sorted[rank95 - 1];
    std::nth_element(begin, begin + (rank50 - 1), begin + rank95);
    m_p50 = sorted[rank50 - 1];
}

double LatencyWindow::p50() const
{
    refreshCache();
    return m_p50;
}

double LatencyWindow::p95() const
{
    refreshCache();
    return m_p95;
}

} // namespace switchyard::health
