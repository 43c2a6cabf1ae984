#pragma once

#include "alerts/alert_types.h"
#include "http/admin_endpoints.h"

#include <functional>

namespace switchyard::alerts {
class AlertEvaluator;
}

namespace switchyard::admin {

// GET /admin/v1/alerts: the alerts raised now, the newest raised and cleared events (`limit`,
// newest first) and the webhook's counts (docs/operations.md, "Alerts").
void registerAlertsAdmin(http::AdminEndpoints &api, const alerts::AlertEvaluator &evaluator,
                         std::function<alerts::WebhookCounts()> webhookCounts);

} // namespace switchyard::admin
