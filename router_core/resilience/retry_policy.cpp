#include "resilience/retry_policy.h"

#include <algorithm>
#include <cmath>

namespace switchyard::resilience {

using std::chrono::milliseconds;

namespace {

QString msText(milliseconds duration)
{
    return QStringLiteral("%1 ms").arg(duration.count());
}

} // namespace

milliseconds backoffDelay(const config::RetryConfig &config, int retryIndex, double jitterDraw)
{
    // Doubling past 2^30 overflows long before it matters; the cap applies well before that.
    const int doublings = std::clamp(retryIndex, 0, 30);
    const double exponential = double(config.backoffBase.count()) * std::ldexp(1.0, doublings);
    const double capped = std::min(exponential, double(config.backoffMax.count()));
    const double jitter = double(config.backoffJitter.count()) * std::clamp(jitterDraw, 0.0, 1.0);
    return milliseconds(std::llround(capped + jitter));
}

milliseconds stretchedTimeout(milliseconds base, double gradient, int earlierAttemptsInTier)
{
    const double stretched =
        double(base.count()) * std::pow(gradient, std::clamp(earlierAttemptsInTier, 0, 30));
    // A day is the longest duration the config accepts; a stretched one stays below it too.
    constexpr double kLongestMs = 24.0 * 3600.0 * 1000.0;
    return milliseconds(std::llround(std::min(stretched, kLongestMs)));
}

RetryDecision decideRetry(const RetryInput &input, const config::RetryConfig &config)
{
    const auto giveUp = [](const QString &reason) {
        return RetryDecision{RetryAction::GiveUp, milliseconds(0), reason};
    };
    if (input.answerReachedClient)
        return giveUp(QStringLiteral("the answer had begun to reach the client; a second "
                                     "provider would repeat or contradict it"));
    if (!mayTryAnotherEndpoint(input.error))
        return giveUp(QStringLiteral("the request itself was refused; any endpoint would "
                                     "refuse it alike"));
    if (input.attemptsMade >= config.maxAttempts)
        return giveUp(QStringLiteral("%1 attempt(s) made, the most `retries.max_attempts` allows")
                          .arg(input.attemptsMade));

    const auto fits = [&input](milliseconds wait) {
        return !input.remainingBudget || wait < *input.remainingBudget;
    };
    QString why;
    if (input.error == ErrorClass::RateLimited && input.retryAfter) {
        const milliseconds wait = *input.retryAfter;
        if (wait > config.maxRetryAfter) {
            why = QStringLiteral("Retry-After of %1 is longer than `retries.max_retry_after` "
                                 "(%2); ")
                      .arg(msText(wait), msText(config.maxRetryAfter));
        } else if (!fits(wait)) {
            why = QStringLiteral("Retry-After of %1 does not fit the %2 left of the time "
                                 "budget; ")
                      .arg(msText(wait), msText(*input.remainingBudget));
        } else if (!input.tierAllowsAnotherAttempt) {
            why = QStringLiteral("the tier's retries are used up; ");
        } else {
            return RetryDecision{
                RetryAction::SameEndpoint, wait,
                QStringLiteral("same endpoint after its Retry-After of %1").arg(msText(wait))};
        }
    }

    const milliseconds backoff = backoffDelay(config, input.attemptsMade - 1, input.jitterDraw);
    if (!fits(backoff))
        return giveUp(why + QStringLiteral("a backoff of %1 does not fit the %2 left of the time "
                                           "budget")
                                .arg(msText(backoff), msText(*input.remainingBudget)));
    return RetryDecision{
        RetryAction::NextEndpoint, backoff,
        why + QStringLiteral("next endpoint after a backoff of %1").arg(msText(backoff))};
}

RetryBudget::RetryBudget(const config::ConfigStore &store) : m_store(store) {}

int RetryBudget::allowedRetriesInFlight() const
{
    // The small epsilon keeps 20 % of 10 at 2 despite 0.2 having no exact binary form.
    const config::RetryConfig &rules = m_store.config().resilience.retries;
    const int share = int(std::floor(rules.budgetPercent / 100.0 * m_requestsInFlight + 1e-9));
    return std::max(rules.minRetriesInFlight, share);
}

bool RetryBudget::tryStartRetry()
{
    if (m_retriesInFlight >= allowedRetriesInFlight()) {
        ++m_refused;
        return false;
    }
    ++m_retriesInFlight;
    ++m_granted;
    m_peak = std::max(m_peak, m_retriesInFlight);
    return true;
}

} // namespace switchyard::resilience
