// The breaker timeline's lanes and its time axis, on hand-picked timestamps: bands from events
// and snapshots, the ramp that no event reports, the operator overlay kept apart from the
// breaker, bounded history that says it was dropped, and the zoom and pan maths.

#include "ui/overview/breaker_timeline_model.h"
#include "ui/overview/timeline_axis.h"

#include <QDateTime>
#include <QTest>

using namespace switchyard;
using namespace switchyard::ui;
using namespace Qt::StringLiterals;

Q_DECLARE_METATYPE(switchyard::ui::LaneState)

namespace {

// 2024-03-12 14:00:00 UTC: any fixed instant, so every expected time is exact.
constexpr qint64 kStart = 1'710'252'000'000;
constexpr qint64 kSecond = 1'000;

ProviderHealth provider(const QString &id, BreakerState breaker = BreakerState::Closed,
                        OperatorState operatorState = OperatorState::Enabled,
                        double trafficShare = 1.0)
{
    ProviderHealth health;
    health.id = id;
    health.breaker = breaker;
    health.operatorState = operatorState;
    health.trafficShare = trafficShare;
    return health;
}

// Plays the engine: keeps the ring of events and hands out snapshots that carry all of it, as
// the real one does, so the model has to tell new events from repeated ones.
struct FakeEngine {
    QList<ProviderHealth> providers;
    QList<BreakerEvent> ring;
    quint64 sequence = 0;

    ProviderHealth &find(const QString &id)
    {
        for (ProviderHealth &health : providers) {
            if (health.id == id)
                return health;
        }
        providers.append(provider(id));
        return providers.last();
    }
    void event(const QString &id, qint64 atMs, BreakerState to, const QString &reason,
               OperatorState operatorState)
    {
        ProviderHealth &health = find(id);
        BreakerEvent event;
        event.providerId = id;
        event.from = health.breaker;
        event.to = to;
        event.reason = reason;
        event.operatorState = operatorState;
        event.atMsSinceEpoch = atMs;
        event.sequence = ++sequence;
        ring.append(event);
        health.breaker = to;
        health.operatorState = operatorState;
    }
    void breaker(const QString &id, qint64 atMs, BreakerState to, const QString &reason)
    {
        event(id, atMs, to, reason, find(id).operatorState);
    }
    void operatorSets(const QString &id, qint64 atMs, OperatorState state, const QString &reason)
    {
        event(id, atMs, find(id).breaker, reason, state);
    }
    EngineSnapshot snapshot() const
    {
        EngineSnapshot snapshot;
        snapshot.providers = providers;
        snapshot.recentBreakerEvents = ring;
        return snapshot;
    }
};

QList<LaneBand> bandsOf(const BreakerTimelineModel &model, const QString &id)
{
    const TimelineLane *lane = model.lane(id);
    return lane ? lane->bands(model.nowMs()) : QList<LaneBand>{};
}

QString describe(const QList<LaneBand> &bands)
{
    QStringList parts;
    for (const LaneBand &band : bands) {
        parts.append(u"%1@%2-%3"_s.arg(int(band.state))
                         .arg((band.startMs - kStart) / kSecond)
                         .arg((band.endMs - kStart) / kSecond));
    }
    return parts.join(u' ');
}

// "state@from-to" in seconds after kStart, the lane's bands in order.
QString expected(std::initializer_list<std::tuple<LaneState, int, int>> bands)
{
    QStringList parts;
    for (const auto &[state, from, to] : bands)
        parts.append(u"%1@%2-%3"_s.arg(int(state)).arg(from).arg(to));
    return parts.join(u' ');
}

} // namespace

class BreakerTimelineModelTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();

    void laneStateOfASnapshot_data();
    void laneStateOfASnapshot();
    void bandsFollowADrillFromTripToFullShare();
    void rampStartsWithTheEventThatBeganIt_data();
    void rampStartsWithTheEventThatBeganIt();
    void repeatedEventsAreAppliedOnce();
    void operatorOverlayIsIndependentOfTheBreaker();
    void markersKeepReasonsAndTellTransitionsFromNotes();
    void lanesFollowTheSnapshotsProviders();
    void historyIsBoundedByAgeAndSaysSo();
    void historyIsBoundedByCountAndSaysSo();
    void aFreshLaneHasDroppedNothing();
    void eventsTheEngineDroppedBeforeTheConsoleLookedAreFlagged();
    void aClockSteppingBackNeverFoldsALane();

    void axisMapsTimeToPixelsAndBack();
    void wheelZoomKeepsTheInstantUnderTheCursor_data();
    void wheelZoomKeepsTheInstantUnderTheCursor();
    void zoomIsBounded();
    void zoomingInAwayFromNowStopsFollowing();
    void dragLooksBackAndReturningToNowFollowsAgain();
    void panStopsShortOfTheOldestHistory();
    void followingMovesWithNewDataAndPausedDoesNot();
    void ticksAreRoundAndSpaced_data();
    void ticksAreRoundAndSpaced();
};

void BreakerTimelineModelTest::initTestCase()
{
    // Ticks fall on the viewer's round minutes; pin the zone so the expected ones are exact.
    qputenv("TZ", "UTC");
}

void BreakerTimelineModelTest::laneStateOfASnapshot_data()
{
    QTest::addColumn<BreakerState>("breaker");
    QTest::addColumn<OperatorState>("operatorState");
    QTest::addColumn<double>("trafficShare");
    QTest::addColumn<LaneState>("lane");

    QTest::newRow("closed at full share")
        << BreakerState::Closed << OperatorState::Enabled << 1.0 << LaneState::Closed;
    QTest::newRow("closed, ramping back in")
        << BreakerState::Closed << OperatorState::Enabled << 0.35 << LaneState::Ramping;
    // The share of a disabled or draining endpoint is zero whatever its ramp: not a ramp.
    QTest::newRow("closed, disabled")
        << BreakerState::Closed << OperatorState::Disabled << 0.0 << LaneState::Closed;
    QTest::newRow("closed, draining")
        << BreakerState::Closed << OperatorState::Draining << 0.0 << LaneState::Closed;
    QTest::newRow("half-open takes the probe's share")
        << BreakerState::HalfOpen << OperatorState::Enabled << 0.05 << LaneState::HalfOpen;
    QTest::newRow("open") << BreakerState::Open << OperatorState::Enabled << 0.0 << LaneState::Open;
    QTest::newRow("open and disabled")
        << BreakerState::Open << OperatorState::Disabled << 0.0 << LaneState::Open;
}

void BreakerTimelineModelTest::laneStateOfASnapshot()
{
    QFETCH(BreakerState, breaker);
    QFETCH(OperatorState, operatorState);
    QFETCH(double, trafficShare);
    QFETCH(LaneState, lane);
    QCOMPARE(
        BreakerTimelineModel::laneStateOf(provider(u"p"_s, breaker, operatorState, trafficShare)),
        lane);
}

void BreakerTimelineModelTest::bandsFollowADrillFromTripToFullShare()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    BreakerTimelineModel model;
    model.applySnapshot(engine.snapshot(), kStart);

    engine.breaker(u"p"_s, kStart + 10 * kSecond, BreakerState::Open,
                   u"5 consecutive call failures; open for 60 s"_s);
    model.applySnapshot(engine.snapshot(), kStart + 10 * kSecond + 80);
    engine.breaker(u"p"_s, kStart + 70 * kSecond, BreakerState::HalfOpen,
                   u"open period over; letting one probe call through"_s);
    model.applySnapshot(engine.snapshot(), kStart + 70 * kSecond + 50);
    engine.breaker(u"p"_s, kStart + 71 * kSecond, BreakerState::Closed, u"probe call succeeded"_s);
    engine.find(u"p"_s).trafficShare = 0.05;
    model.applySnapshot(engine.snapshot(), kStart + 71 * kSecond + 40);
    engine.find(u"p"_s).trafficShare = 0.6;
    model.applySnapshot(engine.snapshot(), kStart + 100 * kSecond);
    // The ramp ends with no event: the first snapshot at full share ends it.
    engine.find(u"p"_s).trafficShare = 1.0;
    model.applySnapshot(engine.snapshot(), kStart + 131 * kSecond);
    model.applySnapshot(engine.snapshot(), kStart + 140 * kSecond);

    QCOMPARE(describe(bandsOf(model, u"p"_s)), expected({{LaneState::Closed, 0, 10},
                                                         {LaneState::Open, 10, 70},
                                                         {LaneState::HalfOpen, 70, 71},
                                                         {LaneState::Ramping, 71, 131},
                                                         {LaneState::Closed, 131, 140}}));
    QCOMPARE(model.nowMs(), kStart + 140 * kSecond);
    QCOMPARE(model.lane(u"p"_s)->knownSinceMs, kStart);
    QVERIFY(!model.lane(u"p"_s)->olderHistoryDropped);
}

