#pragma once

#include <QSqlDatabase>
#include <QString>
#include <QStringList>

// What must survive a restart (config versions, API keys, the usage ledger) lives in one SQLite
// file in the state directory: `state.directory` in the config, else --state-dir, else systemd's
// $STATE_DIRECTORY, else the user's data directory (docs/operations.md). Each owner opens its
// own connection to it on its own thread and keeps its own tables; SQLite's write-ahead log lets
// the ledger's writer thread and the engine thread use the file at once.
namespace switchyard::storage {

// The database's file name inside the state directory.
inline constexpr QLatin1StringView kStateDatabaseFileName{"switchyard.db"};

// `directory`/switchyard.db; empty when `directory` is empty (nothing is persisted).
QString stateDatabasePath(const QString &directory);

struct OpenedDatabase {
    QSqlDatabase database; // valid and open when error is empty
    QString error;         // why the file could not be opened, for the log and the console

    bool ok() const { return error.isEmpty(); }
};

// Opens connection `connectionName` to the SQLite file at `path`, creating the file and its
// folder when missing. An empty `path` opens a private in-memory database instead: tests and a
// gateway run without a state directory keep everything for the life of the process only.
// The connection uses the write-ahead log, waits up to `busyTimeoutMs` for a lock another
// process holds, and checks the file, so a file that is not a database, or a damaged one, is
// reported here rather than on the first write. The check reads every page once per file and
// process when the file is at most `fullCheckMaxBytes`; a larger one (a usage ledger of months)
// gets its header and schema read only, as reading gigabytes would hold the start for minutes,
// and damage elsewhere in it is reported by SQLite when the damaged page is read. A connection
// belongs to the thread that opened it (Qt SQL's rule); `connectionName` must be unique per
// owner.
inline constexpr qint64 kFullCheckMaxBytes = 128LL * 1024 * 1024;
OpenedDatabase openStateDatabase(const QString &path, const QString &connectionName,
                                 int busyTimeoutMs = 2000,
                                 qint64 fullCheckMaxBytes = kFullCheckMaxBytes);

// Closes and forgets the connection; safe when it was never opened.
void closeStateDatabase(const QString &connectionName);

// Runs `statements` (CREATE TABLE IF NOT EXISTS ...) in one transaction. Returns the first
// error with the statement that failed, empty on success.
QString ensureSchema(QSqlDatabase &database, const QStringList &statements);

// A column a table gained after its first release: its name, and its type and constraints with
// the DEFAULT that an older release's rows take ("INTEGER NOT NULL DEFAULT 0").
struct AddedColumn {
    QString name;
    QString definition;
};

// Migrates a table an older release made: adds each of `columns` it lacks, in one transaction.
// A table that has them all is left alone, so this runs on every open. Returns the first error
// with the statement that failed, empty on success. Two processes migrating the same file at
// once: the loser's ALTER fails (the column exists by then) and its owner's retry finds nothing
// left to do.
QString addMissingColumns(QSqlDatabase &database, const QString &table,
                          const QList<AddedColumn> &columns);

} // namespace switchyard::storage
