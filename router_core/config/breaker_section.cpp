#include "config/config_sections.h"

#include <limits>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

const QList<QLatin1StringView> breakerKeys{
    "consecutive_failures"_L1, "failure_rate"_L1, "window"_L1,         "min_calls"_L1,
    "slow_p95_factor"_L1,      "slow_window"_L1,  "slow_min_calls"_L1, "open_for"_L1,
    "max_open_for"_L1,         "ramp"_L1,         "ramp_start"_L1};
const QList<QLatin1StringView> probeKeys{"enabled"_L1,         "interval"_L1,      "timeout"_L1,
                                         "unhealthy_after"_L1, "healthy_after"_L1, "path"_L1};

// A window of more calls than this is memory per endpoint without better decisions.
constexpr int maximumWindowCalls = 10'000;
// The slow rule compares against a multiple of the latency objective; beyond this it can never
// fire for any objective a person would write.
constexpr double maximumSlowFactor = 1000.0;

void readCount(YamlReader &reader, const KeyedMap &section, QLatin1StringView key, int maximum,
               int &target)
{
    if (const MapEntry *entry = section.find(key)) {
        if (const auto value = reader.readInteger(*entry, 1, maximum))
            target = int(*value);
    }
}

void readDurationKey(YamlReader &reader, const KeyedMap &section, QLatin1StringView key,
                     ZeroDuration zero, std::chrono::milliseconds &target)
{
    if (const MapEntry *entry = section.find(key)) {
        if (const auto value = reader.readDuration(*entry, zero))
            target = *value;
    }
}

