// The alert rules in simulated time: each default rule raises once its condition has held for
// the rule's `for` and not one evaluation before, and clears once it has not held for
// `clear_after`; the latency baseline needs its 100 samples; a quiet minute's single failure
// pages nobody; client cancels and the client's own 4xx count for nothing.
#include "alerts/alert_evaluator.h"
#include "config/config_store.h"

#include <QSignalSpy>
#include <QtTest>
#include <cmath>
#include <functional>

using namespace switchyard;
using namespace switchyard::alerts;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using config::AlertRuleKind;

namespace {

telemetry::RequestRecord request(const QString &tier, int status, int degradedLevel = 0,
                                 qint64 latencyMs = 100)
{
    telemetry::RequestRecord record;
    record.tier = tier;
    record.status = status;
    record.degradedLevel = degradedLevel;
    record.totalMicros = latencyMs * 1000;
    return record;
}

// An evaluator on a manual clock. Time goes in whole seconds from the start (which the manual
// clock puts on a ten-second step boundary); each second's traffic is added, then the rules are
// evaluated every fifth second, as the default `evaluate_every` does.
class Bench {
public:
    explicit Bench(config::Config config = {})
        : m_store(std::move(config)), m_evaluator(m_store, m_clock)
    {
        QObject::connect(&m_evaluator, &AlertEvaluator::alertEvent, &m_evaluator,
                         [this](const AlertEvent &event) { events.append(event); });
    }

    // Runs until second `until`, calling `traffic(second)` for each second after the last.
    void runUntil(int until, const std::function<void(int second)> &traffic)
    {
        while (m_second < until) {
            m_clock.advance(1s);
            ++m_second;
            traffic(m_second);
            if (m_second % 5 == 0)
                m_evaluator.evaluate();
        }
    }
    void add(const telemetry::RequestRecord &record) { m_evaluator.countRequest(record); }
    void addMany(int count, const telemetry::RequestRecord &record)
    {
        for (int index = 0; index < count; ++index)
            add(record);
    }

    QList<AlertEvent> eventsOf(AlertRuleKind rule) const
    {
        QList<AlertEvent> found;
        for (const AlertEvent &event : events) {
            if (event.rule == rule)
                found.append(event);
        }
        return found;
    }
    qint64 msAt(int second) const
    {
        return timing::ManualClock::kStartMsSinceEpoch + qint64(second) * 1000;
    }

    config::ConfigStore &store() { return m_store; }
    AlertEvaluator &evaluator() { return m_evaluator; }
    int second() const { return m_second; }
    QList<AlertEvent> events;

private:
    timing::ManualClock m_clock;
    config::ConfigStore m_store;
    AlertEvaluator m_evaluator;
    int m_second = 0;
};

// Half the light tier's requests fail: its success rate is 50 %.
void halfFailing(Bench &bench)
{
    bench.addMany(5, request(u"light"_s, 200));
    bench.addMany(5, request(u"light"_s, 502));
}

} // namespace

class TestAlertEvaluator : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void judgesEachRequest_data();
    void judgesEachRequest();
    void successRateRaisesAfterThreeMinutesNotBefore();
    void successRateClearsOnceRecoveredForClearAfter();
    void errorRateRaisesAfterFiveMinutesNotBefore();
    void errorRateClears();
    void latencyRaisesAfterItsDurationAgainstTheBaseline();
    void latencyBaselineNeedsItsSamples_data();
    void latencyBaselineNeedsItsSamples();
    void failSafeAnswerRaisesAtOnceAndClears();
    void budgetRaisesAtItsShareAndClearsWithHysteresis();
    void budgetGoneFromTheReadingsClearsItsAlert();
    void needsTheMinimumOfRequests_data();
    void needsTheMinimumOfRequests();
    void cancelsAndClientErrorsCountForNothing();
    void followsAChangedThresholdAndADisabledRule();
    void disablingARuleClearsItsAlerts();
    void reEnabledRuleStartsItsHoldAfresh();
    void keepsTheNewestEventsOnly();
    void readsAP95WithinItsBin_data();
    void readsAP95WithinItsBin();
    void forgetsStepsOlderThanItsSpan();
};

