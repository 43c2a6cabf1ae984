#include "ui/overview/health_matrix_model.h"

#include <QAbstractItemModelTester>
#include <QColor>
#include <QLocale>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>
#include <memory>

using switchyard::BreakerState;
using switchyard::EndpointSummary;
using switchyard::EngineSnapshot;
using switchyard::FleetMemberState;
using switchyard::OperatorState;
using switchyard::ProviderHealth;
using switchyard::ProviderState;
using switchyard::ui::HealthMatrixModel;

namespace {

ProviderHealth provider(const QString &id, quint64 requests = 0)
{
    ProviderHealth health;
    health.id = id;
    health.kind = QStringLiteral("simulated");
    health.models = {QStringLiteral("demo-light")};
    health.requests = requests;
    return health;
}

EngineSnapshot snapshotOf(const QList<ProviderHealth> &providers)
{
    EngineSnapshot snapshot;
    snapshot.listenAddress = QStringLiteral("127.0.0.1:8080");
    snapshot.providers = providers;
    return snapshot;
}

// A model watched by QAbstractItemModelTester in Fatal mode for the whole test function, so any
// broken invariant during a merge aborts with the tester's message.
struct TestedModel {
    HealthMatrixModel model;
    QAbstractItemModelTester tester{&model, QAbstractItemModelTester::FailureReportingMode::Fatal};

    QString text(int row, int column) const
    {
        return model.index(row, column).data(Qt::DisplayRole).toString();
    }
    QStringList ids() const
    {
        QStringList result;
        for (int row = 0; row < model.rowCount(); ++row)
            result.append(text(row, HealthMatrixModel::ProviderColumn));
        return result;
    }
    int rowOf(const QString &id) const { return int(ids().indexOf(id)); }
};

} // namespace

class HealthMatrixModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void formatsLatency_data();
    void formatsLatency();
    void showsEveryColumnOfAProvider();
    void headersAreNamedAndAligned();
    void colorsAndExplainsTheState_data();
    void colorsAndExplainsTheState();
    void sortRoleCarriesRawValues();
    void firstSnapshotInsertsRows();
    void newProviderIsInsertedAtTheEnd();
    void valueChangeSignalsOnlyThatRow();
    void identicalSnapshotSignalsNothing();
    void vanishedProviderIsRemoved();
    void reorderedSnapshotKeepsRowsInPlace();
    void mixedUpdateAddsRemovesAndChanges();
    void proxySortsOnRawLatency();
    void otherNodesShowTheirOwnView();
};

void HealthMatrixModelTest::initTestCase()
{
    // Fixed so the expected texts do not depend on the machine's locale.
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
}

void HealthMatrixModelTest::formatsLatency_data()
{
    QTest::addColumn<double>("milliseconds");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no sample") << -1.0 << QStringLiteral("\u2014");
    QTest::newRow("zero") << 0.0 << QStringLiteral("0 ms");
    QTest::newRow("whole milliseconds") << 84.0 << QStringLiteral("84 ms");
    QTest::newRow("rounded down") << 84.4 << QStringLiteral("84 ms");
    QTest::newRow("just under a second") << 999.4 << QStringLiteral("999 ms");
    QTest::newRow("rounds up to a second") << 999.6 << QStringLiteral("1.0 s");
    QTest::newRow("seconds") << 1200.0 << QStringLiteral("1.2 s");
    QTest::newRow("seconds rounded") << 1249.0 << QStringLiteral("1.2 s");
    QTest::newRow("tens of seconds") << 12345.0 << QStringLiteral("12.3 s");
}

void HealthMatrixModelTest::formatsLatency()
{
    QFETCH(double, milliseconds);
    QFETCH(QString, expected);
    TestedModel tested;
    ProviderHealth health = provider(QStringLiteral("p"));
    health.p50LatencyMs = milliseconds;
    tested.model.applySnapshot(snapshotOf({health}));
    QCOMPARE(tested.text(0, HealthMatrixModel::LatencyP50Column), expected);
    QCOMPARE(HealthMatrixModel::formatLatency(milliseconds), expected);
}

