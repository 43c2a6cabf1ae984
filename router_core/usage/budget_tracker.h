#pragma once

#include "config/config_store.h"
#include "protocol/openai_error.h"
#include "timing/clock.h"
#include "usage/usage_types.h"

#include <QDateTime>
#include <QHash>
#include <QObject>
#include <QSet>
#include <optional>

namespace switchyard::usage {

// What the ledger already held for the current day and month when the engine started (or when
// the database came back): the spend of earlier runs, by tenant and by key.
struct SpendSeed {
    QDateTime dayStart;   // the UTC day the day sums are for
    QDateTime monthStart; // the UTC month the month sums are for
    QHash<QString, double> tenantDayUsd;
    QHash<QString, double> tenantMonthUsd;
    QHash<QString, double> keyDayUsd;
    QHash<QString, double> keyMonthUsd;
};

// This node's spend and the rest of the fleet's for one tenant or key in the current windows.
struct SubjectSpend {
    bool byTenant = true;
    QString subject; // the tenant, or the key's id
    double dayUsd = 0.0;
    double monthUsd = 0.0;
};

// Spend per tenant and per client key for the current UTC day and month (of `clock`'s wall time,
// injected so tests can cross midnight and the end of a month without waiting), in memory, and the
// `budgets` of the config in force checked against it at admission. One owner: the engine thread.
//
// In a fleet, budgets count what every node spent: this node's own spend (what it served, seeded
// from its own ledger) is kept apart from what the other nodes report (setOthersSpend), so the
// node can publish its own as an absolute figure, which stays right however often it is sent.
// Spend is kept for every tenant and key, budget or not, so a budget added by a reload sees what
// was spent before it; an entry is dropped when a window roll leaves it nothing spent. Kept apart
// from the ledger so an alert evaluator can read budgets() and listen to fractionStepCrossed
// without knowing of SQLite.
class BudgetTracker final : public QObject {
    Q_OBJECT
public:
    BudgetTracker(const config::ConfigStore &store,
                  const timing::Clock &clock = timing::SteadyClock::instance(),
                  QObject *parent = nullptr);

    // A finished request's cost, added to its tenant's and key's day and month.
    void addSpend(const QString &tenant, const QString &keyId, double usd);
    // Adds what the ledger held before this run; a seed for a day or month already over is
    // ignored for that window.
    void addSeed(const SpendSeed &seed);

    // The refusal for a request whose tenant or key has used up a budget: 429 in OpenAI's shape
    // naming the budget and when it resets, with Retry-After to the reset. Empty when admitted.
    std::optional<protocol::ApiError> refusal(const QString &tenant, const QString &keyId);

    // The fleet's side (docs/fleet.md, "Budgets"). Once sharing is on, every tenant and key whose
    // own spend changed is remembered until takeChangedOwnSpend() hands it out.
    void setSharing(bool on) { m_sharing = on; }
    QList<SubjectSpend> takeChangedOwnSpend();
    QList<SubjectSpend> allOwnSpend();
    // What the other nodes spent on `subject` in the current windows, as they last reported it.
    void setOthersSpend(const SubjectSpend &others);
    // The current windows' starts: the fleet's counters are named by them.
    QDateTime dayStart();
    QDateTime monthStart();

    // Every configured budget in each of its windows, in config order.
    QList<BudgetStatus> budgets();

    // What the fleet spent: this node's own spend and the others'.
    double tenantSpentUsd(const QString &tenant, const QString &window);
    double keySpentUsd(const QString &keyId, const QString &window);
    // Tenants and keys with spend held now (those of the current month): what memory it takes.
    qsizetype trackedSpendEntries();

Q_SIGNALS:
    // A budget's used fraction reached a new tenth (`percent` is 10, 20, ... 100) in its
    // window; once per step and window, again from the start after the window resets.
    void fractionStepCrossed(const switchyard::usage::BudgetStatus &status, int percent);

private:
    struct Spend {
        double dayUsd = 0.0;
        double monthUsd = 0.0;
        double othersDayUsd = 0.0; // the rest of the fleet
        double othersMonthUsd = 0.0;
        double totalDay() const { return dayUsd + othersDayUsd; }
        double totalMonth() const { return monthUsd + othersMonthUsd; }
    };
    void rollWindows(); // clears what belongs to a day or month that is over
    QList<BudgetStatus> statusesOf(const config::BudgetConfig &budget) const;
    void announceSteps(const QString &tenant, const QString &keyId);

    const config::ConfigStore &m_store;
    const timing::Clock &m_clock;
    QDateTime m_dayStart;
    QDateTime m_monthStart;
    QHash<QString, Spend> m_tenants;
    QHash<QString, Spend> m_keys;
    QHash<QString, int> m_announcedSteps; // "name/window" -> the last tenth announced
    bool m_sharing = false;
    QSet<QString> m_changedTenants; // own spend not yet handed to the fleet
    QSet<QString> m_changedKeys;
};

} // namespace switchyard::usage