void BreakerTimelineModelTest::rampStartsWithTheEventThatBeganIt_data()
{
    QTest::addColumn<int>("action"); // 0 probe closes, 1 operator enables, 2 reset of a healthy one
    QTest::addColumn<bool>("ramps");
    QTest::newRow("a probe closes the breaker") << 0 << true;
    QTest::newRow("an operator enables it again") << 1 << true;
    QTest::newRow("a reset of a serving endpoint") << 2 << false;
}

void BreakerTimelineModelTest::rampStartsWithTheEventThatBeganIt()
{
    QFETCH(int, action);
    QFETCH(bool, ramps);
    FakeEngine engine;
    engine.find(u"p"_s);
    BreakerTimelineModel model;
    model.applySnapshot(engine.snapshot(), kStart);
    if (action == 0) {
        engine.breaker(u"p"_s, kStart + 5 * kSecond, BreakerState::Open, u"tripped"_s);
        engine.breaker(u"p"_s, kStart + 8 * kSecond, BreakerState::HalfOpen, u"probe"_s);
    } else if (action == 1) {
        engine.operatorSets(u"p"_s, kStart + 5 * kSecond, OperatorState::Disabled,
                            u"disabled by operator"_s);
    }
    model.applySnapshot(engine.snapshot(), kStart + 9 * kSecond);

    // The snapshot that shows the ramp comes a moment after the event; the band starts with it.
    const qint64 eventMs = kStart + 10 * kSecond;
    if (action == 0)
        engine.breaker(u"p"_s, eventMs, BreakerState::Closed, u"probe call succeeded"_s);
    else if (action == 1)
        engine.operatorSets(u"p"_s, eventMs, OperatorState::Enabled, u"enabled by operator"_s);
    else
        engine.breaker(u"p"_s, eventMs, BreakerState::Closed, u"reset by operator"_s);
    engine.find(u"p"_s).trafficShare = ramps ? 0.05 : 1.0;
    model.applySnapshot(engine.snapshot(), eventMs + 90);

    const TimelineLane &lane = *model.lane(u"p"_s);
    QCOMPARE(lane.stateAt(eventMs - 1) == LaneState::Ramping, false);
    QCOMPARE(lane.stateAt(eventMs), ramps ? LaneState::Ramping : LaneState::Closed);
    QCOMPARE(lane.stateAt(eventMs + 90), ramps ? LaneState::Ramping : LaneState::Closed);
}

void BreakerTimelineModelTest::repeatedEventsAreAppliedOnce()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    BreakerTimelineModel model;
    model.applySnapshot(engine.snapshot(), kStart);
    engine.breaker(u"p"_s, kStart + kSecond, BreakerState::Open, u"tripped by operator"_s);
    // Every snapshot repeats the engine's whole ring; ten of them add one marker, not ten.
    for (int tick = 1; tick <= 10; ++tick)
        model.applySnapshot(engine.snapshot(), kStart + kSecond + tick * 100);

    QCOMPARE(model.lane(u"p"_s)->markers.size(), 1);
    QCOMPARE(describe(bandsOf(model, u"p"_s)),
             expected({{LaneState::Closed, 0, 1}, {LaneState::Open, 1, 2}}));
}