void HealthMatrixModelTest::showsEveryColumnOfAProvider()
{
    TestedModel tested;
    ProviderHealth health = provider(QStringLiteral("sim-swift"), 1234);
    health.models = {QStringLiteral("demo-light"), QStringLiteral("demo-chat")};
    health.inFlight = 3;
    health.errors = 12;
    health.errorRatePercent = 1.5;
    health.p50LatencyMs = 84.0;
    health.p95LatencyMs = 1200.0;
    health.p50TimeToFirstTokenMs = -1.0;
    tested.model.applySnapshot(snapshotOf({health}));

    QCOMPARE(tested.model.rowCount(), 1);
    QCOMPARE(tested.model.columnCount(), int(HealthMatrixModel::ColumnCount));
    QCOMPARE(tested.text(0, HealthMatrixModel::ProviderColumn), QStringLiteral("sim-swift"));
    QCOMPARE(tested.text(0, HealthMatrixModel::StateColumn), QStringLiteral("Closed"));
    QCOMPARE(tested.text(0, HealthMatrixModel::ReasonColumn), QStringLiteral("answering normally"));
    QCOMPARE(tested.text(0, HealthMatrixModel::InFlightColumn), QStringLiteral("3"));
    QCOMPARE(tested.text(0, HealthMatrixModel::RequestsColumn), QStringLiteral("1,234"));
    // Both figures since start (12 of 1,234 calls); the recent rate is in the tooltip.
    QCOMPARE(tested.text(0, HealthMatrixModel::ErrorsColumn), QStringLiteral("12 (1.0%)"));
    QCOMPARE(tested.text(0, HealthMatrixModel::LatencyP50Column), QStringLiteral("84 ms"));
    QCOMPARE(tested.text(0, HealthMatrixModel::LatencyP95Column), QStringLiteral("1.2 s"));
    QCOMPARE(tested.text(0, HealthMatrixModel::TimeToFirstTokenP50Column),
             QStringLiteral("\u2014"));
    QCOMPARE(tested.text(0, HealthMatrixModel::ModelsColumn),
             QStringLiteral("demo-light, demo-chat"));

    const auto alignment = [&](int column) {
        return Qt::Alignment(tested.model.index(0, column).data(Qt::TextAlignmentRole).toInt());
    };
    QCOMPARE(alignment(HealthMatrixModel::RequestsColumn), Qt::AlignRight | Qt::AlignVCenter);
    QCOMPARE(alignment(HealthMatrixModel::LatencyP95Column), Qt::AlignRight | Qt::AlignVCenter);
    QCOMPARE(alignment(HealthMatrixModel::ProviderColumn), Qt::AlignLeft | Qt::AlignVCenter);
    QCOMPARE(
        tested.model.index(0, HealthMatrixModel::ErrorsColumn).data(Qt::ToolTipRole).toString(),
        QStringLiteral("12 of 1,234 calls failed since start (1.0%); 1.5% of recent calls failed"));
}

