#include "answers/redis_response_cache.h"

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcAnswers)

namespace switchyard::answers {

using namespace Qt::StringLiterals;

namespace {

// Shared by both scripts: the clock is Redis's own, so every node's entries age alike; the
// recency of a use is a counter (`cache:uses`), so two uses within one millisecond still
// have an order. drop() removes an entry and its place in the indexes.
const QByteArray kCommon = R"(
local p = KEYS[1]
local recency, expiry, sizes, total = p..'cache:recency', p..'cache:expiry', p..'cache:sizes', p..'cache:bytes'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function drop(k)
  local size = redis.call('HGET', sizes, k)
  if size then
    -- Never below zero, even after Redis's own eviction took entries behind the indexes' back.
    if redis.call('DECRBY', total, size) < 0 then redis.call('SET', total, 0) end
    redis.call('HDEL', sizes, k)
  end
  redis.call('ZREM', recency, k)
  redis.call('ZREM', expiry, k)
  redis.call('DEL', p..'cache:entry:'..k)
end
)";

// ARGV: key. Returns the answer or nil; an entry whose ttl has passed is dropped from the
// indexes (Redis dropped its value already).
const QByteArray kLookupScript = kCommon + R"(
local k = ARGV[1]
local value = redis.call('GET', p..'cache:entry:'..k)
if value then
  redis.call('ZADD', recency, redis.call('INCR', p..'cache:uses'), k)
  return value
end
if redis.call('ZSCORE', expiry, k) then drop(k) end
return false
)";

// ARGV: key, answer, ttl ms, max entries, max bytes. Returns {dropped for the bounds, expired,
// entries, bytes}.
const QByteArray kKeepScript = kCommon + R"(
local k, value, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local maxEntries, maxBytes = tonumber(ARGV[4]), tonumber(ARGV[5])
local expired = redis.call('ZRANGEBYSCORE', expiry, '-inf', now, 'LIMIT', 0, 1000)
for _, old in ipairs(expired) do drop(old) end
drop(k)
local size = string.len(value) + string.len(k)
if size > maxBytes then
  return {0, #expired, redis.call('ZCARD', recency), tonumber(redis.call('GET', total) or '0')}
end
redis.call('SET', p..'cache:entry:'..k, value, 'PX', ttl)
redis.call('ZADD', recency, redis.call('INCR', p..'cache:uses'), k)
redis.call('ZADD', expiry, now + ttl, k)
redis.call('HSET', sizes, k, size)
redis.call('INCRBY', total, size)
local evicted = 0
while redis.call('ZCARD', recency) > maxEntries or tonumber(redis.call('GET', total) or '0') > maxBytes do
  local oldest = redis.call('ZRANGE', recency, 0, 0)
  if #oldest == 0 then break end
  drop(oldest[1])
  evicted = evicted + 1
end
return {evicted, #expired, redis.call('ZCARD', recency), tonumber(redis.call('GET', total) or '0')}
)";

} // namespace

RedisResponseCache::RedisResponseCache(redis::Link &link, QByteArray keyPrefix,
                                       LocalResponseCache &local, CacheBounds limits)
    : m_link(link), m_prefix(std::move(keyPrefix)), m_local(local), m_limits(limits)
{}

RedisResponseCache::~RedisResponseCache()
{
    *m_alive = false;
}

void RedisResponseCache::lookup(const QByteArray &key, Found done)
{
    if (!m_link.isUp()) {
        done(m_local.find(key), "local");
        return;
    }
    m_link.send({"EVAL", kLookupScript, "1", m_prefix, key},
                [this, alive = m_alive, key, done = std::move(done)](const redis::Result &result) {
                    if (!*alive)
                        return;
                    if (!result.ok()) {
                        qCDebug(lcAnswers).noquote()
                            << u"response cache: Redis could not look an answer up, looking on "
                               u"this node: %1"_s.arg(result.problem());
                        done(m_local.find(key), "local");
                        return;
                    }
                    if (result.reply.isNil()) {
                        done(std::nullopt, "redis");
                        return;
                    }
                    // An entry no node can read is a miss: the next keep replaces it.
                    done(decodeAnswer(result.reply.text), "redis");
                });
}

void RedisResponseCache::keep(const QByteArray &key, StoredAnswer answer,
                              std::chrono::milliseconds ttl)
{
    if (!m_link.isUp()) {
        m_local.keep(key, std::move(answer), ttl);
        return;
    }
    // Encoded before the callback takes the answer: arguments are evaluated in any order.
    const QByteArray encoded = encodeAnswer(answer);
    m_link.send({"EVAL", kKeepScript, "1", m_prefix, key, encoded,
                 QByteArray::number(qint64(ttl.count())), QByteArray::number(m_limits.maxEntries),
                 QByteArray::number(m_limits.maxBytes)},
                [this, alive = m_alive, key, ttl,
                 answer = std::move(answer)](const redis::Result &result) mutable {
                    if (!*alive)
                        return;
                    if (!result.ok() || result.reply.elements.size() != 4) {
                        qCDebug(lcAnswers).noquote()
                            << u"response cache: Redis could not keep an answer, kept on this "
                               u"node: %1"_s.arg(result.problem());
                        m_local.keep(key, std::move(answer), ttl);
                        return;
                    }
                    const QList<redis::Reply> &counts = result.reply.elements;
                    m_fleetCounts.evictedByBound += quint64(counts[0].integer);
                    m_fleetCounts.expired += quint64(counts[1].integer);
                    m_fleetCounts.entries = counts[2].integer;
                    m_fleetCounts.bytes = counts[3].integer;
                    m_fleetCounted = true;
                });
}

void RedisResponseCache::setLimits(const CacheBounds &limits)
{
    m_limits = limits; // the fleet's cache comes within them at the next keep
    m_local.setLimits(limits);
}

ResponseCacheCounts RedisResponseCache::counts() const
{
    // The counters add what this node's keeps dropped in Redis and what its own cache let go,
    // whichever answers now, so they never go back; the gauges are whoever answers now.
    const ResponseCacheCounts local = m_local.counts();
    const bool fleet = m_link.isUp() && m_fleetCounted;
    return {
        fleet ? m_fleetCounts.entries : local.entries, fleet ? m_fleetCounts.bytes : local.bytes,
        m_fleetCounts.evictedByBound + local.evictedByBound, m_fleetCounts.expired + local.expired};
}

} // namespace switchyard::answers
