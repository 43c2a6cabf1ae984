#include "config/config_sections.h"

#include <QHash>
#include <limits>

namespace switchyard::config {

namespace {

using namespace Qt::StringLiterals;
using std::chrono::milliseconds;

const QList<QLatin1StringView> retryKeys{
    "backoff_base"_L1,     "backoff_jitter"_L1,        "backoff_max"_L1,
    "budget_percent"_L1,   "min_retries_in_flight"_L1, "max_attempts"_L1,
    "timeout_gradient"_L1, "max_retry_after"_L1,       "default_cool_down"_L1};
const QList<QLatin1StringView> admissionKeys{"max_in_flight"_L1,
                                             "overload_lag"_L1,
                                             "tenants"_L1,
                                             "default_tenant_rpm"_L1,
                                             "failover_capacity_share"_L1,
                                             "degraded_admit_share"_L1,
                                             "max_depth"_L1,
                                             "max_start_wait"_L1};
const QList<QLatin1StringView> tenantKeys{"requests_per_minute"_L1, "burst"_L1};
const QList<QLatin1StringView> degradationKeys{"canned"_L1, "fail_safe"_L1};
const QList<QLatin1StringView> cannedKeys{"when"_L1, "reply"_L1};
const QList<QLatin1StringView> cannedWhenKeys{"model"_L1, "contains"_L1};

// A billion requests a minute is far beyond any gateway; the bound keeps token arithmetic exact.
constexpr qint64 kMostRequestsPerMinute = 1'000'000'000;
// More than this many hops is a loop by any measure; the bound only keeps the number sane.
constexpr qint64 kDeepestDepthLimit = 100;
// A request that needs more attempts than this is hammering providers, not being resilient.
constexpr qint64 kMostAttempts = 20;
constexpr qint64 kMostInFlight = 1'000'000;

void readDuration(YamlReader &reader, const KeyedMap &keys, QLatin1StringView name,
                  milliseconds &target)
{
    if (const MapEntry *entry = keys.find(name)) {
        if (const auto value = reader.readDuration(*entry, ZeroDuration::Allowed))
            target = *value;
    }
}

void readInt(YamlReader &reader, const KeyedMap &keys, QLatin1StringView name, qint64 minimum,
             qint64 maximum, int &target)
{
    if (const MapEntry *entry = keys.find(name)) {
        if (const auto value = reader.readInteger(*entry, minimum, maximum))
            target = int(*value);
    }
}

void readShare(YamlReader &reader, const KeyedMap &keys, QLatin1StringView name, double minimum,
               double maximum, double &target)
{
    if (const MapEntry *entry = keys.find(name)) {
        if (const auto value = reader.readNumberIn(*entry, minimum, maximum))
            target = *value;
    }
}

void checkRetries(YamlReader &reader, const MapEntry &entry, RetryConfig &retries)
{
    const std::optional<KeyedMap> keys = reader.readSection(entry, retryKeys);
    if (!keys)
        return;
    // Zero waits are real choices: fail over at once, never wait out a Retry-After.
    readDuration(reader, *keys, "backoff_base"_L1, retries.backoffBase);
    readDuration(reader, *keys, "backoff_jitter"_L1, retries.backoffJitter);
    readDuration(reader, *keys, "backoff_max"_L1, retries.backoffMax);
    readDuration(reader, *keys, "max_retry_after"_L1, retries.maxRetryAfter);
    readDuration(reader, *keys, "default_cool_down"_L1, retries.defaultCoolDown);
    readShare(reader, *keys, "budget_percent"_L1, 0.0, 100.0, retries.budgetPercent);
    readInt(reader, *keys, "min_retries_in_flight"_L1, 0, kMostInFlight,
            retries.minRetriesInFlight);
    readInt(reader, *keys, "max_attempts"_L1, 1, kMostAttempts, retries.maxAttempts);
    readShare(reader, *keys, "timeout_gradient"_L1, 1.0, 10.0, retries.timeoutGradient);
    if (retries.backoffMax < retries.backoffBase) {
        const MapEntry *maximum = keys->find("backoff_max"_L1);
        const MapEntry *base = keys->find("backoff_base"_L1);
        const MapEntry *shown = maximum ? maximum : base;
        if (!shown)
            return;
        reader.reportValue(*shown,
                           u"`backoff_max` (%1 ms) must be at least `backoff_base` (%2 ms)"_s.arg(
                               QString::number(retries.backoffMax.count()),
                               QString::number(retries.backoffBase.count())));
    }
}

void checkTenants(YamlReader &reader, const MapEntry &entry, QHash<QString, TenantLimit> &tenants)
{
    if (!entry.value.IsMap()) {
        reader.reportValue(entry,
                           u"`tenants` must be a map of tenant names to limits, got %1"_s.arg(
                               describe(entry.value)));
        return;
    }
    QHash<QString, int> firstLines;
    for (auto it = entry.value.begin(); it != entry.value.end(); ++it) {
        const YAML::Node key = it->first;
        const YAML::Node value = it->second;
        if (!key.IsScalar() || key.Scalar().empty()) {
            reader.report(key.Mark(),
                          u"tenant names must be plain names, got %1"_s.arg(describe(key)));
            continue;
        }
        const QString name = fromYaml(key.Scalar());
        const int line = reader.locate(key.Mark()).line;
        if (const auto first = firstLines.constFind(name); first != firstLines.cend()) {
            reader.report(key.Mark(), u"duplicate tenant `%1` (first at line %2)"_s.arg(
                                          name, QString::number(first.value())));
            continue;
        }
        firstLines.insert(name, line);
        const MapEntry tenantEntry{name, key, value};
        if (!value.IsMap()) {
            reader.reportValue(
                tenantEntry, u"tenant `%1` must be a map with `requests_per_minute`, got %2"_s.arg(
                                 name, describe(value)));
            continue;
        }
        const KeyedMap keys = reader.readKeys(value, tenantKeys);
        TenantLimit limit;
        const MapEntry *rpm = keys.find("requests_per_minute"_L1);
        if (!rpm) {
            reader.reportMissing(value, u"tenant `%1`"_s.arg(name), "requests_per_minute"_L1);
            continue;
        }
        const auto requests = reader.readInteger(*rpm, 1, kMostRequestsPerMinute);
        if (!requests)
            continue;
        limit.requestsPerMinute = int(*requests);
        readInt(reader, keys, "burst"_L1, 1, kMostRequestsPerMinute, limit.burst);
        tenants.insert(name, limit);
    }
}

void checkAdmission(YamlReader &reader, const MapEntry &entry, AdmissionConfig &admission)
{
    const std::optional<KeyedMap> keys = reader.readSection(entry, admissionKeys);
    if (!keys)
        return;
    readInt(reader, *keys, "max_in_flight"_L1, 1, kMostInFlight, admission.maxInFlight);
    if (const MapEntry *tenants = keys->find("tenants"_L1))
        checkTenants(reader, *tenants, admission.tenants);
    readInt(reader, *keys, "default_tenant_rpm"_L1, 0, kMostRequestsPerMinute,
            admission.defaultTenantRpm);
    readShare(reader, *keys, "failover_capacity_share"_L1, 0.0, 1.0,
              admission.failoverCapacityShare);
    readShare(reader, *keys, "degraded_admit_share"_L1, 0.0, 1.0, admission.degradedAdmitShare);
    readInt(reader, *keys, "max_depth"_L1, 0, kDeepestDepthLimit, admission.maxDepth);
    if (const MapEntry *lag = keys->find("overload_lag"_L1)) {
        // Zero would blame the gateway for every timeout: refused like the other timeouts.
        if (const auto value = reader.readDuration(*lag, ZeroDuration::Rejected))
            admission.overloadLag = *value;
    }
    if (const MapEntry *wait = keys->find("max_start_wait"_L1)) {
        // Zero would refuse every request of a burst beyond the first turn's.
        if (const auto value = reader.readDuration(*wait, ZeroDuration::Rejected))
            admission.maxStartWait = *value;
    }
}

std::optional<QString> readNonEmptyString(YamlReader &reader, const MapEntry &entry)
{
    std::optional<QString> text = reader.readString(entry);
    if (text && text->trimmed().isEmpty()) {
        reader.reportValue(entry, u"`%1` must not be empty"_s.arg(entry.name));
        return std::nullopt;
    }
    return text;
}

std::optional<CannedAnswer> checkCannedAnswer(YamlReader &reader, const YAML::Node &node)
{
    const KeyedMap keys = reader.readKeys(node, cannedKeys);
    CannedAnswer answer;
    bool valid = true;
    if (const MapEntry *when = keys.find("when"_L1)) {
        if (const std::optional<KeyedMap> conditions = reader.readSection(*when, cannedWhenKeys)) {
            if (conditions->entries.isEmpty()) {
                // An unknown key has its own error already; only an empty map needs this one.
                if (when->value.size() == 0)
                    reader.reportValue(*when, u"`when` must name `model`, `contains` or both"_s);
                valid = false;
            }
            if (const MapEntry *model = conditions->find("model"_L1)) {
                const std::optional<QString> glob = readNonEmptyString(reader, *model);
                valid = valid && glob.has_value();
                answer.modelGlob = glob.value_or(QString());
            }
            if (const MapEntry *contains = conditions->find("contains"_L1)) {
                const std::optional<QStringList> words = reader.readStringList(*contains);
                if (words && (words->isEmpty() || words->contains(QString()))) {
                    reader.reportValue(*contains, u"`contains` must not be empty or hold an "
                                                  u"empty text"_s);
                    valid = false;
                }
                valid = valid && words.has_value();
                answer.contains = words.value_or(QStringList());
            }
        } else {
            valid = false;
        }
    } else {
        // Without a condition the entry would answer everything: that is what `fail_safe` is for.
        reader.reportMissing(node, u"canned answer"_s, "when"_L1);
        valid = false;
    }
    if (const MapEntry *reply = keys.find("reply"_L1)) {
        const std::optional<QString> text = readNonEmptyString(reader, *reply);
        valid = valid && text.has_value();
        answer.reply = text.value_or(QString());
    } else {
        reader.reportMissing(node, u"canned answer"_s, "reply"_L1);
        valid = false;
    }
    if (!valid)
        return std::nullopt;
    return answer;
}

void checkDegradation(YamlReader &reader, const MapEntry &entry, DegradationConfig &degradation)
{
    const std::optional<KeyedMap> keys = reader.readSection(entry, degradationKeys);
    if (!keys)
        return;
    if (const MapEntry *canned = keys->find("canned"_L1)) {
        if (!canned->value.IsSequence()) {
            reader.reportValue(*canned, u"`canned` must be a list of {when, reply} entries, got "
                                        u"%1"_s.arg(describe(canned->value)));
        } else {
            int position = 0;
            for (const YAML::Node &node : canned->value) {
                ++position;
                if (!node.IsMap()) {
                    reader.report(node.IsNull() ? canned->value.Mark() : node.Mark(),
                                  u"entry %1 of `canned` must be a map with `when` and `reply`, "
                                  u"got %2"_s.arg(QString::number(position), describe(node)));
                    continue;
                }
                if (std::optional<CannedAnswer> answer = checkCannedAnswer(reader, node))
                    degradation.canned.append(std::move(*answer));
            }
        }
    }
    if (const MapEntry *failSafe = keys->find("fail_safe"_L1)) {
        if (const std::optional<QString> text = readNonEmptyString(reader, *failSafe))
            degradation.failSafe = *text;
    }
}

} // namespace

QList<QLatin1StringView> resilienceRootKeys()
{
    return {"retries"_L1, "admission"_L1, "degradation"_L1};
}

void checkResilienceSections(YamlReader &reader, const KeyedMap &root, Config &config)
{
    if (const MapEntry *retries = root.find("retries"_L1))
        checkRetries(reader, *retries, config.resilience.retries);
    if (const MapEntry *admission = root.find("admission"_L1))
        checkAdmission(reader, *admission, config.resilience.admission);
    if (const MapEntry *degradation = root.find("degradation"_L1))
        checkDegradation(reader, *degradation, config.resilience.degradation);
}

} // namespace switchyard::config
