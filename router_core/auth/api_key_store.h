#pragma once

#include "config/auth_config.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>
#include <functional>
#include <optional>
#include <variant>

namespace switchyard::auth {

// Where a key was defined: its config file entry, or the admin API (then it lives in the state
// database). Each is revoked where it was defined.
enum class KeySource { File, Api };

// A client key as Switchyard checks it: never its text, only the text's SHA-256.
struct ClientKey {
    QString id;
    QString tenant;
    QByteArray sha256; // 32 raw bytes
    config::ClientKeyLimits limits;
    QDateTime createdAtUtc; // a file key: when the config that defines it was loaded
    KeySource source = KeySource::File;
};

// The keys created through the admin API, kept in the state database's `api_keys` table (id,
// tenant, SHA-256 as hex, limits, creation time) and in memory for lookups. Engine thread only:
// the database connection is opened on first use, on the thread that uses it.
class ApiKeyStore {
public:
    // `databasePath` empty: an in-memory database, gone with the process.
    explicit ApiKeyStore(QString databasePath);
    ~ApiKeyStore();
    ApiKeyStore(const ApiKeyStore &) = delete;
    ApiKeyStore &operator=(const ApiKeyStore &) = delete;

    // Opens the database and reads the keys once; later calls return the first answer. Empty on
    // success, otherwise why keys created through the API are not available.
    QString open();
    const QList<ClientKey> &keys() const { return m_keys; }
    // Why the keys created through the API could not be read, when some may exist: open()
    // failed and the marker file beside the database says keys were stored. Empty before open(),
    // after it succeeded, and when no key was ever created (a gateway that never had API keys
    // stays as open as it was, and keeps serving, while its database is damaged).
    QString unavailableReason() const;

    // Stores a new key. The error says why not (the database's message).
    std::optional<QString> insert(const ClientKey &key);
    // Removes key `id`; false when there is no such API key. The error says why it could not be.
    std::variant<bool, QString> remove(const QString &id);
    // Gives API key `key.id` the limits `key.limits` (its tenant, digest and creation time stay).
    // The error says why not: the database's message, or that no API key has the id.
    std::optional<QString> updateLimits(const ClientKey &key);

    // Told of each key insert() stored, updateLimits() changed and remove() removed, after it
    // was: a fleet publishes them. Not told of what replaceAll() brings. A change is told apart
    // from a new key: published, it must never bring back a key another node revoked meanwhile.
    struct Listener {
        std::function<void(const ClientKey &key)> stored;
        std::function<void(const ClientKey &key)> changed;
        std::function<void(const QString &id)> removed;
    };
    void setListener(Listener listener) { m_listener = std::move(listener); }
    // Makes the API keys exactly `keys` (the fleet's), in memory and in the database, which keeps
    // them for a start without the fleet. Empty on success, else why the database could not
    // follow (memory does regardless: the fleet is the truth).
    QString replaceAll(const QList<ClientKey> &keys);

private:
    // `<database>.api-keys`: exists while the database holds at least one API key, so a store
    // that cannot be read still tells whether keys may be lost in it. Empty in memory.
    QString markerPath() const;
    void syncMarker() const;

    QString m_databasePath;
    QString m_connectionName;
    std::optional<QString> m_openError; // unset until open() ran
    QList<ClientKey> m_keys;
    Listener m_listener;
};

} // namespace switchyard::auth
