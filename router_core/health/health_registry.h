#pragma once

#include "config/breaker_config.h"
#include "config/config.h"
#include "config/config_store.h"
#include "health/agent_registry.h"
#include "health/call_windows.h"
#include "health/endpoint_state.h"
#include "health/latency_window.h"
#include "timing/clock.h"

#include <QList>
#include <QString>
#include <functional>
#include <optional>
#include <vector>

namespace switchyard::health {

// How one upstream call ended, as far as the provider's health is concerned.
enum class CallOutcome {
    Success,
    CallFailure,  // connect error, timeout, 429, 5xx, stream cut: the provider's fault
    Unusable,     // an answer arrived but cannot be used (broken JSON): counted as quality
    RequestFault, // the request itself was refused (400, 401, 404, 413, 422): not the provider's
    Cancelled,    // the client went away first: says nothing about the provider
    RateLimited,  // 429: the provider asks for a pause; a cool-down (coolDown()), not a failure
};

// The single owner of per-endpoint state: identity, circuit breaker, operator state, probe health,
// counters, latency windows, in-flight and failed-over calls, recovery ramp, simulator knobs and
// registered agents. Routing and execution read it; the console gets copies; every state change
// is published as a BreakerEvent. An endpoint is known by its id; its slot (the int every method
// takes) is fixed for the registry's life and never reused, so a slot read under one config
// snapshot still names the same endpoint under the next. The breaker and probe rules are read
// from the config store's current snapshot whenever they apply.
// Lives on the engine thread; not thread-safe by design (the hot path takes no locks).
//
// The breaker (docs/resilience.md, "Health and the circuit breaker"):
//   CLOSED --(N consecutive failures | failure rate over the window | slow p95)--> OPEN
//   OPEN --(open period over)--> HALF_OPEN --(one probe succeeds)--> CLOSED, ramping
//                                          --(the probe fails)-----> OPEN, period doubled
// Failed active health probes hold the breaker OPEN until enough probes succeed again.
class HealthRegistry {
public:
    // The default of config::BreakerConfig::consecutiveFailures, for tests that count calls.
    static constexpr int kDownAfterConsecutiveFailures = 5;
    // Breaker events kept for the console's timeline; older ones are dropped.
    static constexpr int kEventCapacity = 200;

    // Starts with an endpoint for each provider of the store's current snapshot.
    explicit HealthRegistry(const config::ConfigStore &store,
                            const timing::Clock &clock = timing::SteadyClock::instance());
    HealthRegistry(const HealthRegistry &) = delete;
    HealthRegistry &operator=(const HealthRegistry &) = delete;

    // Slots are stable for the registry's life: a retired endpoint keeps its slot.
    int providerCount() const { return int(m_providers.size()); }
    // The live endpoint with this id; -1 when none (retired endpoints are not found).
    int indexOf(const QString &providerId) const;
    // The live endpoint with this id that the config file declares; -1 for none and for agents.
    int configuredIndexOf(const QString &providerId) const;
    // Brings the configured endpoints in line with the providers of a snapshot about to be
    // applied (control::OperatorCommands::applyConfig calls it just before the store swaps): an
    // id it keeps keeps its slot and its state (its definition is refreshed), a new id gets a
    // new slot, an id it drops is retired. An agent whose id the snapshot now declares is
    // deregistered; other agents are left alone.
    void syncConfiguredEndpoints(const config::Config &next);
    const config::ProviderConfig &providerConfig(int provider) const
    {
        return m_providers[provider].config;
    }
    // Adds an endpoint at runtime (registered agents); returns its slot.
    int addProvider(const config::ProviderConfig &provider);
    // Takes an endpoint out for good: never selectable, hidden from snapshots and probes.
    void retireProvider(int provider);
    bool isRetired(int provider) const { return m_providers[provider].retired; }

