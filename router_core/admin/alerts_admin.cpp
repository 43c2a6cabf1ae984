#include "admin/alerts_admin.h"

#include "alerts/alert_evaluator.h"
#include "alerts/alert_json.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {
constexpr int kDefaultEvents = 50;
} // namespace

void registerAlertsAdmin(http::AdminEndpoints &api, const alerts::AlertEvaluator &evaluator,
                         std::function<alerts::WebhookCounts()> webhookCounts)
{
    api.add(Method::Get, u"alerts"_s,
            [&evaluator, webhookCounts = std::move(webhookCounts)](
                const http::AdminRequest &request, const QStringList &) {
                const QList<alerts::AlertEvent> &recent = evaluator.recentEvents();
                int limit = kDefaultEvents;
                const QString limitText = request.query.queryItemValue(u"limit"_s);
                if (!limitText.isEmpty()) {
                    bool ok = false;
                    limit = limitText.toInt(&ok);
                    if (!ok || limit < 0 || limit > 100'000) {
                        return http::AdminReply::error(http::invalidAdminRequest(
                            u"`limit` must be a whole number from 0 to 100000, got `%1`."_s.arg(
                                limitText),
                            u"limit"_s));
                    }
                }
                QJsonArray active;
                for (const alerts::ActiveAlert &alert : evaluator.active())
                    active.append(alerts::activeAlertJson(alert));
                QJsonArray events;
                for (qsizetype index = recent.size() - 1; index >= 0 && events.size() < limit;
                     --index)
                    events.append(alerts::eventJson(recent.at(index)));
                return http::AdminReply::json(QJsonDocument(QJsonObject{
                    {u"object"_s, u"alerts"_s},
                    {u"active"_s, active},
                    {u"events"_s, events},
                    {u"events_kept"_s, recent.size()},
                    {u"events_total"_s, double(evaluator.eventsTotal())},
                    {u"has_more"_s, recent.size() > events.size()},
                    {u"webhook"_s, alerts::webhookCountsJson(webhookCounts())},
                }));
            });
}

} // namespace switchyard::admin
