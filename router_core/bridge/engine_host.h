#pragma once

#include "bridge/engine_bridge.h"
#include "config/config.h"

#include <QObject>
#include <chrono>
#include <functional>
#include <optional>

class QThread;

namespace switchyard {

class Engine;
namespace sim {
class SimulatorHost;
class DemoTraffic;
} // namespace sim

// The real engine bridge: it owns the engine and simulator threads, hands out value snapshots
// and takes commands as queued calls, so its owner's thread never blocks on engine work after
// start(). The console, headless main and tests drive Switchyard through it.
class EngineHost final : public EngineBridge {
    Q_OBJECT
public:
    // `config` is only read by start(): after it, the engine's config store is its one owner.
    explicit EngineHost(config::Config config, QObject *parent = nullptr);
    ~EngineHost() override;

    // The config file as a start reads it: its text, and the running text, which is the file
    // with the overlay of the state directory on top when there is one (docs/operations.md,
    // "Config lifecycle").
    struct StartConfigTexts {
        QByteArray fileText;
        QByteArray runningText;
        QString overlayPath;  // where the overlay is (or would be); empty without a state directory
        QString error;        // the file cannot be read
        QString overlayError; // the overlay could not be applied: the file alone runs
    };
    static StartConfigTexts readStartConfig(const QString &path, const QString &stateDirectory);
    // Before start(): follow `path` after start (versions, reload, write-back, the admin API's
    // config endpoints). `overrides` is applied to every config loaded later, as it was to the
    // first: what the command line says wins over the file.
    void followConfigFile(const QString &path, const StartConfigTexts &texts,
                          std::function<void(config::Config &)> overrides);
    // Reads the followed file again now (SIGHUP); nothing when no file is followed.
    void reloadConfig(const QString &trigger);

    // Starts the simulator and engine threads and waits until the gateway listens.
    // Returns false and fills errorMessage when it cannot (port in use, bad address...).
    bool start(QString *errorMessage);
    quint16 port() const { return m_port; }

    QString listenAddress() const override { return m_listenAddress; }
    EngineSnapshot lastSnapshot() const override { return m_lastSnapshot; }
    RoutesState routesState() const override { return m_routesState; }

    void explainRoute(quint64 ticket, const std::optional<QList<config::RouteRule>> &rules,
                      const HeaderList &headers, const QByteArray &body,
                      protocol::Operation operation) override;
    void previewImpact(quint64 ticket, const QList<config::RouteRule> &rules) override;
    void applyRoutes(const QList<config::RouteRule> &rules) override;
    void setCanaryWeights(const QString &rule, const QList<int> &weights) override;
    void resetCanaryWeights(const QString &rule) override;
    void removeAgent(const QString &agentId) override;
    void loadTrace(quint64 ticket, const QByteArray &requestId) override;
    void watchTrace(const QByteArray &requestId) override;
    void loadUsage(quint64 ticket, const switchyard::usage::UsageQuery &query) override;
    void loadConfigVersions(quint64 ticket) override;
    void loadConfigVersion(quint64 ticket, quint64 number) override;
    void rollbackConfig(quint64 ticket, quint64 number) override;
    void issueClientKey(quint64 ticket, const QString &tenant, const QString &id,
                        const config::ClientKeyLimits &limits) override;
    void editClientKeyLimits(quint64 ticket, const QString &id,
                             const config::ClientKeyLimitsEdit &edit) override;
    void revokeClientKey(quint64 ticket, const QString &id) override;
    void cancelBackgroundTask(quint64 ticket, const QString &id) override;
    void settleDeadLetter(quint64 ticket, const QString &id,
                          switchyard::DeadLetterAction action) override;

public Q_SLOTS:
    void setDemoTraffic(bool enabled, double requestsPerSecond) override;
    void shutdown(std::chrono::milliseconds grace) override;
    void applyProviderAction(const QString &providerId, switchyard::ProviderAction action) override;
    void setSimulatorKnobs(const QString &providerId,
                           const switchyard::SimulatorKnobs &knobs) override;

protected:
    // Snapshots and the trace feed are built for whoever connects to them, from the first
    // connection on: a headless gateway never pays for a console's 10 Hz.
    void connectNotify(const QMetaMethod &signal) override;

private:
    void stopThreads();
    void startPublishing();

    std::optional<config::Config> m_startConfig; // until start() hands it to the engine
    struct FollowedFile {
        QString path;
        StartConfigTexts texts;
        std::function<void(config::Config &)> overrides;
    };
    std::optional<FollowedFile> m_followedFile;
    quint16 m_port = 0;
    QString m_listenAddress;
    EngineSnapshot m_lastSnapshot;
    RoutesState m_routesState;
    QThread *m_engineThread = nullptr;
    QThread *m_simulatorThread = nullptr;
    Engine *m_engine = nullptr;                // lives on m_engineThread
    sim::SimulatorHost *m_simulator = nullptr; // lives on m_simulatorThread
    sim::DemoTraffic *m_demoTraffic = nullptr; // lives on m_simulatorThread
    bool m_shuttingDown = false;
    bool m_publishing = false; // the engine publishes snapshots and the trace feed
    bool m_demoRunning = false;
    double m_demoRate = 0.0;

Q_SIGNALS:
    // The engine cannot serve as configured (another live node of its fleet holds its name):
    // the app stops, saying why.
    void fatalError(const QString &message);
};

} // namespace switchyard
