#include "config/config_loader.h"

#include "config/config_sections.h"
#include "config/yaml_reader.h"

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

const QList<QLatin1StringView> serverRootKeys{"listen"_L1, "limits"_L1, "trace"_L1, "timeouts"_L1,
                                              "providers"_L1};

QList<QLatin1StringView> rootKeys()
{
    return serverRootKeys + routingRootKeys() + healthRootKeys() + resilienceRootKeys() +
           logRootKeys() + stateRootKeys() + alertsRootKeys() + authRootKeys() + usageRootKeys() +
           fleetRootKeys() + idempotencyRootKeys() + responsesRootKeys() + responseCacheRootKeys();
}
const QList<QLatin1StringView> limitKeys{"max_body"_L1,
                                         "shutdown_grace"_L1,
                                         "drain_delay"_L1,
                                         "header_timeout"_L1,
                                         "body_timeout"_L1,
                                         "keep_alive_idle"_L1,
                                         "max_connections"_L1,
                                         "max_connections_per_address"_L1,
                                         "max_refusals_draining"_L1};
const QList<QLatin1StringView> traceKeys{"capacity"_L1,    "max_bytes"_L1,      "chunk_events"_L1,
                                         "keep_bodies"_L1, "body_max_bytes"_L1, "otlp"_L1};
const QList<QLatin1StringView> timeoutKeys{"connect"_L1, "first_token"_L1, "idle"_L1, "total"_L1};
const QList<QLatin1StringView> providerKeys{
    "id"_L1,
    "kind"_L1,
    "base_url"_L1,
    "api_key_env"_L1,
    "models"_L1,
    "weight"_L1,
    "capacity"_L1,
    "latency_objective"_L1,
    "simulate"_L1,
    "probe_path"_L1, // probe_path is read with the probes (breaker_section.cpp)
    "responses_api"_L1,
    "forward_client_authorization"_L1,
    "continues_answers"_L1};
const QList<QLatin1StringView> modelKeys{"name"_L1,       "upstream"_L1,  "endpoints"_L1,
                                         "dimensions"_L1, "fallbacks"_L1, "cache"_L1};
const QList<QLatin1StringView> simulateKeys{"latency"_L1, "first_token"_L1, "tokens_per_second"_L1,
                                            "error_rate"_L1, "answer_tokens"_L1};

// Walks a parsed document against the schema, filling a Config and collecting every error.
// The sections beyond the server and providers are checked by functions in config_sections.h.
class ConfigChecker : public YamlReader {
public:
    ConfigChecker(const QString &sourceName, EnvironmentLookup environment)
        : YamlReader(sourceName), m_environment(std::move(environment))
    {}

    Config check(const YAML::Node &root);

private:
    void checkListen(const MapEntry &entry, ServerConfig &server);
    void checkLimits(const MapEntry &entry, ServerConfig &server);
    void checkTrace(const MapEntry &entry, TraceConfig &trace);
    void checkTimeouts(const MapEntry &entry, TimeoutConfig &timeouts);
    void checkProviders(const MapEntry &entry, QList<ProviderConfig> &providers);
    std::optional<ProviderConfig> checkProvider(const YAML::Node &node);
    void checkApiKeyEnv(const MapEntry &entry, ProviderConfig &provider, bool resolveKey);
    void checkModels(const MapEntry &entry, ProviderConfig &provider,
                     std::optional<ProviderKind> kind);
    std::optional<protocol::Operations> checkModelEndpoints(const MapEntry &entry,
                                                            const ProviderConfig &provider,
                                                            std::optional<ProviderKind> kind);
    void checkSimulate(const MapEntry &entry, SimulatedBehaviour &simulated);

