#pragma once

#include "control/background_queue_state.h"
#include "ui/common/merging_table_model.h"

#include <QCoreApplication>
#include <QString>

namespace switchyard::ui {

// The words and colours of the Queue page, shared by its tables and its summary.
class QueueText {
    Q_DECLARE_TR_FUNCTIONS(QueueText)
public:
    // A wait or a run time: "<1 s", "42 s", "3 min 4 s", "2 h 5 min".
    static QString duration(qint64 ms);
    // A task's status in words ("queued", "running", "failed", ...) from the API's word.
    static QString status(const QString &apiStatus);
    static QString priority(const QString &apiPriority);
    // The status pill's colour; invalid for a status without one.
    static QColor statusColor(const QString &apiStatus);
    // Bytes as the console shows a size: "512 B", "12.3 KB", "256 MB".
    static QString bytes(qint64 bytes);
};

// The queued and running background tasks, from the engine's snapshots, merged by id: a task
// keeps its row while it waits and runs, and leaves when it ends.
class BackgroundTasksModel final : public MergingTableModel<BackgroundTaskListing> {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        TenantColumn,
        ModelColumn,
        PriorityColumn,
        StatusColumn,
        WaitedColumn,
        RunningColumn,
        RunsColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    // The role a status cell's pill colour is kept under (StatePillDelegate).
    static constexpr int ColorRole = Qt::UserRole + 1;

    explicit BackgroundTasksModel(QObject *parent = nullptr);

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    void applyTasks(const QList<BackgroundTaskListing> &tasks) { mergeRows(tasks); }
    void retranslate();

protected:
    QString idOf(const BackgroundTaskListing &row) const override { return row.id; }
    std::pair<int, int> changedColumns(const BackgroundTaskListing &before,
                                       const BackgroundTaskListing &after) const override;

private:
    QString text(const BackgroundTaskListing &task, int column) const;
};

// The latest failed background tasks, newest first as the engine lists them. A new failure goes
// on top and pushes the oldest out, so a changed list replaces the rows (a reset) instead of
// merging them; failures are rare and the table offers no action on a row to lose.
class QueueFailuresModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        TenantColumn,
        ModelColumn,
        ErrorColumn,
        MessageColumn,
        WhenColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    static constexpr int ColorRole = BackgroundTasksModel::ColorRole;

    explicit QueueFailuresModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    const QList<BackgroundTaskListing> &rows() const { return m_failures; }
    void applyFailures(const QList<BackgroundTaskListing> &failures);
    void retranslate();

private:
    QList<BackgroundTaskListing> m_failures;
};

// A fleet's dead letters (docs/fleet.md, "The queue"): tasks that failed their delivery limit,
// newest first as Redis lists them. Replaced whole when the list changes, like the failures; the
// page keeps the selection by task id across a reset.
class DeadLettersModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        IdColumn,
        TenantColumn,
        ModelColumn,
        RunsColumn,
        NodeColumn,
        ErrorColumn,
        MessageColumn,
        WhenColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    static constexpr int ColorRole = BackgroundTasksModel::ColorRole;

    explicit DeadLettersModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    const QList<DeadLetterListing> &rows() const { return m_letters; }
    void applyLetters(const QList<DeadLetterListing> &letters);
    void retranslate();

private:
    QList<DeadLetterListing> m_letters;
};

} // namespace switchyard::ui
