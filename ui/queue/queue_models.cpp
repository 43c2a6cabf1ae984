#include "ui/queue/queue_models.h"

#include <QColor>
#include <QDateTime>
#include <QLocale>

namespace switchyard::ui {

namespace {

QString dash()
{
    return QStringLiteral("\u2014");
}

} // namespace

QString QueueText::duration(qint64 ms)
{
    const qint64 seconds = std::max<qint64>(0, ms) / 1000;
    if (seconds < 1)
        return tr("<1 s");
    if (seconds < 60)
        return tr("%1 s").arg(seconds);
    if (seconds < 3600)
        //: minutes and seconds, e.g. "3 min 4 s"
        return tr("%1 min %2 s").arg(seconds / 60).arg(seconds % 60);
    //: hours and minutes, e.g. "2 h 5 min"
    return tr("%1 h %2 min").arg(seconds / 3600).arg(seconds / 60 % 60);
}

QString QueueText::status(const QString &apiStatus)
{
    if (apiStatus == QLatin1String("queued"))
        return tr("queued");
    if (apiStatus == QLatin1String("in_progress"))
        return tr("running");
    if (apiStatus == QLatin1String("completed"))
        return tr("completed");
    if (apiStatus == QLatin1String("incomplete"))
        return tr("incomplete");
    if (apiStatus == QLatin1String("failed"))
        return tr("failed");
    if (apiStatus == QLatin1String("cancelled"))
        return tr("cancelled");
    return apiStatus;
}

QString QueueText::priority(const QString &apiPriority)
{
    if (apiPriority == QLatin1String("high"))
        return tr("high");
    if (apiPriority == QLatin1String("low"))
        return tr("low");
    if (apiPriority == QLatin1String("normal"))
        return tr("normal");
    return apiPriority;
}

QColor QueueText::statusColor(const QString &apiStatus)
{
    if (apiStatus == QLatin1String("queued"))
        return QColor(0x4b, 0x55, 0x63); // grey: waiting its turn
    if (apiStatus == QLatin1String("in_progress"))
        return QColor(0x1d, 0x4e, 0xd8); // blue: a worker holds it
    if (apiStatus == QLatin1String("failed"))
        return QColor(0xb9, 0x1c, 0x1c); // red
    return {};
}

QString QueueText::bytes(qint64 bytes)
{
    return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeTraditionalFormat);
}

BackgroundTasksModel::BackgroundTasksModel(QObject *parent) : MergingTableModel(parent) {}

int BackgroundTasksModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString BackgroundTasksModel::text(const BackgroundTaskListing &task, int column) const
{
    switch (column) {
    case IdColumn:
        return task.id;
    case TenantColumn:
        return task.tenant.isEmpty() ? dash() : task.tenant;
    case ModelColumn:
        return task.model;
    case PriorityColumn:
        return QueueText::priority(task.priority);
    case StatusColumn:
        return QueueText::status(task.status);
    case WaitedColumn:
        return QueueText::duration(task.waitedMs);
    case RunningColumn:
        return task.status == QLatin1String("in_progress") ? QueueText::duration(task.runningMs)
                                                           : dash();
    case RunsColumn:
        return QLocale().toString(task.runs);
    default:
        return {};
    }
}

QVariant BackgroundTasksModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const BackgroundTaskListing &task = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return text(task, index.column());
    case ColorRole:
        if (index.column() == StatusColumn) {
            const QColor color = QueueText::statusColor(task.status);
            return color.isValid() ? QVariant(color) : QVariant();
        }
        return {};
    case Qt::ToolTipRole:
        if (index.column() == TenantColumn && !task.keyId.isEmpty())
            return tr("Client key %1").arg(task.keyId);
        if (index.column() == RunsColumn && task.runs > 1)
            return tr("Started again after a restart: a task left running by a process that "
                      "ended runs again under the same id.");
        return {};
    default:
        return {};
    }
}

QVariant BackgroundTasksModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("Task");
    case TenantColumn:
        return tr("Tenant");
    case ModelColumn:
        return tr("Model");
    case PriorityColumn:
        return tr("Priority");
    case StatusColumn:
        return tr("Status");
    case WaitedColumn:
        return tr("Waited");
    case RunningColumn:
        return tr("Running for");
    case RunsColumn:
        return tr("Runs");
    default:
        return {};
    }
}

void BackgroundTasksModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

std::pair<int, int> BackgroundTasksModel::changedColumns(const BackgroundTaskListing &before,
                                                         const BackgroundTaskListing &after) const
{
    // The times move on every snapshot; a cell is only repainted when what it shows changes.
    int first = -1;
    int last = -1;
    for (int column = 0; column < ColumnCount; ++column) {
        if (text(before, column) == text(after, column) &&
            !(column == StatusColumn && before.status != after.status) &&
            !(column == TenantColumn && before.keyId != after.keyId))
            continue;
        if (first < 0)
            first = column;
        last = column;
    }
    return {first, last};
}

