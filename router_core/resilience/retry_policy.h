#pragma once

#include "config/config_store.h"
#include "config/resilience_config.h"
#include "resilience/error_class.h"

#include <QString>
#include <chrono>
#include <functional>
#include <optional>

namespace switchyard::resilience {

// A uniform draw in [0, 1). Injected wherever chance enters (backoff jitter) so tests can fix it.
using UniformRandom = std::function<double()>;

// The wait before retry `retryIndex` (0 for the first retry): backoffBase * 2^retryIndex, at most
// backoffMax, plus backoffJitter * jitterDraw.
std::chrono::milliseconds backoffDelay(const config::RetryConfig &config, int retryIndex,
                                       double jitterDraw);

// The time an attempt may wait for its answer: `base` stretched by the gradient once for each
// earlier attempt in the same tier (docs/resilience.md, "Errors and retries": first try base, retry
// x1.5).
std::chrono::milliseconds stretchedTimeout(std::chrono::milliseconds base, double gradient,
                                           int earlierAttemptsInTier);

enum class RetryAction {
    GiveUp,       // answer the client with what there is (or go down the degradation ladder)
    SameEndpoint, // wait out the endpoint's cool-down, then ask it again
    NextEndpoint, // back off, then try the next candidate that admits the request
};

// Which limit ended the retries, so the client's error can say so.
enum class RetryStop {
    None,
    AnswerStarted,     // the first streamed byte reached the client
    NotRetryable,      // the request's own fault: every endpoint would refuse it alike
    AttemptsExhausted, // `retries.max_attempts`
    TimeBudget,        // the backoff or the wait does not fit the time left
    WaitTooLong,       // the cool-down is longer than `retries.max_retry_after`
    AlreadyWaited,     // a request waits out a cool-down at most once
    RetryBudgetSpent,  // the retry budget had no slot (`retries.budget_percent`)
};

// The error code a client sees when this limit ended the retries; empty for the others.
QString retryStopCode(RetryStop stop);

// What the executor knows when an attempt has failed.
struct RetryInput {
    ErrorClass error = ErrorClass::None;
    bool answerReachedClient = false; // a streamed answer's first byte went out
    int attemptsMade = 0;             // including the one that just failed
    std::optional<std::chrono::milliseconds> remainingBudget; // empty: no deadline
    double jitterDraw = 0.0;
};

struct RetryDecision {
    RetryAction action = RetryAction::GiveUp;
    std::chrono::milliseconds delay{0};
    QString reason; // for the trace: why this action and this wait
    RetryStop stop = RetryStop::None;
};

// The retry rules of docs/resilience.md ("Errors and retries") by error class: the request's own
// faults and anything after the first streamed byte are never retried; a 429 moves on to the next
// endpoint at once (the endpoint cools down instead, see decideCoolDownWait); everything else moves
// on to the next endpoint after a backoff that must fit the time left.
RetryDecision decideRetry(const RetryInput &input, const config::RetryConfig &config);

// When no candidate can take the request now but one is cooling down after a 429: whether to
// wait out the soonest cool-down and ask that endpoint again. At most once per request, within
// `retries.max_retry_after`, the attempt cap and the time left.
RetryDecision decideCoolDownWait(std::chrono::milliseconds coolDownLeft, bool alreadyWaited,
                                 int attemptsMade,
                                 std::optional<std::chrono::milliseconds> remainingBudget,
                                 const config::RetryConfig &config);

// Caps retries in flight at a share of the requests in flight, so an outage cannot multiply the
// load on what still works (Envoy's retry budget). A retry holds its slot from the moment it is
// decided, through its backoff, until its attempt ends. The share and the floor are the config
// store's current `retries` section, read at each question. Engine thread only.
class RetryBudget {
public:
    explicit RetryBudget(const config::ConfigStore &store);

    void requestStarted() { ++m_requestsInFlight; }
    void requestFinished() { --m_requestsInFlight; }
    // Takes a retry slot when the budget has one; false means the retry must not happen.
    bool tryStartRetry();
    void retryFinished() { --m_retriesInFlight; }

    int requestsInFlight() const { return m_requestsInFlight; }
    int retriesInFlight() const { return m_retriesInFlight; }
    // max(minRetriesInFlight, budgetPercent of the requests in flight, rounded down).
    int allowedRetriesInFlight() const;

    quint64 retriesGranted() const { return m_granted; }
    quint64 retriesRefused() const { return m_refused; }
    int peakRetriesInFlight() const { return m_peak; }

private:
    const config::ConfigStore &m_store;
    int m_requestsInFlight = 0;
    int m_retriesInFlight = 0;
    quint64 m_granted = 0;
    quint64 m_refused = 0;
    int m_peak = 0;
};

} // namespace switchyard::resilience
