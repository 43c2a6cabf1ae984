#pragma once

#include "config/adapter_config.h"
#include "config/auth_config.h"
#include "config/fleet_config.h"
#include "config/idempotency_config.h"
#include "config/resilience_config.h"
#include "config/responses_config.h"
#include "config/routing_config.h"
#include "config/usage_config.h"
#include "logging/log_line.h"
#include "protocol/operation.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <chrono>
#include <optional>

namespace switchyard::config {

// Where a value came from, so every error can say FILE:LINE:COL. Lines and columns are 1-based.
struct SourceLocation {
    QString file;
    int line = 0;
    int column = 0;
};

struct ConfigError {
    SourceLocation where;
    QString message;

    // "FILE:LINE:COL: message", the form editors and CI logs understand.
    QString toString() const;
};

enum class ProviderKind { OpenAi, Anthropic, Mapped, Simulated };

// The word the config file uses for a kind: "openai", "anthropic", "mapped", "simulated".
QString kindName(ProviderKind kind);

// What a built-in simulated provider does. Served over real loopback HTTP from the simulator
// thread, so demo traffic takes the same network path as a real upstream.
struct SimulatedBehaviour {
    std::chrono::milliseconds latency{250};          // whole answer delay for non-streamed calls
    std::chrono::milliseconds timeToFirstToken{120}; // delay before the first streamed chunk
    double tokensPerSecond = 40.0;                   // pace of streamed chunks after the first
    double errorRate = 0.0;                          // fraction of calls answered with HTTP 500
    int answerTokens = 24;                           // length of the generated answer
};

// A header or query parameter sent on every call to a provider. Its value is written in the file,
// or read from an environment variable when the config loads (`{env: NAME}`): then it is a secret
// and never shown in traces, logs or errors.
struct ConfiguredValue {
    QByteArray name;
    QByteArray value;
    QString environmentVariable; // where the value came from; empty when written in the file

    bool isSecret() const { return !environmentVariable.isEmpty(); }
    friend bool operator==(const ConfiguredValue &, const ConfiguredValue &) = default;
};

struct ModelRoute {
    QString publicName;   // what clients ask for
    QString upstreamName; // what the provider is sent; equal to publicName unless renamed
    // `endpoints`: what the model serves at this provider. A chat model serves the Responses
    // API too (translated, or passed through to a provider that speaks it).
    protocol::Operations endpoints = protocol::kChatOperations;
    int dimensions = 0; // `dimensions` of an embeddings model; 0 when not said
    // Models tried when a provider answers this model an error another may not have. Said once
    // per public name: another provider's entry of the same name says the same or nothing.
    ErrorFallbacks fallbacks{};
    TextPosition fallbacksPosition{};
    // `cache:`: answers to this model are kept and given again. Said once per public name, as
    // the fallbacks are.
    std::optional<ResponseCacheConfig> cache{};

    bool serves(protocol::Operation operation) const
    {
        return (endpoints & protocol::operationBit(operation)) != 0;
    }
};

struct ProviderConfig {
    QString id;
    ProviderKind kind = ProviderKind::OpenAi;
    QUrl baseUrl; // openai: required, e.g. http://127.0.0.1:8001/v1; simulated: filled at start
    QString apiKeyEnv; // name of the environment variable holding the key; may be empty
    QByteArray apiKey; // resolved from apiKeyEnv at load time; never read from the file
    QList<ModelRoute> models;
    int weight = 1;    // share in weighted choice among providers serving the same model
    int capacity = 64; // concurrent requests it is expected to take
    std::chrono::milliseconds latencyObjective{2500};
    SimulatedBehaviour simulated; // only meaningful for ProviderKind::Simulated
    AdapterConfig adapter;        // wire-format settings for anthropic and mapped providers
    SourceLocation where;         // the provider's entry in the file
    // `responses_api: true` (openai only): the provider speaks OpenAI's Responses API itself, so
    // /v1/responses is passed through to it rather than translated to chat completions.
    bool speaksResponses = false;
    // `forward_client_authorization: true`: the client's own Authorization and x-api-key headers
    // go to this provider (the provider's configured key, when it has one, takes its header's
    // place). Off by default: a client's credentials are Switchyard's, never a provider's.
    bool forwardClientAuthorization = false;
    // `continues_answers`: the provider can be given a partial assistant answer and continue it,
    // so a stream cut elsewhere may go on here (docs/resilience.md, "Streams that survive a
    // cut"): Anthropic's prefill, vLLM's `continue_final_message`. Off unless set, but for the
    // simulator; a mapped agent's never. Unset: the kind's default (continuesAnswers()).
    std::optional<bool> continuesAnswersSetting;

