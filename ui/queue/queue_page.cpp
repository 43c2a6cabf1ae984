#include "ui/queue/queue_page.h"

#include "bridge/engine_bridge.h"
#include "ui/common/state_pill_delegate.h"
#include "ui/common/widget_helpers.h"
#include "ui/queue/queue_models.h"

#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

// Tickets of this page's cancels; the bridge answers every console's commands on one signal.
quint64 nextCancelTicket()
{
    static quint64 last = 0;
    return ++last;
}

QTableView *makeTable(const QString &objectName, QWidget *parent)
{
    auto *view = new QTableView(parent);
    view->setObjectName(objectName);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->verticalHeader()->hide();
    view->setShowGrid(false);
    view->setAlternatingRowColors(true);
    view->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    view->setTextElideMode(Qt::ElideRight);
    view->setWordWrap(false);
    return view;
}

QFrame *makeSectionCard(const QString &objectName, QWidget *parent, QVBoxLayout **layout)
{
    QFrame *card = makeCard(objectName, parent);
    *layout = new QVBoxLayout(card);
    (*layout)->setContentsMargins(16, 14, 16, 14);
    return card;
}

} // namespace

QueuePage::QueuePage(EngineBridge &bridge, QWidget *parent)
    : QWidget(parent), m_bridge(bridge), m_tasks(new BackgroundTasksModel(this)),
      m_failures(new QueueFailuresModel(this)), m_deadLetters(new DeadLettersModel(this))
{
    setObjectName(QStringLiteral("queuePage"));
    auto *page = new QVBoxLayout(this);
    page->setContentsMargins(16, 16, 16, 16);
    page->setSpacing(12);

    // The totals.
    QVBoxLayout *summary = nullptr;
    QFrame *summaryCard = makeSectionCard(QStringLiteral("queueSummaryCard"), this, &summary);
    page->addWidget(summaryCard);
    m_title = makeLabel(TextRole::SectionTitle, summaryCard);
    m_title->setFont(sectionTitleFont(font()));
    summary->addWidget(m_title);
    m_hint = makeLabel(TextRole::SectionHint, summaryCard);
    m_hint->setWordWrap(true);
    summary->addWidget(m_hint);
    summary->addSpacing(6);
    auto *figures = new QGridLayout;
    figures->setHorizontalSpacing(32);
    figures->setVerticalSpacing(2);
    const auto makeFigure = [&](Figure &figure, const QString &name, int column) {
        figure.caption = makeLabel(TextRole::Caption, summaryCard);
        figure.value = makeLabel(TextRole::Value, summaryCard);
        figure.value->setObjectName(name + QStringLiteral("Value"));
        figure.value->setFont(scaledFont(font(), 1.25, QFont::DemiBold));
        figure.detail = makeLabel(TextRole::Hint, summaryCard);
        figure.detail->setObjectName(name + QStringLiteral("Detail"));
        figures->addWidget(figure.caption, 0, column);
        figures->addWidget(figure.value, 1, column);
        figures->addWidget(figure.detail, 2, column);
        figures->setColumnStretch(column, 1);
    };
    makeFigure(m_running, QStringLiteral("queueRunning"), 0);
    makeFigure(m_queued, QStringLiteral("queueQueued"), 1);
    makeFigure(m_finished, QStringLiteral("queueFinished"), 2);
    makeFigure(m_stored, QStringLiteral("queueStored"), 3);
    summary->addLayout(figures);

    // Queued and running.
    QVBoxLayout *tasks = nullptr;
    QFrame *tasksCard = makeSectionCard(QStringLiteral("queueTasksCard"), this, &tasks);
    page->addWidget(tasksCard, 3);
    m_tasksTitle = makeLabel(TextRole::SectionTitle, tasksCard);
    m_tasksTitle->setFont(sectionTitleFont(font()));
    tasks->addWidget(m_tasksTitle);
    m_tasksEmpty = makeLabel(TextRole::Hint, tasksCard);
    m_tasksEmpty->setObjectName(QStringLiteral("queueTasksEmptyHint"));
    m_tasksEmpty->setWordWrap(true);
    tasks->addWidget(m_tasksEmpty);
    auto *actions = new QHBoxLayout;
    m_cancelButton = new QPushButton(tasksCard);
    m_cancelButton->setObjectName(QStringLiteral("cancelTaskAction"));
    m_cancelButton->setProperty("providerAction", true); // the console's bordered action button
    actions->addWidget(m_cancelButton);
    m_status = makeLabel(TextRole::Hint, tasksCard);
    m_status->setObjectName(QStringLiteral("queueStatus"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setWordWrap(true);
    actions->addSpacing(8);
    actions->addWidget(m_status, 1);
    tasks->addLayout(actions);
    m_tasksView = makeTable(QStringLiteral("queueTasksTable"), tasksCard);
    // A task that ends takes the selection with it: left to the view, the selection would move
    // to the next task and Cancel would offer that one. Connected before the view is given the
    // model, so this runs before the view picks the next row.
    connect(m_tasks, &QAbstractItemModel::rowsAboutToBeRemoved, this,
            [this](const QModelIndex &, int first, int last) {
                const QModelIndexList selected = m_tasksView->selectionModel()->selectedRows();
                if (!selected.isEmpty() && selected.first().row() >= first &&
                    selected.first().row() <= last)
                    m_tasksView->selectionModel()->clear();
            });
    m_tasksView->setModel(m_tasks);
    m_tasksView->setItemDelegateForColumn(
        BackgroundTasksModel::StatusColumn,
        new StatePillDelegate(BackgroundTasksModel::ColorRole, m_tasksView));
    // No column stretches: the numbers stay beside their headers, the spare width on the right.
    m_tasksView->horizontalHeader()->setStretchLastSection(false);
    tasks->addWidget(m_tasksView, 1);
    m_tasksCapped = makeLabel(TextRole::Hint, tasksCard);
    m_tasksCapped->setObjectName(QStringLiteral("queueTasksCapped"));
    tasks->addWidget(m_tasksCapped);
    // With no tasks the table is hidden: the title, the empty line and the action stay together.
    tasks->addStretch(0);

    // A fleet's dead letters: shown in a fleet only.
    QVBoxLayout *dead = nullptr;
    m_deadCard = makeSectionCard(QStringLiteral("queueDeadLettersCard"), this, &dead);
    page->addWidget(m_deadCard, 2);
    m_deadTitle = makeLabel(TextRole::SectionTitle, m_deadCard);
    m_deadTitle->setFont(sectionTitleFont(font()));
    dead->addWidget(m_deadTitle);
    m_deadHint = makeLabel(TextRole::SectionHint, m_deadCard);
    m_deadHint->setWordWrap(true);
    dead->addWidget(m_deadHint);
    m_deadEmpty = makeLabel(TextRole::Hint, m_deadCard);
    m_deadEmpty->setObjectName(QStringLiteral("queueDeadLettersEmptyHint"));
    m_deadEmpty->setWordWrap(true);
    dead->addWidget(m_deadEmpty);
    auto *deadActions = new QHBoxLayout;
    m_retryButton = new QPushButton(m_deadCard);
    m_retryButton->setObjectName(QStringLiteral("retryDeadLetterAction"));
    m_retryButton->setProperty("providerAction", true);
    deadActions->addWidget(m_retryButton);
    m_discardButton = new QPushButton(m_deadCard);
    m_discardButton->setObjectName(QStringLiteral("discardDeadLetterAction"));
    m_discardButton->setProperty("providerAction", true);
    deadActions->addWidget(m_discardButton);
    m_deadStatus = makeLabel(TextRole::Hint, m_deadCard);
    m_deadStatus->setObjectName(QStringLiteral("queueDeadLetterStatus"));
    m_deadStatus->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_deadStatus->setWordWrap(true);
    deadActions->addSpacing(8);
    deadActions->addWidget(m_deadStatus, 1);
    dead->addLayout(deadActions);
    m_deadView = makeTable(QStringLiteral("queueDeadLettersTable"), m_deadCard);
    // Narrow columns (runs, node) as narrow as they read: the message takes the room left.
    m_deadView->horizontalHeader()->setDefaultSectionSize(48);
    m_deadView->setModel(m_deadLetters);
    m_deadView->setItemDelegateForColumn(
        DeadLettersModel::ErrorColumn,
        new StatePillDelegate(DeadLettersModel::ColorRole, m_deadView));
    m_deadView->horizontalHeader()->setSectionResizeMode(DeadLettersModel::MessageColumn,
                                                         QHeaderView::Stretch);
    dead->addWidget(m_deadView, 1);
    dead->addStretch(0);
    m_deadCard->hide();

    // Recent failures.
    QVBoxLayout *failures = nullptr;
    QFrame *failuresCard = makeSectionCard(QStringLiteral("queueFailuresCard"), this, &failures);
    page->addWidget(failuresCard, 2);
    m_failuresTitle = makeLabel(TextRole::SectionTitle, failuresCard);
    m_failuresTitle->setFont(sectionTitleFont(font()));
    failures->addWidget(m_failuresTitle);
    m_failuresHint = makeLabel(TextRole::SectionHint, failuresCard);
    m_failuresHint->setWordWrap(true);
    failures->addWidget(m_failuresHint);
    m_failuresEmpty = makeLabel(TextRole::Hint, failuresCard);
    m_failuresEmpty->setObjectName(QStringLiteral("queueFailuresEmptyHint"));
    m_failuresEmpty->setWordWrap(true);
    failures->addWidget(m_failuresEmpty);
    m_failuresView = makeTable(QStringLiteral("queueFailuresTable"), failuresCard);
    m_failuresView->setModel(m_failures);
    m_failuresView->setItemDelegateForColumn(
        QueueFailuresModel::ErrorColumn,
        new StatePillDelegate(QueueFailuresModel::ColorRole, m_failuresView));
    m_failuresView->horizontalHeader()->setSectionResizeMode(QueueFailuresModel::MessageColumn,
                                                             QHeaderView::Stretch);
    failures->addWidget(m_failuresView, 1);
    failures->addStretch(0);
    // Both cards hold their few lines at the top when empty: the page's rest stays blank.
    page->addStretch(0);

    // The columns follow what they hold; times change width as they count up.
    connect(m_tasks, &QAbstractItemModel::rowsInserted, this,
            [this] { fitColumns(m_tasksView, -1); });
    connect(m_tasks, &QAbstractItemModel::dataChanged, this,
            [this] { fitColumns(m_tasksView, -1); });
    connect(m_failures, &QAbstractItemModel::modelReset, this,
            [this] { fitColumns(m_failuresView, QueueFailuresModel::MessageColumn); });
    connect(m_tasks, &QAbstractItemModel::rowsInserted, this, &QueuePage::refreshEmptyStates);
    connect(m_tasks, &QAbstractItemModel::rowsRemoved, this, &QueuePage::refreshEmptyStates);
    connect(m_failures, &QAbstractItemModel::modelReset, this, &QueuePage::refreshEmptyStates);
    connect(m_tasks, &QAbstractItemModel::dataChanged, this, &QueuePage::refreshActions);
    connect(m_tasksView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &QueuePage::refreshActions);
    connect(m_cancelButton, &QPushButton::clicked, this, &QueuePage::confirmCancel);
    // A reset (a new list) loses the view's selection: it is put back by task id.
    connect(m_deadLetters, &QAbstractItemModel::modelReset, this, [this] {
        fitColumns(m_deadView, DeadLettersModel::MessageColumn);
        if (!m_selectedDeadLetter.isEmpty() && !selectDeadLetter(m_selectedDeadLetter))
            m_selectedDeadLetter.clear();
        refreshEmptyStates();
    });
    connect(m_deadView->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
        const std::optional<DeadLetterListing> letter = selectedDeadLetter();
        m_selectedDeadLetter = letter ? letter->id : QString();
        refreshActions();
    });
    connect(m_retryButton, &QPushButton::clicked, this,
            [this] { settleSelected(DeadLetterAction::Retry); });
    connect(m_discardButton, &QPushButton::clicked, this,
            [this] { settleSelected(DeadLetterAction::Discard); });
    connect(&m_bridge, &EngineBridge::backgroundTaskCommandDone, this, &QueuePage::answered);

    retranslateUi();
    refreshEmptyStates();
}

void QueuePage::applySnapshot(const EngineSnapshot &snapshot)
{
    const bool wasFleet = m_state.fleet;
    m_state = snapshot.backgroundQueue;
    m_tasks->applyTasks(m_state.tasks);
    m_failures->applyFailures(m_state.recentFailures);
    m_deadLetters->applyLetters(m_state.deadLetters);
    m_deadCard->setVisible(m_state.fleet);
    if (m_state.fleet != wasFleet)
        retranslateUi(); // the tasks card says whose tasks it lists
    else
        refreshSummary();
}

bool QueuePage::selectDeadLetter(const QString &id)
{
    const QList<DeadLetterListing> &rows = m_deadLetters->rows();
    for (int row = 0; row < rows.size(); ++row) {
        if (rows.at(row).id == id) {
            m_deadView->selectRow(row);
            return true;
        }
    }
    return false;
}

bool QueuePage::selectTask(const QString &id)
{
    const QList<BackgroundTaskListing> &rows = m_tasks->rows();
    for (int row = 0; row < rows.size(); ++row) {
        if (rows.at(row).id == id) {
            m_tasksView->selectRow(row);
            return true;
        }
    }
    return false;
}

void QueuePage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
        m_tasks->retranslate();
        m_failures->retranslate();
        m_deadLetters->retranslate();
    }
    QWidget::changeEvent(event);
}

