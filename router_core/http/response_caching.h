#pragma once

#include "answers/response_cache.h"
#include "config/response_cache_config.h"
#include "httpwire/response_writer.h"
#include "protocol/operation.h"
#include "routing/route_decision.h"
#include "telemetry/request_recorder.h"

#include <QHash>
#include <memory>
#include <variant>

namespace switchyard::http {

// The response cache's part of the request path (docs/operations.md, "The response cache"):
// which requests it may answer and under what key, the tap that keeps an answer once it is
// whole and its trace says what it cost, and the counts /metrics shows. The store
// (answers::ResponseCache: this node's, or the fleet's in Redis) keeps and bounds the answers.
//
// An answer is kept only when the client got all of it with a 2xx status, no rung of the
// degradation ladder answered in place of the chosen model, it is within the rule's or model's
// `max_bytes`, and its request's trace finished with the same status: the tap sees the bytes,
// the trace (through traceFinished) the tokens and cost a hit will say it saved.
class ResponseCaching final : public telemetry::TraceSink {
public:
    explicit ResponseCaching(answers::ResponseCache &store) : m_store(store) {}

    // The store key of a request the cache may answer: the request's meaning, scoped by who asks.
    struct Key {
        QByteArray storeKey;
        bool refresh = false; // `Cache-Control: no-cache`: not looked up, its answer replaces
        bool keep = true;     // `Cache-Control: no-store`: its answer is not kept
    };
    // The key of a request on a route or model with `cache:`, or why the cache leaves it alone
    // (a sampled request without `sampled: true`). `body` is the request's as the client sent
    // it; `target` what its routing chose to answer it (targetOf), part of what was asked.
    static std::variant<Key, QString> keyFor(protocol::Operation operation, const QByteArray &body,
                                             const protocol::HeaderList &headers,
                                             const config::ResponseCacheConfig &cache,
                                             const QByteArray &target, const QString &keyId,
                                             const QString &tenant);
    static QByteArray targetOf(const routing::RouteDecision &decision);

    answers::ResponseCache &store() { return m_store; }
    // Keeps the answer the writer sends under `key` once it and the request's trace are over
    // and it qualifies (see the class comment). Null when another running request has the
    // same id: neither is kept.
    std::unique_ptr<httpwire::AnswerTap> keeper(Key key, QByteArray requestId,
                                                const config::ResponseCacheConfig &cache);
    void traceFinished(const telemetry::Trace &trace) override;

    void countHit() { ++m_hits; }
    void countMiss() { ++m_misses; }
    void countBypass() { ++m_bypassed; }
    struct Counts {
        quint64 hits = 0;
        quint64 misses = 0;
        quint64 bypassed = 0;
        quint64 notKept = 0; // misses whose answer did not qualify
        answers::ResponseCacheCounts store;
    };
    Counts counts() const;

private:
    class Keeper;
    // A miss's answer until both halves are known: the answer (from the tap) and what it cost
    // (from the trace). Whichever comes second keeps it.
    struct Usage {
        QString model;
        QString provider;
        qint64 inputTokens = 0;
        qint64 outputTokens = 0;
        double costUsd = 0.0;
        bool priced = false;
    };
    struct Pending {
        QByteArray storeKey;
        std::chrono::milliseconds ttl{0};
        std::optional<answers::StoredAnswer> answer;
        bool traced = false;
        bool ambiguous = false; // another request took the same id meanwhile
        Usage usage;
    };
    void answerEnded(const QByteArray &requestId, std::optional<answers::StoredAnswer> answer);
    void keepIfWhole(QHash<QByteArray, Pending>::iterator pending);

    answers::ResponseCache &m_store;
    QHash<QByteArray, Pending> m_pending; // by request id
    quint64 m_hits = 0;
    quint64 m_misses = 0;
    quint64 m_bypassed = 0;
    quint64 m_notKept = 0;
};

// Sends a kept answer again (the duplicate guard's replay and the cache's hit): its status,
// headers and body, or its event stream as one chunked text/event-stream; with this request's
// own identity headers in place of the original's, then `added`.
void sendStoredAnswer(httpwire::ResponseWriter &writer, const answers::StoredAnswer &answer,
                      const protocol::HeaderList &identity, const protocol::HeaderList &added);

} // namespace switchyard::http
