#include "fleet/fleet_node.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QUuid>
#include <algorithm>

Q_LOGGING_CATEGORY(lcFleet, "switchyard.fleet")

namespace switchyard::fleet {

using namespace Qt::StringLiterals;

namespace {

// Writes the node's entry and lists its name, unless another instance holds the entry: then
// answers with the holder's announcement (nil when the entry is this instance's now). One script,
// so two nodes starting under one name cannot both take it.
const QByteArray kClaimScript = R"lua(
local held = redis.call('GET', KEYS[1])
if held and not string.find(held, ARGV[2], 1, true) then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
return false
)lua";

FleetMember memberFrom(const QByteArray &announcement)
{
    const QJsonObject object = QJsonDocument::fromJson(announcement).object();
    FleetMember member;
    member.node = object.value(u"node"_s).toString();
    member.address = object.value(u"address"_s).toString();
    member.version = object.value(u"version"_s).toString();
    member.configVersion = quint64(object.value(u"config_version"_s).toDouble());
    member.inFlight = object.value(u"in_flight"_s).toInt();
    member.requestsPerSecond = object.value(u"requests_per_second"_s).toDouble();
    member.startedMs = qint64(object.value(u"started_ms"_s).toDouble());
    member.announcedMs = qint64(object.value(u"announced_ms"_s).toDouble());
    return member;
}

redis::Link::Options linkOptions(const config::FleetConfig &config)
{
    redis::Link::Options options;
    const auto parsed = redis::parseAddress(config.redis); // checked when the config loaded
    if (const auto *address = std::get_if<redis::Address>(&parsed))
        options.address = *address;
    options.password = config.password;
    options.timeout = config.timeout;
    options.clientName = "switchyard-" + config.node.toUtf8();
    return options;
}

} // namespace

FleetNode::FleetNode(config::FleetConfig config, QString version, std::function<NodeFacts()> facts,
                     QObject *parent)
    : QObject(parent), m_config(std::move(config)), m_version(std::move(version)),
      m_facts(std::move(facts)), m_keyPrefix("switchyard:" + m_config.name.toUtf8() + ':'),
      m_instance(QUuid::createUuid().toByteArray(QUuid::WithoutBraces)),
      m_startedMs(QDateTime::currentMSecsSinceEpoch()),
      m_link(std::make_unique<redis::Link>(linkOptions(m_config), this)), m_heartbeatTimer(this),
      m_syncTimer(this)
{
    connect(m_link.get(), &redis::Link::linkUp, this, &FleetNode::heartbeat);
    connect(m_link.get(), &redis::Link::linkDown, this, [this] {
        m_holdsName = false; // claimed again when the link is back: Redis may have been emptied
        emit membersChanged();
    });
    connect(&m_heartbeatTimer, &QTimer::timeout, this, &FleetNode::heartbeat);
    connect(&m_syncTimer, &QTimer::timeout, this, [this] {
        if (!m_link->isUp() || !m_holdsName)
            return;
        ++m_syncRounds;
        for (const std::function<void()> &task : std::as_const(m_syncTasks))
            task();
    });
}

FleetNode::~FleetNode() = default;

void FleetNode::start()
{
    qCInfo(lcFleet).noquote() << "joining fleet" << m_config.name << "as node" << m_config.node
                              << "through" << m_link->options().address.toString();
    m_link->start();
    m_heartbeatTimer.start(std::max<qint64>(10, m_config.membershipTtl.count() / 4));
    m_syncTimer.start(m_config.syncInterval);
}

void FleetNode::onSync(std::function<void()> task)
{
    m_syncTasks.append(std::move(task));
}

QByteArray FleetNode::nodeKey(const QString &node) const
{
    return m_keyPrefix + "node:" + node.toUtf8();
}