void QueuePage::retranslateUi()
{
    m_title->setText(tr("Background queue"));
    m_hint->setText(tr("Responses requests with \"background\": true wait here for a worker, "
                       "then run like any other request. The same figures are served as "
                       "GET /admin/v1/queue."));
    m_running.caption->setText(tr("Running"));
    m_queued.caption->setText(tr("Queued"));
    m_finished.caption->setText(tr("Finished since start"));
    m_stored.caption->setText(tr("Stored responses"));
    m_tasksTitle->setText(m_state.fleet ? tr("Running on this node") : tr("Queued and running"));
    m_tasksEmpty->setText(
        m_state.fleet ? tr("No background task runs on this node. The fleet's queue is summed up "
                           "above.")
                      : tr("No background task is queued or running. A client starts one with "
                           "POST /v1/responses and \"background\": true."));
    m_cancelButton->setText(tr("Cancel task…"));
    m_failuresTitle->setText(tr("Recent failures"));
    m_failuresHint->setText(tr("The latest background tasks that failed, newest first."));
    m_failuresEmpty->setText(tr("No background task has failed."));
    m_deadTitle->setText(tr("Dead letters"));
    m_deadHint->setText(tr("Tasks of the fleet that failed on every run their delivery limit "
                           "allows, or whose nodes kept stopping under them. Their clients read "
                           "status \"failed\". Retry queues one again with its runs counted "
                           "from zero; Discard drops it from this list."));
    m_deadEmpty->setText(tr("No task is in the dead letters."));
    m_retryButton->setText(tr("Retry"));
    m_discardButton->setText(tr("Discard"));
    refreshSummary();
    refreshActions();
}

