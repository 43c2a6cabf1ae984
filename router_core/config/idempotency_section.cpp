#include "config/config_sections.h"

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {
const QList<QLatin1StringView> idempotencyKeys{"enabled"_L1, "window"_L1, "request_id_header"_L1,
                                               "max_answer_bytes"_L1, "max_answers"_L1};

// A window under a second could not outlast a client's first retry; over a day the answers of a
// busy gateway would crowd out memory.
constexpr std::chrono::milliseconds kShortestWindow{1000};
constexpr std::chrono::milliseconds kLongestWindow{std::chrono::hours(24)};
constexpr qint64 kSmallestAnswerBytes = 1024;
constexpr qint64 kLargestAnswerBytes = 64LL * 1024 * 1024;
constexpr qint64 kMostAnswers = 1'000'000;
} // namespace

QList<QLatin1StringView> idempotencyRootKeys()
{
    return {"idempotency"_L1};
}

void checkIdempotencySection(YamlReader &reader, const KeyedMap &root, Config &config)
{
    const MapEntry *entry = root.find("idempotency"_L1);
    if (!entry)
        return;
    const std::optional<KeyedMap> section = reader.readSection(*entry, idempotencyKeys);
    if (!section)
        return;
    IdempotencyConfig &idempotency = config.idempotency;
    if (const MapEntry *enabled = section->find("enabled"_L1)) {
        if (const auto value = reader.readBool(*enabled))
            idempotency.enabled = *value;
    }
    if (const MapEntry *window = section->find("window"_L1)) {
        if (const auto value = reader.readDuration(*window, ZeroDuration::Rejected)) {
            if (*value < kShortestWindow || *value > kLongestWindow)
                reader.reportValue(*window, u"`window` must be between 1s and 24h, got %1"_s.arg(
                                                describe(window->value)));
            else
                idempotency.window = *value;
        }
    }
    if (const MapEntry *requestId = section->find("request_id_header"_L1)) {
        if (const auto value = reader.readBool(*requestId))
            idempotency.requestIdHeader = *value;
    }
    if (const MapEntry *bytes = section->find("max_answer_bytes"_L1)) {
        if (const auto value = reader.readSize(*bytes)) {
            if (*value < kSmallestAnswerBytes || *value > kLargestAnswerBytes)
                reader.reportValue(
                    *bytes, u"`max_answer_bytes` must be between 1KiB and 64MiB, got %1"_s.arg(
                                describe(bytes->value)));
            else
                idempotency.maxAnswerBytes = *value;
        }
    }
    if (const MapEntry *count = section->find("max_answers"_L1)) {
        if (const auto value = reader.readInteger(*count, 1, kMostAnswers))
            idempotency.maxAnswers = int(*value);
    }
}

} // namespace switchyard::config
