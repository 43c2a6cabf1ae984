#pragma once

#include "answers/answer_store.h"
#include "config/idempotency_config.h"
#include "http/request_head.h"
#include "httpwire/response_writer.h"
#include "protocol/openai_error.h"
#include "protocol/operation.h"

#include <memory>
#include <optional>
#include <variant>

namespace switchyard::http {

// The duplicate guard on `Idempotency-Key` (docs/resilience.md), the parts of it that read HTTP:
// the request's key and what it asked (a fingerprint), the errors a duplicate gets, the tap that
// keeps a whole answer in the store of answers, and the replay of a kept one. The server calls
// them as one stage of its request path; the store (answers::AnswerStore) decides.
namespace idempotency {

// The header a client names its key in; a client's x-request-id stands in for it when
// `idempotency.request_id_header` is on.
inline constexpr QByteArrayView kHeader = "Idempotency-Key";
inline constexpr QByteArrayView kRequestIdHeader = "x-request-id";
// The longest key taken: Stripe's and the IETF draft's keys are UUIDs (36 characters); 255
// leaves room for any client's scheme while keeping keys out of the way of the header limits.
inline constexpr qsizetype kLongestKey = 255;
// What a duplicate of a running request is told to wait before it asks again, in seconds: a
// chat answer's first token usually comes within it, a whole one soon after.
inline constexpr QByteArrayView kRetryAfterSeconds = "1";

struct Key {
    QByteArray header;      // as the client named it
    QByteArray value;       // the key itself
    QByteArray fingerprint; // SHA-256 of the path and the body: what was asked
    QByteArray storeKey;    // the key in the store, scoped by forScope()
};

// The request's key on a guarded path (the five POST endpoints that call a provider): nothing
// without one (or with the guard off), a 400 naming the header for a malformed one (empty, over
// kLongestKey, or with a character outside printable ASCII).
std::variant<std::monostate, Key, protocol::ApiError>
readKey(const IncomingRequest &request, protocol::Operation operation,
        const config::IdempotencyConfig &config);

// Scopes the key to whoever asks: the client key's id, or the tenant on a gateway without keys.
// Hashed, so no client's text reaches Redis or the state database as a key.
void forScope(Key &key, const QString &keyId, const QString &tenant);

// 409 `idempotency_key_in_use`, with Retry-After: a request with this key is still running.
protocol::ApiError inUse(const Key &key);
// 422 `idempotency_key_reused`: the key was used with another body or path.
protocol::ApiError reused(const Key &key);

// Keeps the answer the writer sends under the claim `token` when it is whole, 2xx and at most
// `maxAnswerBytes`; anything else (an error, a cut stream, a client gone, an answer too large)
// releases the key, so that a retry runs again. The store must outlive the writer.
std::unique_ptr<httpwire::AnswerTap> keeper(answers::AnswerStore &store, Key key, QByteArray token,
                                            QByteArray requestId,
                                            const config::IdempotencyConfig &config);

// Sends a kept answer again: its status, headers and body, or its event stream as one chunked
// text/event-stream; with this request's own identity headers, `x-switchyard-idempotent-replay:
// true` and the original's id in `x-switchyard-replay-of`.
void replay(httpwire::ResponseWriter &writer, const answers::StoredAnswer &answer,
            const protocol::HeaderList &identity);

} // namespace idempotency
} // namespace switchyard::http