QByteArray FleetNode::announcement() const
{
    const NodeFacts facts = m_facts ? m_facts() : NodeFacts{};
    const QJsonObject object{{u"node"_s, m_config.node},
                             {u"instance"_s, QString::fromLatin1(m_instance)},
                             {u"address"_s, facts.address},
                             {u"version"_s, m_version},
                             {u"config_version"_s, double(facts.configVersion)},
                             {u"in_flight"_s, facts.inFlight},
                             {u"requests_per_second"_s, facts.requestsPerSecond},
                             {u"started_ms"_s, double(m_startedMs)},
                             {u"announced_ms"_s, double(QDateTime::currentMSecsSinceEpoch())}};
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

void FleetNode::heartbeat()
{
    if (!m_link->isUp() || m_gaveUp)
        return;
    const qint64 expiresMs = std::max<qint64>(1, m_config.membershipTtl.count() * 3 / 4);
    m_link->send({"EVAL", kClaimScript, "2", nodeKey(m_config.node), m_keyPrefix + "nodes",
                  announcement(), "\"instance\":\"" + m_instance + '"',
                  QByteArray::number(expiresMs), m_config.node.toUtf8()},
                 [this](const redis::Result &result) { claimed(result); });
}

void FleetNode::claimed(const redis::Result &result)
{
    if (!result.ok()) {
        if (result.answered())
            qCWarning(lcFleet).noquote() << "Redis refused the heartbeat:" << result.problem();
        return; // the link's own loss is logged by the link; the next heartbeat tries again
    }
    if (result.reply.isNil()) {
        m_nameRefusedSinceMs = 0;
        if (!m_holdsName) {
            m_holdsName = true;
            qCInfo(lcFleet).noquote() << "node" << m_config.node << "joined fleet" << m_config.name;
            emit joined();
        }
        listMembers();
        return;
    }
    // Another instance holds the name. A node that died a moment ago still does until its entry
    // expires, so the name is given up only when it was held for a whole TTL.
    const FleetMember holder = memberFrom(result.reply.text);
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    if (m_nameRefusedSinceMs == 0)
        m_nameRefusedSinceMs = now;
    if (now - m_nameRefusedSinceMs < m_config.membershipTtl.count())
        return;
    m_gaveUp = true;
    const QString message =
        u"fleet node name \"%1\" is taken by a live node at %2: give each node its own "
        u"fleet.node"_s.arg(m_config.node,
                            holder.address.isEmpty() ? u"an unknown address"_s : holder.address);
    qCCritical(lcFleet).noquote() << message;
    emit nameTaken(message);
}

void FleetNode::listMembers()
{
    m_link->send({"SMEMBERS", m_keyPrefix + "nodes"}, [this](const redis::Result &names) {
        if (!names.ok())
            return;
        QList<QByteArray> arguments{"MGET"};
        QList<QByteArray> listed;
        for (const redis::Reply &name : names.reply.elements) {
            arguments.append(nodeKey(QString::fromUtf8(name.text)));
            listed.append(name.text);
        }
        if (listed.isEmpty())
            return;
        m_link->send(arguments, [this, listed](const redis::Result &entries) {
            if (!entries.ok())
                return;
            QList<FleetMember> members;
            QList<QByteArray> expired{"SREM", m_keyPrefix + "nodes"};
            for (qsizetype i = 0; i < entries.reply.elements.size() && i < listed.size(); ++i) {
                const redis::Reply &entry = entries.reply.elements[i];
                if (entry.isNil()) {
                    expired.append(listed[i]);
                    continue;
                }
                FleetMember member = memberFrom(entry.text);
                member.self = member.node == m_config.node;
                members.append(member);
            }
            if (expired.size() > 2)
                m_link->send(expired, {});
            std::sort(members.begin(), members.end(),
                      [](const FleetMember &a, const FleetMember &b) { return a.node < b.node; });
            m_members = members;
            emit membersChanged();
        });
    });
}

int FleetNode::liveNodes() const
{
    return std::max(1, int(m_members.size()));
}

FleetStatus FleetNode::status() const
{
    FleetStatus status;
    status.enabled = true;
    status.fleet = m_config.name;
    status.node = m_config.node;
    status.redis = m_link->options().address.toString();
    status.linkUp = m_link->isUp();
    status.linkDownSinceMs = m_link->downSinceMs();
    status.problem = m_link->problem();
    status.members = m_members;
    status.commandsSent = m_link->commandsSent();
    status.commandsFailed = m_link->commandsFailed();
    status.syncRounds = m_syncRounds;
    return status;
}

} // namespace switchyard::fleet
