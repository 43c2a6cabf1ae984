#include "execution/final_error.h"

#include "config/config.h"
#include "health/health_registry.h"
#include "routing/request_context.h"

#include <QSet>

namespace switchyard::execution {

using resilience::ErrorClass;
using resilience::RetryStop;
using std::chrono::milliseconds;

namespace {

QString secondsText(milliseconds wait)
{
    return QStringLiteral("%1 s").arg(protocol::ApiError::retryAfterSeconds(wait));
}

} // namespace

protocol::ApiError upstreamError(int status, const QString &code, const QString &message)
{
    return protocol::ApiError{status, message, QStringLiteral("upstream_error"), {}, code, {}};
}

QString millisecondsText(milliseconds duration)
{
    return QStringLiteral("%1 ms").arg(duration.count());
}

QByteArray retryAfterSeconds(milliseconds wait)
{
    return QByteArray::number(protocol::ApiError::retryAfterSeconds(wait));
}

FinalErrorWording::FinalErrorWording(const FailureHistory &failures,
                                     const resilience::AttemptPlan &plan,
                                     const routing::RouteDecision &decision,
                                     const health::HealthRegistry &health,
                                     const config::Config &config,
                                     const routing::RequestContext &context, const QString &model,
                                     bool deadlineIsClientBudget)
    : m_failures(failures), m_plan(plan), m_decision(decision), m_health(health), m_config(config),
      m_context(context), m_model(model), m_deadlineIsClientBudget(deadlineIsClientBudget)
{}

QString FinalErrorWording::triedProviders() const
{
    return m_failures.attemptSummaries.join(QStringLiteral(", "));
}

protocol::ApiError FinalErrorWording::budgetError() const
{
    const QString last = m_failures.lastError ? m_failures.lastError->message
                                              : QStringLiteral("no provider answered in time.");
    return upstreamError(
        504, QStringLiteral("timeout_budget_exhausted"),
        QStringLiteral("The request's time budget of %1 "
                       "(x-switchyard-timeout-budget-ms) ran out after %2 "
                       "attempt(s); the last: %3")
            .arg(millisecondsText(m_context.timeoutBudget.value_or(milliseconds(0))))
            .arg(m_plan.attempts())
            .arg(last));
}

protocol::ApiError FinalErrorWording::retriesStoppedError() const
{
    // The last provider's status and type (a 429 stays a rate limit for the client's SDK),
    // with the limit that ended the retries as the code.
    protocol::ApiError error =
        m_failures.lastError
            ? *m_failures.lastError
            : upstreamError(502, QString(), QStringLiteral("no provider answered."));
    const QString limit =
        m_failures.retryStop == RetryStop::AttemptsExhausted
            ? QStringLiteral("the attempt cap of %1 (retries.max_attempts) was reached")
                  .arg(m_config.resilience.retries.maxAttempts)
            : m_failures.retryStopReason;
    error.code = resilience::retryStopCode(m_failures.retryStop);
    error.message =
        QStringLiteral("No answer after %1 attempt(s): %2. Tried %3; the last: %4")
            .arg(m_plan.attempts())
            .arg(limit, triedProviders(),
                 m_failures.lastError ? m_failures.lastError->message : QStringLiteral("none"));
    if (m_failures.retryStop == RetryStop::RetryBudgetSpent && error.retryAfter.isEmpty())
        error.retryAfter = retryAfterSeconds(kRetryAfterNoEndpoint);
    return error;
}

std::optional<protocol::ApiError> FinalErrorWording::rateLimitedError() const
{
    QStringList cooling;
    milliseconds soonest = milliseconds::max();
    QSet<int> named;
    for (int index : m_failures.coolingCandidates) {
        const routing::RouteCandidate &cooled = m_plan.candidates()[index];
        const milliseconds left = m_health.coolDownLeft(cooled.endpoint);
        if (left.count() <= 0 || named.contains(cooled.endpoint))
            continue;
        named.insert(cooled.endpoint);
        soonest = std::min(soonest, left);
        cooling.append(QStringLiteral("`%1` for %2").arg(cooled.providerId, secondsText(left)));
    }
    if (cooling.isEmpty())
        return std::nullopt;
    QString message = QStringLiteral("Every endpoint for model `%1` that could take the request "
                                     "is rate limited: %2 more.")
                          .arg(m_model, cooling.join(QStringLiteral(", ")));
    if (m_failures.lastError && m_failures.lastError->status == 429)
        message += QStringLiteral(" The last said: %1").arg(m_failures.lastError->message);
    return protocol::ApiError{429,
                              message,
                              QStringLiteral("rate_limit_error"),
                              {},
                              QStringLiteral("upstream_rate_limited"),
                              retryAfterSeconds(soonest)};
}

protocol::ApiError FinalErrorWording::unavailableError() const
{
    // Every endpoint that could serve is down: when the soonest comes back, and why each is out.
    QStringList reasons;
    milliseconds soonest = milliseconds::max();
    const auto describe = [&](int endpoint, const QString &id, const QString &fallback) {
        const qint64 untilAdmit = m_health.msUntilAdmit(endpoint);
        if (untilAdmit >= 0)
            soonest = std::min(soonest, milliseconds(untilAdmit));
        const QString reason = m_health.unavailableReason(endpoint);
        reasons.append(QStringLiteral("`%1` (%2%3)")
                           .arg(id, reason.isEmpty() ? fallback : reason,
                                untilAdmit > 0 ? QStringLiteral("; half-open in %1")
                                                     .arg(secondsText(milliseconds(untilAdmit)))
                                               : QString()));
    };
    protocol::ApiError error;
    if (m_decision.candidates.isEmpty()) {
        // The router found no endpoint it could choose (all unavailable, or no agent idle).
        for (int endpoint : m_decision.unavailable)
            describe(endpoint, m_health.providerConfig(endpoint).id, {});
        error = protocol::ApiError::serviceUnavailable(
            reasons.isEmpty()
                ? QStringLiteral("No endpoint can take this request now: %1.")
                      .arg(m_decision.steps.isEmpty() ? QString() : m_decision.steps.last().detail)
                : QStringLiteral("No endpoint for model `%1` can take the request now: %2.")
                      .arg(m_model, reasons.join(QStringLiteral(", "))));
        error.code = QStringLiteral("no_route_candidate");
    } else {
        for (const resilience::CandidateSkip &skip : m_failures.skips) {
            const routing::RouteCandidate &skipped = m_plan.candidates()[skip.candidateIndex];
            describe(skipped.endpoint, skipped.providerId, resilience::skipReasonText(skip.reason));
        }
        error = protocol::ApiError::serviceUnavailable(
            QStringLiteral("No endpoint for model `%1` could take the request: %2.")
                .arg(m_model, reasons.join(QStringLiteral(", "))));
        error.code = QStringLiteral("no_endpoint_available");
    }
    error.retryAfter = retryAfterSeconds(
        soonest == milliseconds::max() || soonest.count() == 0 ? kRetryAfterNoEndpoint : soonest);
    return error;
}

protocol::ApiError FinalErrorWording::finalError() const
{
    if (m_failures.budgetRanOut && m_deadlineIsClientBudget)
        return budgetError();
    if (m_failures.retryStop == RetryStop::AttemptsExhausted ||
        m_failures.retryStop == RetryStop::RetryBudgetSpent)
        return retriesStoppedError();
    if (m_failures.lastErrorClass != ErrorClass::RequestRejected) {
        if (std::optional<protocol::ApiError> limited = rateLimitedError())
            return *limited;
    }
    if (m_failures.lastError)
        return *m_failures.lastError;
    if (m_failures.shed) {
        protocol::ApiError error = protocol::ApiError::serviceUnavailable(
            QStringLiteral("Every endpoint of tier `%1` is unavailable and its fallbacks take "
                           "only part of its traffic; this request was not admitted. Retry "
                           "shortly.")
                .arg(m_decision.tier));
        error.code = QStringLiteral("tier_degraded");
        error.retryAfter = retryAfterSeconds(kRetryAfterNoEndpoint);
        return error;
    }
    return unavailableError();
}

} // namespace switchyard::execution
