#pragma once

#include "config/resilience_config.h"
#include "timing/clock.h"

#include <QHash>
#include <QString>
#include <chrono>
#include <optional>

namespace switchyard::limits {

// Per-tenant request counters: in memory for one node (InMemoryTenantQuota), shared through
// Redis for a fleet (FleetQuota).
class TenantQuota {
public:
    virtual ~TenantQuota() = default;
    // Takes one request from the tenant's allowance. Empty when admitted; otherwise how long
    // until the tenant may send the next one.
    virtual std::optional<std::chrono::milliseconds>
    take(const QString &tenant, const config::TenantLimit &limit, timing::Clock::TimePoint now) = 0;

    // For allowances charged after the fact, such as tokens, known only when a request is over:
    // how long until the bucket holds a whole unit again, taking nothing; empty when it does.
    virtual std::optional<std::chrono::milliseconds> waitFor(const QString &bucket,
                                                             const config::TenantLimit &limit,
                                                             timing::Clock::TimePoint now) = 0;
    // Takes `amount` units. The bucket may go below zero: a large request is paid for by the
    // wait before the next one.
    virtual void spend(const QString &bucket, const config::TenantLimit &limit, qint64 amount,
                       timing::Clock::TimePoint now) = 0;
};

// A token bucket per tenant: it holds up to `burst` requests and refills at the per-minute rate.
class InMemoryTenantQuota final : public TenantQuota {
public:
    std::optional<std::chrono::milliseconds> take(const QString &tenant,
                                                  const config::TenantLimit &limit,
                                                  timing::Clock::TimePoint now) override;
    std::optional<std::chrono::milliseconds> waitFor(const QString &bucket,
                                                     const config::TenantLimit &limit,
                                                     timing::Clock::TimePoint now) override;
    void spend(const QString &bucket, const config::TenantLimit &limit, qint64 amount,
               timing::Clock::TimePoint now) override;
    int bucketCount() const { return int(m_buckets.size()); }
    // The tokens the bucket holds at `now` (created full when new).
    double level(const QString &bucket, const config::TenantLimit &limit,
                 timing::Clock::TimePoint now);
    // Lowers the bucket to `tokens` when it holds more: what a fleet says is left of it.
    void lowerTo(const QString &bucket, const config::TenantLimit &limit, double tokens,
                 timing::Clock::TimePoint now);

private:
    struct Bucket {
        double tokens = 0.0;
        timing::Clock::TimePoint refilledAt;
    };
    void dropFullBuckets(timing::Clock::TimePoint now);
    // The bucket, created full and refilled up to `now`.
    Bucket &refilled(const QString &bucket, const config::TenantLimit &limit,
                     timing::Clock::TimePoint now);

    QHash<QString, Bucket> m_buckets;
    QHash<QString, config::TenantLimit> m_limits; // each bucket's limit, for pruning
};

} // namespace switchyard::limits
