#include "ui/routes/shadow_comparison_model.h"

#include "ui/common/usd_format.h"

#include <QColor>
#include <QLocale>
#include <algorithm>
#include <cmath>
#include <vector>

namespace switchyard::ui {

namespace {

// The console's colours for a difference: worse in red, better in green (the health matrix's).
const QColor kWorse(0xb4, 0x23, 0x18);
const QColor kBetter(0x1a, 0x7f, 0x37);

// "+12", "−3.5", "0": a sign a reader cannot miss, the number in the user's locale.
QString signedNumber(double value, int decimals)
{
    const QLocale locale;
    const double rounded = std::round(value * std::pow(10.0, decimals)) / std::pow(10.0, decimals);
    const QString digits = locale.toString(std::abs(rounded), 'f', decimals);
    if (rounded > 0.0)
        return QStringLiteral("+") + digits;
    if (rounded < 0.0)
        return QStringLiteral("−") + digits;
    return digits;
}

} // namespace

qint64 ShadowSide::medianLatencyMs() const
{
    if (latenciesMs.empty())
        return -1;
    std::vector<qint64> sorted(latenciesMs.begin(), latenciesMs.end());
    const auto middle = sorted.begin() + qsizetype(sorted.size() / 2);
    std::nth_element(sorted.begin(), middle, sorted.end());
    return *middle;
}

ShadowComparisonModel::ShadowComparisonModel(QObject *parent) : QAbstractTableModel(parent) {}

int ShadowComparisonModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() || m_route.isEmpty() ? 0 : MeasureCount;
}

int ShadowComparisonModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

const ShadowTally *ShadowComparisonModel::tally(const QString &route) const
{
    const auto found = m_tallies.constFind(route);
    return found == m_tallies.cend() ? nullptr : &*found;
}

QString ShadowComparisonModel::measureName(int measure) const
{
    switch (measure) {
    case RequestsMeasure:
        return tr("Requests");
    case ErrorRateMeasure:
        return tr("Error rate");
    case MedianLatencyMeasure:
        return tr("Median latency");
    case TokensPerRequestMeasure:
        return tr("Tokens per request");
    case CostPerRequestMeasure:
        return tr("Cost per request");
    default:
        return {};
    }
}

QString ShadowComparisonModel::value(const ShadowSide &side, int measure) const
{
    const QLocale locale;
    if (side.requests == 0)
        return measure == RequestsMeasure ? locale.toString(0) : QStringLiteral("–");
    switch (measure) {
    case RequestsMeasure:
        return locale.toString(side.requests);
    case ErrorRateMeasure:
        //: An error rate, e.g. "2.5 %"
        return tr("%1 %").arg(locale.toString(side.errorRate() * 100.0, 'f', 1));
    case MedianLatencyMeasure:
        //: Milliseconds, e.g. "840 ms"
        return tr("%1 ms").arg(locale.toString(side.medianLatencyMs()));
    case TokensPerRequestMeasure:
        return locale.toString(side.tokensPerRequest(), 'f', 0);
    case CostPerRequestMeasure:
        return formatUsd(side.costPerRequestUsd());
    default:
        return {};
    }
}

std::optional<double> ShadowComparisonModel::change(int measure) const
{
    const ShadowTally *counted = tally(m_route);
    if (!counted || counted->live.requests == 0 || counted->shadow.requests == 0)
        return std::nullopt;
    const ShadowSide &live = counted->live;
    const ShadowSide &shadow = counted->shadow;
    // Relative to live, where live's figure is not zero.
    const auto relative = [](double liveValue, double shadowValue) -> std::optional<double> {
        if (liveValue <= 0.0)
            return std::nullopt;
        return (shadowValue / liveValue - 1.0) * 100.0;
    };
    switch (measure) {
    case ErrorRateMeasure:
        return (shadow.errorRate() - live.errorRate()) * 100.0; // in percentage points
    case MedianLatencyMeasure:
        return relative(double(live.medianLatencyMs()), double(shadow.medianLatencyMs()));
    case TokensPerRequestMeasure:
        return relative(live.tokensPerRequest(), shadow.tokensPerRequest());
    case CostPerRequestMeasure:
        return relative(live.costPerRequestUsd(), shadow.costPerRequestUsd());
    default:
        return std::nullopt;
    }
}

