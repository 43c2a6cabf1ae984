#include "engine.h"

#include "health/health_registry.h"
#include "http/gateway_server.h"
#include "telemetry/trace.h"
#include "upstream/curl_transport.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcEngine, "switchyard.engine")

namespace switchyard {

Engine::Engine(config::Config config, QObject *parent)
    : QObject(parent), m_config(std::make_shared<const config::Config>(std::move(config))),
      m_health(std::make_unique<health::HealthRegistry>(m_config->providers)),
      m_traces(std::make_unique<telemetry::TraceRing>(m_config->server.traceCapacity)),
      m_transport(new upstream::CurlTransport(this)),
      m_server(new http::GatewayServer(m_config, *m_transport, *m_health, *m_traces, this))
{
    qRegisterMetaType<switchyard::EngineSnapshot>();
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
    return true;
}

QString Engine::listenAddress() const
{
    return config::formatListenAddress(m_config->server.listenHost, m_port);
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
