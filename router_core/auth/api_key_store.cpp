#include "auth/api_key_store.h"

#include "storage/state_database.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <algorithm>
#include <atomic>

namespace switchyard::auth {

using namespace Qt::StringLiterals;

namespace {

// Connection names are process-wide in Qt SQL; an engine restarted in the same process (tests)
// must not take over the previous one's.
QString uniqueConnectionName()
{
    static std::atomic<int> counter{0};
    return u"switchyard-api-keys-%1"_s.arg(++counter);
}

QString modelsText(const QStringList &models)
{
    return QString::fromUtf8(
        QJsonDocument(QJsonArray::fromStringList(models)).toJson(QJsonDocument::Compact));
}

QStringList modelsFrom(const QString &text)
{
    QStringList models;
    for (const QJsonValue &value : QJsonDocument::fromJson(text.toUtf8()).array())
        models.append(value.toString());
    return models;
}

} // namespace

ApiKeyStore::ApiKeyStore(QString databasePath)
    : m_databasePath(std::move(databasePath)), m_connectionName(uniqueConnectionName())
{}

ApiKeyStore::~ApiKeyStore()
{
    storage::closeStateDatabase(m_connectionName);
}

QString ApiKeyStore::markerPath() const
{
    return m_databasePath.isEmpty() ? QString() : m_databasePath + u".api-keys"_s;
}

void ApiKeyStore::syncMarker() const
{
    const QString path = markerPath();
    if (path.isEmpty())
        return;
    if (m_keys.isEmpty()) {
        QFile::remove(path);
        return;
    }
    QFile marker(path);
    if (marker.exists())
        return;
    if (marker.open(QIODevice::WriteOnly))
        marker.write("API keys are stored in the state database beside this file. While that "
                     "database cannot be read, Switchyard accepts only the config file's keys.\n");
}

QString ApiKeyStore::unavailableReason() const
{
    if (!m_openError || m_openError->isEmpty())
        return {};
    // A failure to tell is a reason to refuse: without the database nobody knows the keys.
    const QString path = markerPath();
    if (!path.isEmpty() && !QFile::exists(path))
        return {};
    return *m_openError;
}

QString ApiKeyStore::open()
{
    if (m_openError)
        return *m_openError;
    storage::OpenedDatabase opened = storage::openStateDatabase(m_databasePath, m_connectionName);
    if (!opened.ok()) {
        m_openError = opened.error;
        return *m_openError;
    }
    QString error = storage::ensureSchema(
        opened.database,
        {u"CREATE TABLE IF NOT EXISTS api_keys ("
         u"id TEXT PRIMARY KEY, tenant TEXT NOT NULL, sha256_hex TEXT NOT NULL UNIQUE, "
         u"requests_per_minute INTEGER NOT NULL DEFAULT 0, "
         u"tokens_per_minute INTEGER NOT NULL DEFAULT 0, "
         u"models TEXT NOT NULL DEFAULT '[]', created_at TEXT NOT NULL)"_s});
    if (error.isEmpty()) {
        QSqlQuery query(opened.database);
        if (query.exec(u"SELECT id, tenant, sha256_hex, requests_per_minute, tokens_per_minute, "
                       u"models, created_at FROM api_keys ORDER BY created_at, id"_s)) {
            while (query.next()) {
                ClientKey key;
                key.id = query.value(0).toString();
                key.tenant = query.value(1).toString();
                key.sha256 = QByteArray::fromHex(query.value(2).toString().toLatin1());
                key.limits.requestsPerMinute = query.value(3).toInt();
                key.limits.tokensPerMinute = query.value(4).toLongLong();
                key.limits.models = modelsFrom(query.value(5).toString());
                key.createdAtUtc = QDateTime::fromString(query.value(6).toString(), Qt::ISODate);
                key.source = KeySource::Api;
                m_keys.append(std::move(key));
            }
        } else {
            error = query.lastError().text();
        }
    }
    m_openError = error.isEmpty() ? QString() : u"the api_keys table: %1"_s.arg(error);
    if (m_openError->isEmpty())
        syncMarker();
    return *m_openError;
}

namespace {

// One key's row, written with `verb` (INSERT, INSERT OR REPLACE).
bool storeKey(QSqlQuery &query, const ClientKey &key, const QString &verb)
{
    query.prepare(verb + u" INTO api_keys (id, tenant, sha256_hex, requests_per_minute, "
                         u"tokens_per_minute, models, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)"_s);
    query.addBindValue(key.id);
    query.addBindValue(key.tenant);
    query.addBindValue(QString::fromLatin1(key.sha256.toHex()));
    query.addBindValue(key.limits.requestsPerMinute);
    query.addBindValue(key.limits.tokensPerMinute);
    query.addBindValue(modelsText(key.limits.models));
    query.addBindValue(key.createdAtUtc.toString(Qt::ISODateWithMs));
    return query.exec();
}

} // namespace

std::optional<QString> ApiKeyStore::insert(const ClientKey &key)
{
    if (const QString error = open(); !error.isEmpty())
        return error;
    QSqlQuery query(QSqlDatabase::database(m_connectionName, false));
    if (!storeKey(query, key, u"INSERT"_s))
        return query.lastError().text();
    m_keys.append(key);
    syncMarker();
    if (m_listener.stored)
        m_listener.stored(key);
    return std::nullopt;
}

std::optional<QString> ApiKeyStore::updateLimits(const ClientKey &key)
{
    if (const QString error = open(); !error.isEmpty())
        return error;
    const auto held = std::find_if(m_keys.begin(), m_keys.end(),
                                   [&](const ClientKey &known) { return known.id == key.id; });
    if (held == m_keys.end())
        return u"no API key has id `%1`"_s.arg(key.id);
    QSqlQuery query(QSqlDatabase::database(m_connectionName, false));
    query.prepare(u"UPDATE api_keys SET requests_per_minute = ?, tokens_per_minute = ?, "
                  u"models = ? WHERE id = ?"_s);
    query.addBindValue(key.limits.requestsPerMinute);
    query.addBindValue(key.limits.tokensPerMinute);
    query.addBindValue(modelsText(key.limits.models));
    query.addBindValue(key.id);
    if (!query.exec())
        return query.lastError().text();
    held->limits = key.limits;
    if (m_listener.changed)
        m_listener.changed(*held);
    return std::nullopt;
}

std::variant<bool, QString> ApiKeyStore::remove(const QString &id)
{
    if (const QString error = open(); !error.isEmpty())
        return error;
    QSqlQuery query(QSqlDatabase::database(m_connectionName, false));
    query.prepare(u"DELETE FROM api_keys WHERE id = ?"_s);
    query.addBindValue(id);
    if (!query.exec())
        return query.lastError().text();
    const qsizetype removed = m_keys.removeIf([&](const ClientKey &key) { return key.id == id; });
    syncMarker();
    const bool existed = removed > 0 || query.numRowsAffected() > 0;
    if (existed && m_listener.removed)
        m_listener.removed(id);
    return existed;
}

QString ApiKeyStore::replaceAll(const QList<ClientKey> &keys)
{
    const QString openError = open();
    QStringList problems;
    if (openError.isEmpty()) {
        QSqlDatabase database = QSqlDatabase::database(m_connectionName, false);
        database.transaction();
        QSqlQuery clear(database);
        if (!clear.exec(u"DELETE FROM api_keys"_s))
            problems.append(clear.lastError().text());
        for (const ClientKey &key : keys) {
            QSqlQuery query(database);
            if (!storeKey(query, key, u"INSERT OR REPLACE"_s))
                problems.append(query.lastError().text());
        }
        if (problems.isEmpty())
            database.commit();
        else
            database.rollback();
    } else {
        problems.append(openError);
    }
    m_keys = keys;
    for (ClientKey &key : m_keys)
        key.source = KeySource::Api;
    if (problems.isEmpty())
        syncMarker();
    return problems.join(u"; "_s);
}

} // namespace switchyard::auth
