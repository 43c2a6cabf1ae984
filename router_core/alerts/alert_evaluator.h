#pragma once

#include "alerts/alert_types.h"
#include "alerts/tier_windows.h"
#include "telemetry/request_recorder.h"
#include "timing/clock.h"

#include <QHash>
#include <QObject>
#include <QTimer>
#include <memory>
#include <optional>

namespace switchyard::config {
class ConfigStore;
}

namespace switchyard::alerts {

// The alert rules' evaluator (docs/operations.md, "Alerts"). A trace sink on the engine thread:
// each finished request goes into its tier's ten-second windows and the gateway's (O(1), nothing
// allocated per request). Every `alerts.evaluate_every` it reads the rules from the config store
// in force and evaluates each rule for each subject (tier, budget, the gateway) on the injected
// clock, so tests run it in simulated time by calling evaluate() after moving a ManualClock.
//
// A condition raises its alert once it has held at every evaluation for the rule's `for`, and
// clears it once it has not held at any evaluation for the rule's `clear_after` (the hysteresis:
// one good evaluation does not clear, one bad one does not re-arm). A window with fewer counted
// requests than `min_requests` is not enough to judge: the condition does not hold. The latency
// rule's baseline is frozen from the evaluation its condition starts to hold until it no longer
// holds and is not raised.
class AlertEvaluator final : public QObject, public telemetry::TraceSink {
    Q_OBJECT
public:
    AlertEvaluator(const config::ConfigStore &store, const timing::Clock &clock,
                   QObject *parent = nullptr);
    ~AlertEvaluator() override;

    // Engine thread, once per finished request.
    void traceFinished(const telemetry::Trace &trace) override;
    // Adds one request as if it had finished now; traceFinished calls it.
    void countRequest(const telemetry::RequestRecord &record);

    // Starts the evaluation timer (alerts.evaluate_every; a config change takes effect at the
    // next tick).
    void start();
    // One evaluation of every rule at the clock's present time.
    void evaluate();
    quint64 evaluations() const { return m_evaluations; }

    const QList<ActiveAlert> &active() const { return m_active; }
    const QList<AlertEvent> &recentEvents() const { return m_recent; }
    quint64 eventsTotal() const { return m_sequence; }
    // The console's and the admin API's view; `recentLimit` newest events at most.
    AlertsState state(int recentLimit) const;

    // Most tiers followed; a tier beyond them (only a config with that many would make one) is
    // not evaluated, and said so once.
    static constexpr int kMostTiers = 64;
    static constexpr int kMostBudgets = 1024;

public Q_SLOTS:
    // The budget tracker's reading of one budget: `usedFraction` of it is spent (0.8 is 80 %).
    // The budget_used rule compares the last reading at each evaluation.
    void observeBudget(const QString &budgetName, double usedFraction);
    // Every budget there is now, with its used share: replaces all earlier readings, so a budget
    // a reload removed or renamed is forgotten and its alert cleared at the next evaluation.
    void observeBudgets(const QList<QPair<QString, double>> &readings);

Q_SIGNALS:
    // Every raise and clear, as it is logged; the webhook and the console follow it.
    void alertEvent(const switchyard::alerts::AlertEvent &event);

private:
    struct Condition {
        bool holds = false;
        double value = 0.0;     // NaN when there was too little to judge
        double threshold = 0.0; // as compared
        ValueUnit unit = ValueUnit::Ratio;
        double baselineMs = 0.0; // tier_latency_p95: the baseline the threshold is a factor of
        QString detail;          // what the value was computed from, for the message
    };
    struct RuleState {
        std::optional<timing::Clock::TimePoint> holdingSince;
        qint64 holdingSinceMs = 0;
        std::optional<timing::Clock::TimePoint> notHoldingSince;
        bool active = false;
        // tier_latency_p95: the baseline as it was when the condition started to hold, kept
        // while it holds or is raised, so a lasting slowdown never becomes its own baseline.
        std::optional<double> frozenBaselineMs;
    };
    using StateKey = QPair<int, QString>; // rule kind, subject

    Condition tierCondition(config::AlertRuleKind kind, const config::AlertRuleConfig &rule,
                            const TrafficWindows &windows, timing::Clock::TimePoint now,
                            std::optional<double> &frozenBaselineMs) const;
    Condition failSafeCondition(const config::AlertRuleConfig &rule,
                                timing::Clock::TimePoint now) const;
    void step(config::AlertRuleKind kind, const config::AlertRuleConfig &rule,
              SubjectKind subjectKind, const QString &subject, const Condition &condition,
              timing::Clock::TimePoint now);
    void raise(config::AlertRuleKind kind, const config::AlertRuleConfig &rule,
               SubjectKind subjectKind, const QString &subject, const Condition &condition,
               qint64 sinceMs);
    void clear(config::AlertRuleKind kind, const QString &subject, const Condition &condition,
               const QString &why);
    void publish(AlertEvent event);
    // Clears the alerts, and drops the states, of budgets the last full reading did not have.
    void forgetBudgetsNoLongerObserved();
    TrafficWindows *tierWindows(const QString &tier);

    const config::ConfigStore &m_store;
    const timing::Clock &m_clock;
    QTimer m_timer{this}; // parented: moveToThread() takes it along
    TrafficWindows m_gateway;
    QHash<QString, std::shared_ptr<TrafficWindows>> m_tiers;
    QHash<QString, double> m_budgets;
    QHash<StateKey, RuleState> m_states;
    QList<ActiveAlert> m_active;
    QList<AlertEvent> m_recent;
    quint64 m_sequence = 0;
    quint64 m_evaluations = 0;
    bool m_saidTooManyTiers = false;
    bool m_saidTooManyBudgets = false;
};

} // namespace switchyard::alerts