    // How every call is made, whatever the kind (docs/adapters.md, "Calling a provider"). A
    // `{model}` in baseUrl's path stands for the attempt's upstream model name.
    std::optional<QByteArray> apiKeyHeader; // unset: the kind's (see keyHeaderName())
    std::optional<QByteArray> apiKeyPrefix; // unset: "Bearer " in Authorization, else none
    QList<ConfiguredValue> headers;         // sent with every call, after the key
    QList<ConfiguredValue> query;           // added to every URL the provider is called at
    QUrl proxy;     // libcurl's proxy; empty: none, whatever http_proxy and friends say
    QString caFile; // PEM file of the CAs trusted for TLS; empty: the system's bundle
    // `transport: libcurl`: every call over libcurl, plain http too. The default (`auto`) sends
    // plain http without a proxy or CA file over the gateway's own HTTP/1.1 client.
    bool callsOverLibcurl = false;

    // Upstream model name for a public model name, or an empty string when not served.
    QString upstreamModelFor(const QString &publicName) const;
    // The model entry sent upstream as `upstreamName` (the first, when several public names
    // share it); nullptr when none.
    const ModelRoute *modelByUpstreamName(const QString &upstreamName) const;
    // Whether an attempt of `operation` on `upstreamName` can go to this provider: the model
    // serves it, and the provider's kind can carry it (embeddings and completions pass through
    // to openai-compatible providers only).
    bool serves(const QString &upstreamName, protocol::Operation operation) const;
    // Whether `operation` reaches this provider as the client sent it (only the model renamed)
    // rather than translated to chat: embeddings and completions always, the Responses API
    // when the provider speaks it, Anthropic's Messages and count_tokens at an anthropic one.
    bool speaksNatively(protocol::Operation operation) const;
    // Whether a stream cut on another provider may continue here (continuesAnswersSetting).
    bool continuesAnswers() const;
    // The header the API key goes in: apiKeyHeader, else x-api-key for anthropic and
    // Authorization for every other kind.
    QByteArray keyHeaderName() const;
    // What is written before the key: apiKeyPrefix, else "Bearer " when the key goes in
    // Authorization and nothing otherwise.
    QByteArray keyPrefix() const;
};

struct TimeoutConfig {
    std::chrono::milliseconds connect{3000};
    std::chrono::milliseconds firstToken{30000};
    std::chrono::milliseconds idle{20000};   // gap between streamed chunks
    std::chrono::milliseconds total{180000}; // non-streamed requests only
};

struct ServerConfig {
    QString listenHost = QStringLiteral("127.0.0.1");
    quint16 listenPort = 8080;
    qint64 maxBodyBytes = 8 * 1024 * 1024;
    std::chrono::milliseconds shutdownGrace{10000}; // how long SIGTERM waits for in-flight work
    // How long SIGTERM keeps serving with /readyz at 503 before the listener closes: the time a
    // load balancer's health check needs to stop sending here. Zero (the default) closes at once,
    // right for a node no balancer checks (docs/fleet.md, "Behind a load balancer").
    std::chrono::milliseconds drainDelay{0};

