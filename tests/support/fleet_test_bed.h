#pragma once

#include "fake_upstream.h"
#include "gateway_process.h"
#include "redis_server.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <memory>
#include <vector>

namespace switchyard::testing {

// What every fleet test stands on: a temporary directory for the nodes' configs and state, a
// real Redis, a fake provider, and the nodes, each the shipped binary as a process of its own.
// One bed per test function; dropping it stops the nodes first, then the fake, then Redis, and
// removes the directory last.
class FleetTestBed {
public:
    // Syncs 50 ms apart and a membership TTL of 1.5 s: a fleet that agrees within a test's
    // patience, and a killed node that is forgotten within it.
    static constexpr const char *kQuickTiming = "  sync_interval: 50ms\n"
                                                "  membership_ttl: 1500ms\n";

    // What a test may vary in its nodes' configs, read each time a node starts. The rest is the
    // same for every fleet test: a loopback listener on port 0, the bed's Redis, the node's own
    // name and a Redis timeout of 300 ms.
    struct Config {
        // The `fleet:` section's timing lines, indented as they stand in that section.
        QByteArray fleetTiming = kQuickTiming;
        // The whole `providers:` section; the bed starts with its fake alone, as `fake` serving
        // `test-model` with a capacity of 256.
        QByteArray providers;
        // Further top-level sections, after the providers.
        QByteArray extra;
    };

    // What differs between two nodes of one test. Every member has an initializer, so that a
    // test names only what it changes: `{.stateName = u"twin"_s}`.
    struct NodeOptions {
        // Names the state directory ("state-NAME") when it is not the node's own: a second
        // node on another's state.
        QString stateName = {};
        QHash<QString, QString> environment = {}; // added to the test's own
        QStringList extraArguments = {};          // after the ones every node gets
    };

    explicit FleetTestBed(const QString &binary);
    FleetTestBed(const FleetTestBed &) = delete;
    FleetTestBed &operator=(const FleetTestBed &) = delete;

    // Starts Redis; false, after a warning saying why, when the temporary directory could not be
    // made or Redis does not start.
    bool start();

    // Writes the node's config ("NAME.yaml", from `config` as it is now) and starts the node on
    // it, without waiting for its port: several nodes start side by side.
    GatewayProcess &startNode(const QString &name, const NodeOptions &options);
    GatewayProcess &startNode(const QString &name) { return startNode(name, NodeOptions()); }

    // One entry of a `providers:` section: an OpenAI-compatible provider at `baseUrl`.
    static QByteArray openAiProvider(QByteArrayView id, const QByteArray &baseUrl,
                                     QByteArrayView models);

    Config config;

    // The nodes in the order they were started, a node started again on a name counted again.
    GatewayProcess &node(size_t index) { return *m_nodes.at(index); }
    const std::vector<std::unique_ptr<GatewayProcess>> &nodes() const { return m_nodes; }
    RedisServer &redis() { return m_redis; }
    FakeUpstream &fake() { return m_fake; }

    QString directory() const { return m_directory.path(); }
    QString configPath(const QString &node) const;
    QString stateDirectory(const QString &stateName) const;

private:
    QByteArray configText(const QString &node) const;
    QString writeConfig(const QString &node) const;

    QString m_binary;
    // Declared in the order they are needed: destroyed nodes first, directory last.
    QTemporaryDir m_directory;
    RedisServer m_redis;
    FakeUpstream m_fake;
    std::vector<std::unique_ptr<GatewayProcess>> m_nodes;
};

} // namespace switchyard::testing