void BreakerTimelineModelTest::operatorOverlayIsIndependentOfTheBreaker()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    BreakerTimelineModel model;
    model.applySnapshot(engine.snapshot(), kStart);
    engine.operatorSets(u"p"_s, kStart + 10 * kSecond, OperatorState::Draining,
                        u"draining by operator"_s);
    model.applySnapshot(engine.snapshot(), kStart + 10 * kSecond + 50);
    // A drill on a draining endpoint: its breaker opens under the drain.
    engine.breaker(u"p"_s, kStart + 20 * kSecond, BreakerState::Open, u"tripped by operator"_s);
    model.applySnapshot(engine.snapshot(), kStart + 20 * kSecond + 50);
    engine.operatorSets(u"p"_s, kStart + 30 * kSecond, OperatorState::Disabled,
                        u"disabled by operator"_s);
    model.applySnapshot(engine.snapshot(), kStart + 30 * kSecond + 50);
    engine.breaker(u"p"_s, kStart + 40 * kSecond, BreakerState::HalfOpen, u"probe"_s);
    model.applySnapshot(engine.snapshot(), kStart + 50 * kSecond);

    const TimelineLane &lane = *model.lane(u"p"_s);
    // The breaker's bands are exactly what the breaker did, drain or not.
    QCOMPARE(describe(lane.bands(model.nowMs())), expected({{LaneState::Closed, 0, 20},
                                                            {LaneState::Open, 20, 40},
                                                            {LaneState::HalfOpen, 40, 50}}));
    const QList<OperatorBand> overlay = lane.operatorBands(model.nowMs());
    QCOMPARE(overlay.size(), 2);
    QCOMPARE(overlay[0].state, OperatorState::Draining);
    QCOMPARE(overlay[0].startMs, kStart + 10 * kSecond);
    QCOMPARE(overlay[0].endMs, kStart + 30 * kSecond);
    QCOMPARE(overlay[1].state, OperatorState::Disabled);
    QCOMPARE(overlay[1].startMs, kStart + 30 * kSecond);
    QCOMPARE(overlay[1].endMs, kStart + 50 * kSecond);
    QCOMPARE(lane.operatorStateAt(kStart + 5 * kSecond), OperatorState::Enabled);
}

void BreakerTimelineModelTest::markersKeepReasonsAndTellTransitionsFromNotes()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    BreakerTimelineModel model;
    model.applySnapshot(engine.snapshot(), kStart);
    engine.breaker(u"p"_s, kStart + kSecond, BreakerState::Open,
                   u"5 consecutive call failures; open for 60 s"_s);
    engine.breaker(u"p"_s, kStart + 2 * kSecond, BreakerState::Open, u"3 failed health probes"_s);
    model.applySnapshot(engine.snapshot(), kStart + 3 * kSecond);

    const QList<LaneMarker> &markers = model.lane(u"p"_s)->markers;
    QCOMPARE(markers.size(), 2);
    QVERIFY(markers[0].isTransition());
    QCOMPARE(markers[0].reason, u"5 consecutive call failures; open for 60 s"_s);
    QCOMPARE(markers[0].atMs, kStart + kSecond);
    QCOMPARE(markers[0].sequence, quint64(1));
    QVERIFY(!markers[1].isTransition()); // probe health, the breaker already open
    QCOMPARE(markers[1].reason, u"3 failed health probes"_s);
}

void BreakerTimelineModelTest::lanesFollowTheSnapshotsProviders()
{
    FakeEngine engine;
    engine.find(u"a"_s);
    engine.find(u"b"_s);
    BreakerTimelineModel model;
    model.applySnapshot(engine.snapshot(), kStart);
    engine.find(u"c"_s);
    model.applySnapshot(engine.snapshot(), kStart + 10 * kSecond);
    engine.providers.removeFirst(); // "a" retired by a config reload
    model.applySnapshot(engine.snapshot(), kStart + 20 * kSecond);

    QCOMPARE(model.lanes().size(), 2);
    QCOMPARE(model.lanes()[0].providerId, u"b"_s);
    QCOMPARE(model.lanes()[1].providerId, u"c"_s);
    QCOMPARE(model.lane(u"c"_s)->knownSinceMs, kStart + 10 * kSecond);
    QCOMPARE(model.earliestMs(), kStart);
    QVERIFY(!model.lane(u"c"_s)->olderHistoryDropped);
}

