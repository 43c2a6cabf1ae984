#pragma once

#include "config/response_cache_config.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <chrono>
#include <optional>

namespace switchyard::config {

// Where a routing entry was written, in the file named by Config::sourceName; 1-based. Zero for
// entries made by a form in the console rather than read from a file.
struct TextPosition {
    int line = 0;
    int column = 0;
};

// Errors a client cannot fix by retrying but another model may not have (docs/resilience.md,
// "Fallbacks by error"): the keys of a `fallbacks:` map.
enum class FallbackError {
    ContextLengthExceeded, // `context_length_exceeded`: the prompt is longer than the model takes
    ContentFiltered,       // `content_filtered`: the provider's content filter refused it
};
inline constexpr int kFallbackErrors = 2;

// `fallbacks:` of a tier, a route rule or a model entry: for each error, the public model names
// tried instead, in order, each at most once per request. Empty lists: no fallback.
struct ErrorFallbacks {
    QStringList contextLengthExceeded;
    QStringList contentFiltered;

    const QStringList &models(FallbackError error) const
    {
        return error == FallbackError::ContextLengthExceeded ? contextLengthExceeded
                                                             : contentFiltered;
    }
    QStringList &models(FallbackError error)
    {
        return error == FallbackError::ContextLengthExceeded ? contextLengthExceeded
                                                             : contentFiltered;
    }
    bool isEmpty() const { return contextLengthExceeded.isEmpty() && contentFiltered.isEmpty(); }
    friend bool operator==(const ErrorFallbacks &, const ErrorFallbacks &) = default;
};

// "context_length_exceeded", "content_filtered": the word the config file, traces and metrics use.
QString fallbackErrorName(FallbackError error);
std::optional<FallbackError> fallbackErrorFromName(QStringView name);

// A tier is a contract, not only a pool (docs/routing.md, "The gearbox (tiers)"): its own timeout,
// retries and largest input it takes.
struct TierConfig {
    QString name;                         // "light" or "pro"
    QStringList pool;                     // provider ids
    std::chrono::milliseconds timeout{0}; // per attempt; zero means the global timeouts
    int retries = 0;                      // retries within this tier
    int maxInputTokens = 0;               // zero means no limit
    // `continue_streams: true`: a text stream cut after its first content continues on another
    // candidate that can continue a partial answer (docs/resilience.md).
    bool continueStreams = false;
    ErrorFallbacks fallbacks{}; // models tried when a provider answers such an error
    TextPosition fallbacksPosition{};

    static TierConfig light()
    {
        return {QStringLiteral("light"), {}, std::chrono::milliseconds(8000), 2, 12000, false};
    }
    static TierConfig pro()
    {
        return {QStringLiteral("pro"), {}, std::chrono::milliseconds(30000), 1, 0, false};
    }
};

enum class ConditionOperator { Eq, Ne, In, Glob, Regex, Lt, Le, Gt, Ge, Exists };

// One node of a rule's `when`: a comparison of one request field, or all/any/not of others.
// Structured rather than a string language so a visual editor can edit it row by row.
struct RouteCondition {
    enum class Kind { Compare, All, Any, Not };

    Kind kind = Kind::Compare;
    // Compare: model, tenant, user, task, sensitivity, priority, tokens.input, header.<name>
    // or meta.<key>.
    QString field;
    ConditionOperator op = ConditionOperator::Eq;
    // Compare: the one value to compare with; for `in` the list; for `exists` "true" or "false".
    QStringList values;
    QList<RouteCondition> children; // All and Any: the parts; Not: exactly one
    TextPosition position;          // the condition's map
    TextPosition fieldPosition;     // its `field` value
    TextPosition valuePosition;     // its operator's value
};

// Where a rule sends traffic: one provider, a pool of providers, or a tier (`light`, `pro`, or
// `auto` for the gearbox's cascade).
struct RouteTarget {
    enum class Kind { Provider, Pool, Tier };

    Kind kind = Kind::Tier;
    QStringList names; // Provider: its id; Pool: the ids; Tier: light, pro or auto
    TextPosition position;

