// Traffic by provider: calls per second worked out on the console from the counters in each
// snapshot, on chosen timestamps, and the chart that draws them.

#include "ui/overview/provider_traffic.h"
#include "ui/overview/provider_traffic_chart.h"

#include <QTest>

using namespace switchyard;
using namespace switchyard::ui;
using namespace Qt::StringLiterals;

namespace {

constexpr qint64 kStart = 1'710'252'000'000;

ProviderHealth provider(const QString &id, quint64 requests, int inFlight = 0)
{
    ProviderHealth health;
    health.id = id;
    health.requests = requests;
    health.inFlight = inFlight;
    return health;
}

EngineSnapshot snapshotOf(const QList<ProviderHealth> &providers)
{
    EngineSnapshot snapshot;
    snapshot.providers = providers;
    return snapshot;
}

// Feeds `seconds` of snapshots at 10 Hz in which each provider starts calls at its own steady
// rate (calls per second), finishing them at once.
struct Feed {
    ProviderTrafficRates rates;
    QHash<QString, double> calls;
    qint64 nowMs = kStart;
    bool started = false;

    void run(double seconds, const QList<std::pair<QString, double>> &perSecond)
    {
        if (!started) {
            // The console's first snapshot, at kStart: points then fall on whole seconds.
            started = true;
            QList<ProviderHealth> providers;
            for (const auto &[id, rate] : perSecond)
                providers.append(provider(id, 0));
            rates.applySnapshot(snapshotOf(providers), nowMs);
        }
        const int ticks = int(seconds * 10);
        for (int tick = 0; tick < ticks; ++tick) {
            nowMs += 100;
            QList<ProviderHealth> providers;
            for (const auto &[id, rate] : perSecond) {
                calls[id] += rate / 10.0;
                providers.append(provider(id, quint64(calls[id] + 1e-9)));
            }
            rates.applySnapshot(snapshotOf(providers), nowMs);
        }
    }
    double last(const QString &id) const
    {
        const ProviderTrafficSeries *series = rates.series(id);
        return series && !series->points.isEmpty() ? series->points.last().callsPerSecond : -1.0;
    }
};

} // namespace

class ProviderTrafficTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void steadyTrafficGivesItsRate_data();
    void steadyTrafficGivesItsRate();
    void aTrippedProvidersTrafficMovesToTheOthers();
    void callsCountWhenTheyStart();
    void aCancelledCallNeverMakesARateNegative();
    void onePointPerSecondBoundedToTheHistory();
    void seriesFollowTheSnapshotsProviders();
    void aWallClockSteppingBackIsIgnored();
    void chartDrawsOneLinePerProviderWithRoundAxis();
};

void ProviderTrafficTest::steadyTrafficGivesItsRate_data()
{
    QTest::addColumn<double>("callsPerSecond");
    QTest::newRow("idle") << 0.0;
    QTest::newRow("demo share") << 8.0;
    QTest::newRow("busy") << 250.0;
}

void ProviderTrafficTest::steadyTrafficGivesItsRate()
{
    QFETCH(double, callsPerSecond);
    Feed feed;
    feed.run(10.0, {{u"p"_s, callsPerSecond}});
    QCOMPARE(feed.last(u"p"_s), callsPerSecond);
}

void ProviderTrafficTest::aTrippedProvidersTrafficMovesToTheOthers()
{
    Feed feed;
    feed.run(10.0, {{u"swift"_s, 12.0}, {u"steady"_s, 8.0}});
    QCOMPARE(feed.last(u"swift"_s), 12.0);
    QCOMPARE(feed.last(u"steady"_s), 8.0);

    // swift's breaker opens: its calls go to steady. Within the five-second window the rates
    // move part of the way; after it, all of it.
    feed.run(2.0, {{u"swift"_s, 0.0}, {u"steady"_s, 20.0}});
    QCOMPARE(feed.last(u"swift"_s), 12.0 * 3.0 / 5.0);
    QCOMPARE(feed.last(u"steady"_s), (8.0 * 3.0 + 20.0 * 2.0) / 5.0);
    feed.run(5.0, {{u"swift"_s, 0.0}, {u"steady"_s, 20.0}});
    QCOMPARE(feed.last(u"swift"_s), 0.0);
    QCOMPARE(feed.last(u"steady"_s), 20.0);
}

