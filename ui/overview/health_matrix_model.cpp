#include "ui/overview/health_matrix_model.h"

#include "ui/common/endpoint_summary_text.h"

#include <QHash>
#include <QLocale>
#include <algorithm>
#include <cmath>
#include <utility>

namespace switchyard::ui {

namespace {

// Failed calls as a share of every call since start; 0 before the first.
double lifetimeErrorPercent(const ProviderHealth &provider)
{
    const quint64 calls = std::max(provider.requests, provider.errors);
    return calls == 0 ? 0.0 : 100.0 * double(provider.errors) / double(calls);
}

// Smallest and largest column whose display differs between two copies of the same provider,
// or {-1, -1} when nothing visible changed.
std::pair<int, int> changedProviderColumns(const ProviderHealth &before,
                                           const ProviderHealth &after)
{
    int first = -1;
    int last = -1;
    const auto mark = [&](int column, bool changed) {
        if (!changed)
            return;
        first = first < 0 ? column : std::min(first, column);
        last = std::max(last, column);
    };
    mark(HealthMatrixModel::ProviderColumn, before.kind != after.kind);
    const bool statusChanged =
        before.state != after.state || before.breaker != after.breaker ||
        before.operatorState != after.operatorState || before.trafficShare != after.trafficShare ||
        // The countdowns are shown in whole seconds; finer changes would repaint for nothing.
        before.msUntilHalfOpen / 1000 != after.msUntilHalfOpen / 1000 ||
        before.msUntilCoolDownEnds / 1000 != after.msUntilCoolDownEnds / 1000;
    mark(HealthMatrixModel::StateColumn, statusChanged);
    mark(HealthMatrixModel::ReasonColumn,
         statusChanged || before.breakerReason != after.breakerReason ||
             before.consecutiveFailures != after.consecutiveFailures ||
             before.lastFailure != after.lastFailure || before.recentCalls != after.recentCalls ||
             before.errorRatePercent != after.errorRatePercent ||
             before.inFlight != after.inFlight);
    mark(HealthMatrixModel::InFlightColumn, before.inFlight != after.inFlight);
    mark(HealthMatrixModel::RequestsColumn, before.requests != after.requests);
    mark(HealthMatrixModel::ErrorsColumn,
         before.errors != after.errors || before.errorRatePercent != after.errorRatePercent);
    mark(HealthMatrixModel::LatencyP50Column, before.p50LatencyMs != after.p50LatencyMs);
    mark(HealthMatrixModel::LatencyP95Column, before.p95LatencyMs != after.p95LatencyMs);
    mark(HealthMatrixModel::TimeToFirstTokenP50Column,
         before.p50TimeToFirstTokenMs != after.p50TimeToFirstTokenMs);
    mark(HealthMatrixModel::ModelsColumn, before.models != after.models);
    return {first, last};
}

bool isNumericColumn(int column)
{
    switch (column) {
    case HealthMatrixModel::InFlightColumn:
    case HealthMatrixModel::RequestsColumn:
    case HealthMatrixModel::ErrorsColumn:
    case HealthMatrixModel::LatencyP50Column:
    case HealthMatrixModel::LatencyP95Column:
    case HealthMatrixModel::TimeToFirstTokenP50Column:
        return true;
    default:
        return false;
    }
}

int alignmentFor(int column)
{
    const Qt::Alignment horizontal = isNumericColumn(column) ? Qt::AlignRight : Qt::AlignLeft;
    return (horizontal | Qt::AlignVCenter).toInt();
}

} // namespace

HealthMatrixModel::HealthMatrixModel(QObject *parent) : MergingTableModel(parent) {}

int HealthMatrixModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString HealthMatrixModel::formatLatency(double milliseconds)
{
    if (!(milliseconds >= 0.0)) // negative or NaN: no sample yet
        return QStringLiteral("\u2014");
    const QLocale locale;
    const double rounded = std::round(milliseconds);
    if (rounded < 1000.0)
        return tr("%1 ms").arg(locale.toString(qint64(rounded)));
    return tr("%1 s").arg(locale.toString(milliseconds / 1000.0, 'f', 1));
}

HealthMatrixModel::ProviderStatus HealthMatrixModel::statusOf(const ProviderHealth &provider)
{
    switch (provider.operatorState) {
    case OperatorState::Disabled:
        return ProviderStatus::Disabled;
    case OperatorState::Draining:
        return ProviderStatus::Draining;
    case OperatorState::Enabled:
        break;
    }
    switch (provider.breaker) {
    case BreakerState::Open:
        return ProviderStatus::Open;
    case BreakerState::HalfOpen:
        return ProviderStatus::HalfOpen;
    case BreakerState::Closed:
        break;
    }
    // Closed, yet the engine may still keep it out (failed health probes) or see failures.
    if (provider.state == ProviderState::Down)
        return ProviderStatus::Open;
    if (provider.msUntilCoolDownEnds >= 0)
        return ProviderStatus::CoolingDown;
    if (provider.trafficShare < 1.0)
        return ProviderStatus::Ramping;
    if (provider.state == ProviderState::Degraded)
        return ProviderStatus::Failing;
    return ProviderStatus::Closed;
}

QString HealthMatrixModel::statusName(ProviderStatus status)
{
    switch (status) {
    case ProviderStatus::Closed:
        //: Circuit breaker state: traffic flows normally
        return tr("Closed");
    case ProviderStatus::Ramping:
        //: Recovered endpoint taking a growing share of traffic
        return tr("Ramping");
    case ProviderStatus::CoolingDown:
        //: The provider answered 429 (rate limited): no calls until its Retry-After passes
        return tr("Cooling down");
    case ProviderStatus::Failing:
        //: Breaker still closed, but recent calls fail
        return tr("Failing");
    case ProviderStatus::HalfOpen:
        //: Circuit breaker state: one probe call is let through
        return tr("Half-open");
    case ProviderStatus::Draining:
        return tr("Draining");
    case ProviderStatus::Open:
        //: Circuit breaker state: no traffic until the cool-down ends
        return tr("Open");
    case ProviderStatus::Disabled:
        return tr("Disabled");
    }
    return {};
}

QString HealthMatrixModel::formatCountdown(qint64 milliseconds)
{
    const qint64 seconds = (std::max<qint64>(milliseconds, 0) + 999) / 1000; // round up
    if (seconds < 60)
        return tr("%1 s").arg(seconds);
    return QStringLiteral("%1:%2").arg(seconds / 60).arg(seconds % 60, 2, 10, QLatin1Char('0'));
}

QString HealthMatrixModel::statusText(const ProviderHealth &provider)
{
    const ProviderStatus status = statusOf(provider);
    if (status == ProviderStatus::Open && provider.breaker == BreakerState::Open &&
        provider.msUntilHalfOpen >= 0) {
        //: Breaker state and time left until it lets a probe through, e.g. "Open · 42 s"
        return tr("%1 · %2").arg(statusName(status), formatCountdown(provider.msUntilHalfOpen));
    }
    if (status == ProviderStatus::CoolingDown) {
        //: Rate-limited provider and time left until it takes calls again, e.g. "Cooling down · 2
        //: s"
        return tr("%1 · %2").arg(statusName(status), formatCountdown(provider.msUntilCoolDownEnds));
    }
    if (status == ProviderStatus::Ramping) {
        //: Recovery ramp with the share of traffic taken, e.g. "Ramping 35%"
        return tr("%1 %2%").arg(statusName(status),
                                QLocale().toString(qRound(provider.trafficShare * 100.0)));
    }
    return statusName(status);
}

QString HealthMatrixModel::statusReason(const ProviderHealth &provider)
{
    const QLocale locale;
    switch (statusOf(provider)) {
    case ProviderStatus::Disabled:
        return tr("disabled by an operator; takes no traffic until enabled");
    case ProviderStatus::Draining:
        return tr("draining: no new requests, %n call(s) still open", "", provider.inFlight);
    case ProviderStatus::Open:
        if (provider.breaker == BreakerState::Open && provider.msUntilHalfOpen >= 0) {
            return tr("%1; next probe in %2")
                .arg(provider.breakerReason, formatCountdown(provider.msUntilHalfOpen));
        }
        return provider.breakerReason;
    case ProviderStatus::HalfOpen:
        return tr("letting one probe call through; %1").arg(provider.breakerReason);
    case ProviderStatus::CoolingDown:
        return tr("rate limited by the provider (HTTP 429); no calls until its Retry-After has "
                  "passed, its breaker untouched");
    case ProviderStatus::Ramping:
        return tr("recovered; taking %1% of its usual share")
            .arg(locale.toString(qRound(provider.trafficShare * 100.0)));
    case ProviderStatus::Failing:
        return tr("%1% of the last %n call(s) failed", "", provider.recentCalls)
            .arg(locale.toString(provider.errorRatePercent, 'f', 0));
    case ProviderStatus::Closed:
        break;
    }
    return provider.requests == 0 ? tr("no calls yet") : tr("answering normally");
}

QColor HealthMatrixModel::statusColor(ProviderStatus status)
{
    // Dark enough to read as text on a white row; the pill tints them for its background.
    switch (status) {
    case ProviderStatus::Closed:
        return QColor(0x15, 0x80, 0x3d); // green
    case ProviderStatus::Ramping:
        return QColor(0x0f, 0x76, 0x6e); // teal: healthy, not yet at full share
    case ProviderStatus::CoolingDown:
    case ProviderStatus::Failing:
    case ProviderStatus::HalfOpen:
        return QColor(0xb4, 0x53, 0x09); // amber
    case ProviderStatus::Draining:
        return QColor(0x1d, 0x4e, 0xd8); // blue: an operator's deliberate choice
    case ProviderStatus::Open:
        return QColor(0xb9, 0x1c, 0x1c); // red
    case ProviderStatus::Disabled:
        return QColor(0x4b, 0x55, 0x63); // grey
    }
    return {};
}

QVariant HealthMatrixModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ProviderHealth &provider = m_rows.at(index.row());
    const int column = index.column();
    const QLocale locale;

    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case ProviderColumn:
            return provider.id;
        case StateColumn:
            return statusText(provider);
        case ReasonColumn:
            return statusReason(provider);
        case InFlightColumn:
            return locale.toString(provider.inFlight);
        case RequestsColumn:
            return locale.toString(provider.requests);
        case ErrorsColumn:
            // One window for both figures: failed calls since start, and their share of every
            // call since start, as the Requests column counts them. The recent failure rate,
            // which moves the breaker, is in the tooltip.
            if (provider.requests == 0 && provider.errors == 0)
                return locale.toString(0);
            return tr("%1 (%2%)")
                .arg(locale.toString(provider.errors),
                     locale.toString(lifetimeErrorPercent(provider), 'f', 1));
        case LatencyP50Column:
            return formatLatency(provider.p50LatencyMs);
        case LatencyP95Column:
            return formatLatency(provider.p95LatencyMs);
        case TimeToFirstTokenP50Column:
            return formatLatency(provider.p50TimeToFirstTokenMs);
        case ModelsColumn:
            return provider.models.join(QStringLiteral(", "));
        case OtherNodesColumn:
            return otherNodesData(provider, role);
        }
        break;
    case SortRole:
        switch (column) {
        case ProviderColumn:
            return provider.id;
        case StateColumn:
            return int(statusOf(provider));
        case ReasonColumn:
            return statusReason(provider);
        case InFlightColumn:
            return provider.inFlight;
        case RequestsColumn:
            return provider.requests;
        case ErrorsColumn:
            return provider.errors;
        case LatencyP50Column:
            return provider.p50LatencyMs;
        case LatencyP95Column:
            return provider.p95LatencyMs;
        case TimeToFirstTokenP50Column:
            return provider.p50TimeToFirstTokenMs;
        case ModelsColumn:
            return provider.models.join(QStringLiteral(", "));
        case OtherNodesColumn:
            return otherNodesData(provider, role);
        }
        break;
    case StateRole:
        return int(statusOf(provider));
    case StatusColorRole:
        if (column == OtherNodesColumn)
            return otherNodesData(provider, role);
        return statusColor(statusOf(provider));
    case ProviderIdRole:
        return provider.id;
    case Qt::TextAlignmentRole:
        return alignmentFor(column);
    case Qt::ForegroundRole:
        if (column == StateColumn)
            return statusColor(statusOf(provider));
        if (column == ReasonColumn)
            return QColor(0x4b, 0x55, 0x63);
        break;
    case Qt::DecorationRole:
        if (column == StateColumn)
            return statusColor(statusOf(provider));
        break;
    case Qt::ToolTipRole:
        switch (column) {
        case ProviderColumn:
            //: Provider tooltip: id, kind, then the models it serves
            return tr("%1 (%2 provider)\nModels: %3")
                .arg(provider.id, provider.kind, provider.models.join(QStringLiteral(", ")));
        case StateColumn:
        case ReasonColumn:
            return tr("%1: %2").arg(statusName(statusOf(provider)), statusReason(provider));
        case ErrorsColumn:
            return tr("%1 of %2 calls failed since start (%3%); %4% of recent calls failed")
                .arg(locale.toString(provider.errors), locale.toString(provider.requests),
                     locale.toString(lifetimeErrorPercent(provider), 'f', 1),
                     locale.toString(provider.errorRatePercent, 'f', 1));
        case ModelsColumn:
            return provider.models.join(QLatin1Char('\n'));
        case OtherNodesColumn:
            return otherNodesData(provider, role);
        }
        break;
    }
    return {};
}

