#include "usage/budget_tracker.h"

#include "usage/usage_query.h"

#include <cmath>

namespace switchyard::usage {

using namespace Qt::StringLiterals;

BudgetTracker::BudgetTracker(const config::ConfigStore &store, const timing::Clock &clock,
                             QObject *parent)
    : QObject(parent), m_store(store), m_clock(clock)
{
    qRegisterMetaType<switchyard::usage::BudgetStatus>();
    const QDateTime now = m_clock.utcNow();
    m_dayStart = startOfUtcDay(now);
    m_monthStart = startOfUtcMonth(now);
}

void BudgetTracker::rollWindows()
{
    // Every request's spend comes here: within the current UTC day (a month starts with a day)
    // one clock read decides it, without building dates.
    constexpr qint64 kMsPerDay = 24 * 60 * 60 * 1000;
    const qint64 nowMs = m_clock.msSinceEpoch();
    const qint64 dayStartMs = m_dayStart.toMSecsSinceEpoch();
    if (nowMs >= dayStartMs && nowMs < dayStartMs + kMsPerDay)
        return;
    const QDateTime now = QDateTime::fromMSecsSinceEpoch(nowMs, Qt::UTC);
    const QDateTime day = startOfUtcDay(now);
    const QDateTime month = startOfUtcMonth(now);
    if (day == m_dayStart && month == m_monthStart)
        return;
    const bool newMonth = month != m_monthStart;
    // Tenants come from a client header when there are no keys, so any number of them may have
    // spent: an entry with nothing left in either window goes, and the tables hold at most the
    // tenants and keys of one month.
    for (QHash<QString, Spend> *spends : {&m_tenants, &m_keys}) {
        for (auto it = spends->begin(); it != spends->end();) {
            it->dayUsd = 0.0;
            it->othersDayUsd = 0.0;
            if (newMonth) {
                it->monthUsd = 0.0;
                it->othersMonthUsd = 0.0;
            }
            if (it->totalMonth() == 0.0)
                it = spends->erase(it);
            else
                ++it;
        }
    }
    // A new window starts its announcements from zero.
    for (auto it = m_announcedSteps.begin(); it != m_announcedSteps.end();) {
        if (it.key().endsWith(u"/day"_s) || newMonth)
            it = m_announcedSteps.erase(it);
        else
            ++it;
    }
    m_dayStart = day;
    m_monthStart = month;
}

void BudgetTracker::addSpend(const QString &tenant, const QString &keyId, double usd)
{
    rollWindows();
    if (usd <= 0.0)
        return;
    Spend &byTenant = m_tenants[tenant];
    byTenant.dayUsd += usd;
    byTenant.monthUsd += usd;
    if (!keyId.isEmpty()) {
        Spend &byKey = m_keys[keyId];
        byKey.dayUsd += usd;
        byKey.monthUsd += usd;
    }
    if (m_sharing) {
        m_changedTenants.insert(tenant);
        if (!keyId.isEmpty())
            m_changedKeys.insert(keyId);
    }
    announceSteps(tenant, keyId);
}

void BudgetTracker::addSeed(const SpendSeed &seed)
{
    rollWindows();
    const bool sameDay = seed.dayStart == m_dayStart;
    const bool sameMonth = seed.monthStart == m_monthStart;
    const auto add = [&](QHash<QString, Spend> &spends, const QHash<QString, double> &day,
                         const QHash<QString, double> &month) {
        QSet<QString> &changed = &spends == &m_tenants ? m_changedTenants : m_changedKeys;
        if (sameDay) {
            for (auto it = day.cbegin(); it != day.cend(); ++it) {
                spends[it.key()].dayUsd += it.value();
                if (m_sharing)
                    changed.insert(it.key());
            }
        }
        if (sameMonth) {
            for (auto it = month.cbegin(); it != month.cend(); ++it) {
                spends[it.key()].monthUsd += it.value();
                if (m_sharing)
                    changed.insert(it.key());
            }
        }
    };
    add(m_tenants, seed.tenantDayUsd, seed.tenantMonthUsd);
    add(m_keys, seed.keyDayUsd, seed.keyMonthUsd);
    // What earlier runs spent is not news: mark the steps already reached as announced.
    for (const config::BudgetConfig &budget : m_store.config().usage.budgets) {
        for (const BudgetStatus &status : statusesOf(budget)) {
            const int step = std::min(10, int(std::floor(status.fraction() * 10.0)));
            m_announcedSteps.insert(status.name + u'/' + status.window, step);
        }
    }
}

QList<SubjectSpend> BudgetTracker::takeChangedOwnSpend()
{
    rollWindows();
    QList<SubjectSpend> changed;
    changed.reserve(m_changedTenants.size() + m_changedKeys.size());
    for (const bool byTenant : {true, false}) {
        QSet<QString> &names = byTenant ? m_changedTenants : m_changedKeys;
        const QHash<QString, Spend> &spends = byTenant ? m_tenants : m_keys;
        for (const QString &name : std::as_const(names)) {
            // A window that rolled since has nothing of this node's to report in the new one.
            const Spend spend = spends.value(name);
            if (spend.monthUsd > 0.0)
                changed.append({byTenant, name, spend.dayUsd, spend.monthUsd});
        }
        names.clear();
    }
    return changed;
}

QList<SubjectSpend> BudgetTracker::allOwnSpend()
{
    rollWindows();
    QList<SubjectSpend> all;
    for (const bool byTenant : {true, false}) {
        const QHash<QString, Spend> &spends = byTenant ? m_tenants : m_keys;
        for (auto it = spends.cbegin(); it != spends.cend(); ++it) {
            if (it->monthUsd > 0.0)
                all.append({byTenant, it.key(), it->dayUsd, it->monthUsd});
        }
    }
    return all;
}

void BudgetTracker::setOthersSpend(const SubjectSpend &others)
{
    rollWindows();
    QHash<QString, Spend> &spends = others.byTenant ? m_tenants : m_keys;
    auto it = spends.find(others.subject);
    if (it == spends.end()) {
        if (others.monthUsd <= 0.0 && others.dayUsd <= 0.0)
            return;
        it = spends.insert(others.subject, {});
    }
    if (it->othersDayUsd == others.dayUsd && it->othersMonthUsd == others.monthUsd)
        return;
    it->othersDayUsd = others.dayUsd;
    it->othersMonthUsd = others.monthUsd;
    if (others.byTenant)
        announceSteps(others.subject, {});
    else
        announceSteps({}, others.subject);
}

QDateTime BudgetTracker::dayStart()
{
    rollWindows();
    return m_dayStart;
}

QDateTime BudgetTracker::monthStart()
{
    rollWindows();
    return m_monthStart;
}

qsizetype BudgetTracker::trackedSpendEntries()
{
    rollWindows();
    return m_tenants.size() + m_keys.size();
}

double BudgetTracker::tenantSpentUsd(const QString &tenant, const QString &window)
{
    rollWindows();
    const Spend spend = m_tenants.value(tenant);
    return window == u"day"_s ? spend.totalDay() : spend.totalMonth();
}

double BudgetTracker::keySpentUsd(const QString &keyId, const QString &window)
{
    rollWindows();
    const Spend spend = m_keys.value(keyId);
    return window == u"day"_s ? spend.totalDay() : spend.totalMonth();
}

QList<BudgetStatus> BudgetTracker::statusesOf(const config::BudgetConfig &budget) const
{
    const bool byTenant = budget.scope == config::BudgetConfig::Scope::Tenant;
    const Spend spend = (byTenant ? m_tenants : m_keys).value(budget.subject);
    QList<BudgetStatus> statuses;
    BudgetStatus status;
    status.name = budget.name;
    status.scope = byTenant ? u"tenant"_s : u"key"_s;
    status.subject = budget.subject;
    if (budget.dailyUsd) {
        status.window = u"day"_s;
        status.limitUsd = *budget.dailyUsd;
        status.spentUsd = spend.totalDay();
        status.resetsAt = m_dayStart.addDays(1);
        statuses.append(status);
    }
    if (budget.monthlyUsd) {
        status.window = u"month"_s;
        status.limitUsd = *budget.monthlyUsd;
        status.spentUsd = spend.totalMonth();
        status.resetsAt = m_monthStart.addMonths(1);
        statuses.append(status);
    }
    return statuses;
}

QList<BudgetStatus> BudgetTracker::budgets()
{
    rollWindows();
    QList<BudgetStatus> all;
    for (const config::BudgetConfig &budget : m_store.config().usage.budgets)
        all.append(statusesOf(budget));
    return all;
}

void BudgetTracker::announceSteps(const QString &tenant, const QString &keyId)
{
    for (const config::BudgetConfig &budget : m_store.config().usage.budgets) {
        const bool concerned = budget.scope == config::BudgetConfig::Scope::Tenant
                                   ? budget.subject == tenant
                                   : !keyId.isEmpty() && budget.subject == keyId;
        if (!concerned)
            continue;
        for (const BudgetStatus &status : statusesOf(budget)) {
            const int step = std::min(10, int(std::floor(status.fraction() * 10.0)));
            int &announced = m_announcedSteps[status.name + u'/' + status.window];
            if (step <= announced)
                continue;
            announced = step;
            emit fractionStepCrossed(status, step * 10);
        }
    }
}

namespace {

QString dollars(double usd)
{
    return u"$%1"_s.arg(usd, 0, 'f', usd < 1.0 ? 4 : 2);
}

} // namespace

std::optional<protocol::ApiError> BudgetTracker::refusal(const QString &tenant,
                                                         const QString &keyId)
{
    rollWindows();
    for (const config::BudgetConfig &budget : m_store.config().usage.budgets) {
        const bool byTenant = budget.scope == config::BudgetConfig::Scope::Tenant;
        const bool concerned =
            byTenant ? budget.subject == tenant : !keyId.isEmpty() && budget.subject == keyId;
        if (!concerned)
            continue;
        for (const BudgetStatus &status : statusesOf(budget)) {
            if (!status.exhausted())
                continue;
            const qint64 waitMs = std::max<qint64>(m_clock.utcNow().msecsTo(status.resetsAt), 0);
            protocol::ApiError error;
            error.status = 429;
            error.type = u"insufficient_quota"_s;
            error.code = u"budget_exceeded"_s;
            error.param = byTenant ? u"x-switchyard-tenant"_s : QString();
            error.message =
                u"Budget `%1` is used up: %2 spent of its %3 %4 limit (UTC %5). It resets at %6."_s
                    .arg(status.name, dollars(status.spentUsd), dollars(status.limitUsd),
                         status.window == u"day"_s ? u"daily"_s : u"monthly"_s, status.window,
                         status.resetsAt.toString(Qt::ISODate));
            error.retryAfter = QByteArray::number(
                protocol::ApiError::retryAfterSeconds(std::chrono::milliseconds(waitMs)));
            return error;
        }
    }
    return std::nullopt;
}

} // namespace switchyard::usage
