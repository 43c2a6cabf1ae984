#include "http/idempotency_guard.h"

#include "http/answer_collector.h"
#include "http/response_caching.h"
#include "protocol/gateway_headers.h"
#include "resilience/degradation.h"
#include "routing/request_context.h"

#include <QCryptographicHash>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcIdempotency, "switchyard.idempotency")

namespace switchyard::http::idempotency {

using namespace Qt::StringLiterals;

namespace {

bool guarded(protocol::Operation operation)
{
    // Counting tokens calls nothing that costs: there is nothing to run twice.
    return operation != protocol::Operation::CountTokens;
}

QByteArray hexSha256(QByteArrayView bytes)
{
    return QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex();
}

protocol::ApiError malformed(const QString &why)
{
    return {400,
            u"The %1 header %2. Send a key of 1 to %3 printable ASCII characters, such as a "
            u"UUID, or leave the header out."_s.arg(QLatin1StringView(kHeader), why)
                .arg(kLongestKey),
            u"invalid_request_error"_s,
            QString::fromLatin1(kHeader),
            u"invalid_idempotency_key"_s,
            {}};
}

std::optional<protocol::ApiError> checkValue(const QByteArray &value)
{
    if (value.isEmpty())
        return malformed(u"is empty"_s);
    if (value.size() > kLongestKey)
        return malformed(u"is %1 characters long"_s.arg(value.size()));
    for (const char c : value) {
        if (uchar(c) < 0x20 || uchar(c) > 0x7e)
            return malformed(u"holds a character that is not printable ASCII"_s);
    }
    return std::nullopt;
}

// A whole answer, at its end put in the store, or the key released.
class Keeper final : public AnswerCollector {
public:
    Keeper(answers::AnswerStore &store, Key key, QByteArray token, QByteArray requestId,
           const config::IdempotencyConfig &config)
        : AnswerCollector(std::move(requestId), config.maxAnswerBytes), m_store(store),
          m_key(std::move(key)), m_token(std::move(token)), m_window(config.window)
    {}

    void ended(bool complete) override
    {
        if (!complete || tooLarge() || !succeeded() || standsIn()) {
            if (tooLarge())
                qCInfo(lcIdempotency).noquote()
                    << u"request %1: its answer is over idempotency.max_answer_bytes (%2) and is "
                       u"not kept; a retry with its %3 runs again"_s
                           .arg(QString::fromLatin1(m_answer.requestId))
                           .arg(m_maxBytes)
                           .arg(QString::fromLatin1(m_key.header));
            m_store.release(m_key.storeKey, m_token);
            return;
        }
        m_store.put(m_key.storeKey, m_token, std::move(m_answer), m_window);
    }

private:
    // A canned answer or the fail-safe message (the ladder's levels 2 and 3) stands in for one no
    // provider gave: kept, it would tell every retry of the window "busy" long after the
    // providers are back. A lighter model's answer (level 1) is a real answer and is kept.
    bool standsIn() const
    {
        return header("x-switchyard-degraded").toInt() >= resilience::kCannedAnswer;
    }

    answers::AnswerStore &m_store;
    Key m_key;
    QByteArray m_token;
    std::chrono::milliseconds m_window;
};

} // namespace

std::variant<std::monostate, Key, protocol::ApiError>
readKey(const IncomingRequest &request, protocol::Operation operation,
        const config::IdempotencyConfig &config)
{
    if (!config.enabled || !guarded(operation))
        return std::monostate{};
    Key key;
    for (const auto &[name, value] : request.headers) {
        if (!protocol::sameHeaderName(name, kHeader))
            continue;
        if (std::optional<protocol::ApiError> error = checkValue(value))
            return *error;
        key.header = kHeader.toByteArray();
        key.value = value;
        break;
    }
    if (key.value.isEmpty() && config.requestIdHeader) {
        // Only an id the gateway would take as the request's own: anything else was never a key.
        key.value = routing::acceptedRequestId(request.headers);
        key.header = kRequestIdHeader.toByteArray();
    }
    if (key.value.isEmpty())
        return std::monostate{};
    const QByteArray path = request.path.toUtf8();
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(path);
    hash.addData(QByteArrayView("\n", 1));
    hash.addData(request.body);
    key.fingerprint = hash.result().toHex();
    return key;
}

void forScope(Key &key, const QString &keyId, const QString &tenant)
{
    const QByteArray scope =
        keyId.isEmpty() ? "tenant:" + tenant.toUtf8() : "key:" + keyId.toUtf8();
    key.storeKey = "idempotency:" + hexSha256(scope + '\n' + key.value);
}

protocol::ApiError inUse(const Key &key)
{
    return {409,
            u"A request with this %1 is still running. Retry after it has finished to get its "
            u"answer, or use a new key for a new request."_s.arg(QString::fromLatin1(key.header)),
            u"invalid_request_error"_s,
            QString::fromLatin1(key.header),
            u"idempotency_key_in_use"_s,
            kRetryAfterSeconds.toByteArray()};
}

protocol::ApiError reused(const Key &key)
{
    return {422,
            u"This %1 was already used for a different request (another body or path). Use a "
            u"new key for a new request."_s.arg(QString::fromLatin1(key.header)),
            u"invalid_request_error"_s,
            QString::fromLatin1(key.header),
            u"idempotency_key_reused"_s,
            {}};
}

std::unique_ptr<httpwire::AnswerTap> keeper(answers::AnswerStore &store, Key key, QByteArray token,
                                            QByteArray requestId,
                                            const config::IdempotencyConfig &config)
{
    return std::make_unique<Keeper>(store, std::move(key), std::move(token), std::move(requestId),
                                    config);
}

void replay(httpwire::ResponseWriter &writer, const answers::StoredAnswer &answer,
            const protocol::HeaderList &identity)
{
    sendStoredAnswer(writer, answer, identity,
                     {{QByteArray("x-switchyard-idempotent-replay"), QByteArray("true")},
                      {QByteArray("x-switchyard-replay-of"), answer.requestId}});
}

} // namespace switchyard::http::idempotency
