#include "alerts/alert_evaluator.h"

#include "config/config_store.h"
#include "logging/log_line.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <cmath>
#include <limits>

Q_LOGGING_CATEGORY(lcAlerts, "switchyard.alerts")

namespace switchyard::alerts {

using namespace Qt::StringLiterals;
using config::AlertRuleConfig;
using config::AlertRuleKind;
using std::chrono::milliseconds;

namespace {

constexpr double kNoData = std::numeric_limits<double>::quiet_NaN();
const QString kGatewaySubject = u"gateway"_s;

QString durationText(milliseconds duration)
{
    using namespace std::chrono;
    if (duration.count() == 0)
        return u"0s"_s;
    if (duration % hours(1) == milliseconds(0))
        return u"%1h"_s.arg(duration_cast<hours>(duration).count());
    if (duration % minutes(1) == milliseconds(0))
        return u"%1m"_s.arg(duration_cast<minutes>(duration).count());
    if (duration % seconds(1) == milliseconds(0))
        return u"%1s"_s.arg(duration_cast<seconds>(duration).count());
    return u"%1ms"_s.arg(duration.count());
}

QString valueText(double value, ValueUnit unit)
{
    if (std::isnan(value))
        return u"not known"_s;
    switch (unit) {
    case ValueUnit::Ratio:
        return u"%1 %"_s.arg(value * 100.0, 0, 'f', 1);
    case ValueUnit::Milliseconds:
        return u"%1 ms"_s.arg(value, 0, 'f', 0);
    case ValueUnit::Answers:
        return QString::number(qint64(value));
    }
    return QString::number(value);
}

QString subjectText(SubjectKind kind, const QString &subject)
{
    switch (kind) {
    case SubjectKind::Tier:
        return u"tier `%1`"_s.arg(subject);
    case SubjectKind::Budget:
        return u"budget `%1`"_s.arg(subject);
    case SubjectKind::Gateway:
        return u"the gateway"_s;
    }
    return subject;
}

// What the rule measures, and how the value must compare to raise.
QString measureText(AlertRuleKind kind)
{
    switch (kind) {
    case AlertRuleKind::TierSuccessRate:
        return u"success rate"_s;
    case AlertRuleKind::TierErrorRate:
        return u"error rate"_s;
    case AlertRuleKind::TierLatencyP95:
        return u"p95 latency"_s;
    case AlertRuleKind::FailSafeAnswers:
        return u"fail-safe answers"_s;
    case AlertRuleKind::BudgetUsed:
        return u"share used"_s;
    }
    return {};
}

QString comparisonText(AlertRuleKind kind)
{
    switch (kind) {
    case AlertRuleKind::TierSuccessRate:
        return u"below"_s;
    case AlertRuleKind::FailSafeAnswers:
    case AlertRuleKind::BudgetUsed:
        return u"at or above"_s;
    case AlertRuleKind::TierErrorRate:
    case AlertRuleKind::TierLatencyP95:
        return u"above"_s;
    }
    return {};
}

QString requestCountText(const WindowSummary &summary, milliseconds window)
{
    return u"%1 counted request(s) in the last %2"_s.arg(QString::number(summary.counted),
                                                         durationText(window));
}

} // namespace

AlertEvaluator::AlertEvaluator(const config::ConfigStore &store, const timing::Clock &clock,
                               QObject *parent)
    : QObject(parent), m_store(store), m_clock(clock)
{
    qRegisterMetaType<switchyard::alerts::AlertEvent>();
    qRegisterMetaType<switchyard::alerts::AlertsState>();
    connect(&m_timer, &QTimer::timeout, this, [this] {
        evaluate();
        // A reload may have changed the period; it applies from the next tick.
        const milliseconds every = m_store.config().alerts.evaluateEvery;
        if (m_timer.intervalAsDuration() != every)
            m_timer.setInterval(every);
    });
}

AlertEvaluator::~AlertEvaluator() = default;

void AlertEvaluator::start()
{
    m_timer.start(m_store.config().alerts.evaluateEvery);
}

void AlertEvaluator::traceFinished(const telemetry::Trace &trace)
{
    // A shadow's failures are the experiment's result, not the gateway's error rate.
    if (trace.isShadow())
        return;
    countRequest(trace);
}

void AlertEvaluator::countRequest(const telemetry::RequestRecord &record)
{
    const RequestVerdict verdict = verdictFor(record);
    if (verdict == RequestVerdict::NotCounted)
        return;
    const bool failSafe = record.degradedLevel >= kFailSafeLevel;
    const qint64 latency = latencyMicrosOf(record);
    const timing::Clock::TimePoint now = m_clock.now();
    m_gateway.add(verdict, failSafe, latency, now);
    if (record.tier.isEmpty())
        return; // a provider or pool target: the gateway counts it, no tier does
    if (TrafficWindows *windows = tierWindows(record.tier))
        windows->add(verdict, failSafe, latency, now);
}

TrafficWindows *AlertEvaluator::tierWindows(const QString &tier)
{
    const auto found = m_tiers.constFind(tier);
    if (found != m_tiers.cend())
        return found->get();
    if (m_tiers.size() >= kMostTiers) {
        if (!m_saidTooManyTiers) {
            qCWarning(lcAlerts).noquote()
                << u"more than %1 tiers: tier `%2` and any after it "
                   u"are not evaluated for alerts"_s.arg(QString::number(kMostTiers), tier);
            m_saidTooManyTiers = true;
        }
        return nullptr;
    }
    // Once per tier for the life of the engine: the ring is allocated here, never per request.
    return m_tiers.insert(tier, std::make_shared<TrafficWindows>()).value().get();
}

void AlertEvaluator::observeBudget(const QString &budgetName, double usedFraction)
{
    if (!m_budgets.contains(budgetName) && m_budgets.size() >= kMostBudgets) {
        if (!m_saidTooManyBudgets) {
            qCWarning(lcAlerts).noquote()
                << u"more than %1 budgets observed: budget `%2` and any after it are not "
                   u"evaluated for alerts"_s.arg(QString::number(kMostBudgets), budgetName);
            m_saidTooManyBudgets = true;
        }
        return;
    }
    m_budgets.insert(budgetName, usedFraction);
}

void AlertEvaluator::observeBudgets(const QList<QPair<QString, double>> &readings)
{
    m_budgets.clear();
    for (const auto &[name, usedFraction] : readings)
        observeBudget(name, usedFraction);
}

AlertEvaluator::Condition
AlertEvaluator::tierCondition(AlertRuleKind kind, const AlertRuleConfig &rule,
                              const TrafficWindows &windows, timing::Clock::TimePoint now,
                              std::optional<double> &frozenBaselineMs) const
{
    Condition condition;
    // The window: the step now runs in and the whole steps of `window` before it, so it always
    // holds at least `window` of traffic (and at most ten seconds more).
    const qint64 current = TrafficWindows::stepNumber(now);
    const qint64 windowFirst = current - TrafficWindows::stepsIn(rule.window);
    const WindowSummary window = windows.summary(windowFirst, current);
    condition.detail = requestCountText(window, rule.window);
    switch (kind) {
    case AlertRuleKind::TierSuccessRate:
        condition.threshold = rule.threshold;
        if (window.counted < quint64(rule.minRequests)) {
            condition.value = kNoData;
            return condition;
        }
        condition.value = window.successRate();
        condition.holds = condition.value < rule.threshold;
        return condition;
    case AlertRuleKind::TierErrorRate:
        condition.threshold = rule.threshold;
        if (window.counted < quint64(rule.minRequests)) {
            condition.value = kNoData;
            return condition;
        }
        condition.value = window.errorRate();
        condition.holds = condition.value > rule.threshold;
        return condition;
    case AlertRuleKind::TierLatencyP95: {
        condition.unit = ValueUnit::Milliseconds;
        // The baseline is the hour before the window, so a slowdown never raises its own bar.
        const WindowSummary baseline =
            windows.summary(windowFirst - TrafficWindows::stepsIn(rule.baseline), windowFirst - 1);
        const quint64 baselineSamples = baseline.latency.total();
        const quint64 samples = window.latency.total();
        const double baselineMs = frozenBaselineMs ? *frozenBaselineMs : baseline.latency.p95Ms();
        condition.baselineMs = baselineMs;
        condition.threshold = baselineMs * rule.threshold;
        condition.detail = frozenBaselineMs
                               ? u"%1 latencies in the last %2"_s.arg(QString::number(samples),
                                                                      durationText(rule.window))
                               : u"%1 latencies in the last %2, %3 in the baseline"_s.arg(
                                     QString::number(samples), durationText(rule.window),
                                     QString::number(baselineSamples));
        if ((!frozenBaselineMs && baselineSamples < quint64(rule.baselineMinSamples)) ||
            samples < quint64(rule.minRequests)) {
            condition.value = kNoData;
            return condition;
        }
        condition.value = window.latency.p95Ms();
        condition.holds = condition.value > condition.threshold;
        if (condition.holds && !frozenBaselineMs)
            frozenBaselineMs = baselineMs;
        return condition;
    }
    case AlertRuleKind::FailSafeAnswers:
    case AlertRuleKind::BudgetUsed:
        break;
    }
    return condition;
}

AlertEvaluator::Condition AlertEvaluator::failSafeCondition(const AlertRuleConfig &rule,
                                                            timing::Clock::TimePoint now) const
{
    Condition condition;
    const qint64 current = TrafficWindows::stepNumber(now);
    const WindowSummary window =
        m_gateway.summary(current - TrafficWindows::stepsIn(rule.window), current);
    condition.unit = ValueUnit::Answers;
    condition.threshold = rule.threshold;
    condition.value = double(window.failSafe);
    condition.holds = condition.value >= rule.threshold;
    condition.detail = u"of %1"_s.arg(requestCountText(window, rule.window));
    return condition;
}

void AlertEvaluator::evaluate()
{
    ++m_evaluations;
    const config::AlertsConfig &alerts = m_store.config().alerts;
    const timing::Clock::TimePoint now = m_clock.now();
    for (int index = 0; index < config::kAlertRuleKinds; ++index) {
        const auto kind = AlertRuleKind(index);
        const AlertRuleConfig &rule = alerts.rule(kind);
        if (!rule.enabled) {
            // A rule switched off by a reload takes its raised alerts with it.
            const QList<ActiveAlert> raised = m_active;
            for (const ActiveAlert &alert : raised) {
                if (alert.rule == kind) {
                    Condition gone;
                    gone.value = kNoData;
                    gone.threshold = alert.threshold;
                    gone.unit = alert.unit;
                    clear(kind, alert.subject, gone, u"the rule was disabled"_s);
                }
            }
            // And its half-started conditions and frozen baselines: enabled again later, the
            // rule starts afresh, not from a start it saw before it was switched off.
            m_states.removeIf([index](const QHash<StateKey, RuleState>::iterator &state) {
                return state.key().first == index;
            });
            continue;
        }
        switch (kind) {
        case AlertRuleKind::TierSuccessRate:
        case AlertRuleKind::TierErrorRate:
        case AlertRuleKind::TierLatencyP95:
            for (auto tier = m_tiers.cbegin(); tier != m_tiers.cend(); ++tier) {
                const StateKey key(index, tier.key());
                std::optional<double> frozenBaselineMs = m_states.value(key).frozenBaselineMs;
                const Condition condition =
                    tierCondition(kind, rule, *tier.value(), now, frozenBaselineMs);
                step(kind, rule, SubjectKind::Tier, tier.key(), condition, now);
                // The state may be gone (a clear): then so is the frozen baseline.
                const auto state = m_states.find(key);
                if (state != m_states.end()) {
                    const bool inPlay = state->holdingSince || state->active;
                    state->frozenBaselineMs = inPlay ? frozenBaselineMs : std::nullopt;
                }
            }
            break;
        case AlertRuleKind::FailSafeAnswers:
            step(kind, rule, SubjectKind::Gateway, kGatewaySubject, failSafeCondition(rule, now),
                 now);
            break;
        case AlertRuleKind::BudgetUsed:
            for (auto budget = m_budgets.cbegin(); budget != m_budgets.cend(); ++budget) {
                Condition condition;
                condition.value = budget.value();
                condition.threshold = rule.threshold;
                condition.holds = budget.value() >= rule.threshold;
                step(kind, rule, SubjectKind::Budget, budget.key(), condition, now);
            }
            forgetBudgetsNoLongerObserved();
            break;
        }
    }
}

void AlertEvaluator::forgetBudgetsNoLongerObserved()
{
    const int kind = int(AlertRuleKind::BudgetUsed);
    const QList<ActiveAlert> raised = m_active;
    for (const ActiveAlert &alert : raised) {
        if (alert.rule == AlertRuleKind::BudgetUsed && !m_budgets.contains(alert.subject)) {
            Condition gone;
            gone.value = kNoData;
            gone.threshold = alert.threshold;
            gone.unit = alert.unit;
            clear(AlertRuleKind::BudgetUsed, alert.subject, gone,
                  u"the budget is no longer configured"_s);
        }
    }
    m_states.removeIf([this, kind](const QHash<StateKey, RuleState>::iterator &state) {
        return state.key().first == kind && !m_budgets.contains(state.key().second);
    });
}

void AlertEvaluator::step(AlertRuleKind kind, const AlertRuleConfig &rule, SubjectKind subjectKind,
                          const QString &subject, const Condition &condition,
                          timing::Clock::TimePoint now)
{
    RuleState &state = m_states[StateKey(int(kind), subject)];
    if (condition.holds) {
        state.notHoldingSince.reset();
        if (!state.holdingSince) {
            state.holdingSince = now;
            state.holdingSinceMs = m_clock.msSinceEpoch();
        }
        if (state.active) {
            // Keep the console's value current while it stays raised.
            for (ActiveAlert &alert : m_active) {
                if (alert.rule == kind && alert.subject == subject) {
                    alert.value = condition.value;
                    alert.threshold = condition.threshold;
                }
            }
        } else if (now - *state.holdingSince >= rule.holdFor) {
            state.active = true;
            raise(kind, rule, subjectKind, subject, condition, state.holdingSinceMs);
        }
        return;
    }
    state.holdingSince.reset();
    if (!state.active)
        return;
    if (!state.notHoldingSince)
        state.notHoldingSince = now;
    if (now - *state.notHoldingSince >= rule.clearAfter) {
        state.active = false;
        state.notHoldingSince.reset();
        clear(kind, subject, condition,
              u"not %1 %2 for %3"_s.arg(comparisonText(kind),
                                        valueText(condition.threshold, condition.unit),
                                        durationText(rule.clearAfter)));
    }
}

void AlertEvaluator::raise(AlertRuleKind kind, const AlertRuleConfig &rule, SubjectKind subjectKind,
                           const QString &subject, const Condition &condition, qint64 sinceMs)
{
    AlertEvent event;
    event.kind = AlertEvent::Kind::Raised;
    event.rule = kind;
    event.severity = rule.severity;
    event.subjectKind = subjectKind;
    event.subject = subject;
    event.value = condition.value;
    event.threshold = condition.threshold;
    event.unit = condition.unit;
    event.sinceMs = sinceMs;
    event.atMs = m_clock.msSinceEpoch();
    QString held =
        rule.holdFor.count() > 0 ? u" for %1"_s.arg(durationText(rule.holdFor)) : QString();
    if (kind == AlertRuleKind::TierLatencyP95) {
        event.message = u"%1: p95 latency %2, above %3 (%4 x the baseline p95 of %5)%6; %7"_s.arg(
            subjectText(subjectKind, subject), valueText(condition.value, condition.unit),
            valueText(condition.threshold, condition.unit), QString::number(rule.threshold),
            valueText(condition.baselineMs, condition.unit), held, condition.detail);
    } else {
        event.message = u"%1: %2 %3, %4 %5%6%7"_s.arg(
            subjectText(subjectKind, subject), measureText(kind),
            valueText(condition.value, condition.unit), comparisonText(kind),
            valueText(condition.threshold, condition.unit), held,
            condition.detail.isEmpty() ? QString() : u"; "_s + condition.detail);
    }

    ActiveAlert alert;
    alert.rule = kind;
    alert.severity = rule.severity;
    alert.subjectKind = subjectKind;
    alert.subject = subject;
    alert.value = condition.value;
    alert.threshold = condition.threshold;
    alert.unit = condition.unit;
    alert.sinceMs = sinceMs;
    alert.raisedAtMs = event.atMs;
    alert.message = event.message;
    alert.raisedSequence = m_sequence + 1; // publish() numbers the event so
    m_active.append(alert);
    publish(std::move(event));
}

void AlertEvaluator::clear(AlertRuleKind kind, const QString &subject, const Condition &condition,
                           const QString &why)
{
    const auto found =
        std::find_if(m_active.cbegin(), m_active.cend(), [&](const ActiveAlert &alert) {
            return alert.rule == kind && alert.subject == subject;
        });
    if (found == m_active.cend())
        return;
    const ActiveAlert raised = *found;
    m_active.erase(found);
    m_states.remove(StateKey(int(kind), subject));

    AlertEvent event;
    event.kind = AlertEvent::Kind::Cleared;
    event.rule = kind;
    event.severity = raised.severity;
    event.subjectKind = raised.subjectKind;
    event.subject = subject;
    event.value = condition.value;
    event.threshold = condition.threshold;
    event.unit = raised.unit;
    event.sinceMs = raised.raisedAtMs;
    event.atMs = m_clock.msSinceEpoch();
    const QString now =
        std::isnan(condition.value)
            ? u"too little traffic to judge"_s
            : u"%1 %2"_s.arg(measureText(kind), valueText(condition.value, raised.unit));
    event.message =
        u"%1: cleared, %2 (%3)"_s.arg(subjectText(raised.subjectKind, subject), now, why);
    publish(std::move(event));
}

void AlertEvaluator::publish(AlertEvent event)
{
    event.sequence = ++m_sequence;
    const bool raised = event.kind == AlertEvent::Kind::Raised;
    // A raise is a warning: it is what someone must look at. A clear is news, at info.
    const QtMsgType type = raised ? QtWarningMsg : QtInfoMsg;
    if (lcAlerts().isEnabled(type)) {
        logging::LogFields fields;
        fields.add("event"_L1, QString(eventKindName(event.kind)))
            .add("rule"_L1, QString(config::alertRuleName(event.rule)))
            .add("severity"_L1, QString(config::alertSeverityName(event.severity)))
            .add("subject"_L1, event.subject)
            .add("value"_L1, std::isnan(event.value) ? QString() : QString::number(event.value))
            .add("threshold"_L1, QString::number(event.threshold))
            .add(
                "since"_L1,
                QDateTime::fromMSecsSinceEpoch(event.sinceMs, Qt::UTC).toString(Qt::ISODateWithMs));
        logging::write(lcAlerts(), type,
                       (raised ? u"alert raised: "_s : u"alert cleared: "_s) + event.message,
                       fields);
    }
    const int kept = std::max(1, m_store.config().alerts.eventsKept);
    m_recent.append(event);
    while (m_recent.size() > kept)
        m_recent.removeFirst();
    emit alertEvent(event);
}

AlertsState AlertEvaluator::state(int recentLimit) const
{
    AlertsState state;
    state.active = m_active;
    state.recent = recentLimit >= m_recent.size() ? m_recent : m_recent.last(recentLimit);
    state.eventsTotal = m_sequence;
    return state;
}

} // namespace switchyard::alerts
