#include "lifecycle/config_history.h"

#include "config/text_diff.h"
#include "storage/state_database.h"

#include <QLoggingCategory>
#include <QSqlError>
#include <QSqlQuery>

Q_LOGGING_CATEGORY(lcHistory, "switchyard.config")

namespace switchyard::lifecycle {

using namespace Qt::StringLiterals;

namespace {

const QStringList kSchema{
    u"CREATE TABLE IF NOT EXISTS config_versions ("
    u" number INTEGER PRIMARY KEY,"
    u" created_ms INTEGER NOT NULL,"
    u" source TEXT NOT NULL,"
    u" author TEXT NOT NULL DEFAULT '',"
    u" note TEXT NOT NULL DEFAULT '',"
    u" text TEXT NOT NULL,"
    u" diff TEXT NOT NULL DEFAULT '')"_s,
};

} // namespace

ConfigHistory::ConfigHistory(const QString &databasePath, const QString &connectionName)
    : m_connectionName(connectionName)
{
    storage::OpenedDatabase opened = storage::openStateDatabase(databasePath, connectionName);
    if (!opened.ok()) {
        m_problem = opened.error;
        qCCritical(lcHistory).noquote()
            << "config versions are kept in memory only, lost at exit:" << m_problem;
        opened.database = QSqlDatabase();
        storage::closeStateDatabase(connectionName);
        return;
    }
    if (const QString error = storage::ensureSchema(opened.database, kSchema); !error.isEmpty()) {
        m_problem = u"cannot create the config_versions table: %1"_s.arg(error);
        qCCritical(lcHistory).noquote()
            << "config versions are kept in memory only, lost at exit:" << m_problem;
        opened.database = QSqlDatabase();
        storage::closeStateDatabase(connectionName);
        return;
    }
    m_open = true;
    QSqlQuery query(opened.database);
    if (!query.exec(u"SELECT number, created_ms, source, author, note, text, diff "
                    u"FROM config_versions ORDER BY number"_s)) {
        m_problem = u"cannot read config versions: %1"_s.arg(query.lastError().text());
        qCCritical(lcHistory).noquote() << m_problem;
        return;
    }
    while (query.next()) {
        ConfigVersion version;
        version.number = query.value(0).toULongLong();
        version.createdMsSinceEpoch = query.value(1).toLongLong();
        version.source = configChangeSourceFromName(query.value(2).toString())
                             .value_or(ConfigChangeSource::File);
        version.author = query.value(3).toString();
        version.note = query.value(4).toString();
        version.text = query.value(5).toString();
        version.diff = query.value(6).toString();
        m_versions.append(version);
    }
}

ConfigHistory::~ConfigHistory()
{
    storage::closeStateDatabase(m_connectionName);
}

std::optional<ConfigVersion> ConfigHistory::latest() const
{
    if (m_versions.isEmpty())
        return std::nullopt;
    return m_versions.constLast();
}

std::optional<ConfigVersion> ConfigHistory::version(quint64 number) const
{
    for (const ConfigVersion &version : m_versions) {
        if (version.number == number)
            return version;
    }
    return std::nullopt;
}

QList<ConfigVersionInfo> ConfigHistory::list() const
{
    QList<ConfigVersionInfo> infos;
    infos.reserve(m_versions.size());
    for (auto it = m_versions.crbegin(); it != m_versions.crend(); ++it)
        infos.append(static_cast<const ConfigVersionInfo &>(*it));
    return infos;
}

ConfigVersion ConfigHistory::append(const QString &text, const ConfigChangeOrigin &origin,
                                    qint64 createdMsSinceEpoch)
{
    ConfigVersion version;
    version.number = m_versions.isEmpty() ? 1 : m_versions.constLast().number + 1;
    version.createdMsSinceEpoch = createdMsSinceEpoch;
    version.source = origin.source;
    version.author = origin.author;
    version.note = origin.note;
    version.text = text;
    if (!m_versions.isEmpty()) {
        version.diff = config::unifiedDiff(m_versions.constLast().text, text,
                                           u"version %1"_s.arg(m_versions.constLast().number),
                                           u"version %1"_s.arg(version.number));
    }
    m_versions.append(version);
    if (m_open && !write(version)) {
        qCCritical(lcHistory).noquote()
            << "config version" << version.number << "is kept in memory only:" << m_problem;
    }
    return version;
}

bool ConfigHistory::write(const ConfigVersion &version)
{
    QSqlDatabase database = QSqlDatabase::database(m_connectionName, false);
    QSqlQuery insert(database);
    insert.prepare(u"INSERT INTO config_versions (number, created_ms, source, author, note, text, "
                   u"diff) VALUES (?, ?, ?, ?, ?, ?, ?)"_s);
    insert.addBindValue(version.number);
    insert.addBindValue(version.createdMsSinceEpoch);
    insert.addBindValue(configChangeSourceName(version.source));
    // A null QString binds as SQL NULL; the columns hold text, empty when not given.
    const auto text = [](const QString &value) { return value.isNull() ? u""_s : value; };
    insert.addBindValue(text(version.author));
    insert.addBindValue(text(version.note));
    insert.addBindValue(text(version.text));
    insert.addBindValue(text(version.diff));
    if (insert.exec())
        return true;
    m_problem =
        u"cannot write config version %1: %2"_s.arg(version.number).arg(insert.lastError().text());
    return false;
}

} // namespace switchyard::lifecycle