    // The executor asks before every attempt. False while the breaker is open, probes report
    // the endpoint unhealthy, or an operator disabled or drains it; a half-open breaker admits
    // exactly one call until that call's outcome is reported.
    bool tryAdmit(int provider);
    // Milliseconds until tryAdmit may admit: 0 now; the rest of the open period while open;
    // -1 when time alone will not do it (disabled, draining, probe-unhealthy, half-open with its
    // probe call out, retired).
    qint64 msUntilAdmit(int provider) const;
    void callStarted(int provider);
    // A 429 asked for a pause: until `period` has passed, tryAdmit refuses the endpoint while
    // its breaker is untouched. A longer cool-down already running is kept.
    void coolDown(int provider, std::chrono::milliseconds period);
    // Time left of the endpoint's cool-down, rounded up; zero when it is not cooling down.
    std::chrono::milliseconds coolDownLeft(int provider) const;
    // Why the endpoint takes no call now, in words for an error message ("breaker open: 5
    // consecutive call failures", "disabled by an operator"); empty when it admits calls.
    QString unavailableReason(int provider) const;
    // Whether a successful call's times say anything about the provider's speed.
    enum class CallTiming {
        Measured,
        // The engine loop ran later than `admission.overload_lag` when the answer began: its
        // times are the gateway's backlog, so they feed neither the latency windows nor the
        // slow rule. The call still counts as a success.
        GatewayLate,
    };
    // latencyMs: whole call; timeToFirstTokenMs: first streamed event, negative when not streamed.
    void callFinished(int provider, CallOutcome outcome, double latencyMs,
                      double timeToFirstTokenMs, const QString &failureDescription = {},
                      CallTiming timing = CallTiming::Measured);
    // One active health probe's result; `detail` says what failed ("HTTP 503", "timed out").
    void probeResult(int provider, bool ok, const QString &detail = {});
    // Operator actions from the console and the admin API.
    void applyAction(int provider, ProviderAction action);
    // Moves breakers whose open period is over to HALF_OPEN. The engine calls it on a timer so
    // the console sees the change without traffic; tryAdmit does the same for its endpoint.
    void updateTimedStates();

    ProviderState state(int provider) const;
    BreakerState breakerState(int provider) const { return m_providers[provider].breaker; }
    OperatorState operatorState(int provider) const { return m_providers[provider].operatorState; }
    bool probeHealthy(int provider) const { return !m_providers[provider].probeUnhealthy; }
    int inFlight(int provider) const { return m_providers[provider].inFlight; }

    // Failed-over calls in flight on an endpoint (docs/resilience.md, "Admission"): a call may
    // start only while fewer than `limit` are.
    bool tryStartFailover(int provider, int limit);
    void failoverFinished(int provider);
    int failoverInFlight(int provider) const { return m_providers[provider].failoverInFlight; }

    // The knobs last set for a simulated endpoint (defaults when never set). The simulator
    // itself runs on its own thread; whoever sets knobs here also hands them over to it.
    const SimulatorKnobs &simulatorKnobs(int provider) const
    {
        return m_providers[provider].simulatorKnobs;
    }
    void setSimulatorKnobs(int provider, const SimulatorKnobs &knobs);

    // Agents that registered themselves; each is also an endpoint here.
    AgentRegistry &agents() { return m_agents; }
    const AgentRegistry &agents() const { return m_agents; }
    int providersUp() const; // live endpoints not reported down
    bool anyProviderUp() const { return providersUp() > 0; }

    // Live endpoints only, in index order.
    QList<ProviderHealth> snapshot() const;
    // Newest last, at most kEventCapacity.
    const QList<BreakerEvent> &recentEvents() const { return m_events; }
    // Called for every event as it happens, in addition to the ring.
    void setEventSink(std::function<void(const BreakerEvent &)> sink) { m_sink = std::move(sink); }

