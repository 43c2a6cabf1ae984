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
// earlier attempt in the same tier (DESIGN.md, "Retries": first try base, retry x1.5).
std::chrono::milliseconds stretchedTimeout(std::chrono::milliseconds base, double gradient,
                                           int earlierAttemptsInTier);

enum class RetryAction {
    GiveUp,       // answer the client with what there is (or go down the degradation ladder)
    SameEndpoint, // wait out the provider's Retry-After, then ask the same endpoint again
    NextEndpoint, // back off, then try the next candidate that admits the request
};

// What the executor knows when an attempt has failed.
struct RetryInput {
    ErrorClass error = ErrorClass::None;
    bool answerReachedClient = false; // a streamed answer's first byte went out
    int attemptsMade = 0;             // including the one that just failed
    bool tierAllowsAnotherAttempt = true;
    std::optional<std::chrono::milliseconds> retryAfter;      // from a 429
    std::optional<std::chrono::milliseconds> remainingBudget; // empty: no deadline
    double jitterDraw = 0.0;
};

struct RetryDecision {
    RetryAction action = RetryAction::GiveUp;
    std::chrono::milliseconds delay{0};
    QString reason; // for the trace: why this action and this wait
};

// The retry rules of DESIGN.md by error class: the request's own faults and anything after the
// first streamed byte are never retried; a 429 whose Retry-After fits is retried on the same
// endpoint; everything else moves on to the next endpoint after a backoff that must fit the
// time left.
RetryDecision decideRetry(const RetryInput &input, const config::RetryConfig &config);

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
