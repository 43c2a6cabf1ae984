#include "health_matrix_model.h"

#include <QHash>
#include <QLocale>
#include <cmath>
#include <utility>

namespace switchyard::ui {

namespace {

// Smallest and largest column whose display differs between two copies of the same provider,
// or {-1, -1} when nothing visible changed.
std::pair<int, int> changedColumns(const ProviderHealth &before, const ProviderHealth &after)
{
    int first = -1;
    int last = -1;
    const auto mark = [&](int column, bool changed) {
        if (!changed)
            return;
        if (first < 0)
            first = column;
        last = column;
    };
    mark(HealthMatrixModel::ProviderColumn, before.kind != after.kind);
    mark(HealthMatrixModel::StateColumn,
         before.state != after.state || before.consecutiveFailures != after.consecutiveFailures ||
             before.lastFailure != after.lastFailure || before.recentCalls != after.recentCalls ||
             before.errorRatePercent != after.errorRatePercent);
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

int severity(ProviderState state)
{
    switch (state) {
    case ProviderState::Up:
        return 0;
    case ProviderState::Degraded:
        return 1;
    case ProviderState::Down:
        return 2;
    }
    return 0;
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

HealthMatrixModel::HealthMatrixModel(QObject *parent) : QAbstractTableModel(parent) {}

int HealthMatrixModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

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

QString HealthMatrixModel::stateReason(const ProviderHealth &provider)
{
    const QLocale locale;
    switch (provider.state) {
    case ProviderState::Down:
        return tr("%n consecutive call failure(s); last: %1", "", provider.consecutiveFailures)
            .arg(provider.lastFailure);
    case ProviderState::Degraded:
        return tr("%1% of the last %n call(s) failed", "", provider.recentCalls)
            .arg(locale.toString(provider.errorRatePercent, 'f', 0));
    case ProviderState::Up:
        break;
    }
    return provider.requests == 0 ? tr("no calls yet") : tr("answering normally");
}

QString HealthMatrixModel::stateName(ProviderState state)
{
    switch (state) {
    case ProviderState::Up:
        return tr("Up");
    case ProviderState::Degraded:
        return tr("Degraded");
    case ProviderState::Down:
        return tr("Down");
    }
    return {};
}

QColor HealthMatrixModel::stateColor(ProviderState state)
{
    // Green, amber and red chosen dark enough to read as text on a white row.
    switch (state) {
    case ProviderState::Up:
        return QColor(0x15, 0x80, 0x3d);
    case ProviderState::Degraded:
        return QColor(0xb4, 0x53, 0x09);
    case ProviderState::Down:
        return QColor(0xb9, 0x1c, 0x1c);
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
            return stateName(provider.state);
        case InFlightColumn:
            return locale.toString(provider.inFlight);
        case RequestsColumn:
            return locale.toString(provider.requests);
        case ErrorsColumn:
            if (provider.requests == 0 && provider.errors == 0)
                return locale.toString(0);
            return tr("%1 (%2%)")
                .arg(locale.toString(provider.errors),
                     locale.toString(provider.errorRatePercent, 'f', 1));
        case LatencyP50Column:
            return formatLatency(provider.p50LatencyMs);
        case LatencyP95Column:
            return formatLatency(provider.p95LatencyMs);
        case TimeToFirstTokenP50Column:
            return formatLatency(provider.p50TimeToFirstTokenMs);
        case ModelsColumn:
            return provider.models.join(QStringLiteral(", "));
        }
        break;
    case SortRole:
        switch (column) {
        case ProviderColumn:
            return provider.id;
        case StateColumn:
            return severity(provider.state);
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
        }
        break;
    case StateRole:
        return int(provider.state);
    case ProviderIdRole:
        return provider.id;
    case Qt::TextAlignmentRole:
        return alignmentFor(column);
    case Qt::ForegroundRole:
        if (column == StateColumn)
            return stateColor(provider.state);
        break;
    case Qt::DecorationRole:
        if (column == StateColumn)
            return stateColor(provider.state);
        break;
    case Qt::ToolTipRole:
        switch (column) {
        case ProviderColumn:
            return tr("%1 (%2 provider)").arg(provider.id, provider.kind);
        case StateColumn:
            return tr("%1: %2").arg(stateName(provider.state), stateReason(provider));
        case ErrorsColumn:
            return tr("%1 failed calls since start; %2% of recent calls failed")
                .arg(locale.toString(provider.errors),
                     locale.toString(provider.errorRatePercent, 'f', 1));
        case ModelsColumn:
            return provider.models.join(QLatin1Char('\n'));
        }
        break;
    }
    return {};
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
            return tr("State");
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
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case ProviderColumn:
            return tr("Provider id from the configuration");
        case StateColumn:
            return tr("Health as judged from recent calls; hover a row for the reason");
        case InFlightColumn:
            return tr("Calls sent to this provider and not yet answered");
        case RequestsColumn:
            return tr("Calls finished since start");
        case ErrorsColumn:
            return tr("Failed calls since start, and the failure rate over recent calls");
        case LatencyP50Column:
            return tr("Median time to a complete answer over recent calls");
        case LatencyP95Column:
            return tr("95th percentile time to a complete answer over recent calls");
        case TimeToFirstTokenP50Column:
            return tr("Median time to first token of streamed answers over recent calls");
        case ModelsColumn:
            return tr("Models this provider serves");
        }
    }
    return {};
}

void HealthMatrixModel::applySnapshot(const EngineSnapshot &snapshot)
{
    applyProviders(snapshot.providers);
}

void HealthMatrixModel::applyProviders(const QList<ProviderHealth> &providers)
{
    // Position of each id in the incoming list; a duplicated id keeps its first entry.
    QHash<QString, qsizetype> incoming;
    incoming.reserve(providers.size());
    for (qsizetype i = 0; i < providers.size(); ++i) {
        if (!incoming.contains(providers.at(i).id))
            incoming.insert(providers.at(i).id, i);
    }

    // Removals, back to front, one signal per contiguous run of vanished rows.
    for (int row = int(m_rows.size()) - 1; row >= 0; --row) {
        if (incoming.contains(m_rows.at(row).id))
            continue;
        const int last = row;
        while (row > 0 && !incoming.contains(m_rows.at(row - 1).id))
            --row;
        beginRemoveRows({}, row, last);
        m_rows.remove(row, last - row + 1);
        endRemoveRows();
    }

    QHash<QString, int> present;
    present.reserve(m_rows.size());
    for (int row = 0; row < m_rows.size(); ++row) {
        ProviderHealth &current = m_rows[row];
        present.insert(current.id, row);
        const ProviderHealth &next = providers.at(incoming.value(current.id));
        const auto [first, last] = changedColumns(current, next);
        if (first < 0)
            continue;
        current = next;
        Q_EMIT dataChanged(index(row, first), index(row, last));
    }

    QList<ProviderHealth> added;
    for (qsizetype i = 0; i < providers.size(); ++i) {
        const ProviderHealth &provider = providers.at(i);
        if (incoming.value(provider.id) != i || present.contains(provider.id))
            continue;
        added.append(provider);
    }
    if (added.isEmpty())
        return;
    const int first = int(m_rows.size());
    beginInsertRows({}, first, first + int(added.size()) - 1);
    m_rows.append(added);
    endInsertRows();
}

void HealthMatrixModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

} // namespace switchyard::ui