void HealthMatrixModelTest::headersAreNamedAndAligned()
{
    TestedModel tested;
    const QStringList expected{
        QStringLiteral("Provider"),    QStringLiteral("Breaker"),  QStringLiteral("In flight"),
        QStringLiteral("Requests"),    QStringLiteral("Errors"),   QStringLiteral("p50 latency"),
        QStringLiteral("p95 latency"), QStringLiteral("TTFT p50"), QStringLiteral("Models"),
        QStringLiteral("Other nodes"), QStringLiteral("Reason")};
    for (int column = 0; column < HealthMatrixModel::ColumnCount; ++column) {
        QCOMPARE(tested.model.headerData(column, Qt::Horizontal).toString(), expected.at(column));
        QVERIFY(
            !tested.model.headerData(column, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
    }
    QCOMPARE(Qt::Alignment(tested.model
                               .headerData(HealthMatrixModel::RequestsColumn, Qt::Horizontal,
                                           Qt::TextAlignmentRole)
                               .toInt()),
             Qt::AlignRight | Qt::AlignVCenter);
}

void HealthMatrixModelTest::colorsAndExplainsTheState_data()
{
    QTest::addColumn<ProviderHealth>("health");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QColor>("color");
    QTest::addColumn<QString>("reason");

    ProviderHealth base = provider(QStringLiteral("p"), 40);
    base.consecutiveFailures = 5;
    base.lastFailure = QStringLiteral("HTTP 500");
    base.recentCalls = 20;
    base.errorRatePercent = 25.0;

    QTest::newRow("closed") << base << QStringLiteral("Closed") << QColor(0x15, 0x80, 0x3d)
                            << QStringLiteral("answering normally");
    ProviderHealth failing = base;
    failing.state = ProviderState::Degraded;
    QTest::newRow("closed but failing")
        << failing << QStringLiteral("Failing") << QColor(0xb4, 0x53, 0x09)
        << QStringLiteral("25% of the last 20 call(s) failed");
    ProviderHealth open = base;
    open.state = ProviderState::Down;
    open.breaker = BreakerState::Open;
    open.breakerReason = QStringLiteral("5 consecutive call failures");
    open.msUntilHalfOpen = 41'200;
    QTest::newRow("open counts down")
        << open << QStringLiteral("Open · 42 s") << QColor(0xb9, 0x1c, 0x1c)
        << QStringLiteral("5 consecutive call failures; next probe in 42 s");
    ProviderHealth longOpen = open;
    longOpen.msUntilHalfOpen = 185'000;
    QTest::newRow("open for minutes")
        << longOpen << QStringLiteral("Open · 3:05") << QColor(0xb9, 0x1c, 0x1c)
        << QStringLiteral("5 consecutive call failures; next probe in 3:05");
    ProviderHealth halfOpen = base;
    halfOpen.state = ProviderState::Degraded;
    halfOpen.breaker = BreakerState::HalfOpen;
    halfOpen.breakerReason = QStringLiteral("open time over");
    QTest::newRow("half-open") << halfOpen << QStringLiteral("Half-open")
                               << QColor(0xb4, 0x53, 0x09)
                               << QStringLiteral("letting one probe call through; open time over");
    ProviderHealth coolingDown = base;
    coolingDown.msUntilCoolDownEnds = 1'200;
    QTest::newRow("cooling down after a 429")
        << coolingDown << QStringLiteral("Cooling down · 2 s") << QColor(0xb4, 0x53, 0x09)
        << QStringLiteral("rate limited by the provider (HTTP 429); no calls until its "
                          "Retry-After has passed, its breaker untouched");
    ProviderHealth ramping = base;
    ramping.trafficShare = 0.35;
    QTest::newRow("ramping") << ramping << QStringLiteral("Ramping 35%") << QColor(0x0f, 0x76, 0x6e)
                             << QStringLiteral("recovered; taking 35% of its usual share");
    ProviderHealth disabled = open;
    disabled.operatorState = OperatorState::Disabled;
    QTest::newRow("operator disable wins over breaker")
        << disabled << QStringLiteral("Disabled") << QColor(0x4b, 0x55, 0x63)
        << QStringLiteral("disabled by an operator; takes no traffic until enabled");
    ProviderHealth draining = base;
    draining.operatorState = OperatorState::Draining;
    draining.inFlight = 2;
    QTest::newRow("draining") << draining << QStringLiteral("Draining") << QColor(0x1d, 0x4e, 0xd8)
                              << QStringLiteral("draining: no new requests, 2 call(s) still open");
}

void HealthMatrixModelTest::colorsAndExplainsTheState()
{
    QFETCH(ProviderHealth, health);
    QFETCH(QString, text);
    QFETCH(QColor, color);
    QFETCH(QString, reason);
    TestedModel tested;
    tested.model.applySnapshot(snapshotOf({health}));

    const QModelIndex cell = tested.model.index(0, HealthMatrixModel::StateColumn);
    QCOMPARE(cell.data(Qt::DisplayRole).toString(), text);
    QCOMPARE(cell.data(Qt::ForegroundRole).value<QColor>(), color);
    QCOMPARE(cell.data(Qt::DecorationRole).value<QColor>(), color);
    QCOMPARE(cell.data(HealthMatrixModel::StateRole).toInt(),
             int(HealthMatrixModel::statusOf(health)));
    QCOMPARE(tested.text(0, HealthMatrixModel::ReasonColumn), reason);
    const QString name = HealthMatrixModel::statusName(HealthMatrixModel::statusOf(health));
    QCOMPARE(cell.data(Qt::ToolTipRole).toString(), name + QStringLiteral(": ") + reason);
}

void HealthMatrixModelTest::sortRoleCarriesRawValues()
{
    TestedModel tested;
    ProviderHealth health = provider(QStringLiteral("p"), 1234);
    health.state = ProviderState::Down;
    health.p95LatencyMs = 1234.5;
    tested.model.applySnapshot(snapshotOf({health}));

    const auto sortValue = [&](int column) {
        return tested.model.index(0, column).data(HealthMatrixModel::SortRole);
    };
    QCOMPARE(sortValue(HealthMatrixModel::RequestsColumn).toULongLong(), 1234ULL);
    QCOMPARE(sortValue(HealthMatrixModel::LatencyP95Column).toDouble(), 1234.5);
    QCOMPARE(sortValue(HealthMatrixModel::LatencyP50Column).toDouble(), -1.0);
    // A provider kept out is the most severe but one (only an operator's disable sorts later).
    QCOMPARE(sortValue(HealthMatrixModel::StateColumn).toInt(),
             int(HealthMatrixModel::ProviderStatus::Open));
}

void HealthMatrixModelTest::firstSnapshotInsertsRows()
{
    TestedModel tested;
    QSignalSpy inserted(&tested.model, &QAbstractItemModel::rowsInserted);
    QSignalSpy reset(&tested.model, &QAbstractItemModel::modelReset);
    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("a")), provider(QStringLiteral("b")),
                    provider(QStringLiteral("c"))}));
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.at(0).at(1).toInt(), 0);
    QCOMPARE(inserted.at(0).at(2).toInt(), 2);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(tested.ids(),
             (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")}));
}

void HealthMatrixModelTest::newProviderIsInsertedAtTheEnd()
{
    TestedModel tested;
    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("a")), provider(QStringLiteral("b"))}));
    QSignalSpy inserted(&tested.model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&tested.model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy changed(&tested.model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&tested.model, &QAbstractItemModel::modelReset);

    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("new")), provider(QStringLiteral("a")),
                    provider(QStringLiteral("b"))}));
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(inserted.at(0).at(1).toInt(), 2);
    QCOMPARE(inserted.at(0).at(2).toInt(), 2);
    QCOMPARE(removed.count(), 0);
    QCOMPARE(changed.count(), 0);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(tested.ids(),
             (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("new")}));
}

