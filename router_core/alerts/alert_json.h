#pragma once

#include "alerts/alert_types.h"

#include <QByteArray>
#include <QJsonObject>

namespace switchyard::alerts {

// The JSON of an event, as GET /admin/v1/alerts lists it and the webhook sends it
// (docs/operations.md, "Alerts"): rule, severity, subject, value, threshold, unit, since, at,
// message. A value with too little traffic to judge is null.
QJsonObject eventJson(const AlertEvent &event);
QJsonObject activeAlertJson(const ActiveAlert &alert);
QJsonObject webhookCountsJson(const WebhookCounts &counts);

// The webhook's body for one event: eventJson plus `text`, the one line a Slack or Mattermost
// incoming webhook shows, and `source`.
QByteArray webhookBody(const AlertEvent &event);

} // namespace switchyard::alerts
