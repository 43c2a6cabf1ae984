#pragma once

#include "auth/api_key_store.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <optional>

namespace switchyard::fleet {

class FleetNode;

// The client keys created through the admin API, shared by every node of the fleet
// (docs/fleet.md, "Keys"): a hash `keys` in Redis (id to the key's JSON: tenant, SHA-256, limits,
// creation time; never a key's text) and a counter `keys:revision` every change bumps. A key
// created, revoked or given new limits on one node is written there at once; every node reads the
// hash again when the counter moved, at its next sync, and makes its own store match it. The
// store's database keeps the fleet's keys, so a node that starts while Redis is away serves with
// them.
//
// A change made while Redis is away waits in a bounded queue and is written when the link is
// back, before anything is read. A node joining the fleet for the first time (it is not in the
// set `keys:joined`) adds the keys it holds, so does every node when Redis comes back empty; a
// node the fleet knows follows it, so a key revoked while it was away stays revoked.
class SharedKeys final : public QObject {
    Q_OBJECT
public:
    SharedKeys(FleetNode &node, auth::ApiKeyStore &store, QObject *parent = nullptr);

    // Changes waiting for the link (for the status and the tests), and those the bounded queue
    // had to drop.
    int queued() const { return int(m_queue.size()); }
    quint64 dropped() const { return m_dropped; }

    static constexpr int kMaxQueued = 10'000;

private:
    struct Change {
        QList<QByteArray> command; // HSET or HDEL
        bool sent = false;         // on the wire, its answer not yet in
    };
    void enqueue(QList<QByteArray> command);
    void flush();
    void joined();
    void republishAll();
    void sync();
    void pull(qint64 revision);

    FleetNode &m_node;
    auth::ApiKeyStore &m_store;
    QByteArray m_hashKey;
    QByteArray m_revisionKey;
    QByteArray m_joinedKey; // the set of nodes whose keys the fleet has taken in
    QList<Change> m_queue;
    quint64 m_dropped = 0;
    std::optional<qint64> m_seenRevision;
    bool m_pulling = false;
};

// A key as the fleet stores it, and back. Public for the tests.
QByteArray keyToJson(const auth::ClientKey &key);
std::optional<auth::ClientKey> keyFromJson(const QByteArray &json);

} // namespace switchyard::fleet
