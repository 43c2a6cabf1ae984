#pragma once

#include "fleet/fleet_node.h"
#include "http/admin_endpoints.h"

#include <QJsonObject>
#include <functional>

namespace switchyard::admin {

// The fleet as this node sees it, as GET /admin/v1/fleet answers it (docs/fleet.md).
QJsonObject fleetStatusJson(const fleet::FleetStatus &status);

// GET /admin/v1/fleet: this node, its link to Redis, and the live nodes it last listed. Answers
// on a single node too, with "enabled": false.
void registerFleetAdmin(http::AdminEndpoints &endpoints,
                        std::function<fleet::FleetStatus()> status);

} // namespace switchyard::admin
