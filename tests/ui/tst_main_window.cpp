#include "bridge/engine_host.h"
#include "config/config_loader.h"
#include "screenshots.h"
#include "test_client.h"
#include "ui/overview/breaker_events_model.h"
#include "ui/overview/drills_panel.h"
#include "ui/overview/health_matrix_model.h"
#include "ui/overview/overview_page.h"
#include "ui/overview/request_rate_chart.h"
#include "ui/routes/agents_model.h"
#include "ui/routes/agents_panel.h"
#include "ui/routes/route_rules_model.h"
#include "ui/routes/routes_view.h"
#include "ui/shell/main_window.h"
#include "ui/shell/translation.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPixmap>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTranslator>
#include <cmath>
#include <memory>

using switchyard::BreakerState;
using switchyard::EngineBridge;
using switchyard::EngineHost;
using switchyard::OperatorState;
using switchyard::ProviderAction;
using switchyard::ProviderHealth;
using switchyard::SimulatorKnobs;
using switchyard::testing::updatingScreenshots;
using switchyard::ui::BreakerEventsModel;
using switchyard::ui::DrillsPanel;
using switchyard::ui::HealthMatrixModel;
using switchyard::ui::MainWindow;
using switchyard::ui::RouteRulesModel;
using switchyard::ui::RoutesView;
namespace config = switchyard::config;

namespace {

// Generous: the first requests need the simulator and the gateway warmed up on a busy machine.
constexpr int trafficTimeoutMs = 60000;

QString sourceDirectory()
{
    return qEnvironmentVariable("SWITCHYARD_SOURCE_DIR");
}

quint64 requestsShown(const HealthMatrixModel &model)
{
    quint64 total = 0;
    for (int row = 0; row < model.rowCount(); ++row)
        total += model.index(row, HealthMatrixModel::RequestsColumn)
                     .data(HealthMatrixModel::SortRole)
                     .toULongLong();
    return total;
}

bool everyProviderHasLatency(const HealthMatrixModel &model)
{
    if (model.rowCount() == 0)
        return false;
    for (int row = 0; row < model.rowCount(); ++row) {
        if (model.index(row, HealthMatrixModel::LatencyP95Column)
                .data(HealthMatrixModel::SortRole)
                .toDouble() < 0.0)
            return false;
    }
    return true;
}

// The provider's row as the console shows it; an empty id when it is not shown.
ProviderHealth shownProvider(const HealthMatrixModel &model, const QString &id)
{
    for (const ProviderHealth &provider : model.providers()) {
        if (provider.id == id)
            return provider;
    }
    return {};
}

HealthMatrixModel::ProviderStatus shownStatus(const HealthMatrixModel &model, const QString &id)
{
    return HealthMatrixModel::statusOf(shownProvider(model, id));
}

QString describe(const QWidget *widget)
{
    return widget->objectName().isEmpty() ? QString::fromLatin1(widget->metaObject()->className())
                                          : widget->objectName();
}

// Why `field` can be neither seen nor scrolled to in `window`; empty when it can. Each widget
// around it must hold it whole, except a scroll area's viewport: there it is enough that the
// area's scroll bars reach every part of the content the field is in.
QString unreachable(const QWidget *field, const QWidget *window)
{
    QRect rect(QPoint(0, 0), field->size());
    for (const QWidget *child = field; child != window; child = child->parentWidget()) {
        const QWidget *parent = child->parentWidget();
        rect.translate(child->pos());
        const auto *area = qobject_cast<const QScrollArea *>(parent->parentWidget());
        if (area && parent == area->viewport()) {
            // A scroll bar turned off keeps its range: only a shown one scrolls.
            const auto reach = [](const QScrollBar *bar) {
                return bar->isVisible() ? bar->maximum() : 0;
            };
            const QSize overflow = child->size() - parent->size();
            if (overflow.width() > reach(area->horizontalScrollBar()) ||
                overflow.height() > reach(area->verticalScrollBar()))
                return QStringLiteral(
                           "%1 is in %2, which scrolls %3×%4 px of its %5×%6 px overflow")
                    .arg(describe(field), describe(area))
                    .arg(reach(area->horizontalScrollBar()))
                    .arg(reach(area->verticalScrollBar()))
                    .arg(std::max(0, overflow.width()))
                    .arg(std::max(0, overflow.height()));
            rect = parent->rect(); // scrolled to, it shows where the viewport is
            continue;
        }
        if (!parent->rect().contains(rect))
            return QStringLiteral("%1 at %2,%3 (%4×%5) is cut by %6 (%7×%8)")
                .arg(describe(field))
                .arg(rect.x())
                .arg(rect.y())
                .arg(rect.width())
                .arg(rect.height())
                .arg(describe(parent))
                .arg(parent->width())
                .arg(parent->height());
    }
    return {};
}

} // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void showsTitleAndListenAddress();
    void demoToggleDrivesTheBridgeAndTheMatrixFills();
    void rateControlChangesDemoTraffic();
    void operatorActionsReachTheEngine();
    void drillOpensTheBreakerAndTheTimelineShowsIt();
    void rateLimitDrillCoolsDownWithoutOpeningTheBreaker();
    void chineseTranslationTranslatesTheConsole();
    void routesPageRendersWithTheDemo();
    void ruleEditorFitsTheSmallestWindow();
    void rateChartKeepsOnlyTheLastMinute();
    void rateChartAxisUsesRoundNumbers_data();
    void rateChartAxisUsesRoundNumbers();

