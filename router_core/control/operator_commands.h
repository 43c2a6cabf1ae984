#pragma once

#include "config/config_store.h"
#include "control/config_versions.h"
#include "control/routes_state.h"
#include "health/endpoint_state.h"
#include "protocol/openai_error.h"
#include "routing/context_sample.h"
#include "routing/impact_preview.h"
#include "routing/router.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QStringList>
#include <functional>
#include <optional>
#include <variant>

namespace switchyard::health {
class HealthRegistry;
}

namespace switchyard::control {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// Told of every change a command makes to part of the running config (the route rules), so the
// change becomes a config version and reaches the config file: the lifecycle layer above
// implements it. Engine thread only.
class ConfigRecorder {
public:
    virtual ~ConfigRecorder() = default;
    // Before the command reads the snapshot in force: a change of the file not yet read is
    // read first, so the command lands on top of it rather than under it.
    virtual void beforeCommandChange() = 0;
    // After it: `topLevelKeys` of the config changed from `before` to the snapshot in force.
    virtual void commandChanged(const QStringList &topLevelKeys, const config::Config &before,
                                const ConfigChangeOrigin &origin) = 0;
};

// Every command an operator can give the running engine, in one place: the console (through the
// engine bridge) and the admin API (/admin/v1/) both call these and nothing else, so whatever
// one can do the other can, and both get the same answer in the same words. Engine thread only.
//
// It owns no state of its own beyond how simulator knobs reach the simulator thread: endpoints,
// agents and knobs are the health registry's, rules and canary weights the router's, the config
// snapshot the store's.
class OperatorCommands final : public QObject {
    Q_OBJECT
public:
    // Hands knobs over to the simulator's own thread; installed by whoever runs the simulator.
    using SimulatorControl =
        std::function<void(const QString &providerId, const SimulatorKnobs &knobs)>;

    OperatorCommands(config::ConfigStore &store, health::HealthRegistry &health,
                     routing::Router &router, const routing::ContextSample &sample,
                     QObject *parent = nullptr);

    // ---- endpoints ----
    QList<ProviderHealth> providers() const;
    std::optional<ProviderHealth> provider(const QString &providerId) const;
    bool hasProvider(const QString &providerId) const;
    // False when no live endpoint has this id.
    bool applyProviderAction(const QString &providerId, ProviderAction action);

    // ---- simulated providers (failover drills) ----
    void setSimulatorControl(SimulatorControl control) { m_simulatorControl = std::move(control); }
    bool simulatorRunning() const { return bool(m_simulatorControl); }
    bool isSimulated(const QString &providerId) const;
    // The knobs last set (defaults when never set, or when the id is not a live endpoint).
    SimulatorKnobs simulatorKnobs(const QString &providerId) const;
    // False when the provider is not simulated or no simulator runs.
    bool setSimulatorKnobs(const QString &providerId, const SimulatorKnobs &knobs);

    // ---- the config ----
    // Makes `next` (validated whole by the caller) the snapshot in force: the registry's
    // endpoints follow its providers first, then the store swaps and the router recompiles.
    // The one way a snapshot is applied; requests in flight keep theirs.
    void applyConfig(std::shared_ptr<const config::Config> next);
    // Versions and writes back what the commands change; nullptr (the default) for none.
    void setConfigRecorder(ConfigRecorder *recorder) { m_configRecorder = recorder; }

    // ---- rules and canary weights ----
    RoutesState routesState() const;
    // Validates `rules` against the snapshot in force; when they pass, a new snapshot holding
    // them replaces it (requests in flight keep theirs). Returns the problems, empty on success.
    // `origin` says who asked, for the config version the change becomes.
    QStringList applyRoutes(const QList<config::RouteRule> &rules,
                            const ConfigChangeOrigin &origin = {});
    QList<routing::CanarySplitState> canarySplits() const { return m_router.canarySplits(); }
    QString setCanaryWeights(const QString &rule, const QList<int> &weights);
    bool resetCanaryWeights(const QString &rule);

    // ---- explain and dry run ----
    // What live traffic would get for this request (its headers and chat body), without calling
    // anyone: the router's own route() under the snapshot in force, or, given `rules`, under a
    // trial snapshot that differs from it in those rules alone. Either way the live agents,
    // canary weights and endpoint health decide. A body or header the gateway would refuse gives
    // its 400; rules that do not validate give a 400 listing every problem.
    // `body` is in the shape of `operation`'s endpoint: a Responses request is translated to
    // chat as the gateway translates it.
    std::variant<routing::Explanation, protocol::ApiError>
    explain(const HeaderList &headers, const QByteArray &body,
            const std::optional<QList<config::RouteRule>> &rules = std::nullopt,
            protocol::Operation operation = protocol::Operation::Chat) const;

    // Where the sampled live requests of the last hour would go under `rules`: each routed by
    // the router's own route() under the table in force and under a trial table that differs
    // from it in those rules alone (docs/routing.md, "Impact preview"). Rules that do not
    // validate give a 400 listing every problem. Each from -> to cell keeps its first
    // `examplesPerCell` requests with both decisions.
    std::variant<routing::ImpactPreview, protocol::ApiError>
    previewImpact(const QList<config::RouteRule> &rules,
                  int examplesPerCell = routing::ImpactPreview::kExamplesPerCell) const;

    // ---- registered agents ----
    // Told of each change an operator made through these commands, once it is in force here:
    // not of expiries, nor of changes the fleet applies through the router, so what it shares
    // never comes back to it as new (fleet/shared_agents.h).
    struct AgentListener {
        std::function<void(const health::AgentRecord &agent)> registered;
        std::function<void(const health::AgentRecord &agent)> beat; // busy as it is now
        std::function<void(const QString &id)> removed;
    };
    void setAgentListener(AgentListener listener) { m_agentListener = std::move(listener); }
    const health::AgentRegistry &agents() const { return m_router.agents(); }
    QList<AgentState> agentStates() const;
    std::optional<routing::AgentRefusal>
    registerAgent(const health::AgentRegistration &registration);
    std::optional<routing::AgentRefusal> agentHeartbeat(const QString &id,
                                                        std::optional<bool> busy);
    std::optional<routing::AgentRefusal> removeAgent(const QString &id);

Q_SIGNALS:
    // The rules or a canary weight changed. (Agents reach the console in engine snapshots.)
    void routesChanged(const switchyard::RoutesState &state);

private:
    QStringList problemsWith(const QList<config::RouteRule> &rules) const;
    // The table in force with `rules` in place of its own, or the 400 naming their problems.
    std::variant<std::shared_ptr<const routing::RoutingTable>, protocol::ApiError>
    trialTable(const QList<config::RouteRule> &rules) const;

    config::ConfigStore &m_store;
    health::HealthRegistry &m_health;
    routing::Router &m_router;
    const routing::ContextSample &m_sample;
    SimulatorControl m_simulatorControl;
    ConfigRecorder *m_configRecorder = nullptr;
    AgentListener m_agentListener;
};

} // namespace switchyard::control
