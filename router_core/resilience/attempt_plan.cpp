#include "resilience/attempt_plan.h"

#include <algorithm>

namespace switchyard::resilience {

QString skipReasonText(SkipReason reason)
{
    switch (reason) {
    case SkipReason::AlreadyTried:
        return QStringLiteral("already tried for this request");
    case SkipReason::BeyondFallbackLevel:
        return QStringLiteral("beyond the request's fallback level");
    case SkipReason::TierRetriesUsed:
        return QStringLiteral("its tier's retries are used up");
    case SkipReason::BreakerOpen:
        return QStringLiteral("not admitted by its breaker");
    case SkipReason::CoolingDown:
        return QStringLiteral("rate limited, cooling down");
    case SkipReason::FailoverCapacityFull:
        return QStringLiteral("failover capacity full");
    case SkipReason::OperationNotServed:
        return QStringLiteral("its model does not serve this endpoint");
    case SkipReason::CannotContinue:
        return QStringLiteral("it cannot continue a partial answer");
    }
    return {};
}

AttemptPlan::AttemptPlan(QList<routing::RouteCandidate> candidates, int fallbackLevel,
                         TierRetryLimit tierRetryLimit)
    : m_candidates(std::move(candidates)), m_fallbackLevel(fallbackLevel),
      m_tierRetryLimit(std::move(tierRetryLimit))
{}

int AttemptPlan::attemptsInTier(const QString &tier) const
{
    for (const TierAttempts &counted : m_attemptsByTier) {
        if (counted.tier == tier)
            return counted.attempts;
    }
    return 0;
}

bool AttemptPlan::tierHasRoom(const QString &tier) const
{
    if (tier.isEmpty())
        return true;
    const int retries = m_tierRetryLimit ? m_tierRetryLimit(tier) : -1;
    return retries < 0 || attemptsInTier(tier) <= retries;
}

std::optional<SkipReason> AttemptPlan::ownCheck(int index) const
{
    const routing::RouteCandidate &candidate = m_candidates[index];
    for (const TriedCandidate &tried : m_tried) {
        if (tried.endpoint == candidate.endpoint && tried.upstreamModel == candidate.upstreamModel)
            return SkipReason::AlreadyTried;
    }
    if (candidate.degradationLevel > m_fallbackLevel)
        return SkipReason::BeyondFallbackLevel;
    if (!tierHasRoom(candidate.tier))
        return SkipReason::TierRetriesUsed;
    return std::nullopt;
}

int AttemptPlan::takeNext(const Gate &gate, QList<CandidateSkip> *skipped)
{
    while (m_next < m_candidates.size()) {
        const int index = m_next++;
        std::optional<SkipReason> reason = ownCheck(index);
        if (!reason && gate)
            reason = gate(m_candidates.at(index), isFailover(index));
        if (reason) {
            if (skipped)
                skipped->append({index, *reason});
            continue;
        }
        m_lastTaken = index;
        return index;
    }
    return -1;
}

void AttemptPlan::switchToFallback(const QList<routing::RouteCandidate> &candidates)
{
    m_next = int(m_candidates.size());
    m_candidates.append(candidates);
    m_attemptsByTier.clear();
}

bool AttemptPlan::anyCandidateLeft() const
{
    for (int index = m_next; index < m_candidates.size(); ++index) {
        if (!ownCheck(index))
            return true;
    }
    return false;
}

void AttemptPlan::recordAttempt(int candidateIndex)
{
    const routing::RouteCandidate &candidate = m_candidates.at(candidateIndex);
    ++m_attempts;
    const auto tier = std::find_if(m_attemptsByTier.begin(), m_attemptsByTier.end(),
                                   [&](const TierAttempts &t) { return t.tier == candidate.tier; });
    if (tier != m_attemptsByTier.end())
        ++tier->attempts;
    else
        m_attemptsByTier.append({candidate.tier, 1});
    m_tried.append({candidate.endpoint, candidate.upstreamModel});
    m_lastTaken = candidateIndex;
}

bool AttemptPlan::isFailover(int candidateIndex) const
{
    const routing::RouteCandidate &candidate = m_candidates[candidateIndex];
    if (m_attempts == 0)
        return candidate.role != routing::CandidateRole::Primary;
    return m_lastTaken < 0 || m_candidates[m_lastTaken].endpoint != candidate.endpoint;
}

} // namespace switchyard::resilience
