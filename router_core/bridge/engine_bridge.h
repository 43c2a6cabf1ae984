#pragma once

#include "config/config.h"
#include "engine_snapshot.h"
#include "routes_state.h"

#include <QObject>
#include <QPointer>
#include <chrono>
#include <memory>
#include <optional>

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
    // The rules in force and the canary splits, as routesChanged last delivered them.
    RoutesState routesState() const { return m_routesState; }

    using HeaderList = QList<QPair<QByteArray, QByteArray>>;
    // A dry run: the decision for a sample chat request under `rules`, or under the live rules
    // and weights when `rules` is nullopt. Nothing is applied; routeExplained(ticket, ...) answers.
    void explainRoute(quint64 ticket, const std::optional<QList<config::RouteRule>> &rules,
                      const HeaderList &headers, const QByteArray &body);
    // Validates and, when valid, swaps the live rules at once; routesApplied answers.
    void applyRoutes(const QList<config::RouteRule> &rules);
    // Live canary weights in the order of the rule's branches; routesChanged shows them.
    void setCanaryWeights(const QString &rule, const QList<int> &weights);
    void resetCanaryWeights(const QString &rule);

public Q_SLOTS:
    // Sends real requests to the gateway's own port, mixed streamed and not, mixed models.
    void setDemoTraffic(bool enabled, double requestsPerSecond);
    // Stops accepting, lets in-flight requests finish for at most `grace`, then emits stopped().
    void shutdown(std::chrono::milliseconds grace);
    // Operator actions on an endpoint; the next snapshot shows the result. Unknown ids are
    // ignored (the endpoint may have been retired since the console showed it).
    void applyProviderAction(const QString &providerId, switchyard::ProviderAction action);
    // Live knobs of a simulated provider, for drills.
    void setSimulatorKnobs(const QString &providerId, const switchyard::SimulatorKnobs &knobs);

Q_SIGNALS:
    void snapshotUpdated(const switchyard::EngineSnapshot &snapshot); // at most 10 per second
    void stopped();
    void routeExplained(quint64 ticket, const switchyard::RouteExplanation &explanation);
    void routesApplied(bool ok, const QStringList &problems);
    void routesChanged(const switchyard::RoutesState &state);

private:
    void stopThreads();

    config::Config m_config;
    quint16 m_port = 0;
    EngineSnapshot m_lastSnapshot;
    RoutesState m_routesState;
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
