#pragma once

#include "config/config.h"
#include "config/config_loader.h"
#include "config/yaml_reader.h"

#include <QLatin1StringView>
#include <QList>
#include <optional>

// The config sections beyond the server and the provider list. Each is checked by a function
// that lives beside its own types, so adding a section touches its own file and this header.
namespace switchyard::config {

// Root keys owned by the routing section: tiers, routes, fallback chain...
QList<QLatin1StringView> routingRootKeys();
// Runs after providers are checked, so targets can be resolved against their ids.
void checkRoutingSections(YamlReader &reader, const KeyedMap &root, Config &config);

// A `fallbacks:` map of a tier, a route rule or a model entry: each key an error of
// FallbackError (`context_length_exceeded`, `content_filtered`), each value a list of model names,
// none empty, none twice. Whether a provider lists the models is checked once every provider is
// known (config::validateErrorFallbacks).
std::optional<ErrorFallbacks> readErrorFallbacks(YamlReader &reader, const MapEntry &entry);

// Root keys owned by the health section: breaker, probes.
QList<QLatin1StringView> healthRootKeys();
void checkHealthSections(YamlReader &reader, const KeyedMap &root, Config &config);

// Root keys owned by the resilience section: retries, admission, degradation.
QList<QLatin1StringView> resilienceRootKeys();
void checkResilienceSections(YamlReader &reader, const KeyedMap &root, Config &config);

// The `log` root key: format and level (log_section.cpp).
QList<QLatin1StringView> logRootKeys();
void checkLogSection(YamlReader &reader, const KeyedMap &root, Config &config);

// The `state` root key: directory (state_section.cpp).
QList<QLatin1StringView> stateRootKeys();
void checkStateSection(YamlReader &reader, const KeyedMap &root, Config &config);

// The `alerts` root key: rules and the webhook (alerts_section.cpp). Webhook header values may
// be `{env: NAME}`.
QList<QLatin1StringView> alertsRootKeys();
void checkAlertsSection(YamlReader &reader, const EnvironmentLookup &environment,
                        const KeyedMap &root, Config &config);

// The `auth` and `tls` root keys: client keys, the admin token, the listener's certificate
// (auth_section.cpp). Secrets written `{env: NAME}` are read from `environment` and kept hashed.
QList<QLatin1StringView> authRootKeys();
void checkAuthSections(YamlReader &reader, const EnvironmentLookup &environment,
                       const KeyedMap &root, Config &config);
// The `fleet` root key (fleet_section.cpp): the Redis this node shares its state through. The
// password is `{env: NAME}`, read from `environment`.
QList<QLatin1StringView> fleetRootKeys();
void checkFleetSection(YamlReader &reader, const EnvironmentLookup &environment,
                       const KeyedMap &root, Config &config);
// The `pricing` and `budgets` root keys (usage_section.cpp). Runs after providers are checked:
// a price names a model they serve.
QList<QLatin1StringView> usageRootKeys();
void checkUsageSections(YamlReader &reader, const KeyedMap &root, Config &config);

// The `idempotency` root key (idempotency_section.cpp): the duplicate guard's window and bounds.
QList<QLatin1StringView> idempotencyRootKeys();
void checkIdempotencySection(YamlReader &reader, const KeyedMap &root, Config &config);
// The `response_cache` root key (response_cache_section.cpp): what one node's cache keeps.
QList<QLatin1StringView> responseCacheRootKeys();
void checkResponseCacheSection(YamlReader &reader, const KeyedMap &root, Config &config);
// `cache:` of a route rule or a model entry: ttl, max_bytes, sampled.
std::optional<ResponseCacheConfig> readResponseCache(YamlReader &reader, const MapEntry &entry);
// The `responses` root key (responses_section.cpp): stored responses and the background queue.
QList<QLatin1StringView> responsesRootKeys();
void checkResponsesSection(YamlReader &reader, const KeyedMap &root, Config &config);

// Keys a provider entry may carry for its wire format (anthropic, mapped).
QList<QLatin1StringView> adapterProviderKeys();
// `kind` is empty when the entry's kind was missing or wrong; then only form is checked.
void checkProviderAdapter(YamlReader &reader, const YAML::Node &node, const KeyedMap &keys,
                          std::optional<ProviderKind> kind, ProviderConfig &provider);

// Keys every provider kind but simulated may carry for how it is called: api_key_header,
// api_key_prefix, headers, query, proxy, ca_file (provider_call_section.cpp).
QList<QLatin1StringView> providerCallKeys();
// Runs after `api_key_env` and the adapter keys are checked. Values written `{env: NAME}` are
// read from `environment`. A mapped provider's older `mapping.headers`, `mapping.api_key_header`
// and `mapping.api_key_prefix` are read here too, into the same fields.
void checkProviderCall(YamlReader &reader, const EnvironmentLookup &environment,
                       const KeyedMap &keys, std::optional<ProviderKind> kind,
                       ProviderConfig &provider);

// A `headers:` map as a provider's is written (names checked, values text or `{env: NAME}`),
// for the other sections that call out over HTTP.
void readHeaderMap(YamlReader &reader, const EnvironmentLookup &environment, const MapEntry &entry,
                   QList<ConfiguredValue> &headers);

// `trace.otlp` (otlp_section.cpp): the OpenTelemetry export. Left unset when the section has an
// error.
void checkOtlpExport(YamlReader &reader, const EnvironmentLookup &environment,
                     const MapEntry &entry, std::optional<OtlpExportConfig> &otlp);

} // namespace switchyard::config
