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
    // Every request's first attempt: the base as it is, without a call into the maths library.
    if (earlierAttemptsInTier <= 0)
        return base;
    const double stretched =
        double(base.count()) * std::pow(gradient, std::clamp(earlierAttemptsInTier, 0, 30));
    // A day is the longest duration the config accepts; a stretched one stays below it too.
    constexpr double kLongestMs = 24.0 * 3600.0 * 1000.0;
    return milliseconds(std::llround(std::min(stretched, kLongestMs)));
}

QString retryStopCode(RetryStop stop)
{
    switch (stop) {
    case RetryStop::AttemptsExhausted:
        return QStringLiteral("attempts_exhausted");
    case RetryStop::RetryBudgetSpent:
        return QStringLiteral("retry_budget_exhausted");
    default:
        return {};
    }
}

RetryDecision decideRetry(const RetryInput &input, const config::RetryConfig &config)
{
    const auto giveUp = [](RetryStop stop, const QString &reason) {
        return RetryDecision{RetryAction::GiveUp, milliseconds(0), reason, stop};
    };
    if (input.answerReachedClient)
        return giveUp(RetryStop::AnswerStarted,
                      QStringLiteral("the answer had begun to reach the client; a second "
                                     "provider would repeat or contradict it"));
    if (!mayTryAnotherEndpoint(input.error))
        return giveUp(RetryStop::NotRetryable,
                      QStringLiteral("the request itself was refused; any endpoint would "
                                     "refuse it alike"));
    if (input.attemptsMade >= config.maxAttempts)
        return giveUp(RetryStop::AttemptsExhausted,
                      QStringLiteral("%1 attempt(s) made, the most `retries.max_attempts` allows")
                          .arg(input.attemptsMade));
    // A rate limit says nothing bad about the next endpoint: no reason to make it wait.
    if (input.error == ErrorClass::RateLimited)
        return RetryDecision{RetryAction::NextEndpoint, milliseconds(0),
                             QStringLiteral("rate limited: the endpoint cools down, the next "
                                            "endpoint at once"),
                             RetryStop::None};

    const milliseconds backoff = backoffDelay(config, input.attemptsMade - 1, input.jitterDraw);
    if (input.remainingBudget && backoff >= *input.remainingBudget)
        return giveUp(RetryStop::TimeBudget,
                      QStringLiteral("a backoff of %1 does not fit the %2 left of the time "
                                     "budget")
                          .arg(msText(backoff), msText(*input.remainingBudget)));
    return RetryDecision{RetryAction::NextEndpoint, backoff,
                         QStringLiteral("next endpoint after a backoff of %1").arg(msText(backoff)),
                         RetryStop::None};
}

RetryDecision decideCoolDownWait(milliseconds coolDownLeft, bool alreadyWaited, int attemptsMade,
                                 std::optional<milliseconds> remainingBudget,
                                 const config::RetryConfig &config)
{
    const auto giveUp = [](RetryStop stop, const QString &reason) {
        return RetryDecision{RetryAction::GiveUp, milliseconds(0), reason, stop};
    };
    if (alreadyWaited)
        return giveUp(RetryStop::AlreadyWaited,
                      QStringLiteral("this request already waited out one cool-down"));
    if (attemptsMade >= config.maxAttempts)
        return giveUp(RetryStop::AttemptsExhausted,
                      QStringLiteral("%1 attempt(s) made, the most `retries.max_attempts` allows")
                          .arg(attemptsMade));
    if (coolDownLeft > config.maxRetryAfter)
        return giveUp(RetryStop::WaitTooLong,
                      QStringLiteral("a cool-down of %1 is longer than `retries.max_retry_after` "
                                     "(%2)")
                          .arg(msText(coolDownLeft), msText(config.maxRetryAfter)));
    if (remainingBudget && coolDownLeft >= *remainingBudget)
        return giveUp(RetryStop::TimeBudget,
                      QStringLiteral("a cool-down of %1 does not fit the %2 left of the time "
                                     "budget")
                          .arg(msText(coolDownLeft), msText(*remainingBudget)));
    return RetryDecision{
        RetryAction::SameEndpoint, coolDownLeft,
        QStringLiteral("no other endpoint can take it: wait out the cool-down of %1 once")
            .arg(msText(coolDownLeft)),
        RetryStop::None};
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
