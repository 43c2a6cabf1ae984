#include "limits/tenant_quota.h"

#include <algorithm>
#include <cmath>

namespace switchyard::limits {

using std::chrono::milliseconds;

namespace {

// Buckets of tenants that went quiet are dropped once this many exist: a client inventing a
// tenant per request must not grow memory without bound. A full bucket holds no information.
constexpr int kBucketsBeforePruning = 10'000;

int burstOf(const config::TenantLimit &limit)
{
    return limit.burst > 0 ? limit.burst : limit.requestsPerMinute;
}

double tokensPerMs(const config::TenantLimit &limit)
{
    return double(limit.requestsPerMinute) / 60'000.0;
}

} // namespace

InMemoryTenantQuota::Bucket &InMemoryTenantQuota::refilled(const QString &tenant,
                                                           const config::TenantLimit &limit,
                                                           timing::Clock::TimePoint now)
{
    auto it = m_buckets.find(tenant);
    if (it == m_buckets.end()) {
        if (m_buckets.size() >= kBucketsBeforePruning)
            dropFullBuckets(now);
        it = m_buckets.insert(tenant, Bucket{double(burstOf(limit)), now});
    }
    m_limits.insert(tenant, limit);
    Bucket &bucket = *it;
    const double elapsedMs = double(std::max<qint64>(
        0, std::chrono::duration_cast<milliseconds>(now - bucket.refilledAt).count()));
    bucket.tokens =
        std::min(double(burstOf(limit)), bucket.tokens + elapsedMs * tokensPerMs(limit));
    bucket.refilledAt = now;
    return bucket;
}

namespace {
// The epsilon absorbs rounding in the refill sums: a token due now is here now.
constexpr double kRounding = 1e-9;

milliseconds untilWhole(double tokens, const config::TenantLimit &limit)
{
    return milliseconds(std::llround(std::ceil((1.0 - tokens - kRounding) / tokensPerMs(limit))));
}
} // namespace

std::optional<milliseconds> InMemoryTenantQuota::take(const QString &tenant,
                                                      const config::TenantLimit &limit,
                                                      timing::Clock::TimePoint now)
{
    Bucket &bucket = refilled(tenant, limit, now);
    if (bucket.tokens >= 1.0 - kRounding) {
        bucket.tokens = std::max(0.0, bucket.tokens - 1.0);
        return std::nullopt;
    }
    return untilWhole(bucket.tokens, limit);
}

std::optional<milliseconds> InMemoryTenantQuota::waitFor(const QString &bucketName,
                                                         const config::TenantLimit &limit,
                                                         timing::Clock::TimePoint now)
{
    const Bucket &bucket = refilled(bucketName, limit, now);
    if (bucket.tokens >= 1.0 - kRounding)
        return std::nullopt;
    return untilWhole(bucket.tokens, limit);
}

void InMemoryTenantQuota::spend(const QString &bucketName, const config::TenantLimit &limit,
                                qint64 amount, timing::Clock::TimePoint now)
{
    refilled(bucketName, limit, now).tokens -= double(std::max<qint64>(0, amount));
}

double InMemoryTenantQuota::level(const QString &bucketName, const config::TenantLimit &limit,
                                  timing::Clock::TimePoint now)
{
    return refilled(bucketName, limit, now).tokens;
}

void InMemoryTenantQuota::lowerTo(const QString &bucketName, const config::TenantLimit &limit,
                                  double tokens, timing::Clock::TimePoint now)
{
    Bucket &bucket = refilled(bucketName, limit, now);
    bucket.tokens = std::min(bucket.tokens, tokens);
}

void InMemoryTenantQuota::dropFullBuckets(timing::Clock::TimePoint now)
{
    for (auto it = m_buckets.begin(); it != m_buckets.end();) {
        const config::TenantLimit limit = m_limits.value(it.key());
        const double elapsedMs =
            double(std::chrono::duration_cast<milliseconds>(now - it->refilledAt).count());
        if (it->tokens + elapsedMs * tokensPerMs(limit) >= double(burstOf(limit))) {
            m_limits.remove(it.key());
            it = m_buckets.erase(it);
        } else {
            ++it;
        }
    }
}

} // namespace switchyard::limits