    // How the target is shown and addressed (canary weights): "x", "[a, b]", "auto".
    QString label() const
    {
        if (kind == Kind::Pool)
            return u'[' + names.join(QStringLiteral(", ")) + u']';
        return names.value(0);
    }
};

// `shadow: {target, share}` of a rule (docs/routing.md, "Shadow traffic"): a share of the requests
// the rule routes is also sent to another provider, whose answer is only recorded and compared.
// The target must be an `openai` or `anthropic` provider: calling an agent may act, and a mapped
// provider is one.
struct ShadowConfig {
    QString target;     // a provider id
    double share = 0.0; // of the rule's requests, in [0, 1], drawn on the request id
    TextPosition position;
    TextPosition targetPosition;
};

// Which request value keeps a client on one side of a canary split.
enum class SplitKey { User, Tenant, Session };

struct SplitBranch {
    RouteTarget target;
    int weight = 0; // relative to the other branches of the split
    TextPosition position;
    TextPosition weightPosition;
};

struct RouteRule {
    QString name;
    int priority = 0;                   // higher first; equal priorities keep file order
    std::optional<RouteCondition> when; // none: every request matches
    RouteTarget to;                     // used when `split` is empty
    QList<SplitBranch> split;           // a weighted canary instead of `to`
    SplitKey splitKey = SplitKey::User; // the request id stands in when the request has none
    // A split's branches follow health: a branch with no endpoint to choose gives its share to
    // the others, and a failed attempt fails over to them. `strict: true` makes each branch a
    // promise instead, as a provider or pool target is.
    bool strictSplit = false;
    // `continue_streams: true`: as the tier's, for the requests this rule routes (either one
    // turns it on).
    bool continueStreams = false;
    // Models tried when a provider answers an error another model may not have; before the
    // requested model's and the tier's own (docs/resilience.md, "Fallbacks by error").
    ErrorFallbacks fallbacks{};
    // A share of the rule's requests mirrored to another provider; none: no shadow traffic.
    std::optional<ShadowConfig> shadow{};
    // `cache:`: answers to the requests this rule routes are kept and given again; before the
    // requested model's own `cache:`.
    std::optional<ResponseCacheConfig> cache{};
    TextPosition position;
    TextPosition namePosition;
    TextPosition fallbacksPosition{};
};

// Weights of the parts of an endpoint's score (see docs/routing.md, "Choosing an endpoint").
struct ScoringWeights {
    double load = 0.4;
    double latency = 0.3;
    double success = 0.3;
};

// The complexity score: a weighted mean of four features, each counted up to the value at which
// it is "full" (1.0), scaled to 0-100.
struct ComplexityConfig {
    int threshold = 70; // at or above: pro
    double lengthWeight = 35.0;
    double turnsWeight = 20.0;
    double toolsWeight = 25.0;
    double codeBlocksWeight = 20.0;
    int lengthTokensFull = 4000;
    int turnsFull = 10; // messages after the first
    int toolsFull = 4;
    int codeBlocksFull = 3;
};

struct GearboxConfig {
    QStringList proTasks{QStringLiteral("code_gen"), QStringLiteral("multi_step_reasoning"),
                         QStringLiteral("long_plan")};
    QStringList lightTasks{QStringLiteral("chat"), QStringLiteral("extract"),
                           QStringLiteral("summarize")};
    ComplexityConfig complexity;
};

// Registered agents: how long one stays without a heartbeat, and how they are ranked.
struct AgentsConfig {
    std::chrono::milliseconds ttl{30000};
    ScoringWeights scoring;
    int defaultCapacity = 16; // when a registration does not say
};

// Tiers, rules, the gearbox, scoring weights and the fallback chain, as parsed from the file.
// Filled by checkRoutingSections (routing_section.cpp).
struct RoutingConfig {
    QList<TierConfig> tiers{TierConfig::light(), TierConfig::pro()};
    QList<RouteRule> routes;   // in file order; the router orders them by priority
    QStringList fallbackChain; // provider ids, tried in order after the tiers
    GearboxConfig gearbox;
    ScoringWeights scoring;
    AgentsConfig agents;

    const TierConfig *tier(const QString &name) const
    {
        for (const TierConfig &candidate : tiers) {
            if (candidate.name == name)
                return &candidate;
        }
        return nullptr;
    }
};

} // namespace switchyard::config
