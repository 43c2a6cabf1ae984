#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <optional>

namespace switchyard {

// Coarse health of one provider for summaries: Up when its breaker is closed and calls succeed,
// Degraded when closed but failing or half-open, Down when open or taken out by an operator.
enum class ProviderState { Up, Degraded, Down };

// The circuit breaker of one endpoint (docs/resilience.md, "Health and the circuit breaker").
enum class BreakerState { Closed, Open, HalfOpen };

// What an operator (console or admin API) has set for an endpoint.
enum class OperatorState { Enabled, Disabled, Draining };

// What an operator can do to an endpoint from the console or the admin API.
enum class ProviderAction { Enable, Disable, Drain, Trip, Reset };

// Live knobs of a built-in simulated provider, for failover drills.
struct SimulatorKnobs {
    enum class Mode { Ok, ServerError, RateLimited, Hang, Reset, CutStream };

    Mode mode = Mode::Ok;
    int latencyMs = -1;      // negative keeps the configured latency
    double errorRate = -1.0; // negative keeps the configured error rate; else 0..1
};

// The words the admin API, the console and the log use for a simulator mode: "ok", "500", "429",
// "hang", "reset", "cut-stream"; empty for none.
QString simulatorModeName(SimulatorKnobs::Mode mode);
std::optional<SimulatorKnobs::Mode> simulatorModeFromName(const QString &name);

// A copy of one provider's health, made on the engine thread and handed to the console by value.
struct ProviderHealth {
    QString id;
    QString kind; // "openai", "simulated"
    QStringList models;
    ProviderState state = ProviderState::Up;
    // Why it is in that state, as facts the console puts into words (and translates).
    int consecutiveFailures = 0;
    int recentCalls = 0; // calls in the recent window that errorRatePercent covers
    QString lastFailure; // technical detail of the last call failure, e.g. "HTTP 500"
    int inFlight = 0;
    quint64 requests = 0;          // finished calls since start
    quint64 errors = 0;            // finished calls that failed
    double errorRatePercent = 0.0; // over the recent-calls window
    // Latencies over the recent window in milliseconds; negative when there is no sample yet.
    double p50LatencyMs = -1.0;
    double p95LatencyMs = -1.0;
    double p50TimeToFirstTokenMs = -1.0;

    BreakerState breaker = BreakerState::Closed;
    QString breakerReason;       // why it last changed, e.g. "5 consecutive call failures"
    qint64 msUntilHalfOpen = -1; // while open: time until it admits a probe; else negative
    // While cooling down after a 429: time until it takes calls again; else negative.
    qint64 msUntilCoolDownEnds = -1;
    quint64 rateLimited = 0; // 429s answered since start: cool-downs, not errors
    OperatorState operatorState = OperatorState::Enabled;
    double trafficShare = 1.0;   // below 1 while ramping up after recovery
    quint64 unusableAnswers = 0; // quality: answers that arrived but could not be used
    bool simulated = false;      // has live simulator knobs
    SimulatorKnobs::Mode simulatorMode = SimulatorKnobs::Mode::Ok;
};

// One endpoint as a node of a fleet publishes it for the others (docs/fleet.md, "Health"): the
// few facts a Fleet page or a per-node column of the health matrix draws, not the whole
// ProviderHealth. Each node's breakers decide for that node alone; another node's summary is
// shown there, never acted on.
struct EndpointSummary {
    QString id;
    bool agent = false;                      // a registered agent, not a provider of the config
    ProviderState state = ProviderState::Up; // as ProviderHealth::state on the publishing node
    BreakerState breaker = BreakerState::Closed;
    QString breakerReason; // why the breaker last changed, e.g. "5 consecutive call failures"
    OperatorState operatorState = OperatorState::Enabled;
    int inFlight = 0;
    double p50LatencyMs = -1.0; // over the recent window; negative when there is no sample yet
    double errorRatePercent = 0.0;

    // Takes traffic on its node: not Down (open, probe-unhealthy, disabled or draining).
    bool healthy() const { return state != ProviderState::Down; }
    friend bool operator==(const EndpointSummary &, const EndpointSummary &) = default;
};

// Why an endpoint's state changed, as a closed set: metrics count transitions by it and filters
// match on it, where BreakerEvent::reason says the same in words with the numbers filled in.
enum class BreakerCause {
    ConsecutiveFailures,  // closed -> open: N failures in a row
    FailureRate,          // closed -> open: too many of the recent calls failed
    SlowLatency,          // closed -> open: p95 latency above its multiple of the objective
    ProbeCallFailed,      // half-open -> open: the one call let through failed
    ProbeCallSucceeded,   // half-open -> closed: the one call let through succeeded
    HealthProbeFailed,    // -> open: active health probes failed
    HealthProbeSucceeded, // -> closed: active health probes succeeded again
    OpenPeriodOver,       // open -> half-open
    OperatorTrip,
    OperatorReset,
    OperatorEnable, // operator actions that leave the breaker as it is (from == to)
    OperatorDisable,
    OperatorDrain,
};

// Stable snake_case names of the causes, for metrics labels and logs.
constexpr const char *breakerCauseName(BreakerCause cause)
{
    switch (cause) {
    case BreakerCause::ConsecutiveFailures:
        return "consecutive_failures";
    case BreakerCause::FailureRate:
        return "failure_rate";
    case BreakerCause::SlowLatency:
        return "slow_latency";
    case BreakerCause::ProbeCallFailed:
        return "probe_call_failed";
    case BreakerCause::ProbeCallSucceeded:
        return "probe_call_succeeded";
    case BreakerCause::HealthProbeFailed:
        return "health_probe_failed";
    case BreakerCause::HealthProbeSucceeded:
        return "health_probe_succeeded";
    case BreakerCause::OpenPeriodOver:
        return "open_period_over";
    case BreakerCause::OperatorTrip:
        return "operator_trip";
    case BreakerCause::OperatorReset:
        return "operator_reset";
    case BreakerCause::OperatorEnable:
        return "operator_enable";
    case BreakerCause::OperatorDisable:
        return "operator_disable";
    case BreakerCause::OperatorDrain:
        return "operator_drain";
    }
    return "unknown";
}
constexpr int kBreakerCauseCount = int(BreakerCause::OperatorDrain) + 1;

// One change of an endpoint's state, for the console's timeline and the logs: a breaker
// transition, or (with from == to) an operator action or a change of probe health.
struct BreakerEvent {
    QString providerId;
    BreakerState from = BreakerState::Closed;
    BreakerState to = BreakerState::Closed;
    BreakerCause cause = BreakerCause::OperatorReset;
    QString reason;
    // The operator's setting once this change happened. Breaker and operator state are
    // independent; carrying both lets a reader rebuild either history without parsing `reason`.
    OperatorState operatorState = OperatorState::Enabled;
    qint64 atMsSinceEpoch = 0;
    quint64 sequence = 0; // 1 for the engine's first event, +1 for each after: a stable identity
};

} // namespace switchyard

Q_DECLARE_METATYPE(switchyard::ProviderHealth)
Q_DECLARE_METATYPE(switchyard::BreakerEvent)
Q_DECLARE_METATYPE(switchyard::SimulatorKnobs)
Q_DECLARE_METATYPE(switchyard::ProviderAction)
