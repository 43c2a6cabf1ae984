#include "fleet/shared_agents.h"

#include "control/operator_commands.h"
#include "fleet/fleet_node.h"
#include "health/health_registry.h"
#include "redis/redis_reply.h"
#include "routing/router.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSet>
#include <algorithm>

Q_DECLARE_LOGGING_CATEGORY(lcFleet)

namespace switchyard::fleet {

using namespace Qt::StringLiterals;

namespace {

// Every script takes the same five keys: KEYS[1] the hash of registrations, KEYS[2] the
// revision, KEYS[3] the sorted set of heartbeat numbers, KEYS[4] the hash of heartbeats
// ("MS BUSY", MS by Redis's clock), KEYS[5] the heartbeat counter. Times are Redis's own, so a
// heartbeat's age never depends on two nodes' clocks agreeing. Numbers go back as text: a Lua
// number returned bare loses what follows a decimal point, and these are milliseconds since the
// epoch.
const QByteArray kPrelude = R"lua(
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function text(n) return string.format('%.0f', n) end
local function heldAt(held) return held and tonumber(string.match(held, '^%d+')) end
-- Records a heartbeat unless the fleet holds a newer one (a node whose batch went later).
local function beat(id, at, busy)
  if (heldAt(redis.call('HGET', KEYS[4], id)) or 0) > at then return end
  local sequence = redis.call('INCR', KEYS[5])
  redis.call('ZADD', KEYS[3], sequence, id)
  redis.call('HSET', KEYS[4], id, text(at) .. ' ' .. busy)
end
local function forget(id)
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[3], id)
  redis.call('HDEL', KEYS[4], id)
end
)lua";

// ARGV: id, registration. A registration is a heartbeat that clears busy.
const QByteArray kRegisterScript = kPrelude + R"lua(
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
beat(ARGV[1], now(), '0')
redis.call('INCR', KEYS[2])
return 1
)lua";

// ARGV: id.
const QByteArray kRemoveScript = kPrelude + R"lua(
forget(ARGV[1])
redis.call('INCR', KEYS[2])
return 1
)lua";

// ARGV: (id, busy, age in ms) for each heartbeat. One the fleet no longer registers (removed
// meanwhile on another node) is dropped: a heartbeat never brings an agent back.
const QByteArray kBeatScript = kPrelude + R"lua(
local at = now()
for i = 1, #ARGV, 3 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    beat(ARGV[i], at - tonumber(ARGV[i + 2]), ARGV[i + 1])
  end
end
return 1
)lua";

// ARGV: the last heartbeat number seen. Answers the revision, the newest heartbeat number, Redis's
// time, then (id, heartbeat) for each agent that beat since.
const QByteArray kPollScript = kPrelude + R"lua(
local result = {redis.call('GET', KEYS[2]) or '0', redis.call('GET', KEYS[5]) or '0', text(now())}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '(' .. ARGV[1], '+inf')) do
  result[#result + 1] = id
  result[#result + 1] = redis.call('HGET', KEYS[4], id) or ''
end
return result
)lua";

// ARGV: the TTL in ms. Answers the revision, the newest heartbeat number, Redis's time, then
// (id, registration, heartbeat) for each live agent; forgets those whose TTL lapsed (every node
// expires them on its own, so no revision is needed for that).
const QByteArray kPullScript = kPrelude + R"lua(
local at = now()
local result = {redis.call('GET', KEYS[2]) or '0', redis.call('GET', KEYS[5]) or '0', text(at)}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local held = redis.call('HGET', KEYS[4], all[i])
  local beatAt = heldAt(held)
  if beatAt and at - beatAt < tonumber(ARGV[1]) then
    result[#result + 1] = all[i]
    result[#result + 1] = all[i + 1]
    result[#result + 1] = held
  else
    forget(all[i])
  end
end
return result
)lua";

// ARGV: (id, registration, busy, age in ms) for each live agent this node holds. The fleet's
// registration wins over this node's: another node that came back first has the same agents.
const QByteArray kRepublishScript = kPrelude + R"lua(
local at = now()
for i = 1, #ARGV, 4 do
  if redis.call('HSETNX', KEYS[1], ARGV[i], ARGV[i + 1]) == 1 then
    beat(ARGV[i], at - tonumber(ARGV[i + 3]), ARGV[i + 2])
  end
end
redis.call('INCR', KEYS[2])
return 1
)lua";

struct Heartbeat {
    qint64 atMs = 0; // by Redis's clock
    bool busy = false;
};

std::optional<Heartbeat> heartbeatFrom(const QByteArray &text)
{
    const QList<QByteArray> parts = text.split(' ');
    bool ok = false;
    Heartbeat heartbeat;
    heartbeat.atMs = parts.value(0).toLongLong(&ok);
    if (!ok || parts.size() != 2)
        return std::nullopt;
    heartbeat.busy = parts[1] == "1";
    return heartbeat;
}

bool sameRegistration(const health::AgentRegistration &a, const health::AgentRegistration &b)
{
    return a.id == b.id && a.baseUrl == b.baseUrl && a.capabilities == b.capabilities &&
           a.capacity == b.capacity && a.models == b.models;
}

qint64 ageMs(const timing::Clock &clock, timing::Clock::TimePoint at)
{
    return std::max<qint64>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(clock.now() - at).count());
}

} // namespace