void TestAlertEvaluator::judgesEachRequest_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<int>("degradedLevel");
    QTest::addColumn<RequestVerdict>("verdict");

    QTest::newRow("answered") << 200 << 0 << RequestVerdict::Success;
    QTest::newRow("a lighter model answered") << 200 << 1 << RequestVerdict::Success;
    QTest::newRow("a canned answer") << 200 << 2 << RequestVerdict::Degraded;
    QTest::newRow("the fail-safe message") << 200 << 3 << RequestVerdict::Degraded;
    QTest::newRow("provider error") << 502 << 0 << RequestVerdict::Error;
    QTest::newRow("gateway overloaded") << 503 << 0 << RequestVerdict::Error;
    QTest::newRow("timed out") << 504 << 0 << RequestVerdict::Error;
    QTest::newRow("rate limited") << 429 << 0 << RequestVerdict::Error;
    QTest::newRow("request timeout") << 408 << 0 << RequestVerdict::Error;
    QTest::newRow("client went away") << 499 << 0 << RequestVerdict::NotCounted;
    QTest::newRow("bad request") << 400 << 0 << RequestVerdict::NotCounted;
    QTest::newRow("unauthorized") << 401 << 0 << RequestVerdict::NotCounted;
    QTest::newRow("unknown model") << 404 << 0 << RequestVerdict::NotCounted;
    QTest::newRow("too large") << 413 << 0 << RequestVerdict::NotCounted;
    QTest::newRow("no status") << 0 << 0 << RequestVerdict::NotCounted;
}

void TestAlertEvaluator::judgesEachRequest()
{
    QFETCH(int, status);
    QFETCH(int, degradedLevel);
    QFETCH(RequestVerdict, verdict);
    QCOMPARE(verdictFor(request(u"light"_s, status, degradedLevel)), verdict);
}

void TestAlertEvaluator::successRateRaisesAfterThreeMinutesNotBefore()
{
    Bench bench;
    // The first evaluation (second 5) already sees 50 requests at 50 %: the condition holds from
    // then on, so three minutes later is second 185.
    bench.runUntil(180, [&](int) { halfFailing(bench); });
    QCOMPARE(bench.eventsOf(AlertRuleKind::TierSuccessRate).size(), 0);
    QVERIFY(bench.evaluator().active().isEmpty());

    bench.runUntil(185, [&](int) { halfFailing(bench); });
    const QList<AlertEvent> raised = bench.eventsOf(AlertRuleKind::TierSuccessRate);
    QCOMPARE(raised.size(), 1);
    const AlertEvent &event = raised.first();
    QCOMPARE(event.kind, AlertEvent::Kind::Raised);
    QCOMPARE(event.subjectKind, SubjectKind::Tier);
    QCOMPARE(event.subject, u"light"_s);
    QCOMPARE(event.value, 0.5);
    QCOMPARE(event.threshold, 0.9);
    QCOMPARE(event.unit, ValueUnit::Ratio);
    QCOMPARE(event.severity, config::AlertSeverity::Critical);
    QCOMPARE(event.sinceMs, bench.msAt(5));
    QCOMPARE(event.atMs, bench.msAt(185));
    QCOMPARE(event.message,
             u"tier `light`: success rate 50.0 %, below 90.0 % for 3m; 660 counted request(s) "
             u"in the last 1m"_s);
    QCOMPARE(bench.evaluator().active().size(), 1);
    QCOMPARE(bench.evaluator().active().first().raisedSequence, event.sequence);
}

void TestAlertEvaluator::successRateClearsOnceRecoveredForClearAfter()
{
    Bench bench;
    bench.runUntil(185, [&](int) { halfFailing(bench); });
    QCOMPARE(bench.evaluator().active().size(), 1);
    // Every request answered from second 186. The window (the step now plus six whole ones)
    // first reaches 90 % at second 240, with 6 bad seconds (180-185) against 55 good; it must
    // then stay so for clear_after, one minute: the clear comes at second 300.
    const auto allGood = [&](int) { bench.addMany(10, request(u"light"_s, 200)); };
    bench.runUntil(295, allGood);
    QCOMPARE(bench.eventsOf(AlertRuleKind::TierSuccessRate).size(), 1);
    bench.runUntil(300, allGood);
    const QList<AlertEvent> events = bench.eventsOf(AlertRuleKind::TierSuccessRate);
    QCOMPARE(events.size(), 2);
    QCOMPARE(events.last().kind, AlertEvent::Kind::Cleared);
    QCOMPARE(events.last().subject, u"light"_s);
    QCOMPARE(events.last().value, 1.0);
    QCOMPARE(events.last().sinceMs, bench.msAt(185)); // when it was raised
    QCOMPARE(events.last().atMs, bench.msAt(300));
    QVERIFY(bench.evaluator().active().isEmpty());
}

