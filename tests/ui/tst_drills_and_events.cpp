#include "ui/overview/breaker_events_model.h"
#include "ui/overview/drills_panel.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

using switchyard::BreakerEvent;
using switchyard::BreakerState;
using switchyard::EngineSnapshot;
using switchyard::ProviderHealth;
using switchyard::SimulatorKnobs;
using switchyard::ui::BreakerEventsModel;
using switchyard::ui::DrillsPanel;

namespace {

// `sequence` as the engine numbers its events: 1 for the first, +1 for each after.
BreakerEvent transitionOf(const QString &provider, BreakerState from, BreakerState to, qint64 atMs,
                          quint64 sequence)
{
    BreakerEvent transition;
    transition.providerId = provider;
    transition.from = from;
    transition.to = to;
    transition.reason = QStringLiteral("5 consecutive call failures");
    transition.atMsSinceEpoch = atMs;
    transition.sequence = sequence;
    return transition;
}

ProviderHealth provider(const QString &id, bool simulated)
{
    ProviderHealth health;
    health.id = id;
    health.simulated = simulated;
    return health;
}

EngineSnapshot snapshotOf(const QList<ProviderHealth> &providers)
{
    EngineSnapshot snapshot;
    snapshot.providers = providers;
    return snapshot;
}

} // namespace

class DrillsAndEventsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void eventsAppearNewestFirstWithoutRepeats();
    void eventsKeepOnlyTheNewest();
    void eventsAreKnownByTheirSequence();
    void eventsDescribeTheTransition();
    void drillsListOnlySimulatedProviders();
    void drillChoiceSendsTheKnobs();
    void restoreAllSendsNormalKnobsForEveryProvider();
    void drillsFollowTheEngineUnlessJustChangedHere();
};

void DrillsAndEventsTest::eventsAppearNewestFirstWithoutRepeats()
{
    BreakerEventsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
    const BreakerEvent first =
        transitionOf(QStringLiteral("a"), BreakerState::Closed, BreakerState::Open, 1000, 1);
    const BreakerEvent second =
        transitionOf(QStringLiteral("a"), BreakerState::Open, BreakerState::HalfOpen, 61000, 2);
    model.applyEvents({first});
    model.applyEvents({first, second});
    model.applyEvents({first, second}); // the same ring again adds nothing
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, BreakerEventsModel::ChangeColumn).data().toString(),
             QStringLiteral("Open → Half-open"));
    QCOMPARE(model.index(1, BreakerEventsModel::ChangeColumn).data().toString(),
             QStringLiteral("Closed → Open"));
    QCOMPARE(reset.count(), 0);
}

void DrillsAndEventsTest::eventsKeepOnlyTheNewest()
{
    BreakerEventsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QList<BreakerEvent> ring;
    for (int i = 0; i < BreakerEventsModel::kCapacity + 30; ++i) {
        ring.append(transitionOf(QStringLiteral("p%1").arg(i), BreakerState::Closed,
                                 BreakerState::Open, 1000 + i, quint64(i) + 1));
        // The engine's ring slides too: feed it a window at a time, as snapshots do.
        if (ring.size() > 50)
            ring.removeFirst();
        model.applyEvents(ring);
    }
    QCOMPARE(model.rowCount(), BreakerEventsModel::kCapacity);
    QCOMPARE(model.index(0, BreakerEventsModel::ProviderColumn).data().toString(),
             QStringLiteral("p%1").arg(BreakerEventsModel::kCapacity + 29));
}

void DrillsAndEventsTest::eventsAreKnownByTheirSequence()
{
    // An operator's disable and enable within one millisecond differ only in their number.
    BreakerEventsModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    BreakerEvent disabled =
        transitionOf(QStringLiteral("a"), BreakerState::Closed, BreakerState::Closed, 1000, 1);
    disabled.reason = QStringLiteral("disabled by operator");
    BreakerEvent enabled = disabled;
    enabled.reason = QStringLiteral("enabled by operator");
    enabled.sequence = 2;
    model.applyEvents({disabled});
    model.applyEvents({disabled, enabled});
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, BreakerEventsModel::ReasonColumn).data().toString(),
             QStringLiteral("enabled by operator"));
}

