// The breaker timeline and the traffic chart on screen, driven by a fake bridge through a
// scripted failover drill with chosen timestamps, so every run draws the same picture: hover
// text, wheel and drag, the Live button, and the screenshots in docs/screenshots.

#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/common/widget_helpers.h"
#include "ui/overview/breaker_events_model.h"
#include "ui/overview/breaker_timeline_panel.h"
#include "ui/overview/breaker_timeline_view.h"
#include "ui/overview/overview_page.h"
#include "ui/overview/provider_traffic.h"
#include "ui/overview/provider_traffic_chart.h"
#include "ui/shell/main_window.h"

#include <QDir>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTest>
#include <QVBoxLayout>
#include <QWheelEvent>
#include <cmath>

using namespace switchyard;
using namespace switchyard::ui;
using namespace Qt::StringLiterals;

namespace {

// 2024-03-12 14:00:00 UTC: the drill starts on a round minute, in the zone the test pins.
constexpr qint64 kStart = 1'710'252'000'000;
constexpr qint64 kSecond = 1'000;
constexpr qint64 kTickMs = 250;
constexpr double kClientRate = 25.0;

// The demo's three simulated providers through five minutes of a failover drill, as the
// engine would report it:
//   62.4 s  sim-swift fails five calls in a row (a drill set it to answer 500): open for 60 s
//  122.4 s  its open period ends: half-open, one probe let through
//  123.1 s  the probe succeeds: closed, ramping back from 5 % to full share over 60 s
//  200 s    an operator drains sim-deep, then disables it at 215 s and enables it at 245 s,
//           when it ramps back in; the drill ends at 300 s with sim-deep still ramping.
class Drill {
public:
    struct Provider {
        QString id;
        double weight;    // its usual share of the client traffic
        double latencyMs; // typical call latency
        double calls = 0; // calls started so far
        double errors = 0;
    };

    Drill()
    {
        m_providers = {{u"sim-swift"_s, 12.0, 340.0},
                       {u"sim-steady"_s, 8.0, 940.0},
                       {u"sim-deep"_s, 5.0, 2300.0}};
    }

    qint64 nowMs() const { return m_nowMs; }

    // Advances the drill to `atMs` in snapshot ticks, handing each snapshot to `deliver`.
    template <typename Deliver>
    void runUntil(qint64 atMs, Deliver &&deliver)
    {
        while (m_nowMs + kTickMs <= atMs) {
            m_nowMs += kTickMs;
            step();
            deliver(snapshot(), m_nowMs);
        }
    }

private:
    double seconds() const { return double(m_nowMs - kStart) / 1000.0; }

    void event(const QString &id, double atSeconds, BreakerState from, BreakerState to,
               const QString &reason, OperatorState operatorState)
    {
        BreakerEvent event;
        event.providerId = id;
        event.from = from;
        event.to = to;
        event.reason = reason;
        event.operatorState = operatorState;
        event.atMsSinceEpoch = kStart + qint64(std::llround(atSeconds * 1000.0));
        event.sequence = quint64(m_events.size()) + 1;
        m_events.append(event);
    }

    // Everything the script says happens up to now, once.
    void step()
    {
        const double t = seconds();
        const auto due = [&](double atSeconds, int index) {
            if (t >= atSeconds && m_fired <= index) {
                m_fired = index + 1;
                return true;
            }
            return false;
        };
        if (due(62.4, 0)) {
            event(u"sim-swift"_s, 62.4, BreakerState::Closed, BreakerState::Open,
                  u"5 consecutive call failures; open for 60 s"_s, OperatorState::Enabled);
        }
        if (due(122.4, 1)) {
            event(u"sim-swift"_s, 122.4, BreakerState::Open, BreakerState::HalfOpen,
                  u"open period over; letting one probe call through"_s, OperatorState::Enabled);
        }
        if (due(123.1, 2)) {
            event(u"sim-swift"_s, 123.1, BreakerState::HalfOpen, BreakerState::Closed,
                  u"probe call succeeded"_s, OperatorState::Enabled);
        }
        if (due(200.0, 3)) {
            event(u"sim-deep"_s, 200.0, BreakerState::Closed, BreakerState::Closed,
                  u"draining by operator"_s, OperatorState::Draining);
        }
        if (due(215.0, 4)) {
            event(u"sim-deep"_s, 215.0, BreakerState::Closed, BreakerState::Closed,
                  u"disabled by operator"_s, OperatorState::Disabled);
        }
        if (due(245.0, 5)) {
            event(u"sim-deep"_s, 245.0, BreakerState::Closed, BreakerState::Closed,
                  u"enabled by operator"_s, OperatorState::Enabled);
        }

        // Client traffic splits by weight times traffic share; a failing provider's calls are
        // retried on the others.
        double total = 0.0;
        QList<double> weights;
        for (const Provider &provider : std::as_const(m_providers)) {
            weights.append(provider.weight * share(provider.id));
            total += weights.last();
        }
        for (qsizetype i = 0; i < m_providers.size(); ++i) {
            Provider &provider = m_providers[i];
            double rate = kClientRate * weights[i] / total;
            if (provider.id != u"sim-swift"_s && failing())
                rate += kClientRate * weights[0] / total * weights[i] / (total - weights[0]);
            provider.calls += rate * double(kTickMs) / 1000.0;
            if (provider.id == u"sim-swift"_s && failing())
                provider.errors += rate * double(kTickMs) / 1000.0;
        }
    }

