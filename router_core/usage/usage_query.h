#pragma once

#include "usage/usage_types.h"

#include <QHash>
#include <QUrlQuery>
#include <variant>

namespace switchyard::usage {

// A refused query: what was wrong, and the parameter.
struct QueryProblem {
    QString message;
    QString param;
};

// Reads `group_by`, `from` and `to` as GET /admin/v1/usage takes them (docs/operations.md):
// group_by is one or more of tenant, key, model, provider, day, hour, comma-separated (default
// tenant); from and to are ISO dates (a date `to` includes that day) or RFC 3339 times. Without
// them the report covers today, UTC, by `now`.
std::variant<UsageQuery, QueryProblem> parseUsageQuery(const QUrlQuery &query,
                                                       const QDateTime &nowUtc);

// The start of `at`'s UTC day and month, and the start of the next.
QDateTime startOfUtcDay(const QDateTime &at);
QDateTime startOfUtcMonth(const QDateTime &at);

// A row's value for a dimension, as reports show it.
QString dimensionValue(const LedgerRow &row, UsageDimension dimension);

// Sums rows and groups into one report's groups, merging groups with the same keys: the
// database's groups and those of the rows still in memory end up as one.
class UsageAggregate {
public:
    explicit UsageAggregate(QList<UsageDimension> groupBy) : m_groupBy(std::move(groupBy)) {}

    void add(const LedgerRow &row);
    void add(const UsageGroup &group);
    // Ordered as UsageReport says.
    QList<UsageGroup> groups() const;

private:
    UsageGroup &groupFor(const QStringList &keys);

    QList<UsageDimension> m_groupBy;
    QList<UsageGroup> m_groups;
    QHash<QStringList, qsizetype> m_index;
};

} // namespace switchyard::usage
