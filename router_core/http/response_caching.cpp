#include "http/response_caching.h"

#include "http/answer_collector.h"

#include <QCryptographicHash>
#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::http {

using namespace Qt::StringLiterals;

namespace {

// Fields that say who asks or how the answer is kept, not what is asked: two requests that
// differ only in them get the same answer. Request ids travel in headers and never count.
constexpr QLatin1StringView kNotMeaning[] = {"user"_L1, "metadata"_L1, "store"_L1,
                                             "safety_identifier"_L1, "prompt_cache_key"_L1};

// The operations that draw their answer at a temperature; an embedding or a count does not.
bool samples(protocol::Operation operation)
{
    return operation == protocol::Operation::Chat ||
           operation == protocol::Operation::Completions ||
           operation == protocol::Operation::Responses ||
           operation == protocol::Operation::Messages;
}

bool isIdentityHeader(const QByteArray &name)
{
    return name.compare("x-switchyard-request-id", Qt::CaseInsensitive) == 0 ||
           name.compare("x-switchyard-trace-id", Qt::CaseInsensitive) == 0;
}

} // namespace

// A miss's answer, at its end handed to the stage when it qualifies.
class ResponseCaching::Keeper final : public AnswerCollector {
public:
    Keeper(ResponseCaching &owner, QByteArray requestId, qint64 maxBytes)
        : AnswerCollector(requestId, maxBytes), m_owner(owner), m_requestId(std::move(requestId))
    {}

    void ended(bool complete) override
    {
        // A cut stream, an error, a client gone or a stand-in for the chosen model (a rung of
        // the degradation ladder, another model after an error) is never given to anyone else.
        const bool qualifies = complete && !tooLarge() && succeeded() &&
                               header("x-switchyard-degraded").toInt() == 0 &&
                               header("x-switchyard-fallback-model").isEmpty();
        m_owner.answerEnded(m_requestId,
                            qualifies ? std::optional(std::move(m_answer)) : std::nullopt);
    }

private:
    ResponseCaching &m_owner;
    QByteArray m_requestId;
};

std::variant<ResponseCaching::Key, QString>
ResponseCaching::keyFor(protocol::Operation operation, const QByteArray &body,
                        const protocol::HeaderList &headers,
                        const config::ResponseCacheConfig &cache, const QByteArray &target,
                        const QString &keyId, const QString &tenant)
{
    QJsonObject request = QJsonDocument::fromJson(body).object();
    for (const QLatin1StringView field : kNotMeaning)
        request.remove(field);
    if (samples(operation) && !cache.sampled) {
        const QJsonValue temperature = request.value(u"temperature"_s);
        if (!temperature.isDouble())
            return u"no temperature: the provider's default samples, and the cache has no "
                   u"`sampled: true`"_s;
        if (temperature.toDouble() > 0.0)
            return u"sampled at temperature %1, and the cache has no `sampled: true`"_s.arg(
                temperature.toDouble());
    }
    Key key;
    for (const QByteArray &directive : headerValue(headers, "cache-control").split(',')) {
        const QByteArray word = directive.trimmed().toLower();
        if (word == "no-cache")
            key.refresh = true;
        else if (word == "no-store")
            key.keep = false;
    }
    // QJsonObject keeps its keys sorted: the same fields in any order write the same text.
    const QByteArray meaning = QJsonDocument(request).toJson(QJsonDocument::Compact);
    // Who asks: the client key, or the tenant on a gateway without keys; and the credentials the
    // client sent, which a provider that takes the client's own may answer differently (or not
    // at all): a caller never reads an answer its own credentials did not get.
    const QByteArray scope =
        keyId.isEmpty() ? "tenant:" + tenant.toUtf8() : "key:" + keyId.toUtf8();
    QCryptographicHash hash(QCryptographicHash::Sha256);
    for (const QByteArray &part :
         {protocol::operationPath(operation).toUtf8(), target,
          // Anthropic's beta features change what a Messages request asks for.
          headerValue(headers, "anthropic-beta"), scope, headerValue(headers, "authorization"),
          headerValue(headers, "x-api-key")}) {
        hash.addData(part);
        hash.addData(QByteArrayView("\n", 1));
    }
    hash.addData(meaning);
    key.storeKey = hash.result().toHex();
    return key;
}

