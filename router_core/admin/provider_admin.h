#pragma once

#include "health/endpoint_state.h"
#include "http/admin_endpoints.h"

#include <QByteArray>
#include <QJsonObject>
#include <variant>

namespace switchyard::control {
class OperatorCommands;
}

namespace switchyard::admin {

// The providers' part of the admin API:
//   GET  providers                    every live endpoint with its health, breaker and counters
//   GET  providers/{id}               one of them
//   POST providers/{id}/{action}      enable | disable | drain | trip | reset
//   GET  simulator/{id}               a simulated provider's live knobs
//   POST simulator/{id}               {"mode", "latency_ms", "error_rate"}: change them
// The handlers run on the engine thread and call the operator commands, as the console does.
void registerProviderAdmin(http::AdminEndpoints &api, control::OperatorCommands &commands);

// One provider as the admin API shows it.
QJsonObject providerJson(const ProviderHealth &provider);

// The knobs a POST simulator/{id} body asks for. Fields left out keep their `current` value;
// `null` returns latency_ms or error_rate to the configured value. A 400 error says what is wrong.
std::variant<SimulatorKnobs, protocol::ApiError> parseSimulatorKnobs(const QByteArray &body,
                                                                     const SimulatorKnobs &current);
QJsonObject simulatorKnobsJson(const QString &providerId, const SimulatorKnobs &knobs);

} // namespace switchyard::admin
