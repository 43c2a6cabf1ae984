// The circuit breaker, operator actions, probe health and the recovery ramp of the health
// registry, on a hand-stepped clock: every number of docs/resilience.md's "Health and the circuit
// breaker" is checked.

#include "health/health_registry.h"
#include "timing/clock.h"

#include <QLoggingCategory>
#include <QTest>

using namespace switchyard;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using health::CallOutcome;
using health::HealthRegistry;
using timing::ManualClock;

Q_DECLARE_METATYPE(switchyard::OperatorState)
Q_DECLARE_METATYPE(switchyard::BreakerState)
Q_DECLARE_METATYPE(switchyard::BreakerCause)
Q_DECLARE_METATYPE(switchyard::ProviderState)

namespace {

// Latency objective of the endpoint under test: the slow rule fires above 2 × 1000 ms.
constexpr std::chrono::milliseconds kObjective = 1000ms;

config::ProviderConfig endpoint(const QString &id)
{
    config::ProviderConfig provider;
    provider.id = id;
    provider.models = {{u"m"_s, u"m"_s}};
    provider.latencyObjective = kObjective;
    return provider;
}

// One registry with one endpoint ("p", index 0) on a manual clock, recording every event.
// One endpoint under the given breaker and probe rules.
config::Config withRules(const config::BreakerConfig &breaker, const config::ProbeConfig &probes)
{
    config::Config config;
    config.providers = {endpoint(u"p"_s)};
    config.resilience.breaker = breaker;
    config.resilience.probes = probes;
    return config;
}

struct Fixture {
    explicit Fixture(const config::BreakerConfig &breaker = {},
                     const config::ProbeConfig &probes = {})
        : store(withRules(breaker, probes)), registry(store, clock)
    {
        registry.setEventSink([this](const BreakerEvent &event) { events.append(event); });
    }

    void call(CallOutcome outcome, double latencyMs = 100, double timeToFirstTokenMs = -1)
    {
        registry.callStarted(0);
        registry.callFinished(0, outcome, latencyMs, timeToFirstTokenMs, u"HTTP 500"_s);
    }
    // S success, F call failure, U unusable answer, R request fault, C cancelled.
    void call(QChar code)
    {
        switch (code.unicode()) {
        case 'S':
            return call(CallOutcome::Success);
        case 'F':
            return call(CallOutcome::CallFailure);
        case 'U':
            return call(CallOutcome::Unusable);
        case 'R':
            return call(CallOutcome::RequestFault);
        default:
            return call(CallOutcome::Cancelled);
        }
    }
    void trip() { registry.applyAction(0, ProviderAction::Trip); }
    // From open to half-open, by letting the open period run out.
    void waitOutOpenPeriod()
    {
        clock.advance(std::chrono::milliseconds(registry.msUntilAdmit(0)));
        registry.updateTimedStates();
    }
    BreakerState breaker() const { return registry.breakerState(0); }
    QString lastReason() const { return events.isEmpty() ? QString() : events.last().reason; }

    ManualClock clock;
    config::ConfigStore store;
    HealthRegistry registry;
    QList<BreakerEvent> events;
};

} // namespace

class TestCircuitBreaker : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        // Every transition is logged at info; hundreds of them would bury the test's output.
        QLoggingCategory::setFilterRules(u"switchyard.*.info=false"_s);
    }
    void callPatternsOpenTheBreaker_data();
    void callPatternsOpenTheBreaker();
    void slowP95OpensTheBreaker_data();
    void slowP95OpensTheBreaker();
    void slowCallsLeaveTheWindow();
    void slowRuleCanBeTurnedOff();
    void openPeriodEndsInHalfOpen();
    void halfOpenAdmitsExactlyOneCall_data();
    void halfOpenAdmitsExactlyOneCall();
    void halfOpenProbeReleasedByAnUninformativeOutcome();
    void reTripsDoubleTheOpenPeriodUpToTheCap();
    void newBreakerRulesResizeTheWindowsOfKeptEndpoints();
    void tripLevelIsForgottenAfterStayingClosed();
    void qualityAndRequestFaultsNeverTrip();
    void callsFinishingWhileOpenDecideNothing();
    void operatorActions_data();
    void operatorActions();
    void breakerEventsCarryTheOperatorStateInForce();
    void drainingLetsCallsInFlightFinish();
    void resetClosesAndForgets();
    void recoveryRampsTrafficShare_data();
    void recoveryRampsTrafficShare();
    void probeFailuresHoldTheEndpointOut();
    void probeResultsDecideAHalfOpenBreaker_data();
    void probeResultsDecideAHalfOpenBreaker();
    void eventsCarryEndpointStatesReasonAndTime();
    void eventRingIsBounded();
    void summaryStateFollowsBreakerAndFailures();
    void providersAreAddedAndRetiredWithStableIndices();
    void latencyMedianFollowsNewSamples();
};

