#pragma once

#include "config/config.h"
#include "config/config_store.h"
#include "health/agent_registry.h"
#include "routing/request_context.h"
#include "routing/route_decision.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QTimer>
#include <memory>
#include <optional>
#include <variant>

namespace switchyard::health {
class HealthRegistry;
}

namespace switchyard::routing {

// One branch of a canary split as it runs now.
struct CanaryBranchState {
    QString target;           // the branch's target label: "hermes-next", "[a, b]", "pro"
    int configuredWeight = 0; // from the config file
    int weight = 0;           // in force: the live override when there is one
};

// A rule with a split, for the console's sliders and GET /admin/v1/routes/canary.
struct CanarySplitState {
    QString rule;
    config::SplitKey key = config::SplitKey::User;
    QList<CanaryBranchState> branches;
    bool overridden = false; // live weights differ from the file's until reset or reload
};

// What explain answers: the context the request built and the decision it gets.
struct Explanation {
    RequestContext context;
    RouteDecision decision;
    bool stripsRoutingObject = false; // the body had a `switchyard` object the provider won't see
};

// Why a registration or heartbeat was refused.
struct AgentRefusal {
    enum class Reason { Invalid, IdTaken, Unknown };
    Reason reason = Reason::Invalid;
    QString message;
};

// One config snapshot compiled for routing: its rules by priority with their regexes, its pools,
// tiers and model table, with every provider resolved to its endpoint slot in the health
// registry. Immutable. A request takes the table in force once and is routed and executed under
// it, so an Apply while it runs changes nothing for it; a dry run compiles a trial table of its
// own and routes through the same Router::route() live traffic uses.
class RoutingTable {
public:
    RoutingTable(std::shared_ptr<const config::Config> config,
                 const health::HealthRegistry &health);
    ~RoutingTable();
    RoutingTable(const RoutingTable &) = delete;
    RoutingTable &operator=(const RoutingTable &) = delete;

    const std::shared_ptr<const config::Config> &snapshot() const { return m_config; }
    const config::Config &config() const { return *m_config; }

    struct Compiled; // defined in router.cpp: only the router reads it
    const Compiled &compiled() const { return *m_compiled; }

private:
    std::shared_ptr<const config::Config> m_config;
    std::unique_ptr<const Compiled> m_compiled;
};

// The router of docs/routing.md: turns a RequestContext into a RouteDecision. Rules first
// (by priority, first match wins), then the target: a provider, a pool, a tier or the gearbox's
// cascade, optionally through a canary split; then the endpoints of the chosen pool ranked by
// score, with failover candidates after them. Lives on the engine thread; route() is const and
// the only path for live traffic, explain and the dry run of edited rules, so an explanation
// cannot disagree with what traffic does. Keeps no config of its own: it compiles the store's
// snapshot into a RoutingTable whenever the store replaces it. Its own state is what operators
// set live (canary weights); endpoint health and agents are the health registry's.
class Router final : public QObject {
    Q_OBJECT
public:
    Router(const config::ConfigStore &store, health::HealthRegistry &health,
           QObject *parent = nullptr);
    ~Router() override;

    // Starts retiring agents whose heartbeats stopped; call on the thread the router lives on.
    void start();

    // The table of the snapshot in force.
    const std::shared_ptr<const RoutingTable> &table() const { return m_table; }

    // The decision under the table in force, or under `table` (a request's own, or a dry run's).
    RouteDecision route(const RequestContext &context) const { return route(*m_table, context); }
    RouteDecision route(const RoutingTable &table, const RequestContext &context) const;
    // A request read as the gateway reads it (ingress::readClientRequest), routed as live
    // traffic is, without calling anything: POST /admin/v1/route/explain and the console's dry
    // run. A request without a sane x-request-id gets a fresh one (it decides the draw).
    Explanation explain(const RoutingTable &table, RequestContext context,
                        bool stripsRoutingObject) const;

    // Every model any configured provider serves, sorted, each with the first provider that
    // serves it and what its providers serve together (GET /v1/models).
    struct ModelListing {
        QString id;
        QString ownedBy;
        protocol::Operations endpoints = 0;
        bool operator==(const ModelListing &) const = default;
    };
    QList<ModelListing> models() const;
    // What the configured providers of `model` serve together, as listed in `table`; nullopt
    // for a model no configured provider lists (a rule may still route it).
    static std::optional<protocol::Operations> modelEndpoints(const RoutingTable &table,
                                                              const QString &model);

    // ---- canary weights, live: no reload needed ----
    QList<CanarySplitState> canarySplits() const;
    // Weights in the order of the rule's branches. Returns an error message, empty on success.
    QString setCanaryWeights(const QString &rule, const QList<int> &weights);
    // Back to the file's weights; false when the rule has no split.
    bool resetCanaryWeights(const QString &rule);

    // ---- registered agents (kept in the health registry with the other endpoints) ----
    // Registers or re-registers an agent as an endpoint. Nothing on success.
    std::optional<AgentRefusal> registerAgent(const health::AgentRegistration &registration);
    std::optional<AgentRefusal> agentHeartbeat(const QString &id, std::optional<bool> busy);
    std::optional<AgentRefusal> removeAgent(const QString &id);
    const health::AgentRegistry &agents() const;
    // Retires agents whose heartbeats stopped; runs on a timer, callable directly in tests.
    void expireAgents();

Q_SIGNALS:
    void canaryWeightsChanged(const QString &rule);
    void agentsChanged();

private:
    struct DecisionBuilder;
    // Live weights for one split, with the branch targets they were set for: they apply to any
    // table whose rule of that name splits between the same targets.
    struct CanaryOverride {
        QStringList targets;
        QList<int> weights;
    };

    void compile(const std::shared_ptr<const config::Config> &snapshot);

    const config::ConfigStore &m_store;
    health::HealthRegistry &m_health;
    std::shared_ptr<const RoutingTable> m_table;
    QHash<QString, CanaryOverride> m_canaryOverrides; // by rule name
    QTimer m_agentSweep{this};
};

} // namespace switchyard::routing