QByteArray ResponseCaching::targetOf(const routing::RouteDecision &decision)
{
    // What answers: the rule, the tier and the canary branch it chose, and the models its
    // planned endpoints are sent (not which of them: health moves requests between providers of
    // one model, and a provider renamed upstream is another model).
    QStringList models;
    for (const routing::RouteCandidate &candidate : decision.candidates) {
        if (candidate.role == routing::CandidateRole::Primary &&
            !models.contains(candidate.upstreamModel))
            models.append(candidate.upstreamModel);
    }
    models.sort();
    return QStringList{decision.rule, decision.tier, decision.canarySide, models.join(u',')}
        .join(u'\n')
        .toUtf8();
}

std::unique_ptr<httpwire::AnswerTap>
ResponseCaching::keeper(Key key, QByteArray requestId, const config::ResponseCacheConfig &cache)
{
    // Request ids may be the client's own, and two requests may send the same one: their
    // answers and traces could not be told apart, so neither is kept.
    if (const auto twin = m_pending.find(requestId); twin != m_pending.end()) {
        twin->ambiguous = true;
        return nullptr;
    }
    m_pending.insert(requestId, Pending{std::move(key.storeKey), cache.ttl, {}, false, false, {}});
    return std::make_unique<Keeper>(*this, std::move(requestId), cache.maxAnswerBytes);
}

void ResponseCaching::answerEnded(const QByteArray &requestId,
                                  std::optional<answers::StoredAnswer> answer)
{
    const auto pending = m_pending.find(requestId);
    if (pending == m_pending.end())
        return;
    if (!answer || pending->ambiguous) {
        ++m_notKept;
        m_pending.erase(pending);
        return;
    }
    pending->answer = std::move(answer);
    keepIfWhole(pending);
}

void ResponseCaching::traceFinished(const telemetry::Trace &trace)
{
    if (m_pending.isEmpty())
        return;
    const auto pending = m_pending.find(trace.requestId);
    if (pending == m_pending.end() || trace.isShadow())
        return;
    if (trace.status < 200 || trace.status > 299 || trace.degradedLevel > 0 || pending->ambiguous) {
        ++m_notKept;
        m_pending.erase(pending);
        return;
    }
    pending->traced = true;
    pending->usage = {trace.model,
                      trace.provider,
                      std::max<qint64>(trace.inputTokens, 0),
                      std::max<qint64>(trace.outputTokens, 0),
                      trace.costUsd,
                      trace.priced};
    keepIfWhole(pending);
}

void ResponseCaching::keepIfWhole(QHash<QByteArray, Pending>::iterator pending)
{
    if (!pending->answer || !pending->traced)
        return;
    answers::StoredAnswer answer = std::move(*pending->answer);
    answer.model = pending->usage.model;
    answer.provider = pending->usage.provider;
    answer.inputTokens = pending->usage.inputTokens;
    answer.outputTokens = pending->usage.outputTokens;
    answer.costUsd = pending->usage.costUsd;
    answer.priced = pending->usage.priced;
    const QByteArray storeKey = std::move(pending->storeKey);
    const std::chrono::milliseconds ttl = pending->ttl;
    m_pending.erase(pending);
    m_store.keep(storeKey, std::move(answer), ttl);
}

ResponseCaching::Counts ResponseCaching::counts() const
{
    return {m_hits, m_misses, m_bypassed, m_notKept, m_store.counts()};
}

void sendStoredAnswer(httpwire::ResponseWriter &writer, const answers::StoredAnswer &answer,
                      const protocol::HeaderList &identity, const protocol::HeaderList &added)
{
    // This request's own ids, so its trace can be found; the rest as the original was answered.
    protocol::HeaderList headers;
    for (const auto &header : identity) {
        if (isIdentityHeader(header.first))
            headers.append(header);
    }
    for (const auto &header : answer.headers) {
        if (!isIdentityHeader(header.first))
            headers.append(header);
    }
    headers.append(added);
    if (!answer.streamed) {
        writer.sendWhole(answer.status, headers, answer.contentType, answer.body);
        return;
    }
    writer.beginEventStream(headers, false);
    writer.writeStreamData(answer.body, false);
    writer.endEventStream();
}

} // namespace switchyard::http
