#include "resilience/admission.h"

#include "routing/stable_hash.h"

#include <algorithm>
#include <cmath>

namespace switchyard::resilience {

using std::chrono::milliseconds;

AdmissionController::AdmissionController(const config::ConfigStore &store,
                                         const timing::Clock &clock,
                                         std::unique_ptr<limits::TenantQuota> quota)
    : m_store(store), m_clock(clock),
      m_quota(quota ? std::move(quota) : std::make_unique<limits::InMemoryTenantQuota>())
{}

AdmissionController::~AdmissionController() = default;

std::optional<config::TenantLimit> AdmissionController::limitFor(const QString &tenant) const
{
    const config::AdmissionConfig &rules = this->rules();
    if (const auto it = rules.tenants.constFind(tenant); it != rules.tenants.cend())
        return *it;
    if (rules.defaultTenantRpm > 0)
        return config::TenantLimit{rules.defaultTenantRpm, 0};
    return std::nullopt;
}

AdmissionVerdict AdmissionController::admit(const QString &tenant, int depth, int requestsInFlight,
                                            const QString &keyId)
{
    const config::AdmissionConfig &rules = this->rules();
    if (depth > rules.maxDepth) {
        return {
            AdmissionVerdict::Kind::LoopDetected,
            protocol::ApiError{508,
                               QStringLiteral("The request has already passed through %1 "
                                              "Switchyard hop(s) (x-switchyard-depth: %1), more "
                                              "than `admission.max_depth` (%2) allows; it is "
                                              "probably looping between gateways.")
                                   .arg(depth)
                                   .arg(rules.maxDepth),
                               QStringLiteral("invalid_request_error"),
                               QStringLiteral("x-switchyard-depth"),
                               QStringLiteral("loop_detected"),
                               {}}};
    }
    if (requestsInFlight >= rules.maxInFlight) {
        return {AdmissionVerdict::Kind::Overloaded,
                protocol::ApiError{503,
                                   QStringLiteral("Switchyard already has %1 request(s) in flight, "
                                                  "its limit (`admission.max_in_flight`); retry "
                                                  "shortly.")
                                       .arg(requestsInFlight),
                                   QStringLiteral("server_error"),
                                   {},
                                   QStringLiteral("gateway_overloaded"),
                                   QByteArray("1")}};
    }
    if (m_spendCheck) {
        if (std::optional<protocol::ApiError> refusal = m_spendCheck(tenant, keyId))
            return {AdmissionVerdict::Kind::OverBudget, std::move(*refusal)};
    }
    const std::optional<config::TenantLimit> limit = limitFor(tenant);
    if (!limit)
        return {};
    const std::optional<milliseconds> wait = m_quota->take(tenant, *limit, m_clock.now());
    if (!wait)
        return {};
    const qint64 seconds = protocol::ApiError::retryAfterSeconds(*wait);
    const QString who = tenant.isEmpty()
                            ? QStringLiteral("Requests without x-switchyard-tenant share a limit "
                                             "of %1 per minute")
                                  .arg(limit->requestsPerMinute)
                            : QStringLiteral("Tenant `%1` is over its limit of %2 requests per "
                                             "minute")
                                  .arg(tenant)
                                  .arg(limit->requestsPerMinute);
    return {AdmissionVerdict::Kind::TenantRateLimited,
            protocol::ApiError{429,
                               who + QStringLiteral("; retry in %1 s.").arg(seconds),
                               QStringLiteral("rate_limit_error"),
                               {},
                               QStringLiteral("tenant_rate_limited"),
                               QByteArray::number(seconds)}};
}

int AdmissionController::failoverLimit(int capacity) const
{
    const double share = rules().failoverCapacityShare;
    if (share <= 0.0)
        return 0;
    // At least one, so an endpoint with a small capacity can still back up another at all.
    return std::max(1, int(std::floor(share * capacity + 1e-9)));
}

bool AdmissionController::admitsToDegradedFallback(QByteArrayView requestId) const
{
    // Its own seed, so the requests shed are not the ones a canary split sends one way.
    constexpr quint64 kShedSeed = 0x73686564; // "shed" in ASCII
    return routing::unitInterval(routing::stableHash(requestId, kShedSeed)) <
           rules().degradedAdmitShare;
}

} // namespace switchyard::resilience