    EnvironmentLookup m_environment;
    QHash<QString, int> m_providerIdLines;
};

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
    if (const MapEntry *delay = limits->find("drain_delay"_L1)) {
        // Zero is the default: no load balancer to wait for.
        if (const auto duration = readDuration(*delay, ZeroDuration::Allowed))
            server.drainDelay = *duration;
    }
    // Zero is refused for every connection timeout: a connection that may never time out is
    // what these keys exist to prevent, and a zero idle time would close a kept-alive
    // connection under a client that is about to reuse it.
    const std::pair<QLatin1StringView, milliseconds *> timeouts[] = {
        {"header_timeout"_L1, &server.headerTimeout},
        {"body_timeout"_L1, &server.bodyTimeout},
        {"keep_alive_idle"_L1, &server.keepAliveIdle},
    };
    for (const auto &[name, target] : timeouts) {
        if (const MapEntry *timeout = limits->find(name)) {
            if (const auto duration = readDuration(*timeout, ZeroDuration::Rejected))
                *target = *duration;
        }
    }
    // A million is far beyond what one process's descriptors allow; a number above it is a typo.
    constexpr qint64 kMostConnections = 1'000'000;
    if (const MapEntry *total = limits->find("max_connections"_L1)) {
        if (const auto connections = readInteger(*total, 1, kMostConnections))
            server.maxConnections = int(*connections);
    }
    if (const MapEntry *perAddress = limits->find("max_connections_per_address"_L1)) {
        if (const auto connections = readInteger(*perAddress, 0, kMostConnections))
            server.maxConnectionsPerAddress = int(*connections);
    }
    // At least one: a refused connection is accepted before it can be refused, so one always
    // drains; zero would read as "none", which no setting can give.
    if (const MapEntry *draining = limits->find("max_refusals_draining"_L1)) {
        if (const auto connections = readInteger(*draining, 1, kMostConnections))
            server.maxRefusalsDraining = int(*connections);
    }
}

void ConfigChecker::checkTrace(const MapEntry &entry, TraceConfig &trace)
{
    const std::optional<KeyedMap> section = readSection(entry, traceKeys);
    if (!section)
        return;
    if (const MapEntry *capacity = section->find("capacity"_L1)) {
        if (const auto traces = readInteger(*capacity, 1, std::numeric_limits<int>::max()))
            trace.capacity = int(*traces);
    }
    if (const MapEntry *maxBytes = section->find("max_bytes"_L1)) {
        if (const auto bytes = readSize(*maxBytes))
            trace.maxBytes = *bytes;
    }
    if (const MapEntry *chunks = section->find("chunk_events"_L1)) {
        // Zero keeps none: chunks are still counted, their arrival times are not.
        if (const auto count = readInteger(*chunks, 0, 1'000'000))
            trace.chunkEvents = int(*count);
    }
    if (const MapEntry *keep = section->find("keep_bodies"_L1)) {
        if (const auto kept = readBool(*keep))
            trace.keepBodies = *kept;
    }
    if (const MapEntry *cap = section->find("body_max_bytes"_L1)) {
        if (const auto bytes = readSize(*cap))
            trace.bodyMaxBytes = *bytes;
    }
    if (const MapEntry *otlp = section->find("otlp"_L1))
        checkOtlpExport(*this, m_environment, *otlp, trace.otlp);
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
    const KeyedMap keys = readKeys(node, providerKeys + adapterProviderKeys() + providerCallKeys());
    ProviderConfig provider;
    provider.where = locate(node.Mark());
    const qsizetype errorsBefore = errorCount();

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
            else if (*text == u"anthropic"_s)
                kind = ProviderKind::Anthropic;
            else if (*text == u"mapped"_s)
                kind = ProviderKind::Mapped;
            else if (*text == u"simulated"_s)
                kind = ProviderKind::Simulated;
            else
                reportValue(*kindEntry,
                            u"`kind` must be `openai`, `anthropic`, `mapped` or `simulated`, "
                            u"got %1"_s.arg(describe(kindEntry->value)));
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
            // `{model}` stands for each attempt's upstream model name (Azure OpenAI names its
            // deployments in the path). The URL is checked with a plain word in its place, and
            // kept with the braces encoded, where the adapters replace it.
            const QString placeholder = u"{model}"_s;
            const QString word = u"switchyard-model-placeholder"_s;
            QString checked = *text;
            checked.replace(placeholder, word);
            const QUrl url(checked, QUrl::StrictMode);
            const bool httpScheme = url.scheme() == u"http"_s || url.scheme() == u"https"_s;
            if (checked.contains(u'{') || checked.contains(u'}')) {
                reportValue(*baseUrl, u"`base_url` may hold `{model}` but no other `{...}`, "
                                      u"got %1"_s.arg(describe(baseUrl->value)));
            } else if (!url.isValid() || !httpScheme || url.host().isEmpty()) {
                reportValue(*baseUrl,
                            u"`base_url` must be an http or https URL such as "
                            u"`http://127.0.0.1:8001/v1`, got %1"_s.arg(describe(baseUrl->value)));
            } else if (url.toString(QUrl::RemovePath).contains(word)) {
                reportValue(*baseUrl, u"`{model}` may only stand in the path of `base_url`, "
                                      u"got %1"_s.arg(describe(baseUrl->value)));
            } else {
                provider.baseUrl = text->contains(placeholder) ? QUrl(*text) : url;
            }
        }
    } else if (kind && *kind != ProviderKind::Simulated) {
        reportMissing(node, u"%1 provider"_s.arg(kindName(*kind)), "base_url"_L1);
    }

    if (const MapEntry *apiKeyEnv = keys.find("api_key_env"_L1)) {
        if (kind == ProviderKind::Simulated)
            report(apiKeyEnv->key.Mark(),
                   u"`api_key_env` is not allowed for a simulated provider"_s);
        else
            checkApiKeyEnv(*apiKeyEnv, provider, kind.has_value());
    }

    if (const MapEntry *responsesApi = keys.find("responses_api"_L1)) {
        if (kind && *kind != ProviderKind::OpenAi)
            report(responsesApi->key.Mark(),
                   u"`responses_api` is only allowed for an openai provider: other kinds are "
                   u"served the Responses API translated to their own protocol"_s);
        else if (const auto value = readBool(*responsesApi))
            provider.speaksResponses = *value;
    }

    if (const MapEntry *forward = keys.find("forward_client_authorization"_L1)) {
        if (const auto value = readBool(*forward))
            provider.forwardClientAuthorization = *value;
    }

    if (const MapEntry *continues = keys.find("continues_answers"_L1)) {
        if (kind == ProviderKind::Mapped)
            report(continues->key.Mark(),
                   u"`continues_answers` is not allowed for a mapped provider: an agent's own JSON "
                   u"has no way to be given a partial answer to continue"_s);
        else if (const auto value = readBool(*continues))
            provider.continuesAnswersSetting = *value;
    }

    if (const MapEntry *models = keys.find("models"_L1))
        checkModels(*models, provider, kind);
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
        if (kind && *kind != ProviderKind::Simulated)
            report(simulate->key.Mark(), u"`simulate` is only allowed for a simulated provider"_s);
        else
            checkSimulate(*simulate, provider.simulated);
    }

    checkProviderAdapter(*this, node, keys, kind, provider);
    checkProviderCall(*this, m_environment, keys, kind, provider);

    if (errorCount() != errorsBefore)
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
    // A line break would end the header the key goes in and start another one.
    if (key->contains('\n') || key->contains('\r') || key->contains('\0')) {
        reportValue(entry, u"environment variable %1 holds a line break; a key must be one "
                           u"line"_s.arg(*name));
        return;
    }
    provider.apiKey = *key;
}