QString ShadowComparisonModel::difference(int measure) const
{
    const std::optional<double> changed = change(measure);
    if (!changed)
        return measure == RequestsMeasure ? QString() : QStringLiteral("–");
    if (measure == ErrorRateMeasure)
        //: A difference of two error rates in percentage points, e.g. "+1.5 pts"
        return tr("%1 pts").arg(signedNumber(*changed, 1));
    //: The shadow's figure relative to live's, e.g. "+12 %"
    return tr("%1 %").arg(signedNumber(*changed, 0));
}

QVariant ShadowComparisonModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const ShadowTally *counted = tally(m_route);
    if (!counted)
        return {};
    const int measure = index.row();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case MeasureColumn:
            return measureName(measure);
        case LiveColumn:
            return value(counted->live, measure);
        case ShadowColumn:
            return value(counted->shadow, measure);
        case DifferenceColumn:
            return difference(measure);
        default:
            return {};
        }
    case Qt::TextAlignmentRole:
        if (index.column() != MeasureColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::ForegroundRole: {
        // Tokens are neither better nor worse in themselves; their price is the cost row.
        if (index.column() != DifferenceColumn || measure == TokensPerRequestMeasure)
            return {};
        const std::optional<double> changed = change(measure);
        if (!changed || std::abs(*changed) < 0.5)
            return {};
        return *changed > 0.0 ? kWorse : kBetter;
    }
    default:
        return {};
    }
}

QVariant ShadowComparisonModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case MeasureColumn:
        return QString();
    case LiveColumn:
        return tr("Live");
    case ShadowColumn:
        return tr("Shadow");
    case DifferenceColumn:
        //: Column header: the shadow's figure compared with live's
        return tr("Shadow vs live");
    default:
        return {};
    }
}

void ShadowComparisonModel::count(ShadowSide &side, const telemetry::RequestRecord &record)
{
    ++side.requests;
    if (record.isError())
        ++side.errors;
    side.tokens +=
        std::max<qint64>(record.inputTokens, 0) + std::max<qint64>(record.outputTokens, 0);
    side.costUsd += record.costUsd;
    side.latenciesMs.push_back((record.totalMicros - record.queuedMicros) / 1000);
    if (side.latenciesMs.size() > size_t(kLatencySamples))
        side.latenciesMs.pop_front();
    side.provider = record.provider;
}

void ShadowComparisonModel::addRecords(const QList<telemetry::RequestRecord> &records)
{
    bool changedShown = false;
    bool routesAdded = false;
    for (const telemetry::RequestRecord &record : records) {
        const bool shadow = record.isShadow();
        // A live request that was not mirrored has nothing to be compared with; a shadow let go
        // for live traffic says nothing of its provider.
        if (!shadow && record.shadowRequestId.isEmpty())
            continue;
        if (shadow && record.outcome == QLatin1StringView(telemetry::kShadowLetGoOutcome))
            continue;
        ShadowTally &counted = m_tallies[record.route];
        count(shadow ? counted.shadow : counted.live, record);
        if (shadow && !m_routes.contains(record.route)) {
            m_routes.append(record.route);
            routesAdded = true;
        }
        changedShown = changedShown || record.route == m_route;
    }
    if (m_route.isEmpty() && !m_routes.isEmpty()) {
        setRoute(m_routes.first());
    } else if (changedShown) {
        Q_EMIT dataChanged(index(0, LiveColumn), index(MeasureCount - 1, DifferenceColumn),
                           {Qt::DisplayRole, Qt::ForegroundRole});
    }
    if (routesAdded)
        Q_EMIT routesChanged();
}

void ShadowComparisonModel::setRoute(const QString &route)
{
    if (route == m_route || !m_routes.contains(route))
        return;
    // Another route's figures replace every cell: the one reset this model does.
    beginResetModel();
    m_route = route;
    endResetModel();
}

void ShadowComparisonModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

} // namespace switchyard::ui
