#include "storage/state_database.h"

#include <QDir>
#include <QFileInfo>
#include <QMutex>
#include <QSet>
#include <QSqlError>
#include <QSqlQuery>

namespace switchyard::storage {

using namespace Qt::StringLiterals;

QString stateDatabasePath(const QString &directory)
{
    if (directory.isEmpty())
        return {};
    return QDir(directory).filePath(kStateDatabaseFileName);
}

namespace {

// Runs one statement; returns its error text, empty on success.
QString run(QSqlDatabase &database, const QString &statement)
{
    QSqlQuery query(database);
    if (query.exec(statement))
        return {};
    return u"%1 (in: %2)"_s.arg(query.lastError().text(), statement.simplified());
}

// Files whose every page was checked in this process: the state file has three owners (config
// history, API keys, the usage ledger), each opening it on its own thread at start, and one
// check of every page is enough.
class CheckedFiles {
public:
    bool contains(const QString &path) const
    {
        const QMutexLocker lock(&m_mutex);
        return m_paths.contains(path);
    }
    void insert(const QString &path)
    {
        const QMutexLocker lock(&m_mutex);
        m_paths.insert(path);
    }

private:
    mutable QMutex m_mutex;
    QSet<QString> m_paths;
};
CheckedFiles &checkedInFull()
{
    static CheckedFiles files;
    return files;
}

} // namespace

OpenedDatabase openStateDatabase(const QString &path, const QString &connectionName,
                                 int busyTimeoutMs, qint64 fullCheckMaxBytes)
{
    OpenedDatabase opened;
    if (QSqlDatabase::contains(connectionName))
        QSqlDatabase::removeDatabase(connectionName);
    if (!path.isEmpty()) {
        const QFileInfo file(path);
        if (!QDir().mkpath(file.absolutePath())) {
            opened.error = u"cannot create the state directory %1"_s.arg(file.absolutePath());
            return opened;
        }
    }
    opened.database = QSqlDatabase::addDatabase(u"QSQLITE"_s, connectionName);
    if (!opened.database.isValid()) {
        opened.error = u"Qt's SQLite driver is not installed (Debian: libqt6sql6-sqlite)"_s;
        return opened;
    }
    opened.database.setDatabaseName(path.isEmpty() ? u":memory:"_s : path);
    opened.database.setConnectOptions(u"QSQLITE_BUSY_TIMEOUT=%1"_s.arg(busyTimeoutMs));
    if (!opened.database.open()) {
        opened.error = u"cannot open %1: %2"_s.arg(path, opened.database.lastError().text());
        return opened;
    }
    // quick_check reads every page: a file that is not a database, or a damaged one, fails
    // here. Over the size limit only the header and the schema's pages are read, which still
    // fails for a file that is not a database.
    const QString canonical = path.isEmpty() ? QString() : QFileInfo(path).canonicalFilePath();
    const bool readEveryPage = path.isEmpty() || QFileInfo(path).size() <= fullCheckMaxBytes;
    if (!readEveryPage || canonical.isEmpty() || !checkedInFull().contains(canonical)) {
        QSqlQuery check(opened.database);
        const bool passed =
            readEveryPage ? check.exec(u"PRAGMA quick_check"_s) && check.next() &&
                                check.value(0).toString() == "ok"_L1
                          : check.exec(u"SELECT count(*) FROM sqlite_master"_s) && check.next();
        if (!passed) {
            const QString why =
                check.lastError().isValid() ? check.lastError().text() : check.value(0).toString();
            opened.error = u"%1 is damaged or not a database: %2"_s.arg(path, why);
            opened.database.close();
            return opened;
        }
        check.finish(); // an unfinished read holds a transaction open; the journal mode needs none
        if (readEveryPage && !canonical.isEmpty())
            checkedInFull().insert(canonical);
    }
    if (!path.isEmpty()) {
        // The write-ahead log lets readers and one writer work at once; NORMAL syncs at each
        // checkpoint rather than each commit, which the WAL makes safe against corruption.
        for (const QString &pragma :
             {u"PRAGMA journal_mode=WAL"_s, u"PRAGMA synchronous=NORMAL"_s}) {
            if (const QString error = run(opened.database, pragma); !error.isEmpty()) {
                opened.error = u"%1: %2"_s.arg(path, error);
                opened.database.close();
                return opened;
            }
        }
    }
    return opened;
}

void closeStateDatabase(const QString &connectionName)
{
    if (!QSqlDatabase::contains(connectionName))
        return;
    {
        QSqlDatabase database = QSqlDatabase::database(connectionName, false);
        database.close();
    }
    QSqlDatabase::removeDatabase(connectionName);
}

QString ensureSchema(QSqlDatabase &database, const QStringList &statements)
{
    if (!database.transaction())
        return database.lastError().text();
    for (const QString &statement : statements) {
        if (const QString error = run(database, statement); !error.isEmpty()) {
            database.rollback();
            return error;
        }
    }
    if (!database.commit())
        return database.lastError().text();
    return {};
}

QString addMissingColumns(QSqlDatabase &database, const QString &table,
                          const QList<AddedColumn> &columns)
{
    QSqlQuery info(database);
    if (!info.exec(u"PRAGMA table_info(%1)"_s.arg(table)))
        return u"%1 (in: PRAGMA table_info(%2))"_s.arg(info.lastError().text(), table);
    QSet<QString> present;
    while (info.next())
        present.insert(info.value(1).toString()); // cid, name, type, notnull, default, pk
    info.finish();
    QStringList statements;
    for (const AddedColumn &column : columns) {
        if (!present.contains(column.name))
            statements.append(
                u"ALTER TABLE %1 ADD COLUMN %2 %3"_s.arg(table, column.name, column.definition));
    }
    if (statements.isEmpty())
        return {};
    return ensureSchema(database, statements);
}

} // namespace switchyard::storage
