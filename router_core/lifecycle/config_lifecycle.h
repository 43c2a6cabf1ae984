#pragma once

#include "config/config.h"
#include "config/config_loader.h"
#include "control/config_versions.h"
#include "control/operator_commands.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>
#include <functional>
#include <memory>
#include <optional>

class QFileSystemWatcher;

namespace switchyard::config {
class ConfigStore;
}

namespace switchyard::lifecycle {

class ConfigHistory;
class SharedHistory;

// Where the running config came from, handed over by whoever loaded it (the app, a test).
struct ConfigSource {
    QString path;           // the config file; ":/demo.yaml" (read-only) for the embedded demo
    QByteArray fileText;    // the file's text when it was loaded
    QByteArray runningText; // the text the engine started with: the file, or the file + overlay
    QString overlayPath;    // the overlay file (state directory); empty without a state directory
    config::EnvironmentLookup environment; // where api_key_env and {env: NAME} are read from
    // Applied to each config a reload, an apply or a rollback brings, before it is applied:
    // what the command line overrides (--listen) and what only the process knows (the
    // simulated providers' ports). Errors refuse the change. May be empty.
    std::function<QList<config::ConfigError>(config::Config &)> finish;
};

// The config's life after start, on the engine thread: every change to the running config is a
// version (ConfigHistory); the file is watched (its folder, so a rename over it is seen) and a
// valid change applied through OperatorCommands::applyConfig, an invalid one refused with
// FILE:LINE:COL errors; whole texts are applied and versions rolled back to from the admin API
// and the console; changes made there are written back to the file atomically with a backup,
// keeping its comments, or to the overlay when the file cannot be written.
//
// Everything happens on one thread, one change at a time, so changes are ordered by their
// version numbers. A change given with a base version is refused when another landed since (the
// other is told which). A file change not yet read is read before any other change applies.
class ConfigLifecycle final : public QObject, public control::ConfigRecorder {
    Q_OBJECT
public:
    ConfigLifecycle(ConfigSource source, config::ConfigStore &store,
                    control::OperatorCommands &commands, QObject *parent = nullptr);
    ~ConfigLifecycle() override;

    // Opens the history (the state database), records the running text as a version unless the
    // latest already holds it, and starts watching the file.
    void start();

    // Whether `text` would load, with every error found; nothing changes.
    QList<config::ConfigError> validate(const QByteArray &text) const;
    // Makes `text` the running config (a new version) and writes it back.
    ConfigChangeResult apply(const QByteArray &text, const ConfigChangeOrigin &origin,
                             std::optional<quint64> baseVersion = std::nullopt);
    // Applies version `number`'s text again as a new version with source rollback.
    ConfigChangeResult rollback(quint64 number, const ConfigChangeOrigin &origin);
    // Reads the file now (SIGHUP, the watcher): a new version when its text changed and loads.
    ConfigChangeResult reload(const QString &trigger);

    // In a fleet: the versions, their numbers, `baseVersion` and rollbacks are the fleet's
    // (once `history` knows them); this node's own history stays in its database. Not owned.
    void setSharedHistory(const SharedHistory *history) { m_sharedHistory = history; }

    QList<ConfigVersionInfo> versions() const;
    std::optional<ConfigVersion> version(quint64 number) const;
    // The newest version of this node's own history, whatever the fleet's numbers.
    ConfigVersionInfo latestOwnVersion() const;
    ConfigStatus status() const;
    quint64 runningVersion() const;
    QByteArray runningText() const { return m_runningText; }

    // control::ConfigRecorder
    void beforeCommandChange() override;
    void commandChanged(const QStringList &topLevelKeys, const config::Config &before,
                        const ConfigChangeOrigin &origin) override;

Q_SIGNALS:
    // A version was added or a reload refused: the status changed.
    void changed();

private:
    // The fleet's history when there is one and it is known; else nullptr.
    const SharedHistory *sharedHistory() const;
    // In a fleet, an applied change's answer names the fleet version it is published as.
    void announceFleetVersion(ConfigChangeResult &result, quint64 before) const;
    // Loads `text` as the config (the file's name in errors), finished for this process.
    config::LoadResult load(const QByteArray &text, bool finish) const;
    ConfigChangeResult applyLoaded(config::Config next, const QByteArray &text,
                                   const ConfigChangeOrigin &origin);
    void record(const QByteArray &text, const ConfigChangeOrigin &origin);
    // Writes the running text to the file (with a backup), else to the overlay.
    void persist();
    // `permissionsOf`: a file whose permissions the written file takes (else its own, or the
    // umask's when new).
    bool writeFile(const QString &path, const QByteArray &contents, QString *error,
                   const QString &permissionsOf = {}) const;
    bool fileIsWritable() const;
    void watch();
    void fileEvent();
    std::optional<QByteArray> readFile(QString *error) const;
    void refuseReload(const QList<config::ConfigError> &errors);
    void dropOverlayKeysEditedIn(const QByteArray &fileText);

    ConfigSource m_source;
    config::ConfigStore &m_store;
    control::OperatorCommands &m_commands;
    std::unique_ptr<ConfigHistory> m_history;
    QString m_stateDirectory; // as at start: the database and the overlay stay there until restart
    QByteArray m_fileText;    // the file's text as last read or written by us
    // The file's text as last loaded or written by us: the overlay's base while the file holds
    // an edit that does not load.
    QByteArray m_loadedFileText;
    QByteArray m_runningText; // the running config's full text
    quint64 m_runningVersion = 0;
    const SharedHistory *m_sharedHistory = nullptr;
    QStringList m_overlayKeys; // keys the overlay in use replaces; empty when none is
    // The file's text the overlay was made against: a key whose value in the file differs from it
    // was edited in the file since, and that newer edit wins over the overlay's.
    QByteArray m_overlayBaseText;
    QString m_overlayNote; // which overlay keys a file edit replaced, for the status
    QList<config::ConfigError> m_lastReloadErrors;
    qint64 m_lastReloadErrorMs = 0;
    QString m_writeProblem;
    // The file-to-running diff of status(), and the texts it was made from.
    mutable QString m_difference;
    mutable QByteArray m_differenceFile;
    mutable QByteArray m_differenceRunning;
    QFileSystemWatcher *m_watcher = nullptr; // child
    QTimer m_debounce{this};                 // parented so moveToThread takes it along
};

// The texts a start needs: the file's, and the running one (the file with the overlay at
// `overlayPath` on top, when there is one). Errors say why the overlay could not be used.
struct StartTexts {
    QByteArray fileText;
    QByteArray runningText;
    QString error;        // reading the file failed: nothing to start with
    QString overlayError; // the overlay could not be applied: started from the file alone
};
StartTexts readStartTexts(const QString &path, const QString &overlayPath);

} // namespace switchyard::lifecycle
