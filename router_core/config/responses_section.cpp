#include "config/config_sections.h"

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {
const QList<QLatin1StringView> responsesKeys{"store_by_default"_L1, "retention"_L1,
                                             "max_stored_bytes"_L1, "queue"_L1};
const QList<QLatin1StringView> queueKeys{"workers"_L1,        "max_queued_per_tenant"_L1,
                                         "task_timeout"_L1,   "visibility_timeout"_L1,
                                         "delivery_limit"_L1, "retry_backoff"_L1};

constexpr std::chrono::milliseconds kShortestRetention{std::chrono::minutes(1)};
constexpr std::chrono::milliseconds kLongestRetention{std::chrono::hours(24 * 365)};
constexpr qint64 kSmallestStore = 1024LL * 1024;
constexpr qint64 kLargestStore = 64LL * 1024 * 1024 * 1024;
constexpr std::chrono::milliseconds kShortestTask{std::chrono::seconds(1)};
constexpr std::chrono::milliseconds kLongestTask{std::chrono::hours(24)};
constexpr std::chrono::milliseconds kShortestVisibility{std::chrono::seconds(1)};
constexpr std::chrono::milliseconds kLongestVisibility{std::chrono::hours(1)};
constexpr std::chrono::milliseconds kShortestBackoff{std::chrono::milliseconds(10)};
constexpr std::chrono::milliseconds kLongestBackoff{std::chrono::minutes(10)};
} // namespace

QList<QLatin1StringView> responsesRootKeys()
{
    return {"responses"_L1};
}

void checkResponsesSection(YamlReader &reader, const KeyedMap &root, Config &config)
{
    const MapEntry *entry = root.find("responses"_L1);
    if (!entry)
        return;
    const std::optional<KeyedMap> section = reader.readSection(*entry, responsesKeys);
    if (!section)
        return;
    ResponsesConfig &responses = config.responses;
    if (const MapEntry *store = section->find("store_by_default"_L1)) {
        if (const auto value = reader.readBool(*store))
            responses.storeByDefault = *value;
    }
    if (const MapEntry *retention = section->find("retention"_L1)) {
        if (const auto value =
                reader.readDuration(*retention, ZeroDuration::Rejected, kLongestRetention)) {
            if (*value < kShortestRetention || *value > kLongestRetention)
                reader.reportValue(
                    *retention,
                    u"`retention` must be between 1m and 8760h (365 days), got %1"_s.arg(
                        describe(retention->value)));
            else
                responses.retention = *value;
        }
    }
    if (const MapEntry *bytes = section->find("max_stored_bytes"_L1)) {
        if (const auto value = reader.readSize(*bytes, kLargestStore)) {
            if (*value < kSmallestStore || *value > kLargestStore)
                reader.reportValue(
                    *bytes, u"`max_stored_bytes` must be between 1MiB and 64GiB, got %1"_s.arg(
                                describe(bytes->value)));
            else
                responses.maxStoredBytes = *value;
        }
    }
    const MapEntry *queueEntry = section->find("queue"_L1);
    if (!queueEntry)
        return;
    const std::optional<KeyedMap> queue = reader.readSection(*queueEntry, queueKeys);
    if (!queue)
        return;
    if (const MapEntry *workers = queue->find("workers"_L1)) {
        if (const auto value = reader.readInteger(*workers, 1, 1024))
            responses.workers = int(*value);
    }
    if (const MapEntry *depth = queue->find("max_queued_per_tenant"_L1)) {
        if (const auto value = reader.readInteger(*depth, 1, 1'000'000))
            responses.maxQueuedPerTenant = int(*value);
    }
    if (const MapEntry *timeout = queue->find("task_timeout"_L1)) {
        if (const auto value = reader.readDuration(*timeout, ZeroDuration::Rejected)) {
            if (*value < kShortestTask || *value > kLongestTask)
                reader.reportValue(*timeout,
                                   u"`task_timeout` must be between 1s and 24h, got %1"_s.arg(
                                       describe(timeout->value)));
            else
                responses.taskTimeout = *value;
        }
    }
    if (const MapEntry *visibility = queue->find("visibility_timeout"_L1)) {
        if (const auto value = reader.readDuration(*visibility, ZeroDuration::Rejected)) {
            if (*value < kShortestVisibility || *value > kLongestVisibility)
                reader.reportValue(*visibility,
                                   u"`visibility_timeout` must be between 1s and 1h, got %1"_s.arg(
                                       describe(visibility->value)));
            else
                responses.visibilityTimeout = *value;
        }
    }
    if (const MapEntry *limit = queue->find("delivery_limit"_L1)) {
        if (const auto value = reader.readInteger(*limit, 1, 100))
            responses.deliveryLimit = int(*value);
    }
    if (const MapEntry *backoff = queue->find("retry_backoff"_L1)) {
        if (const auto value = reader.readDuration(*backoff, ZeroDuration::Rejected)) {
            if (*value < kShortestBackoff || *value > kLongestBackoff)
                reader.reportValue(*backoff,
                                   u"`retry_backoff` must be between 10ms and 10m, got %1"_s.arg(
                                       describe(backoff->value)));
            else
                responses.retryBackoff = *value;
        }
    }
}

} // namespace switchyard::config