    // What the router reads to rank endpoints (the seam between health and routing).
    // May the router pick this endpoint now? Same answer tryAdmit would give, without taking a
    // half-open breaker's probe slot.
    bool selectable(int provider) const;
    double latencyP50Ms(int provider) const;       // O(1); negative when nothing measured yet
    double recentSuccessRatio(int provider) const; // over the recent-call window; 1 when empty
    int recentCallCount(int provider) const;       // calls in the window, for neutral starts
    // Fraction of its usual share an endpoint may take: 0 when not selectable, ramp_start while
    // half-open, rising linearly to 1 over the ramp after it recovers.
    double trafficShare(int provider) const;

private:
    struct ProviderRecord {
        ProviderRecord(const config::ProviderConfig &provider,
                       const config::BreakerConfig &breaker);

        config::ProviderConfig config; // the endpoint's definition: its snapshot's, or an agent's
        QString kind;
        QStringList models;
        bool retired = false;
        bool agent = false; // registered at runtime, not from the config file

        BreakerState breaker = BreakerState::Closed;
        QString breakerReason;
        timing::Clock::TimePoint openUntil{};
        int tripLevel = 0; // trips since the breaker last stayed closed a while
        timing::Clock::TimePoint closedSince{}; // for forgetting tripLevel
        bool probeCallOut = false;              // half-open: the one admitted call has not reported
        timing::Clock::TimePoint coolingUntil{}; // a 429's Retry-After: no calls before then
        quint64 rateLimited = 0;
        OperatorState operatorState = OperatorState::Enabled;
        bool probeUnhealthy = false; // failed active probes hold the breaker open
        int probeFailuresInRow = 0;
        int probeSuccessesInRow = 0;
        std::optional<timing::Clock::TimePoint> rampStartedAt;

        QString lastFailure;
        int inFlight = 0;
        int failoverInFlight = 0;
        SimulatorKnobs simulatorKnobs;
        quint64 requests = 0;
        quint64 errors = 0;
        quint64 unusableAnswers = 0;
        int consecutiveFailures = 0;
        OutcomeWindow recent;
        SlowCallWindow slow;
        LatencyWindow latency;
        LatencyWindow timeToFirstToken;
    };

    bool admitsNow(const ProviderRecord &record) const;
    bool rampingNow(const ProviderRecord &record) const;
    void advanceTimedState(ProviderRecord &record);
    // slowMeasureMs: what the slow rule judges the call by; none when its times are not the
    // provider's (CallTiming::GatewayLate).
    void recordClosedCall(ProviderRecord &record, bool failed, std::optional<double> slowMeasureMs);
    struct Trip {
        BreakerCause cause;
        QString reason;
    };
    std::optional<Trip> tripReason(ProviderRecord &record, bool failed);
    void open(ProviderRecord &record, BreakerCause cause, const QString &reason);
    void close(ProviderRecord &record, BreakerCause cause, const QString &reason, bool ramp);
    void setBreaker(ProviderRecord &record, BreakerState to, BreakerCause cause,
                    const QString &reason);
    void publish(const ProviderRecord &record, BreakerState from, BreakerState to,
                 BreakerCause cause, const QString &reason);
    std::chrono::milliseconds openPeriod(int tripLevel) const;

    const config::BreakerConfig &breakerRules() const
    {
        return m_store.config().resilience.breaker;
    }
    const config::ProbeConfig &probeRules() const { return m_store.config().resilience.probes; }
    void describe(ProviderRecord &record, const config::ProviderConfig &provider);
    int addEndpoint(const config::ProviderConfig &provider, bool agent,
                    const config::BreakerConfig &breaker);

    const config::ConfigStore &m_store;
    const timing::Clock &m_clock;
    AgentRegistry m_agents;
    std::vector<ProviderRecord> m_providers;
    QList<BreakerEvent> m_events;
    quint64 m_eventSequence = 0;
    std::function<void(const BreakerEvent &)> m_sink;
};

// Words for logs and the admin API: "closed", "open", "half_open"...; "up", "degraded", "down".
QString breakerStateName(BreakerState state);
QString providerStateName(ProviderState state);
QString operatorStateName(OperatorState state);
QString providerActionName(ProviderAction action);
std::optional<ProviderAction> providerActionFromName(const QString &name);

} // namespace switchyard::health
