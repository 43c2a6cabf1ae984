#include "config/config_loader.h"

#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace switchyard::config {

namespace {

using namespace Qt::StringLiterals;
using std::chrono::milliseconds;

// Request bodies are buffered whole in memory before routing, so a larger limit is a way to run
// the gateway out of memory rather than a setting anyone needs.
constexpr qint64 maximumBodyBytes = qint64(1) << 30;
constexpr qint64 maximumBodyGibibytes = maximumBodyBytes >> 30;
// Timers and deadlines add durations to clock readings in nanoseconds; a day keeps every sum far
// from overflow and is longer than any gateway timeout a person means.
constexpr milliseconds maximumDuration = std::chrono::hours(24);

// Values longer than this are cut in messages so one error stays on one readable line.
constexpr qsizetype longestQuotedValue = 60;

QString fromYaml(const std::string &text)
{
    return QString::fromStdString(text);
}

// How a value appears in a message: scalars quoted, collections named by shape.
QString describe(const YAML::Node &node)
{
    switch (node.Type()) {
    case YAML::NodeType::Scalar: {
        QString text = fromYaml(node.Scalar());
        text.replace(u'\n', u"\\n"_s);
        if (text.size() > longestQuotedValue)
            text = text.left(longestQuotedValue - 3) + u"..."_s;
        return u'"' + text + u'"';
    }
    case YAML::NodeType::Sequence:
        return u"a list"_s;
    case YAML::NodeType::Map:
        return u"a map"_s;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
        break;
    }
    return u"an empty value"_s;
}

int editDistance(QStringView from, QStringView to)
{
    // One row of the classic Levenshtein table is enough; keys are a few characters long.
    QList<int> previous(to.size() + 1);
    for (qsizetype column = 0; column <= to.size(); ++column)
        previous[column] = int(column);
    QList<int> current(to.size() + 1);
    for (qsizetype row = 1; row <= from.size(); ++row) {
        current[0] = int(row);
        for (qsizetype column = 1; column <= to.size(); ++column) {
            const int substitution = from[row - 1] == to[column - 1] ? 0 : 1;
            current[column] = std::min({previous[column] + 1, current[column - 1] + 1,
                                        previous[column - 1] + substitution});
        }
        std::swap(previous, current);
    }
    return previous[to.size()];
}

// The allowed key a person most likely meant, or an empty string when none is close.
QString closestKey(const QString &unknown, const QList<QLatin1StringView> &allowed)
{
    const QString typed = unknown.toLower();
    QString best;
    int bestDistance = 3; // suggest only within two edits
    for (QLatin1StringView key : allowed) {
        const int distance = editDistance(typed, QString(key));
        // A suggestion must keep at least one typed character, or `x` would suggest `id`.
        if (distance < bestDistance && distance < typed.size()) {
            best = QString(key);
            bestDistance = distance;
        }
    }
    if (!best.isEmpty())
        return best;
    for (QLatin1StringView key : allowed) {
        const bool typedIsStart = typed.size() >= 3 && QString(key).startsWith(typed);
        if (typedIsStart || typed.startsWith(key))
            return QString(key);
    }
    return {};
}

struct MapEntry {
    QString name;
    YAML::Node key;
    YAML::Node value;
};

// The allowed entries of one YAML map, first occurrence of each, in file order.
struct KeyedMap {
    QList<MapEntry> entries;

