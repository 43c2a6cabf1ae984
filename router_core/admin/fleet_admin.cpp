#include "admin/fleet_admin.h"

#include "fleet/shared_health.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {

QJsonValue isoTime(qint64 msSinceEpoch)
{
    if (msSinceEpoch <= 0)
        return QJsonValue();
    return QDateTime::fromMSecsSinceEpoch(msSinceEpoch, Qt::UTC).toString(Qt::ISODateWithMs);
}

QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue() : QJsonValue(text);
}

} // namespace

QJsonObject fleetStatusJson(const fleet::FleetStatus &status)
{
    QJsonArray nodes;
    for (const fleet::FleetMember &member : status.members) {
        QJsonArray endpoints;
        for (const EndpointSummary &endpoint : member.endpoints)
            endpoints.append(fleet::endpointSummaryJson(endpoint));
        nodes.append(
            QJsonObject{{u"node"_s, member.node},
                        {u"address"_s, member.address},
                        {u"version"_s, member.version},
                        {u"config_version"_s, double(member.configVersion)},
                        {u"in_flight"_s, member.inFlight},
                        {u"requests_per_second"_s, member.requestsPerSecond},
                        {u"started_at"_s, isoTime(member.startedMs)},
                        {u"heartbeat_at"_s, isoTime(member.announcedMs)},
                        {u"self"_s, member.self},
                        {u"agents"_s, member.agents < 0 ? QJsonValue() : QJsonValue(member.agents)},
                        {u"endpoints"_s, endpoints},
                        {u"endpoints_at"_s, isoTime(member.endpointsPublishedMs)}});
    }
    return QJsonObject{
        {u"object"_s, u"fleet"_s},
        {u"enabled"_s, status.enabled},
        {u"fleet"_s, textOrNull(status.fleet)},
        {u"node"_s, textOrNull(status.node)},
        {u"redis"_s, textOrNull(status.redis)},
        {u"link"_s, QJsonObject{{u"up"_s, status.linkUp},
                                {u"down_since"_s, isoTime(status.linkDownSinceMs)},
                                {u"problem"_s, textOrNull(status.problem)}}},
        {u"nodes"_s, nodes},
        {u"redis_commands"_s, QJsonObject{{u"sent"_s, double(status.commandsSent)},
                                          {u"failed"_s, double(status.commandsFailed)}}},
        {u"sync_rounds"_s, double(status.syncRounds)},
        {u"config"_s, QJsonObject{{u"version"_s, double(status.configVersion)},
                                  {u"problem"_s, textOrNull(status.configProblem)}}}};
}

void registerFleetAdmin(http::AdminEndpoints &endpoints, std::function<fleet::FleetStatus()> status)
{
    endpoints.add(Method::Get, u"fleet"_s,
                  [status = std::move(status)](const http::AdminRequest &, const QStringList &) {
                      return http::AdminReply::json(QJsonDocument(fleetStatusJson(status())));
                  });
}

} // namespace switchyard::admin
