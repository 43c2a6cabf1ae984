#pragma once

#include "health/health_registry.h"
#include "upstream/upstream_transport.h"

#include <QByteArray>
#include <QDateTime>
#include <QString>
#include <chrono>
#include <optional>

namespace switchyard::resilience {

// Which of the executor's own clocks ran out on an attempt, if any. The transport reports its
// own connect and total timeouts; first-token and idle are timers of the executor.
enum class TimeoutKind { None, Connect, FirstToken, Idle, Total };

// What went wrong with one attempt, in the terms retry and breaker logic need
// (docs/resilience.md, "Health and the circuit breaker" and "Errors and retries").
enum class ErrorClass {
    None,            // an answer the client can use
    ConnectFailed,   // refused, unreachable, DNS, TLS: nothing reached the provider
    Timeout,         // connect, first-token, idle or total timeout
    RateLimited,     // HTTP 429
    ServerError,     // 5xx, or any status a provider should not answer with (402, 409, 3xx...)
    ConnectionLost,  // reset, broken framing or a stream cut before its end
    UnusableAnswer,  // an answer arrived but cannot be used: broken JSON, no event stream
    RequestRejected, // 400, 401, 403, 404, 413, 422: the request's own fault
};

// Stable names for traces, logs and documentation: "timeout", "rate_limited"...
QString errorClassName(ErrorClass error);

// One attempt's ending, from what the transport saw, the HTTP status (0 before a head), and
// which of the executor's timers fired. A timer wins: it ended the call.
ErrorClass classify(upstream::TransportError transport, int httpStatus, TimeoutKind timeout);

// How the attempt counts for the provider's health. A timeout that fired only because the
// request's own time budget was shorter than the configured timeout is not the provider's
// fault: an impatient client must not open breakers.
health::CallOutcome callOutcomeFor(ErrorClass error, bool cutShortByRequestBudget);

// Whether another endpoint could serve the request better: false only for the request's own
// faults, which every endpoint would refuse alike.
bool mayTryAnotherEndpoint(ErrorClass error);

// How long a 429 asks the client to wait: `retry-after-ms` (sent by OpenAI) when present,
// else `Retry-After` as delta-seconds or an HTTP date relative to `now`. Empty when absent or
// unreadable; a date in the past is zero.
std::optional<std::chrono::milliseconds>
retryAfterDelay(const QByteArray &retryAfterMs, const QByteArray &retryAfter, const QDateTime &now);

} // namespace switchyard::resilience
