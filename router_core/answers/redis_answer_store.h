#pragma once

#include "answers/local_answer_store.h"
#include "redis/redis_link.h"

#include <QHash>
#include <QPointer>

namespace switchyard::answers {

// A fleet's answers, in its Redis (docs/fleet.md): a claim is `SET NX PX window` on
// `PREFIX answers:KEY`, decided in one round trip by a script that returns what holds the key
// when the claim is refused; the answer replaces the claim under the same key, with the window's
// expiry, only while the claim is still this request's (its token); a release deletes it under
// the same condition. Any node then replays an answer another node made.
//
// While the link is down, or a claim's command fails, the node's LocalAnswerStore decides
// instead, at once: the guard then holds on this node only until Redis is back (a duplicate sent
// to another node meanwhile runs there). An answer whose claim was taken in Redis but that
// Redis cannot take is kept locally too. Engine thread only; the link and the local store
// outlive it.
class RedisAnswerStore final : public AnswerStore {
public:
    RedisAnswerStore(redis::Link &link, QByteArray keyPrefix, LocalAnswerStore &local);
    ~RedisAnswerStore() override;

    void claim(const QByteArray &key, const QByteArray &fingerprint, const QByteArray &requestId,
               std::chrono::milliseconds window, std::function<void(ClaimResult)> done) override;
    void put(const QByteArray &key, const QByteArray &token, StoredAnswer answer,
             std::chrono::milliseconds window) override;
    void release(const QByteArray &key, const QByteArray &token) override;

private:
    QByteArray redisKey(const QByteArray &key) const { return m_prefix + "answers:" + key; }
    static bool claimedInRedis(const QByteArray &token) { return token.startsWith('R'); }

    redis::Link &m_link;
    QByteArray m_prefix;
    LocalAnswerStore &m_local;
    // The fingerprint of each claim this node holds in Redis, by token: an answer Redis cannot
    // take is kept locally under it.
    QHash<QByteArray, QByteArray> m_claims;
    // Callbacks outliving the store find it gone through this.
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
};

} // namespace switchyard::answers