void HealthMatrixModelTest::valueChangeSignalsOnlyThatRow()
{
    TestedModel tested;
    QList<ProviderHealth> providers{provider(QStringLiteral("a"), 1),
                                    provider(QStringLiteral("b"), 2),
                                    provider(QStringLiteral("c"), 3)};
    tested.model.applySnapshot(snapshotOf(providers));
    QSignalSpy changed(&tested.model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&tested.model, &QAbstractItemModel::modelReset);
    QSignalSpy layout(&tested.model, &QAbstractItemModel::layoutChanged);
    QSignalSpy inserted(&tested.model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&tested.model, &QAbstractItemModel::rowsRemoved);

    providers[1].requests = 20;
    providers[1].p95LatencyMs = 84.0;
    tested.model.applySnapshot(snapshotOf(providers));

    QCOMPARE(changed.count(), 1);
    const auto topLeft = changed.at(0).at(0).value<QModelIndex>();
    const auto bottomRight = changed.at(0).at(1).value<QModelIndex>();
    QCOMPARE(topLeft.row(), 1);
    QCOMPARE(bottomRight.row(), 1);
    QCOMPARE(topLeft.column(), int(HealthMatrixModel::RequestsColumn));
    QCOMPARE(bottomRight.column(), int(HealthMatrixModel::LatencyP95Column));
    QCOMPARE(reset.count(), 0);
    QCOMPARE(layout.count(), 0);
    QCOMPARE(inserted.count(), 0);
    QCOMPARE(removed.count(), 0);
    QCOMPARE(tested.text(1, HealthMatrixModel::RequestsColumn), QStringLiteral("20"));
    QCOMPARE(tested.text(1, HealthMatrixModel::LatencyP95Column), QStringLiteral("84 ms"));
}

