#include "answers/response_cache.h"

namespace switchyard::answers {

LocalResponseCache::LocalResponseCache(CacheBounds limits, const timing::Clock &clock)
    : m_limits(limits), m_clock(clock)
{}

std::optional<StoredAnswer> LocalResponseCache::find(const QByteArray &key)
{
    const auto found = m_entries.find(key);
    if (found == m_entries.end())
        return std::nullopt;
    if (found->expiresAt <= m_clock.now()) {
        ++m_expired;
        erase(found);
        return std::nullopt;
    }
    m_recency.splice(m_recency.begin(), m_recency, found->recency);
    return found->answer;
}

void LocalResponseCache::lookup(const QByteArray &key, Found done)
{
    done(find(key), "local");
}

void LocalResponseCache::keep(const QByteArray &key, StoredAnswer answer,
                              std::chrono::milliseconds ttl)
{
    if (const auto old = m_entries.find(key); old != m_entries.end())
        erase(old);
    const qint64 bytes = answer.approximateBytes() + key.size();
    // One answer larger than the whole cache would only empty it.
    if (bytes > m_limits.maxBytes)
        return;
    m_recency.push_front(key);
    m_entries.insert(key, Entry{std::move(answer), bytes, m_clock.now() + ttl, m_recency.begin()});
    m_bytes += bytes;
    keepWithinBounds();
}

void LocalResponseCache::setLimits(const CacheBounds &limits)
{
    m_limits = limits;
    keepWithinBounds();
}

ResponseCacheCounts LocalResponseCache::counts() const
{
    return {qint64(m_entries.size()), m_bytes, m_evictedByBound, m_expired};
}

void LocalResponseCache::erase(QHash<QByteArray, Entry>::iterator entry)
{
    m_bytes -= entry->bytes;
    m_recency.erase(entry->recency);
    m_entries.erase(entry);
}

void LocalResponseCache::keepWithinBounds()
{
    const auto now = m_clock.now();
    while (!m_recency.empty() &&
           (m_entries.size() > m_limits.maxEntries || m_bytes > m_limits.maxBytes)) {
        const auto oldest = m_entries.find(m_recency.back());
        // An entry past its ttl is counted as expired, not as pushed out.
        if (oldest->expiresAt <= now)
            ++m_expired;
        else
            ++m_evictedByBound;
        erase(oldest);
    }
}

} // namespace switchyard::answers
