#pragma once

#include "config/config.h"
#include "health/clock.h"
#include "routing/agent_registry.h"
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

// The router of DESIGN.md ("Router"): turns a RequestContext into a RouteDecision. Rules first
// (by priority, first match wins), then the target: a provider, a pool, a tier or the gearbox's
// cascade, optionally through a canary split; then the endpoints of the chosen pool ranked by
// score, with failover candidates after them. Lives on the engine thread; route() is const and
// the only path for both live traffic and explain, so an explanation cannot disagree with what
// traffic does. Reads endpoint health only through the health registry's public read methods.
class Router final : public QObject {
    Q_OBJECT
public:
    Router(std::shared_ptr<const config::Config> config, health::HealthRegistry &health,
           const health::Clock &clock = health::SteadyClock::instance(), QObject *parent = nullptr);
    ~Router() override;

    // Compiles the rules of a new snapshot (regexes, pools, hashes) once. Live canary weights
    // survive when the rule keeps the same branches; otherwise they are dropped.
    void setConfig(std::shared_ptr<const config::Config> config);
    const std::shared_ptr<const config::Config> &config() const;

    RouteDecision route(const RequestContext &context) const;
    // A chat request's headers and body as the gateway would receive them, parsed and routed as
    // live traffic is, without calling anything: POST /admin/v1/route/explain and the console's
    // dry-run. A request without a sane x-request-id gets a fresh one (it decides the draw). A
    // body or header the gateway would refuse gives the same 400.
    std::variant<Explanation, http::ApiError>
    explain(const QList<QPair<QByteArray, QByteArray>> &headers, const QByteArray &body) const;

    // Every model any configured provider serves, sorted, each with the first provider that
    // serves it (GET /v1/models).
    QList<QPair<QString, QString>> models() const;

    // ---- canary weights, live: no reload needed ----
    QList<CanarySplitState> canarySplits() const;
    // Weights in the order of the rule's branches. Returns an error message, empty on success.
    QString setCanaryWeights(const QString &rule, const QList<int> &weights);
    // Back to the file's weights; false when the rule has no split.
    bool resetCanaryWeights(const QString &rule);

    // ---- registered agents ----
    // Registers or re-registers an agent as an endpoint. Nothing on success.
    std::optional<AgentRefusal> registerAgent(const AgentRegistration &registration);
    std::optional<AgentRefusal> agentHeartbeat(const QString &id, std::optional<bool> busy);
    std::optional<AgentRefusal> removeAgent(const QString &id);
    const AgentRegistry &agents() const { return m_agents; }
    // Retires agents whose heartbeats stopped; runs on a timer, callable directly in tests.
    void expireAgents();

Q_SIGNALS:
    void canaryWeightsChanged(const QString &rule);
    void agentsChanged();

private:
    struct Compiled;
    struct DecisionBuilder;

    std::shared_ptr<const config::Config> m_config;
    std::unique_ptr<const Compiled> m_compiled;
    health::HealthRegistry &m_health;
    AgentRegistry m_agents;
    QHash<QString, QList<int>> m_canaryOverrides; // rule name -> weights in branch order
    QTimer m_agentSweep{this};
};

} // namespace switchyard::routing