// A probe path is requested on the provider's host, so it must be absolute.
std::optional<QString> readProbePath(YamlReader &reader, const MapEntry &entry)
{
    const std::optional<QString> path = reader.readString(entry);
    if (!path)
        return std::nullopt;
    if (!path->startsWith(u'/') || path->contains(u' ')) {
        reader.reportValue(entry, u"`%1` must be a path starting with `/` such as `/health`, "
                                  u"got %2"_s.arg(entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return path;
}

void checkBreaker(YamlReader &reader, const MapEntry &entry, BreakerConfig &breaker)
{
    const std::optional<KeyedMap> section = reader.readSection(entry, breakerKeys);
    if (!section)
        return;
    readCount(reader, *section, "consecutive_failures"_L1, std::numeric_limits<int>::max(),
              breaker.consecutiveFailures);
    if (const MapEntry *rate = section->find("failure_rate"_L1)) {
        if (const auto value = reader.readNumberIn(*rate, 0.0, 1.0))
            breaker.failureRate = *value;
    }
    readCount(reader, *section, "window"_L1, maximumWindowCalls, breaker.window);
    if (const MapEntry *minCalls = section->find("min_calls"_L1)) {
        if (const auto value = reader.readInteger(*minCalls, 1, maximumWindowCalls)) {
            if (*value > breaker.window) {
                reader.reportValue(*minCalls,
                                   u"`min_calls` must not be more than `window` (%1), got %2"_s.arg(
                                       QString::number(breaker.window), describe(minCalls->value)));
            } else {
                breaker.minCalls = int(*value);
            }
        }
    }
    if (const MapEntry *factor = section->find("slow_p95_factor"_L1)) {
        if (const auto value = reader.readNumberIn(*factor, 0.0, maximumSlowFactor))
            breaker.slowP95Factor = *value;
    }
    readDurationKey(reader, *section, "slow_window"_L1, ZeroDuration::Rejected, breaker.slowWindow);
    readCount(reader, *section, "slow_min_calls"_L1, std::numeric_limits<int>::max(),
              breaker.slowMinCalls);
    readDurationKey(reader, *section, "open_for"_L1, ZeroDuration::Rejected, breaker.openFor);
    if (const MapEntry *maxOpen = section->find("max_open_for"_L1)) {
        if (const auto value = reader.readDuration(*maxOpen, ZeroDuration::Rejected)) {
            if (*value < breaker.openFor) {
                reader.reportValue(
                    *maxOpen,
                    u"`max_open_for` must not be shorter than `open_for` (%1 ms), got %2"_s.arg(
                        QString::number(breaker.openFor.count()), describe(maxOpen->value)));
            } else {
                breaker.maxOpenFor = *value;
            }
        }
    } else if (breaker.maxOpenFor < breaker.openFor) {
        // Only `open_for` was raised above the default cap: the cap follows, so no re-trip is
        // ever shorter than the first open period.
        breaker.maxOpenFor = breaker.openFor;
    }
    // Zero is a real choice: a recovered endpoint takes its full share at once.
    readDurationKey(reader, *section, "ramp"_L1, ZeroDuration::Allowed, breaker.ramp);
    if (const MapEntry *start = section->find("ramp_start"_L1)) {
        if (const auto value = reader.readNumberIn(*start, 0.0, 1.0))
            breaker.rampStart = *value;
    }
}

void checkProbes(YamlReader &reader, const MapEntry &entry, ProbeConfig &probes)
{
    const std::optional<KeyedMap> section = reader.readSection(entry, probeKeys);
    if (!section)
        return;
    if (const MapEntry *enabled = section->find("enabled"_L1)) {
        if (const auto value = reader.readBool(*enabled))
            probes.enabled = *value;
    }
    readDurationKey(reader, *section, "interval"_L1, ZeroDuration::Rejected, probes.interval);
    if (const MapEntry *timeout = section->find("timeout"_L1)) {
        if (const auto value = reader.readDuration(*timeout, ZeroDuration::Rejected)) {
            // One probe per endpoint at a time: a timeout past the interval would skip probes.
            if (*value > probes.interval) {
                reader.reportValue(
                    *timeout,
                    u"`timeout` must not be longer than `interval` (%1 ms), got %2"_s.arg(
                        QString::number(probes.interval.count()), describe(timeout->value)));
            } else {
                probes.timeout = *value;
            }
        }
    } else if (probes.timeout > probes.interval) {
        probes.timeout = probes.interval;
    }
    readCount(reader, *section, "unhealthy_after"_L1, std::numeric_limits<int>::max(),
              probes.unhealthyAfter);
    readCount(reader, *section, "healthy_after"_L1, std::numeric_limits<int>::max(),
              probes.healthyAfter);
    if (const MapEntry *path = section->find("path"_L1)) {
        if (const auto value = readProbePath(reader, *path))
            probes.path = *value;
    }
}

// `probe_path` sits in a provider's entry, which the core provider checks only accept as a key;
// its value is read here, beside the other probe settings.
void checkProviderProbePaths(YamlReader &reader, const KeyedMap &root, ProbeConfig &probes)
{
    const MapEntry *providers = root.find("providers"_L1);
    if (!providers || !providers->value.IsSequence())
        return;
    for (const YAML::Node &node : providers->value) {
        if (!node.IsMap())
            continue;
        KeyedMap keys;
        for (auto it = node.begin(); it != node.end(); ++it) {
            if (!it->first.IsScalar())
                continue;
            keys.entries.append({fromYaml(it->first.Scalar()), it->first, it->second});
        }
        const MapEntry *path = keys.find("probe_path"_L1);
        if (!path)
            continue;
        QString id;
        if (const MapEntry *idEntry = keys.find("id"_L1); idEntry && idEntry->value.IsScalar())
            id = fromYaml(idEntry->value.Scalar());
        if (const auto value = readProbePath(reader, *path); value && !id.isEmpty())
            probes.pathByProvider.insert(id, *value);
    }
}

} // namespace

QList<QLatin1StringView> healthRootKeys()
{
    return {"breaker"_L1, "probes"_L1};
}

void checkHealthSections(YamlReader &reader, const KeyedMap &root, Config &config)
{
    ResilienceConfig &resilience = config.resilience;
    if (const MapEntry *breaker = root.find("breaker"_L1))
        checkBreaker(reader, *breaker, resilience.breaker);
    if (const MapEntry *probes = root.find("probes"_L1))
        checkProbes(reader, *probes, resilience.probes);
    checkProviderProbePaths(reader, root, resilience.probes);
}

} // namespace switchyard::config
