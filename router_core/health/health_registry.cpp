#include "health/health_registry.h"

#include "logging/log_line.h"

#include <QLoggingCategory>
#include <QSet>
#include <algorithm>

Q_LOGGING_CATEGORY(lcHealth, "switchyard.health")

namespace switchyard::health {

using namespace Qt::StringLiterals;
using std::chrono::duration_cast;
using std::chrono::milliseconds;

namespace {

// Above this share of failures among the recent calls a closed endpoint is shown as degraded.
constexpr double kDegradedFailureRatio = 0.2;
// Past this many doublings the cap has long been reached; stops the shift from overflowing.
constexpr int kMaxDoublings = 30;

static_assert(config::BreakerConfig{}.consecutiveFailures ==
              HealthRegistry::kDownAfterConsecutiveFailures);

QString seconds(milliseconds duration)
{
    const double value = double(duration.count()) / 1000.0;
    return QString::number(value, 'g', 6) + u" s"_s;
}

QString percent(double ratio)
{
    return QString::number(ratio * 100.0, 'g', 4) + u" %"_s;
}

} // namespace

QString breakerStateName(BreakerState state)
{
    switch (state) {
    case BreakerState::Closed:
        return u"closed"_s;
    case BreakerState::Open:
        return u"open"_s;
    case BreakerState::HalfOpen:
        return u"half_open"_s;
    }
    return {};
}

QString providerStateName(ProviderState state)
{
    switch (state) {
    case ProviderState::Up:
        return u"up"_s;
    case ProviderState::Degraded:
        return u"degraded"_s;
    case ProviderState::Down:
        return u"down"_s;
    }
    return {};
}

QString operatorStateName(OperatorState state)
{
    switch (state) {
    case OperatorState::Enabled:
        return u"enabled"_s;
    case OperatorState::Disabled:
        return u"disabled"_s;
    case OperatorState::Draining:
        return u"draining"_s;
    }
    return {};
}

QString providerActionName(ProviderAction action)
{
    switch (action) {
    case ProviderAction::Enable:
        return u"enable"_s;
    case ProviderAction::Disable:
        return u"disable"_s;
    case ProviderAction::Drain:
        return u"drain"_s;
    case ProviderAction::Trip:
        return u"trip"_s;
    case ProviderAction::Reset:
        return u"reset"_s;
    }
    return {};
}

std::optional<ProviderAction> providerActionFromName(const QString &name)
{
    for (ProviderAction action :
         {ProviderAction::Enable, ProviderAction::Disable, ProviderAction::Drain,
          ProviderAction::Trip, ProviderAction::Reset}) {
        if (providerActionName(action) == name)
            return action;
    }
    return std::nullopt;
}

HealthRegistry::ProviderRecord::ProviderRecord(const config::ProviderConfig &provider,
                                               const config::BreakerConfig &breakerConfig)
    : recent(breakerConfig.window),
      slow(breakerConfig.slowWindow,
           breakerConfig.slowP95Factor * double(provider.latencyObjective.count()))
{}

HealthRegistry::HealthRegistry(const config::ConfigStore &store, const timing::Clock &clock)
    : m_store(store), m_clock(clock),
      m_agents(clock, [&store] { return store.config().routing.agents.ttl; })
{
    const QList<config::ProviderConfig> &providers = store.config().providers;
    m_providers.reserve(std::size_t(providers.size()));
    for (const config::ProviderConfig &provider : providers)
        addEndpoint(provider, false, breakerRules());
}

void HealthRegistry::describe(ProviderRecord &record, const config::ProviderConfig &provider)
{
    record.config = provider;
    record.kind = config::kindName(provider.kind);
    record.models.clear();
    for (const config::ModelRoute &model : provider.models)
        record.models.append(model.publicName);
}

int HealthRegistry::configuredIndexOf(const QString &providerId) const
{
    const int slot = indexOf(providerId);
    return slot >= 0 && !m_providers[slot].agent ? slot : -1;
}

void HealthRegistry::syncConfiguredEndpoints(const config::Config &next)
{
    // Windows sized by the breaker rules (and the slow threshold by each latency objective) are
    // rebuilt when those change; their recent history goes with them, the counters stay.
    const config::BreakerConfig &before = breakerRules();
    const config::BreakerConfig &after = next.resilience.breaker;
    const bool rulesChanged = before.window != after.window ||
                              before.slowWindow != after.slowWindow ||
                              before.slowP95Factor != after.slowP95Factor;
    const auto resize = [&after](ProviderRecord &record, const config::ProviderConfig &provider) {
        record.recent = OutcomeWindow(after.window);
        record.slow = SlowCallWindow(
            after.slowWindow, after.slowP95Factor * double(provider.latencyObjective.count()));
    };

    QSet<QString> kept;
    for (const config::ProviderConfig &provider : next.providers) {
        kept.insert(provider.id);
        const int slot = indexOf(provider.id);
        if (slot >= 0 && !m_providers[slot].agent) {
            ProviderRecord &record = m_providers[slot];
            if (rulesChanged || record.config.latencyObjective != provider.latencyObjective)
                resize(record, provider);
            describe(record, provider);
            continue;
        }
        if (slot >= 0) { // a configured provider takes the id over from an agent
            m_agents.remove(provider.id);
            retireProvider(slot);
        }
        addEndpoint(provider, false, next.resilience.breaker);
        qCInfo(lcHealth).noquote() << "provider" << provider.id << "added";
    }
    for (int slot = 0; slot < providerCount(); ++slot) {
        ProviderRecord &record = m_providers[slot];
        if (!record.retired && !record.agent && !kept.contains(record.config.id))
            retireProvider(slot);
        else if (!record.retired && record.agent && rulesChanged)
            resize(record, record.config);
    }
}

int HealthRegistry::indexOf(const QString &providerId) const
{
    for (int i = 0; i < providerCount(); ++i) {
        if (!m_providers[i].retired && m_providers[i].config.id == providerId)
            return i;
    }
    return -1;
}

int HealthRegistry::addProvider(const config::ProviderConfig &provider)
{
    return addEndpoint(provider, true, breakerRules());
}

int HealthRegistry::addEndpoint(const config::ProviderConfig &provider, bool agent,
                                const config::BreakerConfig &breaker)
{
    ProviderRecord &record = m_providers.emplace_back(provider, breaker);
    describe(record, provider);
    record.agent = agent;
    record.closedSince = m_clock.now();
    return providerCount() - 1;
}

void HealthRegistry::retireProvider(int provider)
{
    ProviderRecord &record = m_providers[provider];
    if (record.retired)
        return;
    record.retired = true;
    qCInfo(lcHealth).noquote() << "provider" << record.config.id << "retired";
}

bool HealthRegistry::tryStartFailover(int provider, int limit)
{
    ProviderRecord &record = m_providers[provider];
    if (record.failoverInFlight >= limit)
        return false;
    ++record.failoverInFlight;
    return true;
}

void HealthRegistry::failoverFinished(int provider)
{
    ProviderRecord &record = m_providers[provider];
    record.failoverInFlight = std::max(0, record.failoverInFlight - 1);
}

void HealthRegistry::setSimulatorKnobs(int provider, const SimulatorKnobs &knobs)
{
    m_providers[provider].simulatorKnobs = knobs;
}

// ---- admission ----------------------------------------------------------------------------------

bool HealthRegistry::admitsNow(const ProviderRecord &record) const
{
    if (record.retired || record.operatorState != OperatorState::Enabled || record.probeUnhealthy)
        return false;
    switch (record.breaker) {
    case BreakerState::Closed:
        return true;
    case BreakerState::Open:
        // Its period is over: the next tryAdmit moves it to half-open and admits the probe.
        return m_clock.now() >= record.openUntil;
    case BreakerState::HalfOpen:
        return !record.probeCallOut;
    }
    return false;
}

bool HealthRegistry::selectable(int provider) const
{
    return admitsNow(m_providers[provider]);
}

bool HealthRegistry::tryAdmit(int provider)
{
    ProviderRecord &record = m_providers[provider];
    advanceTimedState(record);
    if (!admitsNow(record) || m_clock.now() < record.coolingUntil)
        return false;
    if (record.breaker == BreakerState::HalfOpen)
        record.probeCallOut = true;
    return true;
}

qint64 HealthRegistry::msUntilAdmit(int provider) const
{
    const ProviderRecord &record = m_providers[provider];
    if (record.retired || record.operatorState != OperatorState::Enabled || record.probeUnhealthy)
        return -1;
    switch (record.breaker) {
    case BreakerState::Closed:
        return 0;
    case BreakerState::Open: {
        const auto left = record.openUntil - m_clock.now();
        // Rounded up: "0" must mean "now", never "in half a millisecond".
        return std::max<qint64>(0, std::chrono::ceil<milliseconds>(left).count());
    }
    case BreakerState::HalfOpen:
        return record.probeCallOut ? -1 : 0;
    }
    return -1;
}

// ---- calls --------------------------------------------------------------------------------------

void HealthRegistry::callStarted(int provider)
{
    ++m_providers[provider].inFlight;
}

void HealthRegistry::coolDown(int provider, milliseconds period)
{
    ProviderRecord &record = m_providers[provider];
    record.coolingUntil = std::max(record.coolingUntil, m_clock.now() + period);
}

milliseconds HealthRegistry::coolDownLeft(int provider) const
{
    const auto left = m_providers[provider].coolingUntil - m_clock.now();
    return std::max(milliseconds(0), std::chrono::ceil<milliseconds>(left));
}

QString HealthRegistry::unavailableReason(int provider) const
{
    const ProviderRecord &record = m_providers[provider];
    if (record.retired)
        return QStringLiteral("removed from the config");
    if (record.operatorState == OperatorState::Disabled)
        return QStringLiteral("disabled by an operator");
    if (record.operatorState == OperatorState::Draining)
        return QStringLiteral("draining");
    if (record.probeUnhealthy)
        return QStringLiteral("its health probes fail");
    if (record.breaker == BreakerState::Open && m_clock.now() < record.openUntil)
        return QStringLiteral("breaker open: %1").arg(record.breakerReason);
    if (record.breaker == BreakerState::HalfOpen && record.probeCallOut)
        return QStringLiteral("breaker half-open, its probe call under way");
    if (m_clock.now() < record.coolingUntil)
        return QStringLiteral("rate limited, cooling down");
    return {};
}

void HealthRegistry::callFinished(int provider, CallOutcome outcome, double latencyMs,
                                  double timeToFirstTokenMs, const QString &failureDescription,
                                  CallTiming timing)
{
    ProviderRecord &record = m_providers[provider];
    record.inFlight = std::max(0, record.inFlight - 1);
    advanceTimedState(record);

    const bool decisive = outcome == CallOutcome::Success || outcome == CallOutcome::CallFailure;
    if (!decisive) {
        // The half-open probe told nothing about the endpoint: let another call probe.
        if (record.breaker == BreakerState::HalfOpen)
            record.probeCallOut = false;
        if (outcome == CallOutcome::Cancelled)
            return;
        ++record.requests;
        if (outcome == CallOutcome::RateLimited) {
            ++record.rateLimited;
            record.lastFailure = failureDescription;
        }
        if (outcome == CallOutcome::Unusable) {
            ++record.errors;
            ++record.unusableAnswers;
            qCDebug(lcHealth).noquote() << "provider" << record.config.id
                                        << "sent an unusable answer:" << failureDescription;
        }
        return; // quality, rate limits and the request's own faults never move the breaker
    }

    ++record.requests;
    const bool failed = outcome == CallOutcome::CallFailure;
    if (failed) {
        ++record.errors;
        record.lastFailure = failureDescription;
        qCDebug(lcHealth).noquote()
            << "provider" << record.config.id << "call failed:" << failureDescription;
    } else if (timing == CallTiming::Measured) {
        record.latency.record(latencyMs);
        if (timeToFirstTokenMs >= 0)
            record.timeToFirstToken.record(timeToFirstTokenMs);
    }

    switch (record.breaker) {
    case BreakerState::Closed:
        // Streams are judged on their first token: a long answer is not a slow provider.
        recordClosedCall(record, failed,
                         timing == CallTiming::GatewayLate ? std::optional<double>()
                         : timeToFirstTokenMs >= 0         ? timeToFirstTokenMs
                                                           : latencyMs);
        break;
    case BreakerState::HalfOpen:
        // Whichever call reports first while half-open is the probe, including one that was
        // already in flight when the breaker opened: it is as good a witness.
        if (failed)
            open(record, BreakerCause::ProbeCallFailed,
                 u"probe call failed: %1"_s.arg(failureDescription));
        else
            close(record, BreakerCause::ProbeCallSucceeded, u"probe call succeeded"_s, true);
        break;
    case BreakerState::Open:
        break; // calls sent before the breaker opened: counted above, decide nothing
    }
}

void HealthRegistry::recordClosedCall(ProviderRecord &record, bool failed,
                                      std::optional<double> slowMeasureMs)
{
    record.recent.record(failed);
    record.consecutiveFailures = failed ? record.consecutiveFailures + 1 : 0;
    const bool slowRuleOn = breakerRules().slowP95Factor > 0;
    if (!failed && slowRuleOn && slowMeasureMs)
        record.slow.record(m_clock.now(), *slowMeasureMs);
    if (const std::optional<Trip> trip = tripReason(record, failed))
        open(record, trip->cause, trip->reason);
}

std::optional<HealthRegistry::Trip> HealthRegistry::tripReason(ProviderRecord &record, bool failed)
{
    const config::BreakerConfig &rules = breakerRules();
    if (failed && record.consecutiveFailures >= rules.consecutiveFailures)
        return Trip{BreakerCause::ConsecutiveFailures,
                    u"%1 consecutive call failures"_s.arg(record.consecutiveFailures)};
    const int seen = record.recent.size();
    const int failures = record.recent.failures();
    // The tolerance keeps "exactly 40 %" below "more than 40 %" despite binary fractions.
    if (seen >= rules.minCalls && double(failures) > rules.failureRate * seen + 1e-9) {
        return Trip{
            BreakerCause::FailureRate,
            u"%1 of the last %2 calls failed (more than %3)"_s.arg(
                QString::number(failures), QString::number(seen), percent(rules.failureRate))};
    }
    if (!failed && rules.slowP95Factor > 0) {
        const auto now = m_clock.now();
        if (record.slow.calls(now) >= rules.slowMinCalls && record.slow.p95IsSlow(now)) {
            return Trip{
                BreakerCause::SlowLatency,
                u"p95 latency over the last %1 is above %2 ms (%3 × the %4 ms objective)"_s.arg(
                    seconds(rules.slowWindow), QString::number(record.slow.slowAboveMs()),
                    QString::number(rules.slowP95Factor),
                    QString::number(record.config.latencyObjective.count()))};
        }
    }
    return std::nullopt;
}

// ---- probes and operators -----------------------------------------------------------------------

void HealthRegistry::probeResult(int provider, bool ok, const QString &detail)
{
    ProviderRecord &record = m_providers[provider];
    if (record.retired)
        return;
    advanceTimedState(record);
    if (ok) {
        record.probeFailuresInRow = 0;
        ++record.probeSuccessesInRow;
        if (record.probeUnhealthy) {
            if (record.probeSuccessesInRow >= probeRules().healthyAfter) {
                record.probeUnhealthy = false;
                close(record, BreakerCause::HealthProbeSucceeded,
                      u"%1 successful health probes"_s.arg(record.probeSuccessesInRow), true);
            }
        } else if (record.breaker == BreakerState::HalfOpen) {
            close(record, BreakerCause::HealthProbeSucceeded, u"health probe succeeded"_s, true);
        }
        return;
    }

    record.probeSuccessesInRow = 0;
    ++record.probeFailuresInRow;
    record.lastFailure = u"health probe: %1"_s.arg(detail);
    qCDebug(lcHealth).noquote() << "provider" << record.config.id
                                << "health probe failed:" << detail;
    if (record.probeUnhealthy)
        return;
    if (record.probeFailuresInRow >= probeRules().unhealthyAfter) {
        record.probeUnhealthy = true;
        record.probeCallOut = false;
        record.rampStartedAt.reset();
        // Held open until probes succeed again: no open period, no half-open call.
        setBreaker(record, BreakerState::Open, BreakerCause::HealthProbeFailed,
                   u"%1 failed health probes"_s.arg(record.probeFailuresInRow));
    } else if (record.breaker == BreakerState::HalfOpen) {
        open(record, BreakerCause::HealthProbeFailed, u"health probe failed: %1"_s.arg(detail));
    }
}

void HealthRegistry::applyAction(int provider, ProviderAction action)
{
    ProviderRecord &record = m_providers[provider];
    if (record.retired)
        return;
    advanceTimedState(record);
    const auto setOperatorState = [&](OperatorState to, BreakerCause cause, const QString &reason) {
        const bool wasOut = record.operatorState != OperatorState::Enabled;
        record.operatorState = to;
        if (to == OperatorState::Enabled && wasOut && breakerRules().ramp.count() > 0)
            record.rampStartedAt = m_clock.now();
        publish(record, record.breaker, record.breaker, cause, reason);
    };
    switch (action) {
    case ProviderAction::Enable:
        setOperatorState(OperatorState::Enabled, BreakerCause::OperatorEnable,
                         u"enabled by operator"_s);
        return;
    case ProviderAction::Disable:
        setOperatorState(OperatorState::Disabled, BreakerCause::OperatorDisable,
                         u"disabled by operator"_s);
        return;
    case ProviderAction::Drain:
        setOperatorState(OperatorState::Draining, BreakerCause::OperatorDrain,
                         u"draining by operator"_s);
        return;
    case ProviderAction::Trip:
        open(record, BreakerCause::OperatorTrip, u"tripped by operator"_s);
        return;
    case ProviderAction::Reset: {
        const bool wasServing = record.breaker == BreakerState::Closed && !record.probeUnhealthy;
        record.tripLevel = 0;
        record.probeUnhealthy = false;
        record.probeFailuresInRow = 0;
        record.probeSuccessesInRow = 0;
        // A healthy endpoint keeps its full share; one that was out ramps back in.
        close(record, BreakerCause::OperatorReset, u"reset by operator"_s, !wasServing);
        return;
    }
    }
}

// ---- the state machine --------------------------------------------------------------------------

void HealthRegistry::updateTimedStates()
{
    for (ProviderRecord &record : m_providers)
        advanceTimedState(record);
}

void HealthRegistry::advanceTimedState(ProviderRecord &record)
{
    if (record.retired || record.breaker != BreakerState::Open || record.probeUnhealthy)
        return;
    if (m_clock.now() < record.openUntil)
        return;
    record.probeCallOut = false;
    setBreaker(record, BreakerState::HalfOpen, BreakerCause::OpenPeriodOver,
               u"open period over; letting one probe call through"_s);
}

milliseconds HealthRegistry::openPeriod(int tripLevel) const
{
    const int doublings = std::clamp(tripLevel - 1, 0, kMaxDoublings);
    const milliseconds doubled = breakerRules().openFor * (qint64(1) << doublings);
    return std::min(doubled, breakerRules().maxOpenFor);
}

void HealthRegistry::open(ProviderRecord &record, BreakerCause cause, const QString &reason)
{
    const auto now = m_clock.now();
    // An endpoint that stayed closed for a whole maximum open period starts over at the base
    // period; one that trips again sooner keeps doubling, so a flapping endpoint backs off.
    if (record.breaker == BreakerState::Closed &&
        now - record.closedSince >= breakerRules().maxOpenFor)
        record.tripLevel = 0;
    record.tripLevel = std::min(record.tripLevel + 1, kMaxDoublings + 1);
    record.openUntil = now + openPeriod(record.tripLevel);
    record.probeCallOut = false;
    record.rampStartedAt.reset();
    setBreaker(record, BreakerState::Open, cause,
               u"%1; open for %2"_s.arg(reason, seconds(openPeriod(record.tripLevel))));
}

void HealthRegistry::close(ProviderRecord &record, BreakerCause cause, const QString &reason,
                           bool ramp)
{
    const auto now = m_clock.now();
    record.probeCallOut = false;
    record.closedSince = now;
    record.consecutiveFailures = 0;
    record.recent.clear();
    record.slow.clear();
    if (ramp && breakerRules().ramp.count() > 0)
        record.rampStartedAt = now;
    setBreaker(record, BreakerState::Closed, cause, reason);
}

void HealthRegistry::setBreaker(ProviderRecord &record, BreakerState to, BreakerCause cause,
                                const QString &reason)
{
    const BreakerState from = record.breaker;
    record.breaker = to;
    record.breakerReason = reason;
    publish(record, from, to, cause, reason);
}

void HealthRegistry::publish(const ProviderRecord &record, BreakerState from, BreakerState to,
                             BreakerCause cause, const QString &reason)
{
    BreakerEvent event;
    event.providerId = record.config.id;
    event.from = from;
    event.to = to;
    event.cause = cause;
    event.reason = reason;
    event.operatorState = record.operatorState;
    event.atMsSinceEpoch = m_clock.msSinceEpoch();
    event.sequence = ++m_eventSequence;
    if (lcHealth().isInfoEnabled()) {
        // One line per event: a transition names both states; an operator action or a change
        // of probe health (from == to) names the state it leaves the breaker in.
        logging::LogFields fields;
        fields.add("provider"_L1, event.providerId);
        if (from == to) {
            fields.add("breaker"_L1, breakerStateName(to)).add("reason"_L1, reason);
            logging::write(lcHealth(), QtInfoMsg, u"endpoint state"_s, fields);
        } else {
            fields.add("from"_L1, breakerStateName(from))
                .add("to"_L1, breakerStateName(to))
                .add("reason"_L1, reason);
            logging::write(lcHealth(), QtInfoMsg, u"breaker transition"_s, fields);
        }
    }
    if (m_events.size() >= kEventCapacity)
        m_events.removeFirst();
    m_events.append(event);
    if (m_sink)
        m_sink(event);
}

// ---- what routing and the console read ----------------------------------------------------------

bool HealthRegistry::rampingNow(const ProviderRecord &record) const
{
    return record.rampStartedAt && m_clock.now() - *record.rampStartedAt < breakerRules().ramp;
}

double HealthRegistry::trafficShare(int provider) const
{
    const ProviderRecord &record = m_providers[provider];
    if (!admitsNow(record))
        return 0.0;
    if (record.breaker != BreakerState::Closed)
        return breakerRules().rampStart; // half-open: the probe's share
    if (!rampingNow(record))
        return 1.0;
    const double elapsed = duration_cast<std::chrono::duration<double, std::milli>>(
                               m_clock.now() - *record.rampStartedAt)
                               .count();
    const double progress = elapsed / double(breakerRules().ramp.count());
    const double start = breakerRules().rampStart;
    return std::min(1.0, start + (1.0 - start) * progress);
}

ProviderState HealthRegistry::state(int provider) const
{
    const ProviderRecord &record = m_providers[provider];
    if (record.retired || record.operatorState == OperatorState::Disabled || record.probeUnhealthy)
        return ProviderState::Down;
    switch (record.breaker) {
    case BreakerState::Open:
        return m_clock.now() >= record.openUntil ? ProviderState::Degraded : ProviderState::Down;
    case BreakerState::HalfOpen:
        return ProviderState::Degraded;
    case BreakerState::Closed:
        break;
    }
    if (record.operatorState == OperatorState::Draining || rampingNow(record) ||
        record.recent.failureRatio() > kDegradedFailureRatio)
        return ProviderState::Degraded;
    return ProviderState::Up;
}

int HealthRegistry::providersUp() const
{
    int up = 0;
    for (int i = 0; i < providerCount(); ++i) {
        if (!m_providers[i].retired && state(i) != ProviderState::Down)
            ++up;
    }
    return up;
}

double HealthRegistry::latencyP50Ms(int provider) const
{
    return m_providers[provider].latency.p50();
}

double HealthRegistry::recentSuccessRatio(int provider) const
{
    const OutcomeWindow &recent = m_providers[provider].recent;
    return recent.size() == 0 ? 1.0 : 1.0 - recent.failureRatio();
}

int HealthRegistry::recentCallCount(int provider) const
{
    return m_providers[provider].recent.size();
}

QList<ProviderHealth> HealthRegistry::snapshot() const
{
    QList<ProviderHealth> providers;
    providers.reserve(providerCount());
    for (int i = 0; i < providerCount(); ++i) {
        const ProviderRecord &record = m_providers[i];
        if (record.retired)
            continue;
        ProviderHealth health;
        health.id = record.config.id;
        health.kind = record.kind;
        health.models = record.models;
        health.state = state(i);
        health.consecutiveFailures = record.consecutiveFailures;
        health.recentCalls = record.recent.size();
        health.lastFailure = record.lastFailure;
        health.inFlight = record.inFlight;
        health.requests = record.requests;
        health.errors = record.errors;
        health.errorRatePercent = record.recent.failureRatio() * 100.0;
        health.p50LatencyMs = record.latency.p50();
        health.p95LatencyMs = record.latency.p95();
        health.p50TimeToFirstTokenMs = record.timeToFirstToken.p50();
        health.breaker = record.breaker;
        health.breakerReason = record.breakerReason;
        if (record.breaker == BreakerState::Open && !record.probeUnhealthy) {
            health.msUntilHalfOpen = std::max<qint64>(
                0, std::chrono::ceil<milliseconds>(record.openUntil - m_clock.now()).count());
        }
        if (m_clock.now() < record.coolingUntil)
            health.msUntilCoolDownEnds = coolDownLeft(i).count();
        health.rateLimited = record.rateLimited;
        health.operatorState = record.operatorState;
        health.trafficShare = trafficShare(i);
        health.unusableAnswers = record.unusableAnswers;
        health.simulated = record.config.kind == config::ProviderKind::Simulated;
        health.simulatorMode = record.simulatorKnobs.mode;
        providers.append(std::move(health));
    }
    return providers;
}

} // namespace switchyard::health