QVariant HealthMatrixModel::otherNodesData(const ProviderHealth &provider, int role) const
{
    const QList<NodeView> views = m_otherNodes.value(provider.id);
    int up = 0;
    for (const NodeView &view : views)
        up += view.endpoint.state == ProviderState::Up ? 1 : 0;
    const int total = int(views.size());
    switch (role) {
    case Qt::DisplayRole:
        if (total == 0)
            return m_otherNodeCount > 0 ? tr("not listed") : QString();
        return EndpointSummaryText::upCount(up, total);
    case SortRole:
        return total == 0 ? -1.0 : double(up) / double(total);
    case Qt::ForegroundRole:
    case StatusColorRole:
        return total == 0 ? QVariant() : QVariant(EndpointSummaryText::upCountColor(up, total));
    case Qt::ToolTipRole: {
        if (total == 0)
            return tr("No other node lists this provider yet");
        QStringList lines;
        for (const NodeView &view : views) {
            QString line = tr("%1: %2").arg(view.node, EndpointSummaryText::state(view.endpoint));
            if (!view.endpoint.healthy() && !view.endpoint.breakerReason.isEmpty())
                line += QStringLiteral(" \u2014 ") + view.endpoint.breakerReason;
            lines.append(line);
        }
        return lines.join(QLatin1Char('\n'));
    }
    default:
        return {};
    }
}

