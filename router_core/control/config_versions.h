#pragma once

#include "config/config.h"

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <optional>

// The config's history and where it stands against its file, as values for the console and the
// admin API (the lifecycle layer keeps them; docs/operations.md, "Config lifecycle").
namespace switchyard {

// What made a config version.
enum class ConfigChangeSource { File, Console, Api, Rollback };

// "file", "console", "api", "rollback": the words the admin API and the database use.
QString configChangeSourceName(ConfigChangeSource source);
std::optional<ConfigChangeSource> configChangeSourceFromName(const QString &name);

// Who changed the config and why, as an operator said it; both optional.
struct ConfigChangeOrigin {
    ConfigChangeSource source = ConfigChangeSource::Console;
    QString author;
    QString note;
};

// One version in a list: everything but its text.
struct ConfigVersionInfo {
    quint64 number = 0; // 1, 2, 3... in the order they were applied
    qint64 createdMsSinceEpoch = 0;
    ConfigChangeSource source = ConfigChangeSource::File;
    QString author;
    QString note;
};

// One version whole: the config's full YAML text and the unified diff against the version
// before it (empty for the first).
struct ConfigVersion : ConfigVersionInfo {
    QString text;
    QString diff;
};

// The running config against its file, for the console's status line and GET
// /admin/v1/config/status.
struct ConfigStatus {
    bool tracked = false; // false: the engine runs without a config file to follow
    QString filePath;     // the file a restart loads (":/demo.yaml" for the embedded demo)
    quint64 runningVersion = 0;
    bool fileMatches = true; // the file on disk holds the running config's text
    QString overlayPath;     // the overlay file in use; empty when none
    QStringList overlayKeys; // the top-level keys it replaces
    QString difference;      // unified diff from the file to the running config
    // The last reload that was refused, every error as FILE:LINE:COL; cleared by the next
    // successful one.
    QList<config::ConfigError> lastReloadErrors;
    qint64 lastReloadErrorMsSinceEpoch = 0;
    QString historyProblem; // why versions are kept in memory only; empty when they persist
    QString writeProblem;   // why the last change could not be written anywhere; empty when fine
    // Overlay keys dropped because the file's own value was edited since; empty when none were.
    QString overlayNote;
};

// How an apply, a rollback or a reload ended.
struct ConfigChangeResult {
    enum class Outcome {
        Applied,   // a new version is running
        Unchanged, // the text is the running one: no new version
        Invalid,   // refused: `errors` says why, the running config stays
        Conflict,  // refused: the running version moved on since the base version given
        NotFound,  // no such version to roll back to
    };
    Outcome outcome = Outcome::Applied;
    quint64 version = 0; // the running version afterwards
    QList<config::ConfigError> errors;
    QString message; // one sentence for the operator
};

} // namespace switchyard

Q_DECLARE_METATYPE(switchyard::ConfigVersionInfo)
Q_DECLARE_METATYPE(switchyard::ConfigVersion)
Q_DECLARE_METATYPE(switchyard::ConfigStatus)
Q_DECLARE_METATYPE(switchyard::ConfigChangeResult)
