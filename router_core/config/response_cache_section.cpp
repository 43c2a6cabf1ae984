#include "config/config_sections.h"

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {
const QList<QLatin1StringView> kCacheKeys{"ttl"_L1, "max_bytes"_L1, "sampled"_L1};
const QList<QLatin1StringView> kLimitKeys{"max_entries"_L1, "max_bytes"_L1};

// Under a second nothing would be given again; over a day an answer outlives the model version
// and prompt it was made for.
constexpr std::chrono::milliseconds kShortestTtl{1000};
constexpr std::chrono::milliseconds kLongestTtl{std::chrono::hours(24)};
constexpr qint64 kSmallestAnswerBytes = 1024;
constexpr qint64 kLargestAnswerBytes = 64LL * 1024 * 1024;
constexpr qint64 kMostEntries = 1'000'000;
constexpr qint64 kSmallestCacheBytes = 64 * 1024;
constexpr qint64 kLargestCacheBytes = 16LL * 1024 * 1024 * 1024;
} // namespace

std::optional<ResponseCacheConfig> readResponseCache(YamlReader &reader, const MapEntry &entry)
{
    const std::optional<KeyedMap> keys = reader.readSection(entry, kCacheKeys);
    if (!keys)
        return std::nullopt;
    const qsizetype errorsBefore = reader.errorCount();
    ResponseCacheConfig cache;
    const SourceLocation where = reader.locate(YamlReader::valueMark(entry));
    cache.line = where.line;
    cache.column = where.column;
    if (const MapEntry *ttl = keys->find("ttl"_L1)) {
        if (const auto value = reader.readDuration(*ttl, ZeroDuration::Rejected)) {
            if (*value < kShortestTtl || *value > kLongestTtl)
                reader.reportValue(
                    *ttl, u"`ttl` must be between 1s and 24h, got %1"_s.arg(describe(ttl->value)));
            else
                cache.ttl = *value;
        }
    }
    if (const MapEntry *bytes = keys->find("max_bytes"_L1)) {
        if (const auto value = reader.readSize(*bytes)) {
            if (*value < kSmallestAnswerBytes || *value > kLargestAnswerBytes)
                reader.reportValue(*bytes,
                                   u"`max_bytes` (the largest answer kept) must be between 1KiB "
                                   u"and 64MiB, got %1"_s.arg(describe(bytes->value)));
            else
                cache.maxAnswerBytes = *value;
        }
    }
    if (const MapEntry *sampled = keys->find("sampled"_L1)) {
        if (const auto value = reader.readBool(*sampled))
            cache.sampled = *value;
    }
    if (reader.errorCount() != errorsBefore)
        return std::nullopt;
    return cache;
}

QList<QLatin1StringView> responseCacheRootKeys()
{
    return {"response_cache"_L1};
}

void checkResponseCacheSection(YamlReader &reader, const KeyedMap &root, Config &config)
{
    const MapEntry *entry = root.find("response_cache"_L1);
    if (!entry)
        return;
    const std::optional<KeyedMap> section = reader.readSection(*entry, kLimitKeys);
    if (!section)
        return;
    ResponseCacheLimits &limits = config.responseCache;
    if (const MapEntry *count = section->find("max_entries"_L1)) {
        if (const auto value = reader.readInteger(*count, 1, kMostEntries))
            limits.maxEntries = int(*value);
    }
    if (const MapEntry *bytes = section->find("max_bytes"_L1)) {
        if (const auto value = reader.readSize(*bytes, kLargestCacheBytes)) {
            if (*value < kSmallestCacheBytes)
                reader.reportValue(*bytes,
                                   u"`max_bytes` must be between 64KiB and 16GiB, got %1"_s.arg(
                                       describe(bytes->value)));
            else
                limits.maxBytes = *value;
        }
    }
}

} // namespace switchyard::config
