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
    // The median and p95, computed at most once per change of the samples: routing reads the
    // median on every decision, while samples change once per finished call.
    double p50() const;
    double p95() const;
    int size() const { return m_count; }

private:
    void refreshCache() const;

    std::array<double, kCapacity> m_samples{};
    int m_next = 0;
    int m_count = 0;
    mutable bool m_cacheValid = false;
    mutable double m_p50 = -1.0;
    mutable double m_p95 = -1.0;
};

} // namespace switchyard::health
