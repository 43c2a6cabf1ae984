#pragma once

#include "routing/route_decision.h"

#include <QList>
#include <QString>
#include <QVarLengthArray>
#include <functional>
#include <optional>

namespace switchyard::resilience {

// Why a candidate of the route decision was passed over.
enum class SkipReason {
    AlreadyTried,         // this endpoint and model already failed for this request
    BeyondFallbackLevel,  // its degradation level is beyond x-switchyard-fallback-level
    TierRetriesUsed,      // its tier's `retries` are used up for this request
    BreakerOpen,          // the health registry does not admit it now
    CoolingDown,          // it answered 429 and its Retry-After has not passed
    FailoverCapacityFull, // failed-over traffic already takes its share of the endpoint
    OperationNotServed,   // its model does not serve the request's endpoint (embeddings...)
    CannotContinue,       // a cut stream is to be continued, and it cannot continue an answer
};

QString skipReasonText(SkipReason reason);

struct CandidateSkip {
    int candidateIndex = -1;
    SkipReason reason = SkipReason::AlreadyTried;
};

// The walk down one request's route candidates, in the router's order: which to try next and
// the caps that bound the walk. Pure bookkeeping; whether an endpoint admits a call (breaker,
// failover capacity) is asked through a callback, so the plan is testable without a network.
class AttemptPlan {
public:
    // Retries allowed within a tier; a negative number means the tier sets no cap.
    using TierRetryLimit = std::function<int(const QString &tier)>;
    // Asked last, for a candidate that passed the plan's own checks: empty admits it. `failover`
    // says whether the call would be failed-over traffic for that endpoint.
    using Gate =
        std::function<std::optional<SkipReason>(const routing::RouteCandidate &, bool failover)>;

    AttemptPlan(QList<routing::RouteCandidate> candidates, int fallbackLevel,
                TierRetryLimit tierRetryLimit);

    // The index of the next candidate to try, or -1 when none is left. Walks forward from the
    // last one taken; every candidate passed over is appended to `skipped`.
    int takeNext(const Gate &gate, QList<CandidateSkip> *skipped);
    // Whether a candidate after the last one taken could still pass the plan's own checks: a
    // retry is only worth waiting for when this holds.
    bool anyCandidateLeft() const;
    // A fallback by error: the candidates of the fallback model join the plan after the others,
    // and the walk goes on from the first of them (the candidates left of the model before would
    // answer the same error). Attempts counted so far stay counted; each tier's retries start
    // again, since they bound the retries of one model's call.
    void switchToFallback(const QList<routing::RouteCandidate> &candidates);
    // Records the attempt on a candidate: counts it against its tier and marks it tried.
    void recordAttempt(int candidateIndex);
    // Whether an attempt on `candidateIndex` now would be failed-over traffic: any attempt after
    // the first that moves to another endpoint, or a first attempt that is not on a primary.
    bool isFailover(int candidateIndex) const;

    int attempts() const { return m_attempts; }
    int attemptsInTier(const QString &tier) const;
    const QList<routing::RouteCandidate> &candidates() const { return m_candidates; }

private:
    std::optional<SkipReason> ownCheck(int index) const;
    bool tierHasRoom(const QString &tier) const;

    QList<routing::RouteCandidate> m_candidates;
    int m_fallbackLevel;
    TierRetryLimit m_tierRetryLimit;
    int m_next = 0;
    int m_lastTaken = -1;
    int m_attempts = 0;
    // A request makes one or a few attempts: lists searched in order cost less than hash
    // tables, which allocate over a kilobyte each on their first insert.
    struct TierAttempts {
        QString tier;
        int attempts = 0;
    };
    struct TriedCandidate {
        decltype(routing::RouteCandidate::endpoint) endpoint;
        QString upstreamModel;
    };
    QVarLengthArray<TierAttempts, 2> m_attemptsByTier;
    QVarLengthArray<TriedCandidate, 2> m_tried;
};

} // namespace switchyard::resilience
