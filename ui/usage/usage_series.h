#pragma once

#include "usage/usage_types.h"

#include <QAbstractTableModel>
#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>

namespace switchyard::ui {

// The Usage page's time ranges: today by hour, or the last 7 or 30 UTC days by day.
enum class UsageRange { Today, SevenDays, ThirtyDays };
// What the page's charts are broken down by.
enum class UsageBreakdown { Tenant, Model };

// The report the charts ask for: by hour or day, then by tenant or model, over the range ending
// with today (UTC).
usage::UsageQuery chartQuery(UsageRange range, UsageBreakdown breakdown, const QDateTime &nowUtc);
// Today's spend by tenant, for the "top spenders" table.
usage::UsageQuery topSpendersQuery(const QDateTime &nowUtc);

// One tenant's or model's line through the buckets of a range.
struct UsageSeries {
    QString name;           // the tenant or model; empty for requests without one
    bool isOther = false;   // the rest, beyond the largest few
    QList<double> spendUsd; // one value per bucket
    QList<double> tokens;   // input and output, one value per bucket
    double totalSpendUsd = 0.0;
    double totalTokens = 0.0;
};

// A report laid out for the charts: every bucket of the range (empty ones too, so the time axis
// is regular), the largest `maxSeries` tenants or models by spend (then tokens), the rest
// summed into one "other" series, and the range's totals.
struct UsageChartData {
    QStringList bucketKeys;   // as the report names them: "2026-12-01" or "2026-12-01T14:00:00Z"
    QStringList bucketLabels; // as the axis shows them: "14" (hour), "12-01" (7 days), "01"
    QList<UsageSeries> series;
    double spendUsd = 0.0;
    qint64 inputTokens = 0;
    qint64 outputTokens = 0;
    qint64 requests = 0;
    qint64 estimatedRequests = 0;
    qint64 unpricedRequests = 0;
    qint64 cacheReadTokens = 0; // of inputTokens
    qint64 cacheWriteTokens = 0;
    double cacheSavedUsd = 0.0;
    // The response cache: requests answered from it, those it missed, what the hits saved.
    qint64 responseCacheHits = 0;
    qint64 responseCacheMisses = 0;
    double responseCacheSavedUsd = 0.0;

    double estimatedShare() const { return requests ? double(estimatedRequests) / requests : 0.0; }
    qint64 responseCacheLookups() const { return responseCacheHits + responseCacheMisses; }
};
UsageChartData chartData(const usage::UsageReport &report, UsageRange range, int maxSeries = 5);

// Today's tenants by spend, highest first: the "top spenders" table. The whole list is replaced
// with each report (it is a new ranking, not an update of rows).
class TopSpendersModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        TenantColumn,
        RequestsColumn,
        TokensColumn,
        EstimatedColumn,
        SpendColumn,
        ColumnCount
    };
    static constexpr int kMostRows = 10;

    using QAbstractTableModel::QAbstractTableModel;

    void setReport(const usage::UsageReport &report);
    const QList<usage::UsageGroup> &groups() const { return m_groups; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<usage::UsageGroup> m_groups;
};

// "1,200 input tokens read from the prompt cache, 300 written to it": a range's or a row's.
QString promptCacheText(qint64 readTokens, qint64 writeTokens);

} // namespace switchyard::ui
