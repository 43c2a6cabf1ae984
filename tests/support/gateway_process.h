#pragma once

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace switchyard::testing {

// One gateway as its own process: the shipped binary, headless, with its own config and state
// directory, its output collected. For the tests that need several nodes (a fleet, a load
// balancer in front): what one process does to another is only seen across real processes.
class GatewayProcess {
public:
    struct Options {
        QHash<QString, QString> environment; // added to the test's own
        QStringList extraArguments;          // after --headless --config --state-dir --log-level
    };

    GatewayProcess(const QString &binary, const QString &name, const QString &configPath,
                   const QString &stateDirectory, const Options &options);
    ~GatewayProcess();
    GatewayProcess(const GatewayProcess &) = delete;
    GatewayProcess &operator=(const GatewayProcess &) = delete;

    // The port it listens on, read from its start-up line; 0 when it did not say within 30 s
    // (or exited first).
    quint16 waitForPort();
    bool waitForExit(int timeoutMs);
    bool running() const { return m_process.state() != QProcess::NotRunning; }
    // SIGTERM, without waiting: the node drains while the test goes on.
    void terminate() { m_process.terminate(); }
    // SIGTERM and wait: the node finishes what it holds (its ledger included) and exits.
    void stop();
    // SIGKILL and wait: whatever it held is lost, as in a crash.
    void kill();

    quint16 port() const { return m_port; }
    const QString &name() const { return m_name; }
    QProcess::ExitStatus exitStatus() const { return m_process.exitStatus(); }
    int exitCode() const { return m_process.exitCode(); }
    QByteArray errors() const { return m_errors; }

private:
    QString m_name;
    QProcess m_process;
    QByteArray m_output;
    QByteArray m_errors;
    quint16 m_port = 0;
};

// GET `path` from the gateway on `port`: the JSON object answered with 200, or an empty object.
QJsonObject getJson(quint16 port, const QByteArray &path);
// The names of the fleet's live nodes, as the node on `port` lists them.
QStringList liveNodes(quint16 port);

} // namespace switchyard::testing
