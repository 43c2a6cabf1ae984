#include "alerts/alert_json.h"

#include <QDateTime>
#include <QJsonDocument>
#include <cmath>

namespace switchyard::alerts {

using namespace Qt::StringLiterals;

namespace {

QJsonValue timeJson(qint64 msSinceEpoch)
{
    return QDateTime::fromMSecsSinceEpoch(msSinceEpoch, Qt::UTC).toString(Qt::ISODateWithMs);
}

QJsonValue numberJson(double value)
{
    return std::isnan(value) ? QJsonValue() : QJsonValue(value);
}

} // namespace

QJsonObject eventJson(const AlertEvent &event)
{
    return QJsonObject{
        {u"sequence"_s, double(event.sequence)},
        {u"status"_s, eventKindName(event.kind)},
        {u"rule"_s, config::alertRuleName(event.rule)},
        {u"severity"_s, config::alertSeverityName(event.severity)},
        {u"subject_kind"_s, subjectKindName(event.subjectKind)},
        {u"subject"_s, event.subject},
        {u"value"_s, numberJson(event.value)},
        {u"threshold"_s, numberJson(event.threshold)},
        {u"unit"_s, valueUnitName(event.unit)},
        {u"since"_s, timeJson(event.sinceMs)},
        {u"at"_s, timeJson(event.atMs)},
        {u"message"_s, event.message},
    };
}

QJsonObject activeAlertJson(const ActiveAlert &alert)
{
    return QJsonObject{
        {u"rule"_s, config::alertRuleName(alert.rule)},
        {u"severity"_s, config::alertSeverityName(alert.severity)},
        {u"subject_kind"_s, subjectKindName(alert.subjectKind)},
        {u"subject"_s, alert.subject},
        {u"value"_s, numberJson(alert.value)},
        {u"threshold"_s, numberJson(alert.threshold)},
        {u"unit"_s, valueUnitName(alert.unit)},
        {u"since"_s, timeJson(alert.sinceMs)},
        {u"raised_at"_s, timeJson(alert.raisedAtMs)},
        {u"message"_s, alert.message},
    };
}

QJsonObject webhookCountsJson(const WebhookCounts &counts)
{
    return QJsonObject{
        {u"enabled"_s, counts.enabled},         {u"delivered"_s, double(counts.delivered)},
        {u"failed"_s, double(counts.failed)},   {u"dropped"_s, double(counts.dropped)},
        {u"retries"_s, double(counts.retries)}, {u"queued"_s, double(counts.queued)},
    };
}

QByteArray webhookBody(const AlertEvent &event)
{
    QJsonObject body = eventJson(event);
    const QString status = event.kind == AlertEvent::Kind::Raised ? u"RAISED"_s : u"CLEARED"_s;
    body.insert(u"text"_s,
                u"[%1] %2 %3: %4"_s.arg(config::alertSeverityName(event.severity), status,
                                        config::alertRuleName(event.rule), event.message));
    body.insert(u"source"_s, u"switchyard"_s);
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

} // namespace switchyard::alerts
