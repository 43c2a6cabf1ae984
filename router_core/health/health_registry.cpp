#include "health/health_registry.h"

#include <algorithm>

namespace switchyard::health {

namespace {
// Above this share of failures among the recent calls a provider is shown as degraded.
constexpr double kDegradedFailurePercent = 20.0;
} // namespace

HealthRegistry::HealthRegistry(const QList<config::ProviderConfig> &providers)
{
    m_providers.reserve(providers.size());
    for (const config::ProviderConfig &provider : providers) {
        ProviderRecord record;
        record.id = provider.id;
        record.kind = config::kindName(provider.kind);
        for (const config::ModelRoute &model : provider.models)
            record.models.append(model.publicName);
        m_providers.append(std::move(record));
    }
}

int HealthRegistry::indexOf(const QString &providerId) const
{
    for (int i = 0; i < m_providers.size(); ++i) {
        if (m_providers[i].id == providerId)
            return i;
    }
    return -1;
}

void HealthRegistry::callStarted(int provider)
{
    ++m_providers[provider].inFlight;
}

void HealthRegistry::callFinished(int provider, CallOutcome outcome, double latencyMs,
                                  double timeToFirstTokenMs, const QString &failureDescription)
{
    ProviderRecord &record = m_providers[provider];
    --record.inFlight;
    if (outcome == CallOutcome::Cancelled)
        return;

    ++record.requests;
    const bool failed = outcome == CallOutcome::CallFailure;
    if (failed || outcome == CallOutcome::Unusable)
        ++record.errors;
    if (outcome == CallOutcome::Unusable || outcome == CallOutcome::RequestFault)
        return; // quality and the request's own faults never move provider health

    record.recentFailed[record.recentNext] = failed;
    record.recentNext = (record.recentNext + 1) % kRecentCalls;
    record.recentCount = std::min(record.recentCount + 1, kRecentCalls);
    record.consecutiveFailures = failed ? record.consecutiveFailures + 1 : 0;
    if (failed)
        record.lastFailure = failureDescription;
    if (!failed) {
        record.latency.record(latencyMs);
        if (timeToFirstTokenMs >= 0)
            record.timeToFirstToken.record(timeToFirstTokenMs);
    }
    updateState(record);
}

int HealthRegistry::providersUp() const
{
    return int(std::count_if(m_providers.cbegin(), m_providers.cend(), [](const auto &record) {
        return record.state != ProviderState::Down;
    }));
}

double HealthRegistry::ProviderRecord::recentFailurePercent() const
{
    if (recentCount == 0)
        return 0.0;
    int failures = 0;
    for (int i = 0; i < recentCount; ++i)
        failures += recentFailed[i] ? 1 : 0;
    return 100.0 * failures / recentCount;
}

void HealthRegistry::updateState(ProviderRecord &record)
{
    if (record.consecutiveFailures >= kDownAfterConsecutiveFailures)
        record.state = ProviderState::Down;
    else if (record.recentFailurePercent() > kDegradedFailurePercent)
        record.state = ProviderState::Degraded;
    else
        record.state = ProviderState::Up;
}

QList<ProviderHealth> HealthRegistry::snapshot() const
{
    QList<ProviderHealth> providers;
    providers.reserve(m_providers.size());
    for (const ProviderRecord &record : m_providers) {
        ProviderHealth health;
        health.id = record.id;
        health.kind = record.kind;
        health.models = record.models;
        health.state = record.state;
        health.consecutiveFailures = record.consecutiveFailures;
        health.recentCalls = record.recentCount;
        health.lastFailure = record.lastFailure;
        health.inFlight = record.inFlight;
        health.requests = record.requests;
        health.errors = record.errors;
        health.errorRatePercent = record.recentFailurePercent();
        health.p50LatencyMs = record.latency.percentile(50);
        health.p95LatencyMs = record.latency.percentile(95);
        health.p50TimeToFirstTokenMs = record.timeToFirstToken.percentile(50);
        providers.append(std::move(health));
    }
    return providers;
}

bool HealthRegistry::tryAdmit(int provider)
{
    return selectable(provider);
}

bool HealthRegistry::selectable(int provider) const
{
    return m_providers[provider].state != ProviderState::Down;
}

double HealthRegistry::latencyP50Ms(int provider) const
{
    const LatencyWindow &window = m_providers[provider].latency;
    return window.percentile(50);
}

double HealthRegistry::recentSuccessRatio(int provider) const
{
    const ProviderRecord &record = m_providers[provider];
    if (record.recentCount == 0)
        return 1.0;
    return 1.0 - record.recentFailurePercent() / 100.0;
}

int HealthRegistry::recentCallCount(int provider) const
{
    return m_providers[provider].recentCount;
}

double HealthRegistry::trafficShare(int) const
{
    return 1.0;
}

} // namespace switchyard::health