void QueuePage::refreshSummary()
{
    const QLocale locale;
    const BackgroundQueueState &state = m_state;
    //: running tasks / workers, e.g. "1 / 4"
    m_running.value->setText(
        tr("%1 / %2").arg(locale.toString(state.running), locale.toString(state.workers)));
    if (state.fleet) {
        int inFleet = 0;
        QStringList nodes;
        for (const auto &[node, tasks] : state.runningByNode) {
            inFleet += tasks;
            //: a fleet node and the tasks it runs, e.g. "gw-1: 2"
            nodes.append(tr("%1: %2").arg(node, locale.toString(tasks)));
        }
        //: %1: the background tasks running on all the fleet's nodes
        m_running.detail->setText(
            tr("on this node · %1 in the fleet").arg(locale.toString(inFleet)));
        m_running.detail->setToolTip(nodes.isEmpty()
                                         ? tr("No task runs on any node of the fleet.")
                                         : tr("Running per node: %1").arg(nodes.join(u", ")));
    } else {
        m_running.detail->setText(tr("tasks running / workers on this node"));
        m_running.detail->setToolTip(QString());
    }
    m_queued.value->setText(locale.toString(state.queued()));
    //: queued tasks by priority, then how long the oldest has waited
    QString queued =
        tr("high %1 · normal %2 · low %3")
            .arg(locale.toString(state.queuedHigh), locale.toString(state.queuedNormal),
                 locale.toString(state.queuedLow));
    if (state.queued() > 0)
        queued += QStringLiteral(" · ") +
                  tr("oldest waited %1").arg(QueueText::duration(state.oldestQueuedAgeMs));
    m_queued.detail->setText(queued);

    m_finished.value->setText(tr("%1 completed").arg(locale.toString(state.completed)));
    QString finished = tr("%1 failed · %2 cancelled · %3 timed out")
                           .arg(locale.toString(state.failed), locale.toString(state.cancelled),
                                locale.toString(state.timedOut));
    if (state.incomplete > 0)
        finished +=
            QStringLiteral(" · ") + tr("%1 incomplete").arg(locale.toString(state.incomplete));
    m_finished.detail->setText(finished);
    setTone(m_finished.detail, state.failed > 0 ? Tone::Warning : Tone::Neutral);
    m_finished.detail->setToolTip(
        tr("Timed out tasks ran longer than responses.task_timeout; they count as failed too."));

    m_stored.value->setText(locale.toString(state.storedResponses));
    //: bytes stored of the most kept, e.g. "12.3 KB of 256 MB"
    m_stored.detail->setText(
        tr("%1 of %2")
            .arg(QueueText::bytes(state.storedBytes), QueueText::bytes(state.maxStoredBytes)));
    m_stored.detail->setToolTip(tr("Beyond responses.max_stored_bytes the oldest finished "
                                   "responses are dropped first."));

    const bool capped = state.tasksTotal > state.tasks.size();
    m_tasksCapped->setVisible(capped);
    if (capped) {
        m_tasksCapped->setText(
            tr("Showing the first %1 of %2 tasks; GET /admin/v1/queue lists "
               "them all.")
                .arg(locale.toString(state.tasks.size()), locale.toString(state.tasksTotal)));
    }
}

