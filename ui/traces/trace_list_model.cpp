#include "ui/traces/trace_list_model.h"

#include <QLocale>
#include <QSet>
#include <algorithm>
#include <cmath>

namespace switchyard::ui {

namespace {

// The columns whose text differs between two states of one request; {-1, -1} when none does.
std::pair<int, int> changedColumns(const TraceListRow &before, const TraceListRow &after)
{
    int first = -1;
    int last = -1;
    const auto mark = [&](int column, bool changed) {
        if (!changed)
            return;
        first = first < 0 ? column : std::min(first, column);
        last = std::max(last, column);
    };
    const telemetry::RequestRecord &a = before.record;
    const telemetry::RequestRecord &b = after.record;
    mark(TraceListModel::StatusColumn,
         before.running != after.running || a.status != b.status || a.outcome != b.outcome);
    mark(TraceListModel::ModelColumn, a.model != b.model);
    mark(TraceListModel::RouteColumn, a.route != b.route);
    mark(TraceListModel::TierColumn, a.tier != b.tier);
    mark(TraceListModel::ProviderColumn, a.provider != b.provider);
    mark(TraceListModel::AttemptsColumn, a.attempts != b.attempts);
    mark(TraceListModel::DegradedColumn, a.degradedLevel != b.degradedLevel);
    mark(TraceListModel::LatencyColumn, a.totalMicros != b.totalMicros);
    mark(TraceListModel::TimeToFirstByteColumn, a.timeToFirstByteMicros != b.timeToFirstByteMicros);
    mark(TraceListModel::TokensColumn, a.inputTokens != b.inputTokens ||
                                           a.outputTokens != b.outputTokens ||
                                           a.tokensEstimated != b.tokensEstimated);
    return {first, last};
}

// Numbers line up on the right, names on the left; headers follow their column.
QVariant alignment(int column)
{
    switch (column) {
    case TraceListModel::AttemptsColumn:
    case TraceListModel::DegradedColumn:
    case TraceListModel::LatencyColumn:
    case TraceListModel::TimeToFirstByteColumn:
    case TraceListModel::TokensColumn:
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return QVariant(Qt::AlignLeft | Qt::AlignVCenter);
    }
}

QString countOrDash(qint64 count)
{
    return count < 0 ? QStringLiteral("\u2014") : QLocale().toString(count);
}

} // namespace

TraceListModel::TraceListModel(QObject *parent) : QAbstractTableModel(parent) {}

int TraceListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int TraceListModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString TraceListModel::formatMicros(qint64 micros)
{
    if (micros < 0)
        return QStringLiteral("\u2014");
    const QLocale locale;
    const double milliseconds = double(micros) / 1000.0;
    if (milliseconds < 1000.0)
        return tr("%1 ms").arg(locale.toString(qint64(std::llround(milliseconds))));
    return tr("%1 s").arg(locale.toString(milliseconds / 1000.0, 'f', 2));
}

QString TraceListModel::statusText(const TraceListRow &row)
{
    if (row.running)
        return tr("running");
    const telemetry::RequestRecord &record = row.record;
    if (record.status <= 0)
        return record.outcome.isEmpty() ? QStringLiteral("\u2014") : record.outcome;
    if (!record.isError() || record.outcome.isEmpty() || record.outcome == QLatin1String("ok"))
        return QString::number(record.status);
    return QStringLiteral("%1 %2").arg(record.status).arg(record.outcome);
}

QColor TraceListModel::statusColor(const TraceListRow &row)
{
    if (row.running)
        return QColor(0x1d, 0x4e, 0xd8);
    const int status = row.record.status;
    if (status >= 500 || status <= 0)
        return QColor(0xdc, 0x26, 0x26);
    if (status >= 400)
        return QColor(0xd9, 0x77, 0x06);
    return QColor(0x16, 0xa3, 0x4a);
}

QVariant TraceListModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size())
        return {};
    const TraceListRow &row = m_rows.at(index.row());
    const telemetry::RequestRecord &record = row.record;
    switch (role) {
    case RequestIdRole:
        return record.requestId;
    case RunningRole:
        return row.running;
    case StatusClassRole:
        return row.running ? QStringLiteral("running") : record.statusClass();
    case StatusColorRole:
        return statusColor(row);
    case Qt::ForegroundRole:
        if (index.column() == TimeColumn || index.column() == RequestIdColumn)
            return QColor(0x6b, 0x72, 0x80);
        if (index.column() == DegradedColumn && record.degradedLevel > 0)
            return QColor(0xb4, 0x53, 0x09);
        if (index.column() == AttemptsColumn && record.attempts > 1)
            return QColor(0xb4, 0x53, 0x09);
        return {};
    case Qt::TextAlignmentRole:
        return alignment(index.column());
    case Qt::ToolTipRole:
        if (index.column() == StatusColumn && !record.errorClass.isEmpty())
            return tr("Last failed attempt: %1").arg(record.errorClass);
        if (index.column() == TokensColumn)
            return tr("Input tokens → output tokens, as the provider reported them; ≈ marks an "
                      "estimate from the text when it reported none");
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }

    switch (Column(index.column())) {
    case TimeColumn:
        return QLocale().toString(record.startedAtUtc.toLocalTime().time(),
                                  QStringLiteral("HH:mm:ss.zzz"));
    case StatusColumn:
        return statusText(row);
    case ModelColumn:
        return record.model;
    case RouteColumn:
        return record.route.isEmpty() ? tr("default") : record.route;
    case TierColumn:
        return record.tier.isEmpty() ? QStringLiteral("\u2014") : record.tier;
    case ProviderColumn:
        return record.provider.isEmpty() ? QStringLiteral("\u2014") : record.provider;
    case AttemptsColumn:
        return record.attempts > 0 ? QLocale().toString(record.attempts) : QStringLiteral("\u2014");
    case DegradedColumn:
        return record.degradedLevel > 0 ? tr("rung %1").arg(record.degradedLevel)
                                        : QStringLiteral("\u2014");
    case LatencyColumn:
        return formatMicros(record.totalMicros);
    case TimeToFirstByteColumn:
        return formatMicros(record.timeToFirstByteMicros);
    case TokensColumn:
        if (record.inputTokens < 0 && record.outputTokens < 0)
            return QStringLiteral("\u2014");
        // "≈" marks counts estimated from the text: the provider reported no usage.
        return QStringLiteral("%1%2 → %3")
            .arg(record.tokensEstimated ? QStringLiteral("≈") : QString(),
                 countOrDash(record.inputTokens), countOrDash(record.outputTokens));
    case RequestIdColumn:
        return QString::fromLatin1(record.requestId);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant TraceListModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::TextAlignmentRole)
        return alignment(section);
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case DegradedColumn:
            return tr("The degradation ladder's rung that answered; a dash for the chosen model");
        case TimeToFirstByteColumn:
            return tr("Time until the first streamed event went to the client");
        default:
            return {};
        }
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case TimeColumn:
        return tr("Time");
    case StatusColumn:
        return tr("Status");
    case ModelColumn:
        return tr("Model");
    case RouteColumn:
        return tr("Route");
    case TierColumn:
        return tr("Tier");
    case ProviderColumn:
        return tr("Provider");
    case AttemptsColumn:
        return tr("Attempts");
    case DegradedColumn:
        return tr("Degraded");
    case LatencyColumn:
        return tr("Latency");
    case TimeToFirstByteColumn:
        return tr("TTFT");
    case TokensColumn:
        return tr("Tokens");
    case RequestIdColumn:
        return tr("Request id");
    case ColumnCount:
        break;
    }
    return {};
}

