#include "health/latency_window.h"

#include <algorithm>
#include <cmath>

namespace switchyard::health {

void LatencyWindow::record(double milliseconds)
{
    m_samples[m_next] = milliseconds;
    m_next = (m_next + 1) % kCapacity;
    m_count = std::min(m_count + 1, kCapacity);
}

double LatencyWindow::percentile(double p) const
{
    if (m_count == 0)
        return -1.0;
    std::array<double, kCapacity> sorted = m_samples;
    const auto end = sorted.begin() + m_count;
    const int rank = std::clamp(static_cast<int>(std::ceil(p / 100.0 * m_count)), 1, m_count);
    std::nth_element(sorted.begin(), sorted.begin() + (rank - 1), end);
    return sorted[rank - 1];
}

} // namespace switchyard::health