void TestCircuitBreaker::callPatternsOpenTheBreaker_data()
{
    QTest::addColumn<QString>("calls");
    QTest::addColumn<int>("opensAtCall"); // 1-based; 0 when it stays closed
    QTest::addColumn<QString>("reason");
    QTest::addColumn<BreakerCause>("cause"); // read only when it opens

    const QString twentyGood = u"S"_s.repeated(20);
    QTest::newRow("5 consecutive failures")
        << twentyGood + u"FFFFF"_s << 25 << u"5 consecutive call failures; open for 60 s"_s
        << BreakerCause::ConsecutiveFailures;
    QTest::newRow("4 consecutive failures are not enough")
        << twentyGood + u"FFFF"_s << 0 << QString() << BreakerCause::ConsecutiveFailures;
    QTest::newRow("more than 40 % of 5 calls")
        << u"FSFSF"_s << 5 << u"3 of the last 5 calls failed (more than 40 %); open for 60 s"_s
        << BreakerCause::FailureRate;
    QTest::newRow("75 % of only 4 calls")
        << u"FFSF"_s << 0 << QString() << BreakerCause::ConsecutiveFailures;
    // The rate is over the calls seen; a success can be the call that makes it count.
    QTest::newRow("the fifth call is a success")
        << u"FFSFS"_s << 5 << u"3 of the last 5 calls failed (more than 40 %); open for 60 s"_s
        << BreakerCause::FailureRate;
    QTest::newRow("exactly 40 % of 20") << u"S"_s.repeated(12) + u"FFFFSFFFF"_s << 0 << QString()
                                        << BreakerCause::ConsecutiveFailures;
    QTest::newRow("45 % of the last 20")
        << u"S"_s.repeated(12) + u"FFFFSFFFFSF"_s << 23
        << u"9 of the last 20 calls failed (more than 40 %); open for 60 s"_s
        << BreakerCause::FailureRate;
    QTest::newRow("unusable answers between failures keep the count")
        << u"FFFFUF"_s << 6 << u"5 consecutive call failures; open for 60 s"_s
        << BreakerCause::ConsecutiveFailures;
    QTest::newRow("cancelled calls say nothing")
        << u"SCCCCCCCCCCS"_s << 0 << QString() << BreakerCause::ConsecutiveFailures;
}

void TestCircuitBreaker::callPatternsOpenTheBreaker()
{
    QFETCH(QString, calls);
    QFETCH(int, opensAtCall);
    QFETCH(QString, reason);
    QFETCH(BreakerCause, cause);
    Fixture fixture;

    for (int i = 0; i < calls.size(); ++i) {
        fixture.call(calls[i]);
        const bool shouldBeOpen = opensAtCall > 0 && i + 1 >= opensAtCall;
        QCOMPARE(fixture.breaker() == BreakerState::Open, shouldBeOpen);
    }
    if (opensAtCall == 0) {
        QVERIFY(fixture.events.isEmpty());
        QVERIFY(fixture.registry.selectable(0));
        return;
    }
    QCOMPARE(fixture.events.size(), 1);
    QCOMPARE(fixture.events.first().from, BreakerState::Closed);
    QCOMPARE(fixture.events.first().to, BreakerState::Open);
    QCOMPARE(fixture.events.first().reason, reason);
    QCOMPARE(fixture.events.first().cause, cause);
    QVERIFY(!fixture.registry.selectable(0));
    QVERIFY(!fixture.registry.tryAdmit(0));
}

void TestCircuitBreaker::slowP95OpensTheBreaker_data()
{
    // Each entry is one successful call's latency in ms; negative entries are streamed calls
    // whose first token came after 100 ms while the whole stream took that many ms.
    QTest::addColumn<QList<double>>("latencies");
    QTest::addColumn<int>("opensAtCall");

    QTest::newRow("20 slow calls") << QList<double>(20, 2500) << 20;
    QTest::newRow("19 slow calls are too few to judge") << QList<double>(19, 2500) << 0;
    QTest::newRow("at the threshold is not above it") << QList<double>(20, 2000) << 0;
    QList<double> oneSlowInTwenty(19, 100);
    oneSlowInTwenty.append(2500);
    QTest::newRow("1 slow call in 20 is within the p95") << oneSlowInTwenty << 0;
    QList<double> twoSlowInTwenty(18, 100);
    twoSlowInTwenty << 2500 << 2500;
    QTest::newRow("2 slow calls in 20 put the p95 above") << twoSlowInTwenty << 20;
    QTest::newRow("long streams with a quick first token") << QList<double>(20, -30000) << 0;
}