    // How long a client connection may hold the gateway without progress (docs/configuration.md
    // says why each default). A request's header block must be complete this long after its
    // first byte, or after the connection opened for its first request.
    std::chrono::milliseconds headerTimeout{10000};
    // A request body must be complete this long after its headers: the whole body, so one that
    // trickles in a byte at a time is cut as surely as one that stops.
    std::chrono::milliseconds bodyTimeout{60000};
    // A kept-alive connection with no request being read or answered is closed after this.
    std::chrono::milliseconds keepAliveIdle{75000};
    int maxConnections = 10000; // open client connections in all; more are refused with 503
    // Open client connections from one address; 0 means no limit of its own.
    int maxConnectionsPerAddress = 1024;
    // Connections refused over those caps that are still being drained, answered or closed, at
    // once. Each holds a descriptor for at most 2 s; beyond this many, new connections wait in
    // the listen backlog until one ends, rather than being reset.
    int maxRefusalsDraining = 1024;
};

// `trace.otlp`: every finished request's spans sent to an OpenTelemetry collector over OTLP/HTTP
// with the JSON encoding (docs/opentelemetry.md). The defaults are the OpenTelemetry SDKs' own
// (the batch span processor's and the OTLP exporter's), so a collector sized for them fits.
struct OtlpExportConfig {
    // The collector's base URL; spans are posted to {endpoint}/v1/traces.
    QUrl endpoint;
    // Sent with every export: a vendor's key, a tenant header.
    QList<ConfiguredValue> headers;
    // Share of traces exported, decided by the trace id so a trace goes whole or not at all.
    double samplingRatio = 1.0;
    // Most spans in one export request.
    int batchSpans = 512;
    // A batch that is not full goes this long after the previous export.
    std::chrono::milliseconds interval{5000};
    // Spans waiting for export; a request whose spans do not fit is dropped and counted.
    int queueSpans = 2048;
    // One export request, connecting included.
    std::chrono::milliseconds timeout{10000};

    // {endpoint}/v1/traces, the path OTLP/HTTP gives the traces signal under a base URL.
    QUrl tracesUrl() const;
};

// The `alerts` section (docs/operations.md, "Alerts"): the rules that tell the team a tier is
// failing, and where raised and cleared alerts are sent besides the log and the console.
enum class AlertRuleKind {
    TierSuccessRate, // `tier_success_rate`: a tier's success rate below `below`
    TierErrorRate,   // `tier_error_rate`: a tier's error rate above `above`
    TierLatencyP95,  // `tier_latency_p95`: a tier's p95 latency above `factor` x its baseline
    FailSafeAnswers, // `fail_safe_answers`: the ladder's last rung answering
    BudgetUsed,      // `budget_used`: a budget's used share at or above `above`
};
inline constexpr int kAlertRuleKinds = 5;
enum class AlertSeverity { Warning, Critical };

// One rule. Which keys a rule takes depends on its kind; the defaults are alertRuleDefaults().
struct AlertRuleConfig {
    bool enabled = true;
    // The rule's number: a rate for the tier rules (0.9, 0.05), the factor over the baseline
    // for latency, a count of answers for fail-safe, a used share for budgets.
    double threshold = 0.0;
    std::chrono::milliseconds holdFor{0};        // `for`: how long the condition must hold
    std::chrono::milliseconds window{60000};     // the traffic each evaluation looks at
    std::chrono::milliseconds clearAfter{60000}; // how long it must not hold to clear
    int minRequests = 20; // fewer counted requests in the window: the condition does not hold
    AlertSeverity severity = AlertSeverity::Warning;
    // tier_latency_p95 only: the baseline is the p95 of this long before the window, used once
    // it holds baselineMinSamples latencies.
    std::chrono::milliseconds baseline{3600000};
    int baselineMinSamples = 100;
};

// `tier_success_rate`, `tier_error_rate`... the word the config file and every event use.
QLatin1StringView alertRuleName(AlertRuleKind kind);
QLatin1StringView alertSeverityName(AlertSeverity severity);
// The seed articles' numbers, for a rule the file does not mention.
AlertRuleConfig alertRuleDefaults(AlertRuleKind kind);

// `alerts.webhook`: every raise and clear POSTed as JSON from a thread of its own.
struct AlertWebhookConfig {
    QUrl url; // written or `{env: NAME}`; only its scheme, host and port are ever logged
    QList<ConfiguredValue> headers;          // written or `{env: NAME}`, as for trace.otlp
    std::chrono::milliseconds timeout{5000}; // one POST, connecting included
    int retries = 3;                         // after the first try, on no answer, 429 or 5xx
    std::chrono::milliseconds backoff{1000}; // before the first retry, doubling after each
    int queue = 100;                         // events waiting; more are dropped and counted

