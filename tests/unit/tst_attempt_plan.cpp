// The walk down a route decision's candidates: in the router's order, each endpoint and model at
// most once, within the request's fallback level and each tier's retries, asking the breaker
// and failover capacity last.

#include "resilience/attempt_plan.h"

#include <QtTest>

using namespace Qt::StringLiterals;
using switchyard::resilience::AttemptPlan;
using switchyard::resilience::CandidateSkip;
using switchyard::resilience::SkipReason;
using switchyard::routing::CandidateRole;
using switchyard::routing::RouteCandidate;

namespace {

RouteCandidate candidate(int provider, const QString &tier, CandidateRole role,
                         int degradationLevel = 0, const QString &model = u"m"_s)
{
    RouteCandidate result;
    result.endpoint = provider;
    result.providerId = u"p%1"_s.arg(provider);
    result.upstreamModel = model;
    result.tier = tier;
    result.role = role;
    result.degradationLevel = degradationLevel;
    return result;
}

// light allows 2 retries (3 attempts), pro 1 (2 attempts); anything else sets no cap.
int tierRetries(const QString &tier)
{
    if (tier == u"light"_s)
        return 2;
    if (tier == u"pro"_s)
        return 1;
    return -1;
}

const AttemptPlan::Gate admitAll = [](const RouteCandidate &, bool) {
    return std::optional<SkipReason>();
};

// The providers the plan hands out, one after the other, every one admitted.
QList<int> walk(AttemptPlan &plan, QList<CandidateSkip> *skipped = nullptr)
{
    QList<int> providers;
    for (int next = plan.takeNext(admitAll, skipped); next >= 0;
         next = plan.takeNext(admitAll, skipped)) {
        plan.recordAttempt(next);
        providers.append(plan.candidates()[next].endpoint);
    }
    return providers;
}

} // namespace

class TestAttemptPlan : public QObject {
    Q_OBJECT

private slots:
    void walksInTheRoutersOrder();
    void capsRetriesWithinATier();
    void keepsToTheFallbackLevel_data();
    void keepsToTheFallbackLevel();
    void triesEachEndpointAndModelOnce();
    void asksTheGateLastAndSkipsWhatItRefuses();
    void tellsFailoverTrafficApart();
    void knowsWhetherARetryCouldHappen();
    void sharesTheRoutersCandidatesInsteadOfCopyingThem();
};

void TestAttemptPlan::walksInTheRoutersOrder()
{
    AttemptPlan plan({candidate(0, {}, CandidateRole::Primary),
                      candidate(1, {}, CandidateRole::Primary),
                      candidate(2, {}, CandidateRole::FallbackChain)},
                     3, tierRetries);

    QCOMPARE(walk(plan), (QList<int>{0, 1, 2}));
    QCOMPARE(plan.attempts(), 3);
}

void TestAttemptPlan::sharesTheRoutersCandidatesInsteadOfCopyingThem()
{
    // The execution keeps the routing decision's candidates and hands the plan the same list: a
    // plan that copied them on its first look cost every held stream a second list.
    const QList<switchyard::routing::RouteCandidate> decided{
        candidate(0, {}, CandidateRole::Primary), candidate(1, {}, CandidateRole::Primary)};
    AttemptPlan plan(decided, 3, tierRetries);
    QCOMPARE(walk(plan), (QList<int>{0, 1}));
    QVERIFY(!decided.isDetached());
    QCOMPARE(plan.candidates().constData(), decided.constData());
}

void TestAttemptPlan::capsRetriesWithinATier()
{
    AttemptPlan plan({candidate(0, u"light"_s, CandidateRole::Primary),
                      candidate(1, u"light"_s, CandidateRole::Primary),
                      candidate(2, u"light"_s, CandidateRole::Primary),
                      candidate(3, u"light"_s, CandidateRole::Primary),
                      candidate(4, u"pro"_s, CandidateRole::CrossTier),
                      candidate(5, u"pro"_s, CandidateRole::CrossTier),
                      candidate(6, u"pro"_s, CandidateRole::CrossTier),
                      candidate(7, {}, CandidateRole::FallbackChain)},
                     3, tierRetries);
    QList<CandidateSkip> skipped;

    QCOMPARE(walk(plan, &skipped), (QList<int>{0, 1, 2, 4, 5, 7}));
    QCOMPARE(skipped.size(), 2);
    QCOMPARE(skipped[0].candidateIndex, 3);
    QCOMPARE(skipped[0].reason, SkipReason::TierRetriesUsed);
    QCOMPARE(skipped[1].candidateIndex, 6);
    QCOMPARE(skipped[1].reason, SkipReason::TierRetriesUsed);
    QCOMPARE(plan.attemptsInTier(u"light"_s), 3);
    QCOMPARE(plan.attemptsInTier(u"pro"_s), 2);
}

void TestAttemptPlan::keepsToTheFallbackLevel_data()
{
    QTest::addColumn<int>("fallbackLevel");
    QTest::addColumn<QList<int>>("providers");

    // Pro's own pool, then light (a lighter model: level 1), then the fallback chain.
    QTest::newRow("planned target only") << 0 << QList<int>{0, 2};
    QTest::newRow("lighter model allowed") << 1 << QList<int>{0, 1, 2};
    QTest::newRow("everything allowed") << 3 << QList<int>{0, 1, 2};
}

