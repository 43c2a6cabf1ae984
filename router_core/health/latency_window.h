#pragma once

#include <QtGlobal>
#include <array>

namespace switchyard::health {

// The last kCapacity samples of a latency, for percentiles. Fixed size: recording is O(1) and
// allocation-free on the request path.
class LatencyWindow {
public:
    static constexpr int kCapacity = 256;

    void record(double milliseconds);
    void clear();
    // Nearest-rank percentile (0 < p <= 100) of the samples held; negative when there are none.
    double percentile(double p) const;
    // The median and p95, cached: routing reads the median on every decision and samples change
    // once per finished call, so under load a recomputation per change was 2 % of the engine
    // thread. Exact while the window fills; once it is full, recomputed after every
    // kRefreshEvery new samples (3 % of the window), which moves a percentile by at most that.
    // Recomputed when a sample is recorded, so that reading them costs a routing decision
    // nothing.
    static constexpr int kRefreshEvery = 8;
    double p50() const;
    double p95() const;
    int size() const { return m_count; }

private:
    void refreshCache() const;

    std::array<double, kCapacity> m_samples{};
    int m_next = 0;
    int m_count = 0;
    mutable bool m_cacheValid = false;
    int m_samplesSinceRefresh = 0;
    mutable double m_p50 = -1.0;
    mutable double m_p95 = -1.0;
};

} // namespace switchyard::health
