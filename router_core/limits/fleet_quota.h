#pragma once

#include "limits/tenant_quota.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <functional>

namespace switchyard::redis {
class Link;
}

namespace switchyard::limits {

// A token bucket per tenant or key that holds across a fleet of gateways (docs/fleet.md,
// "Limits"). Each node decides on its own, from a local bucket, so a request makes no Redis round
// trip; every sync interval the node adds what it spent to a counter per bucket in Redis and
// takes from its local bucket what the other nodes spent since (the counter's growth beyond its
// own share). Every node's bucket thus refills at the full rate and pays for the whole fleet's
// traffic: the fleet admits what one node would, plus what the other nodes admit before they
// hear of each other. A bucket may go below zero then, and the
// overshoot is paid back by the wait that follows.
//
// A node that meets a bucket for the first time starts it at the level the fleet last reported
// for it (each node publishes its level as it syncs), not full, so a key drained on one node is
// not fresh on the next.
//
// A busy bucket does not wait for the timer: a node that admitted a fiftieth of its burst since
// its last exchange exchanges at once (one exchange per bucket on the wire at a time), so the
// overshoot is near (nodes - 1) x burst / 50, whatever the request rate; a quiet bucket costs
// one exchange per sync interval while it is in use, and none two minutes after.
//
// While Redis is unreachable each node counts alone, with the limit divided by the number of
// nodes it last saw live, so the fleet as a whole stays near its limit; what it spent meanwhile
// is added to the counters when the link is back.
class FleetQuota final : public TenantQuota {
public:
    // `scope` keeps the counters of different owners apart (`keys`, `tenants`); `keyPrefix` is
    // the fleet's (`switchyard:NAME:`). `liveNodes` says how many nodes share the limit while the
    // link is down; at least 1.
    FleetQuota(redis::Link &link, QByteArray keyPrefix, QByteArray scope,
               std::function<int()> liveNodes, const timing::Clock &clock);

    std::optional<std::chrono::milliseconds> take(const QString &bucket,
                                                  const config::TenantLimit &limit,
                                                  timing::Clock::TimePoint now) override;
    std::optional<std::chrono::milliseconds> waitFor(const QString &bucket,
                                                     const config::TenantLimit &limit,
                                                     timing::Clock::TimePoint now) override;
    void spend(const QString &bucket, const config::TenantLimit &limit, qint64 amount,
               timing::Clock::TimePoint now) override;

    // Exchanges the counters of the buckets used lately with Redis: what this node spent goes
    // up, what the others spent comes down. The fleet's sync timer calls it.
    void sync();

    // Buckets whose spending Redis has not yet been told of (for the status and the tests).
    int unsyncedBuckets() const;

private:
    struct Shared {
        config::TenantLimit limit; // the bucket's last limit, to charge the others' spending
        qint64 unsynced = 0;       // spent here, not yet added to the fleet's counter
        qint64 inFlight = 0;       // sent with a sync whose answer has not come
        qint64 lastTotal = 0;      // the fleet's counter as last read
        bool joined = false;       // lastTotal is known
        timing::Clock::TimePoint lastUsed;
    };
    // The limit a bucket runs at now: the whole of it, or its share while Redis is away.
    config::TenantLimit effective(const config::TenantLimit &limit) const;
    Shared &shared(const QString &bucket, const config::TenantLimit &limit,
                   timing::Clock::TimePoint now);
    QByteArray counterKey(const QString &bucket) const;
    QByteArray levelKey(const QString &bucket) const;
    void exchange(const QString &bucket, Shared &entry, timing::Clock::TimePoint now);
    void exchangeEarlyIfBusy(const QString &bucket, Shared &entry);
    void counted(const QString &bucket, qint64 sent, qint64 total);
    int nodes() const;
    void uncounted(const QString &bucket, qint64 sent);
    void joinAtLevel(const QString &bucket, const QByteArray &level);

    redis::Link &m_link;
    QByteArray m_keyPrefix;
    std::function<int()> m_liveNodes;
    const timing::Clock &m_clock;
    InMemoryTenantQuota m_local;
    QHash<QString, Shared> m_shared;
};

} // namespace switchyard::limits