QVariant HealthMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return {};
    if (role == Qt::TextAlignmentRole)
        return alignmentFor(section);
    if (role == Qt::DisplayRole) {
        switch (section) {
        case ProviderColumn:
            return tr("Provider");
        case StateColumn:
            return tr("Breaker");
        case ReasonColumn:
            return tr("Reason");
        case InFlightColumn:
            return tr("In flight");
        case RequestsColumn:
            return tr("Requests");
        case ErrorsColumn:
            return tr("Errors");
        case LatencyP50Column:
            return tr("p50 latency");
        case LatencyP95Column:
            return tr("p95 latency");
        case TimeToFirstTokenP50Column:
            return tr("TTFT p50");
        case ModelsColumn:
            return tr("Models");
        case OtherNodesColumn:
            return tr("Other nodes");
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case ProviderColumn:
            return tr("Provider id from the configuration");
        case StateColumn:
            return tr("Circuit breaker state, or what an operator set; open breakers count down "
                      "to their next probe");
        case ReasonColumn:
            return tr("Why the provider is in its state");
        case InFlightColumn:
            return tr("Calls sent to this provider and not yet answered");
        case RequestsColumn:
            return tr("Calls finished since start");
        case ErrorsColumn:
            return tr("Failed calls since start, and their share of all calls since start");
        case LatencyP50Column:
            return tr("Median time to a complete answer over recent calls");
        case LatencyP95Column:
            return tr("95th percentile time to a complete answer over recent calls");
        case TimeToFirstTokenP50Column:
            return tr("Median time to first token of streamed answers over recent calls");
        case ModelsColumn:
            return tr("Models this provider serves");
        case OtherNodesColumn:
            return tr("How the fleet's other nodes see this provider, as each last published it. "
                      "Each node's breakers are its own and are never opened from here.");
        }
    }
    return {};
}