void QueuePage::refreshEmptyStates()
{
    const bool noTasks = m_tasks->rowCount() == 0;
    m_tasksEmpty->setVisible(noTasks);
    m_tasksView->setVisible(!noTasks);
    const bool noLetters = m_deadLetters->rowCount() == 0;
    m_deadEmpty->setVisible(noLetters);
    m_deadView->setVisible(!noLetters);
    const bool noFailures = m_failures->rowCount() == 0;
    m_failuresEmpty->setVisible(noFailures);
    m_failuresView->setVisible(!noFailures);
    refreshActions();
}

void QueuePage::fitColumns(QTableView *view, int stretchColumn)
{
    // Room beside each column's widest text, so that neighbouring columns do not run together.
    constexpr int kGapPx = 20;
    for (int column = 0; column < view->model()->columnCount(); ++column) {
        if (column == stretchColumn)
            continue;
        const int before = view->columnWidth(column);
        view->resizeColumnToContents(column);
        // A time that shrinks ("59 s" to "1 min 0 s" and back) would make the columns jitter:
        // they only grow.
        view->setColumnWidth(column, std::max(before, view->columnWidth(column) + kGapPx));
    }
}

std::optional<BackgroundTaskListing> QueuePage::selectedTask() const
{
    const QModelIndexList selected = m_tasksView->selectionModel()->selectedRows();
    if (selected.isEmpty() || selected.first().row() >= m_tasks->rowCount())
        return std::nullopt;
    return m_tasks->rows().at(selected.first().row());
}