void ProviderTrafficTest::callsCountWhenTheyStart()
{
    ProviderTrafficRates rates;
    rates.applySnapshot(snapshotOf({provider(u"p"_s, 0, 0)}), kStart);
    // Ten slow calls started and none finished yet: ten calls in that second all the same.
    QVERIFY(rates.applySnapshot(snapshotOf({provider(u"p"_s, 0, 10)}), kStart + 1'000));
    QCOMPARE(rates.series(u"p"_s)->points.last().callsPerSecond, 10.0);
    // They finish: nothing new started.
    QVERIFY(rates.applySnapshot(snapshotOf({provider(u"p"_s, 10, 0)}), kStart + 2'000));
    QCOMPARE(rates.series(u"p"_s)->points.last().callsPerSecond, 5.0); // 10 over the 2 s seen
    QCOMPARE(ProviderTrafficRates::callsStarted(provider(u"p"_s, 7, 3)), quint64(10));
}

void ProviderTrafficTest::aCancelledCallNeverMakesARateNegative()
{
    ProviderTrafficRates rates;
    rates.applySnapshot(snapshotOf({provider(u"p"_s, 0, 4)}), kStart);
    // Two of four calls cancelled: in flight drops, requests stays.
    QVERIFY(rates.applySnapshot(snapshotOf({provider(u"p"_s, 0, 2)}), kStart + 1'000));
    QCOMPARE(rates.series(u"p"_s)->points.last().callsPerSecond, 0.0);
    // One new call after that counts as one.
    QVERIFY(rates.applySnapshot(snapshotOf({provider(u"p"_s, 0, 3)}), kStart + 2'000));
    QCOMPARE(rates.series(u"p"_s)->points.last().callsPerSecond, 0.5);
}

void ProviderTrafficTest::onePointPerSecondBoundedToTheHistory()
{
    Feed feed;
    feed.run(30.0, {{u"p"_s, 5.0}});
    // Ten snapshots a second, one point a second.
    QCOMPARE(feed.rates.series(u"p"_s)->points.size(), 30);

    feed.run(double(ProviderTrafficRates::kHistoryMs) / 1000.0 * 2, {{u"p"_s, 5.0}});
    const QList<TrafficPoint> &points = feed.rates.series(u"p"_s)->points;
    QCOMPARE(points.size(), ProviderTrafficRates::kMaxPoints);
    QVERIFY(feed.rates.nowMs() - points.first().atMs <= ProviderTrafficRates::kHistoryMs);
    QCOMPARE(points.last().atMs, feed.rates.nowMs());
}

void ProviderTrafficTest::seriesFollowTheSnapshotsProviders()
{
    ProviderTrafficRates rates;
    rates.applySnapshot(snapshotOf({provider(u"a"_s, 0), provider(u"b"_s, 0)}), kStart);
    rates.applySnapshot(snapshotOf({provider(u"a"_s, 5), provider(u"b"_s, 5)}), kStart + 1'000);
    // "a" retired, "c" added: "c" has no rate until it has been seen for a while.
    rates.applySnapshot(snapshotOf({provider(u"b"_s, 10), provider(u"c"_s, 100)}), kStart + 2'000);

    QCOMPARE(rates.series().size(), 2);
    QCOMPARE(rates.series()[0].providerId, u"b"_s);
    QCOMPARE(rates.series()[1].providerId, u"c"_s);
    QVERIFY(rates.series(u"c"_s)->points.isEmpty());
    QCOMPARE(rates.series(u"b"_s)->points.size(), 2);

    rates.applySnapshot(snapshotOf({provider(u"b"_s, 15), provider(u"c"_s, 103)}), kStart + 3'000);
    // Its counter's start (100 calls before the console saw it) never counts as traffic.
    QCOMPARE(rates.series(u"c"_s)->points.last().callsPerSecond, 3.0);
}

void ProviderTrafficTest::aWallClockSteppingBackIsIgnored()
{
    ProviderTrafficRates rates;
    rates.applySnapshot(snapshotOf({provider(u"p"_s, 0)}), kStart);
    rates.applySnapshot(snapshotOf({provider(u"p"_s, 10)}), kStart + 1'000);
    QVERIFY(!rates.applySnapshot(snapshotOf({provider(u"p"_s, 20)}), kStart + 500));
    QCOMPARE(rates.nowMs(), kStart + 1'000);
    QVERIFY(rates.applySnapshot(snapshotOf({provider(u"p"_s, 20)}), kStart + 2'000));
    QCOMPARE(rates.series(u"p"_s)->points.last().callsPerSecond, 10.0);
}

void ProviderTrafficTest::chartDrawsOneLinePerProviderWithRoundAxis()
{
    Feed feed;
    feed.run(10.0, {{u"swift"_s, 12.0}, {u"steady"_s, 31.0}});
    ProviderTrafficChart chart;
    chart.setRates(feed.rates);
    QCOMPARE(chart.shownProviders(), QStringList({u"swift"_s, u"steady"_s}));
    QCOMPARE(chart.axisMaximum(), 40.0);
    QVERIFY(ProviderTrafficChart::providerColor(0) != ProviderTrafficChart::providerColor(1));

    feed.run(1.0, {{u"steady"_s, 31.0}});
    chart.setRates(feed.rates);
    QCOMPARE(chart.shownProviders(), QStringList({u"steady"_s}));
}

QTEST_MAIN(ProviderTrafficTest)
#include "tst_provider_traffic.moc"
