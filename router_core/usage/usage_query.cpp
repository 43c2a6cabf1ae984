#include "usage/usage_query.h"

#include <algorithm>

namespace switchyard::usage {

using namespace Qt::StringLiterals;

QString dimensionName(UsageDimension dimension)
{
    switch (dimension) {
    case UsageDimension::Tenant:
        return u"tenant"_s;
    case UsageDimension::Key:
        return u"key"_s;
    case UsageDimension::Model:
        return u"model"_s;
    case UsageDimension::Provider:
        return u"provider"_s;
    case UsageDimension::Day:
        return u"day"_s;
    case UsageDimension::Hour:
        return u"hour"_s;
    }
    return {};
}

QDateTime startOfUtcDay(const QDateTime &at)
{
    return QDateTime(at.toUTC().date(), QTime(0, 0), Qt::UTC);
}

QDateTime startOfUtcMonth(const QDateTime &at)
{
    const QDate date = at.toUTC().date();
    return QDateTime(QDate(date.year(), date.month(), 1), QTime(0, 0), Qt::UTC);
}

namespace {

const QList<UsageDimension> kAllDimensions{UsageDimension::Tenant, UsageDimension::Key,
                                           UsageDimension::Model,  UsageDimension::Provider,
                                           UsageDimension::Day,    UsageDimension::Hour};

bool isTime(UsageDimension dimension)
{
    return dimension == UsageDimension::Day || dimension == UsageDimension::Hour;
}

// An ISO date ("2026-12-01": the start of that UTC day, or with `endOfDay` the start of the
// next) or an RFC 3339 time with its offset ("2026-12-01T14:00:00Z", "...+08:00").
std::optional<QDateTime> readTime(const QString &text, bool endOfDay)
{
    const QDate date = QDate::fromString(text, Qt::ISODate);
    if (date.isValid() && text.size() == 10) {
        const QDateTime start(date, QTime(0, 0), Qt::UTC);
        return endOfDay ? start.addDays(1) : start;
    }
    // RFC 3339 needs the offset: a time without one would be read in the server's own zone.
    const bool hasOffset =
        text.endsWith(u'Z') || text.endsWith(u'z') ||
        (text.size() > 6 && (text[text.size() - 6] == u'+' || text[text.size() - 6] == u'-'));
    QDateTime time = QDateTime::fromString(text.toUpper(), Qt::ISODateWithMs);
    if (!time.isValid() || !hasOffset || !text.contains(u'T', Qt::CaseInsensitive))
        return std::nullopt;
    return time.toUTC();
}

} // namespace

std::variant<UsageQuery, QueryProblem> parseUsageQuery(const QUrlQuery &query,
                                                       const QDateTime &nowUtc)
{
    UsageQuery parsed;
    const QString groupBy = query.queryItemValue(u"group_by"_s, QUrl::FullyDecoded);
    if (query.hasQueryItem(u"group_by"_s)) {
        parsed.groupBy.clear();
        for (const QString &word : groupBy.split(u',')) {
            const QString name = word.trimmed();
            const auto found = std::find_if(
                kAllDimensions.cbegin(), kAllDimensions.cend(),
                [&](UsageDimension dimension) { return dimensionName(dimension) == name; });
            if (found == kAllDimensions.cend()) {
                return QueryProblem{
                    u"`group_by` must be `tenant`, `key`, `model`, `provider`, `day` or `hour` "
                    u"(several separated by commas), got `%1`."_s.arg(name),
                    u"group_by"_s};
            }
            if (parsed.groupBy.contains(*found)) {
                return QueryProblem{u"`group_by` names `%1` twice."_s.arg(name), u"group_by"_s};
            }
            parsed.groupBy.append(*found);
        }
    }
    parsed.from = startOfUtcDay(nowUtc);
    parsed.to = parsed.from.addDays(1);
    for (const auto &[name, endOfDay] : {std::pair(u"from"_s, false), std::pair(u"to"_s, true)}) {
        if (!query.hasQueryItem(name))
            continue;
        const QString text = query.queryItemValue(name, QUrl::FullyDecoded);
        const std::optional<QDateTime> time = readTime(text, endOfDay);
        if (!time) {
            return QueryProblem{u"`%1` must be an ISO date such as `2026-12-01` or an RFC 3339 "
                                u"time such as `2026-12-01T14:00:00Z`, got `%2`."_s.arg(name, text),
                                name};
        }
        (endOfDay ? parsed.to : parsed.from) = *time;
    }
    // `from` alone reaches to the end of today; `to` alone starts at its own day.
    if (query.hasQueryItem(u"from"_s) && !query.hasQueryItem(u"to"_s))
        parsed.to = std::max(parsed.to, parsed.from.addSecs(1));
    if (!query.hasQueryItem(u"from"_s) && query.hasQueryItem(u"to"_s))
        parsed.from = startOfUtcDay(parsed.to.addMSecs(-1));
    if (parsed.from >= parsed.to) {
        return QueryProblem{u"`from` (%1) must be before `to` (%2)."_s.arg(
                                parsed.from.toString(Qt::ISODate), parsed.to.toString(Qt::ISODate)),
                            u"from"_s};
    }
    return parsed;
}

QString dimensionValue(const LedgerRow &row, UsageDimension dimension)
{
    switch (dimension) {
    case UsageDimension::Tenant:
        return row.tenant;
    case UsageDimension::Key:
        return row.keyId;
    case UsageDimension::Model:
        return row.model;
    case UsageDimension::Provider:
        return row.provider;
    case UsageDimension::Day:
        return QDateTime::fromMSecsSinceEpoch(row.finishedAtMs, Qt::UTC)
            .date()
            .toString(Qt::ISODate);
    case UsageDimension::Hour: {
        const QDateTime at = QDateTime::fromMSecsSinceEpoch(row.finishedAtMs, Qt::UTC);
        return QDateTime(at.date(), QTime(at.time().hour(), 0), Qt::UTC).toString(Qt::ISODate);
    }
    }
    return {};
}

void UsageGroup::addSums(const UsageGroup &other)
{
    requests += other.requests;
    inputTokens += other.inputTokens;
    outputTokens += other.outputTokens;
    estimatedRequests += other.estimatedRequests;
    unpricedRequests += other.unpricedRequests;
    cacheReadTokens += other.cacheReadTokens;
    cacheWriteTokens += other.cacheWriteTokens;
    costUsd += other.costUsd;
    cacheSavedUsd += other.cacheSavedUsd;
    responseCacheHits += other.responseCacheHits;
    responseCacheMisses += other.responseCacheMisses;
    responseCacheSavedUsd += other.responseCacheSavedUsd;
}

UsageGroup &UsageAggregate::groupFor(const QStringList &keys)
{
    const auto found = m_index.constFind(keys);
    if (found != m_index.cend())
        return m_groups[*found];
    m_index.insert(keys, m_groups.size());
    UsageGroup group;
    group.keys = keys;
    m_groups.append(std::move(group));
    return m_groups.last();
}

void UsageAggregate::add(const LedgerRow &row)
{
    QStringList keys;
    for (UsageDimension dimension : m_groupBy)
        keys.append(dimensionValue(row, dimension));
    UsageGroup &group = groupFor(keys);
    ++group.requests;
    group.inputTokens += row.inputTokens;
    group.outputTokens += row.outputTokens;
    group.estimatedRequests += row.tokensEstimated ? 1 : 0;
    group.unpricedRequests += row.priced ? 0 : 1;
    group.cacheReadTokens += row.cacheReadTokens;
    group.cacheWriteTokens += row.cacheWriteTokens;
    group.costUsd += row.costUsd;
    group.cacheSavedUsd += row.cacheSavedUsd;
    group.responseCacheHits += row.responseCache == QLatin1StringView("hit") ? 1 : 0;
    group.responseCacheMisses += row.responseCache == QLatin1StringView("miss") ? 1 : 0;
    group.responseCacheSavedUsd += row.responseCacheSavedUsd;
}

void UsageAggregate::add(const UsageGroup &other)
{
    groupFor(other.keys).addSums(other);
}

QList<UsageGroup> UsageAggregate::groups() const
{
    QList<UsageGroup> ordered = m_groups;
    const bool byTime = !m_groupBy.isEmpty() && isTime(m_groupBy.first());
    std::sort(ordered.begin(), ordered.end(), [byTime](const UsageGroup &a, const UsageGroup &b) {
        if (byTime && a.keys.first() != b.keys.first())
            return a.keys.first() < b.keys.first();
        if (a.costUsd != b.costUsd)
            return a.costUsd > b.costUsd;
        if (a.requests != b.requests)
            return a.requests > b.requests;
        return a.keys < b.keys;
    });
    return ordered;
}

} // namespace switchyard::usage