void HealthMatrixModelTest::identicalSnapshotSignalsNothing()
{
    TestedModel tested;
    const EngineSnapshot snapshot =
        snapshotOf({provider(QStringLiteral("a"), 1), provider(QStringLiteral("b"), 2)});
    tested.model.applySnapshot(snapshot);
    QSignalSpy changed(&tested.model, &QAbstractItemModel::dataChanged);
    QSignalSpy reset(&tested.model, &QAbstractItemModel::modelReset);
    tested.model.applySnapshot(snapshot);
    QCOMPARE(changed.count(), 0);
    QCOMPARE(reset.count(), 0);
}

void HealthMatrixModelTest::vanishedProviderIsRemoved()
{
    TestedModel tested;
    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("a")), provider(QStringLiteral("b")),
                    provider(QStringLiteral("c"))}));
    QSignalSpy removed(&tested.model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy reset(&tested.model, &QAbstractItemModel::modelReset);

    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("a")), provider(QStringLiteral("c"))}));
    QCOMPARE(removed.count(), 1);
    QCOMPARE(removed.at(0).at(1).toInt(), 1);
    QCOMPARE(removed.at(0).at(2).toInt(), 1);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(tested.ids(), (QStringList{QStringLiteral("a"), QStringLiteral("c")}));

    tested.model.applySnapshot(snapshotOf({}));
    QCOMPARE(removed.count(), 2);
    QCOMPARE(removed.at(1).at(1).toInt(), 0);
    QCOMPARE(removed.at(1).at(2).toInt(), 1);
    QCOMPARE(tested.model.rowCount(), 0);
}

void HealthMatrixModelTest::reorderedSnapshotKeepsRowsInPlace()
{
    TestedModel tested;
    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("a"), 1), provider(QStringLiteral("b"), 2),
                    provider(QStringLiteral("c"), 3)}));
    QSignalSpy changed(&tested.model, &QAbstractItemModel::dataChanged);
    QSignalSpy moved(&tested.model, &QAbstractItemModel::rowsMoved);
    QSignalSpy inserted(&tested.model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&tested.model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy reset(&tested.model, &QAbstractItemModel::modelReset);
    QSignalSpy layout(&tested.model, &QAbstractItemModel::layoutChanged);

    // Same providers in another order, and only "a" has new numbers.
    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("c"), 3), provider(QStringLiteral("a"), 10),
                    provider(QStringLiteral("b"), 2)}));
    QCOMPARE(tested.ids(),
             (QStringList{QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")}));
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).value<QModelIndex>().row(), 0);
    QCOMPARE(tested.text(0, HealthMatrixModel::RequestsColumn), QStringLiteral("10"));
    QCOMPARE(tested.text(2, HealthMatrixModel::RequestsColumn), QStringLiteral("3"));
    QCOMPARE(moved.count(), 0);
    QCOMPARE(inserted.count(), 0);
    QCOMPARE(removed.count(), 0);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(layout.count(), 0);
}