    bool failing() const { return seconds() >= 62.0 && seconds() < 62.4; }

    BreakerState breaker(const QString &id) const
    {
        const double t = seconds();
        if (id != u"sim-swift"_s || t < 62.4 || t >= 123.1)
            return BreakerState::Closed;
        return t < 122.4 ? BreakerState::Open : BreakerState::HalfOpen;
    }

    OperatorState operatorState(const QString &id) const
    {
        const double t = seconds();
        if (id != u"sim-deep"_s || t < 200.0 || t >= 245.0)
            return OperatorState::Enabled;
        return t < 215.0 ? OperatorState::Draining : OperatorState::Disabled;
    }

    // The engine's ramp: 5 % back to full over 60 s after a close or an enable.
    double share(const QString &id) const
    {
        const double t = seconds();
        if (breaker(id) == BreakerState::Open || operatorState(id) != OperatorState::Enabled)
            return 0.0;
        if (breaker(id) == BreakerState::HalfOpen)
            return 0.05;
        const double rampStart = id == u"sim-swift"_s ? 123.1 : id == u"sim-deep"_s ? 245.0 : -1;
        if (rampStart < 0 || t < rampStart || t >= rampStart + 60.0)
            return 1.0;
        return 0.05 + 0.95 * (t - rampStart) / 60.0;
    }

    EngineSnapshot snapshot() const
    {
        EngineSnapshot snapshot;
        snapshot.listenAddress = u"127.0.0.1:8080"_s;
        snapshot.requestsPerSecond = kClientRate;
        snapshot.totalRequests = quint64(kClientRate * seconds());
        snapshot.demoTrafficRunning = true;
        snapshot.demoRequestsPerSecond = kClientRate;
        snapshot.connections.open = 18;
        snapshot.inFlight = 23;
        for (const Provider &provider : m_providers) {
            ProviderHealth health;
            health.id = provider.id;
            health.kind = u"simulated"_s;
            health.models = {u"demo-light"_s};
            health.simulated = true;
            health.breaker = breaker(provider.id);
            health.operatorState = operatorState(provider.id);
            health.trafficShare = share(provider.id);
            const double rate = kClientRate * provider.weight / 25.0 * health.trafficShare;
            health.inFlight = int(std::lround(rate * provider.latencyMs / 1000.0));
            health.requests = quint64(std::max(0.0, provider.calls - health.inFlight));
            health.errors = quint64(provider.errors);
            health.recentCalls = 20;
            health.p50LatencyMs = provider.latencyMs;
            health.p95LatencyMs = provider.latencyMs * 1.15;
            health.p50TimeToFirstTokenMs = provider.latencyMs * 0.18;
            if (health.breaker == BreakerState::Open) {
                health.state = ProviderState::Down;
                health.breakerReason = u"5 consecutive call failures; open for 60 s"_s;
                health.msUntilHalfOpen = qint64((122.4 - seconds()) * 1000.0);
                health.lastFailure = u"HTTP 500"_s;
            } else if (health.breaker == BreakerState::HalfOpen) {
                health.state = ProviderState::Degraded;
                health.breakerReason = u"open period over; letting one probe call through"_s;
            } else if (health.operatorState == OperatorState::Disabled) {
                health.state = ProviderState::Down;
            } else if (health.trafficShare < 1.0 ||
                       health.operatorState == OperatorState::Draining) {
                health.state = ProviderState::Degraded;
            }
            if (provider.id == u"sim-swift"_s && seconds() >= 62.0 && seconds() < 118.0)
                health.simulatorMode = SimulatorKnobs::Mode::ServerError;
            snapshot.providers.append(health);
        }
        snapshot.recentBreakerEvents = m_events;
        return snapshot;
    }

