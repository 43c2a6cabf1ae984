// The Fleet tab: the fleet's nodes and each one's view of the endpoints from the engine's
// snapshots, under QAbstractItemModelTester; the single-node state; the link-down line; the
// Chinese translation; and the screenshot in docs/screenshots.
#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/fleet/fleet_models.h"
#include "ui/fleet/fleet_page.h"
#include "ui/overview/health_matrix_model.h"
#include "ui/overview/overview_page.h"
#include "ui/shell/main_window.h"
#include "ui/shell/translation.h"

#include <QAbstractItemModelTester>
#include <QDateTime>
#include <QLabel>
#include <QScrollBar>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTranslator>

using namespace Qt::StringLiterals;
using namespace switchyard;
using switchyard::testing::FakeEngineBridge;
using switchyard::ui::FleetEndpointsModel;
using switchyard::ui::FleetNodesModel;

namespace {

constexpr qint64 kNowMs = 1'796'300'000'000; // 2026-12-03, about 12:00 UTC

EndpointSummary endpoint(const QString &id, ProviderState state,
                         BreakerState breaker = BreakerState::Closed)
{
    EndpointSummary summary;
    summary.id = id;
    summary.state = state;
    summary.breaker = breaker;
    if (breaker == BreakerState::Open)
        summary.breakerReason = u"5 consecutive call failures"_s;
    return summary;
}

FleetMemberState member(const QString &name, bool self, double rate)
{
    FleetMemberState node;
    node.node = name;
    node.address = u"10.0.0.%1:8080"_s.arg(name.back().digitValue() + 5);
    node.version = u"0.1.0"_s;
    node.configVersion = 7;
    node.inFlight = 3;
    node.requestsPerSecond = rate;
    node.lastSeenMs = self ? kNowMs : kNowMs - 2'000;
    node.self = self;
    node.agents = 1;
    node.endpoints = {endpoint(u"cloud-main"_s, ProviderState::Up),
                      endpoint(u"local-vllm"_s, ProviderState::Up)};
    return node;
}

EngineSnapshot fleetSnapshot()
{
    EngineSnapshot snapshot;
    snapshot.listenAddress = u"10.0.0.6:8080"_s;
    snapshot.fleet = {true, u"prod"_s, u"gw-1"_s, u"redis://10.0.0.5:6379/0"_s, true, 0, {}, 3, {}};
    snapshot.fleet.members = {member(u"gw-1"_s, true, 41.5), member(u"gw-2"_s, false, 38.0),
                              member(u"gw-3"_s, false, 12.2)};
    // gw-3 cannot reach the cloud provider: its breaker is open there, and only there.
    snapshot.fleet.members[2].endpoints[0] =
        endpoint(u"cloud-main"_s, ProviderState::Down, BreakerState::Open);
    return snapshot;
}

QString cell(const QAbstractItemModel &model, int row, int column, int role = Qt::DisplayRole)
{
    return model.data(model.index(row, column), role).toString();
}

} // namespace

class FleetPageTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void nodesAndEachNodesViewOfTheEndpoints();
    void aSingleNodeSaysHowToMakeAFleet();
    void aLinkDownIsSaidInRed();
    void theTabShowsTheFleet();
    void chineseTranslationTranslatesThePage();
};

