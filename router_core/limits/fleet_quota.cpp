#include "limits/fleet_quota.h"

#include "redis/redis_link.h"

#include <QDateTime>
#include <algorithm>

namespace switchyard::limits {

using namespace Qt::StringLiterals;
using std::chrono::milliseconds;

namespace {

// A node that admitted this fraction of a bucket's burst since its last exchange exchanges at
// once rather than at the next sync: the nodes hear of each other's spending as fast as they
// spend, so what they may admit twice stays near a fiftieth of the burst per node.
constexpr int kEarlyExchangeDivisor = 50;
// A bucket unused this long is forgotten here; its counter in Redis outlives it by far.
constexpr auto kForgetAfter = std::chrono::minutes(2);
// Counters and levels expire in Redis when no node has touched them for this long.
const QByteArray kKeepInRedisMs = QByteArray::number(10 * 60 * 1000);

int burstOf(const config::TenantLimit &limit)
{
    return limit.burst > 0 ? limit.burst : limit.requestsPerMinute;
}

} // namespace

FleetQuota::FleetQuota(redis::Link &link, QByteArray keyPrefix, QByteArray scope,
                       std::function<int()> liveNodes, const timing::Clock &clock)
    : m_link(link), m_keyPrefix(keyPrefix + "quota:" + scope + ':'),
      m_liveNodes(std::move(liveNodes)), m_clock(clock)
{}

int FleetQuota::nodes() const
{
    return std::max(1, m_liveNodes ? m_liveNodes() : 1);
}

config::TenantLimit FleetQuota::effective(const config::TenantLimit &limit) const
{
    if (m_link.isUp())
        return limit;
    const int live = nodes();
    config::TenantLimit share;
    share.requestsPerMinute = std::max(1, limit.requestsPerMinute / live);
    share.burst = std::max(1, burstOf(limit) / live);
    return share;
}

FleetQuota::Shared &FleetQuota::shared(const QString &bucket, const config::TenantLimit &limit,
                                       timing::Clock::TimePoint now)
{
    Shared &entry = m_shared[bucket];
    entry.limit = limit;
    entry.lastUsed = now;
    return entry;
}

std::optional<milliseconds> FleetQuota::take(const QString &bucket,
                                             const config::TenantLimit &limit,
                                             timing::Clock::TimePoint now)
{
    Shared &entry = shared(bucket, limit, now);
    const std::optional<milliseconds> wait = m_local.take(bucket, effective(limit), now);
    if (!wait) {
        ++entry.unsynced;
        exchangeEarlyIfBusy(bucket, entry);
    }
    return wait;
}

std::optional<milliseconds> FleetQuota::waitFor(const QString &bucket,
                                                const config::TenantLimit &limit,
                                                timing::Clock::TimePoint now)
{
    shared(bucket, limit, now);
    return m_local.waitFor(bucket, effective(limit), now);
}

void FleetQuota::spend(const QString &bucket, const config::TenantLimit &limit, qint64 amount,
                       timing::Clock::TimePoint now)
{
    Shared &entry = shared(bucket, limit, now);
    m_local.spend(bucket, effective(limit), amount, now);
    entry.unsynced += std::max<qint64>(0, amount);
    exchangeEarlyIfBusy(bucket, entry);
}

QByteArray FleetQuota::counterKey(const QString &bucket) const
{
    return m_keyPrefix + bucket.toUtf8() + ":spent";
}

QByteArray FleetQuota::levelKey(const QString &bucket) const
{
    return m_keyPrefix + bucket.toUtf8() + ":level";
}

void FleetQuota::sync()
{
    if (!m_link.isUp())
        return; // what is spent meanwhile waits in `unsynced`
    const timing::Clock::TimePoint now = m_clock.now();
    for (auto it = m_shared.begin(); it != m_shared.end();) {
        if (it->inFlight == 0 && it->unsynced == 0 && now - it->lastUsed > kForgetAfter) {
            it = m_shared.erase(it);
            continue;
        }
        exchange(it.key(), *it, now);
        ++it;
    }
}

void FleetQuota::exchange(const QString &bucket, Shared &entry, timing::Clock::TimePoint now)
{
    if (entry.inFlight != 0)
        return; // one exchange per bucket at a time keeps the arithmetic exact
    if (!entry.joined) {
        m_link.send({"GET", levelKey(bucket)}, [this, bucket](const redis::Result &result) {
            if (result.ok() && !result.reply.isNil())
                joinAtLevel(bucket, result.reply.text);
        });
    }
    const qint64 sent = std::exchange(entry.unsynced, 0);
    // Marks the exchange as running even when nothing is sent: 0 is a valid INCRBY.
    entry.inFlight = sent > 0 ? sent : -1;
    const QByteArray counter = counterKey(bucket);
    m_link.send({"INCRBY", counter, QByteArray::number(sent)},
                [this, bucket, sent](const redis::Result &result) {
                    if (result.ok())
                        counted(bucket, sent, result.reply.integer);
                    else
                        uncounted(bucket, sent);
                });
    if (sent > 0) {
        m_link.send({"PEXPIRE", counter, kKeepInRedisMs}, {});
        const double level = m_local.level(bucket, effective(entry.limit), now);
        m_link.send({"SET", levelKey(bucket),
                     QByteArray::number(level, 'f', 3) + '@' +
                         QByteArray::number(QDateTime::currentMSecsSinceEpoch()),
                     "PX", kKeepInRedisMs},
                    {});
    }
}

void FleetQuota::exchangeEarlyIfBusy(const QString &bucket, Shared &entry)
{
    if (m_link.isUp() && entry.inFlight == 0 &&
        entry.unsynced >= std::max(1, burstOf(entry.limit) / kEarlyExchangeDivisor))
        exchange(bucket, entry, m_clock.now());
}

void FleetQuota::counted(const QString &bucket, qint64 sent, qint64 total)
{
    const auto found = m_shared.find(bucket);
    if (found == m_shared.end())
        return;
    Shared &entry = *found;
    entry.inFlight = 0;
    if (!entry.joined) {
        // What others spent before this node used the bucket is in the level it joined at.
        entry.joined = true;
        entry.lastTotal = total;
    } else {
        const qint64 others = total - entry.lastTotal - sent;
        entry.lastTotal = total;
        // Below zero, the counter was lost (Redis restarted empty, or it expired): it starts
        // over from this node's share, and nothing is charged twice.
        if (others > 0)
            m_local.spend(bucket, effective(entry.limit), others, m_clock.now());
    }
    // Spent a lot again while the answer was on its way: exchange again at once.
    exchangeEarlyIfBusy(bucket, entry);
}

void FleetQuota::uncounted(const QString &bucket, qint64 sent)
{
    const auto found = m_shared.find(bucket);
    if (found == m_shared.end())
        return;
    found->unsynced += sent; // told again with the next sync
    found->inFlight = 0;
}

void FleetQuota::joinAtLevel(const QString &bucket, const QByteArray &level)
{
    const auto found = m_shared.find(bucket);
    if (found == m_shared.end())
        return;
    const qsizetype at = level.indexOf('@');
    bool tokensRead = false;
    bool timeRead = false;
    const double tokens = level.left(at).toDouble(&tokensRead);
    const qint64 writtenMs = level.mid(at + 1).toLongLong(&timeRead);
    if (at < 0 || !tokensRead || !timeRead)
        return;
    const config::TenantLimit limit = effective(found->limit);
    // Refilled for the time since it was written, as the writer's bucket has been.
    const double elapsedMs =
        double(std::max<qint64>(0, QDateTime::currentMSecsSinceEpoch() - writtenMs));
    const double now = std::min(double(burstOf(limit)),
                                tokens + elapsedMs * double(limit.requestsPerMinute) / 60'000.0);
    m_local.lowerTo(bucket, limit, now, m_clock.now());
}

int FleetQuota::unsyncedBuckets() const
{
    return int(std::count_if(m_shared.cbegin(), m_shared.cend(),
                             [](const Shared &entry) { return entry.unsynced != 0; }));
}

} // namespace switchyard::limits
