#pragma once

#include "health/agent_registry.h"
#include "timing/clock.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <optional>

namespace switchyard::control {
class OperatorCommands;
}
namespace switchyard::health {
class HealthRegistry;
}
namespace switchyard::redis {
struct Reply;
}
namespace switchyard::routing {
class Router;
}

namespace switchyard::fleet {

class FleetNode;

// One registry of agents across the fleet (docs/fleet.md, "Agents"): an agent registers,
// heartbeats or is removed on any node, and every node routes to it from its own copy, the
// health registry's AgentRegistry, which the router reads as a single node's.
//
// In Redis: the hash `agents` (id to the registration's JSON) and the counter `agents:revision`,
// bumped by a registration or a removal, never by a heartbeat; each heartbeat gets the next
// number of `agents:sequence` and is kept as that number in the sorted set `agents:beats` and as
// "MS BUSY" (Redis's clock, so no two nodes' clocks are compared) in the hash
// `agents:heartbeats`. Every sync a node asks, in one script, for the revision and for the
// heartbeats numbered after the last it saw: a heartbeat costs every other node one line of one
// reply, however many agents there are. Only when the revision moved does it read every
// registration again and make its copy match (a removed agent is removed, a moved one
// re-registered). The counter is polled rather than subscribed to: a subscriber needs a
// connection of its own and misses what was said while it was away, where a counter read each
// sync cannot miss a change and costs one small command a node already sends.
//
// While Redis is away each node serves from its copy: a heartbeat taken here keeps the agent
// alive here, an agent that stops beating expires here at its TTL, as on a single node. A
// registration or a removal made meanwhile waits in a bounded queue and is written, in order,
// before anything is read; heartbeats wait as the newest one per agent. A node that finds the
// fleet's registry lost (the set `agents:joined` lacks it: Redis restarted empty) writes the live
// agents it holds into it, keeping any the fleet already has. In-flight calls to an agent are
// each node's own, like every endpoint's health. Engine thread only.
class SharedAgents final : public QObject {
    Q_OBJECT
public:
    SharedAgents(FleetNode &node, control::OperatorCommands &commands, routing::Router &router,
                 health::HealthRegistry &health,
                 const timing::Clock &clock = timing::SteadyClock::instance(),
                 QObject *parent = nullptr);

    // Registrations and removals waiting for the link, and those the bounded queue dropped.
    int queued() const { return int(m_queue.size()); }
    quint64 dropped() const { return m_dropped; }

    // The same bound as the keys' queue: far more changes than an outage of minutes brings.
    static constexpr int kMaxQueued = 10'000;

private:
    struct Change {
        QList<QByteArray> command; // a script that registers or removes one agent
        bool sent = false;         // on the wire, its answer not yet in
    };
    struct PendingBeat {
        bool busy = false;
        timing::Clock::TimePoint at{};
    };
    void enqueue(QList<QByteArray> command);
    void flush();
    void flushBeats();
    void joined();
    void republishAll();
    void sync();
    void applyBeats(const redis::Reply &reply);
    void pull();
    void applyRegistry(const redis::Reply &reply);
    QList<QByteArray> keys() const;

    FleetNode &m_node;
    routing::Router &m_router;
    health::HealthRegistry &m_health;
    const timing::Clock &m_clock;
    QByteArray m_prefix; // `switchyard:NAME:agents`
    QList<Change> m_queue;
    quint64 m_dropped = 0;
    QHash<QString, PendingBeat> m_pendingBeats; // by agent id: only the newest counts
    std::optional<qint64> m_seenRevision;
    qint64 m_seenSequence = 0;
    bool m_polling = false;
    bool m_pulling = false;
};

// A registration as the fleet stores it, and back. Public for the tests.
QByteArray agentToJson(const health::AgentRegistration &registration);
std::optional<health::AgentRegistration> agentFromJson(const QByteArray &json);

} // namespace switchyard::fleet