    friend bool operator==(const AlertWebhookConfig &, const AlertWebhookConfig &) = default;
};

struct AlertsConfig {
    std::chrono::milliseconds evaluateEvery{5000};
    int eventsKept = 100; // raised and cleared events kept for the console and the admin API
    QList<AlertRuleConfig> rules; // indexed by AlertRuleKind, every kind present
    std::optional<AlertWebhookConfig> webhook;

    AlertsConfig();
    const AlertRuleConfig &rule(AlertRuleKind kind) const { return rules.at(int(kind)); }
};

// The `trace` section: what the in-memory trace ring keeps (docs/configuration.md).
struct TraceConfig {
    int capacity = 2000;                // traces kept, oldest dropped first
    qint64 maxBytes = 64 * 1024 * 1024; // and at most this much memory for them in all
    int chunkEvents = 256;              // streamed chunk arrivals kept per trace
    bool keepBodies = false;            // request and response bodies in traces
    qint64 bodyMaxBytes = 16 * 1024;    // each kept body is cut here
    // `otlp`: the OpenTelemetry export; absent when not configured.
    std::optional<OtlpExportConfig> otlp;
};

// The `log` section: how the process writes its log (docs/logging.md). Unset keys leave the
// choice to the command line, then to the defaults (text, info); --log-format and --log-level
// win over the file. Read once at start.
struct LogConfig {
    std::optional<logging::LogFormat> format;
    std::optional<logging::LogLevel> level;
};

// The `state` section: where what must survive a restart is kept (docs/operations.md): the
// state database (config versions, API keys, the usage ledger) and the overlay file of applied
// changes the config file could not take.
struct StateConfig {
    // `state.directory`, absolute (a relative path is taken from the config file's folder).
    // Empty in the file: the command line's --state-dir, else $STATE_DIRECTORY (systemd's
    // StateDirectory=), else the user's data directory; the app resolves it before the engine
    // starts. Empty in the engine: nothing is persisted, everything lives in memory.
    QString directory;
};

// The `config_file` section: how the running config follows its file (docs/operations.md,
// "Config lifecycle").
struct ConfigFileConfig {
    bool watch = true; // reload when the file changes; SIGHUP and the admin API work either way
    // A burst of file events (an editor's save is several) is read once, this long after the last.
    std::chrono::milliseconds debounce{200};
    // Console and admin API changes are written back into the file; off, they go to the overlay
    // in the state directory (a file managed by someone else).
    bool writeBack = true;
};

enum class ListenAddressError { None, NotHostPort, PortOutOfRange };

// Parses "HOST:PORT", with an IPv6 host in brackets as in URLs ("[::1]:8080"). Used by the
// config file's `listen` key and the --listen option alike.
struct ListenAddress {
    QString host;
    quint16 port = 0;
};
std::optional<ListenAddress> parseListenAddress(const QString &text,
                                                ListenAddressError *error = nullptr);
// The reverse: "127.0.0.1:8080", "[::1]:8080".
QString formatListenAddress(const QString &host, quint16 port);

// An immutable snapshot: parsed once, validated whole, swapped whole. Nothing mutates it in place.
struct Config {
    QString sourceName; // file path, or ":/demo.yaml" for the embedded demo
    ServerConfig server;
    TraceConfig trace;
    LogConfig log;
    StateConfig state;
    AuthConfig auth; // client keys and the admin token: config/auth_config.h
    TlsConfig tls;   // HTTPS on the listener
    ConfigFileConfig configFile;
    AlertsConfig alerts;
    TimeoutConfig timeouts;
    QList<ProviderConfig> providers;
    RoutingConfig routing;             // tiers, rules, fallback chain: see routing_config.h
    ResilienceConfig resilience;       // breakers, retries, admission, probes, degradation
    UsageConfig usage;                 // `pricing` and `budgets`: what requests cost, who may spend
    std::optional<FleetConfig> fleet;  // set: this node shares its state with others on Redis
    IdempotencyConfig idempotency;     // the duplicate guard on Idempotency-Key
    ResponsesConfig responses;         // stored responses and the background queue
    ResponseCacheLimits responseCache; // what the response cache keeps at most

    const ProviderConfig *provider(const QString &id) const;
};

} // namespace switchyard::config