void QueuePage::refreshActions()
{
    const std::optional<BackgroundTaskListing> task = selectedTask();
    m_cancelButton->setEnabled(task.has_value() && m_cancelTicket == 0);
    m_cancelButton->setToolTip(task ? QString() : tr("Select a queued or running task"));
    const bool letter = selectedDeadLetter().has_value() && m_deadLetterTicket == 0;
    m_retryButton->setEnabled(letter);
    m_discardButton->setEnabled(letter);
    const QString pick = letter ? QString() : tr("Select a dead letter");
    m_retryButton->setToolTip(pick);
    m_discardButton->setToolTip(pick);
}

std::optional<DeadLetterListing> QueuePage::selectedDeadLetter() const
{
    const QModelIndexList selected = m_deadView->selectionModel()->selectedRows();
    if (selected.isEmpty() || selected.first().row() >= m_deadLetters->rowCount())
        return std::nullopt;
    return m_deadLetters->rows().at(selected.first().row());
}

void QueuePage::settleSelected(DeadLetterAction action)
{
    const std::optional<DeadLetterListing> letter = selectedDeadLetter();
    if (!letter || m_deadLetterTicket != 0)
        return;
    m_deadLetterTicket = nextCancelTicket();
    refreshActions();
    m_deadStatus->setText(action == DeadLetterAction::Retry
                              ? tr("Queuing task %1 again…").arg(letter->id)
                              : tr("Discarding task %1…").arg(letter->id));
    setTone(m_deadStatus, Tone::Neutral);
    m_deadStatus->setProperty("retry", action == DeadLetterAction::Retry);
    m_bridge.settleDeadLetter(m_deadLetterTicket, letter->id, action);
}

