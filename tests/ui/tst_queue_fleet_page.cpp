// The Queue tab in a fleet on a fake bridge: the fleet's depth with the running tasks per node,
// the dead letters card (shown in a fleet only) under QAbstractItemModelTester, a dead letter
// retried and another discarded through the bridge with the selection kept across snapshots,
// the refusal shown in words, the Chinese texts, and the screenshot in docs/screenshots.

#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/queue/queue_models.h"
#include "ui/queue/queue_page.h"
#include "ui/shell/main_window.h"
#include "ui/shell/translation.h"

#include <QAbstractItemModelTester>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>

using namespace Qt::StringLiterals;
using namespace switchyard;
using switchyard::ui::DeadLettersModel;
using switchyard::ui::MainWindow;
using switchyard::ui::QueuePage;

namespace {

DeadLetterListing letter(const QString &id, const QString &code, const QString &message)
{
    DeadLetterListing dead;
    dead.id = id;
    dead.tenant = u"acme"_s;
    dead.model = u"gpt-4o-mini"_s;
    dead.priority = u"normal"_s;
    dead.runs = 5;
    dead.node = u"gw-2"_s;
    dead.atMs = QDateTime(QDate(2026, 12, 5), QTime(9, 12, 40), Qt::UTC).toMSecsSinceEpoch();
    dead.errorCode = code;
    dead.errorMessage = message;
    return dead;
}

EngineSnapshot fleetSnapshot(const QList<DeadLetterListing> &letters)
{
    EngineSnapshot snapshot;
    BackgroundQueueState &queue = snapshot.backgroundQueue;
    queue.workers = 4;
    queue.running = 2;
    queue.queuedHigh = 1;
    queue.queuedNormal = 6;
    queue.oldestQueuedAgeMs = 42'000;
    queue.completed = 318;
    queue.failed = 7;
    queue.cancelled = 2;
    queue.storedResponses = 12;
    queue.storedBytes = 96 * 1024;
    queue.maxStoredBytes = 256LL * 1024 * 1024;
    queue.fleet = true;
    queue.runningByNode = {{u"gw-1"_s, 2}, {u"gw-2"_s, 3}, {u"gw-3"_s, 1}};
    queue.deadLettered = int(letters.size());
    queue.deadLetters = letters;
    BackgroundTaskListing running;
    running.id = u"resp_7f3a0c41d2e94b6a8c5e21f09d4b7a13"_s;
    running.tenant = u"acme"_s;
    running.model = u"gpt-4o-mini"_s;
    running.priority = u"normal"_s;
    running.status = u"in_progress"_s;
    running.waitedMs = 1200;
    running.runningMs = 14'000;
    running.runs = 2;
    queue.tasks = {running};
    queue.tasksTotal = 1;
    return snapshot;
}

const QList<DeadLetterListing> kLetters{
    letter(u"resp_0a91c2d4e6f8102436587a9cbedf0123"_s, u"upstream_error"_s,
           u"failed on each of its 5 runs (`responses.queue.delivery_limit`); the last: "
           u"Provider `cloud-main` answered 500"_s),
    letter(u"resp_5be8d7c6a4f2e0193847566a7b8c9d0e"_s, u"delivery_limit_reached"_s,
           u"The task was delivered 5 times without finishing; the last time: the node running "
           u"it (gw-3) stopped before it finished"_s),
};

} // namespace

class QueueFleetPageTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void aSingleNodeShowsNoDeadLetters();
    void deadLettersAreListedRetriedAndDiscarded();
    void chineseTranslationTranslatesTheDeadLetters();

private:
    QTemporaryDir m_scratch;
};

void QueueFleetPageTest::initTestCase()
{
    qputenv("TZ", "UTC");
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QVERIFY(m_scratch.isValid());
}

void QueueFleetPageTest::aSingleNodeShowsNoDeadLetters()
{
    testing::FakeEngineBridge bridge;
    QueuePage page(bridge);
    page.resize(1200, 800);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    EngineSnapshot single = fleetSnapshot({});
    single.backgroundQueue.fleet = false;
    single.backgroundQueue.runningByNode.clear();
    bridge.publish(single);
    QVERIFY(!page.findChild<QFrame *>(u"queueDeadLettersCard"_s)->isVisible());
    QCOMPARE(page.findChild<QLabel *>(u"queueRunningDetail"_s)->text(),
             u"tasks running / workers on this node"_s);
}

