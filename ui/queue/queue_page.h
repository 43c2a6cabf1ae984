#pragma once

#include "control/background_queue_state.h"
#include "control/engine_snapshot.h"

#include <QWidget>
#include <optional>

class QLabel;
class QPushButton;
class QTableView;

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class BackgroundTasksModel;
class QueueFailuresModel;

// The Queue tab: background Responses tasks (docs/responses.md) from the engine's snapshots,
// what GET /admin/v1/queue reports. The totals (running against the workers, queued by priority
// and the oldest wait, outcomes, what is stored), the queued and running tasks, and the latest
// failures. A selected queued or running task can be cancelled, after a confirmation, through
// the bridge with the admin API's own command.
class QueuePage final : public QWidget {
    Q_OBJECT
public:
    explicit QueuePage(EngineBridge &bridge, QWidget *parent = nullptr);

    void applySnapshot(const EngineSnapshot &snapshot);
    BackgroundTasksModel *tasksModel() const { return m_tasks; }
    QueueFailuresModel *failuresModel() const { return m_failures; }
    // Selects task `id`'s row; false when the page does not list it.
    bool selectTask(const QString &id);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void refreshSummary();
    void refreshEmptyStates();
    void refreshActions();
    // Fits every column but `stretchColumn` (-1: none) to what it holds.
    void fitColumns(QTableView *view, int stretchColumn);
    std::optional<BackgroundTaskListing> selectedTask() const;
    void confirmCancel();
    void answered(quint64 ticket, const switchyard::BackgroundTaskCommandResult &result);
    void showStatus(const QString &text, bool failed);

    EngineBridge &m_bridge;
    BackgroundQueueState m_state;
    BackgroundTasksModel *m_tasks;
    QueueFailuresModel *m_failures;
    quint64 m_cancelTicket = 0; // the cancel waiting for its answer; 0 when none

    QLabel *m_title = nullptr;
    QLabel *m_hint = nullptr;
    // The totals: a caption, a value and a line under it for each.
    struct Figure {
        QLabel *caption = nullptr;
        QLabel *value = nullptr;
        QLabel *detail = nullptr;
    };
    Figure m_running;
    Figure m_queued;
    Figure m_finished;
    Figure m_stored;

    QLabel *m_tasksTitle = nullptr;
    QLabel *m_tasksEmpty = nullptr;
    QLabel *m_tasksCapped = nullptr; // shown when the snapshot lists only the first tasks
    QPushButton *m_cancelButton = nullptr;
    QLabel *m_status = nullptr;
    QTableView *m_tasksView = nullptr;

    QLabel *m_failuresTitle = nullptr;
    QLabel *m_failuresHint = nullptr;
    QLabel *m_failuresEmpty = nullptr;
    QTableView *m_failuresView = nullptr;
};

} // namespace switchyard::ui
