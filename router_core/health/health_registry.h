#pragma once

#include "config/config.h"
#include "engine_snapshot.h"
#include "health/latency_window.h"

#include <QList>
#include <QString>
#include <bitset>

namespace switchyard::health {

// How one upstream call ended, as far as the provider's health is concerned.
enum class CallOutcome {
    Success,
    CallFailure,  // connect error, timeout, 429, 5xx, stream cut: the provider's fault
    Unusable,     // an answer arrived but cannot be used (broken JSON): counted as quality
    RequestFault, // the request itself was refused (400, 401, 404, 413, 422): not the provider's
    Cancelled,    // the client went away first: says nothing about the provider
};

// The single owner of per-provider state. Routing and execution read it; the console gets copies.
// Lives on the engine thread; not thread-safe by design (the hot path takes no locks).
class HealthRegistry {
public:
    // Consecutive call failures after which a provider is reported down. The resilience work
    // turns this into the circuit breaker of DESIGN.md; the number is the same.
    static constexpr int kDownAfterConsecutiveFailures = 5;
    static constexpr int kRecentCalls = 20;

    explicit HealthRegistry(const QList<config::ProviderConfig> &providers);

    int providerCount() const { return int(m_providers.size()); }
    int indexOf(const QString &providerId) const;

    // The executor asks before every attempt. False while the breaker is open, or the endpoint is
    // disabled or draining; a half-open breaker admits exactly one probe call.
    bool tryAdmit(int provider);
    void callStarted(int provider);
    // latencyMs: whole call; timeToFirstTokenMs: first streamed event, negative when not streamed.
    void callFinished(int provider, CallOutcome outcome, double latencyMs,
                      double timeToFirstTokenMs, const QString &failureDescription = {});

    ProviderState state(int provider) const { return m_providers[provider].state; }
    int inFlight(int provider) const { return m_providers[provider].inFlight; }
    int providersUp() const; // providers not reported down
    bool anyProviderUp() const { return providersUp() > 0; }

    QList<ProviderHealth> snapshot() const;

    // What the router reads to rank endpoints (the seam between health and routing).
    // May the router pick this endpoint now? False while its breaker is open, or it is disabled
    // or draining.
    bool selectable(int provider) const;
    double latencyP50Ms(int provider) const;       // negative when nothing has been measured yet
    double recentSuccessRatio(int provider) const; // over the recent-call window; 1 when empty
    int recentCallCount(int provider) const;       // calls in the window, for neutral starts
    // Fraction of its usual share an endpoint may take: below 1 while it ramps up after
    // recovering.
    double trafficShare(int provider) const;

private:
    struct ProviderRecord {
        QString id;
        QString kind;
        QStringList models;
        ProviderState state = ProviderState::Up;
        QString lastFailure;
        int inFlight = 0;
        quint64 requests = 0;
        quint64 errors = 0;
        int consecutiveFailures = 0;
        std::bitset<kRecentCalls> recentFailed; // ring of the last calls' results
        int recentNext = 0;
        int recentCount = 0;
        LatencyWindow latency;
        LatencyWindow timeToFirstToken;

        double recentFailurePercent() const;
    };

    static void updateState(ProviderRecord &record);

    QList<ProviderRecord> m_providers;
};

} // namespace switchyard::health
