#pragma once

#include "http/admin_endpoints.h"
#include "routing/impact_preview.h"
#include "routing/request_context.h"
#include "routing/route_decision.h"
#include "routing/router.h"

#include <QByteArray>
#include <QJsonObject>
#include <variant>

namespace switchyard::control {
class OperatorCommands;
}

namespace switchyard::admin {

// The routing part of the admin API:
//   POST   route/explain            a chat request's body and headers -> the RouteDecision live
//                                   traffic would get, without calling any provider
//   GET    routes                   the rules in force (the file's shape, as JSON), canary splits
//   PUT    routes                   {"routes": [...]}: validate and apply at once, as the console
//                                   does; a 400 lists every problem with its line and column
//   POST   routes/dry-run           {"request", "headers"?, "routes"?}: the live decision and,
//                                   with `routes`, the decision under those rules alone
//   POST   routes/impact            {"routes": [...], "examples_per_cell"?}: where the sampled
//                                   live requests of the last hour would go under those rules,
//                                   grouped from -> to
//   GET    routes/canary            every split with its configured and live weights
//   POST   routes/canary            {"rule", "weights": {target: weight} | [weights]} or
//                                   {"rule", "reset": true}: change live weights, no reload
//   GET    agents                   registered agents
//   POST   agents                   {"id", "base_url", "capabilities", "capacity"?, "models"?}
//   POST   agents/{id}/heartbeat    optional {"busy": bool}
//   DELETE agents/{id}              deregister
// The handlers run on the engine thread and call the operator commands, as the console does.
void registerRoutingAdmin(http::AdminEndpoints &api, control::OperatorCommands &commands);

// Words the JSON uses: "explicit_hint", "cross_tier", "no_candidate"...
QString cascadeStepName(routing::CascadeStep step);
QString candidateRoleName(routing::CandidateRole role);
QString refusalName(routing::RouteDecision::Refusal refusal); // empty for None

QJsonObject decisionJson(const routing::RouteDecision &decision);
QJsonObject contextJson(const routing::RequestContext &context);
QJsonObject impactJson(const routing::ImpactPreview &preview);
QJsonObject canarySplitJson(const routing::CanarySplitState &split);
QJsonObject agentJson(const health::AgentRecord &agent, bool live);

// A POST agents body as a registration; a 400 error names the offending field.
std::variant<health::AgentRegistration, protocol::ApiError>
parseAgentRegistration(const QByteArray &body);

} // namespace switchyard::admin