void BreakerTimelineModelTest::historyIsBoundedByAgeAndSaysSo()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    TimelineLimits limits;
    limits.maxAgeMs = 60 * kSecond;
    BreakerTimelineModel model(limits);
    model.applySnapshot(engine.snapshot(), kStart);
    engine.breaker(u"p"_s, kStart + 10 * kSecond, BreakerState::Open, u"tripped"_s);
    engine.breaker(u"p"_s, kStart + 20 * kSecond, BreakerState::HalfOpen, u"probe"_s);
    model.applySnapshot(engine.snapshot(), kStart + 30 * kSecond);
    QVERIFY(!model.lane(u"p"_s)->olderHistoryDropped);

    model.applySnapshot(engine.snapshot(), kStart + 75 * kSecond);

    // Cut at 15 s: the open band before it goes, the state in force then is kept from the cut.
    const TimelineLane &lane = *model.lane(u"p"_s);
    QVERIFY(lane.olderHistoryDropped);
    QCOMPARE(lane.knownSinceMs, kStart + 15 * kSecond);
    QCOMPARE(describe(lane.bands(model.nowMs())),
             expected({{LaneState::Open, 15, 20}, {LaneState::HalfOpen, 20, 75}}));
    QCOMPARE(lane.markers.size(), 1); // the trip at 10 s is gone, the probe at 20 s stays
    QCOMPARE(lane.markers.first().atMs, kStart + 20 * kSecond);
    QCOMPARE(model.earliestMs(), kStart + 15 * kSecond);
}

void BreakerTimelineModelTest::historyIsBoundedByCountAndSaysSo()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    TimelineLimits limits;
    limits.maxChangesPerLane = 4;
    BreakerTimelineModel model(limits);
    model.applySnapshot(engine.snapshot(), kStart);
    // A flapping endpoint: open and closed again every second, for ten seconds.
    for (int second = 1; second <= 10; ++second) {
        engine.breaker(u"p"_s, kStart + second * kSecond,
                       second % 2 ? BreakerState::Open : BreakerState::Closed, u"flap"_s);
        model.applySnapshot(engine.snapshot(), kStart + second * kSecond + 100);
    }

    const TimelineLane &lane = *model.lane(u"p"_s);
    QVERIFY(lane.olderHistoryDropped);
    QVERIFY(lane.changes.size() <= 4);
    QVERIFY(lane.markers.size() <= 4);
    QCOMPARE(lane.markers.last().atMs, kStart + 10 * kSecond);
    QCOMPARE(lane.knownSinceMs, lane.changes.first().atMs);
    QCOMPARE(lane.knownSinceMs, kStart + 7 * kSecond);
    QCOMPARE(describe(lane.bands(model.nowMs())), expected({{LaneState::Open, 7, 8},
                                                            {LaneState::Closed, 8, 9},
                                                            {LaneState::Open, 9, 10},
                                                            {LaneState::Closed, 10, 10}}));
}

void BreakerTimelineModelTest::aFreshLaneHasDroppedNothing()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    engine.breaker(u"p"_s, kStart - 30 * kSecond, BreakerState::Open, u"tripped"_s);
    BreakerTimelineModel model;
    // The first snapshot carries the engine's ring from its first event on: nothing is missing,
    // and the lane starts at that event.
    model.applySnapshot(engine.snapshot(), kStart);

    const TimelineLane &lane = *model.lane(u"p"_s);
    QVERIFY(!lane.olderHistoryDropped);
    QCOMPARE(lane.knownSinceMs, kStart - 30 * kSecond);
    QCOMPARE(describe(lane.bands(model.nowMs())), expected({{LaneState::Open, -30, 0}}));
}

void BreakerTimelineModelTest::eventsTheEngineDroppedBeforeTheConsoleLookedAreFlagged()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    for (int i = 0; i < 5; ++i)
        engine.breaker(u"p"_s, kStart - (10 - i) * kSecond,
                       i % 2 ? BreakerState::Closed : BreakerState::Open, u"flap"_s);
    engine.ring.remove(0, 3); // the engine's bounded ring has forgotten the first three

    BreakerTimelineModel model;
    model.applySnapshot(engine.snapshot(), kStart);

    QVERIFY(model.lane(u"p"_s)->olderHistoryDropped);
    QCOMPARE(model.lane(u"p"_s)->knownSinceMs, kStart - 7 * kSecond);
}

