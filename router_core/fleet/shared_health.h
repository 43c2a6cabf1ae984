#pragma once

#include "health/endpoint_state.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QString>
#include <QTimer>
#include <optional>

namespace switchyard::health {
class HealthRegistry;
}

namespace switchyard::fleet {

class FleetNode;
struct FleetStatus;

// Each node's endpoint states, published for the others to see (docs/fleet.md, "Health"): local
// and fast, global and slow. A node's breakers stay its own, decided at once from its own calls;
// what it publishes is shown by the others and never acted on, since a provider that fails from
// one node's network may serve another's, and a breaker opened on one node is that node's
// evidence alone.
//
// Every quarter of `membership_ttl`, as its heartbeat, a node writes `health:NODE` (JSON: the
// agents it holds and a summary of each endpoint) expiring after three quarters of it, like its
// membership entry, and reads the entries of the nodes it last listed: a dead node's states
// vanish with it. While the link is down the others' states are kept as last read. Engine thread
// only.
class SharedHealth final : public QObject {
    Q_OBJECT
public:
    SharedHealth(FleetNode &node, const health::HealthRegistry &health, QObject *parent = nullptr);

    // Starts the timer; on the engine's thread, as FleetNode::start().
    void start();
    // Adds each listed member's endpoint states and agents count to `status`: this node's read
    // from its registry now, the others' as last read.
    void fill(FleetStatus &status) const;

private:
    struct Published {
        int agents = -1;
        QList<EndpointSummary> endpoints;
        qint64 publishedMs = 0;
    };
    void publishAndRead();
    Published own() const;

    FleetNode &m_node;
    const health::HealthRegistry &m_health;
    QTimer m_timer;
    QHash<QString, Published> m_others; // by node name
};

// An endpoint's summary as the admin API and the fleet's Redis both show it, and back: one shape
// for both, so what a node publishes reads as GET /admin/v1/fleet lists it. Public for the tests.
QJsonObject endpointSummaryJson(const EndpointSummary &endpoint);
std::optional<EndpointSummary> endpointSummaryFromJson(const QJsonObject &json);
// One node's published entry: `{"agents": N, "endpoints": [...], "published_ms": MS}`.
QByteArray publishedHealthJson(int agents, const QList<EndpointSummary> &endpoints,
                               qint64 publishedMs);
// The summaries of a registry's live endpoints, agents marked.
QList<EndpointSummary> endpointSummaries(const health::HealthRegistry &health);

} // namespace switchyard::fleet
