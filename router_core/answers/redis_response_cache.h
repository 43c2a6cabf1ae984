#pragma once

#include "answers/response_cache.h"
#include "redis/redis_link.h"

#include <memory>

namespace switchyard::answers {

// A fleet's response cache, in its Redis (docs/fleet.md): an answer one node kept is a hit on
// every node. Each answer is `PREFIX cache:entry:KEY` with its ttl as the key's expiry; beside
// them `cache:recency` (a sorted set: the number of its last use, from `cache:uses`),
// `cache:expiry` (a sorted set: when each ends), `cache:sizes` (a hash) and `cache:bytes` (their
// sum) bound the whole, with the same bounds as a node's (`response_cache`): every keep first drops
// what has expired, then the least recently used until both bounds hold, in the same script, so the
// answers Redis holds stay within `max_bytes` (plus their indexes, about 100 bytes each). A lookup
// is one script too: the answer, and its use recorded.
//
// While the link is down, or a command fails, the node's own cache answers and keeps instead:
// hits then come from what this node made meanwhile. Engine thread only; the link and the
// local cache outlive it.
class RedisResponseCache final : public ResponseCache {
public:
    RedisResponseCache(redis::Link &link, QByteArray keyPrefix, LocalResponseCache &local,
                       CacheBounds limits);
    ~RedisResponseCache() override;

    void lookup(const QByteArray &key, Found done) override;
    void keep(const QByteArray &key, StoredAnswer answer, std::chrono::milliseconds ttl) override;
    void setLimits(const CacheBounds &limits) override;
    // The fleet's entries and bytes as of this node's last keep, and what this node's keeps
    // dropped; the local fallback's counts while the link is down.
    ResponseCacheCounts counts() const override;

private:
    redis::Link &m_link;
    QByteArray m_prefix;
    LocalResponseCache &m_local;
    CacheBounds m_limits;
    ResponseCacheCounts m_fleetCounts;
    bool m_fleetCounted = false; // a keep has told the fleet's entries and bytes
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

} // namespace switchyard::answers
