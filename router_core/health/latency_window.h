#pragma once

#include <QtGlobal>
#include <array>

namespace switchyard::health {

// The last kCapacity samples of a latency, for percentiles. Fixed size: recording is O(1) and
// allocation-free on the request path; percentiles are computed only when a snapshot is taken.
class LatencyWindow {
public:
    static constexpr int kCapacity = 256;

    void record(double milliseconds);
    // Nearest-rank percentile (0 < p <= 100) of the samples held; negative when there are none.
    double percentile(double p) const;
    int size() const { return m_count; }

private:
    std::array<double, kCapacity> m_samples{};
    int m_next = 0;
    int m_count = 0;
};

} // namespace switchyard::health