    const MapEntry *find(QLatin1StringView name) const
    {
        for (const MapEntry &entry : entries) {
            if (entry.name == name)
                return &entry;
        }
        return nullptr;
    }
};

const QList<QLatin1StringView> rootKeys{"listen"_L1, "limits"_L1, "trace"_L1, "timeouts"_L1,
                                        "providers"_L1};
const QList<QLatin1StringView> limitKeys{"max_body"_L1, "shutdown_grace"_L1};
const QList<QLatin1StringView> traceKeys{"capacity"_L1};
const QList<QLatin1StringView> timeoutKeys{"connect"_L1, "first_token"_L1, "idle"_L1, "total"_L1};
const QList<QLatin1StringView> providerKeys{
    "id"_L1,     "kind"_L1,     "base_url"_L1,          "api_key_env"_L1, "models"_L1,
    "weight"_L1, "capacity"_L1, "latency_objective"_L1, "simulate"_L1};
const QList<QLatin1StringView> modelKeys{"name"_L1, "upstream"_L1};
const QList<QLatin1StringView> simulateKeys{"latency"_L1, "first_token"_L1, "tokens_per_second"_L1,
                                            "error_rate"_L1, "answer_tokens"_L1};

enum class ZeroDuration { Rejected, Allowed };

// Walks a parsed document against the schema, filling a Config and collecting every error.
class ConfigChecker {
public:
    ConfigChecker(const QString &sourceName, EnvironmentLookup environment)
        : m_sourceName(sourceName), m_environment(std::move(environment))
    {}

    Config check(const YAML::Node &root);

    void report(const YAML::Mark &mark, const QString &message)
    {
        m_errors.append({locate(mark), message});
    }

    QList<ConfigError> takeErrors() { return std::move(m_errors); }

private:
    SourceLocation locate(const YAML::Mark &mark) const
    {
        // yaml-cpp counts from 0 and marks "no position" with -1; editors count from 1.
        if (mark.is_null())
            return {m_sourceName, 0, 0};
        return {m_sourceName, mark.line + 1, mark.column + 1};
    }

    // yaml-cpp places an empty value at the token after it, often on the next line, so errors
    // about an empty value point at its key instead.
    static YAML::Mark valueMark(const MapEntry &entry)
    {
        return entry.value.IsNull() ? entry.key.Mark() : entry.value.Mark();
    }

    void reportValue(const MapEntry &entry, const QString &message)
    {
        report(valueMark(entry), message);
    }

    void reportMissing(const YAML::Node &parent, const QString &owner, QLatin1StringView key)
    {
        report(parent.Mark(), u"%1 is missing required key `%2`"_s.arg(owner, key));
    }

    KeyedMap readKeys(const YAML::Node &map, const QList<QLatin1StringView> &allowed);
    std::optional<KeyedMap> readSection(const MapEntry &entry,
                                        const QList<QLatin1StringView> &allowed);

    std::optional<QString> readString(const MapEntry &entry);
    std::optional<qint64> readInteger(const MapEntry &entry, qint64 minimum, qint64 maximum);
    std::optional<double> readNumber(const MapEntry &entry);
    std::optional<milliseconds> readDuration(const MapEntry &entry, ZeroDuration zero);
    std::optional<qint64> readSize(const MapEntry &entry);

    void checkListen(const MapEntry &entry, ServerConfig &server);
    void checkLimits(const MapEntry &entry, ServerConfig &server);
    void checkTrace(const MapEntry &entry, ServerConfig &server);
    void checkTimeouts(const MapEntry &entry, TimeoutConfig &timeouts);
    void checkProviders(const MapEntry &entry, QList<ProviderConfig> &providers);
    std::optional<ProviderConfig> checkProvider(const YAML::Node &node);
    void checkApiKeyEnv(const MapEntry &entry, ProviderConfig &provider, bool resolveKey);
    void checkModels(const MapEntry &entry, ProviderConfig &provider);
    void checkSimulate(const MapEntry &entry, SimulatedBehaviour &simulated);

