#include "engine/engine.h"

#include "admin/provider_admin.h"
#include "admin/routing_admin.h"
#include "config/config_store.h"
#include "control/operator_commands.h"
#include "health/health_registry.h"
#include "http/gateway_server.h"
#include "resilience/admission.h"
#include "resilience/health_prober.h"
#include "resilience/retry_policy.h"
#include "routing/router.h"
#include "routing/tier_watch.h"
#include "telemetry/request_log.h"
#include "telemetry/request_recorder.h"
#include "timing/deadline_scheduler.h"
#include "upstream/curl_transport.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcEngine, "switchyard.engine")

namespace switchyard {

namespace {
// How soon the console sees a breaker become half-open once its open period is over.
constexpr std::chrono::milliseconds kHealthTimerInterval{250};
} // namespace

Engine::Engine(config::Config config, QObject *parent)
    : QObject(parent), m_store(new config::ConfigStore(std::move(config), this)),
      m_health(std::make_unique<health::HealthRegistry>(*m_store)),
      m_traces(std::make_unique<telemetry::TraceRing>(m_store->config().trace.capacity,
                                                      m_store->config().trace.maxBytes)),
      m_recorder(std::make_unique<telemetry::RequestRecorder>(*m_traces)),
      m_admission(std::make_unique<resilience::AdmissionController>(*m_store)),
      m_retryBudget(std::make_unique<resilience::RetryBudget>(*m_store)),
      m_router(new routing::Router(*m_store, *m_health, this)),
      m_commands(new control::OperatorCommands(*m_store, *m_health, *m_router, this)),
      m_transport(new upstream::CurlTransport(this)),
      m_scheduler(new timing::DeadlineScheduler(timing::SteadyClock::instance(),
                                                timing::DeadlineScheduler::Drive::Timer, this)),
      m_server(new http::GatewayServer({*m_store, *m_router, *m_health, *m_recorder, *m_transport,
                                        *m_admission, *m_retryBudget, *m_scheduler},
                                       this))
{
    qRegisterMetaType<switchyard::EngineSnapshot>();
    qRegisterMetaType<switchyard::BreakerEvent>();
    qRegisterMetaType<switchyard::RoutesState>();
    qRegisterMetaType<switchyard::RouteExplanation>();
    m_health->setEventSink([this](const BreakerEvent &event) { emit breakerEvent(event); });
    // The logs: a line per finished request, and tiers going down and up with their endpoints.
    m_recorder->addSink(&telemetry::requestLog());
    connect(this, &Engine::breakerEvent, this,
            [tiers = std::make_shared<routing::TierWatch>(*m_store, *m_health)] {
                tiers->endpointStateChanged();
            });
    connect(&m_healthTimer, &QTimer::timeout, this, [this] { m_health->updateTimedStates(); });
    if (m_store->config().resilience.probes.enabled)
        m_prober =
            new resilience::HealthProber(*m_store, *m_health, *m_transport, *m_scheduler, this);
    admin::registerProviderAdmin(m_server->admin(), *m_commands);
    admin::registerRoutingAdmin(m_server->admin(), *m_commands);
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
    // the transport, the registry and the retry budget are still alive.
    delete m_server;
    m_server = nullptr;
    delete m_commands;
    m_commands = nullptr;
    delete m_router;
    m_router = nullptr;
}

bool Engine::listen(QString *errorMessage)
{
    const config::ServerConfig &server = config().server;
    m_port = m_server->listenOn(server.listenHost, server.listenPort, errorMessage);
    if (m_port == 0)
        return false;
    qCInfo(lcEngine).noquote() << "listening on" << listenAddress() << "with"
                               << config().providers.size() << "provider(s)";
    // Started here rather than in the constructor: listen() runs on the engine's own thread,
    // and timers belong to the thread that starts them.
    m_healthTimer.start(kHealthTimerInterval);
    m_router->start();
    if (m_prober)
        m_prober->start();
    return true;
}

const config::Config &Engine::config() const
{
    return m_store->config();
}

QString Engine::listenAddress() const
{
    return config::formatListenAddress(config().server.listenHost, m_port);
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
    snapshot.connections = m_server->connectionCounts();
    snapshot.providers = m_health->snapshot();
    snapshot.agents = m_commands->agentStates();
    snapshot.recentBreakerEvents = m_health->recentEvents();
    return snapshot;
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
