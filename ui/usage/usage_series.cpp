#include "ui/usage/usage_series.h"

#include "ui/common/usd_format.h"

#include <QHash>
#include <QLocale>
#include <algorithm>

namespace switchyard::ui {

namespace {

QDateTime startOfUtcDay(const QDateTime &at)
{
    return QDateTime(at.toUTC().date(), QTime(0, 0), Qt::UTC);
}

int daysOf(UsageRange range)
{
    switch (range) {
    case UsageRange::Today:
        return 1;
    case UsageRange::SevenDays:
        return 7;
    case UsageRange::ThirtyDays:
        return 30;
    }
    return 1;
}

} // namespace

usage::UsageQuery chartQuery(UsageRange range, UsageBreakdown breakdown, const QDateTime &nowUtc)
{
    usage::UsageQuery query;
    const QDateTime tomorrow = startOfUtcDay(nowUtc).addDays(1);
    query.from = tomorrow.addDays(-daysOf(range));
    query.to = tomorrow;
    query.groupBy = {range == UsageRange::Today ? usage::UsageDimension::Hour
                                                : usage::UsageDimension::Day,
                     breakdown == UsageBreakdown::Tenant ? usage::UsageDimension::Tenant
                                                         : usage::UsageDimension::Model};
    return query;
}

usage::UsageQuery topSpendersQuery(const QDateTime &nowUtc)
{
    usage::UsageQuery query;
    query.from = startOfUtcDay(nowUtc);
    query.to = query.from.addDays(1);
    query.groupBy = {usage::UsageDimension::Tenant};
    return query;
}

UsageChartData chartData(const usage::UsageReport &report, UsageRange range, int maxSeries)
{
    UsageChartData data;
    const bool hourly = range == UsageRange::Today;
    for (QDateTime bucket = report.query.from; bucket < report.query.to;
         bucket = hourly ? bucket.addSecs(3600) : bucket.addDays(1)) {
        data.bucketKeys.append(hourly ? bucket.toString(Qt::ISODate)
                                      : bucket.date().toString(Qt::ISODate));
        // Two characters a bucket fit level under 24 or 30 bars: the hour, or the day of the
        // month (a week's days show their month too).
        data.bucketLabels.append(hourly                           ? bucket.toString(u"HH"_qs)
                                 : range == UsageRange::SevenDays ? bucket.toString(u"MM-dd"_qs)
                                                                  : bucket.toString(u"dd"_qs));
    }
    QHash<QString, qsizetype> bucketIndex;
    for (qsizetype i = 0; i < data.bucketKeys.size(); ++i)
        bucketIndex.insert(data.bucketKeys[i], i);

    QList<UsageSeries> all;
    QHash<QString, qsizetype> seriesIndex;
    const qsizetype buckets = data.bucketKeys.size();
    for (const usage::UsageGroup &group : report.groups) {
        if (group.keys.size() < 2)
            continue;
        const auto bucket = bucketIndex.constFind(group.keys[0]);
        if (bucket == bucketIndex.cend())
            continue;
        const QString &name = group.keys[1];
        auto found = seriesIndex.constFind(name);
        if (found == seriesIndex.cend()) {
            UsageSeries series;
            series.name = name;
            series.spendUsd.fill(0.0, buckets);
            series.tokens.fill(0.0, buckets);
            found = seriesIndex.insert(name, all.size());
            all.append(std::move(series));
        }
        UsageSeries &series = all[*found];
        const double tokens = double(group.inputTokens + group.outputTokens);
        series.spendUsd[*bucket] += group.costUsd;
        series.tokens[*bucket] += tokens;
        series.totalSpendUsd += group.costUsd;
        series.totalTokens += tokens;
        data.spendUsd += group.costUsd;
        data.inputTokens += group.inputTokens;
        data.outputTokens += group.outputTokens;
        data.requests += group.requests;
        data.estimatedRequests += group.estimatedRequests;
        data.unpricedRequests += group.unpricedRequests;
        data.cacheReadTokens += group.cacheReadTokens;
        data.cacheWriteTokens += group.cacheWriteTokens;
        data.cacheSavedUsd += group.cacheSavedUsd;
        data.responseCacheHits += group.responseCacheHits;
        data.responseCacheMisses += group.responseCacheMisses;
        data.responseCacheSavedUsd += group.responseCacheSavedUsd;
    }
    std::sort(all.begin(), all.end(), [](const UsageSeries &a, const UsageSeries &b) {
        if (a.totalSpendUsd != b.totalSpendUsd)
            return a.totalSpendUsd > b.totalSpendUsd;
        if (a.totalTokens != b.totalTokens)
            return a.totalTokens > b.totalTokens;
        return a.name < b.name;
    });
    if (all.size() > maxSeries) {
        UsageSeries other;
        other.isOther = true;
        other.spendUsd.fill(0.0, buckets);
        other.tokens.fill(0.0, buckets);
        for (qsizetype i = maxSeries; i < all.size(); ++i) {
            for (qsizetype b = 0; b < buckets; ++b) {
                other.spendUsd[b] += all[i].spendUsd[b];
                other.tokens[b] += all[i].tokens[b];
            }
            other.totalSpendUsd += all[i].totalSpendUsd;
            other.totalTokens += all[i].totalTokens;
        }
        all.resize(maxSeries);
        all.append(std::move(other));
    }
    data.series = std::move(all);
    return data;
}

QString promptCacheText(qint64 readTokens, qint64 writeTokens)
{
    const QLocale locale;
    //: %1 input tokens read from the providers' prompt caches; %2 written to them
    return TopSpendersModel::tr("%1 input tokens read from the prompt cache, %2 written to it")
        .arg(locale.toString(readTokens), locale.toString(writeTokens));
}

void TopSpendersModel::setReport(const usage::UsageReport &report)
{
    beginResetModel();
    m_groups = report.groups.mid(0, kMostRows); // the report is ordered by cost already
    endResetModel();
}

int TopSpendersModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_groups.size());
}

int TopSpendersModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TopSpendersModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_groups.size())
        return {};
    const usage::UsageGroup &group = m_groups[index.row()];
    const QLocale locale;
    if (role == Qt::TextAlignmentRole)
        return index.column() == TenantColumn ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                              : int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == EstimatedColumn)
        return tr("%n request(s) with estimated tokens: the provider reported no usage", nullptr,
                  int(group.estimatedRequests));
    // The table has no room for another column: a spend's tooltip says what the cache saved.
    if (role == Qt::ToolTipRole && index.column() == SpendColumn)
        //: %1 US dollars the prompt cache saved (negative: it cost more); %2 its reads and writes
        return tr("Prompt-cache savings: %1\n%2")
            .arg(formatUsd(group.cacheSavedUsd),
                 promptCacheText(group.cacheReadTokens, group.cacheWriteTokens));
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case TenantColumn:
        return group.keys.value(0).isEmpty() ? tr("(no tenant)") : group.keys.value(0);
    case RequestsColumn:
        return locale.toString(group.requests);
    case TokensColumn:
        //: input tokens → output tokens
        return tr("%1 → %2").arg(locale.toString(group.inputTokens),
                                 locale.toString(group.outputTokens));
    case EstimatedColumn:
        return locale.toString(group.estimatedShare() * 100.0, 'f', 0) + QLocale().percent();
    case SpendColumn:
        return formatUsd(group.costUsd);
    default:
        return {};
    }
}

QVariant TopSpendersModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::TextAlignmentRole)
        return section == TenantColumn ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                       : int(Qt::AlignRight | Qt::AlignVCenter);
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case TenantColumn:
        return tr("Tenant");
    case RequestsColumn:
        return tr("Requests");
    case TokensColumn:
        return tr("Tokens in → out");
    case EstimatedColumn:
        return tr("Estimated");
    case SpendColumn:
        return tr("Spend");
    default:
        return {};
    }
}

} // namespace switchyard::ui