void DrillsAndEventsTest::eventsDescribeTheTransition()
{
    BreakerEventsModel model;
    model.applyEvents({transitionOf(QStringLiteral("sim-swift"), BreakerState::HalfOpen,
                                    BreakerState::Closed, 1'700'000'000'000, 1)});
    QCOMPARE(model.index(0, BreakerEventsModel::ProviderColumn).data().toString(),
             QStringLiteral("sim-swift"));
    QCOMPARE(model.index(0, BreakerEventsModel::ReasonColumn).data().toString(),
             QStringLiteral("5 consecutive call failures"));
    QCOMPARE(
        model.index(0, BreakerEventsModel::ChangeColumn).data(Qt::ForegroundRole).value<QColor>(),
        BreakerEventsModel::breakerStateColor(BreakerState::Closed));
    QCOMPARE(model.index(0, BreakerEventsModel::TimeColumn).data().toString().size(), 8);
}

void DrillsAndEventsTest::drillsListOnlySimulatedProviders()
{
    DrillsPanel panel;
    panel.applySnapshot(snapshotOf({provider(QStringLiteral("sim-a"), true),
                                    provider(QStringLiteral("cloud"), false),
                                    provider(QStringLiteral("sim-b"), true)}));
    QCOMPARE(panel.rowCount(), 2);
    QCOMPARE(panel.providerOf(0), QStringLiteral("sim-a"));
    QCOMPARE(panel.providerOf(1), QStringLiteral("sim-b"));
    panel.applySnapshot(snapshotOf({provider(QStringLiteral("cloud"), false)}));
    QCOMPARE(panel.rowCount(), 0);
}

void DrillsAndEventsTest::drillChoiceSendsTheKnobs()
{
    DrillsPanel panel;
    panel.applySnapshot(snapshotOf({provider(QStringLiteral("sim-a"), true)}));
    QSignalSpy requested(&panel, &DrillsPanel::knobsRequested);
    QComboBox *mode = panel.modeBox(0);
    QCOMPARE(mode->itemText(mode->currentIndex()), QStringLiteral("Answer normally"));
    const int hang = mode->findText(DrillsPanel::modeName(SimulatorKnobs::Mode::Hang));
    QVERIFY(hang > 0);
    mode->setCurrentIndex(hang);
    Q_EMIT mode->activated(hang); // what a person's choice in the list emits
    QCOMPARE(requested.count(), 1);
    QCOMPARE(requested.at(0).at(0).toString(), QStringLiteral("sim-a"));
    const auto knobs = requested.at(0).at(1).value<SimulatorKnobs>();
    QCOMPARE(knobs.mode, SimulatorKnobs::Mode::Hang);
    QCOMPARE(knobs.latencyMs, -1); // "as configured"
    QCOMPARE(knobs.errorRate, -1.0);
}

void DrillsAndEventsTest::restoreAllSendsNormalKnobsForEveryProvider()
{
    DrillsPanel panel;
    panel.applySnapshot(snapshotOf(
        {provider(QStringLiteral("sim-a"), true), provider(QStringLiteral("sim-b"), true)}));
    panel.modeBox(1)->setCurrentIndex(2);
    QSignalSpy requested(&panel, &DrillsPanel::knobsRequested);
    auto *restore = panel.findChild<QPushButton *>(QStringLiteral("restoreDrills"));
    QVERIFY(restore);
    restore->click();
    QCOMPARE(requested.count(), 2);
    for (const QList<QVariant> &arguments : std::as_const(requested))
        QCOMPARE(arguments.at(1).value<SimulatorKnobs>().mode, SimulatorKnobs::Mode::Ok);
    QCOMPARE(panel.modeBox(1)->currentIndex(), 0);
}

void DrillsAndEventsTest::drillsFollowTheEngineUnlessJustChangedHere()
{
    DrillsPanel panel;
    ProviderHealth simulated = provider(QStringLiteral("sim-a"), true);
    panel.applySnapshot(snapshotOf({simulated}));
    simulated.simulatorMode = SimulatorKnobs::Mode::ServerError; // changed through the admin API
    panel.applySnapshot(snapshotOf({simulated}));
    QCOMPARE(panel.knobsOf(0).mode, SimulatorKnobs::Mode::ServerError);

    // A local choice wins over a snapshot that predates it.
    panel.modeBox(0)->setCurrentIndex(0);
    Q_EMIT panel.modeBox(0)->activated(0);
    panel.applySnapshot(snapshotOf({simulated}));
    QCOMPARE(panel.knobsOf(0).mode, SimulatorKnobs::Mode::Ok);
}

QTEST_MAIN(DrillsAndEventsTest)
#include "tst_drills_and_events.moc"