void QueuePage::confirmCancel()
{
    const std::optional<BackgroundTaskListing> task = selectedTask();
    if (!task || m_cancelTicket != 0)
        return;
    auto *box =
        new QMessageBox(QMessageBox::Warning, tr("Cancel task %1").arg(task->id),
                        tr("Cancel background task %1 of tenant %2?").arg(task->id, task->tenant),
                        QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("cancelTaskConfirmation"));
    box->setInformativeText(
        task->status == QLatin1String("in_progress")
            ? tr("Its run is stopped as if its client had left; the client reads status "
                 "\"cancelled\". This cannot be undone.")
            : tr("It never runs; the client reads status \"cancelled\". This cannot be undone."));
    box->setAttribute(Qt::WA_DeleteOnClose);
    QPushButton *cancel = box->addButton(tr("Cancel task"), QMessageBox::DestructiveRole);
    cancel->setObjectName(QStringLiteral("confirmCancelTaskButton"));
    box->setDefaultButton(box->addButton(tr("Keep it"), QMessageBox::RejectRole));
    connect(box, &QMessageBox::buttonClicked, this,
            [this, cancel, id = task->id](QAbstractButton *clicked) {
                if (clicked != cancel)
                    return;
                m_cancelTicket = nextCancelTicket();
                refreshActions();
                showStatus(tr("Cancelling task %1…").arg(id), false);
                setTone(m_status, Tone::Neutral);
                m_bridge.cancelBackgroundTask(m_cancelTicket, id);
            });
    box->open();
}

void QueuePage::answered(quint64 ticket, const BackgroundTaskCommandResult &result)
{
    if (ticket != 0 && ticket == m_deadLetterTicket) {
        m_deadLetterTicket = 0;
        refreshActions();
        const bool retried = m_deadStatus->property("retry").toBool();
        m_deadStatus->setText(!result.ok() ? result.error
                              : retried    ? tr("Task %1 queued again.").arg(result.taskId)
                                           : tr("Task %1 discarded.").arg(result.taskId));
        setTone(m_deadStatus, result.ok() ? Tone::Good : Tone::Bad);
        return;
    }
    if (ticket == 0 || ticket != m_cancelTicket)
        return;
    m_cancelTicket = 0;
    refreshActions();
    if (result.ok())
        showStatus(tr("Task %1 cancelled.").arg(result.taskId), false);
    else
        showStatus(result.error, true);
}

void QueuePage::showStatus(const QString &text, bool failed)
{
    m_status->setText(text);
    setTone(m_status, failed ? Tone::Bad : Tone::Good);
}

} // namespace switchyard::ui