QueueFailuresModel::QueueFailuresModel(QObject *parent) : QAbstractTableModel(parent) {}

int QueueFailuresModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_failures.size());
}

void QueueFailuresModel::applyFailures(const QList<BackgroundTaskListing> &failures)
{
    if (failures == m_failures)
        return;
    beginResetModel();
    m_failures = failures;
    endResetModel();
}

int QueueFailuresModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant QueueFailuresModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const BackgroundTaskListing &task = m_failures.at(index.row());
    const QDateTime finished = QDateTime::fromMSecsSinceEpoch(task.finishedAtMs).toLocalTime();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case IdColumn:
            return task.id;
        case TenantColumn:
            return task.tenant.isEmpty() ? dash() : task.tenant;
        case ModelColumn:
            return task.model;
        case ErrorColumn:
            return task.errorCode.isEmpty() ? tr("failed") : task.errorCode;
        case MessageColumn:
            return task.errorMessage.isEmpty() ? dash() : task.errorMessage;
        case WhenColumn:
            if (task.finishedAtMs <= 0)
                return dash();
            // Today's failures by time alone: the date only when it is another day.
            return finished.date() == QDate::currentDate()
                       ? finished.toString(QStringLiteral("HH:mm:ss"))
                       : finished.toString(QStringLiteral("yyyy-MM-dd HH:mm"));
        default:
            return {};
        }
    case ColorRole:
        if (index.column() == ErrorColumn)
            return QueueText::statusColor(QStringLiteral("failed"));
        return {};
    case Qt::ToolTipRole:
        if (index.column() == MessageColumn && !task.errorMessage.isEmpty())
            return task.errorMessage;
        if (index.column() == WhenColumn && task.finishedAtMs > 0)
            return QLocale().toString(finished, QLocale::LongFormat);
        return {};
    default:
        return {};
    }
}

QVariant QueueFailuresModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("Task");
    case TenantColumn:
        return tr("Tenant");
    case ModelColumn:
        return tr("Model");
    case ErrorColumn:
        return tr("Error");
    case MessageColumn:
        return tr("Message");
    case WhenColumn:
        return tr("Failed at");
    default:
        return {};
    }
}

void QueueFailuresModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_failures.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_failures.size()) - 1, ColumnCount - 1));
}

DeadLettersModel::DeadLettersModel(QObject *parent) : QAbstractTableModel(parent) {}

int DeadLettersModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_letters.size());
}

int DeadLettersModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

void DeadLettersModel::applyLetters(const QList<DeadLetterListing> &letters)
{
    if (letters == m_letters)
        return;
    beginResetModel();
    m_letters = letters;
    endResetModel();
}

QVariant DeadLettersModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const DeadLetterListing &letter = m_letters.at(index.row());
    const QDateTime when = QDateTime::fromMSecsSinceEpoch(letter.atMs).toLocalTime();
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case IdColumn:
            return letter.id;
        case TenantColumn:
            return letter.tenant.isEmpty() ? dash() : letter.tenant;
        case ModelColumn:
            return letter.model.isEmpty() ? dash() : letter.model;
        case RunsColumn:
            return QLocale().toString(letter.runs);
        case NodeColumn:
            return letter.node.isEmpty() ? dash() : letter.node;
        case ErrorColumn:
            return letter.errorCode.isEmpty() ? tr("failed") : letter.errorCode;
        case MessageColumn:
            return letter.errorMessage.isEmpty() ? dash() : letter.errorMessage;
        case WhenColumn:
            if (letter.atMs <= 0)
                return dash();
            return when.date() == QDate::currentDate()
                       ? when.toString(QStringLiteral("HH:mm:ss"))
                       : when.toString(QStringLiteral("yyyy-MM-dd HH:mm"));
        default:
            return {};
        }
    case Qt::TextAlignmentRole:
        if (index.column() == RunsColumn)
            return QVariant(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case ColorRole:
        if (index.column() == ErrorColumn)
            return QueueText::statusColor(QStringLiteral("failed"));
        return {};
    case Qt::ToolTipRole:
        if (index.column() == MessageColumn && !letter.errorMessage.isEmpty())
            return letter.errorMessage;
        if (index.column() == WhenColumn && letter.atMs > 0)
            return QLocale().toString(when, QLocale::LongFormat);
        return {};
    default:
        return {};
    }
}

QVariant DeadLettersModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case IdColumn:
        return tr("Task");
    case TenantColumn:
        return tr("Tenant");
    case ModelColumn:
        return tr("Model");
    case RunsColumn:
        return tr("Runs");
    case NodeColumn:
        //: the fleet node that gave the task up
        return tr("Node");
    case ErrorColumn:
        return tr("Last error");
    case MessageColumn:
        return tr("Message");
    case WhenColumn:
        return tr("Dead-lettered at");
    default:
        return {};
    }
}

void DeadLettersModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_letters.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_letters.size()) - 1, ColumnCount - 1));
}

} // namespace switchyard::ui
