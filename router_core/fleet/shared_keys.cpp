#include "fleet/shared_keys.h"

#include "fleet/fleet_node.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <algorithm>

Q_DECLARE_LOGGING_CATEGORY(lcFleet)

namespace switchyard::fleet {

using namespace Qt::StringLiterals;

QByteArray keyToJson(const auth::ClientKey &key)
{
    const QJsonObject object{{u"id"_s, key.id},
                             {u"tenant"_s, key.tenant},
                             {u"sha256"_s, QString::fromLatin1(key.sha256.toHex())},
                             {u"requests_per_minute"_s, key.limits.requestsPerMinute},
                             {u"tokens_per_minute"_s, double(key.limits.tokensPerMinute)},
                             {u"models"_s, QJsonArray::fromStringList(key.limits.models)},
                             {u"created_at"_s, key.createdAtUtc.toString(Qt::ISODateWithMs)}};
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

std::optional<auth::ClientKey> keyFromJson(const QByteArray &json)
{
    const QJsonObject object = QJsonDocument::fromJson(json).object();
    auth::ClientKey key;
    key.id = object.value(u"id"_s).toString();
    key.tenant = object.value(u"tenant"_s).toString();
    key.sha256 = QByteArray::fromHex(object.value(u"sha256"_s).toString().toLatin1());
    if (key.id.isEmpty() || key.sha256.size() != 32)
        return std::nullopt;
    key.limits.requestsPerMinute = object.value(u"requests_per_minute"_s).toInt();
    key.limits.tokensPerMinute = qint64(object.value(u"tokens_per_minute"_s).toDouble());
    for (const QJsonValue &model : object.value(u"models"_s).toArray())
        key.limits.models.append(model.toString());
    key.createdAtUtc =
        QDateTime::fromString(object.value(u"created_at"_s).toString(), Qt::ISODateWithMs);
    key.source = auth::KeySource::Api;
    return key;
}

SharedKeys::SharedKeys(FleetNode &node, auth::ApiKeyStore &store, QObject *parent)
    : QObject(parent), m_node(node), m_store(store), m_hashKey(node.keyPrefix() + "keys"),
      m_revisionKey(node.keyPrefix() + "keys:revision"),
      m_joinedKey(node.keyPrefix() + "keys:joined")
{
    // A key's limits edited is the whole key written again, so a reader takes it whole and no
    // node ever holds half an edit; but only while the key is still there. A revocation on
    // another node (an HDEL this node has not synced yet, or one that came first while this edit
    // waited in the queue) must not be undone by a late edit.
    m_store.setListener({[this](const auth::ClientKey &key) {
                             enqueue({"HSET", m_hashKey, key.id.toUtf8(), keyToJson(key)});
                         },
                         [this](const auth::ClientKey &key) {
                             enqueue({"EVAL",
                                      "if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then "
                                      "return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end "
                                      "return 0",
                                      "1", m_hashKey, key.id.toUtf8(), keyToJson(key)});
                         },
                         [this](const QString &id) {
                             enqueue({"HDEL", m_hashKey, id.toUtf8()});
                         }});
    connect(&m_node, &FleetNode::joined, this, &SharedKeys::joined);
    m_node.onSync([this] { sync(); });
}

void SharedKeys::enqueue(QList<QByteArray> command)
{
    if (m_queue.size() >= kMaxQueued) {
        // The oldest not yet sent: what is on the wire is acknowledged in order.
        const auto unsent = std::find_if(m_queue.begin(), m_queue.end(),
                                         [](const Change &change) { return !change.sent; });
        if (unsent != m_queue.end()) {
            m_queue.erase(unsent);
            ++m_dropped;
            qCWarning(lcFleet)
                << "the queue of key changes for the fleet is full: dropped the oldest";
        }
    }
    m_queue.append({std::move(command), false});
    flush();
}

void SharedKeys::flush()
{
    redis::Link &link = m_node.link();
    for (Change &change : m_queue) {
        if (change.sent || !link.isUp())
            continue;
        change.sent = true;
        // Redis answers in the order it was asked, so an answer is always for the first change.
        link.send(change.command, [this](const redis::Result &result) {
            if (result.answered()) {
                m_queue.removeFirst();
                return;
            }
            for (Change &waiting : m_queue)
                waiting.sent = false; // the link went down: all again, in order, when it is back
        });
        // Then the revision, so a reader that sees it sees the change.
        link.send({"INCR", m_revisionKey}, {});
    }
}

void SharedKeys::joined()
{
    flush();
    // A node that the fleet has not heard from yet (new to it, or Redis was emptied since) adds
    // the keys it holds; one the fleet knows follows the fleet, so a key revoked while it was
    // away stays revoked.
    m_node.link().send({"SADD", m_joinedKey, m_node.config().node.toUtf8()},
                       [this](const redis::Result &result) {
                           if (result.ok() && result.reply.integer == 1)
                               republishAll();
                       });
}

void SharedKeys::republishAll()
{
    // This node is new to the fleet, or Redis was emptied: the fleet gets every key this node
    // holds (each node does the same, so an emptied Redis ends with all of them). A key the
    // fleet already has keeps the fleet's version.
    const QList<auth::ClientKey> keys = m_store.keys();
    qCInfo(lcFleet).noquote() << "joining the fleet's keys: publishing this node's" << keys.size();
    redis::Link &link = m_node.link();
    for (const auth::ClientKey &key : keys)
        link.send({"HSETNX", m_hashKey, key.id.toUtf8(), keyToJson(key)}, {});
    link.send({"INCR", m_revisionKey}, {});
}

void SharedKeys::sync()
{
    if (m_pulling || !m_queue.isEmpty()) {
        flush();
        return; // this node's own changes go first, or reading would undo them
    }
    m_node.link().send({"GET", m_revisionKey}, [this](const redis::Result &result) {
        if (!result.ok() || result.reply.isNil())
            return;
        const qint64 revision = result.reply.text.toLongLong();
        if (m_seenRevision != revision)
            pull(revision);
    });
}

void SharedKeys::pull(qint64 revision)
{
    m_pulling = true;
    m_node.link().send({"HGETALL", m_hashKey}, [this, revision](const redis::Result &result) {
        m_pulling = false;
        if (!result.ok() || !m_queue.isEmpty())
            return;
        QList<auth::ClientKey> keys;
        const QList<redis::Reply> &fields = result.reply.elements;
        for (qsizetype i = 1; i < fields.size(); i += 2) {
            if (std::optional<auth::ClientKey> key = keyFromJson(fields[i].text))
                keys.append(*key);
            else
                qCWarning(lcFleet).noquote()
                    << "skipped a key the fleet holds that does not read:" << fields[i - 1].text;
        }
        std::sort(keys.begin(), keys.end(), [](const auth::ClientKey &a, const auth::ClientKey &b) {
            return a.createdAtUtc != b.createdAtUtc ? a.createdAtUtc < b.createdAtUtc : a.id < b.id;
        });
        if (const QString problem = m_store.replaceAll(keys); !problem.isEmpty())
            qCWarning(lcFleet).noquote()
                << "the fleet's keys are in force but could not be kept in the state database:"
                << problem;
        m_seenRevision = revision;
    });
}

} // namespace switchyard::fleet
