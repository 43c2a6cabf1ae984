#pragma once

#include "protocol/openai_error.h"
#include "resilience/attempt_plan.h"
#include "resilience/error_class.h"
#include "resilience/retry_policy.h"
#include "routing/route_decision.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <chrono>
#include <memory>
#include <optional>

namespace switchyard::config {
struct Config;
}
namespace switchyard::health {
class HealthRegistry;
}
namespace switchyard::routing {
struct RequestContext;
}

namespace switchyard::execution {

// How soon a client refused for want of an endpoint may usefully ask again, when no endpoint
// says when it will be back.
inline constexpr std::chrono::milliseconds kRetryAfterNoEndpoint{1000};

// The words the final errors share with an attempt's own.
protocol::ApiError upstreamError(int status, const QString &code, const QString &message);
QString millisecondsText(std::chrono::milliseconds duration);
// Retry-After counts whole seconds: rounded up, so a client never comes back too early.
QByteArray retryAfterSeconds(std::chrono::milliseconds wait);

// How one request has failed so far: what its attempts ended with, why the retries stopped, the
// endpoints passed over or cooling down. The execution writes it as it runs; the client's error,
// when nothing answered, is worded from it.
struct FailureHistory {
    // Each attempt's provider and how it ended, for errors that name them.
    QStringList attemptSummaries;
    std::unique_ptr<protocol::ApiError> lastError;
    QString lastErrorProvider;
    resilience::ErrorClass lastErrorClass = resilience::ErrorClass::None;
    resilience::RetryStop retryStop = resilience::RetryStop::None;
    QString retryStopReason;
    QList<resilience::CandidateSkip> skips;
    QList<int> coolingCandidates; // answered 429 or passed over while cooling down
    bool shed = false;            // a degraded tier's fallbacks did not admit this request
    bool budgetRanOut = false;
};

// Words the error a client gets when no provider answered, or when its time budget ran out: from
// how the request failed, the route it followed and the state of its endpoints now. Made when
// the error is due; it only borrows.
class FinalErrorWording {
public:
    FinalErrorWording(const FailureHistory &failures, const resilience::AttemptPlan &plan,
                      const routing::RouteDecision &decision, const health::HealthRegistry &health,
                      const config::Config &config, const routing::RequestContext &context,
                      const QString &model, bool deadlineIsClientBudget);

    // The error of a request that ends without an answer.
    protocol::ApiError finalError() const;
    // The client's time budget (x-switchyard-timeout-budget-ms) ran out, before an answer or
    // while it streamed.
    protocol::ApiError budgetError() const;

private:
    protocol::ApiError retriesStoppedError() const;
    std::optional<protocol::ApiError> rateLimitedError() const;
    protocol::ApiError unavailableError() const;
    QString triedProviders() const;

    const FailureHistory &m_failures;
    const resilience::AttemptPlan &m_plan;
    const routing::RouteDecision &m_decision;
    const health::HealthRegistry &m_health;
    const config::Config &m_config;
    const routing::RequestContext &m_context;
    const QString &m_model; // the client's
    bool m_deadlineIsClientBudget;
};

} // namespace switchyard::execution