void TestCircuitBreaker::slowP95OpensTheBreaker()
{
    QFETCH(QList<double>, latencies);
    QFETCH(int, opensAtCall);
    Fixture fixture;

    for (int i = 0; i < latencies.size(); ++i) {
        if (latencies[i] < 0)
            fixture.call(CallOutcome::Success, -latencies[i], 100);
        else
            fixture.call(CallOutcome::Success, latencies[i]);
        const bool shouldBeOpen = opensAtCall > 0 && i + 1 >= opensAtCall;
        QCOMPARE(fixture.breaker() == BreakerState::Open, shouldBeOpen);
    }
    if (opensAtCall > 0) {
        QCOMPARE(fixture.lastReason(), u"p95 latency over the last 60 s is above 2000 ms "
                                       u"(2 × the 1000 ms objective); open for 60 s"_s);
    }
}

void TestCircuitBreaker::slowCallsLeaveTheWindow()
{
    Fixture recent;
    for (int i = 0; i < 19; ++i)
        recent.call(CallOutcome::Success, 2500);
    recent.clock.advance(30s);
    recent.call(CallOutcome::Success, 100);
    QCOMPARE(recent.breaker(), BreakerState::Open); // 19 of 20 calls in the last minute were slow

    Fixture old;
    for (int i = 0; i < 19; ++i)
        old.call(CallOutcome::Success, 2500);
    old.clock.advance(61s);
    for (int i = 0; i < 20; ++i)
        old.call(CallOutcome::Success, 100);
    QCOMPARE(old.breaker(), BreakerState::Closed);
}

