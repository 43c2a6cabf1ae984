#include "control/operator_commands.h"

#include "config/rule_validation.h"
#include "health/health_registry.h"
#include "ingress/client_request.h"

#include <QLoggingCategory>
#include <algorithm>

Q_LOGGING_CATEGORY(lcCommands, "switchyard.commands")

namespace switchyard::control {

using namespace Qt::StringLiterals;

OperatorCommands::OperatorCommands(config::ConfigStore &store, health::HealthRegistry &health,
                                   routing::Router &router, const routing::ContextSample &sample,
                                   QObject *parent)
    : QObject(parent), m_store(store), m_health(health), m_router(router), m_sample(sample)
{
    connect(&m_router, &routing::Router::canaryWeightsChanged, this,
            [this] { emit routesChanged(routesState()); });
}

// ---- endpoints ----------------------------------------------------------------------------------

QList<ProviderHealth> OperatorCommands::providers() const
{
    return m_health.snapshot();
}

std::optional<ProviderHealth> OperatorCommands::provider(const QString &providerId) const
{
    for (const ProviderHealth &provider : m_health.snapshot()) {
        if (provider.id == providerId)
            return provider;
    }
    return std::nullopt;
}

bool OperatorCommands::hasProvider(const QString &providerId) const
{
    return m_health.indexOf(providerId) >= 0;
}

bool OperatorCommands::applyProviderAction(const QString &providerId, ProviderAction action)
{
    const int slot = m_health.indexOf(providerId);
    if (slot < 0)
        return false;
    m_health.applyAction(slot, action);
    return true;
}

// ---- simulated providers ------------------------------------------------------------------------

bool OperatorCommands::isSimulated(const QString &providerId) const
{
    const int slot = m_health.indexOf(providerId);
    return slot >= 0 && m_health.providerConfig(slot).kind == config::ProviderKind::Simulated;
}

SimulatorKnobs OperatorCommands::simulatorKnobs(const QString &providerId) const
{
    const int slot = m_health.indexOf(providerId);
    return slot >= 0 ? m_health.simulatorKnobs(slot) : SimulatorKnobs{};
}

bool OperatorCommands::setSimulatorKnobs(const QString &providerId, const SimulatorKnobs &knobs)
{
    if (!isSimulated(providerId) || !m_simulatorControl)
        return false;
    m_health.setSimulatorKnobs(m_health.indexOf(providerId), knobs);
    m_simulatorControl(providerId, knobs);
    return true;
}

// ---- rules and canary weights -------------------------------------------------------------------

RoutesState OperatorCommands::routesState() const
{
    return {m_store.current(), m_router.canarySplits(), m_store.version()};
}

QStringList OperatorCommands::problemsWith(const QList<config::RouteRule> &rules) const
{
    QStringList problems;
    for (const config::RuleProblem &problem : config::validateRoutes(rules, m_store.config()))
        problems.append(problem.message);
    return problems;
}

QStringList OperatorCommands::applyRoutes(const QList<config::RouteRule> &rules,
                                          const ConfigChangeOrigin &origin)
{
    if (m_configRecorder)
        m_configRecorder->beforeCommandChange();
    const QStringList problems = problemsWith(rules);
    if (!problems.isEmpty())
        return problems;
    const std::shared_ptr<const config::Config> before = m_store.current();
    auto next = std::make_shared<config::Config>(*before);
    next->routing.routes = rules;
    applyConfig(std::move(next));
    if (m_configRecorder)
        m_configRecorder->commandChanged({u"routes"_s}, *before, origin);
    qCInfo(lcCommands).noquote() << "applied" << rules.size() << "route rule(s); config version"
                                 << m_store.version();
    emit routesChanged(routesState());
    return {};
}

void OperatorCommands::applyConfig(std::shared_ptr<const config::Config> next)
{
    m_health.syncConfiguredEndpoints(*next);
    m_store.replace(std::move(next));
}

QString OperatorCommands::setCanaryWeights(const QString &rule, const QList<int> &weights)
{
    return m_router.setCanaryWeights(rule, weights);
}

bool OperatorCommands::resetCanaryWeights(const QString &rule)
{
    return m_router.resetCanaryWeights(rule);
}

// ---- explain and dry run ------------------------------------------------------------------------

std::variant<routing::Explanation, protocol::ApiError>
OperatorCommands::explain(const HeaderList &headers, const QByteArray &body,
                          const std::optional<QList<config::RouteRule>> &rules,
                          protocol::Operation operation) const
{
    std::shared_ptr<const routing::RoutingTable> table = m_router.table();
    if (rules) {
        auto trial = trialTable(*rules);
        if (const auto *error = std::get_if<protocol::ApiError>(&trial))
            return *error;
        table = std::get<std::shared_ptr<const routing::RoutingTable>>(std::move(trial));
    }
    // Read as the gateway reads it: the same translation, parse, model check and context.
    ingress::ClientRequest client;
    if (std::optional<protocol::ApiError> error =
            ingress::readClientRequest(client, operation, headers, body, *table))
        return *error;
    return m_router.explain(*table, std::move(client.context), client.chat.hasRoutingObject);
}

std::variant<std::shared_ptr<const routing::RoutingTable>, protocol::ApiError>
OperatorCommands::trialTable(const QList<config::RouteRule> &rules) const
{
    const QStringList problems = problemsWith(rules);
    if (!problems.isEmpty()) {
        protocol::ApiError error = protocol::ApiError::invalidRequest(
            u"The edited rules do not validate: %1"_s.arg(problems.join(u"; "_s)), u"routes"_s);
        error.code = u"invalid_routes"_s;
        return error;
    }
    // The trial differs from the snapshot in force in its rules and nothing else.
    auto trial = std::make_shared<config::Config>(m_store.config());
    trial->routing.routes = rules;
    return std::make_shared<const routing::RoutingTable>(std::move(trial), m_health);
}

std::variant<routing::ImpactPreview, protocol::ApiError>
OperatorCommands::previewImpact(const QList<config::RouteRule> &rules, int examplesPerCell) const
{
    auto trial = trialTable(rules);
    if (const auto *error = std::get_if<protocol::ApiError>(&trial))
        return *error;
    const auto &edited = std::get<std::shared_ptr<const routing::RoutingTable>>(trial);
    routing::ImpactPreview preview = routing::previewImpact(
        m_router, *m_router.table(), *edited, m_sample.requests(),
        std::clamp(examplesPerCell, 0, routing::ImpactPreview::kMostExamplesPerCell));
    const routing::ContextSample::Bounds &bounds = m_sample.bounds();
    preview.sampleCapacity = bounds.capacity;
    preview.windowMinutes = int(bounds.window.count());
    preview.perMinute = bounds.perMinute;
    preview.stride = m_sample.stride();
    return preview;
}

// ---- registered agents --------------------------------------------------------------------------

QList<AgentState> OperatorCommands::agentStates() const
{
    QList<AgentState> states;
    const health::AgentRegistry &registry = m_router.agents();
    for (const health::AgentRecord &agent : registry.agents()) {
        const health::AgentRegistration &registration = agent.registration;
        states.append({registration.id, registration.baseUrl.toString(), registration.capabilities,
                       registration.models, m_health.providerConfig(agent.endpoint).capacity,
                       agent.busy, registry.isLive(agent), agent.registeredAtMsSinceEpoch,
                       agent.lastHeartbeatMsSinceEpoch});
    }
    return states;
}

std::optional<routing::AgentRefusal>
OperatorCommands::registerAgent(const health::AgentRegistration &registration)
{
    std::optional<routing::AgentRefusal> refusal = m_router.registerAgent(registration);
    if (!refusal && m_agentListener.registered)
        m_agentListener.registered(*m_router.agents().find(registration.id));
    return refusal;
}

std::optional<routing::AgentRefusal> OperatorCommands::agentHeartbeat(const QString &id,
                                                                      std::optional<bool> busy)
{
    std::optional<routing::AgentRefusal> refusal = m_router.agentHeartbeat(id, busy);
    if (!refusal && m_agentListener.beat)
        m_agentListener.beat(*m_router.agents().find(id));
    return refusal;
}

std::optional<routing::AgentRefusal> OperatorCommands::removeAgent(const QString &id)
{
    std::optional<routing::AgentRefusal> refusal = m_router.removeAgent(id);
    if (!refusal && m_agentListener.removed)
        m_agentListener.removed(id);
    return refusal;
}

} // namespace switchyard::control
