// The Queue page on a real engine: background Responses tasks started over HTTP are listed as
// the queue holds them (one failed, one running on the only worker, one queued behind it), under
// QAbstractItemModelTester; a running task is cancelled from the page, after a confirmation, and
// the client then reads status "cancelled"; a cancel with no engine behind the bridge is refused
// in words. The simulated providers are told to fail, then to hang, so nothing depends on how
// fast the machine is: every wait is for a state, never for a time.
#include "bridge/engine_host.h"
#include "config/config_loader.h"
#include "screenshots.h"
#include "test_client.h"
#include "ui/queue/queue_models.h"
#include "ui/queue/queue_page.h"
#include "ui/shell/main_window.h"
#include "ui/shell/translation.h"

#include <QAbstractItemModelTester>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>
#include <memory>

using namespace Qt::StringLiterals;
using namespace switchyard;
using switchyard::ui::BackgroundTasksModel;
using switchyard::ui::MainWindow;
using switchyard::ui::QueueFailuresModel;
using switchyard::ui::QueuePage;

namespace {

// Generous: the first requests need the simulator and the gateway warmed up on a busy machine.
constexpr int kEngineTimeoutMs = 30000;
const QList<QString> kSimulatedProviders = {u"sim-swift"_s, u"sim-steady"_s, u"sim-deep"_s};
const QByteArray kTenant = "acme";

// Starts a background task for `kTenant`; its id, empty when the gateway did not queue it.
QString startBackgroundTask(quint16 port, const QByteArray &priority)
{
    switchyard::testing::TestClient client(port);
    client.post("/v1/responses", R"({"model":"demo-chat","input":"hi","background":true})",
                {{"x-switchyard-tenant", kTenant}, {"x-switchyard-priority", priority}});
    if (!client.waitForFinished(kEngineTimeoutMs) || client.status() != 200)
        return {};
    return QJsonDocument::fromJson(client.body()).object().value(u"id"_s).toString();
}

// The response object GET /v1/responses/{id} answers.
QJsonObject retrieve(quint16 port, const QString &id)
{
    switchyard::testing::TestClient client(port);
    client.send("GET", "/v1/responses/" + id.toLatin1(), {}, {{"x-switchyard-tenant", kTenant}});
    if (!client.waitForFinished(kEngineTimeoutMs))
        return {};
    return QJsonDocument::fromJson(client.body()).object();
}

// The task as the engine's last snapshot lists it among the queued and running.
std::optional<BackgroundTaskListing> listedTask(const EngineBridge &bridge, const QString &id)
{
    for (const BackgroundTaskListing &task : bridge.lastSnapshot().backgroundQueue.tasks) {
        if (task.id == id)
            return task;
    }
    return std::nullopt;
}

int rowOf(const BackgroundTasksModel &model, const QString &id)
{
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.rows().at(row).id == id)
            return row;
    }
    return -1;
}

QString cell(const QAbstractItemModel &model, int row, int column)
{
    return model.index(row, column).data().toString();
}

} // namespace

class QueueConsoleTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void thePageListsAFailedARunningAndAQueuedTask();
    void cancellingARunningTaskFromThePageCancelsItForTheClient();
    void aCancelWithoutAnEngineIsRefusedInWords();
    void waitsAndRunTimesReadInTheLargestUnits_data();
    void waitsAndRunTimesReadInTheLargestUnits();
    void chineseTranslationTranslatesThePage();

private:
    void setProviders(SimulatorKnobs::Mode mode);

    QTemporaryDir m_scratch;
    std::unique_ptr<EngineHost> m_bridge;
    std::unique_ptr<MainWindow> m_window;
    std::unique_ptr<QAbstractItemModelTester> m_tasksTester;
    std::unique_ptr<QAbstractItemModelTester> m_failuresTester;
    QString m_failed;
    QString m_running;
    QString m_queued;
};