void HealthMatrixModelTest::mixedUpdateAddsRemovesAndChanges()
{
    TestedModel tested;
    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("a"), 1), provider(QStringLiteral("b"), 2),
                    provider(QStringLiteral("c"), 3), provider(QStringLiteral("d"), 4)}));
    QSignalSpy changed(&tested.model, &QAbstractItemModel::dataChanged);
    QSignalSpy inserted(&tested.model, &QAbstractItemModel::rowsInserted);
    QSignalSpy removed(&tested.model, &QAbstractItemModel::rowsRemoved);
    QSignalSpy reset(&tested.model, &QAbstractItemModel::modelReset);

    ProviderHealth down = provider(QStringLiteral("d"), 4);
    down.state = ProviderState::Down;
    down.consecutiveFailures = 5;
    down.lastFailure = QStringLiteral("could not connect");
    tested.model.applySnapshot(
        snapshotOf({provider(QStringLiteral("e"), 0), down, provider(QStringLiteral("a"), 1),
                    provider(QStringLiteral("e"), 99)}));

    // "b" and "c" go in one contiguous removal; the duplicate "e" keeps its first entry.
    QCOMPARE(removed.count(), 1);
    QCOMPARE(removed.at(0).at(1).toInt(), 1);
    QCOMPARE(removed.at(0).at(2).toInt(), 2);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.at(0).at(0).value<QModelIndex>().row(), 1);
    QCOMPARE(changed.at(0).at(0).value<QModelIndex>().column(),
             int(HealthMatrixModel::StateColumn));
    QCOMPARE(changed.at(0).at(1).value<QModelIndex>().column(),
             int(HealthMatrixModel::ReasonColumn));
    QCOMPARE(inserted.count(), 1);
    QCOMPARE(reset.count(), 0);
    QCOMPARE(tested.ids(),
             (QStringList{QStringLiteral("a"), QStringLiteral("d"), QStringLiteral("e")}));
    QCOMPARE(tested.text(1, HealthMatrixModel::StateColumn), QStringLiteral("Open"));
    QCOMPARE(tested.text(2, HealthMatrixModel::RequestsColumn), QStringLiteral("0"));
}

void HealthMatrixModelTest::proxySortsOnRawLatency()
{
    TestedModel tested;
    QSortFilterProxyModel proxy;
    proxy.setSourceModel(&tested.model);
    proxy.setSortRole(HealthMatrixModel::SortRole);
    QAbstractItemModelTester proxyTester(&proxy,
                                         QAbstractItemModelTester::FailureReportingMode::Fatal);
    proxy.sort(HealthMatrixModel::LatencyP95Column, Qt::DescendingOrder);

    ProviderHealth fast = provider(QStringLiteral("fast"));
    fast.p95LatencyMs = 950.0; // "950 ms" sorts below "1.2 s" only by raw value
    ProviderHealth slow = provider(QStringLiteral("slow"));
    slow.p95LatencyMs = 1200.0;
    ProviderHealth fresh = provider(QStringLiteral("fresh"));
    tested.model.applySnapshot(snapshotOf({fast, slow, fresh}));

    const auto order = [&] {
        QStringList ids;
        for (int row = 0; row < proxy.rowCount(); ++row)
            ids.append(proxy.index(row, HealthMatrixModel::ProviderColumn).data().toString());
        return ids;
    };
    QCOMPARE(order(), (QStringList{QStringLiteral("slow"), QStringLiteral("fast"),
                                   QStringLiteral("fresh")}));

    fast.p95LatencyMs = 3000.0;
    tested.model.applySnapshot(snapshotOf({fast, slow, fresh}));
    QCOMPARE(order(), (QStringList{QStringLiteral("fast"), QStringLiteral("slow"),
                                   QStringLiteral("fresh")}));
}