void TestAlertEvaluator::errorRateRaisesAfterFiveMinutesNotBefore()
{
    Bench bench;
    // 10 % of the pro tier's requests fail: above 5 %, and the success rate stays at 90 %, which
    // is not below 90 %.
    const auto tenPercent = [&](int) {
        bench.addMany(9, request(u"pro"_s, 200));
        bench.add(request(u"pro"_s, 503));
    };
    bench.runUntil(300, tenPercent);
    QCOMPARE(bench.events.size(), 0);
    bench.runUntil(305, tenPercent);
    QCOMPARE(bench.events.size(), 1);
    const AlertEvent &event = bench.events.first();
    QCOMPARE(event.rule, AlertRuleKind::TierErrorRate);
    QCOMPARE(event.subject, u"pro"_s);
    QCOMPARE(event.value, 0.1);
    QCOMPARE(event.threshold, 0.05);
    QCOMPARE(event.severity, config::AlertSeverity::Warning);
    QCOMPARE(event.sinceMs, bench.msAt(5));
}

void TestAlertEvaluator::errorRateClears()
{
    Bench bench;
    const auto tenPercent = [&](int) {
        bench.addMany(9, request(u"pro"_s, 200));
        bench.add(request(u"pro"_s, 503));
    };
    bench.runUntil(305, tenPercent);
    QCOMPARE(bench.evaluator().active().size(), 1);
    // Errors stop at second 306. The window falls to 5 % once 1 bad second in 2 is gone: at 340
    // (steps 27-34 hold 6 bad seconds of 1 error and 35 good ones: 6 / 410 < 5 %). A minute on,
    // second 400, it clears.
    const auto allGood = [&](int) { bench.addMany(10, request(u"pro"_s, 200)); };
    bench.runUntil(395, allGood);
    QCOMPARE(bench.events.size(), 1);
    bench.runUntil(400, allGood);
    QCOMPARE(bench.events.size(), 2);
    QCOMPARE(bench.events.last().kind, AlertEvent::Kind::Cleared);
    QCOMPARE(bench.events.last().rule, AlertRuleKind::TierErrorRate);
}

void TestAlertEvaluator::latencyRaisesAfterItsDurationAgainstTheBaseline()
{
    Bench bench;
    const auto fast = [&](int) { bench.add(request(u"pro"_s, 200, 0, 100)); };
    const auto slow = [&](int) { bench.add(request(u"pro"_s, 200, 0, 1000)); };
    bench.runUntil(3600, fast); // an hour of 100 ms answers: the baseline
    QCOMPARE(bench.events.size(), 0);
    // Slow from second 3601: at 3605 the window holds 5 slow of 66 (7.6 %), so its p95 is slow
    // from the first evaluation on; five minutes later is 3905.
    bench.runUntil(3900, slow);
    QCOMPARE(bench.events.size(), 0);
    bench.runUntil(3905, slow);
    QCOMPARE(bench.events.size(), 1);
    const AlertEvent &event = bench.events.first();
    QCOMPARE(event.rule, AlertRuleKind::TierLatencyP95);
    QCOMPARE(event.subject, u"pro"_s);
    QCOMPARE(event.unit, ValueUnit::Milliseconds);
    QCOMPARE(event.sinceMs, bench.msAt(3605));
    // Read back at the histogram's bin bounds: 1000 ms as 1020.7, the 100 ms baseline as 114.5,
    // so the threshold is twice that.
    QCOMPARE(std::round(event.value * 10) / 10, 1020.7);
    QCOMPARE(std::round(event.threshold * 10) / 10, 229.0);
    QCOMPARE(event.message, u"tier `pro`: p95 latency 1021 ms, above 229 ms (2 x the baseline p95 "
                            u"of 114 ms) for 5m; 66 latencies in the last 1m"_s);

    // Fast again: the clear comes no sooner than clear_after, and within the window and
    // clear_after.
    bench.runUntil(3965, fast);
    QCOMPARE(bench.events.size(), 1);
    bench.runUntil(3905 + 70 + 60 + 5, fast);
    QCOMPARE(bench.events.size(), 2);
    QCOMPARE(bench.events.last().kind, AlertEvent::Kind::Cleared);
}

void TestAlertEvaluator::latencyBaselineNeedsItsSamples_data()
{
    QTest::addColumn<int>("baselineSamples");
    QTest::addColumn<bool>("raised");
    QTest::newRow("99 samples: no baseline yet") << 99 << false;
    QTest::newRow("100 samples: a baseline") << 100 << true;
}

