#pragma once

#include "config/routing_config.h"
#include "protocol/operation.h"
#include "telemetry/trace.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <chrono>
#include <optional>

namespace switchyard::routing {

// Which step of the light/pro gearbox chose the tier (docs/routing.md, "The gearbox (tiers)").
enum class CascadeStep {
    NotUsed,      // a rule pinned a provider or pool, so no tier was chosen by the cascade
    ExplicitHint, // 1: tier hint header or priority high
    TaskTag,      // 2: task tag
    InputTokens,  // 3: input tokens above light's maximum
    Complexity,   // 4: complexity score at or above the threshold
    Default,      // 5: light
};

// Why a candidate is in the list, in the order the executor may reach it.
enum class CandidateRole {
    Primary,       // the chosen pool
    CrossTier,     // failover to the other tier (light -> pro)
    FallbackChain, // the configured fallback_chain
    LighterModel,  // degradation ladder level 1: a lighter model (pro -> light)
    OtherBranch,   // failover to the other branches of a split that follows health
};

// The parts of an endpoint's score, each in [0, 1], higher is better.
struct ScoreFactors {
    double load = 0.0;
    double latency = 0.0;
    double success = 0.0;
    double weight = 0.0;
};

// One endpoint that may serve the request, with the model name it must be sent.
struct RouteCandidate {
    // The endpoint's slot in the health registry: its identity for the life of the process, the
    // same under every config snapshot. Never a position in Config::providers.
    int endpoint = -1;
    QString providerId;
    QString upstreamModel;
    QString tier; // tier whose contract (timeout, retries) applies; empty when none
    CandidateRole role = CandidateRole::Primary;
    int degradationLevel = 0; // 0 the planned target, 1 a lighter model
    double score = 0.0;
    ScoreFactors factors;
    QString reason; // why it is here and at this place, for explain and traces
};

// One step of the decision and why it went as it did, for explain and the trace: its stage
// ("rule", "canary", "cascade", "pool", "affinity", "failover"...) and a human-readable reason.
// The trace's own type, so that a request hands its steps to its trace as they are.
using RouteStep = telemetry::ExplainStep;

// What the router decided and why. The executor walks `candidates` in order, skipping those whose
// breaker does not admit them. The same value answers /admin/v1/route/explain.
struct RouteDecision {
    enum class Refusal {
        None,
        UnknownModel, // no provider serves the model and no rule targets it: 404
        NoCandidate,  // the target exists but none of its endpoints can be chosen: 503
    };

    QString model;
    // The endpoint the request came to: embeddings and legacy completions go by model alone.
    protocol::Operation operation = protocol::Operation::Chat;
    QString rule; // matched rule's name; empty when none matched
    QString tier; // chosen tier; empty when a rule pinned a target
    CascadeStep cascadeStep = CascadeStep::NotUsed;
    int complexityScore = -1; // 0-100 when the cascade computed it
    QString canarySide;       // the split target taken; empty without a split
    QString canaryMovedFrom;  // the branch whose buckets hold the request, when health moved it
    QList<RouteCandidate> candidates;
    // Endpoints that would have been candidates but could not be chosen (breaker open,
    // disabled, draining), by slot: when nothing is left, the client learns why and when.
    QList<int> unavailable;
    QList<RouteStep> steps;
    Refusal refusal = Refusal::None;
    // The models to try when a provider answers an error another model may not have, for each
    // error the first of the matched rule's, the requested model's and the tier's that names
    // it (docs/resilience.md, "Fallbacks by error").
    config::ErrorFallbacks errorFallbacks;
    // `continue_streams` of the matched rule or the chosen tier: a stream cut after its first
    // content may continue on another candidate (docs/resilience.md).
    bool continueStreams = false;
    // The matched rule's `shadow` provider, when this request's draw fell under its share: it is
    // also sent the request, and its answer is only recorded (docs/routing.md, "Shadow
    // traffic"). Its endpoint and the model name that provider is sent, as for a candidate.
    std::optional<RouteCandidate> shadow;
    // `cache:` of the matched rule, else of the requested model: the request may be answered
    // from the response cache, and its answer kept there (docs/operations.md).
    std::optional<config::ResponseCacheConfig> cache;

    // Each step as "stage: detail", in order, as a trace shows them (TraceBuilder::explainChoice).
    QStringList explanation() const
    {
        QStringList lines;
        lines.reserve(steps.size());
        for (const RouteStep &step : steps)
            lines.append(step.stage + QStringLiteral(": ") + step.detail);
        return lines;
    }
    // All steps joined into one line, for logs and the explain API; a trace's "choice" event
    // reads the same (TraceBuilder::explainChoice).
    QString reason() const { return explanation().join(QStringLiteral("; ")); }
};

} // namespace switchyard::routing