void TestAttemptPlan::keepsToTheFallbackLevel()
{
    QFETCH(int, fallbackLevel);
    QFETCH(QList<int>, providers);
    AttemptPlan plan({candidate(0, u"pro"_s, CandidateRole::Primary),
                      candidate(1, u"light"_s, CandidateRole::LighterModel, 1),
                      candidate(2, {}, CandidateRole::FallbackChain)},
                     fallbackLevel, tierRetries);

    QCOMPARE(walk(plan), providers);
}

void TestAttemptPlan::triesEachEndpointAndModelOnce()
{
    // The fallback chain names the pool's endpoint again; a lighter model on the same endpoint
    // is a different call and may still be tried.
    AttemptPlan plan({candidate(0, {}, CandidateRole::Primary, 0, u"big"_s),
                      candidate(0, {}, CandidateRole::FallbackChain, 0, u"big"_s),
                      candidate(0, {}, CandidateRole::LighterModel, 1, u"small"_s)},
                     3, tierRetries);
    QList<CandidateSkip> skipped;

    QCOMPARE(walk(plan, &skipped), (QList<int>{0, 0}));
    QCOMPARE(skipped.size(), 1);
    QCOMPARE(skipped[0].candidateIndex, 1);
    QCOMPARE(skipped[0].reason, SkipReason::AlreadyTried);
}

void TestAttemptPlan::asksTheGateLastAndSkipsWhatItRefuses()
{
    AttemptPlan plan(
        {candidate(0, {}, CandidateRole::Primary), candidate(1, {}, CandidateRole::Primary, 2),
         candidate(2, {}, CandidateRole::Primary), candidate(3, {}, CandidateRole::Primary)},
        1, tierRetries);
    QList<int> asked;
    const AttemptPlan::Gate gate = [&asked](const RouteCandidate &next,
                                            bool) -> std::optional<SkipReason> {
        asked.append(next.endpoint);
        if (next.endpoint == 0)
            return SkipReason::BreakerOpen;
        if (next.endpoint == 2)
            return SkipReason::FailoverCapacityFull;
        return std::nullopt;
    };
    QList<CandidateSkip> skipped;

    QCOMPARE(plan.takeNext(gate, &skipped), 3);

    // Candidate 1 is beyond the fallback level: the gate (and its breaker) is never asked.
    QCOMPARE(asked, (QList<int>{0, 2, 3}));
    QCOMPARE(skipped.size(), 3);
    QCOMPARE(skipped[0].reason, SkipReason::BreakerOpen);
    QCOMPARE(skipped[1].reason, SkipReason::BeyondFallbackLevel);
    QCOMPARE(skipped[2].reason, SkipReason::FailoverCapacityFull);
    QCOMPARE(plan.takeNext(gate, &skipped), -1);
}

void TestAttemptPlan::tellsFailoverTrafficApart()
{
    AttemptPlan plan({candidate(0, {}, CandidateRole::Primary),
                      candidate(1, {}, CandidateRole::Primary),
                      candidate(2, {}, CandidateRole::FallbackChain)},
                     3, tierRetries);
    QList<bool> failover;
    const AttemptPlan::Gate record = [&failover](const RouteCandidate &, bool isFailover) {
        failover.append(isFailover);
        return std::optional<SkipReason>();
    };

    QCOMPARE(plan.takeNext(record, nullptr), 0);
    plan.recordAttempt(0);
    QVERIFY(!plan.isFailover(0)); // asking the same endpoint again (429) is not failover
    QCOMPARE(plan.takeNext(record, nullptr), 1);
    plan.recordAttempt(1);
    QCOMPARE(plan.takeNext(record, nullptr), 2);

    QCOMPARE(failover, (QList<bool>{false, true, true}));

    // A first attempt that does not go to a primary is already failed-over traffic.
    AttemptPlan backupOnly({candidate(2, {}, CandidateRole::FallbackChain)}, 3, tierRetries);
    QVERIFY(backupOnly.isFailover(0));
}

void TestAttemptPlan::knowsWhetherARetryCouldHappen()
{
    AttemptPlan plan({candidate(0, u"pro"_s, CandidateRole::Primary),
                      candidate(1, u"pro"_s, CandidateRole::Primary),
                      candidate(2, u"light"_s, CandidateRole::LighterModel, 1)},
                     0, tierRetries);
    QVERIFY(plan.anyCandidateLeft());

    QCOMPARE(plan.takeNext(admitAll, nullptr), 0);
    plan.recordAttempt(0);
    QVERIFY(plan.anyCandidateLeft());

    QCOMPARE(plan.takeNext(admitAll, nullptr), 1);
    plan.recordAttempt(1);
    // The lighter model is beyond fallback level 0.
    QVERIFY(!plan.anyCandidateLeft());
}

QTEST_APPLESS_MAIN(TestAttemptPlan)
#include "tst_attempt_plan.moc"