void TestCircuitBreaker::slowRuleCanBeTurnedOff()
{
    config::BreakerConfig breaker;
    breaker.slowP95Factor = 0;
    Fixture fixture(breaker);
    for (int i = 0; i < 20; ++i)
        fixture.call(CallOutcome::Success, 99'000);
    QCOMPARE(fixture.breaker(), BreakerState::Closed);
}

void TestCircuitBreaker::openPeriodEndsInHalfOpen()
{
    Fixture fixture;
    fixture.trip();
    QCOMPARE(fixture.registry.msUntilAdmit(0), 60'000);
    QCOMPARE(fixture.registry.snapshot().first().msUntilHalfOpen, 60'000);

    fixture.clock.advance(59'999ms);
    fixture.registry.updateTimedStates();
    QCOMPARE(fixture.breaker(), BreakerState::Open);
    QCOMPARE(fixture.registry.msUntilAdmit(0), 1);
    QVERIFY(!fixture.registry.selectable(0));

    fixture.clock.advance(1ms);
    fixture.registry.updateTimedStates();
    QCOMPARE(fixture.breaker(), BreakerState::HalfOpen);
    QCOMPARE(fixture.events.last().from, BreakerState::Open);
    QCOMPARE(fixture.events.last().to, BreakerState::HalfOpen);
    QCOMPARE(fixture.lastReason(), u"open period over; letting one probe call through"_s);
    QCOMPARE(fixture.registry.msUntilAdmit(0), 0);
    QCOMPARE(fixture.registry.snapshot().first().msUntilHalfOpen, -1);
    QVERIFY(fixture.registry.selectable(0));
}

void TestCircuitBreaker::halfOpenAdmitsExactlyOneCall_data()
{
    QTest::addColumn<CallOutcome>("probeOutcome");
    QTest::addColumn<BreakerState>("after");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<qint64>("msUntilAdmit");

    QTest::newRow("success closes")
        << CallOutcome::Success << BreakerState::Closed << u"probe call succeeded"_s << qint64(0);
    QTest::newRow("failure opens for twice as long")
        << CallOutcome::CallFailure << BreakerState::Open
        << u"probe call failed: HTTP 500; open for 120 s"_s << qint64(120'000);
}

void TestCircuitBreaker::halfOpenAdmitsExactlyOneCall()
{
    QFETCH(CallOutcome, probeOutcome);
    QFETCH(BreakerState, after);
    QFETCH(QString, reason);
    QFETCH(qint64, msUntilAdmit);
    Fixture fixture;
    fixture.trip();
    fixture.clock.advance(60s);

    // No timer ran: the executor's own tryAdmit moves the breaker to half-open.
    QVERIFY(fixture.registry.tryAdmit(0));
    QCOMPARE(fixture.breaker(), BreakerState::HalfOpen);
    QVERIFY(!fixture.registry.tryAdmit(0));
    QVERIFY(!fixture.registry.selectable(0));
    QCOMPARE(fixture.registry.msUntilAdmit(0), -1);

    fixture.call(probeOutcome);

    QCOMPARE(fixture.breaker(), after);
    QCOMPARE(fixture.lastReason(), reason);
    QCOMPARE(fixture.registry.msUntilAdmit(0), msUntilAdmit);
}

void TestCircuitBreaker::halfOpenProbeReleasedByAnUninformativeOutcome()
{
    Fixture fixture;
    fixture.trip();
    fixture.waitOutOpenPeriod();
    for (const CallOutcome outcome :
         {CallOutcome::RequestFault, CallOutcome::Unusable, CallOutcome::Cancelled}) {
        QVERIFY(fixture.registry.tryAdmit(0));
        QVERIFY(!fixture.registry.tryAdmit(0));
        fixture.call(outcome);
        QCOMPARE(fixture.breaker(), BreakerState::HalfOpen);
    }
    QVERIFY(fixture.registry.tryAdmit(0));
}

void TestCircuitBreaker::newBreakerRulesResizeTheWindowsOfKeptEndpoints()
{
    Fixture fixture;
    // As the engine applies a snapshot: the registry follows it first, then the store swaps.
    const auto apply = [&fixture](const config::BreakerConfig &breaker) {
        const auto next = std::make_shared<const config::Config>(withRules(breaker, {}));
        fixture.registry.syncConfiguredEndpoints(*next);
        fixture.store.replace(next);
    };
    const auto calls = [&fixture](int count) {
        for (int i = 0; i < count; ++i)
            fixture.call(CallOutcome::Success);
    };
    calls(12);
    QCOMPARE(fixture.registry.recentCallCount(0), 12);

    // A breaker that looks at the last 4 calls only: `p` keeps its slot and its counters.
    config::BreakerConfig narrower;
    narrower.window = 4;
    apply(narrower);
    QCOMPARE(fixture.registry.indexOf(u"p"_s), 0);
    QCOMPARE(fixture.registry.recentCallCount(0), 0); // the history went with the old size
    calls(12);
    QCOMPARE(fixture.registry.recentCallCount(0), 4);
    QCOMPARE(fixture.registry.snapshot().first().requests, quint64(24));

    apply(narrower); // the same rules: nothing is rebuilt
    QCOMPARE(fixture.registry.recentCallCount(0), 4);
    apply({}); // back to the default of 20
    calls(6);
    QCOMPARE(fixture.registry.recentCallCount(0), 6);
}

void TestCircuitBreaker::reTripsDoubleTheOpenPeriodUpToTheCap()
{
    Fixture fixture;
    fixture.trip();
    QCOMPARE(fixture.registry.msUntilAdmit(0), 60'000);
    for (const qint64 expected : {120'000, 240'000, 300'000, 300'000}) {
        fixture.waitOutOpenPeriod();
        QVERIFY(fixture.registry.tryAdmit(0));
        fixture.call(CallOutcome::CallFailure);
        QCOMPARE(fixture.breaker(), BreakerState::Open);
        QCOMPARE(fixture.registry.msUntilAdmit(0), expected);
    }
    QCOMPARE(fixture.lastReason(), u"probe call failed: HTTP 500; open for 300 s"_s);
}

void TestCircuitBreaker::tripLevelIsForgottenAfterStayingClosed()
{
    Fixture fixture;
    fixture.trip();
    fixture.waitOutOpenPeriod();
    fixture.call(CallOutcome::Success);
    QCOMPARE(fixture.breaker(), BreakerState::Closed);

    // Tripping again soon after recovering: still backing off.
    fixture.clock.advance(4min);
    fixture.trip();
    QCOMPARE(fixture.registry.msUntilAdmit(0), 120'000);

    fixture.waitOutOpenPeriod();
    fixture.call(CallOutcome::Success);
    // Closed for a whole maximum open period: the next trip starts over.
    fixture.clock.advance(5min);
    fixture.trip();
    QCOMPARE(fixture.registry.msUntilAdmit(0), 60'000);
}

void TestCircuitBreaker::qualityAndRequestFaultsNeverTrip()
{
    Fixture fixture;
    for (int i = 0; i < 30; ++i) {
        fixture.call(CallOutcome::Unusable);
        fixture.call(CallOutcome::RequestFault);
    }
    QCOMPARE(fixture.breaker(), BreakerState::Closed);
    QCOMPARE(fixture.registry.state(0), ProviderState::Up);
    const ProviderHealth health = fixture.registry.snapshot().first();
    QCOMPARE(health.unusableAnswers, quint64(30));
    QCOMPARE(health.requests, quint64(60));
    QCOMPARE(health.errors, quint64(30)); // unusable answers are errors the client saw
    QCOMPARE(health.recentCalls, 0);
    QVERIFY(fixture.events.isEmpty());
}

void TestCircuitBreaker::callsFinishingWhileOpenDecideNothing()
{
    Fixture fixture;
    fixture.registry.callStarted(0);
    fixture.trip();
    fixture.registry.callFinished(0, CallOutcome::Success, 50, -1);
    QCOMPARE(fixture.breaker(), BreakerState::Open);
    QCOMPARE(fixture.registry.inFlight(0), 0);
    QCOMPARE(fixture.registry.snapshot().first().requests, quint64(1));
}

void TestCircuitBreaker::operatorActions_data()
{
    QTest::addColumn<ProviderAction>("action");
    QTest::addColumn<bool>("selectable");
    QTest::addColumn<OperatorState>("operatorState");
    QTest::addColumn<BreakerState>("breaker");
    QTest::addColumn<ProviderState>("state");
    QTest::addColumn<QString>("reason");

    QTest::newRow("disable") << ProviderAction::Disable << false << OperatorState::Disabled
                             << BreakerState::Closed << ProviderState::Down
                             << u"disabled by operator"_s;
    QTest::newRow("drain") << ProviderAction::Drain << false << OperatorState::Draining
                           << BreakerState::Closed << ProviderState::Degraded
                           << u"draining by operator"_s;
    QTest::newRow("trip") << ProviderAction::Trip << false << OperatorState::Enabled
                          << BreakerState::Open << ProviderState::Down
                          << u"tripped by operator; open for 60 s"_s;
    QTest::newRow("reset") << ProviderAction::Reset << true << OperatorState::Enabled
                           << BreakerState::Closed << ProviderState::Up << u"reset by operator"_s;
    QTest::newRow("enable") << ProviderAction::Enable << true << OperatorState::Enabled
                            << BreakerState::Closed << ProviderState::Up
                            << u"enabled by operator"_s;
}

void TestCircuitBreaker::operatorActions()
{
    QFETCH(ProviderAction, action);
    QFETCH(bool, selectable);
    QFETCH(OperatorState, operatorState);
    QFETCH(BreakerState, breaker);
    QFETCH(ProviderState, state);
    QFETCH(QString, reason);
    Fixture fixture;

    fixture.registry.applyAction(0, action);

    QCOMPARE(fixture.registry.selectable(0), selectable);
    QCOMPARE(fixture.registry.tryAdmit(0), selectable);
    QCOMPARE(fixture.registry.msUntilAdmit(0) == 0, selectable);
    QCOMPARE(fixture.registry.trafficShare(0), selectable ? 1.0 : 0.0);
    QCOMPARE(fixture.registry.operatorState(0), operatorState);
    QCOMPARE(fixture.breaker(), breaker);
    QCOMPARE(fixture.registry.state(0), state);
    QCOMPARE(fixture.events.size(), 1);
    QCOMPARE(fixture.events.first().from, BreakerState::Closed);
    QCOMPARE(fixture.events.first().to, breaker);
    QCOMPARE(fixture.events.first().operatorState, operatorState);
    QCOMPARE(fixture.lastReason(), reason);
    QCOMPARE(fixture.registry.snapshot().first().operatorState, operatorState);
}

void TestCircuitBreaker::breakerEventsCarryTheOperatorStateInForce()
{
    Fixture fixture;
    fixture.registry.applyAction(0, ProviderAction::Drain);
    fixture.trip(); // a drill on a draining endpoint: the breaker moves, the drain stays
    fixture.clock.advance(60s);
    fixture.registry.updateTimedStates();
    fixture.registry.applyAction(0, ProviderAction::Enable);

    QCOMPARE(fixture.events.size(), 4);
    QCOMPARE(fixture.events[0].operatorState, OperatorState::Draining);
    QCOMPARE(fixture.events[1].to, BreakerState::Open);
    QCOMPARE(fixture.events[1].operatorState, OperatorState::Draining);
    QCOMPARE(fixture.events[2].to, BreakerState::HalfOpen);
    QCOMPARE(fixture.events[2].operatorState, OperatorState::Draining);
    QCOMPARE(fixture.events[3].from, BreakerState::HalfOpen);
    QCOMPARE(fixture.events[3].to, BreakerState::HalfOpen);
    QCOMPARE(fixture.events[3].operatorState, OperatorState::Enabled);
    QCOMPARE(fixture.events[3].reason, u"enabled by operator"_s);
}

void TestCircuitBreaker::drainingLetsCallsInFlightFinish()
{
    Fixture fixture;
    QVERIFY(fixture.registry.tryAdmit(0));
    fixture.registry.callStarted(0);
    fixture.registry.applyAction(0, ProviderAction::Drain);
    QVERIFY(!fixture.registry.tryAdmit(0));
    QCOMPARE(fixture.registry.inFlight(0), 1);

    fixture.registry.callFinished(0, CallOutcome::Success, 80, -1);

    QCOMPARE(fixture.registry.inFlight(0), 0);
    QCOMPARE(fixture.registry.snapshot().first().requests, quint64(1));
    QCOMPARE(fixture.registry.latencyP50Ms(0), 80.0);
    QCOMPARE(fixture.registry.operatorState(0), OperatorState::Draining);
}

void TestCircuitBreaker::resetClosesAndForgets()
{
    Fixture fixture;
    for (int i = 0; i < 5; ++i)
        fixture.call(CallOutcome::CallFailure);
    fixture.waitOutOpenPeriod();
    QVERIFY(fixture.registry.tryAdmit(0));
    fixture.call(CallOutcome::CallFailure); // re-trip: 120 s
    QCOMPARE(fixture.registry.msUntilAdmit(0), 120'000);

    fixture.registry.applyAction(0, ProviderAction::Reset);

    QCOMPARE(fixture.breaker(), BreakerState::Closed);
    QCOMPARE(fixture.lastReason(), u"reset by operator"_s);
    const ProviderHealth health = fixture.registry.snapshot().first();
    QCOMPARE(health.consecutiveFailures, 0);
    QCOMPARE(health.recentCalls, 0);
    QCOMPARE(health.trafficShare, 0.05); // it was out: it ramps back in
    fixture.trip();
    QCOMPARE(fixture.registry.msUntilAdmit(0), 60'000); // the re-trip count is forgotten
}

void TestCircuitBreaker::recoveryRampsTrafficShare_data()
{
    QTest::addColumn<QString>("recovery");
    QTest::newRow("half-open probe call succeeds") << u"probe call"_s;
    QTest::newRow("health probes succeed again") << u"health probes"_s;
    QTest::newRow("reset after a trip") << u"reset"_s;
    QTest::newRow("enable after disable") << u"enable"_s;
    QTest::newRow("enable after drain") << u"enable after drain"_s;
}

void TestCircuitBreaker::recoveryRampsTrafficShare()
{
    QFETCH(QString, recovery);
    Fixture fixture;
    if (recovery == u"probe call"_s) {
        fixture.trip();
        fixture.waitOutOpenPeriod();
        QCOMPARE(fixture.registry.trafficShare(0), 0.05); // half-open: the probe's share
        QVERIFY(fixture.registry.tryAdmit(0));
        fixture.call(CallOutcome::Success);
    } else if (recovery == u"health probes"_s) {
        for (int i = 0; i < 3; ++i)
            fixture.registry.probeResult(0, false, u"HTTP 503"_s);
        fixture.registry.probeResult(0, true);
        fixture.registry.probeResult(0, true);
    } else if (recovery == u"reset"_s) {
        fixture.trip();
        fixture.registry.applyAction(0, ProviderAction::Reset);
    } else if (recovery == u"enable"_s) {
        fixture.registry.applyAction(0, ProviderAction::Disable);
        fixture.registry.applyAction(0, ProviderAction::Enable);
    } else {
        fixture.registry.applyAction(0, ProviderAction::Drain);
        fixture.registry.applyAction(0, ProviderAction::Enable);
    }

    QCOMPARE(fixture.breaker(), BreakerState::Closed);
    QVERIFY(fixture.registry.selectable(0));
    QCOMPARE(fixture.registry.trafficShare(0), 0.05);
    QCOMPARE(fixture.registry.state(0), ProviderState::Degraded);
    fixture.clock.advance(15s);
    QCOMPARE(fixture.registry.trafficShare(0), 0.05 + 0.95 * 0.25);
    fixture.clock.advance(15s);
    QCOMPARE(fixture.registry.trafficShare(0), 0.05 + 0.95 * 0.5);
    fixture.clock.advance(30s);
    QCOMPARE(fixture.registry.trafficShare(0), 1.0);
    QCOMPARE(fixture.registry.state(0), ProviderState::Up);
}

void TestCircuitBreaker::probeFailuresHoldTheEndpointOut()
{
    Fixture fixture;
    fixture.registry.probeResult(0, false, u"HTTP 503"_s);
    fixture.registry.probeResult(0, false, u"HTTP 503"_s);
    QVERIFY(fixture.registry.selectable(0));
    QVERIFY(fixture.events.isEmpty());

    fixture.registry.probeResult(0, false, u"timed out after 3000 ms"_s);

    QVERIFY(!fixture.registry.selectable(0));
    QVERIFY(!fixture.registry.probeHealthy(0));
    QCOMPARE(fixture.breaker(), BreakerState::Open);
    QCOMPARE(fixture.lastReason(), u"3 failed health probes"_s);
    QCOMPARE(fixture.registry.state(0), ProviderState::Down);
    QCOMPARE(fixture.registry.msUntilAdmit(0), -1);
    const ProviderHealth health = fixture.registry.snapshot().first();
    QCOMPARE(health.msUntilHalfOpen, -1);
    QCOMPARE(health.lastFailure, u"health probe: timed out after 3000 ms"_s);

    // No open period runs out while probes fail: only probes bring it back.
    fixture.clock.advance(10min);
    fixture.registry.updateTimedStates();
    QCOMPARE(fixture.breaker(), BreakerState::Open);
    fixture.registry.probeResult(0, true);
    QVERIFY(!fixture.registry.selectable(0));

    fixture.registry.probeResult(0, true);

    QVERIFY(fixture.registry.probeHealthy(0));
    QCOMPARE(fixture.breaker(), BreakerState::Closed);
    QCOMPARE(fixture.lastReason(), u"2 successful health probes"_s);
    QVERIFY(fixture.registry.selectable(0));
    QCOMPARE(fixture.registry.trafficShare(0), 0.05);
}

void TestCircuitBreaker::probeResultsDecideAHalfOpenBreaker_data()
{
    QTest::addColumn<bool>("probeOk");
    QTest::addColumn<BreakerState>("after");
    QTest::addColumn<QString>("reason");
    QTest::newRow("success closes") << true << BreakerState::Closed << u"health probe succeeded"_s;
    QTest::newRow("failure opens again")
        << false << BreakerState::Open << u"health probe failed: HTTP 502; open for 120 s"_s;
}

void TestCircuitBreaker::probeResultsDecideAHalfOpenBreaker()
{
    QFETCH(bool, probeOk);
    QFETCH(BreakerState, after);
    QFETCH(QString, reason);
    Fixture fixture;
    fixture.trip();
    // An open breaker waits out its period whatever probes say.
    fixture.registry.probeResult(0, true);
    QCOMPARE(fixture.breaker(), BreakerState::Open);
    fixture.waitOutOpenPeriod();

    fixture.registry.probeResult(0, probeOk, u"HTTP 502"_s);

    QCOMPARE(fixture.breaker(), after);
    QCOMPARE(fixture.lastReason(), reason);
}

void TestCircuitBreaker::eventsCarryEndpointStatesReasonAndTime()
{
    Fixture fixture;
    for (int i = 0; i < 5; ++i)
        fixture.call(CallOutcome::CallFailure);
    fixture.clock.advance(60s);
    fixture.registry.updateTimedStates();
    fixture.call(CallOutcome::Success);

    const QList<BreakerEvent> &events = fixture.registry.recentEvents();
    QCOMPARE(events.size(), 3);
    QCOMPARE(fixture.events.size(), 3); // the sink saw the same
    const auto check = [&](int index, BreakerState from, BreakerState to, BreakerCause cause,
                           const QString &reason, qint64 atMs) {
        QCOMPARE(events[index].providerId, u"p"_s);
        QCOMPARE(events[index].from, from);
        QCOMPARE(events[index].to, to);
        QCOMPARE(events[index].cause, cause);
        QCOMPARE(events[index].reason, reason);
        QCOMPARE(events[index].atMsSinceEpoch, ManualClock::kStartMsSinceEpoch + atMs);
        QCOMPARE(events[index].sequence, quint64(index + 1));
        QCOMPARE(fixture.events[index].reason, reason);
    };
    check(0, BreakerState::Closed, BreakerState::Open, BreakerCause::ConsecutiveFailures,
          u"5 consecutive call failures; open for 60 s"_s, 0);
    check(1, BreakerState::Open, BreakerState::HalfOpen, BreakerCause::OpenPeriodOver,
          u"open period over; letting one probe call through"_s, 60'000);
    check(2, BreakerState::HalfOpen, BreakerState::Closed, BreakerCause::ProbeCallSucceeded,
          u"probe call succeeded"_s, 60'000);
}

void TestCircuitBreaker::eventRingIsBounded()
{
    Fixture fixture;
    for (int i = 0; i < HealthRegistry::kEventCapacity + 10; ++i)
        fixture.registry.applyAction(0, i % 2 ? ProviderAction::Enable : ProviderAction::Disable);
    QCOMPARE(fixture.registry.recentEvents().size(), HealthRegistry::kEventCapacity);
    QCOMPARE(fixture.registry.recentEvents().first().sequence, quint64(11));
    QCOMPARE(fixture.registry.recentEvents().last().sequence,
             quint64(HealthRegistry::kEventCapacity + 10));
    QCOMPARE(fixture.events.size(), HealthRegistry::kEventCapacity + 10);
}

void TestCircuitBreaker::summaryStateFollowsBreakerAndFailures()
{
    Fixture fixture;
    for (const QChar code : u"SSSSSSSSF"_s)
        fixture.call(code);
    QCOMPARE(fixture.registry.state(0), ProviderState::Up); // 1 of 9 failed
    fixture.call(CallOutcome::CallFailure);
    QCOMPARE(fixture.registry.state(0), ProviderState::Up); // 2 of 10: not above 20 %
    fixture.call(CallOutcome::CallFailure);
    QCOMPARE(fixture.registry.state(0), ProviderState::Degraded); // 3 of 11
    QVERIFY(fixture.registry.anyProviderUp());
    QCOMPARE(fixture.registry.recentSuccessRatio(0), 8.0 / 11.0);
    QCOMPARE(fixture.registry.recentCallCount(0), 11);

    fixture.trip();
    QCOMPARE(fixture.registry.state(0), ProviderState::Down);
    QVERIFY(!fixture.registry.anyProviderUp());
    fixture.clock.advance(60s);
    QCOMPARE(fixture.registry.state(0), ProviderState::Degraded); // due for its probe
}

void TestCircuitBreaker::providersAreAddedAndRetiredWithStableIndices()
{
    Fixture fixture;
    const int agent = fixture.registry.addProvider(endpoint(u"agent"_s));
    QCOMPARE(agent, 1);
    QCOMPARE(fixture.registry.indexOf(u"agent"_s), 1);
    QCOMPARE(fixture.registry.providerCount(), 2);
    QVERIFY(fixture.registry.selectable(agent));
    QCOMPARE(fixture.registry.recentCallCount(agent), 0);
    QCOMPARE(fixture.registry.latencyP50Ms(agent), -1.0);

    fixture.registry.retireProvider(agent);

    QVERIFY(!fixture.registry.selectable(agent));
    QVERIFY(!fixture.registry.tryAdmit(agent));
    QCOMPARE(fixture.registry.indexOf(u"agent"_s), -1);
    QCOMPARE(fixture.registry.snapshot().size(), 1);
    QCOMPARE(fixture.registry.providersUp(), 1);
    // Registered again: a new index, the old one stays retired.
    QCOMPARE(fixture.registry.addProvider(endpoint(u"agent"_s)), 2);
    QCOMPARE(fixture.registry.indexOf(u"agent"_s), 2);
    QCOMPARE(fixture.registry.snapshot().size(), 2);
}

void TestCircuitBreaker::latencyMedianFollowsNewSamples()
{
    Fixture fixture;
    fixture.call(CallOutcome::Success, 10);
    fixture.call(CallOutcome::Success, 30);
    fixture.call(CallOutcome::Success, 20);
    QCOMPARE(fixture.registry.latencyP50Ms(0), 20.0);
    fixture.call(CallOutcome::Success, 40);
    fixture.call(CallOutcome::Success, 50);
    QCOMPARE(fixture.registry.latencyP50Ms(0), 30.0);
    QCOMPARE(fixture.registry.snapshot().first().p95LatencyMs, 50.0);
}

QTEST_GUILESS_MAIN(TestCircuitBreaker)
#include "tst_circuit_breaker.moc"
