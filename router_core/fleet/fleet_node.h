#pragma once

#include "config/fleet_config.h"
#include "health/endpoint_state.h"
#include "redis/redis_link.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>
#include <functional>
#include <memory>

namespace switchyard::fleet {

// What this node tells the others about itself with each heartbeat.
struct NodeFacts {
    QString address;           // where it listens, HOST:PORT
    quint64 configVersion = 0; // the config version it runs
    int inFlight = 0;          // requests in flight now
    double requestsPerSecond = 0.0;
};

// One node of the fleet as it last announced itself.
struct FleetMember {
    QString node;
    QString address;
    QString version; // Switchyard's version
    quint64 configVersion = 0;
    int inFlight = 0;
    double requestsPerSecond = 0.0;
    qint64 startedMs = 0;   // UTC milliseconds since the epoch
    qint64 announcedMs = 0; // its last heartbeat, by its own clock
    bool self = false;      // this node
    // What it last published of its endpoints (SharedHealth fills these in; this node's own are
    // read from its registry when asked): the agents it holds (-1: nothing published yet), each
    // endpoint's state, and when it published them, UTC milliseconds by its own clock.
    int agents = -1;
    QList<EndpointSummary> endpoints;
    qint64 endpointsPublishedMs = 0;
};

// The fleet as this node sees it: the link, and the nodes it last listed.
struct FleetStatus {
    bool enabled = false; // false: a single node, no fleet section
    QString fleet;        // the fleet's name
    QString node;         // this node's name
    QString redis;        // the address, without password
    bool linkUp = false;
    qint64 linkDownSinceMs = 0; // UTC; 0 while up
    QString problem;            // why the link is down; empty while up
    QList<FleetMember> members; // the live nodes, by name
    quint64 commandsSent = 0;
    quint64 commandsFailed = 0;
    quint64 syncRounds = 0;    // sync intervals that ran their tasks
    quint64 configVersion = 0; // the fleet's config version this node runs; 0: not known
    QString configProblem;     // why the fleet's newest version does not run here; empty: it does
};

// This node's membership of a fleet (docs/fleet.md): the Redis link, the node's claim on its
// name, the heartbeat that keeps it listed, the listing of the others, and the sync tick the
// shared state (limits, keys, config) rides on. Engine thread only.
//
// Membership: each node writes `node:NAME` (its facts as JSON, with an instance id unique to the
// process) with an expiry of three quarters of the TTL and renews it every quarter, when it also
// lists the others. A node that dies is thus gone from every listing within the TTL, and a live
// one may be late by half the TTL before it drops out. A name
// held by another live instance is not taken over: at start the node waits one TTL for a dead
// holder's entry to expire, then gives up with nameTaken().
class FleetNode final : public QObject {
    Q_OBJECT
public:
    FleetNode(config::FleetConfig config, QString version, std::function<NodeFacts()> facts,
              QObject *parent = nullptr);
    ~FleetNode() override;

    void start();

    redis::Link &link() { return *m_link; }
    const config::FleetConfig &config() const { return m_config; }
    // Every key of this fleet starts with it: `switchyard:NAME:`.
    QByteArray keyPrefix() const { return m_keyPrefix; }
    // The nodes last seen live, this one included; at least 1.
    int liveNodes() const;
    FleetStatus status() const;
    // Runs `task` every sync interval while the link is up (limits, keys, config).
    void onSync(std::function<void()> task);

Q_SIGNALS:
    // Another live node holds this node's name: this one must not serve under it.
    void nameTaken(const QString &message);
    // The link is up and this node holds its name: the owners of shared state republish what
    // an emptied Redis may have lost.
    void joined();
    void membersChanged();

private:
    void heartbeat();
    void claimed(const redis::Result &result);
    void listMembers();
    QByteArray announcement() const;
    QByteArray nodeKey(const QString &node) const;

    config::FleetConfig m_config;
    QString m_version;
    std::function<NodeFacts()> m_facts;
    QByteArray m_keyPrefix;
    QByteArray m_instance; // this process's id in its announcement
    qint64 m_startedMs = 0;
    std::unique_ptr<redis::Link> m_link;
    QTimer m_heartbeatTimer;
    QTimer m_syncTimer;
    QList<std::function<void()>> m_syncTasks;
    QList<FleetMember> m_members;
    quint64 m_syncRounds = 0;
    bool m_holdsName = false;
    qint64 m_nameRefusedSinceMs = 0; // when another instance was first found holding the name
    bool m_gaveUp = false;
};

} // namespace switchyard::fleet