    QList<Provider> m_providers;
    QList<BreakerEvent> m_events;
    qint64 m_nowMs = kStart - kTickMs;
    int m_fired = 0;
};

// A panel on the console's page background, styled as in the main window, for a picture of the
// card alone.
struct StyledPanel {
    StyledPanel()
    {
        page.setObjectName(u"overviewPage"_s);
        page.setStyleSheet(consoleStyleSheet());
        auto *layout = new QVBoxLayout(&page);
        layout->setContentsMargins(16, 16, 16, 16);
        panel = new BreakerTimelinePanel(&page);
        layout->addWidget(panel);
    }
    QWidget page;
    BreakerTimelinePanel *panel = nullptr;
};

QPointF markerPosition(const BreakerTimelineView &view, int lane, qint64 atMs)
{
    return QPointF(view.plotRect().left() + view.axis().xOf(atMs),
                   view.bandRect(lane).center().y());
}

void wheel(QWidget *widget, const QPointF &position, int notches)
{
    QWheelEvent event(position, widget->mapToGlobal(position), QPoint(), QPoint(0, notches * 120),
                      Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QCoreApplication::sendEvent(widget, &event);
}

} // namespace

class BreakerTimelineViewTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void hoverExplainsMarkersBandsAndTheOperatorStripe();
    void droppedHistoryIsLabelled();
    void wheelZoomsDragPansAndLiveReturns();
    void transitionsTableIsOneSwitchAway();
    void drillOnTheOverview();
    void timelineCardAfterADrill();

private:
    QString screenshotPath(const QString &fileName) const;
    QTemporaryDir m_scratch;
};

void BreakerTimelineViewTest::initTestCase()
{
    qputenv("TZ", "UTC");
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QVERIFY(m_scratch.isValid());
}

QString BreakerTimelineViewTest::screenshotPath(const QString &fileName) const
{
    return switchyard::testing::screenshotPath(m_scratch.path(), fileName);
}

