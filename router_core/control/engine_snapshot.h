#pragma once

#include "alerts/alert_types.h"
#include "control/background_queue_state.h"
#include "control/config_versions.h"
#include "control/routes_state.h"
#include "health/endpoint_state.h"
#include "telemetry/connection_counts.h"
#include "telemetry/span_export_counts.h"
#include "usage/usage_types.h"

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace switchyard {

// What the console's overview shows, made on the engine thread every publishing tick and handed
// over by value.
// A client API key as the console lists it: never its secret (docs/operations.md).
struct ClientKeyListing {
    QString id;
    QString tenant;
    bool definedInFile = true; // else created through the admin API
    int requestsPerMinute = 0; // 0: no limit
    qint64 tokensPerMinute = 0;
    QStringList models;     // empty: every model
    QDateTime createdAtUtc; // invalid for file keys

    friend bool operator==(const ClientKeyListing &, const ClientKeyListing &) = default;
};

// One node of the fleet as this node last listed it (docs/fleet.md, "Watching it"): its facts
// from its membership heartbeat, and its endpoints as it last published them ("Health"), for a
// Fleet page and a per-node column of the health matrix. Another node's endpoint states are its
// own view of the providers, shown and never acted on here: each node's breakers decide for it
// alone.
struct FleetMemberState {
    QString node;              // its fleet.node name
    QString address;           // where it listens, HOST:PORT
    QString version;           // Switchyard's version it runs
    quint64 configVersion = 0; // the fleet's config version it runs
    int inFlight = 0;          // requests in flight when it last announced itself
    double requestsPerSecond = 0.0;
    qint64 startedMs = 0;  // UTC milliseconds since the epoch, by its own clock
    qint64 lastSeenMs = 0; // its last heartbeat, UTC, by its own clock
    bool self = false;     // this node: its endpoints are read from its registry now
    // Registered agents it holds live (every node holds the fleet's); -1 while it has published
    // nothing yet (just joined, or a release before endpoint states were shared).
    int agents = -1;
    QList<EndpointSummary> endpoints; // in its registry's order; empty while not published
    qint64 endpointsPublishedMs = 0;  // when it published them, UTC by its own clock; 0: never

    friend bool operator==(const FleetMemberState &, const FleetMemberState &) = default;
};

// This node's link to its fleet (docs/fleet.md), for the console's status bar, and the fleet's
// members for a Fleet page.
struct FleetLinkState {
    bool enabled = false; // false: a single node
    QString fleet;        // the fleet's name
    QString node;         // this node's name
    QString redis;        // where the fleet's Redis is
    bool linkUp = false;
    qint64 linkDownSinceMs = 0; // UTC; 0 while up
    QString problem;            // why the link is down
    int liveNodes = 0;          // as this node last listed them, itself included
    // The live nodes by name, as last listed (kept while the link is down, like liveNodes).
    // Refreshed every quarter of fleet.membership_ttl; this node's own entry every snapshot.
    QList<FleetMemberState> members;
};

struct EngineSnapshot {
    QString listenAddress; // "127.0.0.1:8080"
    // The listener takes connections from other machines in plain HTTP: API keys and prompts
    // cross the network readable (docs/operations.md, "TLS"). The console warns while it is so.
    bool exposedWithoutTls = false;
    bool tlsEnabled = false;            // the listener speaks HTTPS
    QList<ClientKeyListing> clientKeys; // file keys first, then those created through the API
    double requestsPerSecond = 0.0;     // client requests accepted, over the last few seconds
    quint64 totalRequests = 0;
    int inFlight = 0;
    // Of inFlight: read, and waiting for a turn of the engine loop to start them (a burst's
    // backlog, bounded by admission.max_in_flight and admission.max_start_wait).
    int waitingToStart = 0;
    // How late the engine thread ran its latest due sampling timer (one every 100 ms): above a
    // few milliseconds the engine is busier than its traffic looks.
    double loopLagMs = 0.0;
    telemetry::ConnectionCounts connections; // open client connections, refusals, timeouts
    telemetry::SpanExportCounts spanExport;  // the OpenTelemetry export (trace.otlp)
    bool demoTrafficRunning = false;
    double demoRequestsPerSecond = 0.0;
    QList<ProviderHealth> providers;
    QList<AgentState> agents;                // registered agents, in registration order
    QList<BreakerEvent> recentBreakerEvents; // newest last, bounded
    // Whether finished requests reach the state database; a problem here is shown loudly.
    usage::UsageLedgerState usageLedger;
    QList<usage::BudgetStatus> budgets; // each configured budget in each of its windows
    ConfigStatus config; // the running config against its file; not tracked without a file
    // Alerts raised now, the newest raised and cleared events, the webhook's counts.
    alerts::AlertsState alerts;
    FleetLinkState fleet;
    BackgroundQueueState backgroundQueue; // Responses tasks run in the background
};

} // namespace switchyard

Q_DECLARE_METATYPE(switchyard::EngineSnapshot)
