#pragma once

#include "control/background_queue_state.h"
#include "control/engine_snapshot.h"

#include <QWidget>
#include <optional>

class QFrame;
class QLabel;
class QPushButton;
class QTableView;

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class BackgroundTasksModel;
class DeadLettersModel;
class QueueFailuresModel;

// The Queue tab: background Responses tasks (docs/responses.md) from the engine's snapshots,
// what GET /admin/v1/queue reports. The totals (running against the workers, queued by priority
// and the oldest wait, outcomes, what is stored), the queued and running tasks, and the latest
// failures. A selected queued or running task can be cancelled, after a confirmation, through
// the bridge with the admin API's own command. In a fleet the depth is the fleet's, the running
// tasks are counted per node, and a card lists the dead letters (tasks that failed their delivery
// limit), each of which can be retried or discarded.
class QueuePage final : public QWidget {
    Q_OBJECT
public:
    explicit QueuePage(EngineBridge &bridge, QWidget *parent = nullptr);

    void applySnapshot(const EngineSnapshot &snapshot);
    BackgroundTasksModel *tasksModel() const { return m_tasks; }
    QueueFailuresModel *failuresModel() const { return m_failures; }
    DeadLettersModel *deadLettersModel() const { return m_deadLetters; }
    // Selects dead letter `id`'s row; false when the page does not list it.
    bool selectDeadLetter(const QString &id);
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
    std::optional<DeadLetterListing> selectedDeadLetter() const;
    void settleSelected(DeadLetterAction action);
    void answered(quint64 ticket, const switchyard::BackgroundTaskCommandResult &result);
    void showStatus(const QString &text, bool failed);

    EngineBridge &m_bridge;
    BackgroundQueueState m_state;
    BackgroundTasksModel *m_tasks;
    QueueFailuresModel *m_failures;
    DeadLettersModel *m_deadLetters;
    quint64 m_cancelTicket = 0;     // the cancel waiting for its answer; 0 when none
    quint64 m_deadLetterTicket = 0; // the retry or discard waiting for its answer
    QString m_selectedDeadLetter;   // kept across the model's resets

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

    QFrame *m_deadCard = nullptr;
    QLabel *m_deadTitle = nullptr;
    QLabel *m_deadHint = nullptr;
    QLabel *m_deadEmpty = nullptr;
    QPushButton *m_retryButton = nullptr;
    QPushButton *m_discardButton = nullptr;
    QLabel *m_deadStatus = nullptr;
    QTableView *m_deadView = nullptr;
};

} // namespace switchyard::ui