void BreakerTimelineModelTest::aClockSteppingBackNeverFoldsALane()
{
    FakeEngine engine;
    engine.find(u"p"_s);
    BreakerTimelineModel model;
    model.applySnapshot(engine.snapshot(), kStart + 10 * kSecond);
    // An event stamped before the lane's start, and a snapshot from a clock that stepped back.
    engine.breaker(u"p"_s, kStart + 5 * kSecond, BreakerState::Open, u"tripped"_s);
    model.applySnapshot(engine.snapshot(), kStart + 8 * kSecond);

    QCOMPARE(model.nowMs(), kStart + 10 * kSecond);
    const QList<LaneBand> bands = bandsOf(model, u"p"_s);
    for (const LaneBand &band : bands)
        QVERIFY(band.startMs < band.endMs || band.endMs == model.nowMs());
    QCOMPARE(model.lane(u"p"_s)->stateAt(model.nowMs()), LaneState::Open);
}

// ---- the axis ----------------------------------------------------------------------------------

void BreakerTimelineModelTest::axisMapsTimeToPixelsAndBack()
{
    TimelineAxis axis(30 * 60 * kSecond, 60 * kSecond);
    axis.setWidth(600);
    axis.setRange(kStart, kStart + 120 * kSecond);

    QVERIFY(axis.following());
    QCOMPARE(axis.endMs(), kStart + 120 * kSecond);
    QCOMPARE(axis.startMs(), kStart + 60 * kSecond);
    QCOMPARE(axis.xOf(kStart + 120 * kSecond), 600.0);
    QCOMPARE(axis.xOf(kStart + 60 * kSecond), 0.0);
    QCOMPARE(axis.xOf(kStart + 90 * kSecond), 300.0);
    QCOMPARE(axis.timeAt(300.0), kStart + 90 * kSecond);
    QCOMPARE(axis.timeAt(150.0), kStart + 75 * kSecond);
}