void BreakerTimelineViewTest::hoverExplainsMarkersBandsAndTheOperatorStripe()
{
    StyledPanel styled;
    styled.page.resize(1000, 320);
    Drill drill;
    drill.runUntil(kStart + 300 * kSecond, [&](const EngineSnapshot &snapshot, qint64 atMs) {
        styled.panel->applySnapshot(snapshot, atMs);
    });
    styled.page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&styled.page));
    BreakerTimelineView &view = *styled.panel->timelineView();
    view.refresh();

    // The trip: its marker carries the engine's reason.
    const QString trip = view.toolTipAt(markerPosition(view, 0, kStart + 62'400));
    QVERIFY2(trip.contains(u"sim-swift · 14:01:02"_s), qPrintable(trip));
    QVERIFY2(trip.contains(u"Closed → Open"_s), qPrintable(trip));
    QVERIFY2(trip.contains(u"5 consecutive call failures; open for 60 s"_s), qPrintable(trip));

    // Between markers, the band says what the breaker was and for how long.
    const QString open = view.toolTipAt(markerPosition(view, 0, kStart + 90 * kSecond));
    QVERIFY2(open.contains(u"Open<br>14:01:02 – 14:02:02 (1 min)"_s), qPrintable(open));
    const QString ramp = view.toolTipAt(markerPosition(view, 0, kStart + 150 * kSecond));
    QVERIFY2(ramp.contains(u"Ramping: closed after a recovery"_s), qPrintable(ramp));
    QVERIFY2(ramp.contains(u"14:02:03 – 14:03:03 (1 min)"_s), qPrintable(ramp));

    // sim-deep's stripe: the operator's doing, under a breaker that stayed closed.
    const QRectF stripe = view.operatorStripeRect(2);
    const double disabledX = view.plotRect().left() + view.axis().xOf(kStart + 230 * kSecond);
    const QString disabled = view.toolTipAt(QPointF(disabledX, stripe.center().y()));
    QVERIFY2(disabled.contains(u"Disabled by an operator: no traffic<br>14:03:35 – 14:04:05 "
                               u"(30 s)"_s),
             qPrintable(disabled));
    const QString under = view.toolTipAt(QPointF(disabledX, view.bandRect(2).center().y()));
    QVERIFY2(under.contains(u"<b>sim-deep</b><br>Closed<br>"_s), qPrintable(under));
    const QString enable = view.toolTipAt(QPointF(
        view.plotRect().left() + view.axis().xOf(kStart + 245 * kSecond), stripe.center().y()));
    QVERIFY2(enable.contains(u"Breaker Closed, operator: Enabled<br>enabled by operator"_s),
             qPrintable(enable));

    QVERIFY(view.toolTipAt(QPointF(5, 5)).isEmpty()); // the legend explains itself
}

void BreakerTimelineViewTest::droppedHistoryIsLabelled()
{
    TimelineLimits limits;
    limits.maxAgeMs = 120 * kSecond;
    BreakerTimelineModel model(limits);
    Drill drill;
    drill.runUntil(kStart + 300 * kSecond, [&](const EngineSnapshot &snapshot, qint64 atMs) {
        model.applySnapshot(snapshot, atMs);
    });
    BreakerTimelineView view(model);
    view.resize(800, 200);
    view.refresh();

    // Two minutes kept; zoomed out as far as it goes, the view reaches a little before them
    // and that stretch says why it is empty.
    QVERIFY(model.lanes().first().olderHistoryDropped);
    QCOMPARE(model.earliestMs(), kStart + 180 * kSecond);
    QCOMPARE(view.axis().spanMs(), qint64(144 * kSecond));
    QCOMPARE(view.axis().startMs(), kStart + 156 * kSecond);
    const QString text = view.toolTipAt(markerPosition(view, 0, kStart + 170 * kSecond));
    QVERIFY2(text.contains(u"Older history was dropped: the timeline keeps the last 2 min and "
                           u"at most 500 changes per provider."_s),
             qPrintable(text));
}

void BreakerTimelineViewTest::wheelZoomsDragPansAndLiveReturns()
{
    StyledPanel styled;
    styled.page.resize(1000, 320);
    Drill drill;
    const auto deliver = [&](const EngineSnapshot &snapshot, qint64 atMs) {
        styled.panel->applySnapshot(snapshot, atMs);
    };
    drill.runUntil(kStart + 300 * kSecond, deliver);
    styled.page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&styled.page));
    BreakerTimelineView &view = *styled.panel->timelineView();
    QPushButton &live = *styled.panel->liveButton();
    QVERIFY(live.isChecked());
    QCOMPARE(view.axis().spanMs(), TimelineAxis::kDefaultSpanMs);

    // A notch in, over the trip: the trip stays under the cursor, the view stops following.
    const QPointF atTrip = markerPosition(view, 0, kStart + 62'400);
    wheel(&view, atTrip, 1);
    QCOMPARE(view.axis().spanMs(), qint64(240'000));
    QVERIFY(std::abs(view.axis().timeAt(atTrip.x() - view.plotRect().left()) - (kStart + 62'400)) <=
            1);
    QVERIFY(!view.axis().following());
    QVERIFY(!live.isChecked());

    // New snapshots do not move a view that looks back.
    const qint64 endBefore = view.axis().endMs();
    drill.runUntil(kStart + 302 * kSecond, deliver);
    QCOMPARE(view.axis().endMs(), endBefore);

    // A drag to the right looks further back.
    const QPoint from = atTrip.toPoint();
    QTest::mousePress(&view, Qt::LeftButton, Qt::NoModifier, from);
    QTest::mouseMove(&view, from + QPoint(60, 0));
    QTest::mouseRelease(&view, Qt::LeftButton, Qt::NoModifier, from + QPoint(60, 0));
    QVERIFY(view.axis().endMs() < endBefore);

    live.click();
    QVERIFY(view.axis().following());
    QVERIFY(live.isChecked());
    QCOMPARE(view.axis().endMs(), kStart + 302 * kSecond);

    // Dragging back past the present resumes following too.
    QTest::mousePress(&view, Qt::LeftButton, Qt::NoModifier, from);
    QTest::mouseMove(&view, from + QPoint(40, 0));
    QVERIFY(!live.isChecked());
    QTest::mouseMove(&view, from - QPoint(200, 0));
    QTest::mouseRelease(&view, Qt::LeftButton, Qt::NoModifier, from - QPoint(200, 0));
    QVERIFY(live.isChecked());
}

void BreakerTimelineViewTest::transitionsTableIsOneSwitchAway()
{
    StyledPanel styled;
    Drill drill;
    drill.runUntil(kStart + 300 * kSecond, [&](const EngineSnapshot &snapshot, qint64 atMs) {
        styled.panel->applySnapshot(snapshot, atMs);
    });
    QVERIFY(!styled.panel->showsTransitions());
    auto *button = styled.panel->findChild<QPushButton *>(u"timelineTransitionsButton"_s);
    QVERIFY(button);
    button->click();
    QVERIFY(styled.panel->showsTransitions());
    QVERIFY(!styled.panel->liveButton()->isVisibleTo(&styled.page));
    const BreakerEventsModel &events = *styled.panel->eventsModel();
    QCOMPARE(events.rowCount(), 6);
    QCOMPARE(events.index(0, BreakerEventsModel::ReasonColumn).data().toString(),
             u"enabled by operator"_s);
    QCOMPARE(events.index(5, BreakerEventsModel::ChangeColumn).data().toString(),
             u"Closed → Open"_s);
}

void BreakerTimelineViewTest::drillOnTheOverview()
{
    testing::FakeEngineBridge bridge;
    // The window's first, empty snapshot a second early: rate points then fall on whole seconds.
    timing::ManualClock clock(kStart - kSecond);
    MainWindow window(bridge, nullptr, clock);
    window.resize(1280, 900);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));

    Drill drill;
    drill.runUntil(kStart + 300 * kSecond, [&](const EngineSnapshot &snapshot, qint64 atMs) {
        clock.advanceTo(atMs);
        bridge.publish(snapshot);
    });

    // Widgets added to a shown window (the drill rows) appear on the next turn of the loop.
    QCoreApplication::processEvents();
    OverviewPage &overview = *window.overviewPage();
    const BreakerTimelineModel &timeline = overview.breakerTimeline()->timelineModel();
    QCOMPARE(timeline.lanes().size(), 3);
    const TimelineLane &swift = *timeline.lane(u"sim-swift"_s);
    QCOMPARE(swift.stateAt(kStart + 62'399), LaneState::Closed);
    QCOMPARE(swift.stateAt(kStart + 62'400), LaneState::Open);
    QCOMPARE(swift.stateAt(kStart + 122'400), LaneState::HalfOpen);
    QCOMPARE(swift.stateAt(kStart + 123'100), LaneState::Ramping);
    // The ramp's end is seen by the first snapshot at full share, one tick after it.
    QCOMPARE(swift.stateAt(kStart + 183'249), LaneState::Ramping);
    QCOMPARE(swift.stateAt(kStart + 183'250), LaneState::Closed);
    const TimelineLane &deep = *timeline.lane(u"sim-deep"_s);
    QCOMPARE(deep.stateAt(kStart + 230 * kSecond), LaneState::Closed);
    QCOMPARE(deep.operatorStateAt(kStart + 230 * kSecond), OperatorState::Disabled);
    QCOMPARE(deep.stateAt(kStart + 300 * kSecond), LaneState::Ramping);

    // Traffic left sim-swift while it was open and came back along its ramp.
    const ProviderTrafficRates &traffic = overview.providerTraffic();
    const auto rateAt = [&](const QString &id, qint64 atMs) {
        for (const TrafficPoint &point : traffic.series(id)->points) {
            if (point.atMs == atMs)
                return point.callsPerSecond;
        }
        return -1.0;
    };
    QCOMPARE(rateAt(u"sim-swift"_s, kStart + 100 * kSecond), 0.0);
    QVERIFY(rateAt(u"sim-steady"_s, kStart + 100 * kSecond) > 14.0);
    QVERIFY(rateAt(u"sim-swift"_s, kStart + 190 * kSecond) > 11.0);
    QCOMPARE(rateAt(u"sim-deep"_s, kStart + 235 * kSecond), 0.0);
    auto *chart = window.findChild<ProviderTrafficChart *>(u"providerTrafficChart"_s);
    QVERIFY(chart);
    QCOMPARE(chart->shownProviders(),
             QStringList({u"sim-swift"_s, u"sim-steady"_s, u"sim-deep"_s}));

    const QString path = screenshotPath(u"overview_drill.png"_s);
    QVERIFY2(window.grab().save(path), qPrintable(path));
    qInfo("overview screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));
}

void BreakerTimelineViewTest::timelineCardAfterADrill()
{
    StyledPanel styled;
    styled.page.resize(1100, 330);
    Drill drill;
    drill.runUntil(kStart + 300 * kSecond, [&](const EngineSnapshot &snapshot, qint64 atMs) {
        styled.panel->applySnapshot(snapshot, atMs);
    });
    styled.page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&styled.page));
    const QString path = screenshotPath(u"breaker_timeline.png"_s);
    QVERIFY2(styled.page.grab().save(path), qPrintable(path));
    qInfo("timeline screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));
}

QTEST_MAIN(BreakerTimelineViewTest)
#include "tst_breaker_timeline_view.moc"