void QueueFleetPageTest::deadLettersAreListedRetriedAndDiscarded()
{
    testing::FakeEngineBridge bridge;
    MainWindow window(bridge);
    window.resize(1280, 900);
    window.pageTabs()->setCurrentWidget(window.queuePage());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QueuePage &page = *window.queuePage();
    QAbstractItemModelTester tester(page.deadLettersModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);

    bridge.publish(fleetSnapshot(kLetters));
    QVERIFY(page.findChild<QFrame *>(u"queueDeadLettersCard"_s)->isVisible());
    auto *running = page.findChild<QLabel *>(u"queueRunningDetail"_s);
    QCOMPARE(running->text(), u"on this node · 6 in the fleet"_s);
    QCOMPARE(running->toolTip(), u"Running per node: gw-1: 2, gw-2: 3, gw-3: 1"_s);
    DeadLettersModel &model = *page.deadLettersModel();
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, DeadLettersModel::RunsColumn).data().toString(), u"5"_s);
    QCOMPARE(model.index(0, DeadLettersModel::NodeColumn).data().toString(), u"gw-2"_s);
    QCOMPARE(model.index(1, DeadLettersModel::ErrorColumn).data().toString(),
             u"delivery_limit_reached"_s);
    QCOMPARE(model.index(0, DeadLettersModel::WhenColumn).data(Qt::ToolTipRole).isValid(), true);

    auto *retry = page.findChild<QPushButton *>(u"retryDeadLetterAction"_s);
    auto *discard = page.findChild<QPushButton *>(u"discardDeadLetterAction"_s);
    QVERIFY(!retry->isEnabled() && !discard->isEnabled());
    QVERIFY(page.selectDeadLetter(kLetters.at(1).id));
    // A new snapshot with the same letters in another order keeps the selected one selected.
    bridge.publish(fleetSnapshot({kLetters.at(1), kLetters.at(0)}));
    auto *view = page.findChild<QTableView *>(u"queueDeadLettersTable"_s);
    QCOMPARE(view->selectionModel()->selectedRows().value(0).row(), 0);
    QVERIFY(retry->isEnabled());

    QVERIFY(window.grab().save(
        switchyard::testing::screenshotPath(m_scratch.path(), u"console_queue_fleet.png"_s)));

    QTest::mouseClick(retry, Qt::LeftButton);
    QCOMPARE(bridge.retriedDeadLetters, QStringList{kLetters.at(1).id});
    auto *status = page.findChild<QLabel *>(u"queueDeadLetterStatus"_s);
    QCOMPARE(status->text(), u"Task %1 queued again."_s.arg(kLetters.at(1).id));

    // The retried one leaves the list; the other is discarded.
    bridge.publish(fleetSnapshot({kLetters.at(0)}));
    QVERIFY(page.selectDeadLetter(kLetters.at(0).id));
    QTest::mouseClick(discard, Qt::LeftButton);
    QCOMPARE(bridge.discardedDeadLetters, QStringList{kLetters.at(0).id});
    QCOMPARE(status->text(), u"Task %1 discarded."_s.arg(kLetters.at(0).id));
    bridge.publish(fleetSnapshot({}));
    QVERIFY(page.findChild<QLabel *>(u"queueDeadLettersEmptyHint"_s)->isVisible());
    QVERIFY(!view->isVisible());
    QVERIFY(!retry->isEnabled());
}

void QueueFleetPageTest::chineseTranslationTranslatesTheDeadLetters()
{
    testing::FakeEngineBridge bridge;
    QueuePage page(bridge);
    QTranslator translator;
    QVERIFY(ui::loadSwitchyardTranslation(
        translator, QLocale(QLocale::Chinese, QLocale::SimplifiedChineseScript, QLocale::China)));
    QVERIFY(QCoreApplication::installTranslator(&translator));
    QTRY_COMPARE(page.findChild<QPushButton *>(u"retryDeadLetterAction"_s)->text(), u"重试"_s);
    QCOMPARE(page.deadLettersModel()
                 ->headerData(DeadLettersModel::RunsColumn, Qt::Horizontal)
                 .toString(),
             u"运行次数"_s);
    QVERIFY(QCoreApplication::removeTranslator(&translator));
}

QTEST_MAIN(QueueFleetPageTest)
#include "tst_queue_fleet_page.moc"