    QString m_sourceName;
    EnvironmentLookup m_environment;
    QList<ConfigError> m_errors;
    QHash<QString, int> m_providerIdLines;
};

KeyedMap ConfigChecker::readKeys(const YAML::Node &map, const QList<QLatin1StringView> &allowed)
{
    KeyedMap keyed;
    // yaml-cpp keeps every occurrence of a repeated key while lookups see only the first, so a
    // repeated key would otherwise be ignored without a word.
    QHash<QString, int> firstLines;
    for (auto it = map.begin(); it != map.end(); ++it) {
        const YAML::Node key = it->first;
        if (!key.IsScalar()) {
            report(key.Mark(), u"keys must be plain names, got %1"_s.arg(describe(key)));
            continue;
        }
        const QString name = fromYaml(key.Scalar());
        if (!allowed.contains(name)) {
            const QString suggestion = closestKey(name, allowed);
            report(key.Mark(),
                   suggestion.isEmpty()
                       ? u"unknown key `%1`"_s.arg(name)
                       : u"unknown key `%1` (did you mean `%2`?)"_s.arg(name, suggestion));
            continue;
        }
        const int line = locate(key.Mark()).line;
        if (const auto first = firstLines.constFind(name); first != firstLines.cend()) {
            report(key.Mark(), u"duplicate key `%1` (first at line %2)"_s.arg(
                                   name, QString::number(first.value())));
            continue;
        }
        firstLines.insert(name, line);
        keyed.entries.append({name, key, it->second});
    }
    return keyed;
}

std::optional<KeyedMap> ConfigChecker::readSection(const MapEntry &entry,
                                                   const QList<QLatin1StringView> &allowed)
{
    if (!entry.value.IsMap()) {
        reportValue(entry, u"`%1` must be a map, got %2"_s.arg(entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return readKeys(entry.value, allowed);
}

std::optional<QString> ConfigChecker::readString(const MapEntry &entry)
{
    if (!entry.value.IsScalar()) {
        reportValue(entry,
                    u"`%1` must be a string, got %2"_s.arg(entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return fromYaml(entry.value.Scalar());
}

std::optional<qint64> ConfigChecker::readInteger(const MapEntry &entry, qint64 minimum,
                                                 qint64 maximum)
{
    bool parsed = false;
    const qint64 value =
        entry.value.IsScalar() ? fromYaml(entry.value.Scalar()).toLongLong(&parsed) : 0;
    const QString shown = describe(entry.value);
    if (!parsed) {
        reportValue(entry, u"`%1` must be an integer, got %2"_s.arg(entry.name, shown));
        return std::nullopt;
    }
    if (value < minimum) {
        reportValue(entry, u"`%1` must be at least %2, got %3"_s.arg(
                               entry.name, QString::number(minimum), shown));
        return std::nullopt;
    }
    if (value > maximum) {
        reportValue(entry, u"`%1` must be at most %2, got %3"_s.arg(
                               entry.name, QString::number(maximum), shown));
        return std::nullopt;
    }
    return value;
}

std::optional<double> ConfigChecker::readNumber(const MapEntry &entry)
{
    bool parsed = false;
    const double value =
        entry.value.IsScalar() ? fromYaml(entry.value.Scalar()).toDouble(&parsed) : 0.0;
    if (!parsed || !std::isfinite(value)) {
        reportValue(entry,
                    u"`%1` must be a number, got %2"_s.arg(entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return value;
}

std::optional<milliseconds> ConfigChecker::readDuration(const MapEntry &entry, ZeroDuration zero)
{
    // A bare number is milliseconds; only a number with a unit may have a fraction ("1.5s").
    static const QRegularExpression pattern(uR"(^(\d+|\d+\.\d+)\s*(ms|s|m|h)$|^(\d+)$)"_s);
    const QString shown = describe(entry.value);
    const QRegularExpressionMatch match = entry.value.IsScalar()
                                              ? pattern.match(fromYaml(entry.value.Scalar()))
                                              : QRegularExpressionMatch();
    if (!match.hasMatch()) {
        reportValue(entry, u"`%1` must be a duration such as `250ms`, `3s` or `2m`, got %2"_s.arg(
                               entry.name, shown));
        return std::nullopt;
    }
    double totalMs = 0.0;
    if (match.hasCaptured(3)) {
        totalMs = match.captured(3).toDouble();
    } else {
        const QString unit = match.captured(2);
        const double msPerUnit = unit == u"ms"_s  ? 1.0
                                 : unit == u"s"_s ? 1000.0
                                 : unit == u"m"_s ? 60'000.0
                                                  : 3'600'000.0;
        totalMs = match.captured(1).toDouble() * msPerUnit;
    }
    if (totalMs > double(maximumDuration.count())) {
        const auto hours = std::chrono::duration_cast<std::chrono::hours>(maximumDuration);
        reportValue(entry, u"`%1` must be at most %2h, got %3"_s.arg(
                               entry.name, QString::number(hours.count()), shown));
        return std::nullopt;
    }
    const milliseconds duration(std::llround(totalMs));
    if (duration.count() == 0 && zero == ZeroDuration::Rejected) {
        reportValue(entry, u"`%1` must be greater than 0, got %2"_s.arg(entry.name, shown));
        return std::nullopt;
    }
    return duration;
}

std::optional<qint64> ConfigChecker::readSize(const MapEntry &entry)
{
    // KB and MB are decimal (1000), KiB and MiB binary (1024), as on every disk label.
    static const QRegularExpression pattern(
        uR"(^(\d+|\d+\.\d+)\s*(B|KB|KiB|MB|MiB|GB|GiB)$|^(\d+)$)"_s);
    const QString shown = describe(entry.value);
    const QRegularExpressionMatch match = entry.value.IsScalar()
                                              ? pattern.match(fromYaml(entry.value.Scalar()))
                                              : QRegularExpressionMatch();
    if (!match.hasMatch()) {
        reportValue(entry,
                    u"`%1` must be a size such as `8MiB`, `512KiB` or `1048576`, got %2"_s.arg(
                        entry.name, shown));
        return std::nullopt;
    }
    double bytes = 0.0;
    if (match.hasCaptured(3)) {
        bytes = match.captured(3).toDouble();
    } else {
        static const QHash<QString, double> bytesPerUnit{
            {u"B"_s, 1.0},         {u"KB"_s, 1e3}, {u"KiB"_s, 1024.0},      {u"MB"_s, 1e6},
            {u"MiB"_s, 1048576.0}, {u"GB"_s, 1e9}, {u"GiB"_s, 1073741824.0}};
        bytes = match.captured(1).toDouble() * bytesPerUnit.value(match.captured(2));
    }
    if (bytes > double(maximumBodyBytes)) {
        reportValue(entry, u"`%1` must be at most %2GiB, got %3"_s.arg(
                               entry.name, QString::number(maximumBodyGibibytes), shown));
        return std::nullopt;
    }
    const qint64 size = std::llround(bytes);
    if (size == 0) {
        reportValue(entry, u"`%1` must be greater than 0, got %2"_s.arg(entry.name, shown));
        return std::nullopt;
    }
    return size;
}

void ConfigChecker::checkListen(const MapEntry &entry, ServerConfig &server)
{
    const QString shown = describe(entry.value);
    ListenAddressError error = ListenAddressError::NotHostPort;
    const std::optional<ListenAddress> address =
        entry.value.IsScalar() ? parseListenAddress(fromYaml(entry.value.Scalar()), &error)
                               : std::nullopt;
    if (!address) {
        reportValue(
            entry,
            error == ListenAddressError::PortOutOfRange
                ? u"`listen` port must be between 0 and 65535, got %1"_s.arg(shown)
                : u"`listen` must be HOST:PORT such as `127.0.0.1:8080`, got %1"_s.arg(shown));
        return;
    }
    server.listenHost = address->host;
    server.listenPort = address->port;
}

void ConfigChecker::checkLimits(const MapEntry &entry, ServerConfig &server)
{
    const std::optional<KeyedMap> limits = readSection(entry, limitKeys);
    if (!limits)
        return;
    if (const MapEntry *maxBody = limits->find("max_body"_L1)) {
        if (const auto bytes = readSize(*maxBody))
            server.maxBodyBytes = *bytes;
    }
    if (const MapEntry *grace = limits->find("shutdown_grace"_L1)) {
        // Zero is a real choice here: stop at once without waiting for open streams.
        if (const auto duration = readDuration(*grace, ZeroDuration::Allowed))
            server.shutdownGrace = *duration;
    }
}

void ConfigChecker::checkTrace(const MapEntry &entry, ServerConfig &server)
{
    const std::optional<KeyedMap> trace = readSection(entry, traceKeys);
    if (!trace)
        return;
    if (const MapEntry *capacity = trace->find("capacity"_L1)) {
        if (const auto traces = readInteger(*capacity, 1, std::numeric_limits<int>::max()))
            server.traceCapacity = int(*traces);
    }
}

void ConfigChecker::checkTimeouts(const MapEntry &entry, TimeoutConfig &timeouts)
{
    const std::optional<KeyedMap> section = readSection(entry, timeoutKeys);
    if (!section)
        return;
    const std::pair<QLatin1StringView, milliseconds *> fields[] = {
        {"connect"_L1, &timeouts.connect},
        {"first_token"_L1, &timeouts.firstToken},
        {"idle"_L1, &timeouts.idle},
        {"total"_L1, &timeouts.total},
    };
    for (const auto &[name, target] : fields) {
        if (const MapEntry *field = section->find(name)) {
            if (const auto duration = readDuration(*field, ZeroDuration::Rejected))
                *target = *duration;
        }
    }
}

void ConfigChecker::checkProviders(const MapEntry &entry, QList<ProviderConfig> &providers)
{
    if (!entry.value.IsSequence()) {
        reportValue(entry, u"`providers` must be a list, got %1"_s.arg(describe(entry.value)));
        return;
    }
    if (entry.value.size() == 0) {
        reportValue(entry, u"`providers` must list at least one provider"_s);
        return;
    }
    int position = 0;
    for (const YAML::Node &node : entry.value) {
        ++position;
        if (!node.IsMap()) {
            // An empty entry carries the position of the token after it; its list's is nearer.
            report(node.IsNull() ? entry.value.Mark() : node.Mark(),
                   u"entry %1 of `providers` must be a map, got %2"_s.arg(QString::number(position),
                                                                          describe(node)));
            continue;
        }
        if (std::optional<ProviderConfig> provider = checkProvider(node))
            providers.append(std::move(*provider));
    }
}

std::optional<ProviderConfig> ConfigChecker::checkProvider(const YAML::Node &node)
{
    static const QRegularExpression idPattern(u"^[A-Za-z0-9._-]+$"_s);
    const KeyedMap keys = readKeys(node, providerKeys);
    ProviderConfig provider;
    provider.where = locate(node.Mark());
    const qsizetype errorsBefore = m_errors.size();

    if (const MapEntry *id = keys.find("id"_L1)) {
        if (const auto text = readString(*id)) {
            const int line = locate(valueMark(*id)).line;
            if (!idPattern.match(*text).hasMatch()) {
                reportValue(*id, u"`id` may contain only letters, digits, `.`, `_` and `-`, "
                                 u"got %1"_s.arg(describe(id->value)));
            } else if (const auto first = m_providerIdLines.constFind(*text);
                       first != m_providerIdLines.cend()) {
                reportValue(*id, u"duplicate provider id `%1` (first at line %2)"_s.arg(
                                     *text, QString::number(first.value())));
            } else {
                m_providerIdLines.insert(*text, line);
                provider.id = *text;
            }
        }
    } else {
        reportMissing(node, u"provider"_s, "id"_L1);
    }

    std::optional<ProviderKind> kind;
    if (const MapEntry *kindEntry = keys.find("kind"_L1)) {
        if (const auto text = readString(*kindEntry)) {
            if (*text == u"openai"_s)
                kind = ProviderKind::OpenAi;
            else if (*text == u"simulated"_s)
                kind = ProviderKind::Simulated;
            else
                reportValue(*kindEntry, u"`kind` must be `openai` or `simulated`, got %1"_s.arg(
                                            describe(kindEntry->value)));
        }
    } else {
        reportMissing(node, u"provider"_s, "kind"_L1);
    }
    if (kind)
        provider.kind = *kind;

    // With an unknown kind the kind-specific keys are still checked for form, but not for fit,
    // so one typo in `kind` does not bury the file under follow-on errors.
    if (const MapEntry *baseUrl = keys.find("base_url"_L1)) {
        if (kind == ProviderKind::Simulated) {
            report(baseUrl->key.Mark(), u"`base_url` is not allowed for a simulated provider"_s);
        } else if (const auto text = readString(*baseUrl)) {
            const QUrl url(*text, QUrl::StrictMode);
            const bool httpScheme = url.scheme() == u"http"_s || url.scheme() == u"https"_s;
            if (!url.isValid() || !httpScheme || url.host().isEmpty()) {
                reportValue(*baseUrl,
                            u"`base_url` must be an http or https URL such as "
                            u"`http://127.0.0.1:8001/v1`, got %1"_s.arg(describe(baseUrl->value)));
            } else {
                provider.baseUrl = url;
            }
        }
    } else if (kind == ProviderKind::OpenAi) {
        reportMissing(node, u"openai provider"_s, "base_url"_L1);
    }

    if (const MapEntry *apiKeyEnv = keys.find("api_key_env"_L1)) {
        if (kind == ProviderKind::Simulated)
            report(apiKeyEnv->key.Mark(),
                   u"`api_key_env` is not allowed for a simulated provider"_s);
        else
            checkApiKeyEnv(*apiKeyEnv, provider, kind == ProviderKind::OpenAi);
    }

    if (const MapEntry *models = keys.find("models"_L1))
        checkModels(*models, provider);
    else
        reportMissing(node, u"provider"_s, "models"_L1);

    if (const MapEntry *weight = keys.find("weight"_L1)) {
        if (const auto value = readInteger(*weight, 0, std::numeric_limits<int>::max()))
            provider.weight = int(*value);
    }
    if (const MapEntry *capacity = keys.find("capacity"_L1)) {
        if (const auto value = readInteger(*capacity, 1, std::numeric_limits<int>::max()))
            provider.capacity = int(*value);
    }
    if (const MapEntry *objective = keys.find("latency_objective"_L1)) {
        if (const auto value = readDuration(*objective, ZeroDuration::Rejected))
            provider.latencyObjective = *value;
    }

    if (const MapEntry *simulate = keys.find("simulate"_L1)) {
        if (kind == ProviderKind::OpenAi)
            report(simulate->key.Mark(), u"`simulate` is only allowed for a simulated provider"_s);
        else
            checkSimulate(*simulate, provider.simulated);
    }

    if (m_errors.size() != errorsBefore)
        return std::nullopt;
    return provider;
}

void ConfigChecker::checkApiKeyEnv(const MapEntry &entry, ProviderConfig &provider, bool resolveKey)
{
    static const QRegularExpression namePattern(u"^[A-Za-z_][A-Za-z0-9_]*$"_s);
    const std::optional<QString> name = readString(entry);
    if (!name)
        return;
    if (!namePattern.match(*name).hasMatch()) {
        // The value is left out on purpose: the usual mistake is pasting the key itself here,
        // and this message ends up in logs.
        reportValue(entry, u"`api_key_env` must name an environment variable (letters, digits "
                           u"and `_`), not hold the key itself"_s);
        return;
    }
    provider.apiKeyEnv = *name;
    if (!resolveKey)
        return;
    const std::optional<QByteArray> key = m_environment(*name);
    if (!key) {
        reportValue(entry, u"environment variable %1 is not set"_s.arg(*name));
        return;
    }
    provider.apiKey = *key;
}

void ConfigChecker::checkModels(const MapEntry &entry, ProviderConfig &provider)
{
    if (!entry.value.IsSequence()) {
        reportValue(entry,
                    u"`models` must be a list of model names, got %1"_s.arg(describe(entry.value)));
        return;
    }
    if (entry.value.size() == 0) {
        reportValue(entry, u"`models` must list at least one model"_s);
        return;
    }
    QHash<QString, int> firstLines;
    int position = 0;
    for (const YAML::Node &node : entry.value) {
        ++position;
        ModelRoute route;
        YAML::Mark nameMark = node.Mark();
        if (node.IsScalar()) {
            route.publicName = fromYaml(node.Scalar());
            route.upstreamName = route.publicName;
        } else if (node.IsMap()) {
            const KeyedMap keys = readKeys(node, modelKeys);
            const MapEntry *name = keys.find("name"_L1);
            if (!name) {
                reportMissing(node, u"model"_s, "name"_L1);
                continue;
            }
            const std::optional<QString> publicName = readString(*name);
            if (!publicName)
                continue;
            nameMark = valueMark(*name);
            route.publicName = *publicName;
            route.upstreamName = *publicName;
            if (const MapEntry *upstream = keys.find("upstream"_L1)) {
                const std::optional<QString> upstreamName = readString(*upstream);
                if (!upstreamName)
                    continue;
                if (upstreamName->isEmpty()) {
                    reportValue(*upstream, u"`upstream` must not be empty"_s);
                    continue;
                }
                route.upstreamName = *upstreamName;
            }
        } else {
            report(node.IsNull() ? entry.value.Mark() : node.Mark(),
                   u"entry %1 of `models` must be a model name or a map with `name` and "
                   u"`upstream`, got %2"_s.arg(QString::number(position), describe(node)));
            continue;
        }
        if (route.publicName.isEmpty()) {
            report(nameMark, u"model name must not be empty"_s);
            continue;
        }
        if (const auto first = firstLines.constFind(route.publicName); first != firstLines.cend()) {
            report(nameMark, u"duplicate model `%1` (first at line %2)"_s.arg(
                                 route.publicName, QString::number(first.value())));
            continue;
        }
        firstLines.insert(route.publicName, locate(nameMark).line);
        provider.models.append(route);
    }
}

void ConfigChecker::checkSimulate(const MapEntry &entry, SimulatedBehaviour &simulated)
{
    const std::optional<KeyedMap> simulate = readSection(entry, simulateKeys);
    if (!simulate)
        return;
    // Zero delays are allowed: tests want a simulated provider that answers at once.
    if (const MapEntry *latency = simulate->find("latency"_L1)) {
        if (const auto value = readDuration(*latency, ZeroDuration::Allowed))
            simulated.latency = *value;
    }
    if (const MapEntry *firstToken = simulate->find("first_token"_L1)) {
        if (const auto value = readDuration(*firstToken, ZeroDuration::Allowed))
            simulated.timeToFirstToken = *value;
    }
    if (const MapEntry *pace = simulate->find("tokens_per_second"_L1)) {
        if (const auto value = readNumber(*pace)) {
            if (*value > 0.0)
                simulated.tokensPerSecond = *value;
            else
                reportValue(*pace, u"`tokens_per_second` must be greater than 0, got %1"_s.arg(
                                       describe(pace->value)));
        }
    }
    if (const MapEntry *errorRate = simulate->find("error_rate"_L1)) {
        if (const auto value = readNumber(*errorRate)) {
            if (*value >= 0.0 && *value <= 1.0)
                simulated.errorRate = *value;
            else
                reportValue(*errorRate, u"`error_rate` must be between 0 and 1, got %1"_s.arg(
                                            describe(errorRate->value)));
        }
    }
    if (const MapEntry *answerTokens = simulate->find("answer_tokens"_L1)) {
        if (const auto value = readInteger(*answerTokens, 1, std::numeric_limits<int>::max()))
            simulated.answerTokens = int(*value);
    }
}

Config ConfigChecker::check(const YAML::Node &root)
{
    Config config;
    config.sourceName = m_sourceName;
    const KeyedMap keys = readKeys(root, rootKeys);
    if (const MapEntry *listen = keys.find("listen"_L1))
        checkListen(*listen, config.server);
    if (const MapEntry *limits = keys.find("limits"_L1))
        checkLimits(*limits, config.server);
    if (const MapEntry *trace = keys.find("trace"_L1))
        checkTrace(*trace, config.server);
    if (const MapEntry *timeouts = keys.find("timeouts"_L1))
        checkTimeouts(*timeouts, config.timeouts);
    if (const MapEntry *providers = keys.find("providers"_L1))
        checkProviders(*providers, config.providers);
    else
        reportMissing(root, u"config"_s, "providers"_L1);
    return config;
}

} // namespace

EnvironmentLookup processEnvironment()
{
    return [](const QString &name) -> std::optional<QByteArray> {
        const QByteArray variable = name.toLocal8Bit();
        if (!qEnvironmentVariableIsSet(variable.constData()))
            return std::nullopt;
        return qgetenv(variable.constData());
    };
}

LoadResult loadConfigText(const QByteArray &yaml, const QString &sourceName,
                          const EnvironmentLookup &environment)
{
    LoadResult result;
    const SourceLocation startOfFile{sourceName, 1, 1};
    std::vector<YAML::Node> documents;
    try {
        documents = YAML::LoadAll(yaml.toStdString());
    } catch (const YAML::Exception &syntaxError) {
        const YAML::Mark &mark = syntaxError.mark;
        const SourceLocation where =
            mark.is_null() ? startOfFile
                           : SourceLocation{sourceName, mark.line + 1, mark.column + 1};
        result.errors.append(
            {where, u"invalid YAML: %1"_s.arg(QString::fromStdString(syntaxError.msg))});
        return result;
    }

    if (documents.empty() || documents.front().IsNull()) {
        result.errors.append({startOfFile, u"config is empty; expected a map with `providers`"_s});
        return result;
    }

    ConfigChecker checker(sourceName, environment ? environment : processEnvironment());
    std::optional<Config> config;
    const YAML::Node &root = documents.front();
    if (root.IsMap())
        config = checker.check(root);
    else
        checker.report(root.Mark(),
                       u"config must be a map with `providers`, got %1"_s.arg(describe(root)));
    for (std::size_t index = 1; index < documents.size(); ++index) {
        if (!documents[index].IsNull())
            checker.report(documents[index].Mark(),
                           u"config must be a single YAML document, found another one"_s);
    }

    result.errors = checker.takeErrors();
    // Checks run section by section; people read errors top to bottom.
    std::stable_sort(result.errors.begin(), result.errors.end(),
                     [](const ConfigError &left, const ConfigError &right) {
                         return std::pair(left.where.line, left.where.column) <
                                std::pair(right.where.line, right.where.column);
                     });
    if (result.errors.isEmpty())
        result.config = std::move(config);
    return result;
}

LoadResult loadConfigFile(const QString &path, const EnvironmentLookup &environment)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        LoadResult result;
        result.errors.append({{path, 0, 0}, u"cannot read file: %1"_s.arg(file.errorString())});
        return result;
    }
    const QByteArray text = file.readAll();
    if (file.error() != QFileDevice::NoError) {
        LoadResult result;
        result.errors.append({{path, 0, 0}, u"cannot read file: %1"_s.arg(file.errorString())});
        return result;
    }
    return loadConfigText(text, path, environment);
}

} // namespace switchyard::config
