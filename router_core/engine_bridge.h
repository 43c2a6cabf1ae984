#pragma once

#include "config/config.h"
#include "engine_snapshot.h"

#include <QObject>
#include <QPointer>
#include <chrono>
#include <memory>

class QThread;

namespace switchyard {

class Engine;
namespace sim {
class SimulatorHost;
class DemoTraffic;
} // namespace sim

// The one door between whoever drives Switchyard (the console, headless main, tests) and the
// engine. It owns the engine and simulator threads; it hands out value snapshots and takes
// commands as queued calls, so its owner's thread never blocks on engine work after start().
class EngineBridge : public QObject {
    Q_OBJECT
public:
    explicit EngineBridge(config::Config config, QObject *parent = nullptr);
    ~EngineBridge() override;

    // Starts the simulator and engine threads and waits until the gateway listens.
    // Returns false and fills errorMessage when it cannot (port in use, bad address...).
    bool start(QString *errorMessage);

    const config::Config &config() const { return m_config; }
    QString listenAddress() const; // "127.0.0.1:8080", valid after start()
    quint16 port() const { return m_port; }
    EngineSnapshot lastSnapshot() const { return m_lastSnapshot; }

public Q_SLOTS:
    // Sends real requests to the gateway's own port, mixed streamed and not, mixed models.
    void setDemoTraffic(bool enabled, double requestsPerSecond);
    // Stops accepting, lets in-flight requests finish for at most `grace`, then emits stopped().
    void shutdown(std::chrono::milliseconds grace);

Q_SIGNALS:
    void snapshotUpdated(const switchyard::EngineSnapshot &snapshot); // at most 10 per second
    void stopped();

private:
    void stopThreads();

    config::Config m_config;
    quint16 m_port = 0;
    EngineSnapshot m_lastSnapshot;
    QThread *m_engineThread = nullptr;
    QThread *m_simulatorThread = nullptr;
    Engine *m_engine = nullptr;                // lives on m_engineThread
    sim::SimulatorHost *m_simulator = nullptr; // lives on m_simulatorThread
    sim::DemoTraffic *m_demoTraffic = nullptr; // lives on m_simulatorThread
    bool m_shuttingDown = false;
    bool m_demoRunning = false;
    double m_demoRate = 0.0;
};

} // namespace switchyard
