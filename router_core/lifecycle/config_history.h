#pragma once

#include "control/config_versions.h"

#include <QList>
#include <QString>
#include <optional>

namespace switchyard::lifecycle {

// Every config version, in the state database's `config_versions` table: number, time, source,
// author, note, the full YAML text and the diff against the version before. Written through
// on each append and read once at open, so a restart finds them all. When the database cannot
// be opened or written (damaged, locked, a read-only disk) the versions are still kept, in
// memory for the life of the process, and problem() says why: the gateway serves on.
// One thread only (Qt SQL's rule): the engine thread.
class ConfigHistory {
public:
    // `databasePath` empty: in memory only, by design (no state directory).
    ConfigHistory(const QString &databasePath, const QString &connectionName);
    ~ConfigHistory();
    ConfigHistory(const ConfigHistory &) = delete;
    ConfigHistory &operator=(const ConfigHistory &) = delete;

    // Why versions are not persisted; empty when they are (or when none was asked for).
    QString problem() const { return m_problem; }

    std::optional<ConfigVersion> latest() const;
    std::optional<ConfigVersion> version(quint64 number) const;
    // Newest first, without texts.
    QList<ConfigVersionInfo> list() const;

    // Records `text` as the next version, with its diff against the latest.
    ConfigVersion append(const QString &text, const ConfigChangeOrigin &origin,
                         qint64 createdMsSinceEpoch);

private:
    bool write(const ConfigVersion &version);

    QString m_connectionName;
    bool m_open = false;
    QString m_problem;
    QList<ConfigVersion> m_versions; // oldest first
};

} // namespace switchyard::lifecycle
