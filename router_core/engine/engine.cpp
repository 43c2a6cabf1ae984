#include "engine.h"

#include "admin/provider_admin.h"
#include "admin/routing_admin.h"
#include "health/health_registry.h"
#include "http/chat_request.h"
#include "http/gateway_server.h"
#include "resilience/health_prober.h"
#include "routing/rule_validation.h"
#include "telemetry/trace.h"
#include "upstream/curl_transport.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcEngine, "switchyard.engine")

namespace switchyard {

namespace {
// How soon the console sees a breaker become half-open once its open period is over.
constexpr std::chrono::milliseconds kHealthTimerInterval{250};
// The canary key of last resort for a dry run without x-request-id or user: fixed, so the live
// and the edited rules draw the same side and a comparison shows only what the edit changed.
constexpr QByteArrayView kDryRunRequestId{"console-dry-run"};
} // namespace

Engine::Engine(config::Config config, QObject *parent)
    : QObject(parent), m_config(std::make_shared<const config::Config>(std::move(config))),
      m_health(std::make_unique<health::HealthRegistry>(
          m_config->providers, m_config->resilience.breaker, m_config->resilience.probes)),
      m_traces(std::make_unique<telemetry::TraceRing>(m_config->server.traceCapacity)),
      m_transport(new upstream::CurlTransport(this)),
      m_server(new http::GatewayServer(m_config, *m_transport, *m_health, *m_traces, this))
{
    qRegisterMetaType<switchyard::EngineSnapshot>();
    qRegisterMetaType<switchyard::BreakerEvent>();
    qRegisterMetaType<switchyard::RoutesState>();
    qRegisterMetaType<switchyard::RouteExplanation>();
    m_health->setEventSink([this](const BreakerEvent &event) { emit breakerEvent(event); });
    connect(&m_healthTimer, &QTimer::timeout, this, [this] { m_health->updateTimedStates(); });
    if (m_config->resilience.probes.enabled) {
        m_prober = new resilience::HealthProber(m_config->resilience.probes, *m_health,
                                                *m_transport, this);
    }
    admin::registerProviderAdmin(m_server->admin(), *this);
    admin::registerRoutingAdmin(m_server->admin(), m_server->router());
    connect(&m_server->router(), &routing::Router::canaryWeightsChanged, this,
            [this] { emit routesChanged(routesState()); });
    connect(&m_publishTimer, &QTimer::timeout, this, [this] { emit snapshotReady(snapshot()); });
    m_graceTimer.setSingleShot(true);
    connect(&m_graceTimer, &QTimer::timeout, this, [this] {
        const int abandoned = inFlight();
        qCWarning(lcEngine) << "shutdown grace period over;" << abandoned
                            << "request(s) still in flight are abandoned";
        emit drained(abandoned);
    });
    connect(m_server, &http::GatewayServer::inFlightChanged, this, &Engine::checkDrained);
}

Engine::~Engine()
{
    // Probes abort their calls on destruction, like the server's exchanges below.
    delete m_prober;
    m_prober = nullptr;
    // The server's open exchanges abort their upstream calls on destruction: delete it while
    // the transport is still alive.
    delete m_server;
    m_server = nullptr;
}

bool Engine::listen(QString *errorMessage)
{
    m_port =
        m_server->listenOn(m_config->server.listenHost, m_config->server.listenPort, errorMessage);
    if (m_port == 0)
        return false;
    qCInfo(lcEngine).noquote() << "listening on" << listenAddress() << "with"
                               << m_config->providers.size() << "provider(s)";
    // Started here rather than in the constructor: listen() runs on the engine's own thread,
    // and timers belong to the thread that starts them.
    m_healthTimer.start(kHealthTimerInterval);
    if (m_prober)
        m_prober->start();
    return true;
}

QString Engine::listenAddress() const
{
    return config::formatListenAddress(m_config->server.listenHost, m_port);
}

routing::Router &Engine::router()
{
    return m_server->router();
}

int Engine::inFlight() const
{
    return m_server ? m_server->inFlight() : 0;
}

EngineSnapshot Engine::snapshot() const
{
    EngineSnapshot snapshot;
    snapshot.listenAddress = listenAddress();
    snapshot.requestsPerSecond = m_server->requestsPerSecond();
    snapshot.totalRequests = m_server->totalRequests();
    snapshot.inFlight = m_server->inFlight();
    snapshot.providers = m_health->snapshot();
    for (ProviderHealth &provider : snapshot.providers) {
        if (provider.simulated)
            provider.simulatorMode = m_simulatorKnobs.value(provider.id).mode;
    }
    snapshot.recentBreakerEvents = m_health->recentEvents();
    return snapshot;
}

bool Engine::applyProviderAction(const QString &providerId, ProviderAction action)
{
    const int index = m_health->indexOf(providerId);
    if (index < 0)
        return false;
    m_health->applyAction(index, action);
    return true;
}

bool Engine::isSimulated(const QString &providerId) const
{
    const config::ProviderConfig *provider = m_config->provider(providerId);
    return provider && provider->kind == config::ProviderKind::Simulated;
}

bool Engine::setSimulatorKnobs(const QString &providerId, const SimulatorKnobs &knobs)
{
    if (!isSimulated(providerId) || !m_simulatorControl)
        return false;
    m_simulatorKnobs.insert(providerId, knobs);
    m_simulatorControl(providerId, knobs);
    return true;
}

RoutesState Engine::routesState()
{
    return {router().config()->routing.routes, router().canarySplits()};
}

RouteExplanation Engine::explainRoute(const std::optional<QList<config::RouteRule>> &rules,
                                      const QList<QPair<QByteArray, QByteArray>> &headers,
                                      const QByteArray &body)
{
    RouteExplanation explanation;
    auto parsed = http::parseChatRequest(body);
    if (const auto *error = std::get_if<http::ApiError>(&parsed)) {
        explanation.error = error->message;
        return explanation;
    }
    auto built = routing::buildRequestContext(headers, std::get<http::ChatRequest>(parsed));
    if (const auto *error = std::get_if<http::ApiError>(&built)) {
        explanation.error = error->message;
        return explanation;
    }
    routing::RequestContext &context = std::get<routing::RequestContext>(built);
    if (context.requestId.isEmpty())
        context.requestId = kDryRunRequestId.toByteArray();
    explanation.requestId = QString::fromLatin1(context.requestId);
    if (!rules) {
        explanation.decision = router().route(context);
        return explanation;
    }
    const std::shared_ptr<const config::Config> live = router().config();
    QStringList problems;
    for (const routing::RuleProblem &problem : routing::validateRoutes(*rules, *live))
        problems.append(problem.message);
    if (!problems.isEmpty()) {
        explanation.error = problems.join(u'\n');
        return explanation;
    }
    auto trialConfig = std::make_shared<config::Config>(*live);
    trialConfig->routing.routes = *rules;
    // A router of its own over the live health, so nothing live changes; live canary weights
    // carry over to rules that keep their branches, as they would on Apply.
    routing::Router trial(std::move(trialConfig), *m_health);
    for (const routing::CanarySplitState &split : router().canarySplits()) {
        if (!split.overridden)
            continue;
        QList<int> weights;
        for (const routing::CanaryBranchState &branch : split.branches)
            weights.append(branch.weight);
        // A rule whose split the edit changed keeps its new file weights: the error is expected.
        trial.setCanaryWeights(split.rule, weights);
    }
    explanation.decision = trial.route(context);
    return explanation;
}

QStringList Engine::applyRoutes(const QList<config::RouteRule> &rules)
{
    const std::shared_ptr<const config::Config> live = router().config();
    QStringList problems;
    for (const routing::RuleProblem &problem : routing::validateRoutes(rules, *live))
        problems.append(problem.message);
    if (!problems.isEmpty())
        return problems;
    auto next = std::make_shared<config::Config>(*live);
    next->routing.routes = rules;
    m_config = std::move(next);
    router().setConfig(m_config);
    emit routesChanged(routesState());
    return {};
}

void Engine::startPublishing(std::chrono::milliseconds interval)
{
    m_publishTimer.start(interval);
    emit snapshotReady(snapshot());
}

void Engine::beginShutdown(std::chrono::milliseconds grace)
{
    if (m_shuttingDown)
        return;
    m_shuttingDown = true;
    m_server->stopAccepting();
    qCInfo(lcEngine) << "stopped accepting;" << inFlight() << "request(s) in flight";
    m_graceTimer.start(grace);
    checkDrained();
}

void Engine::checkDrained()
{
    if (!m_shuttingDown || inFlight() > 0 || !m_graceTimer.isActive())
        return;
    m_graceTimer.stop();
    emit drained(0);
}

} // namespace switchyard
