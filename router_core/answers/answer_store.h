#pragma once

#include "protocol/gateway_headers.h"

#include <QByteArray>
#include <chrono>
#include <functional>
#include <optional>

// The store of answers: answers the gateway already gave, kept under a key for a while so that
// they can be given again without calling a provider. The duplicate guard on `Idempotency-Key`
// (docs/resilience.md) is its first user; it is written so that stored background responses and
// a response cache can share it: a key is claimed while its answer is being made (so a second
// request can tell "running" from "done"), the answer is put under the claim, or the claim is
// released when there is nothing worth keeping. Two implementations: LocalAnswerStore (this
// node: memory, written behind to the state database) and RedisAnswerStore (a fleet's Redis,
// falling back to the local store while Redis is unreachable).
namespace switchyard::answers {

using protocol::HeaderList;

// One answer as the client received it, without the wire's framing (status line, Content-Length,
// chunked coding): what a replay needs to send it again.
struct StoredAnswer {
    int status = 200;
    HeaderList headers;     // as sent, without Content-Type, Content-Length or Connection
    QByteArray contentType; // of a whole answer; an event stream's is text/event-stream
    QByteArray body;        // a whole answer's body, or every byte of an event stream's events
    bool streamed = false;
    QByteArray requestId; // the request that made it: a replay names it
    // What the request that made it used, for the response cache: a hit's ledger row says what
    // giving it again saved. Empty and zero for answers kept by the duplicate guard.
    QString model; // the public name asked for
    QString provider;
    qint64 inputTokens = 0;
    qint64 outputTokens = 0;
    double costUsd = 0.0; // by `pricing` when it was made: what each hit saves
    bool priced = false;

    qint64 approximateBytes() const;
    friend bool operator==(const StoredAnswer &, const StoredAnswer &) = default;
};

// What a claim found.
struct ClaimResult {
    enum class Outcome {
        Claimed,  // the key was free: the caller makes the answer, then puts or releases it
        Running,  // another request holds the key and its answer is not made yet
        Answered, // an answer is stored under the key with the same fingerprint: `answer`
        Mismatch, // the key holds a request with another fingerprint
    };
    Outcome outcome = Outcome::Claimed;
    // Claimed: the token that puts or releases this claim and no later one (a claim that outlived
    // its window and was taken by another request must not be overwritten).
    QByteArray token;
    std::optional<StoredAnswer> answer; // Answered
    // Running and Mismatch: the request holding the key, for the log.
    QByteArray holderRequestId;
    // Where the claim was decided, for the trace: "local" or "redis".
    QByteArray where;
};

// The store's side of the seam. Engine thread only; `done` runs on it too, at once (local) or
// when Redis answers.
class AnswerStore {
public:
    virtual ~AnswerStore() = default;

    // Claims `key` for `window` unless it is held. `fingerprint` says what was asked (a hash of
    // the request): a different one under the same key is a Mismatch.
    virtual void claim(const QByteArray &key, const QByteArray &fingerprint,
                       const QByteArray &requestId, std::chrono::milliseconds window,
                       std::function<void(ClaimResult)> done) = 0;
    // Keeps `answer` under the claim `token` for `window` from now. A claim no longer held is
    // left alone.
    virtual void put(const QByteArray &key, const QByteArray &token, StoredAnswer answer,
                     std::chrono::milliseconds window) = 0;
    // Lets the key go, so that the next request with it runs.
    virtual void release(const QByteArray &key, const QByteArray &token) = 0;
};

// An answer as bytes (JSON, its body base64) for the state database and Redis; nullopt when
// `bytes` is not one.
QByteArray encodeAnswer(const StoredAnswer &answer);
std::optional<StoredAnswer> decodeAnswer(const QByteArray &bytes);

} // namespace switchyard::answers
