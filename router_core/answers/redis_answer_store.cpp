#include "answers/redis_answer_store.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRandomGenerator>

Q_DECLARE_LOGGING_CATEGORY(lcAnswers)

namespace switchyard::answers {

using namespace Qt::StringLiterals;

namespace {

// Claims the key, or returns what holds it: one round trip, and no request can slip between
// the look and the claim.
const QByteArray kClaimScript = R"(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
return redis.call('GET', KEYS[1])
)";

// Replaces (ARGV[2] set) or deletes the key while the claim with token ARGV[1] still holds it.
const QByteArray kSettleScript = R"(
local current = redis.call('GET', KEYS[1])
if not current or not string.find(current, ARGV[1], 1, true) then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) return 1 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
)";

QByteArray windowText(std::chrono::milliseconds window)
{
    return QByteArray::number(qint64(window.count()));
}

// The claim's own field as it appears in the stored JSON, so the script's plain substring
// search cannot match another field's text.
QByteArray tokenField(const QByteArray &token)
{
    return "\"token\":\"" + token + '"';
}

} // namespace

RedisAnswerStore::RedisAnswerStore(redis::Link &link, QByteArray keyPrefix, LocalAnswerStore &local)
    : m_link(link), m_prefix(std::move(keyPrefix)), m_local(local)
{}

RedisAnswerStore::~RedisAnswerStore()
{
    *m_alive = false;
}

void RedisAnswerStore::claim(const QByteArray &key, const QByteArray &fingerprint,
                             const QByteArray &requestId, std::chrono::milliseconds window,
                             std::function<void(ClaimResult)> done)
{
    if (!m_link.isUp()) {
        done(m_local.claimNow(key, fingerprint, requestId, window));
        return;
    }
    quint64 random[2];
    QRandomGenerator::global()->fillRange(random);
    const QByteArray token =
        'R' + QByteArray::number(random[0], 16) + QByteArray::number(random[1], 16);
    const QByteArray claim =
        QJsonDocument(QJsonObject{{u"fingerprint"_s, QString::fromLatin1(fingerprint)},
                                  {u"token"_s, QString::fromLatin1(token)},
                                  {u"request_id"_s, QString::fromLatin1(requestId)}})
            .toJson(QJsonDocument::Compact);
    m_link.send(
        {"EVAL", kClaimScript, "1", redisKey(key), claim, windowText(window)},
        [this, alive = m_alive, key, fingerprint, requestId, window, token,
         done = std::move(done)](const redis::Result &result) {
            if (!*alive)
                return;
            if (!result.ok()) {
                // Unreachable or refusing: this node decides alone until the link is back.
                qCDebug(lcAnswers).noquote()
                    << u"stored answers: Redis could not take a claim, deciding locally: %1"_s.arg(
                           result.problem());
                done(m_local.claimNow(key, fingerprint, requestId, window));
                return;
            }
            ClaimResult claimed;
            claimed.where = "redis";
            if (result.reply.isNil()) {
                m_claims.insert(token, fingerprint);
                claimed.token = token;
                done(std::move(claimed));
                return;
            }
            const QJsonObject held = QJsonDocument::fromJson(result.reply.text).object();
            claimed.holderRequestId = held.value(u"request_id"_s).toString().toLatin1();
            if (held.value(u"fingerprint"_s).toString().toLatin1() != fingerprint) {
                claimed.outcome = ClaimResult::Outcome::Mismatch;
            } else if (const QJsonValue answer = held.value(u"answer"_s); answer.isObject()) {
                claimed.answer = decodeAnswer(QJsonDocument(answer.toObject()).toJson());
                // An answer no release could read is treated as one still being made: the key
                // frees itself at the end of its window.
                claimed.outcome =
                    claimed.answer ? ClaimResult::Outcome::Answered : ClaimResult::Outcome::Running;
            } else {
                claimed.outcome = ClaimResult::Outcome::Running;
            }
            done(std::move(claimed));
        });
}

void RedisAnswerStore::put(const QByteArray &key, const QByteArray &token, StoredAnswer answer,
                           std::chrono::milliseconds window)
{
    if (!claimedInRedis(token)) {
        m_local.put(key, token, std::move(answer), window);
        return;
    }
    const QByteArray fingerprint = m_claims.take(token);
    const QByteArray value =
        QJsonDocument(
            QJsonObject{{u"fingerprint"_s, QString::fromLatin1(fingerprint)},
                        {u"request_id"_s, QString::fromLatin1(answer.requestId)},
                        {u"answer"_s, QJsonDocument::fromJson(encodeAnswer(answer)).object()}})
            .toJson(QJsonDocument::Compact);
    m_link.send(
        {"EVAL", kSettleScript, "1", redisKey(key), tokenField(token), value, windowText(window)},
        [this, alive = m_alive, key, fingerprint, window,
         answer = std::move(answer)](const redis::Result &result) mutable {
            if (!*alive || result.answered())
                return;
            // Redis cannot keep it: this node can, for its own duplicates.
            qCWarning(lcAnswers).noquote()
                << u"stored answers: Redis could not keep an answer, kept on this node "
                   u"only: %1"_s.arg(result.problem());
            m_local.keep(key, fingerprint, std::move(answer), window);
        });
}

void RedisAnswerStore::release(const QByteArray &key, const QByteArray &token)
{
    if (!claimedInRedis(token)) {
        m_local.release(key, token);
        return;
    }
    m_claims.remove(token);
    // A release Redis does not take leaves the claim to expire with its window.
    m_link.send({"EVAL", kSettleScript, "1", redisKey(key), tokenField(token), QByteArray(), "0"},
                [](const redis::Result &result) {
                    if (!result.answered())
                        qCWarning(lcAnswers).noquote()
                            << u"stored answers: Redis could not release a claim; it ends with "
                               u"its window: %1"_s.arg(result.problem());
                });
}

} // namespace switchyard::answers
