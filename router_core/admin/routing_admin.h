#pragma once

#include "admin/admin_api.h"
#include "routing/request_context.h"
#include "routing/route_decision.h"
#include "routing/router.h"

#include <QByteArray>
#include <QJsonObject>
#include <variant>

namespace switchyard::admin {

// The routing part of the admin API:
//   POST   route/explain            a chat request's body and headers -> the RouteDecision live
//                                   traffic would get, without calling any provider
//   GET    routes/canary            every split with its configured and live weights
//   POST   routes/canary            {"rule", "weights": {target: weight} | [weights]} or
//                                   {"rule", "reset": true}: change live weights, no reload
//   GET    agents                   registered agents
//   POST   agents                   {"id", "base_url", "capabilities", "capacity"?, "models"?}
//   POST   agents/{id}/heartbeat    optional {"busy": bool}
//   DELETE agents/{id}              deregister
// The handlers run on the engine thread and call the router directly.
void registerRoutingAdmin(AdminApi &api, routing::Router &router);

// Words the JSON uses: "explicit_hint", "cross_tier", "no_candidate"...
QString cascadeStepName(routing::CascadeStep step);
QString candidateRoleName(routing::CandidateRole role);
QString refusalName(routing::RouteDecision::Refusal refusal); // empty for None

QJsonObject decisionJson(const routing::RouteDecision &decision);
QJsonObject contextJson(const routing::RequestContext &context);
QJsonObject canarySplitJson(const routing::CanarySplitState &split);
QJsonObject agentJson(const routing::AgentRecord &agent, bool live);

// A POST agents body as a registration; a 400 error names the offending field.
std::variant<routing::AgentRegistration, http::ApiError>
parseAgentRegistration(const QByteArray &body);

} // namespace switchyard::admin
