#pragma once

#include "config/config.h"
#include "engine_snapshot.h"

#include <QObject>
#include <QTimer>
#include <chrono>
#include <memory>

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
    int inFlight() const;

public Q_SLOTS:
    // Emits snapshotReady every `interval` (100 ms keeps views at the 10 Hz the design allows).
    void startPublishing(std::chrono::milliseconds interval = std::chrono::milliseconds(100));
    // Stops accepting new requests; emits drained() once nothing is in flight or `grace` passed.
    void beginShutdown(std::chrono::milliseconds grace);

Q_SIGNALS:
    void snapshotReady(const switchyard::EngineSnapshot &snapshot);
    void drained(int abandonedRequests);

private:
    void checkDrained();

    std::shared_ptr<const config::Config> m_config;
    std::unique_ptr<health::HealthRegistry> m_health;
    std::unique_ptr<telemetry::TraceRing> m_traces;
    upstream::CurlTransport *m_transport = nullptr; // child; declared before the server using it
    http::GatewayServer *m_server = nullptr;        // child
    QTimer m_publishTimer{this};                    // parented so moveToThread() takes it along
    QTimer m_graceTimer{this};
    quint16 m_port = 0;
    bool m_shuttingDown = false;
};

} // namespace switchyard
