// The impact preview's sample of live routing contexts: bounded in size, in age and per minute,
// spread by a stride when traffic is heavy, and stripped of credentials.

#include "routing/context_sample.h"
#include "timing/clock.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using namespace switchyard::routing;
using namespace std::chrono_literals;

namespace {

RequestContext contextOf(int number)
{
    RequestContext context;
    context.requestId = "request-" + QByteArray::number(number);
    context.model = u"big"_s;
    context.user = u"user-%1"_s.arg(number);
    return context;
}

RouteDecision decisionTo(const QString &provider)
{
    RouteDecision decision;
    decision.rule = u"canary"_s;
    RouteCandidate candidate;
    candidate.providerId = provider;
    decision.candidates.append(candidate);
    return decision;
}

QList<QByteArray> idsOf(const QList<SampledRequest> &requests)
{
    QList<QByteArray> ids;
    for (const SampledRequest &request : requests)
        ids.append(request.context.requestId);
    return ids;
}

} // namespace

class ContextSampleTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void quietTrafficIsKeptWholeWithItsDecision()
    {
        timing::ManualClock clock;
        ContextSample sample(clock);
        for (int i = 0; i < 3; ++i)
            sample.offer(contextOf(i), decisionTo(u"pro-a"_s));
        const QList<SampledRequest> requests = sample.requests();
        QCOMPARE(idsOf(requests), (QList<QByteArray>{"request-0", "request-1", "request-2"}));
        QCOMPARE(requests.first().context.user, u"user-0"_s);
        QCOMPARE(requests.first().rule, u"canary"_s);
        QCOMPARE(requests.first().provider, u"pro-a"_s);
        QCOMPARE(requests.first().routedAtMsSinceEpoch, timing::ManualClock::kStartMsSinceEpoch);
    }

    void aMinuteTakesAtMostItsBudget()
    {
        timing::ManualClock clock;
        ContextSample sample(clock, {100, 60min, 4});
        for (int i = 0; i < 10; ++i)
            sample.offer(contextOf(i), decisionTo(u"pro-a"_s));
        QCOMPARE(idsOf(sample.requests()),
                 (QList<QByteArray>{"request-0", "request-1", "request-2", "request-3"}));
        QCOMPARE(sample.offered(), quint64(10));
    }

    void aBusyMinuteSetsTheStrideOfTheNext()
    {
        timing::ManualClock clock;
        ContextSample sample(clock, {100, 60min, 4});
        for (int i = 0; i < 12; ++i)
            sample.offer(contextOf(i), decisionTo(u"pro-a"_s));
        clock.advance(1min);
        // 12 seen last minute at 4 a minute: one in 3, so the four taken span the minute.
        QCOMPARE(sample.stride(), 3); // stated before this minute's first request, too
        for (int i = 100; i < 112; ++i)
            sample.offer(contextOf(i), decisionTo(u"pro-a"_s));
        QCOMPARE(sample.stride(), 3);
        QCOMPARE(idsOf(sample.requests()).mid(4),
                 (QList<QByteArray>{"request-100", "request-103", "request-106", "request-109"}));
        // A quiet minute in between: the stride falls back to one.
        clock.advance(2min);
        QCOMPARE(sample.stride(), 1);
        sample.offer(contextOf(200), decisionTo(u"pro-a"_s));
        QCOMPARE(sample.stride(), 1);
        QCOMPARE(idsOf(sample.requests()).last(), "request-200"_ba);
    }

    void theRingKeepsTheNewestUpToItsCapacity()
    {
        timing::ManualClock clock;
        ContextSample sample(clock, {3, 60min, 100});
        for (int i = 0; i < 5; ++i)
            sample.offer(contextOf(i), decisionTo(u"pro-a"_s));
        QCOMPARE(idsOf(sample.requests()),
                 (QList<QByteArray>{"request-2", "request-3", "request-4"}));
    }

    void requestsOlderThanTheWindowAreNotReturned()
    {
        timing::ManualClock clock;
        ContextSample sample(clock, {100, 60min, 100});
        sample.offer(contextOf(0), decisionTo(u"pro-a"_s));
        clock.advance(30min);
        sample.offer(contextOf(1), decisionTo(u"pro-a"_s));
        clock.advance(31min);
        QCOMPARE(idsOf(sample.requests()), (QList<QByteArray>{"request-1"}));
    }

    void credentialsAreNotKept()
    {
        timing::ManualClock clock;
        ContextSample sample(clock);
        RequestContext context = contextOf(0);
        context.switchyardKeyHeader = "Authorization";
        // Every header a trace redacts, in any case: Azure's and Gemini's keys too.
        context.headers = {{"Authorization", "Bearer sy-secret"},
                           {"X-Api-Key", "sk-secret"},
                           {"api-key", "azure-secret"},
                           {"X-Goog-Api-Key", "gemini-secret"},
                           {"PROXY-AUTHORIZATION", "Basic cHJveHk="},
                           {"Cookie", "session=1"},
                           {"x-team", "search"},
                           {"x-api-keys", "not a credential header"}};
        sample.offer(context, decisionTo(u"pro-a"_s));
        const RequestContext kept = sample.requests().first().context;
        QCOMPARE(kept.headers,
                 (QList<QPair<QByteArray, QByteArray>>{{"x-team", "search"},
                                                       {"x-api-keys", "not a credential header"}}));
        QVERIFY(kept.switchyardKeyHeader.isEmpty());
        QCOMPARE(kept.requestId, "request-0"_ba);
    }

    void aRefusedRequestHasNoProvider()
    {
        timing::ManualClock clock;
        ContextSample sample(clock);
        RouteDecision refused = decisionTo(u"pro-a"_s);
        refused.refusal = RouteDecision::Refusal::NoCandidate;
        sample.offer(contextOf(0), refused);
        QVERIFY(sample.requests().first().provider.isEmpty());
    }
};

QTEST_GUILESS_MAIN(ContextSampleTest)
#include "tst_context_sample.moc"