void HealthMatrixModel::applySnapshot(const EngineSnapshot &snapshot)
{
    applyProviders(snapshot.providers);
    applyOtherNodes(snapshot.fleet.enabled ? snapshot.fleet.members : QList<FleetMemberState>());
}

void HealthMatrixModel::applyOtherNodes(const QList<FleetMemberState> &members)
{
    QHash<QString, QList<NodeView>> views;
    int others = 0;
    for (const FleetMemberState &member : members) {
        if (member.self)
            continue;
        ++others;
        for (const EndpointSummary &endpoint : member.endpoints)
            views[endpoint.id].append(NodeView{member.node, endpoint});
    }
    if (views == m_otherNodes && others == m_otherNodeCount)
        return;
    m_otherNodes = std::move(views);
    m_otherNodeCount = others;
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, OtherNodesColumn),
                           index(int(m_rows.size()) - 1, OtherNodesColumn));
}

void HealthMatrixModel::applyProviders(const QList<ProviderHealth> &providers)
{
    mergeRows(providers);
}

QString HealthMatrixModel::idOf(const ProviderHealth &row) const
{
    return row.id;
}

std::pair<int, int> HealthMatrixModel::changedColumns(const ProviderHealth &before,
                                                      const ProviderHealth &after) const
{
    return changedProviderColumns(before, after);
}

void HealthMatrixModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

} // namespace switchyard::ui
