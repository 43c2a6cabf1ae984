#pragma once

#include "config/routing_config.h"
#include "routing/request_context.h"
#include "routing/route_decision.h"

#include <QString>

namespace switchyard::routing {

// The complexity score's features, each between 0 and 1 (1 = at or past its "full" value).
struct ComplexityFeatures {
    double length = 0.0;
    double turns = 0.0;
    double tools = 0.0;
    double codeBlocks = 0.0;
};

ComplexityFeatures complexityFeatures(const RequestContext &context,
                                      const config::ComplexityConfig &config);
// 0-100: the weighted mean of the features, rounded. Deterministic and cheap: no tokenizer, no
// model, only counts gathered while the body was parsed.
int complexityScore(const ComplexityFeatures &features, const config::ComplexityConfig &config);

// What the cascade answered and why.
struct TierChoice {
    QString tier; // "light" or "pro"
    CascadeStep step = CascadeStep::Default;
    int complexityScore = -1; // set when step 4 was reached
    QString reason;
};

// The light/pro gearbox (docs/routing.md, "The gearbox (tiers)"): five steps, the first that
// answers wins.
//  1. explicit: x-switchyard-tier, or priority high -> pro
//  2. task tag: gearbox.pro_tasks -> pro, gearbox.light_tasks -> light
//  3. estimated input tokens above light's max_input_tokens -> pro
//  4. complexity score at or above gearbox.complexity.threshold -> pro
//  5. otherwise light
TierChoice chooseTier(const RequestContext &context, const config::RoutingConfig &config);

} // namespace switchyard::routing
