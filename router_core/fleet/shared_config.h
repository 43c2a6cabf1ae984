#pragma once

#include "control/config_versions.h"
#include "lifecycle/shared_history.h"

#include <QByteArray>
#include <QJsonObject>
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

namespace switchyard::lifecycle {
class ConfigLifecycle;
}

namespace switchyard::fleet {

class FleetNode;

// The config shared by every node of the fleet (docs/fleet.md, "Config"). Every version a node
// applies, from its console, the admin API, a rollback or an edit of its file, is published as
// the fleet's next version; every node applies each version it finds newer than its own within
// a sync interval, atomically as any apply, and keeps it (written back to its file, or its
// overlay) so it starts from it when Redis is away. A node's own keys (`listen`, `state`, `tls`,
// `fleet`, `log`, `config_file`) are never published: the fleet's text leaves them out and each
// node keeps its own when it applies one. Secrets stay `{env: NAME}`, as written.
//
// Versions are numbered by the fleet: a counter `config:version`, the newest whole in
// `config:head`, every one in the hash `config:versions`. Publishing is one script that checks
// the number the node last saw, so two nodes changing the config at once cannot both win: the
// later one applies the fleet's version instead and says so in its log. A version a node cannot
// load keeps the node on its own and is reported, in the log and in GET /admin/v1/fleet.
//
// The node's version list, diffs, rollbacks and `base_version` are the fleet's (SharedHistory):
// each node mirrors the newest kKeptVersions of the hash, which the publishing script trims to
// the same number.
class SharedConfig final : public QObject, public lifecycle::SharedHistory {
    Q_OBJECT
public:
    SharedConfig(FleetNode &node, lifecycle::ConfigLifecycle &lifecycle, QObject *parent = nullptr);
    ~SharedConfig() override;

    static constexpr int kKeptVersions = 200;

    // The fleet version this node runs; 0 until it knows one.
    quint64 fleetVersion() const { return m_appliedVersion; }
    // Why the newest fleet version is not running here; empty when it is.
    QString problem() const { return m_problem; }

    // lifecycle::SharedHistory
    bool known() const override { return m_appliedVersion != 0; }
    quint64 runningVersion() const override { return m_appliedVersion; }
    QList<ConfigVersionInfo> versions() const override;
    std::optional<ConfigVersion> version(quint64 number) const override;

    // The keys each node keeps for itself.
    static const QStringList &nodeKeys();
    // `text` without the node's own keys: what the fleet shares.
    static QByteArray sharedPart(const QByteArray &text);

private:
    void joined();
    void localChange();
    void publish(const QByteArray &sharedText, quint64 expected);
    void sync();
    void fetchHead();
    void applyHead(const QByteArray &head);
    void loadVersions();
    void remember(const QJsonObject &entry);
    // The fleet's `sharedText` with this node's own keys put back, as an overlay puts its keys.
    QByteArray withNodeKeys(const QByteArray &sharedText) const;

    FleetNode &m_node;
    lifecycle::ConfigLifecycle &m_lifecycle;
    QByteArray m_headKey;
    QByteArray m_versionsKey;
    QByteArray m_counterKey;
    quint64 m_appliedVersion = 0;
    quint64 m_refusedVersion = 0; // the newest version this node could not load
    QByteArray m_publishedText;   // the shared part of what this node runs, as last published
    QString m_problem;
    QMap<quint64, QJsonObject> m_versions; // the fleet's newest versions, as published
    bool m_applyingFromFleet = false;
    bool m_busy = false; // a publish or a fetch is on the wire
    bool m_changedWhileBusy = false;
};

} // namespace switchyard::fleet