private:
    QString screenshotPath(const QString &fileName) const;

    std::unique_ptr<EngineHost> m_bridge;
    QTemporaryDir m_scratch;
};

void MainWindowTest::initTestCase()
{
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QVERIFY2(!sourceDirectory().isEmpty(), "SWITCHYARD_SOURCE_DIR must name the source tree");
    QVERIFY(m_scratch.isValid());

    const config::LoadResult loaded = config::loadConfigFile(
        sourceDirectory() + QStringLiteral("/resources/demo.yaml"), config::processEnvironment());
    QStringList errors;
    for (const config::ConfigError &error : loaded.errors)
        errors.append(error.toString());
    QVERIFY2(loaded.ok(), qPrintable(errors.join(QLatin1Char('\n'))));
    config::Config demo = *loaded.config;
    demo.server.listenPort = 0; // never a fixed port in tests

    m_bridge = std::make_unique<EngineHost>(demo);
    QString error;
    QVERIFY2(m_bridge->start(&error), qPrintable(error));
    QVERIFY(m_bridge->port() != 0);
}

void MainWindowTest::cleanupTestCase()
{
    m_bridge.reset();
}

QString MainWindowTest::screenshotPath(const QString &fileName) const
{
    return switchyard::testing::screenshotPath(m_scratch.path(), fileName);
}

void MainWindowTest::showsTitleAndListenAddress()
{
    MainWindow window(*m_bridge);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    QCOMPARE(window.windowTitle(), QStringLiteral("Switchyard"));
    const QString address = m_bridge->listenAddress();
    QVERIFY(address.endsWith(QLatin1Char(':') + QString::number(m_bridge->port())));
    auto *listen = window.statusBar()->findChild<QLabel *>(QStringLiteral("listenLabel"));
    QVERIFY(listen);
    QVERIFY2(listen->text().contains(QStringLiteral("Listening on ") + address),
             qPrintable(listen->text()));
    QVERIFY2(listen->text().contains(QStringLiteral("http://%1/v1").arg(address)),
             qPrintable(listen->text()));
}