void QueueConsoleTest::initTestCase()
{
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QVERIFY(m_scratch.isValid());
    const QString source = qEnvironmentVariable("SWITCHYARD_SOURCE_DIR");
    QVERIFY2(!source.isEmpty(), "SWITCHYARD_SOURCE_DIR must name the source tree");
    const config::LoadResult loaded =
        config::loadConfigFile(source + u"/resources/demo.yaml"_s, config::processEnvironment());
    QVERIFY(loaded.ok());
    config::Config demo = *loaded.config;
    demo.server.listenPort = 0;
    demo.resilience.probes.enabled = false;
    demo.state.directory = m_scratch.path();
    // One worker: a task that hangs holds it, and the next one waits.
    demo.responses.workers = 1;
    // A hanging provider is only ended by a timeout: none comes while the test runs.
    constexpr std::chrono::milliseconds kNever = std::chrono::hours(1);
    demo.timeouts.firstToken = kNever;
    demo.timeouts.idle = kNever;
    demo.timeouts.total = kNever;
    for (config::TierConfig &tier : demo.routing.tiers)
        tier.timeout = kNever;
    m_bridge = std::make_unique<EngineHost>(demo);
    QString error;
    QVERIFY2(m_bridge->start(&error), qPrintable(error));

    m_window = std::make_unique<MainWindow>(*m_bridge);
    m_window->resize(1280, 900);
    m_window->pageTabs()->setCurrentWidget(m_window->queuePage());
    m_window->show();
    QVERIFY(QTest::qWaitForWindowExposed(m_window.get()));
    m_tasksTester = std::make_unique<QAbstractItemModelTester>(
        m_window->queuePage()->tasksModel(),
        QAbstractItemModelTester::FailureReportingMode::QtTest);
    m_failuresTester = std::make_unique<QAbstractItemModelTester>(
        m_window->queuePage()->failuresModel(),
        QAbstractItemModelTester::FailureReportingMode::QtTest);
}

void QueueConsoleTest::cleanupTestCase()
{
    m_failuresTester.reset();
    m_tasksTester.reset();
    m_window.reset();
    m_bridge.reset();
}

void QueueConsoleTest::setProviders(SimulatorKnobs::Mode mode)
{
    SimulatorKnobs knobs;
    knobs.mode = mode;
    for (const QString &provider : kSimulatedProviders) {
        m_bridge->setSimulatorKnobs(provider, knobs);
        // Breakers opened by the failures before would refuse the call instead of making it.
        m_bridge->applyProviderAction(provider, ProviderAction::Reset);
    }
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            int set = 0;
            for (const ProviderHealth &provider : m_bridge->lastSnapshot().providers)
                set += kSimulatedProviders.contains(provider.id) &&
                       provider.simulatorMode == mode && provider.state == ProviderState::Up;
            return set == kSimulatedProviders.size();
        }(),
        kEngineTimeoutMs);
}