int TraceListModel::rowOf(const QByteArray &requestId) const
{
    for (int row = 0; row < m_rows.size(); ++row) {
        if (m_rows.at(row).record.requestId == requestId)
            return row;
    }
    return -1;
}

void TraceListModel::announceRow(int row)
{
    Q_EMIT dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

void TraceListModel::applyFeed(const telemetry::TraceFeed &feed)
{
    m_runningCount = feed.runningCount;
    m_dropped += feed.finishedLeftOut;

    // Where each request is shown now: a row (>= 0) or a waiting one (-1 - its index).
    QHash<QByteArray, int> where;
    where.reserve(m_rows.size() + m_pending.size());
    // Back to front, so a request id a client used twice finds its newest row.
    for (int row = int(m_rows.size()) - 1; row >= 0; --row)
        where.insert(m_rows.at(row).record.requestId, row);
    for (int waiting = int(m_pending.size()) - 1; waiting >= 0; --waiting)
        where.insert(m_pending.at(waiting).record.requestId, -1 - waiting);

    QList<TraceListRow> arrived;
    QHash<QByteArray, int> arrivedAt;
    const auto update = [&](TraceListRow next) {
        const QByteArray id = next.record.requestId;
        const auto found = where.constFind(id);
        if (found == where.cend()) {
            const auto again = arrivedAt.constFind(id);
            if (again != arrivedAt.cend())
                arrived[*again] = std::move(next);
            else {
                arrivedAt.insert(id, int(arrived.size()));
                arrived.append(std::move(next));
            }
            return;
        }
        if (*found < 0) {
            m_pending[-1 - *found] = std::move(next);
            return;
        }
        TraceListRow &current = m_rows[*found];
        // A request id may be reused by a client: a finished row is never made running again.
        if (!current.running && next.running)
            return;
        const auto [first, last] = changedColumns(current, next);
        current = std::move(next);
        if (first >= 0)
            Q_EMIT dataChanged(index(*found, first), index(*found, last));
    };

    QSet<QByteArray> stillRunning;
    for (const telemetry::Trace &trace : feed.running) {
        stillRunning.insert(trace.requestId);
        update(TraceListRow{static_cast<const telemetry::RequestRecord &>(trace), true});
    }
    QSet<QByteArray> finished;
    for (const telemetry::RequestRecord &record : feed.finished) {
        finished.insert(record.requestId);
        update(TraceListRow{record, false});
    }

    // A running row the feed no longer lists has ended. When every running request is listed
    // and none was left out, its finished record is in this feed; otherwise it was left out or
    // is still running beyond the listed ones, and only the former is certain when some were
    // left out.
    const bool allRunningListed = feed.runningCount <= feed.running.size();
    if (allRunningListed || feed.finishedLeftOut > 0) {
        for (int row = int(m_rows.size()) - 1; row >= 0; --row) {
            const TraceListRow &current = m_rows.at(row);
            if (!current.running || stillRunning.contains(current.record.requestId) ||
                finished.contains(current.record.requestId))
                continue;
            beginRemoveRows({}, row, row);
            m_rows.removeAt(row);
            endRemoveRows();
        }
        m_pending.removeIf([&](const TraceListRow &waiting) {
            return waiting.running && !stillRunning.contains(waiting.record.requestId) &&
                   !finished.contains(waiting.record.requestId);
        });
    }

    if (arrived.isEmpty())
        return;
    // Newest first by start: a feed's new rows may be both running and finished ones.
    std::stable_sort(arrived.begin(), arrived.end(),
                     [](const TraceListRow &a, const TraceListRow &b) {
                         return a.record.startedAtUtc > b.record.startedAtUtc;
                     });
    if (m_paused) {
        m_pending = arrived + m_pending;
        if (m_pending.size() > kMaxRows) {
            m_dropped += quint64(m_pending.size() - kMaxRows);
            m_pending.resize(kMaxRows);
        }
        return;
    }
    insertOnTop(std::move(arrived));
}

void TraceListModel::insertOnTop(QList<TraceListRow> rows)
{
    if (rows.isEmpty())
        return;
    if (rows.size() > kMaxRows) {
        m_dropped += quint64(rows.size() - kMaxRows);
        rows.resize(kMaxRows);
    }
    beginInsertRows({}, 0, int(rows.size()) - 1);
    m_rows = rows + m_rows;
    endInsertRows();
    trimToBound();
}

void TraceListModel::trimToBound()
{
    if (m_rows.size() <= kMaxRows)
        return;
    const int first = kMaxRows;
    const int last = int(m_rows.size()) - 1;
    beginRemoveRows({}, first, last);
    m_dropped += quint64(last - first + 1);
    m_rows.resize(kMaxRows);
    endRemoveRows();
}

void TraceListModel::setPaused(bool paused)
{
    if (m_paused == paused)
        return;
    m_paused = paused;
    if (!m_paused)
        insertOnTop(std::exchange(m_pending, {}));
}

void TraceListModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

void TraceFilterProxyModel::setFilter(const telemetry::TraceFilter &filter)
{
    m_filter = filter;
    invalidateRowsFilter();
}

bool TraceFilterProxyModel::accepts(const TraceListRow &row) const
{
    return m_filter.matches(row.record);
}

bool TraceFilterProxyModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    const auto *model = qobject_cast<const TraceListModel *>(sourceModel());
    if (sourceParent.isValid() || !model || sourceRow >= model->rowCount())
        return false;
    return accepts(model->rowAt(sourceRow));
}

int TraceFilterProxyModel::pendingMatching() const
{
    const auto *model = qobject_cast<const TraceListModel *>(sourceModel());
    if (!model)
        return 0;
    return int(std::count_if(model->pendingRows().cbegin(), model->pendingRows().cend(),
                             [this](const TraceListRow &row) { return accepts(row); }));
}

} // namespace switchyard::ui
