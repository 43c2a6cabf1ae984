#pragma once

#include "answers/answer_store.h"
#include "timing/clock.h"

#include <QHash>
#include <chrono>
#include <functional>
#include <list>
#include <optional>

// The response cache (docs/operations.md, "The response cache"): answers to requests that mean
// the same, kept for a while and given again without calling a provider. It keeps the store of
// answers' own values (StoredAnswer, encoded as the duplicate guard encodes them, replayed as
// it replays them) but bounds them its own way: a duplicate guard's answer must outlive its
// window, while a cached answer is only worth its memory while it is asked for, so the least
// recently used go first.
namespace switchyard::answers {

// How much a cache keeps at most (the `response_cache` section); least recently used go first.
struct CacheBounds {
    int maxEntries = 10'000;
    qint64 maxBytes = 64LL * 1024 * 1024;
};

// What a cache holds and has let go, for /metrics and the console.
struct ResponseCacheCounts {
    qint64 entries = 0;
    qint64 bytes = 0;
    quint64 evictedByBound = 0; // least recently used, to stay within the bounds
    quint64 expired = 0;        // past their ttl
};

// The cache's side of the seam. Engine thread only; `done` runs on it too, at once (this node)
// or when Redis answers.
class ResponseCache {
public:
    virtual ~ResponseCache() = default;

    // The answer kept under `key`, if any and still within its ttl; `where` says who had it
    // ("local" or "redis"), for the trace.
    using Found = std::function<void(std::optional<StoredAnswer> answer, QByteArray where)>;
    virtual void lookup(const QByteArray &key, Found done) = 0;
    // Keeps `answer` under `key` for `ttl`, in place of what was there.
    virtual void keep(const QByteArray &key, StoredAnswer answer,
                      std::chrono::milliseconds ttl) = 0;
    virtual void setLimits(const CacheBounds &limits) = 0;
    virtual ResponseCacheCounts counts() const = 0;
};

// This node's cache: in memory only (a restart starts it empty: an answer is cheap to make
// again, unlike the duplicate guard's, whose loss could run a request twice). Least recently
// used first beyond the entry and byte bounds; a ttl is checked when an entry is read and when
// room is made.
class LocalResponseCache final : public ResponseCache {
public:
    explicit LocalResponseCache(CacheBounds limits,
                                const timing::Clock &clock = timing::SteadyClock::instance());

    void lookup(const QByteArray &key, Found done) override;
    void keep(const QByteArray &key, StoredAnswer answer, std::chrono::milliseconds ttl) override;
    void setLimits(const CacheBounds &limits) override;
    ResponseCacheCounts counts() const override;

    // lookup() answered at once, for the Redis cache's fallback.
    std::optional<StoredAnswer> find(const QByteArray &key);

private:
    struct Entry {
        StoredAnswer answer;
        qint64 bytes = 0;
        std::chrono::steady_clock::time_point expiresAt;
        std::list<QByteArray>::iterator recency; // its place in m_recency
    };

    void erase(QHash<QByteArray, Entry>::iterator entry);
    void keepWithinBounds();

    CacheBounds m_limits;
    const timing::Clock &m_clock;
    QHash<QByteArray, Entry> m_entries;
    std::list<QByteArray> m_recency; // most recently used first
    qint64 m_bytes = 0;
    quint64 m_evictedByBound = 0;
    quint64 m_expired = 0;
};

} // namespace switchyard::answers