void QueueConsoleTest::thePageListsAFailedARunningAndAQueuedTask()
{
    QueuePage *page = m_window->queuePage();
    auto *tasksEmpty = page->findChild<QLabel *>(u"queueTasksEmptyHint"_s);
    auto *failuresEmpty = page->findChild<QLabel *>(u"queueFailuresEmptyHint"_s);
    QVERIFY(tasksEmpty && failuresEmpty);
    QVERIFY(tasksEmpty->isVisible());
    QVERIFY(failuresEmpty->isVisible());

    // Every provider answers 500: the task runs, and fails.
    setProviders(SimulatorKnobs::Mode::ServerError);
    m_failed = startBackgroundTask(m_bridge->port(), "high");
    QVERIFY(!m_failed.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(page->failuresModel()->rowCount() == 1, kEngineTimeoutMs);
    const QueueFailuresModel &failures = *page->failuresModel();
    QCOMPARE(cell(failures, 0, QueueFailuresModel::IdColumn), m_failed);
    QCOMPARE(cell(failures, 0, QueueFailuresModel::TenantColumn), QString::fromLatin1(kTenant));
    QCOMPARE(cell(failures, 0, QueueFailuresModel::ModelColumn), u"demo-chat"_s);
    const QJsonObject failedResponse = retrieve(m_bridge->port(), m_failed);
    QCOMPARE(failedResponse.value(u"status"_s).toString(), u"failed"_s);
    // The page says the error the client reads.
    const QJsonObject error = failedResponse.value(u"error"_s).toObject();
    QVERIFY(!error.value(u"code"_s).toString().isEmpty());
    QCOMPARE(cell(failures, 0, QueueFailuresModel::ErrorColumn), error.value(u"code"_s).toString());
    QCOMPARE(cell(failures, 0, QueueFailuresModel::MessageColumn),
             error.value(u"message"_s).toString());
    QVERIFY(!failuresEmpty->isVisible());

    // Every provider hangs: the next task holds the only worker, the one after waits.
    setProviders(SimulatorKnobs::Mode::Hang);
    m_running = startBackgroundTask(m_bridge->port(), "normal");
    QVERIFY(!m_running.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(listedTask(*m_bridge, m_running).has_value() &&
                                 listedTask(*m_bridge, m_running)->status == u"in_progress"_s,
                             kEngineTimeoutMs);
    m_queued = startBackgroundTask(m_bridge->port(), "low");
    QVERIFY(!m_queued.isEmpty());

    const BackgroundTasksModel &tasks = *page->tasksModel();
    QTRY_VERIFY_WITH_TIMEOUT(rowOf(tasks, m_queued) >= 0, kEngineTimeoutMs);
    const int running = rowOf(tasks, m_running);
    const int queued = rowOf(tasks, m_queued);
    QVERIFY(running >= 0);
    QCOMPARE(tasks.rowCount(), 2);
    QCOMPARE(cell(tasks, running, BackgroundTasksModel::StatusColumn), u"running"_s);
    QCOMPARE(cell(tasks, running, BackgroundTasksModel::PriorityColumn), u"normal"_s);
    QCOMPARE(cell(tasks, running, BackgroundTasksModel::TenantColumn), u"acme"_s);
    QCOMPARE(cell(tasks, running, BackgroundTasksModel::ModelColumn), u"demo-chat"_s);
    QCOMPARE(cell(tasks, running, BackgroundTasksModel::RunsColumn), u"1"_s);
    QCOMPARE(cell(tasks, queued, BackgroundTasksModel::StatusColumn), u"queued"_s);
    QCOMPARE(cell(tasks, queued, BackgroundTasksModel::PriorityColumn), u"low"_s);
    QCOMPARE(cell(tasks, queued, BackgroundTasksModel::RunsColumn), u"0"_s);
    // Only a running task has a run time.
    QCOMPARE(cell(tasks, queued, BackgroundTasksModel::RunningColumn), u"\u2014"_s);
    QVERIFY(cell(tasks, running, BackgroundTasksModel::RunningColumn) != u"\u2014"_s);
    QVERIFY(!tasksEmpty->isVisible());

    // The totals: one of one worker busy, one low task queued, one failure.
    QTRY_COMPARE_WITH_TIMEOUT(page->findChild<QLabel *>(u"queueRunningValue"_s)->text(), u"1 / 1"_s,
                              kEngineTimeoutMs);
    QCOMPARE(page->findChild<QLabel *>(u"queueQueuedValue"_s)->text(), u"1"_s);
    QVERIFY(page->findChild<QLabel *>(u"queueQueuedDetail"_s)
                ->text()
                .startsWith(u"high 0 · normal 0 · low 1 · oldest waited "_s));
    QVERIFY(page->findChild<QLabel *>(u"queueFinishedDetail"_s)
                ->text()
                .startsWith(u"1 failed · 0 cancelled"_s));
    QCOMPARE(page->findChild<QLabel *>(u"queueStoredValue"_s)->text(), u"3"_s);

    QCoreApplication::processEvents();
    QVERIFY(m_window->grab().save(
        switchyard::testing::screenshotPath(m_scratch.path(), u"console_queue.png"_s)));
}

void QueueConsoleTest::cancellingARunningTaskFromThePageCancelsItForTheClient()
{
    QVERIFY2(!m_running.isEmpty(), "needs the tasks of the test before");
    QueuePage *page = m_window->queuePage();
    auto *cancel = page->findChild<QPushButton *>(u"cancelTaskAction"_s);
    QVERIFY(cancel);
    page->findChild<QTableView *>(u"queueTasksTable"_s)->clearSelection();
    QVERIFY(!cancel->isEnabled()); // nothing selected
    QVERIFY(page->selectTask(m_running));
    QVERIFY(cancel->isEnabled());

    // Asked first; keeping it sends nothing.
    QSignalSpy answers(m_bridge.get(), &EngineBridge::backgroundTaskCommandDone);
    cancel->click();
    auto *box = page->findChild<QMessageBox *>(u"cancelTaskConfirmation"_s);
    QVERIFY(box && box->isVisible());
    QVERIFY(box->text().contains(m_running));
    box->reject();
    QCoreApplication::processEvents();
    QCOMPARE(answers.count(), 0);
    QCOMPARE(retrieve(m_bridge->port(), m_running).value(u"status"_s).toString(), u"in_progress"_s);

    cancel->click();
    box = page->findChild<QMessageBox *>(u"cancelTaskConfirmation"_s);
    QVERIFY(box && box->isVisible());
    box->findChild<QPushButton *>(u"confirmCancelTaskButton"_s)->click();
    QTRY_COMPARE_WITH_TIMEOUT(answers.count(), 1, kEngineTimeoutMs);
    const auto result = answers.first().at(1).value<BackgroundTaskCommandResult>();
    QVERIFY2(result.ok(), qPrintable(result.error));
    QCOMPARE(result.taskId, m_running);
    auto *status = page->findChild<QLabel *>(u"queueStatus"_s);
    QCOMPARE(status->text(), u"Task %1 cancelled."_s.arg(m_running));

    // The client reads it cancelled; the page no longer lists it, and the worker took the next.
    QCOMPARE(retrieve(m_bridge->port(), m_running).value(u"status"_s).toString(), u"cancelled"_s);
    QTRY_VERIFY_WITH_TIMEOUT(rowOf(*page->tasksModel(), m_running) < 0, kEngineTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(cell(*page->tasksModel(), rowOf(*page->tasksModel(), m_queued),
                                   BackgroundTasksModel::StatusColumn),
                              u"running"_s, kEngineTimeoutMs);
    QVERIFY(!cancel->isEnabled()); // the cancelled task took the selection with it
    QTRY_VERIFY_WITH_TIMEOUT(page->findChild<QLabel *>(u"queueFinishedDetail"_s)
                                 ->text()
                                 .startsWith(u"1 failed · 1 cancelled"_s),
                             kEngineTimeoutMs);

    // A task that ended meanwhile is refused in the admin API's words.
    QVERIFY(page->selectTask(m_queued));
    answers.clear();
    constexpr quint64 kOtherTicket = 1'000'000; // none of the page's
    m_bridge->cancelBackgroundTask(kOtherTicket, m_running);
    QTRY_COMPARE_WITH_TIMEOUT(answers.count(), 1, kEngineTimeoutMs);
    const auto refused = answers.first().at(1).value<BackgroundTaskCommandResult>();
    QCOMPARE(refused.status, 404);
    QCOMPARE(refused.errorCode, u"task_not_found"_s);
    QCOMPARE(refused.error,
             u"No queued or running background task has the id '%1'."_s.arg(m_running));
    // Another command's answer leaves the page's line as it was.
    QCOMPARE(status->text(), u"Task %1 cancelled."_s.arg(m_running));

    // The last one, so that the engine stops with nothing running.
    cancel->click();
    box = page->findChild<QMessageBox *>(u"cancelTaskConfirmation"_s);
    QVERIFY(box && box->isVisible());
    box->findChild<QPushButton *>(u"confirmCancelTaskButton"_s)->click();
    QTRY_VERIFY_WITH_TIMEOUT(page->tasksModel()->rowCount() == 0, kEngineTimeoutMs);
    QCOMPARE(retrieve(m_bridge->port(), m_queued).value(u"status"_s).toString(), u"cancelled"_s);
    QVERIFY(page->findChild<QLabel *>(u"queueTasksEmptyHint"_s)->isVisible());
}

void QueueConsoleTest::aCancelWithoutAnEngineIsRefusedInWords()
{
    config::Config config;
    EngineHost notStarted(config);
    QSignalSpy answers(&notStarted, &EngineBridge::backgroundTaskCommandDone);
    notStarted.cancelBackgroundTask(5, u"resp_0123"_s);
    QCOMPARE(answers.count(), 1); // at once: the console must not wait for an answer never sent
    QCOMPARE(answers.first().at(0).toULongLong(), 5ULL);
    const auto result = answers.first().at(1).value<BackgroundTaskCommandResult>();
    QVERIFY(!result.ok());
    QCOMPARE(result.taskId, u"resp_0123"_s);
    QCOMPARE(result.status, 503);
    QCOMPARE(result.error, u"The gateway engine is not running; start it and try again."_s);
}

void QueueConsoleTest::waitsAndRunTimesReadInTheLargestUnits_data()
{
    QTest::addColumn<qint64>("ms");
    QTest::addColumn<QString>("shown");
    QTest::newRow("just queued") << qint64(0) << u"<1 s"_s;
    QTest::newRow("a clock step back") << qint64(-250) << u"<1 s"_s;
    QTest::newRow("under a second") << qint64(999) << u"<1 s"_s;
    QTest::newRow("a second") << qint64(1000) << u"1 s"_s;
    QTest::newRow("under a minute") << qint64(59'999) << u"59 s"_s;
    QTest::newRow("a minute") << qint64(60'000) << u"1 min 0 s"_s;
    QTest::newRow("minutes and seconds") << qint64(184'500) << u"3 min 4 s"_s;
    QTest::newRow("an hour") << qint64(3'600'000) << u"1 h 0 min"_s;
    QTest::newRow("hours and minutes") << qint64(7'530'000) << u"2 h 5 min"_s;
}

void QueueConsoleTest::waitsAndRunTimesReadInTheLargestUnits()
{
    QFETCH(qint64, ms);
    QFETCH(QString, shown);
    QCOMPARE(ui::QueueText::duration(ms), shown);
}

void QueueConsoleTest::chineseTranslationTranslatesThePage()
{
    QTranslator translator;
    QVERIFY(ui::loadSwitchyardTranslation(
        translator, QLocale(QLocale::Chinese, QLocale::SimplifiedChineseScript, QLocale::China)));
    QVERIFY(QCoreApplication::installTranslator(&translator));
    QTabWidget *tabs = m_window->pageTabs();
    QTRY_COMPARE(tabs->tabText(tabs->indexOf(m_window->queuePage())), u"队列"_s);
    QCOMPARE(m_window->queuePage()
                 ->tasksModel()
                 ->headerData(BackgroundTasksModel::WaitedColumn, Qt::Horizontal)
                 .toString(),
             u"已等待"_s);
    QVERIFY(QCoreApplication::removeTranslator(&translator));
}

QTEST_MAIN(QueueConsoleTest)
#include "tst_queue_console.moc"