void TestAlertEvaluator::latencyBaselineNeedsItsSamples()
{
    QFETCH(int, baselineSamples);
    QFETCH(bool, raised);
    config::Config config;
    config.alerts.rules[int(AlertRuleKind::TierLatencyP95)].holdFor = 0ms;
    Bench bench(config);
    // The baseline's fast answers, then two quiet minutes, then half a minute of slow ones: the
    // window holds only slow answers, the hour before it only the fast ones.
    bench.runUntil(baselineSamples, [&](int) { bench.add(request(u"pro"_s, 200, 0, 100)); });
    bench.runUntil(baselineSamples + 120, [](int) {});
    bench.runUntil(baselineSamples + 150, [&](int) { bench.add(request(u"pro"_s, 200, 0, 1000)); });
    bench.evaluator().evaluate();
    QCOMPARE(bench.eventsOf(AlertRuleKind::TierLatencyP95).size(), raised ? 1 : 0);
}

void TestAlertEvaluator::failSafeAnswerRaisesAtOnceAndClears()
{
    Bench bench;
    const auto normal = [&](int) { bench.addMany(10, request(u"light"_s, 200)); };
    bench.runUntil(10, normal);
    QCOMPARE(bench.events.size(), 0);
    // One fail-safe answer at second 12, from a request routed to a pool: no tier. The rule
    // counts the whole gateway.
    bench.runUntil(12, [&](int second) {
        normal(second);
        if (second == 12)
            bench.add(request(QString(), 200, kFailSafeLevel));
    });
    bench.runUntil(15, normal);
    QCOMPARE(bench.events.size(), 1);
    const AlertEvent &raised = bench.events.first();
    QCOMPARE(raised.rule, AlertRuleKind::FailSafeAnswers);
    QCOMPARE(raised.subjectKind, SubjectKind::Gateway);
    QCOMPARE(raised.subject, u"gateway"_s);
    QCOMPARE(raised.value, 1.0);
    QCOMPARE(raised.unit, ValueUnit::Answers);
    QCOMPARE(raised.severity, config::AlertSeverity::Critical);
    QCOMPARE(raised.atMs, bench.msAt(15));
    QCOMPARE(raised.message, u"the gateway: fail-safe answers 1, at or above 1; of 151 counted "
                             u"request(s) in the last 1m"_s);
    // The answer (step 1) leaves the window at second 80; a minute later, 140, it clears.
    bench.runUntil(135, normal);
    QCOMPARE(bench.events.size(), 1);
    bench.runUntil(140, normal);
    QCOMPARE(bench.events.size(), 2);
    QCOMPARE(bench.events.last().kind, AlertEvent::Kind::Cleared);
    QCOMPARE(bench.events.last().value, 0.0);
}

void TestAlertEvaluator::budgetRaisesAtItsShareAndClearsWithHysteresis()
{
    Bench bench;
    const auto quiet = [](int) {};
    bench.evaluator().observeBudget(u"tenant:acme/day"_s, 0.79);
    bench.runUntil(10, quiet);
    QCOMPARE(bench.events.size(), 0);
    bench.evaluator().observeBudget(u"tenant:acme/day"_s, 0.80);
    bench.runUntil(15, quiet);
    QCOMPARE(bench.events.size(), 1);
    QCOMPARE(bench.events.first().rule, AlertRuleKind::BudgetUsed);
    QCOMPARE(bench.events.first().subjectKind, SubjectKind::Budget);
    QCOMPARE(bench.events.first().subject, u"tenant:acme/day"_s);
    QCOMPARE(bench.events.first().value, 0.80);
    QCOMPARE(bench.events.first().message,
             u"budget `tenant:acme/day`: share used 80.0 %, at or above 80.0 %"_s);

    // Below from 20, back above from 45: a short dip does not clear, and the minute of
    // clear_after starts again at the next evaluation below, 55: the clear comes at 115.
    bench.evaluator().observeBudget(u"tenant:acme/day"_s, 0.10);
    bench.runUntil(40, quiet);
    bench.evaluator().observeBudget(u"tenant:acme/day"_s, 0.90);
    bench.runUntil(50, quiet);
    bench.evaluator().observeBudget(u"tenant:acme/day"_s, 0.10); // a new day
    bench.runUntil(110, quiet);
    QCOMPARE(bench.events.size(), 1);
    bench.runUntil(115, quiet);
    QCOMPARE(bench.events.size(), 2);
    QCOMPARE(bench.events.last().kind, AlertEvent::Kind::Cleared);
    QCOMPARE(bench.events.last().value, 0.10);
}