void ConfigChecker::checkModels(const MapEntry &entry, ProviderConfig &provider,
                                std::optional<ProviderKind> kind)
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
            if (const MapEntry *endpoints = keys.find("endpoints"_L1)) {
                const std::optional<protocol::Operations> operations =
                    checkModelEndpoints(*endpoints, provider, kind);
                if (!operations)
                    continue;
                route.endpoints = *operations;
            }
            if (const MapEntry *dimensions = keys.find("dimensions"_L1)) {
                const auto value = readInteger(*dimensions, 1, 65536);
                if (!value)
                    continue;
                if (!route.serves(protocol::Operation::Embeddings)) {
                    report(dimensions->key.Mark(),
                           u"`dimensions` is only allowed for a model whose `endpoints` list "
                           u"`embeddings`"_s);
                    continue;
                }
                route.dimensions = int(*value);
            }
            if (const MapEntry *fallbacks = keys.find("fallbacks"_L1)) {
                const SourceLocation where = locate(valueMark(*fallbacks));
                route.fallbacksPosition = {where.line, where.column};
                std::optional<ErrorFallbacks> read = readErrorFallbacks(*this, *fallbacks);
                if (!read)
                    continue;
                route.fallbacks = std::move(*read);
            }
            if (const MapEntry *cache = keys.find("cache"_L1)) {
                std::optional<ResponseCacheConfig> read = readResponseCache(*this, *cache);
                if (!read)
                    continue;
                route.cache = *read;
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

std::optional<protocol::Operations>
ConfigChecker::checkModelEndpoints(const MapEntry &entry, const ProviderConfig &provider,
                                   std::optional<ProviderKind> kind)
{
    static const QList<QLatin1StringView> names{"chat"_L1, "responses"_L1, "embeddings"_L1,
                                                "completions"_L1};
    if (!entry.value.IsSequence() || entry.value.size() == 0) {
        reportValue(entry,
                    u"`endpoints` must list one or more of `chat`, `responses`, "
                    u"`embeddings` and `completions`, got %1"_s.arg(
                        entry.value.IsSequence() ? u"an empty list"_s : describe(entry.value)));
        return std::nullopt;
    }
    protocol::Operations operations = 0;
    bool ok = true;
    for (const YAML::Node &node : entry.value) {
        const QString name = node.IsScalar() ? fromYaml(node.Scalar()) : QString();
        const std::optional<protocol::Operation> operation = protocol::operationFromName(name);
        if (!operation) {
            const QString suggestion = closestKey(name, names);
            report(node.Mark(),
                   u"unknown endpoint %1: expected `chat`, `responses`, `embeddings` "
                   u"or `completions`%2"_s.arg(describe(node),
                                               suggestion.isEmpty()
                                                   ? QString()
                                                   : u" (did you mean `%1`?)"_s.arg(suggestion)));
            ok = false;
            continue;
        }
        // What each kind can carry: chat and (translated) Responses everywhere; embeddings only
        // through the OpenAI protocol (and the simulator); legacy completions to openai alone.
        const bool carried =
            !kind ||
            (*operation == protocol::Operation::Embeddings
                 ? *kind == ProviderKind::OpenAi || *kind == ProviderKind::Simulated
             : *operation == protocol::Operation::Completions ? *kind == ProviderKind::OpenAi
                                                              : true);
        if (!carried) {
            report(node.Mark(), u"%1 providers cannot serve `%2`: only %3"_s.arg(
                                    kindName(*kind), name,
                                    *operation == protocol::Operation::Completions
                                        ? u"openai providers pass legacy completions on"_s
                                        : u"openai and simulated providers serve embeddings"_s));
            ok = false;
            continue;
        }
        operations |= protocol::operationBit(*operation);
    }
    if (!ok)
        return std::nullopt;
    // A model listing `responses` without `chat` must be served the Responses API as it is.
    if ((operations & protocol::operationBit(protocol::Operation::Responses)) &&
        !(operations & protocol::operationBit(protocol::Operation::Chat)) &&
        !provider.speaksResponses) {
        reportValue(entry,
                    u"`responses` without `chat` needs a provider that speaks the "
                    u"Responses API itself (`responses_api: true`); otherwise Switchyard "
                    u"translates the Responses API to chat, and the model must serve `chat`"_s);
        return std::nullopt;
    }
    return operations;
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
    config.sourceName = sourceName();
    const KeyedMap keys = readKeys(root, rootKeys());
    if (const MapEntry *listen = keys.find("listen"_L1))
        checkListen(*listen, config.server);
    if (const MapEntry *limits = keys.find("limits"_L1))
        checkLimits(*limits, config.server);
    if (const MapEntry *trace = keys.find("trace"_L1))
        checkTrace(*trace, config.trace);
    if (const MapEntry *timeouts = keys.find("timeouts"_L1))
        checkTimeouts(*timeouts, config.timeouts);
    if (const MapEntry *providers = keys.find("providers"_L1))
        checkProviders(*providers, config.providers);
    else
        reportMissing(root, u"config"_s, "providers"_L1);
    // Routing and resilience refer to providers by id, so they are checked after them.
    checkRoutingSections(*this, keys, config);
    checkHealthSections(*this, keys, config);
    checkResilienceSections(*this, keys, config);
    checkLogSection(*this, keys, config);
    checkStateSection(*this, keys, config);
    checkAlertsSection(*this, m_environment, keys, config);
    checkAuthSections(*this, m_environment, keys, config);
    checkUsageSections(*this, keys, config);
    checkFleetSection(*this, m_environment, keys, config);
    checkIdempotencySection(*this, keys, config);
    checkResponsesSection(*this, keys, config);
    checkResponseCacheSection(*this, keys, config);
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