QByteArray agentToJson(const health::AgentRegistration &registration)
{
    const QJsonObject object{
        {u"id"_s, registration.id},
        {u"base_url"_s, registration.baseUrl.toString()},
        {u"capabilities"_s, QJsonArray::fromStringList(registration.capabilities)},
        {u"capacity"_s, registration.capacity},
        {u"models"_s, QJsonArray::fromStringList(registration.models)}};
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

std::optional<health::AgentRegistration> agentFromJson(const QByteArray &json)
{
    const QJsonObject object = QJsonDocument::fromJson(json).object();
    health::AgentRegistration registration;
    registration.id = object.value(u"id"_s).toString();
    registration.baseUrl = QUrl(object.value(u"base_url"_s).toString());
    if (registration.id.isEmpty() || !registration.baseUrl.isValid())
        return std::nullopt;
    for (const QJsonValue &tag : object.value(u"capabilities"_s).toArray())
        registration.capabilities.append(tag.toString());
    registration.capacity = object.value(u"capacity"_s).toInt();
    for (const QJsonValue &model : object.value(u"models"_s).toArray())
        registration.models.append(model.toString());
    return registration;
}

SharedAgents::SharedAgents(FleetNode &node, control::OperatorCommands &commands,
                           routing::Router &router, health::HealthRegistry &health,
                           const timing::Clock &clock, QObject *parent)
    : QObject(parent), m_node(node), m_router(router), m_health(health), m_clock(clock),
      m_prefix(node.keyPrefix() + "agents")
{
    commands.setAgentListener(
        {[this](const health::AgentRecord &agent) {
             const QString &id = agent.registration.id;
             m_pendingBeats.remove(id); // the registration is the newer heartbeat
             enqueue(QList<QByteArray>{"EVAL", kRegisterScript, "5"} + keys() +
                     QList<QByteArray>{id.toUtf8(), agentToJson(agent.registration)});
         },
         [this](const health::AgentRecord &agent) {
             m_pendingBeats.insert(agent.registration.id, {agent.busy, m_clock.now()});
         },
         [this](const QString &id) {
             m_pendingBeats.remove(id);
             enqueue(QList<QByteArray>{"EVAL", kRemoveScript, "5"} + keys() +
                     QList<QByteArray>{id.toUtf8()});
         }});
    connect(&m_node, &FleetNode::joined, this, &SharedAgents::joined);
    m_node.onSync([this] { sync(); });
}

QList<QByteArray> SharedAgents::keys() const
{
    return {m_prefix, m_prefix + ":revision", m_prefix + ":beats", m_prefix + ":heartbeats",
            m_prefix + ":sequence"};
}

void SharedAgents::enqueue(QList<QByteArray> command)
{
    if (m_queue.size() >= kMaxQueued) {
        // The oldest not yet sent: what is on the wire is acknowledged in order.
        const auto unsent = std::find_if(m_queue.begin(), m_queue.end(),
                                         [](const Change &change) { return !change.sent; });
        if (unsent != m_queue.end()) {
            m_queue.erase(unsent);
            ++m_dropped;
            qCWarning(lcFleet)
                << "the queue of agent changes for the fleet is full: dropped the oldest";
        }
    }
    m_queue.append({std::move(command), false});
    flush();
}

void SharedAgents::flush()
{
    redis::Link &link = m_node.link();
    for (Change &change : m_queue) {
        if (change.sent || !link.isUp())
            continue;
        change.sent = true;
        // Redis answers in the order it was asked, so an answer is always for the first change.
        link.send(change.command, [this](const redis::Result &result) {
            if (result.answered()) {
                if (!result.ok())
                    qCWarning(lcFleet).noquote()
                        << "Redis refused an agent change:" << result.problem();
                m_queue.removeFirst();
                return;
            }
            for (Change &waiting : m_queue)
                waiting.sent = false; // the link went down: all again, in order, when it is back
        });
    }
}

void SharedAgents::flushBeats()
{
    if (m_pendingBeats.isEmpty())
        return;
    QList<QByteArray> command = QList<QByteArray>{"EVAL", kBeatScript, "5"} + keys();
    for (auto it = m_pendingBeats.cbegin(); it != m_pendingBeats.cend(); ++it) {
        command << it.key().toUtf8() << (it->busy ? "1" : "0")
                << QByteArray::number(ageMs(m_clock, it->at));
    }
    m_node.link().send(
        command, [this, sent = std::exchange(m_pendingBeats, {})](const redis::Result &result) {
            if (result.answered())
                return;
            // Lost with the link: sent again when it is back, unless a newer one came meanwhile.
            for (auto it = sent.cbegin(); it != sent.cend(); ++it) {
                if (!m_pendingBeats.contains(it.key()))
                    m_pendingBeats.insert(it.key(), it.value());
            }
        });
}

void SharedAgents::joined()
{
    flush();
    // Redis may have been emptied or replaced: read everything again.
    m_seenRevision.reset();
    m_seenSequence = 0;
    // A node the fleet has not heard from since Redis last lost its data (or ever) adds the live
    // agents it holds; one the fleet knows follows the fleet, so an agent removed elsewhere while
    // this node was cut off stays removed.
    m_node.link().send({"SADD", m_prefix + ":joined", m_node.config().node.toUtf8()},
                       [this](const redis::Result &result) {
                           if (result.ok() && result.reply.integer == 1)
                               republishAll();
                       });
}

void SharedAgents::republishAll()
{
    const health::AgentRegistry &registry = m_health.agents();
    QList<QByteArray> command = QList<QByteArray>{"EVAL", kRepublishScript, "5"} + keys();
    int live = 0;
    for (const health::AgentRecord &agent : registry.agents()) {
        if (!registry.isLive(agent))
            continue;
        command << agent.registration.id.toUtf8() << agentToJson(agent.registration)
                << (agent.busy ? "1" : "0")
                << QByteArray::number(ageMs(m_clock, agent.lastHeartbeat));
        ++live;
    }
    if (live == 0)
        return;
    qCInfo(lcFleet).noquote() << "joining the fleet's agents: publishing this node's" << live;
    m_node.link().send(command, {});
}

void SharedAgents::sync()
{
    if (m_pulling || m_polling || !m_queue.isEmpty()) {
        flush();
        return; // this node's own changes go first, or reading would undo them
    }
    flushBeats();
    m_polling = true;
    m_node.link().send(QList<QByteArray>{"EVAL", kPollScript, "5"} + keys() +
                           QList<QByteArray>{QByteArray::number(m_seenSequence)},
                       [this](const redis::Result &result) {
                           m_polling = false;
                           if (result.ok())
                               applyBeats(result.reply);
                       });
}

void SharedAgents::applyBeats(const redis::Reply &reply)
{
    const QList<redis::Reply> &fields = reply.elements;
    if (fields.size() < 3)
        return;
    const qint64 revision = fields[0].text.toLongLong();
    const qint64 sequence = fields[1].text.toLongLong();
    const qint64 redisNowMs = fields[2].text.toLongLong();
    if (sequence < m_seenSequence) {
        // The counter went back: Redis lost the registry while this node's link stayed up.
        qCWarning(lcFleet) << "the fleet's agent registry was lost in Redis: publishing again";
        joined();
        return;
    }
    health::AgentRegistry &registry = m_health.agents();
    for (qsizetype i = 3; i + 1 < fields.size(); i += 2) {
        const std::optional<Heartbeat> heartbeat = heartbeatFrom(fields[i + 1].text);
        if (!heartbeat)
            continue;
        // An agent not known here yet comes with its registration, whose revision is newer.
        registry.heartbeatTakenElsewhere(QString::fromUtf8(fields[i].text),
                                         std::chrono::milliseconds(redisNowMs - heartbeat->atMs),
                                         heartbeat->busy);
    }
    m_seenSequence = sequence;
    if (m_queue.isEmpty() && m_seenRevision != revision)
        pull();
}

void SharedAgents::pull()
{
    m_pulling = true;
    m_node.link().send(QList<QByteArray>{"EVAL", kPullScript, "5"} + keys() +
                           QList<QByteArray>{QByteArray::number(m_health.agents().ttl().count())},
                       [this](const redis::Result &result) {
                           m_pulling = false;
                           if (result.ok() && m_queue.isEmpty())
                               applyRegistry(result.reply);
                       });
}

void SharedAgents::applyRegistry(const redis::Reply &reply)
{
    const QList<redis::Reply> &fields = reply.elements;
    if (fields.size() < 3)
        return;
    const qint64 redisNowMs = fields[2].text.toLongLong();
    health::AgentRegistry &registry = m_health.agents();
    QSet<QString> inFleet;
    for (qsizetype i = 3; i + 2 < fields.size(); i += 3) {
        const QString id = QString::fromUtf8(fields[i].text);
        const std::optional<health::AgentRegistration> registration =
            agentFromJson(fields[i + 1].text);
        const std::optional<Heartbeat> heartbeat = heartbeatFrom(fields[i + 2].text);
        if (!registration || registration->id != id || !heartbeat) {
            qCWarning(lcFleet).noquote()
                << "skipped an agent the fleet holds that does not read:" << id;
            continue;
        }
        inFleet.insert(id);
        const health::AgentRecord *held = registry.find(id);
        const bool learnt = !held || !sameRegistration(held->registration, *registration);
        if (learnt) {
            // Through the router, as a registration here: the same checks, the same endpoint.
            if (const auto refusal = m_router.registerAgent(*registration)) {
                qCWarning(lcFleet).noquote()
                    << "an agent the fleet holds is refused here:" << refusal->message;
                continue;
            }
        }
        registry.heartbeatTakenElsewhere(
            id, std::chrono::milliseconds(redisNowMs - heartbeat->atMs), heartbeat->busy, learnt);
    }
    QStringList removed;
    for (const health::AgentRecord &agent : registry.agents()) {
        if (!inFleet.contains(agent.registration.id))
            removed.append(agent.registration.id);
    }
    for (const QString &id : std::as_const(removed)) {
        m_pendingBeats.remove(id);
        m_router.removeAgent(id);
    }
    m_seenRevision = fields[0].text.toLongLong();
    m_seenSequence = std::max(m_seenSequence, fields[1].text.toLongLong());
}

} // namespace switchyard::fleet
