// The console on a fake bridge: it needs nothing of the engine but the bridge's interface. The
// registered-agents panel merges agents by id and deregisters the selected one through the
// bridge, as DELETE /admin/v1/agents/{id} does; the main window shows what the bridge publishes;
// pages with nothing to list keep their text, and the Keys page its Issue button, together at the
// top.
#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/alerts/alerts_page.h"
#include "ui/keys/keys_page.h"
#include "ui/overview/health_matrix_model.h"
#include "ui/overview/overview_page.h"
#include "ui/routes/agents_model.h"
#include "ui/routes/agents_panel.h"
#include "ui/routes/routes_view.h"
#include "ui/shell/main_window.h"

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QFrame>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using switchyard::testing::FakeEngineBridge;
using switchyard::ui::AgentsModel;

namespace {

AgentState agent(const QString &id, bool busy, bool live, qint64 heartbeatMs)
{
    AgentState state;
    state.id = id;
    state.baseUrl = u"http://127.0.0.1:9001/v1"_s;
    state.capabilities = {u"travel/book/flight"_s, u"travel/plan/trip"_s};
    state.capacity = 4;
    state.busy = busy;
    state.live = live;
    state.lastHeartbeatMsSinceEpoch = heartbeatMs;
    return state;
}

ProviderHealth provider(const QString &id)
{
    ProviderHealth health;
    health.id = id;
    health.kind = u"openai"_s;
    health.models = {u"m"_s};
    return health;
}

} // namespace

class ConsoleWithoutEngineTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void agentsAreMergedByIdNeverReset()
    {
        AgentsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy resets(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        const qint64 now = 1'800'000'000'000;

        model.applyAgents({agent(u"a"_s, false, true, now - 4000),
                           agent(u"b"_s, true, true, now - 1000),
                           agent(u"c"_s, false, false, now - 90'000)},
                          now);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(0, AgentsModel::StateColumn).data().toString(), u"live"_s);
        QCOMPARE(model.index(1, AgentsModel::StateColumn).data().toString(), u"busy"_s);
        QCOMPARE(model.index(2, AgentsModel::StateColumn).data().toString(), u"silent"_s);
        QCOMPARE(model.index(0, AgentsModel::HeartbeatColumn).data().toString(), u"4 s ago"_s);
        QCOMPARE(model.index(0, AgentsModel::CapabilitiesColumn).data().toString(),
                 u"travel/book/flight, travel/plan/trip"_s);

        model.applyAgents({agent(u"a"_s, true, true, now), agent(u"c"_s, false, false, now)}, now);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(removed.size(), 1);
        QCOMPARE(model.index(0, AgentsModel::StateColumn).data().toString(), u"busy"_s);
        QCOMPARE(model.index(1, AgentsModel::AgentColumn).data().toString(), u"c"_s);
        QCOMPARE(resets.size(), 0);
    }

    void agentsPanelDeregistersTheSelectedAgentThroughTheBridge()
    {
        FakeEngineBridge bridge;
        ui::AgentsPanel panel(bridge);
        panel.show();
        EngineSnapshot snapshot;
        snapshot.agents = {agent(u"planner"_s, false, true, 0), agent(u"booker"_s, false, true, 0)};
        panel.applySnapshot(snapshot);
        QCOMPARE(panel.model()->rowCount(), 2);
        QVERIFY(!panel.removeButton()->isEnabled()); // nothing selected yet

        panel.view()->selectRow(1);
        QVERIFY(panel.removeButton()->isEnabled());
        QTest::mouseClick(panel.removeButton(), Qt::LeftButton);
        QCOMPARE(bridge.removedAgents, QStringList{u"booker"_s});

        panel.applySnapshot({});
        QCOMPARE(panel.model()->rowCount(), 0);
        QVERIFY(panel.view()->isHidden());
        QVERIFY(!panel.removeButton()->isEnabled());
    }

    void mainWindowShowsWhatTheBridgePublishes()
    {
        FakeEngineBridge bridge;
        ui::MainWindow window(bridge);
        window.resize(1280, 900);
        window.show();
        EngineSnapshot snapshot;
        snapshot.listenAddress = u"127.0.0.1:1"_s;
        snapshot.providers = {provider(u"alpha"_s), provider(u"beta"_s)};
        snapshot.agents = {agent(u"planner"_s, false, true, 0)};
        bridge.publish(snapshot);

        const ui::HealthMatrixModel *matrix = window.overviewPage()->healthMatrixModel();
        QCOMPARE(matrix->rowCount(), 2);
        QCOMPARE(matrix->providers().at(1).id, u"beta"_s);
        QCOMPARE(window.routesView()->agentsPanel()->model()->rowCount(), 1);
    }

    void statusBarWarnsWhileOpenToTheNetworkWithoutTls()
    {
        FakeEngineBridge bridge;
        ui::MainWindow window(bridge);
        window.resize(1280, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *warning = window.findChild<QLabel *>(u"exposureWarning"_s);
        auto *listen = window.findChild<QLabel *>(u"listenLabel"_s);
        QVERIFY(warning && listen);
        EngineSnapshot snapshot;
        snapshot.listenAddress = u"0.0.0.0:8080"_s;
        bridge.publish(snapshot);
        QVERIFY(warning->isHidden());

        snapshot.exposedWithoutTls = true;
        bridge.publish(snapshot);
        QVERIFY(warning->isVisible());
        QCOMPARE(warning->text(), u"⚠ Open to the network without TLS"_s);
        QVERIFY(warning->toolTip().contains(u"0.0.0.0:8080"_s));
        if (switchyard::testing::updatingScreenshots()) {
            QVERIFY(window.grab().save(switchyard::testing::screenshotPath(
                QString(), u"console_exposed_without_tls.png"_s)));
        }

        snapshot.exposedWithoutTls = false;
        snapshot.tlsEnabled = true;
        bridge.publish(snapshot);
        QVERIFY(warning->isHidden());
        QVERIFY2(listen->text().contains(u"https://0.0.0.0:8080/v1"_s), qPrintable(listen->text()));
    }

    void statusBarShowsTheFleetLink()
    {
        FakeEngineBridge bridge;
        ui::MainWindow window(bridge);
        window.resize(1280, 900);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        auto *fleet = window.findChild<QLabel *>(u"fleetLabel"_s);
        QVERIFY(fleet);
        EngineSnapshot snapshot;
        snapshot.listenAddress = u"127.0.0.1:8081"_s;
        bridge.publish(snapshot);
        QVERIFY(fleet->isHidden()); // a single node says nothing of fleets

        snapshot.fleet = {true, u"prod"_s, u"gw-1"_s, u"redis://10.0.0.5:6379/0"_s, true, 0,
                          {},   3,         {}};
        bridge.publish(snapshot);
        QVERIFY(fleet->isVisible());
        // "3 nodes" with the English plural forms loaded, "3 node(s)" without a translator.
        QVERIFY2(fleet->text().startsWith(u"Fleet prod  ·  3 node"_s), qPrintable(fleet->text()));
        QVERIFY(fleet->toolTip().contains(u"gw-1"_s));
        QVERIFY(fleet->toolTip().contains(u"redis://10.0.0.5:6379/0"_s));

        const QDateTime down = QDateTime::currentDateTime().addSecs(-90);
        snapshot.fleet.linkUp = false;
        snapshot.fleet.linkDownSinceMs = down.toMSecsSinceEpoch();
        snapshot.fleet.problem = u"Redis at redis://10.0.0.5:6379/0 did not answer within 500 ms"_s;
        bridge.publish(snapshot);
        QCOMPARE(fleet->text(), u"Fleet link down since %1"_s.arg(down.toString(u"HH:mm:ss"_s)));
        QVERIFY(fleet->toolTip().startsWith(snapshot.fleet.problem));
        if (switchyard::testing::updatingScreenshots()) {
            QCoreApplication::processEvents(); // the status bar lays the longer text out
            QVERIFY(window.grab().save(
                switchyard::testing::screenshotPath(QString(), u"console_fleet_link_down.png"_s)));
        }
    }

    void overviewShowsOpenConnectionsAndRefusals()
    {
        FakeEngineBridge bridge;
        ui::MainWindow window(bridge);
        auto *hint = window.findChild<QLabel *>(u"inFlightCardHint"_s);
        QVERIFY(hint);
        auto *card = window.findChild<QFrame *>(u"inFlightCard"_s);
        QVERIFY(card);
        EngineSnapshot snapshot;
        snapshot.inFlight = 4;
        snapshot.connections.open = 1;

        bridge.publish(snapshot);
        QCOMPARE(hint->text(), u"open connections: 1"_s);

        snapshot.connections.open = 12;
        snapshot.connections.refusedOverTotal = 2;
        snapshot.connections.refusedOverAddress = 1;
        snapshot.connections.headerTimeouts = 5;
        snapshot.connections.idleClosed = 40;
        bridge.publish(snapshot);
        QCOMPARE(hint->text(), u"open connections: 12 · refused: 3"_s);
        QCOMPARE(card->toolTip(), u"Requests in flight: 4, waiting to start: 0 (a burst's "
                                  u"backlog, started in order within admission.max_start_wait)\n"
                                  u"Client connections open: 12\n"
                                  u"Refused, limits.max_connections reached: 2\n"
                                  u"Refused, limits.max_connections_per_address reached: 1\n"
                                  u"Closed, request headers too slow: 5\n"
                                  u"Closed, request body too slow: 0\n"
                                  u"Closed, idle longer than limits.keep_alive_idle: 40"_s);

        // A burst's backlog: requests read and waiting for the engine to start them.
        snapshot.inFlight = 230;
        snapshot.waitingToStart = 180;
        snapshot.connections = {};
        snapshot.connections.open = 230;
        bridge.publish(snapshot);
        QCOMPARE(hint->text(), u"open connections: 230 · waiting to start: 180"_s);
        QVERIFY2(card->toolTip().startsWith(u"Requests in flight: 230, waiting to start: 180 "_s),
                 qPrintable(card->toolTip()));
        if (switchyard::testing::updatingScreenshots())
            QVERIFY(window.grab().save(switchyard::testing::screenshotPath(
                QString(), u"console_overview_waiting_to_start.png"_s)));
    }

    void emptyPagesKeepTheirTextTogetherAtTheTop_data()
    {
        QTest::addColumn<QString>("page");
        // The card's labels from the top: its title, its hint, and the line that says the list
        // is empty.
        QTest::addColumn<QStringList>("labels");
        QTest::addColumn<QString>("screenshot");
        // The button right under the empty line, when the page offers one to fill it.
        QTest::addColumn<QString>("action");
        QTest::newRow("keys, none configured")
            << u"keysPage"_s << QStringList{u"keysTitle"_s, u"keysHint"_s, u"keysEmptyHint"_s}
            << u"console_keys_empty.png"_s << u"issueKeyAction"_s;
        QTest::newRow("alerts, all clear")
            << u"alertsPage"_s
            << QStringList{u"activeAlertsTitle"_s, u"activeAlertsHint"_s, u"alertsAllClear"_s}
            << u"console_alerts_clear.png"_s << QString();
    }

    void emptyPagesKeepTheirTextTogetherAtTheTop()
    {
        QFETCH(QString, page);
        QFETCH(QStringList, labels);
        QFETCH(QString, screenshot);
        QFETCH(QString, action);
        // The smallest window the console is laid out for: its height spreads any stretch.
        FakeEngineBridge bridge;
        ui::MainWindow window(bridge);
        window.resize(1280, 900);
        auto *tabs = window.findChild<QTabWidget *>(u"consoleTabs"_s);
        auto *shown = window.findChild<QWidget *>(page);
        QVERIFY(tabs && shown);
        tabs->setCurrentWidget(shown);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        EngineSnapshot snapshot;
        snapshot.listenAddress = u"127.0.0.1:8080"_s;
        bridge.publish(snapshot);
        QCoreApplication::processEvents();

        QRect above;
        for (const QString &name : labels) {
            auto *label = shown->findChild<QLabel *>(name);
            QVERIFY2(label, qPrintable(name));
            QVERIFY2(label->isVisible(), qPrintable(name));
            const QRect rect(label->mapTo(shown, QPoint(0, 0)), label->size());
            // As tall as its text: a label stretched taller draws its text in its middle.
            const int textHeight = label->hasHeightForWidth()
                                       ? label->heightForWidth(label->width())
                                       : label->sizeHint().height();
            QVERIFY2(rect.height() <= textHeight + 4,
                     qPrintable(u"%1 is %2 px tall for %3 px of text"_s.arg(name)
                                    .arg(rect.height())
                                    .arg(textHeight)));
            if (above.isNull()) {
                // The title opens the page: the page's margin and the card's above it.
                QVERIFY2(rect.top() < 48, qPrintable(u"%1 at y %2"_s.arg(name).arg(rect.top())));
            } else {
                // Each line right under the one before: the layout's spacing, not a stretch.
                const int gap = rect.top() - above.bottom() - 1;
                QVERIFY2(gap >= 0 && gap <= 12,
                         qPrintable(u"%1 is %2 px below the line above"_s.arg(name).arg(gap)));
            }
            above = rect;
        }
        if (!action.isEmpty()) {
            auto *button = shown->findChild<QPushButton *>(action);
            QVERIFY2(button, qPrintable(action));
            QVERIFY(button->isVisible());
            QVERIFY(button->isEnabled());
            const QRect rect(button->mapTo(shown, QPoint(0, 0)), button->size());
            const int gap = rect.top() - above.bottom() - 1;
            QVERIFY2(gap >= 0 && gap <= 12,
                     qPrintable(u"%1 is %2 px below the empty line"_s.arg(action).arg(gap)));
            // Its height is a button's, not a share of the card's.
            QVERIFY2(rect.height() <= button->sizeHint().height() + 4,
                     qPrintable(u"%1 is %2 px tall"_s.arg(action).arg(rect.height())));
        }
        if (switchyard::testing::updatingScreenshots())
            QVERIFY(window.grab().save(switchyard::testing::screenshotPath(QString(), screenshot)));
    }
};

QTEST_MAIN(ConsoleWithoutEngineTest)
#include "tst_console_without_engine.moc"