void HealthMatrixModelTest::otherNodesShowTheirOwnView()
{
    TestedModel tested;
    const auto node = [](const QString &name, bool self, QList<EndpointSummary> endpoints) {
        FleetMemberState member;
        member.node = name;
        member.self = self;
        member.endpoints = std::move(endpoints);
        return member;
    };
    const auto endpoint = [](const QString &id, ProviderState state,
                             BreakerState breaker = BreakerState::Closed) {
        EndpointSummary summary;
        summary.id = id;
        summary.state = state;
        summary.breaker = breaker;
        if (breaker == BreakerState::Open)
            summary.breakerReason = QStringLiteral("5 consecutive call failures");
        return summary;
    };
    const auto cell = [&](int row, int role) {
        return tested.model.index(row, HealthMatrixModel::OtherNodesColumn).data(role);
    };

    // A single node: the column has nothing to say and the view hides it.
    EngineSnapshot snapshot =
        snapshotOf({provider(QStringLiteral("cloud")), provider(QStringLiteral("local"))});
    tested.model.applySnapshot(snapshot);
    QVERIFY(!tested.model.hasOtherNodes());
    QCOMPARE(tested.text(0, HealthMatrixModel::OtherNodesColumn), QString());

    // gw-3's breaker for "cloud" is open there, and only there; gw-1 is this node, and its own
    // view is the rest of the row, so it is not counted again.
    snapshot.fleet.enabled = true;
    snapshot.fleet.members = {
        node(QStringLiteral("gw-1"), true,
             {endpoint(QStringLiteral("cloud"), ProviderState::Down, BreakerState::Open)}),
        node(QStringLiteral("gw-2"), false, {endpoint(QStringLiteral("cloud"), ProviderState::Up)}),
        node(QStringLiteral("gw-3"), false,
             {endpoint(QStringLiteral("cloud"), ProviderState::Down, BreakerState::Open)})};
    QSignalSpy changed(&tested.model, &QAbstractItemModel::dataChanged);
    tested.model.applySnapshot(snapshot);
    QVERIFY(tested.model.hasOtherNodes());
    QCOMPARE(changed.count(), 1);
    QCOMPARE(changed.first().at(0).toModelIndex().column(),
             int(HealthMatrixModel::OtherNodesColumn));
    QCOMPARE(tested.text(0, HealthMatrixModel::OtherNodesColumn), QStringLiteral("1 of 2 up"));
    QCOMPARE(cell(0, Qt::ToolTipRole).toString(),
             QStringLiteral("gw-2: up\ngw-3: open \u2014 5 consecutive call failures"));
    QCOMPARE(cell(0, HealthMatrixModel::StatusColorRole).value<QColor>(), QColor(0xb4, 0x53, 0x09));
    QCOMPARE(cell(0, HealthMatrixModel::SortRole).toDouble(), 0.5);
    // This node's own breaker state stays in the Breaker column, untouched by the others' views.
    QCOMPARE(tested.text(0, HealthMatrixModel::StateColumn), QStringLiteral("Closed"));
    // No other node lists "local" (a provider only this node's config has, or not published).
    QCOMPARE(tested.text(1, HealthMatrixModel::OtherNodesColumn), QStringLiteral("not listed"));

    // The same views again signal nothing; gw-3 recovering repaints the column only.
    changed.clear();
    tested.model.applySnapshot(snapshot);
    QCOMPARE(changed.count(), 0);
    snapshot.fleet.members[2].endpoints[0] = endpoint(QStringLiteral("cloud"), ProviderState::Up);
    tested.model.applySnapshot(snapshot);
    QCOMPARE(changed.count(), 1);
    QCOMPARE(tested.text(0, HealthMatrixModel::OtherNodesColumn), QStringLiteral("2 of 2 up"));
    QCOMPARE(cell(0, HealthMatrixModel::StatusColorRole).value<QColor>(), QColor(0x15, 0x80, 0x3d));

    // Leaving the fleet empties the column again.
    snapshot.fleet = {};
    tested.model.applySnapshot(snapshot);
    QVERIFY(!tested.model.hasOtherNodes());
    QCOMPARE(tested.text(0, HealthMatrixModel::OtherNodesColumn), QString());
}

QTEST_MAIN(HealthMatrixModelTest)
#include "tst_health_matrix_model.moc"