void BreakerTimelineModelTest::wheelZoomKeepsTheInstantUnderTheCursor_data()
{
    QTest::addColumn<double>("x");
    QTest::addColumn<double>("steps");
    QTest::addColumn<qint64>("span");
    QTest::newRow("one notch in, middle") << 300.0 << 1.0 << qint64(240'000);
    QTest::newRow("two notches in, left") << 60.0 << 2.0 << qint64(192'000);
    QTest::newRow("half a notch in, a touchpad") << 450.0 << 0.5 << qint64(268'328);
    QTest::newRow("one notch out, middle") << 300.0 << -1.0 << qint64(375'000);
}

void BreakerTimelineModelTest::wheelZoomKeepsTheInstantUnderTheCursor()
{
    QFETCH(double, x);
    QFETCH(double, steps);
    QFETCH(qint64, span);
    TimelineAxis axis(30 * 60 * kSecond);
    axis.setWidth(600);
    axis.setRange(kStart, kStart + 20 * 60 * kSecond);
    axis.pan(120); // look back a minute first, so zooming out has room on both sides
    const qint64 under = axis.timeAt(x);

    axis.zoom(x, steps);

    QCOMPARE(axis.spanMs(), span);
    QVERIFY2(std::abs(axis.timeAt(x) - under) <= 1,
             qPrintable(u"%1 ms off"_s.arg(axis.timeAt(x) - under)));
}

void BreakerTimelineModelTest::zoomIsBounded()
{
    TimelineAxis axis(30 * 60 * kSecond);
    axis.setWidth(600);
    axis.setRange(kStart, kStart + 60 * 60 * kSecond);
    axis.zoom(600, 100);
    QCOMPARE(axis.spanMs(), TimelineAxis::kMinimumSpanMs);
    axis.zoom(600, -100);
    QCOMPARE(axis.spanMs(), axis.maximumSpanMs());
    QCOMPARE(axis.maximumSpanMs(), 30 * 60 * kSecond);
}

void BreakerTimelineModelTest::zoomingInAwayFromNowStopsFollowing()
{
    TimelineAxis axis(30 * 60 * kSecond);
    axis.setWidth(600);
    axis.setRange(kStart, kStart + 20 * 60 * kSecond);

    axis.zoom(600, 1); // at the right edge: the present stays in view, still followed
    QVERIFY(axis.following());
    QCOMPARE(axis.endMs(), kStart + 20 * 60 * kSecond);

    axis.zoom(300, -1); // out: the right edge cannot pass now, and still follows
    QVERIFY(axis.following());
    QCOMPARE(axis.endMs(), kStart + 20 * 60 * kSecond);

    axis.zoom(100, 2); // in, well left of now: looking back
    QVERIFY(!axis.following());
    QVERIFY(axis.endMs() < kStart + 20 * 60 * kSecond);
}

void BreakerTimelineModelTest::dragLooksBackAndReturningToNowFollowsAgain()
{
    TimelineAxis axis(30 * 60 * kSecond, 60 * kSecond);
    axis.setWidth(600);
    const qint64 now = kStart + 10 * 60 * kSecond;
    axis.setRange(kStart, now);

    axis.pan(100); // dragged right by 100 px: ten seconds back
    QVERIFY(!axis.following());
    QCOMPARE(axis.endMs(), now - 10 * kSecond);

    axis.pan(-40);
    QCOMPARE(axis.endMs(), now - 6 * kSecond);
    axis.pan(-1000); // past the present: stops at now and follows it again
    QVERIFY(axis.following());
    QCOMPARE(axis.endMs(), now);

    axis.pan(100);
    axis.follow();
    QVERIFY(axis.following());
    QCOMPARE(axis.endMs(), now);
}

void BreakerTimelineModelTest::panStopsShortOfTheOldestHistory()
{
    TimelineAxis axis(30 * 60 * kSecond, 60 * kSecond);
    axis.setWidth(600);
    axis.setRange(kStart, kStart + 10 * 60 * kSecond);
    axis.pan(100'000);
    // At most a fifth of the view before the oldest history: enough to see that it ends.
    QCOMPARE(axis.startMs(), kStart - 12 * kSecond);
    QCOMPARE(axis.endMs(), kStart + 48 * kSecond);
}

void BreakerTimelineModelTest::followingMovesWithNewDataAndPausedDoesNot()
{
    TimelineAxis axis(30 * 60 * kSecond, 60 * kSecond);
    axis.setWidth(600);
    axis.setRange(kStart, kStart + 100 * kSecond);
    axis.setRange(kStart, kStart + 101 * kSecond);
    QCOMPARE(axis.endMs(), kStart + 101 * kSecond);

    axis.pan(60);
    const qint64 pausedEnd = axis.endMs();
    axis.setRange(kStart, kStart + 130 * kSecond);
    QCOMPARE(axis.endMs(), pausedEnd);
    QVERIFY(!axis.following());
}

void BreakerTimelineModelTest::ticksAreRoundAndSpaced_data()
{
    QTest::addColumn<qint64>("span");
    QTest::addColumn<double>("minimumSpacing");
    QTest::addColumn<qint64>("step");
    QTest::newRow("five minutes on 600 px") << qint64(300'000) << 80.0 << qint64(60'000);
    QTest::newRow("one minute on 600 px") << qint64(60'000) << 80.0 << qint64(10'000);
    QTest::newRow("ten seconds on 600 px") << qint64(10'000) << 80.0 << qint64(2'000);
    QTest::newRow("thirty minutes on 600 px") << qint64(1'800'000) << 80.0 << qint64(300'000);
}

void BreakerTimelineModelTest::ticksAreRoundAndSpaced()
{
    QFETCH(qint64, span);
    QFETCH(double, minimumSpacing);
    QFETCH(qint64, step);
    TimelineAxis axis(30 * 60 * kSecond, span);
    axis.setWidth(600);
    axis.setRange(kStart - 60 * 60 * kSecond, kStart + 17'300); // now is not on a round second

    QCOMPARE(axis.tickStepMs(minimumSpacing), step);
    const QList<qint64> ticks = axis.ticks(minimumSpacing);
    QVERIFY(!ticks.isEmpty());
    for (qsizetype i = 0; i < ticks.size(); ++i) {
        QCOMPARE(ticks[i] % step, 0); // round in UTC, the zone this test runs in
        QVERIFY(ticks[i] >= axis.startMs() && ticks[i] <= axis.endMs());
        if (i > 0)
            QCOMPARE(ticks[i] - ticks[i - 1], step);
    }
    QVERIFY(ticks.first() - axis.startMs() < step);
    QVERIFY(axis.endMs() - ticks.last() < step);
}

QTEST_MAIN(BreakerTimelineModelTest)
#include "tst_breaker_timeline_model.moc"