void TestAlertEvaluator::budgetGoneFromTheReadingsClearsItsAlert()
{
    Bench bench;
    const auto quiet = [](int) {};
    bench.evaluator().observeBudgets({{u"acme (day)"_s, 0.95}, {u"zeta (day)"_s, 0.50}});
    bench.runUntil(5, quiet);
    QCOMPARE(bench.evaluator().active().size(), 1);
    // A reload renames `acme` to `acme-eu`: the health tick's next reading has only the new name.
    bench.evaluator().observeBudgets({{u"acme-eu (day)"_s, 0.95}, {u"zeta (day)"_s, 0.50}});
    bench.runUntil(10, quiet);
    QCOMPARE(bench.evaluator().active().size(), 1);
    QCOMPARE(bench.evaluator().active().first().subject, u"acme-eu (day)"_s);
    const QList<AlertEvent> events = bench.eventsOf(AlertRuleKind::BudgetUsed);
    QCOMPARE(events.size(), 3);
    const auto cleared = std::find_if(events.cbegin(), events.cend(), [](const AlertEvent &event) {
        return event.kind == AlertEvent::Kind::Cleared;
    });
    QVERIFY(cleared != events.cend());
    QCOMPARE(cleared->subject, u"acme (day)"_s);
    QVERIFY2(cleared->message.endsWith(u"(the budget is no longer configured)"_s),
             qPrintable(cleared->message));
    // And removed for good: nothing stays raised.
    bench.evaluator().observeBudgets({});
    bench.runUntil(15, quiet);
    QVERIFY(bench.evaluator().active().isEmpty());
}

void TestAlertEvaluator::needsTheMinimumOfRequests_data()
{
    QTest::addColumn<int>("secondsBetweenRequests");
    QTest::addColumn<bool>("raised");
    // Every request fails; only how many there are in a window changes.
    QTest::newRow("one failure in a quiet minute") << 60 << false;
    QTest::newRow("12 to 14 in a window: under 20") << 5 << false;
    QTest::newRow("30 to 35 in a window") << 2 << true;
}

void TestAlertEvaluator::needsTheMinimumOfRequests()
{
    QFETCH(int, secondsBetweenRequests);
    QFETCH(bool, raised);
    Bench bench;
    bench.runUntil(600, [&](int second) {
        if (second % secondsBetweenRequests == 0)
            bench.add(request(u"light"_s, 502));
    });
    QCOMPARE(bench.eventsOf(AlertRuleKind::TierSuccessRate).isEmpty(), !raised);
    QCOMPARE(bench.eventsOf(AlertRuleKind::TierErrorRate).isEmpty(), !raised);
}

void TestAlertEvaluator::cancelsAndClientErrorsCountForNothing()
{
    Bench bench;
    // Clients hanging up and sending bad requests, with the few real answers all good.
    bench.runUntil(600, [&](int) {
        bench.addMany(10, request(u"light"_s, 499));
        bench.addMany(10, request(u"light"_s, 400));
        bench.addMany(5, request(u"light"_s, 200));
    });
    QCOMPARE(bench.events.size(), 0);
}

void TestAlertEvaluator::followsAChangedThresholdAndADisabledRule()
{
    config::Config config;
    config.alerts.rules[int(AlertRuleKind::TierSuccessRate)].threshold = 0.4;
    config.alerts.rules[int(AlertRuleKind::TierErrorRate)].enabled = false;
    Bench bench(config);
    bench.runUntil(600, [&](int) { halfFailing(bench); });
    QCOMPARE(bench.events.size(), 0);
}

void TestAlertEvaluator::disablingARuleClearsItsAlerts()
{
    Bench bench;
    bench.runUntil(185, [&](int) { halfFailing(bench); });
    QCOMPARE(bench.evaluator().active().size(), 1);
    auto next = std::make_shared<config::Config>(bench.store().config());
    next->alerts.rules[int(AlertRuleKind::TierSuccessRate)].enabled = false;
    bench.store().replace(next);
    bench.runUntil(190, [&](int) { halfFailing(bench); });
    QVERIFY(bench.evaluator().active().isEmpty());
    QCOMPARE(bench.events.last().kind, AlertEvent::Kind::Cleared);
    QVERIFY2(bench.events.last().message.endsWith(u"(the rule was disabled)"_s),
             qPrintable(bench.events.last().message));
}

