#include "fleet/shared_health.h"

#include "fleet/fleet_node.h"
#include "health/health_registry.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <algorithm>
#include <initializer_list>

namespace switchyard::fleet {

using namespace Qt::StringLiterals;

namespace {

// The value whose name is `name`, among `values`; nothing for a name none of them has.
template <typename Enum>
std::optional<Enum> fromName(const QString &name, std::initializer_list<Enum> values,
                             QString (*nameOf)(Enum))
{
    for (Enum value : values) {
        if (nameOf(value) == name)
            return value;
    }
    return std::nullopt;
}

QJsonValue measured(double value)
{
    return value < 0 ? QJsonValue(QJsonValue::Null) : QJsonValue(value);
}

} // namespace

QJsonObject endpointSummaryJson(const EndpointSummary &endpoint)
{
    return QJsonObject{{u"id"_s, endpoint.id},
                       {u"agent"_s, endpoint.agent},
                       {u"state"_s, health::providerStateName(endpoint.state)},
                       {u"healthy"_s, endpoint.healthy()},
                       {u"breaker"_s, health::breakerStateName(endpoint.breaker)},
                       {u"breaker_reason"_s, endpoint.breakerReason.isEmpty()
                                                 ? QJsonValue()
                                                 : QJsonValue(endpoint.breakerReason)},
                       {u"operator_state"_s, health::operatorStateName(endpoint.operatorState)},
                       {u"in_flight"_s, endpoint.inFlight},
                       {u"latency_p50_ms"_s, measured(endpoint.p50LatencyMs)},
                       {u"error_rate_percent"_s, endpoint.errorRatePercent}};
}

std::optional<EndpointSummary> endpointSummaryFromJson(const QJsonObject &json)
{
    EndpointSummary endpoint;
    endpoint.id = json.value(u"id"_s).toString();
    const auto state = fromName(json.value(u"state"_s).toString(),
                                {ProviderState::Up, ProviderState::Degraded, ProviderState::Down},
                                &health::providerStateName);
    const auto breaker =
        fromName(json.value(u"breaker"_s).toString(),
                 {BreakerState::Closed, BreakerState::Open, BreakerState::HalfOpen},
                 &health::breakerStateName);
    const auto operatorState =
        fromName(json.value(u"operator_state"_s).toString(),
                 {OperatorState::Enabled, OperatorState::Disabled, OperatorState::Draining},
                 &health::operatorStateName);
    if (endpoint.id.isEmpty() || !state || !breaker || !operatorState)
        return std::nullopt;
    endpoint.agent = json.value(u"agent"_s).toBool();
    endpoint.state = *state;
    endpoint.breaker = *breaker;
    endpoint.breakerReason = json.value(u"breaker_reason"_s).toString();
    endpoint.operatorState = *operatorState;
    endpoint.inFlight = json.value(u"in_flight"_s).toInt();
    endpoint.p50LatencyMs = json.value(u"latency_p50_ms"_s).toDouble(-1.0);
    endpoint.errorRatePercent = json.value(u"error_rate_percent"_s).toDouble();
    return endpoint;
}

QByteArray publishedHealthJson(int agents, const QList<EndpointSummary> &endpoints,
                               qint64 publishedMs)
{
    QJsonArray list;
    for (const EndpointSummary &endpoint : endpoints)
        list.append(endpointSummaryJson(endpoint));
    return QJsonDocument(QJsonObject{{u"agents"_s, agents},
                                     {u"endpoints"_s, list},
                                     {u"published_ms"_s, double(publishedMs)}})
        .toJson(QJsonDocument::Compact);
}

QList<EndpointSummary> endpointSummaries(const health::HealthRegistry &health)
{
    QList<EndpointSummary> endpoints;
    for (const ProviderHealth &provider : health.snapshot()) {
        EndpointSummary endpoint;
        endpoint.id = provider.id;
        endpoint.agent = health.agents().find(provider.id) != nullptr;
        endpoint.state = provider.state;
        endpoint.breaker = provider.breaker;
        endpoint.breakerReason = provider.breakerReason;
        endpoint.operatorState = provider.operatorState;
        endpoint.inFlight = provider.inFlight;
        endpoint.p50LatencyMs = provider.p50LatencyMs;
        endpoint.errorRatePercent = provider.errorRatePercent;
        endpoints.append(std::move(endpoint));
    }
    return endpoints;
}

SharedHealth::SharedHealth(FleetNode &node, const health::HealthRegistry &health, QObject *parent)
    : QObject(parent), m_node(node), m_health(health), m_timer(this)
{
    connect(&m_timer, &QTimer::timeout, this, &SharedHealth::publishAndRead);
}

void SharedHealth::start()
{
    // The heartbeat's pace: the others' view is meant to be slow, and this keeps it one small
    // write and one read per node per quarter of the TTL.
    m_timer.start(std::max<qint64>(10, m_node.config().membershipTtl.count() / 4));
}

SharedHealth::Published SharedHealth::own() const
{
    const health::AgentRegistry &registry = m_health.agents();
    const int agents = int(std::count_if(
        registry.agents().cbegin(), registry.agents().cend(),
        [&registry](const health::AgentRecord &agent) { return registry.isLive(agent); }));
    return {agents, endpointSummaries(m_health), QDateTime::currentMSecsSinceEpoch()};
}

void SharedHealth::publishAndRead()
{
    redis::Link &link = m_node.link();
    if (!link.isUp())
        return;
    const QByteArray prefix = m_node.keyPrefix() + "health:";
    const Published mine = own();
    const qint64 expiresMs = std::max<qint64>(1, m_node.config().membershipTtl.count() * 3 / 4);
    link.send({"SET", prefix + m_node.config().node.toUtf8(),
               publishedHealthJson(mine.agents, mine.endpoints, mine.publishedMs), "PX",
               QByteArray::number(expiresMs)},
              {});

    QList<QByteArray> command{"MGET"};
    QStringList names;
    for (const FleetMember &member : m_node.status().members) {
        if (member.self)
            continue;
        names.append(member.node);
        command.append(prefix + member.node.toUtf8());
    }
    if (names.isEmpty()) {
        m_others.clear();
        return;
    }
    link.send(command, [this, names](const redis::Result &result) {
        if (!result.ok())
            return; // kept as last read
        QHash<QString, Published> others;
        for (qsizetype i = 0; i < names.size() && i < result.reply.elements.size(); ++i) {
            const redis::Reply &entry = result.reply.elements[i];
            if (entry.isNil())
                continue; // not published yet, or gone with its node
            const QJsonObject object = QJsonDocument::fromJson(entry.text).object();
            Published published;
            published.agents = object.value(u"agents"_s).toInt(-1);
            published.publishedMs = qint64(object.value(u"published_ms"_s).toDouble());
            for (const QJsonValue &value : object.value(u"endpoints"_s).toArray()) {
                if (std::optional<EndpointSummary> endpoint =
                        endpointSummaryFromJson(value.toObject()))
                    published.endpoints.append(*endpoint);
            }
            others.insert(names[i], published);
        }
        m_others = others;
    });
}

void SharedHealth::fill(FleetStatus &status) const
{
    for (FleetMember &member : status.members) {
        const Published published = member.self ? own() : m_others.value(member.node);
        member.agents = published.agents;
        member.endpoints = published.endpoints;
        member.endpointsPublishedMs = published.publishedMs;
    }
}

} // namespace switchyard::fleet