void FleetPageTest::nodesAndEachNodesViewOfTheEndpoints()
{
    ui::FleetPage page;
    QAbstractItemModelTester nodesTester(page.nodesModel(),
                                         QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester endpointsTester(
        page.endpointsModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    page.applySnapshot(fleetSnapshot(), kNowMs);

    const FleetNodesModel &nodes = *page.nodesModel();
    QCOMPARE(nodes.rowCount(), 3);
    QCOMPARE(cell(nodes, 0, FleetNodesModel::NodeColumn), u"gw-1 (this node)"_s);
    QCOMPARE(cell(nodes, 0, FleetNodesModel::SeenColumn), u"now"_s);
    QCOMPARE(cell(nodes, 1, FleetNodesModel::SeenColumn), u"2 s ago"_s);
    QCOMPARE(cell(nodes, 1, FleetNodesModel::RateColumn), u"38.0"_s);
    QCOMPARE(cell(nodes, 1, FleetNodesModel::EndpointsColumn), u"2 of 2 up"_s);
    QCOMPARE(cell(nodes, 2, FleetNodesModel::EndpointsColumn), u"1 of 2 up"_s);
    QCOMPARE(cell(nodes, 2, FleetNodesModel::EndpointsColumn, Qt::ToolTipRole),
             u"cloud-main: open"_s);

    const FleetEndpointsModel &endpoints = *page.endpointsModel();
    QCOMPARE(endpoints.rowCount(), 2);
    QCOMPARE(endpoints.columnCount(), 4); // the endpoint, then one column per node
    QCOMPARE(endpoints.headerData(0, Qt::Horizontal).toString(), u"Endpoint"_s);
    QCOMPARE(endpoints.headerData(1, Qt::Horizontal).toString(), u"gw-1 (this node)"_s);
    QCOMPARE(endpoints.headerData(3, Qt::Horizontal).toString(), u"gw-3"_s);
    QCOMPARE(cell(endpoints, 0, FleetEndpointsModel::EndpointColumn), u"cloud-main"_s);
    QCOMPARE(cell(endpoints, 0, 1), u"up"_s);
    QCOMPARE(cell(endpoints, 0, 3), u"open"_s);
    QCOMPARE(cell(endpoints, 0, 3, Qt::ToolTipRole), u"5 consecutive call failures"_s);
    QCOMPARE(endpoints.data(endpoints.index(0, 3), FleetEndpointsModel::ColorRole).value<QColor>(),
             QColor(0xb9, 0x1c, 0x1c));

    // gw-2 leaves; gw-3's breaker closes: rows merge, columns follow the nodes.
    EngineSnapshot later = fleetSnapshot();
    later.fleet.members.removeAt(1);
    later.fleet.members[1].endpoints[0] = endpoint(u"cloud-main"_s, ProviderState::Up);
    page.applySnapshot(later, kNowMs + 1'000);
    QCOMPARE(nodes.rowCount(), 2);
    QCOMPARE(cell(nodes, 1, FleetNodesModel::NodeColumn), u"gw-3"_s);
    QCOMPARE(cell(nodes, 1, FleetNodesModel::SeenColumn), u"3 s ago"_s);
    QCOMPARE(endpoints.columnCount(), 3);
    QCOMPARE(cell(endpoints, 0, 2), u"up"_s);
}

void FleetPageTest::aSingleNodeSaysHowToMakeAFleet()
{
    ui::FleetPage page;
    page.resize(1000, 600);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.applySnapshot(EngineSnapshot{}, kNowMs);
    auto *single = page.findChild<QLabel *>(u"fleetSingleHint"_s);
    auto *table = page.findChild<QTableView *>(u"fleetNodesTable"_s);
    QVERIFY(single && table);
    QVERIFY(single->isVisible());
    QVERIFY(single->text().contains(u"fleet section"_s));
    QVERIFY(!table->isVisible());

    page.applySnapshot(fleetSnapshot(), kNowMs);
    QVERIFY(!single->isVisible());
    QVERIFY(table->isVisible());
    QCOMPARE(page.linkLabel()->text(), u"Redis redis://10.0.0.5:6379/0 · 3 live node(s)"_s);
}

void FleetPageTest::aLinkDownIsSaidInRed()
{
    ui::FleetPage page;
    EngineSnapshot snapshot = fleetSnapshot();
    const QDateTime down = QDateTime::fromMSecsSinceEpoch(kNowMs - 90'000);
    snapshot.fleet.linkUp = false;
    snapshot.fleet.linkDownSinceMs = down.toMSecsSinceEpoch();
    snapshot.fleet.problem = u"Redis did not answer within 500 ms"_s;
    page.applySnapshot(snapshot, kNowMs);
    QVERIFY2(page.linkLabel()->text().startsWith(
                 u"Redis redis://10.0.0.5:6379/0 unreachable since %1: Redis did not answer"_s.arg(
                     down.toString(u"HH:mm:ss"_s))),
             qPrintable(page.linkLabel()->text()));
    // resources/console.qss colours a hint of tone "bad" red.
    QCOMPARE(page.linkLabel()->property("tone").toString(), u"bad"_s);
    QCOMPARE(page.nodesModel()->rowCount(), 3); // as last seen
}

void FleetPageTest::theTabShowsTheFleet()
{
    FakeEngineBridge bridge;
    ui::MainWindow window(bridge);
    window.resize(1280, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    auto *tabs = window.findChild<QTabWidget *>(u"consoleTabs"_s);
    QVERIFY(tabs);
    tabs->setCurrentWidget(window.fleetPage());
    QCOMPARE(tabs->tabText(tabs->currentIndex()), u"Fleet"_s);
    // Alone, the Overview's health matrix has no column for other nodes.
    auto *matrix = window.overviewPage()->findChild<QTableView *>(u"healthMatrix"_s);
    QVERIFY(matrix);
    QVERIFY(matrix->isColumnHidden(ui::HealthMatrixModel::OtherNodesColumn));
    EngineSnapshot snapshot = fleetSnapshot();
    // The members' "last seen" is against the real clock the window uses.
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    for (FleetMemberState &node : snapshot.fleet.members)
        node.lastSeenMs = now - (kNowMs - node.lastSeenMs);
    bridge.publish(snapshot);
    QCOMPARE(window.fleetPage()->nodesModel()->rowCount(), 3);
    QCoreApplication::processEvents();
    QTemporaryDir scratch;
    QVERIFY(window.grab().save(
        switchyard::testing::screenshotPath(scratch.path(), u"console_fleet.png"_s)));

    // The Overview's health matrix gains a column with the other nodes' view of each provider.
    for (const QString &id : {u"cloud-main"_s, u"local-vllm"_s}) {
        ProviderHealth provider;
        provider.id = id;
        provider.kind = u"openai"_s;
        provider.models = {u"gpt-4o"_s};
        provider.requests = 1'200;
        provider.p50LatencyMs = 420.0;
        provider.p95LatencyMs = 980.0;
        snapshot.providers.append(provider);
    }
    tabs->setCurrentWidget(window.overviewPage());
    bridge.publish(snapshot);
    QVERIFY(!matrix->isColumnHidden(ui::HealthMatrixModel::OtherNodesColumn));
    const auto otherNodes = [&](const QString &id) {
        for (int row = 0; row < matrix->model()->rowCount(); ++row) {
            const QModelIndex index =
                matrix->model()->index(row, ui::HealthMatrixModel::OtherNodesColumn);
            if (index.data(ui::HealthMatrixModel::ProviderIdRole).toString() == id)
                return index.data().toString();
        }
        return QString();
    };
    QCOMPARE(otherNodes(u"cloud-main"_s), u"1 of 2 up"_s);
    QCOMPARE(otherNodes(u"local-vllm"_s), u"2 of 2 up"_s);
    QCoreApplication::processEvents();
    // The extra column still fits the window: no column is pushed out of view.
    QVERIFY(!matrix->horizontalScrollBar()->isVisible());
    QVERIFY(window.grab().save(
        switchyard::testing::screenshotPath(scratch.path(), u"console_overview_fleet.png"_s)));
}

void FleetPageTest::chineseTranslationTranslatesThePage()
{
    QTranslator translator;
    QVERIFY(ui::loadSwitchyardTranslation(
        translator, QLocale(QLocale::Chinese, QLocale::SimplifiedChineseScript, QLocale::China)));
    ui::FleetPage page;
    page.applySnapshot(fleetSnapshot(), kNowMs);
    QVERIFY(QCoreApplication::installTranslator(&translator));
    QTRY_COMPARE(
        page.nodesModel()->headerData(FleetNodesModel::NodeColumn, Qt::Horizontal).toString(),
        u"节点"_s);
    QCOMPARE(cell(*page.endpointsModel(), 0, 3), u"断开"_s);
    QVERIFY(QCoreApplication::removeTranslator(&translator));
}

QTEST_MAIN(FleetPageTest)
#include "tst_fleet_page.moc"
