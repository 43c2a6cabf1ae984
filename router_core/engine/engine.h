#pragma once

#include "config/config.h"
#include "engine_snapshot.h"
#include "routes_state.h"

#include <QHash>
#include <QObject>
#include <QTimer>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace switchyard::health {
class HealthRegistry;
}
namespace switchyard::telemetry {
class TraceRing;
}
namespace switchyard::upstream {
class CurlTransport;
}
namespace switchyard::http {
class GatewayServer;
}
namespace switchyard::resilience {
class HealthProber;
}
namespace switchyard::routing {
class Router;
}

namespace switchyard {

// The router engine: the HTTP server, the upstream transport, health and traces. Everything it
// owns lives on the thread it lives on (the engine thread in the app, the test's thread in
// integration tests); it is driven by that thread's event loop and takes no locks.
class Engine final : public QObject {
    Q_OBJECT
public:
    explicit Engine(config::Config config, QObject *parent = nullptr);
    ~Engine() override;

    // Binds the configured listen address. Returns false and fills errorMessage on failure.
    bool listen(QString *errorMessage);
    quint16 port() const { return m_port; }
    QString listenAddress() const;

    EngineSnapshot snapshot() const;
    const config::Config &config() const { return *m_config; }
    health::HealthRegistry &health() { return *m_health; }
    telemetry::TraceRing &traces() { return *m_traces; }
    // Rules, canary weights and registered agents: the same router serves traffic and explain.
    routing::Router &router();
    int inFlight() const;

    // Operator actions (console, admin API). False when no live provider has this id.
    bool applyProviderAction(const QString &providerId, ProviderAction action);

    // Simulated providers run on the simulator thread; whoever starts them (the bridge, a test)
    // installs how knobs reach them. The control is called on the engine thread and must hand
    // the knobs over to the simulator's thread itself.
    using SimulatorControl =
        std::function<void(const QString &providerId, const SimulatorKnobs &knobs)>;
    void setSimulatorControl(SimulatorControl control) { m_simulatorControl = std::move(control); }
    bool isSimulated(const QString &providerId) const;
    bool simulatorRunning() const { return bool(m_simulatorControl); }
    // The knobs last set for a simulated provider (defaults when never set).
    SimulatorKnobs simulatorKnobs(const QString &providerId) const
    {
        return m_simulatorKnobs.value(providerId);
    }
    // False when the provider is not simulated or no simulator control is installed.
    bool setSimulatorKnobs(const QString &providerId, const SimulatorKnobs &knobs);

    // ---- the console's Routes page ----
    RoutesState routesState();
    // The decision for a sample chat request (its headers and body) under `rules`, or under the
    // live rules and live canary weights when `rules` is empty; nothing is applied or called.
    RouteExplanation explainRoute(const std::optional<QList<config::RouteRule>> &rules,
                                  const QList<QPair<QByteArray, QByteArray>> &headers,
                                  const QByteArray &body);
    // Validates `rules` against the live providers and tiers; when they pass, the router takes
    // a new config snapshot holding them (requests in flight keep the one they started with).
    // Returns the problems, empty on success.
    QStringList applyRoutes(const QList<config::RouteRule> &rules);

public Q_SLOTS:
    // Emits snapshotReady every `interval` (100 ms keeps views at the 10 Hz the design allows).
    void startPublishing(std::chrono::milliseconds interval = std::chrono::milliseconds(100));
    // Stops accepting new requests; emits drained() once nothing is in flight or `grace` passed.
    void beginShutdown(std::chrono::milliseconds grace);

Q_SIGNALS:
    void snapshotReady(const switchyard::EngineSnapshot &snapshot);
    void drained(int abandonedRequests);
    // Every breaker, operator or probe-health change, as the health registry publishes it.
    void breakerEvent(const switchyard::BreakerEvent &event);
    // The rules or a canary weight changed.
    void routesChanged(const switchyard::RoutesState &state);

private:
    void checkDrained();

    std::shared_ptr<const config::Config> m_config;
    std::unique_ptr<health::HealthRegistry> m_health;
    std::unique_ptr<telemetry::TraceRing> m_traces;
    upstream::CurlTransport *m_transport = nullptr; // child; declared before the server using it
    http::GatewayServer *m_server = nullptr;        // child
    resilience::HealthProber *m_prober = nullptr;   // child; created when probes are enabled
    QTimer m_publishTimer{this};                    // parented so moveToThread() takes it along
    QTimer m_graceTimer{this};
    // Moves breakers whose open period is over to half-open, without waiting for traffic.
    QTimer m_healthTimer{this};
    SimulatorControl m_simulatorControl;
    QHash<QString, SimulatorKnobs> m_simulatorKnobs;
    quint16 m_port = 0;
    bool m_shuttingDown = false;
};

} // namespace switchyard