void TestAlertEvaluator::reEnabledRuleStartsItsHoldAfresh()
{
    Bench bench;
    const auto setEnabled = [&](bool enabled) {
        auto next = std::make_shared<config::Config>(bench.store().config());
        next->alerts.rules[int(AlertRuleKind::TierSuccessRate)].enabled = enabled;
        bench.store().replace(next);
    };
    // Holding from second 5, switched off at 100 before its three minutes, on again at 200.
    bench.runUntil(100, [&](int) { halfFailing(bench); });
    setEnabled(false);
    bench.runUntil(200, [&](int) { halfFailing(bench); });
    setEnabled(true);
    // Its hold starts at the first evaluation after that, 205: raised at 385, not at once.
    bench.runUntil(380, [&](int) { halfFailing(bench); });
    QCOMPARE(bench.eventsOf(AlertRuleKind::TierSuccessRate).size(), 0);
    bench.runUntil(385, [&](int) { halfFailing(bench); });
    const QList<AlertEvent> raised = bench.eventsOf(AlertRuleKind::TierSuccessRate);
    QCOMPARE(raised.size(), 1);
    QCOMPARE(raised.first().sinceMs, bench.msAt(205));
}

void TestAlertEvaluator::keepsTheNewestEventsOnly()
{
    config::Config config;
    config.alerts.eventsKept = 3;
    config.alerts.rules[int(AlertRuleKind::BudgetUsed)].clearAfter = 0ms;
    Bench bench(config);
    for (int round = 0; round < 4; ++round) {
        bench.evaluator().observeBudget(u"b"_s, 0.9);
        bench.evaluator().evaluate();
        bench.evaluator().observeBudget(u"b"_s, 0.1);
        bench.evaluator().evaluate();
    }
    QCOMPARE(bench.events.size(), 8);
    QCOMPARE(bench.evaluator().eventsTotal(), quint64(8));
    const QList<AlertEvent> &kept = bench.evaluator().recentEvents();
    QCOMPARE(kept.size(), 3);
    QCOMPARE(kept.first().sequence, quint64(6));
    QCOMPARE(kept.last().sequence, quint64(8));
    QCOMPARE(bench.evaluator().state(2).recent.size(), 2);
    QCOMPARE(bench.evaluator().state(2).recent.last().sequence, quint64(8));
}

void TestAlertEvaluator::readsAP95WithinItsBin_data()
{
    QTest::addColumn<QList<qint64>>("latenciesMs");
    QTest::addColumn<double>("p95Ms");
    // Bins grow by 20 %: the p95 is read back as its bin's upper bound, at most 20 % above.
    QTest::newRow("all under a millisecond") << QList<qint64>{0, 1, 1} << 1.0;
    QTest::newRow("one value") << QList<qint64>{100} << 114.5;
    // 19 at 100 ms and one at 1 s: the 95th of 20 is the 19th, a fast one.
    QTest::newRow("one slow in twenty") << (QList<qint64>(19, 100) << 1000) << 114.5;
    // 18 fast and two slow: the 19th is slow.
    QTest::newRow("two slow in twenty") << (QList<qint64>(18, 100) << 1000 << 1000) << 1020.7;
    QTest::newRow("beyond the last bin") << QList<qint64>{100'000'000} << 1'800'190.4;
}

void TestAlertEvaluator::readsAP95WithinItsBin()
{
    QFETCH(QList<qint64>, latenciesMs);
    QFETCH(double, p95Ms);
    LatencyHistogram histogram;
    for (const qint64 ms : latenciesMs)
        histogram.add(LatencyHistogram::binFor(ms * 1000));
    QCOMPARE(histogram.total(), quint64(latenciesMs.size()));
    QCOMPARE(std::round(histogram.p95Ms() * 10) / 10, p95Ms);
}

void TestAlertEvaluator::forgetsStepsOlderThanItsSpan()
{
    TrafficWindows windows;
    const timing::ManualClock clock;
    const qint64 step = TrafficWindows::stepNumber(clock.now());
    windows.add(RequestVerdict::Error, false, 0, clock.now());
    QCOMPARE(windows.summary(step, step).errors, quint64(1));
    // A span later the same slot of the ring holds another step: the old error is not in it.
    const qint64 later = step + TrafficWindows::kSteps;
    QCOMPARE(windows.summary(later, later).counted, quint64(0));
    QCOMPARE(windows.summary(step - 10, step - 1).counted, quint64(0));
}

QTEST_GUILESS_MAIN(TestAlertEvaluator)
#include "tst_alert_evaluator.moc"