void MainWindowTest::demoToggleDrivesTheBridgeAndTheMatrixFills()
{
    MainWindow window(*m_bridge);
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    auto *toggle = window.findChild<QPushButton *>(QStringLiteral("demoTrafficToggle"));
    auto *rate = window.findChild<QSpinBox *>(QStringLiteral("demoRateSpinBox"));
    auto *matrix = window.findChild<QTableView *>(QStringLiteral("healthMatrix"));
    QVERIFY(toggle && rate && matrix);
    QCOMPARE(toggle->text(), QStringLiteral("Demo traffic"));
    QVERIFY(toggle->isCheckable());
    QVERIFY(!toggle->isChecked());
    QCOMPARE(rate->value(), 10);
    QCOMPARE(rate->minimum(), 1);
    QCOMPARE(rate->maximum(), 200);
    const HealthMatrixModel &model = *window.overviewPage()->healthMatrixModel();
    QTRY_COMPARE(model.rowCount(), 3); // the demo config's three simulated providers

    QTest::mouseClick(toggle, Qt::LeftButton);
    QVERIFY(toggle->isChecked());
    QTRY_VERIFY_WITH_TIMEOUT(m_bridge->lastSnapshot().demoTrafficRunning, trafficTimeoutMs);
    QCOMPARE(m_bridge->lastSnapshot().demoRequestsPerSecond, 10.0);
    QTRY_VERIFY_WITH_TIMEOUT(requestsShown(model) > 0, trafficTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(everyProviderHasLatency(model), trafficTimeoutMs);

    QTest::mouseClick(toggle, Qt::LeftButton);
    QVERIFY(!toggle->isChecked());
    QTRY_VERIFY_WITH_TIMEOUT(!m_bridge->lastSnapshot().demoTrafficRunning, trafficTimeoutMs);
}

void MainWindowTest::rateControlChangesDemoTraffic()
{
    MainWindow window(*m_bridge);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto *toggle = window.findChild<QPushButton *>(QStringLiteral("demoTrafficToggle"));
    auto *rate = window.findChild<QSpinBox *>(QStringLiteral("demoRateSpinBox"));
    QVERIFY(toggle && rate);

    rate->setValue(25);
    QTest::mouseClick(toggle, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(m_bridge->lastSnapshot().demoTrafficRunning, trafficTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(m_bridge->lastSnapshot().demoRequestsPerSecond, 25.0,
                              trafficTimeoutMs);

    rate->setValue(40); // while running, a new rate applies at once
    QTRY_COMPARE_WITH_TIMEOUT(m_bridge->lastSnapshot().demoRequestsPerSecond, 40.0,
                              trafficTimeoutMs);

    QTest::mouseClick(toggle, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!m_bridge->lastSnapshot().demoTrafficRunning, trafficTimeoutMs);
}

void MainWindowTest::operatorActionsReachTheEngine()
{
    MainWindow window(*m_bridge);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const HealthMatrixModel &model = *window.overviewPage()->healthMatrixModel();
    QTRY_COMPARE(model.rowCount(), 3);
    const QString id = QStringLiteral("sim-deep");

    QPushButton *disable = window.overviewPage()->actionButton(ProviderAction::Disable);
    QPushButton *trip = window.overviewPage()->actionButton(ProviderAction::Trip);
    QPushButton *reset = window.overviewPage()->actionButton(ProviderAction::Reset);
    QVERIFY(disable && trip && reset);
    QVERIFY(!trip->isEnabled()); // nothing selected yet
    QVERIFY(window.overviewPage()->selectProvider(id));
    QVERIFY(trip->isEnabled());

    trip->click();
    QTRY_COMPARE_WITH_TIMEOUT(shownStatus(model, id), HealthMatrixModel::ProviderStatus::Open,
                              trafficTimeoutMs);
    QVERIFY(shownProvider(model, id).msUntilHalfOpen > 0);
    const BreakerEventsModel &events = *window.overviewPage()->breakerEventsModel();
    QTRY_VERIFY(events.rowCount() > 0);
    QCOMPARE(events.index(0, BreakerEventsModel::ProviderColumn).data().toString(), id);
    QCOMPARE(events.index(0, BreakerEventsModel::ChangeColumn).data().toString(),
             QStringLiteral("Closed → Open"));
    QTRY_VERIFY(!trip->isEnabled()); // already open

    reset->click();
    QTRY_COMPARE_WITH_TIMEOUT(shownProvider(model, id).breaker, BreakerState::Closed,
                              trafficTimeoutMs);

    QCOMPARE(disable->text(), QStringLiteral("Disable"));
    disable->click();
    QTRY_COMPARE_WITH_TIMEOUT(shownStatus(model, id), HealthMatrixModel::ProviderStatus::Disabled,
                              trafficTimeoutMs);
    QTRY_COMPARE(disable->text(), QStringLiteral("Enable"));
    disable->click();
    QTRY_COMPARE_WITH_TIMEOUT(shownProvider(model, id).operatorState, OperatorState::Enabled,
                              trafficTimeoutMs);
    reset->click(); // leave no ramp behind for the tests after this one
}

void MainWindowTest::drillOpensTheBreakerAndTheTimelineShowsIt()
{
    MainWindow window(*m_bridge);
    window.resize(1280, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const HealthMatrixModel &model = *window.overviewPage()->healthMatrixModel();
    QTRY_COMPARE(model.rowCount(), 3);
    DrillsPanel &drills = *window.overviewPage()->drillsPanel();
    QTRY_COMPARE(drills.rowCount(), 3);
    auto *toggle = window.findChild<QPushButton *>(QStringLiteral("demoTrafficToggle"));
    auto *rate = window.findChild<QSpinBox *>(QStringLiteral("demoRateSpinBox"));
    QVERIFY(toggle && rate);
    rate->setValue(25);
    QTest::mouseClick(toggle, Qt::LeftButton);
    if (updatingScreenshots())
        QTest::qWait(20000); // only for the picture: some rate history before the drill

    int row = 0;
    while (drills.providerOf(row) != QStringLiteral("sim-swift"))
        ++row;
    QComboBox *mode = drills.modeBox(row);
    const int serverError =
        mode->findText(DrillsPanel::modeName(SimulatorKnobs::Mode::ServerError));
    mode->setCurrentIndex(serverError);
    Q_EMIT mode->activated(serverError);

    // Demo traffic reaches sim-swift; its 500s open the breaker, the timeline records it.
    QTRY_COMPARE_WITH_TIMEOUT(shownProvider(model, QStringLiteral("sim-swift")).breaker,
                              BreakerState::Open, trafficTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(shownProvider(model, QStringLiteral("sim-swift")).simulatorMode,
                              SimulatorKnobs::Mode::ServerError, trafficTimeoutMs);
    const BreakerEventsModel &events = *window.overviewPage()->breakerEventsModel();
    QTRY_VERIFY(events.rowCount() > 0);
    QCOMPARE(events.index(0, BreakerEventsModel::ProviderColumn).data().toString(),
             QStringLiteral("sim-swift"));

    if (updatingScreenshots())
        QTest::qWait(8000); // let the chart and counters show the failover
    const QPixmap shot = window.grab();
    QCOMPARE(shot.size(), QSize(1280, 900));
    const QString path = screenshotPath(QStringLiteral("console.png"));
    QVERIFY2(shot.save(path), qPrintable(path));
    qInfo("console screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));

    auto *restore = drills.findChild<QPushButton *>(QStringLiteral("restoreDrills"));
    QVERIFY(restore);
    restore->click();
    QTRY_COMPARE_WITH_TIMEOUT(shownProvider(model, QStringLiteral("sim-swift")).simulatorMode,
                              SimulatorKnobs::Mode::Ok, trafficTimeoutMs);
    QVERIFY(window.overviewPage()->selectProvider(QStringLiteral("sim-swift")));
    window.overviewPage()->actionButton(ProviderAction::Reset)->click();
    QTRY_COMPARE_WITH_TIMEOUT(shownProvider(model, QStringLiteral("sim-swift")).breaker,
                              BreakerState::Closed, trafficTimeoutMs);
    QTest::mouseClick(toggle, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!m_bridge->lastSnapshot().demoTrafficRunning, trafficTimeoutMs);
}

void MainWindowTest::rateLimitDrillCoolsDownWithoutOpeningTheBreaker()
{
    MainWindow window(*m_bridge);
    window.resize(1280, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    const HealthMatrixModel &model = *window.overviewPage()->healthMatrixModel();
    DrillsPanel &drills = *window.overviewPage()->drillsPanel();
    QTRY_COMPARE(drills.rowCount(), 3);
    auto *toggle = window.findChild<QPushButton *>(QStringLiteral("demoTrafficToggle"));
    QVERIFY(toggle);
    QTest::mouseClick(toggle, Qt::LeftButton);
    int row = 0;
    while (drills.providerOf(row) != QStringLiteral("sim-swift"))
        ++row;
    QComboBox *mode = drills.modeBox(row);
    const int rateLimited =
        mode->findText(DrillsPanel::modeName(SimulatorKnobs::Mode::RateLimited));
    mode->setCurrentIndex(rateLimited);
    Q_EMIT mode->activated(rateLimited);

    // Its 429s cool it down, one Retry-After at a time; they never open its breaker.
    QTRY_COMPARE_WITH_TIMEOUT(shownStatus(model, QStringLiteral("sim-swift")),
                              HealthMatrixModel::ProviderStatus::CoolingDown, trafficTimeoutMs);
    const ProviderHealth swift = shownProvider(model, QStringLiteral("sim-swift"));
    QCOMPARE(swift.breaker, BreakerState::Closed);
    QVERIFY(swift.rateLimited > 0); // counted apart: a 429 is not an error
    if (updatingScreenshots()) {
        QTest::qWait(8000); // only for the picture: traffic moving over to the other two
        QTRY_COMPARE_WITH_TIMEOUT(shownStatus(model, QStringLiteral("sim-swift")),
                                  HealthMatrixModel::ProviderStatus::CoolingDown, trafficTimeoutMs);
    }
    const QString path = screenshotPath(QStringLiteral("cooling_down.png"));
    QVERIFY2(window.grab().save(path), qPrintable(path));

    auto *restore = drills.findChild<QPushButton *>(QStringLiteral("restoreDrills"));
    QVERIFY(restore);
    restore->click();
    QTRY_COMPARE_WITH_TIMEOUT(shownProvider(model, QStringLiteral("sim-swift")).simulatorMode,
                              SimulatorKnobs::Mode::Ok, trafficTimeoutMs);
    QTest::mouseClick(toggle, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!m_bridge->lastSnapshot().demoTrafficRunning, trafficTimeoutMs);
}

void MainWindowTest::chineseTranslationTranslatesTheConsole()
{
    QTranslator translator;
    QVERIFY(switchyard::ui::loadSwitchyardTranslation(
        translator, QLocale(QLocale::Chinese, QLocale::SimplifiedChineseScript, QLocale::China)));
    QCOMPARE(translator.translate("switchyard::ui::MainWindow", "Demo traffic"),
             QStringLiteral("演示流量"));

    MainWindow window(*m_bridge);
    window.resize(1280, 800);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto *toggle = window.findChild<QPushButton *>(QStringLiteral("demoTrafficToggle"));
    QVERIFY(toggle);
    QCOMPARE(toggle->text(), QStringLiteral("Demo traffic"));

    // Installing the translator at run time retranslates the open window.
    QVERIFY(QCoreApplication::installTranslator(&translator));
    QTRY_COMPARE(toggle->text(), QStringLiteral("演示流量"));
    QCOMPARE(window.windowTitle(), QStringLiteral("Switchyard"));
    QCOMPARE(window.overviewPage()->healthMatrixModel()->headerData(
                 HealthMatrixModel::ProviderColumn, Qt::Horizontal),
             QVariant(QStringLiteral("提供商")));
    // Taller CJK text relayouts the window through posted events; let that finish before the
    // picture, so the status bar is not caught at its old height.
    auto *listen = window.statusBar()->findChild<QLabel *>(QStringLiteral("listenLabel"));
    QVERIFY(listen);
    QTRY_VERIFY(listen->height() >= listen->sizeHint().height());
    QVERIFY(window.grab().save(m_scratch.filePath(QStringLiteral("console_zh_CN.png"))));

    QVERIFY(QCoreApplication::removeTranslator(&translator));
    QTRY_COMPARE(toggle->text(), QStringLiteral("Demo traffic"));
}

void MainWindowTest::routesPageRendersWithTheDemo()
{
    MainWindow window(*m_bridge);
    window.resize(1480, 900);
    auto *tabs = window.findChild<QTabWidget *>(QStringLiteral("consoleTabs"));
    QVERIFY(tabs);
    tabs->setCurrentWidget(window.routesView());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto *toggle = window.findChild<QPushButton *>(QStringLiteral("demoTrafficToggle"));
    QVERIFY(toggle);
    QTest::mouseClick(toggle, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(m_bridge->lastSnapshot().demoTrafficRunning, trafficTimeoutMs);

    // An agent registers itself, as in-house agents do, and shows among the registered agents.
    switchyard::testing::TestClient agent(m_bridge->port());
    agent.post("/admin/v1/agents",
               R"({"id":"trip-planner","base_url":"http://127.0.0.1:9/v1","capacity":4,)"
               R"("capabilities":["travel/plan/trip","travel/book/flight"]})");
    QVERIFY(agent.waitForFinished());
    QCOMPARE(agent.status(), 201);

    // The demo's canary rule, with a nested group added to its condition, and a dry run of a
    // demo request against the live and the edited rules.
    RoutesView &view = *window.routesView();
    QTRY_COMPARE_WITH_TIMEOUT(view.agentsPanel()->model()->rowCount(), 1, trafficTimeoutMs);
    auto *rules = view.findChild<QTableView *>(QStringLiteral("routeRules"));
    QVERIFY(rules);
    rules->selectRow(0);
    QCOMPARE(view.findChild<QLineEdit *>(QStringLiteral("ruleNameEdit"))->text(),
             QStringLiteral("chat-canary"));
    view.findChild<QPushButton *>(QStringLiteral("addGroupButton"))->click();
    view.findChild<QComboBox *>(QStringLiteral("conditionField1.0"))
        ->setCurrentText(QStringLiteral("tenant"));
    view.findChild<QLineEdit *>(QStringLiteral("conditionValue1.0"))
        ->setText(QStringLiteral("acme"));
    view.findChild<QPushButton *>(QStringLiteral("addCondition1"))->click();
    view.findChild<QComboBox *>(QStringLiteral("conditionField1.1"))
        ->setCurrentText(QStringLiteral("header.x-team"));
    view.findChild<QLineEdit *>(QStringLiteral("conditionValue1.1"))
        ->setText(QStringLiteral("search"));
    // A demo-chat request from no particular tenant or team: only the live rules still take it.
    auto *body = view.findChild<QPlainTextEdit *>(QStringLiteral("dryRunBody"));
    QVERIFY(body);
    body->setPlainText(
        body->toPlainText().replace(QStringLiteral("demo-light"), QStringLiteral("demo-chat")));
    view.findChild<QPushButton *>(QStringLiteral("dryRunButton"))->click();
    auto *edited = view.findChild<QTextBrowser *>(QStringLiteral("dryRunEditedResult"));
    QVERIFY(edited);
    auto *live = view.findChild<QTextBrowser *>(QStringLiteral("dryRunLiveResult"));
    QTRY_VERIFY_WITH_TIMEOUT(live->toPlainText().startsWith(QStringLiteral("Rule: chat-canary\n")),
                             trafficTimeoutMs);
    QTRY_VERIFY_WITH_TIMEOUT(
        edited->toPlainText().startsWith(QStringLiteral("Rule: none matched\n")), trafficTimeoutMs);
    if (updatingScreenshots())
        QTest::qWait(3000); // some demo traffic in the canary's live weights

    const QPixmap shot = window.grab();
    QCOMPARE(shot.size(), QSize(1480, 900));
    const QString path = screenshotPath(QStringLiteral("routes.png"));
    QVERIFY2(shot.save(path), qPrintable(path));
    qInfo("routes screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));

    QTest::mouseClick(toggle, Qt::LeftButton);
    QTRY_VERIFY_WITH_TIMEOUT(!m_bridge->lastSnapshot().demoTrafficRunning, trafficTimeoutMs);
}

void MainWindowTest::ruleEditorFitsTheSmallestWindow()
{
    // The smallest window the console is laid out for.
    MainWindow window(*m_bridge);
    window.resize(1280, 900);
    auto *tabs = window.findChild<QTabWidget *>(QStringLiteral("consoleTabs"));
    QVERIFY(tabs);
    tabs->setCurrentWidget(window.routesView());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    RoutesView &view = *window.routesView();
    auto *rules = view.findChild<QTableView *>(QStringLiteral("routeRules"));
    auto *editor = view.findChild<QWidget *>(QStringLiteral("routeEditorCard"));
    QVERIFY(rules && editor);
    QCOMPARE(rules->model()->rowCount(), 2); // the demo's rules: chat-canary and gearbox

    // Every rule of the demo in the editor, its longest (a condition and a two-branch canary
    // split) among them: each field can be seen or scrolled to.
    for (int row = 0; row < rules->model()->rowCount(); ++row) {
        rules->selectRow(row);
        QCoreApplication::processEvents();
        const QString name = view.findChild<QLineEdit *>(QStringLiteral("ruleNameEdit"))->text();
        QCOMPARE(name, rules->model()->index(row, RouteRulesModel::NameColumn).data().toString());
        int fields = 0;
        for (const QWidget *field : editor->findChildren<QWidget *>()) {
            const bool isField = qobject_cast<const QLineEdit *>(field) ||
                                 qobject_cast<const QComboBox *>(field) ||
                                 qobject_cast<const QAbstractSpinBox *>(field);
            if (!isField || !field->isVisibleTo(&window))
                continue;
            ++fields;
            const QString why = unreachable(field, &window);
            QVERIFY2(why.isEmpty(), qPrintable(name + QStringLiteral(": ") + why));
        }
        QVERIFY2(fields >= 5, qPrintable(name)); // name, priority, a condition's three
        // At this size the demo's rules fit the card: nothing to scroll sideways.
        auto *form = editor->findChild<QScrollArea *>();
        QVERIFY(form);
        QVERIFY2(!form->horizontalScrollBar()->isVisible(), qPrintable(name));
    }

    // The rule list's conditions are short enough to read whole.
    const QAbstractItemView *list = rules; // sizeHintForColumn is public here
    QVERIFY2(rules->columnWidth(RouteRulesModel::ConditionColumn) >=
                 list->sizeHintForColumn(RouteRulesModel::ConditionColumn),
             qPrintable(QStringLiteral("When column %1 px, its text %2 px")
                            .arg(rules->columnWidth(RouteRulesModel::ConditionColumn))
                            .arg(list->sizeHintForColumn(RouteRulesModel::ConditionColumn))));
}

void MainWindowTest::rateChartKeepsOnlyTheLastMinute()
{
    using switchyard::ui::RequestRateChart;
    RequestRateChart chart;
    // Two minutes at the engine's 10 Hz: only the last minute (and one point before it) stays.
    for (int tick = 0; tick <= 1200; ++tick)
        chart.addSample(tick / 10.0, 5.0);
    QCOMPARE(chart.sampleCount(), qsizetype(601));

    // A clock that stops cannot grow the buffer past its cap.
    for (int burst = 0; burst < 2000; ++burst)
        chart.addSample(120.0, 5.0);
    QCOMPARE(chart.sampleCount(), RequestRateChart::maxSamples);
}

void MainWindowTest::rateChartAxisUsesRoundNumbers_data()
{
    QTest::addColumn<double>("peak");
    QTest::addColumn<double>("axisMaximum");
    QTest::newRow("idle") << 0.0 << 4.0;
    QTest::newRow("demo default") << 10.0 << 20.0;
    QTest::newRow("above a step") << 25.0 << 40.0;
    QTest::newRow("demo maximum") << 200.0 << 400.0;
    QTest::newRow("busy gateway") << 1234.0 << 2000.0;
}

void MainWindowTest::rateChartAxisUsesRoundNumbers()
{
    QFETCH(double, peak);
    QFETCH(double, axisMaximum);
    switchyard::ui::RequestRateChart chart;
    chart.addSample(0.0, peak);
    QCOMPARE(chart.axisMaximum(), axisMaximum);
}

QTEST_MAIN(MainWindowTest)
#include "tst_main_window.moc"
