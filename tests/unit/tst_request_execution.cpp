// The executor against a fake transport and a fake client, in simulated time: the real router,
// health registry, retry budget and deadline scheduler, on a clock that moves only when the test
// moves it. Every error class, rate limits as cool-downs, the retry budget and the attempt cap,
// cuts before and after the first byte, each rung of the degradation ladder, back-pressure,
// a stalled and a departed client. Nothing here sleeps.

#include "execution_fixture.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using namespace switchyard;
using namespace switchyard::testing;

class RequestExecutionTest : public QObject {
    Q_OBJECT

private slots:
    void answersFromTheFirstEndpoint();
    void failsOverByErrorClass_data();
    void failsOverByErrorClass();
    void requestFaultIsNeverRetried();
    void answerLimitWhileConnectingIsAConnectTimeout();
    void timeoutsRunInSimulatedTime();
    void idleTimeoutCountsFromTheLastRead();
    void rateLimitCoolsDownWithoutOpeningTheBreaker();
    void coolingEndpointIsPassedOverAtOnce();
    void waitsOutACoolDownOnceWhenNothingElseCan();
    void coolDownTooLongToWaitAnswers429_data();
    void coolDownTooLongToWaitAnswers429();
    void coolDownWithoutRetryAfterIsTheConfiguredDefault();
    void attemptCapSaysSo();
    void retryBudgetSaysSo();
    void allDownAnswers503WithTheSoonestProbe();
    void cutBeforeTheFirstByteFailsOver();
    void cutAfterTheFirstByteEndsTheStream();
    void openingEventsWaitForTheFirstContent();
    void aStreamCutByItsIdleTimeoutContinuesElsewhere();
    void aStreamCutByAnErrorEventContinuesElsewhere();
    void aContinuationThatFailsBeforeItsTextEndsWithTheCut();
    void aProviderRefusingToContinueIsPassedOver();
    void aCutNobodyContinuesIsBilledOnce();
    void aCommittedStreamLetsGoOfBothSidesHeaders();
    void clientBudgetEndsAStream();
    void ladderLevels_data();
    void ladderLevels();
    void recordKeepsTheFinishReasonPastAUsageChunk();
    void gatewayOverloadIsNotBlamedOnTheProvider_data();
    void gatewayOverloadIsNotBlamedOnTheProvider();
    void aSocketTheGatewayCannotOpenIsNotBlamedOnTheProvider();
    void answerReadWhileTheGatewayIsLateIsNotTimed_data();
    void answerReadWhileTheGatewayIsLateIsNotTimed();
    void drainedEndpointFinishesWhatItHas();
    void backPressurePausesAndResumes();
    void stalledClientIsDropped();
    void clientDisconnectStopsEverything();
    void clientDisconnectDuringABackoff();
    void deletedWhileWaitingLeavesNothingBehind();
};

namespace {

// After the test class: moc (Qt 6.4) loses its way in a raw string with "//" before it.

constexpr auto kTwoProviders = R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m]}
  - {id: beta, kind: openai, base_url: "http://beta.test/v1", models: [m], weight: 0}
timeouts: {connect: 1s, first_token: 2s, idle: 3s, total: 10s}
retries:
  backoff_base: 100ms
  backoff_jitter: 0ms
  backoff_max: 400ms
  max_retry_after: 5s
  default_cool_down: 1500ms
  min_retries_in_flight: 1
)";

// Two providers that continue answers, behind a rule that continues cut streams: alpha first.
constexpr auto kContinuedStreams = R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m], continues_answers: true}
  - {id: beta, kind: openai, base_url: "http://beta.test/v1", models: [m], weight: 0, continues_answers: true}
timeouts: {connect: 1s, first_token: 2s, idle: 3s, total: 10s}
retries: {backoff_base: 100ms, backoff_jitter: 0ms, min_retries_in_flight: 1}
routes:
  - {name: continued, to: {pool: [alpha, beta]}, continue_streams: true}
)";

// Three that continue answers; beta (second) will refuse to.
constexpr auto kThreeContinuing = R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m], weight: 2, continues_answers: true}
  - {id: beta, kind: openai, base_url: "http://beta.test/v1", models: [m], weight: 1, continues_answers: true}
  - {id: gamma, kind: openai, base_url: "http://gamma.test/v1", models: [m], weight: 0, continues_answers: true}
timeouts: {connect: 1s, first_token: 2s, idle: 3s, total: 10s}
retries: {backoff_base: 100ms, backoff_jitter: 0ms, min_retries_in_flight: 1}
routes:
  - {name: continued, to: {pool: [alpha, beta, gamma]}, continue_streams: true}
)";

// One provider behind a rule that continues cut streams: nobody can.
constexpr auto kContinuedAlone = R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m], continues_answers: true}
timeouts: {connect: 1s, first_token: 2s, idle: 3s, total: 10s}
routes:
  - {name: continued, to: {pool: [alpha]}, continue_streams: true}
)";

} // namespace

void RequestExecutionTest::answersFromTheFirstEndpoint()
{
    Fixture f(kTwoProviders);
    f.send();
    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    QCOMPARE(f.transport.last().request.totalTimeout, 0ms); // the scheduler owns the answer limit
    QVERIFY(!f.transport.last().request.answerStreams); // read through the transport's usual buffer
    f.transport.answer(u"hi"_s);

    QCOMPARE(f.log->status, 200);
    QCOMPARE(f.log->content(), u"hi"_s);
    QCOMPARE(f.log->attempts(), 1);
    QCOMPARE(f.log->header("x-switchyard-provider"), QByteArray("alpha"));
    QCOMPARE(f.finished, 1);
    QCOMPARE(f.scheduler.pending(), std::size_t(0));
    QCOMPARE(f.retryBudget.requestsInFlight(), 0);
}

void RequestExecutionTest::failsOverByErrorClass_data()
{
    QTest::addColumn<QString>("failure");
    QTest::addColumn<QString>("errorClass");
    QTest::addColumn<bool>("countsAgainstBreaker");
    QTest::newRow("5xx") << u"500"_s << u"server_error"_s << true;
    QTest::newRow("connect refused") << u"connect"_s << u"connect_failed"_s << true;
    QTest::newRow("connection reset") << u"reset"_s << u"connection_lost"_s << true;
    QTest::newRow("broken JSON") << u"garbage"_s << u"unusable_answer"_s << false;
    QTest::newRow("no answer in time") << u"hang"_s << u"timeout"_s << true;
}

void RequestExecutionTest::failsOverByErrorClass()
{
    QFETCH(QString, failure);
    QFETCH(QString, errorClass);
    QFETCH(bool, countsAgainstBreaker);
    Fixture f(kTwoProviders);
    f.send();
    if (failure == u"500") {
        f.transport.status(500);
    } else if (failure == u"connect") {
        f.transport.finish(upstream::TransportError::ConnectFailed);
    } else if (failure == u"reset") {
        f.transport.head(200, {{"content-type", "application/json"}});
        f.transport.finish(upstream::TransportError::ConnectionLost);
    } else if (failure == u"garbage") {
        f.transport.head(200, {{"content-type", "application/json"}});
        f.transport.body("not json");
        f.transport.finish();
    } else {
        f.advance(10s); // the answer limit: the request's total timeout (10 s) cuts it short
    }
    if (failure == u"hang") {
        // The total timeout is the request's deadline as well: nothing is left to fail over to.
        QCOMPARE(f.log->status, 504);
        QCOMPARE(f.log->error->code, u"upstream_timeout"_s);
        QCOMPARE(f.log->error->message,
                 u"Provider `alpha` did not answer in time: timed out (no answer within "
                 u"10000 ms)."_s);
        QVERIFY(!f.transport.calls.front()->live);
        return;
    }
    QCOMPARE(f.transport.calls.size(), std::size_t(1)); // the backoff comes first
    f.advance(99ms);
    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    f.advance(1ms);
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    f.transport.answer();

    QCOMPARE(f.log->status, 200);
    QCOMPARE(f.log->attempts(), 2);
    QVERIFY2(f.traceHas(u"upstream attempt"_s, u"(%1)"_s.arg(errorClass)), qPrintable(errorClass));
    const QList<ProviderHealth> health = f.health.snapshot();
    QCOMPARE(health[f.slot(u"alpha"_s)].errors, quint64(1));
    QCOMPARE(health[f.slot(u"alpha"_s)].consecutiveFailures, countsAgainstBreaker ? 1 : 0);
}

void RequestExecutionTest::requestFaultIsNeverRetried()
{
    Fixture f(kTwoProviders);
    f.send();
    f.transport.status(400);
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    QCOMPARE(f.log->status, 400);
    QCOMPARE(f.log->attempts(), 1);
}

void RequestExecutionTest::answerLimitWhileConnectingIsAConnectTimeout()
{
    Fixture f(kTwoProviders);
    f.send();
    f.transport.last().sent = false; // the connection never stood
    f.advance(10s);
    QCOMPARE(f.log->status, 504);
    QCOMPARE(f.log->error->message,
             u"Provider `alpha` did not answer in time: connect timed out (no connection within "
             u"10000 ms)."_s);
}

void RequestExecutionTest::timeoutsRunInSimulatedTime()
{
    Fixture f(kTwoProviders);
    f.send(true);
    f.transport.beginStream();
    f.advance(1999ms);
    QVERIFY(f.transport.last().live);
    f.advance(1ms); // first_token: 2 s
    QVERIFY(!f.transport.calls.front()->live);
    f.advance(100ms); // the backoff
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    // The second attempt in the same pool is not in a tier: no gradient, the same limit.
    f.transport.beginStream();
    f.transport.chunk(u"late but "_s);
    f.transport.chunk(u"here"_s);
    f.transport.done();
    f.transport.finish();
    QCOMPARE(f.log->streamedText(), u"late but here"_s);
    QVERIFY(f.log->streamEnded && !f.log->streamFailure);
    QCOMPARE(f.log->attempts(), 2);
    QVERIFY(f.traceHas(u"retry"_s, u"backoff of 100 ms"_s));
}

void RequestExecutionTest::idleTimeoutCountsFromTheLastRead()
{
    Fixture f(kTwoProviders);
    f.send(true);
    f.transport.beginStream();
    f.transport.chunk(u"a"_s);
    for (int i = 0; i < 5; ++i) {
        f.advance(2500ms); // under the 3 s idle limit each time
        f.transport.chunk(u"b"_s);
    }
    QVERIFY(f.transport.last().live);
    f.advance(3s);
    QVERIFY(!f.transport.last().live);
    QVERIFY(f.log->streamFailure);
    QCOMPARE(f.log->streamFailure->code, u"upstream_timeout"_s);
    QVERIFY(f.log->streamFailure->message.contains(u"no data for 3000 ms"_s));
    QCOMPARE(f.log->streamedText(), u"abbbbb"_s);
}

void RequestExecutionTest::rateLimitCoolsDownWithoutOpeningTheBreaker()
{
    Fixture f(kTwoProviders);
    f.send();
    f.transport.status(429, {{"retry-after", "2"}});
    // At once to the next endpoint: no backoff for a rate limit.
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    f.transport.answer();
    QCOMPARE(f.log->status, 200);

    const ProviderHealth alpha = f.health.snapshot()[f.slot(u"alpha"_s)];
    QCOMPARE(alpha.breaker, BreakerState::Closed);
    QCOMPARE(alpha.consecutiveFailures, 0);
    QCOMPARE(f.health.coolDownLeft(f.slot(u"alpha"_s)), 2000ms);
    // What the console and the admin API show: cooling down, a rate limit and no error.
    QCOMPARE(alpha.msUntilCoolDownEnds, 2000);
    QCOMPARE(alpha.rateLimited, quint64(1));
    QCOMPARE(alpha.errors, quint64(0));
    QVERIFY(!f.health.tryAdmit(f.slot(u"alpha"_s)));
    f.clock.advance(2s);
    QVERIFY(f.health.tryAdmit(f.slot(u"alpha"_s)));
}

void RequestExecutionTest::coolingEndpointIsPassedOverAtOnce()
{
    Fixture f(kTwoProviders);
    f.health.coolDown(f.slot(u"alpha"_s), 3s);
    f.send();
    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    f.transport.answer();
    QCOMPARE(f.log->attempts(), 1);
    QVERIFY(f.traceHas(u"skipped endpoint"_s, u"alpha: rate limited, cooling down"_s));
}

void RequestExecutionTest::waitsOutACoolDownOnceWhenNothingElseCan()
{
    Fixture f(kTwoProviders);
    f.health.applyAction(f.slot(u"beta"_s), ProviderAction::Disable);
    f.send();
    f.transport.status(429, {{"retry-after", "2"}});
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(1)); // waiting out alpha's 2 s
    f.advance(1999ms);
    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    f.advance(1ms);
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    // Rate limited again: a request waits at most once. The client gets 429 with the time left.
    f.transport.status(429, {{"retry-after", "3"}});
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    QCOMPARE(f.log->status, 429);
    QCOMPARE(f.log->error->code, u"upstream_rate_limited"_s);
    QCOMPARE(f.log->error->type, u"rate_limit_error"_s);
    QCOMPARE(f.log->error->retryAfter, QByteArray("3"));
    QVERIFY2(f.log->error->message.contains(u"`alpha` for 3 s"_s),
             qPrintable(f.log->error->message));
    QCOMPARE(f.log->attempts(), 2);
    QCOMPARE(f.health.snapshot()[f.slot(u"alpha"_s)].breaker, BreakerState::Closed);

    // The next request finds alpha cooling and waits for it (its own one wait), then gets it.
    f.send();
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    f.advance(3s);
    QCOMPARE(f.transport.calls.size(), std::size_t(3));
    f.transport.answer();
    QCOMPARE(f.log->status, 200);
    QCOMPARE(f.log->attempts(), 1);
}

void RequestExecutionTest::coolDownTooLongToWaitAnswers429_data()
{
    QTest::addColumn<QByteArray>("budgetMs"); // x-switchyard-timeout-budget-ms; empty: none
    QTest::addColumn<QByteArray>("retryAfter");
    QTest::addColumn<QString>("why");
    QTest::newRow("beyond the time budget")
        << QByteArray("1500") << QByteArray("2") << u"does not fit"_s;
    QTest::newRow("beyond max_retry_after (5 s)")
        << QByteArray() << QByteArray("60") << u"max_retry_after"_s;
}

void RequestExecutionTest::coolDownTooLongToWaitAnswers429()
{
    QFETCH(QByteArray, budgetMs);
    QFETCH(QByteArray, retryAfter);
    QFETCH(QString, why);
    Fixture f(kTwoProviders);
    f.health.applyAction(f.slot(u"beta"_s), ProviderAction::Disable);
    QList<QPair<QByteArray, QByteArray>> headers;
    if (!budgetMs.isEmpty())
        headers.append({"x-switchyard-timeout-budget-ms", budgetMs});
    f.send(false, headers);
    f.transport.status(429, {{"retry-after", retryAfter}});
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    QCOMPARE(f.log->status, 429);
    QCOMPARE(f.log->error->retryAfter, retryAfter);
    QVERIFY(f.traceHas(u"no retry"_s, why));
}

void RequestExecutionTest::coolDownWithoutRetryAfterIsTheConfiguredDefault()
{
    Fixture f(kTwoProviders);
    f.send();
    f.transport.status(429);
    QCOMPARE(f.health.coolDownLeft(f.slot(u"alpha"_s)), 1500ms);
}

void RequestExecutionTest::attemptCapSaysSo()
{
    // A config with the attempt cap at two and three endpoints.
    Fixture g(R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m]}
  - {id: beta, kind: openai, base_url: "http://beta.test/v1", models: [m], weight: 0}
  - {id: gamma, kind: openai, base_url: "http://gamma.test/v1", models: [m], weight: 0}
retries: {backoff_base: 10ms, backoff_jitter: 0ms, max_attempts: 2}
)");
    g.send();
    g.transport.status(500);
    g.advance(10ms);
    g.transport.status(503);
    g.advance(1s);
    QCOMPARE(g.transport.calls.size(), std::size_t(2));
    QCOMPARE(g.log->status, 503);
    QCOMPARE(g.log->error->code, u"attempts_exhausted"_s);
    QVERIFY(g.log->error->message.contains(u"attempt cap of 2"_s));
    QVERIFY(g.log->error->message.contains(u"`alpha` (HTTP 500), `beta` (HTTP 503)"_s));
}

void RequestExecutionTest::retryBudgetSaysSo()
{
    // The two providers, with a retry budget of `percent` and no floor under it.
    const auto withBudget = [](int percent) {
        return QByteArray("providers:\n"
                          "  - {id: alpha, kind: openai, base_url: \"http://alpha.test/v1\", "
                          "models: [m]}\n"
                          "  - {id: beta, kind: openai, base_url: \"http://beta.test/v1\", "
                          "models: [m], weight: 0}\n"
                          "retries: {backoff_base: 10ms, backoff_jitter: 0ms, "
                          "min_retries_in_flight: 0, budget_percent: ") +
               QByteArray::number(percent) + "}\n";
    };
    Fixture f(withBudget(0));
    f.send();
    f.transport.status(502);
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    QCOMPARE(f.log->status, 502);
    QCOMPARE(f.log->error->code, u"retry_budget_exhausted"_s);
    QVERIFY(f.log->error->message.contains(u"retry budget is spent"_s));
    QVERIFY(f.log->error->message.contains(u"`alpha` (HTTP 502)"_s));
    QCOMPARE(f.log->error->retryAfter, QByteArray("1"));

    // At 100 % every request may hold one retry: the same failure fails over.
    Fixture g(withBudget(100));
    g.send();
    g.transport.status(502);
    g.advance(10ms);
    g.transport.answer();
    QCOMPARE(g.log->status, 200);
}

void RequestExecutionTest::allDownAnswers503WithTheSoonestProbe()
{
    Fixture f(kTwoProviders);
    // Trip alpha's breaker by hand: five failures in a row (the default).
    for (int i = 0; i < 5; ++i) {
        QVERIFY(f.health.tryAdmit(f.slot(u"alpha"_s)));
        f.health.callStarted(f.slot(u"alpha"_s));
        f.health.callFinished(f.slot(u"alpha"_s), health::CallOutcome::CallFailure, 10, -1,
                              u"HTTP 500"_s);
    }
    QCOMPARE(f.health.breakerState(f.slot(u"alpha"_s)), BreakerState::Open);
    f.health.applyAction(f.slot(u"beta"_s), ProviderAction::Disable);
    f.send();
    QCOMPARE(f.transport.calls.size(), std::size_t(0));
    QCOMPARE(f.log->status, 503);
    QCOMPARE(f.log->error->code, u"no_route_candidate"_s);
    const qint64 untilProbe = f.health.msUntilAdmit(f.slot(u"alpha"_s));
    QCOMPARE(f.log->error->retryAfter, QByteArray::number((untilProbe + 999) / 1000));
    QVERIFY2(f.log->error->message.contains(u"`alpha` (breaker open"_s),
             qPrintable(f.log->error->message));
    QVERIFY(f.log->error->message.contains(u"`beta` (disabled by an operator)"_s));
    QCOMPARE(f.log->attempts(), 0);
}

void RequestExecutionTest::cutBeforeTheFirstByteFailsOver()
{
    Fixture f(kTwoProviders);
    f.send(true);
    f.transport.beginStream();
    f.transport.body(": keep-alive\n\n"); // a comment is not a byte for the client
    f.transport.finish(upstream::TransportError::ConnectionLost);
    QCOMPARE(f.log->status, 0);
    f.advance(100ms);
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    f.transport.beginStream();
    f.transport.chunk(u"whole"_s);
    f.transport.done();
    f.transport.finish();
    QCOMPARE(f.log->streamedText(), u"whole"_s);
    QCOMPARE(f.log->header("x-switchyard-provider"), QByteArray("beta"));
}

void RequestExecutionTest::openingEventsWaitForTheFirstContent()
{
    Fixture f(kTwoProviders);
    f.send(true);
    f.transport.beginStream();
    // A provider that says who speaks, then fails: the client has still been sent nothing.
    f.transport.body(R"(data: {"id":"c1","object":"chat.completion.chunk","choices":[)"
                     R"({"index":0,"delta":{"role":"assistant","content":""},)"
                     R"("finish_reason":null}]})"
                     "\n\n");
    QCOMPARE(f.log->status, 0);
    QVERIFY(f.log->events.isEmpty());
    f.transport.finish(upstream::TransportError::ConnectionLost);
    f.advance(100ms);
    QCOMPARE(f.transport.calls.size(), std::size_t(2)); // failed over, as before any byte

    // The next one opens the same way and answers: its opening chunk goes out with its content.
    f.transport.beginStream();
    f.transport.body(R"(data: {"id":"c2","object":"chat.completion.chunk","choices":[)"
                     R"({"index":0,"delta":{"role":"assistant"},"finish_reason":null}]})"
                     "\n\n");
    QVERIFY(f.log->events.isEmpty());
    f.transport.chunk(u"whole"_s);
    QCOMPARE(f.log->events.size(), 2);
    QVERIFY(f.log->events.first().data.contains(R"("id":"c2")"));
    f.transport.done();
    f.transport.finish();
    QCOMPARE(f.log->streamedText(), u"whole"_s);
    QCOMPARE(f.log->header("x-switchyard-provider"), QByteArray("beta"));
}

void RequestExecutionTest::aCommittedStreamLetsGoOfBothSidesHeaders()
{
    Fixture f(kTwoProviders);
    const QList<QPair<QByteArray, QByteArray>> clientHeaders{{"x-switchyard-user", "u1"},
                                                             {"authorization", "Bearer sk-1"}};
    const upstream::HeaderList providerHeaders{{"content-type", "text/event-stream"},
                                               {"x-ratelimit-remaining", "7"}};
    f.send(true, clientHeaders);
    f.transport.head(200, providerHeaders);
    // Another attempt could still follow: the execution keeps both.
    QVERIFY(!clientHeaders.isDetached());
    QVERIFY(!providerHeaders.isDetached());

    f.transport.chunk(u"first"_s);
    // The first byte is relayed: no other attempt can follow, and a held stream keeps neither.
    QVERIFY(clientHeaders.isDetached());
    QVERIFY(providerHeaders.isDetached());
    f.transport.done();
    f.transport.finish();
    QCOMPARE(f.log->streamedText(), u"first"_s);
    QCOMPARE(f.finished, 1);
}

void RequestExecutionTest::cutAfterTheFirstByteEndsTheStream()
{
    Fixture f(kTwoProviders);
    f.send(true);
    QVERIFY(f.transport.last().request.answerStreams); // read through a stream's small buffer
    f.transport.beginStream();
    f.transport.chunk(u"half"_s);
    f.transport.finish(upstream::TransportError::ConnectionLost);
    f.advance(1s);
    QCOMPARE(f.transport.calls.size(), std::size_t(1)); // never a second provider
    QVERIFY(f.log->streamFailure);
    QCOMPARE(f.log->streamFailure->code, u"upstream_stream_interrupted"_s);
    QCOMPARE(f.log->streamedText(), u"half"_s);
    QCOMPARE(f.finished, 1);
}

void RequestExecutionTest::aStreamCutByItsIdleTimeoutContinuesElsewhere()
{
    Fixture f(kContinuedStreams);
    f.send(true);
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    f.transport.beginStream();
    f.transport.chunk(u"Once upon "_s);
    f.advance(3s); // alpha goes silent past the idle timeout
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    const QJsonObject continued = QJsonDocument::fromJson(f.transport.last().request.body).object();
    const QJsonObject partial = continued.value(u"messages"_s).toArray().last().toObject();
    QCOMPARE(partial.value(u"role"_s).toString(), u"assistant"_s);
    QCOMPARE(partial.value(u"content"_s).toString(), u"Once upon "_s);
    QVERIFY(continued.value(u"continue_final_message"_s).toBool());

    f.transport.beginStream();
    f.transport.chunk(u"a time."_s);
    f.transport.done();
    f.transport.finish();
    f.settle();
    QVERIFY(!f.log->streamFailure);
    QVERIFY(f.log->streamEnded);
    QCOMPARE(f.log->streamedText(), u"Once upon a time."_s);
    QCOMPARE(f.finished, 1);
    const telemetry::Trace trace = f.lastTrace();
    QCOMPARE(trace.status, 200);
    QCOMPARE(trace.attempts, 2);
    QVERIFY(f.traceHas(u"stream cut"_s, u"`alpha` was cut off after 10 characters"_s));
    QVERIFY(f.traceHas(u"stream continued"_s, u"beta continues"_s));
    // Neither provider reported usage: both attempts are estimated and billed.
    QVERIFY(trace.tokensEstimated);
    QVERIFY(trace.outputTokens >= 2);
    QVERIFY(trace.inputTokens >= 2);
    QCOMPARE(f.health.snapshot()[f.slot(u"alpha"_s)].errors, quint64(1));
}

void RequestExecutionTest::aStreamCutByAnErrorEventContinuesElsewhere()
{
    Fixture f(kContinuedStreams);
    f.send(true);
    f.transport.beginStream();
    f.transport.chunk(u"Part one, "_s);
    f.transport.body(R"(data: {"error":{"message":"overloaded","type":"server_error"}})"
                     "\n\n");
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    f.transport.beginStream();
    f.transport.chunk(u"part two."_s);
    f.transport.done();
    f.transport.finish();
    f.settle();
    QVERIFY(!f.log->streamFailure);
    QCOMPARE(f.log->streamedText(), u"Part one, part two."_s);
}

void RequestExecutionTest::aContinuationThatFailsBeforeItsTextEndsWithTheCut()
{
    Fixture f(kContinuedStreams);
    f.send(true);
    f.transport.beginStream();
    f.transport.chunk(u"half"_s);
    f.transport.finish(upstream::TransportError::ConnectionLost);
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    f.transport.status(503);
    f.advance(1s);
    // Nobody is left to continue: the client learns of the cut, not of beta's 503.
    QVERIFY(f.log->streamFailure);
    QCOMPARE(f.log->streamFailure->code, u"upstream_stream_interrupted"_s);
    QCOMPARE(f.log->streamedText(), u"half"_s);
    QCOMPARE(f.finished, 1);
    QVERIFY(f.traceHas(u"not continued"_s, u"no candidate could continue"_s));
}

void RequestExecutionTest::aProviderRefusingToContinueIsPassedOver()
{
    Fixture f(kThreeContinuing);
    f.send(true);
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    f.transport.beginStream();
    f.transport.chunk(u"Begun, "_s);
    f.transport.finish(upstream::TransportError::ConnectionLost);
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    const QString refusing = f.transport.last().provider();
    f.transport.status(400); // a model that takes no prefilled answer
    f.settle();
    QCOMPARE(f.transport.calls.size(), std::size_t(3));
    QVERIFY(f.transport.last().provider() != refusing);
    f.transport.beginStream();
    f.transport.chunk(u"and ended."_s);
    f.transport.done();
    f.transport.finish();
    f.settle();
    QVERIFY(!f.log->streamFailure);
    QCOMPARE(f.log->streamedText(), u"Begun, and ended."_s);
    // Counted once, for the provider that continued.
    QCOMPARE(f.lastTrace().attempts, 3);
}

void RequestExecutionTest::aCutNobodyContinuesIsBilledOnce()
{
    // The same cut with and without the setting: nobody can continue it, so the record is the
    // same, not the cut attempt's tokens twice.
    const auto cut = [](Fixture &f) {
        f.send(true);
        f.transport.beginStream();
        f.transport.chunk(u"half an answer"_s);
        f.transport.finish(upstream::TransportError::ConnectionLost);
        f.advance(1s);
        return f.lastTrace();
    };
    Fixture continued(kContinuedAlone);
    Fixture plain(kTwoProviders);
    const telemetry::Trace withSetting = cut(continued);
    const telemetry::Trace without = cut(plain);
    QCOMPARE(withSetting.outcome, u"upstream_stream_interrupted"_s);
    QCOMPARE(without.outcome, u"upstream_stream_interrupted"_s);
    QVERIFY(withSetting.inputTokens > 0);
    QCOMPARE(withSetting.inputTokens, without.inputTokens);
    QCOMPARE(withSetting.outputTokens, without.outputTokens);
}

void RequestExecutionTest::clientBudgetEndsAStream()
{
    Fixture f(kTwoProviders);
    f.send(true, {{"x-switchyard-timeout-budget-ms", "2500"}});
    f.transport.beginStream();
    f.transport.chunk(u"a"_s);
    f.advance(1s);
    f.transport.chunk(u"b"_s);
    f.advance(1500ms);
    QVERIFY(f.log->streamFailure);
    QCOMPARE(f.log->streamFailure->code, u"timeout_budget_exhausted"_s);
    // The provider was within its own limits: the budget ending it is not its failure.
    QCOMPARE(f.health.snapshot()[f.slot(u"alpha"_s)].errors, quint64(0));
}

void RequestExecutionTest::ladderLevels_data()
{
    QTest::addColumn<QByteArray>("fallbackLevel");
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("degraded");
    QTest::addColumn<QString>("answer");
    QTest::newRow("level 1: a lighter model")
        << QByteArray("1") << QByteArray("hello") << 200 << QByteArray("1") << u"light"_s;
    QTest::newRow("level 2: a canned answer") << QByteArray("2") << QByteArray("opening hours?")
                                              << 200 << QByteArray("2") << u"We open at nine."_s;
    QTest::newRow("level 3: the fail-safe message")
        << QByteArray("3") << QByteArray("hello") << 200 << QByteArray("3") << u"Busy."_s;
    QTest::newRow("level 0: the provider's error")
        << QByteArray("0") << QByteArray("hello") << 502 << QByteArray("0") << QString();
}

void RequestExecutionTest::ladderLevels()
{
    QFETCH(QByteArray, fallbackLevel);
    QFETCH(QByteArray, content);
    QFETCH(int, status);
    QFETCH(QByteArray, degraded);
    QFETCH(QString, answer);
    Fixture f(R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m]}
  - {id: beta, kind: openai, base_url: "http://beta.test/v1", models: [small]}
tiers:
  light: {pool: [beta]}
  pro: {pool: [alpha]}
retries: {backoff_base: 10ms, backoff_jitter: 0ms}
degradation:
  canned:
    - when: {contains: "opening hours"}
      reply: "We open at nine."
  fail_safe: "Busy."
routes:
  - {name: pro, when: {field: model, eq: m}, to: {tier: pro}}
)");
    f.send(false, {{"x-switchyard-fallback-level", fallbackLevel}}, content);
    f.transport.status(500);
    f.advance(10ms);
    if (fallbackLevel == "1") {
        QCOMPARE(f.transport.calls.size(), std::size_t(2));
        QCOMPARE(f.transport.last().provider(), u"beta"_s);
        f.transport.answer(u"light"_s);
    } else if (fallbackLevel != "0") {
        // Levels 2 and 3 also try the lighter model first; it fails too.
        QCOMPARE(f.transport.calls.size(), std::size_t(2));
        f.transport.status(500);
        f.advance(1s);
    }
    QCOMPARE(f.log->status, status);
    QCOMPARE(f.log->header("x-switchyard-degraded"), degraded);
    if (!answer.isEmpty())
        QCOMPARE(f.log->content(), answer);
    // The record says the same: the rung that answered, and no provider on a ladder's own answer.
    const telemetry::Trace trace = f.lastTrace();
    QCOMPARE(trace.degradedLevel, degraded.toInt());
    QCOMPARE(trace.status, status);
    if (degraded.toInt() >= 2)
        QVERIFY(trace.provider.isEmpty());
}

void RequestExecutionTest::recordKeepsTheFinishReasonPastAUsageChunk()
{
    Fixture f(kTwoProviders);
    f.send(true);
    f.transport.beginStream();
    f.transport.chunk(u"hello"_s);
    // One read: the finish chunk, a usage chunk without choices (include_usage), the end.
    f.transport.body(
        R"(data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]})"
        "\n\n"
        R"(data: {"id":"c1","object":"chat.completion.chunk","model":"m","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2}})"
        "\n\n"
        "data: [DONE]\n\n");
    f.transport.finish();
    const telemetry::Trace trace = f.lastTrace();
    QCOMPARE(trace.status, 200);
    QCOMPARE(trace.finishReason, u"length"_s);
    QCOMPARE(trace.inputTokens, qint64(7));
    QCOMPARE(trace.outputTokens, qint64(2));
    QCOMPARE(trace.chunkCount, 4u);
    QVERIFY(trace.timeToFirstByteMicros >= 0);
}

void RequestExecutionTest::gatewayOverloadIsNotBlamedOnTheProvider_data()
{
    QTest::addColumn<double>("lagMs");
    QTest::addColumn<bool>("blamesTheGateway");
    QTest::newRow("loop on time: the provider timed out") << 0.0 << false;
    QTest::newRow("loop just under admission.overload_lag") << 249.0 << false;
    QTest::newRow("loop 400 ms late: the gateway's own backlog") << 400.0 << true;
}

void RequestExecutionTest::gatewayOverloadIsNotBlamedOnTheProvider()
{
    QFETCH(double, lagMs);
    QFETCH(bool, blamesTheGateway);
    Fixture f(kTwoProviders); // first_token 2s; admission.overload_lag 250ms by default
    f.loop.lagMs = lagMs;
    f.send(true);
    f.advance(2s); // no first token from alpha within its limit
    const ProviderHealth alpha = f.health.snapshot().at(f.slot(u"alpha"_s));
    if (blamesTheGateway) {
        // Nothing held against alpha, no second attempt adding to the load, and the client
        // told it was the gateway.
        QCOMPARE(alpha.errors, quint64(0));
        QCOMPARE(alpha.consecutiveFailures, 0);
        QCOMPARE(f.transport.calls.size(), std::size_t(1));
        QCOMPARE(f.log->status, 503);
        QVERIFY(f.log->error.has_value());
        QCOMPARE(f.log->error->code, u"gateway_overloaded"_s);
        QVERIFY(!f.log->error->retryAfter.isEmpty());
        QVERIFY(f.traceHas(u"gateway overloaded"_s, u"ran 400 ms late"_s));
    } else {
        QCOMPARE(alpha.errors, quint64(1));
        QCOMPARE(alpha.consecutiveFailures, 1);
        f.advance(500ms);                                   // the backoff
        QCOMPARE(f.transport.calls.size(), std::size_t(2)); // failed over to beta
    }
}

void RequestExecutionTest::aSocketTheGatewayCannotOpenIsNotBlamedOnTheProvider()
{
    Fixture f(kTwoProviders);
    f.send();
    // The transport could not open a socket: this process is out of descriptors.
    f.transport.finish(upstream::TransportError::LocalResources);
    const ProviderHealth alpha = f.health.snapshot().at(f.slot(u"alpha"_s));
    // Nothing held against alpha, and no failover: beta's call would need a socket too.
    QCOMPARE(alpha.errors, quint64(0));
    QCOMPARE(alpha.consecutiveFailures, 0);
    QCOMPARE(f.health.inFlight(f.slot(u"alpha"_s)), 0);
    f.advance(1s);
    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    QCOMPARE(f.log->status, 503);
    QVERIFY(f.log->error.has_value());
    QCOMPARE(f.log->error->code, u"gateway_overloaded"_s);
    QVERIFY(!f.log->error->retryAfter.isEmpty());
    QVERIFY2(f.log->error->message.contains(u"could not open a connection to provider `alpha`"_s),
             qPrintable(f.log->error->message));
    QVERIFY(f.traceHas(u"gateway overloaded"_s, u"the gateway's own limit, not alpha's"_s));
}

void RequestExecutionTest::answerReadWhileTheGatewayIsLateIsNotTimed_data()
{
    QTest::addColumn<double>("lagMs");
    QTest::addColumn<bool>("timed");
    QTest::newRow("loop on time: the provider's speed") << 0.0 << true;
    QTest::newRow("loop 400 ms late: the gateway's backlog") << 400.0 << false;
}

void RequestExecutionTest::answerReadWhileTheGatewayIsLateIsNotTimed()
{
    QFETCH(double, lagMs);
    QFETCH(bool, timed);
    Fixture f(kTwoProviders); // admission.overload_lag 250ms by default
    f.send(true);
    f.advance(1500ms);    // the first token comes late...
    f.loop.lagMs = lagMs; // ...while the engine loop runs this late
    f.transport.beginStream();
    f.transport.chunk(u"hello"_s);
    f.loop.lagMs = 0.0;
    f.transport.done();
    f.transport.finish();
    QVERIFY(f.log->streamEnded && !f.log->streamFailure);
    const ProviderHealth alpha = f.health.snapshot().at(f.slot(u"alpha"_s));
    // A success either way: nothing held against alpha...
    QCOMPARE(alpha.requests, quint64(1));
    QCOMPARE(alpha.errors, quint64(0));
    // ...but its time to first token only counts when the gateway was on time: a late loop's
    // times would feed the slow rule and open alpha's breaker for the gateway's own overload.
    if (timed) {
        QCOMPARE(alpha.p50TimeToFirstTokenMs, 1500.0);
        QVERIFY(!f.traceHas(u"gateway late"_s, u"not held against alpha"_s));
    } else {
        QCOMPARE(alpha.p50TimeToFirstTokenMs, -1.0);
        QCOMPARE(alpha.p50LatencyMs, -1.0);
        QVERIFY(f.traceHas(u"gateway late"_s, u"ran 400 ms late"_s));
    }
}

void RequestExecutionTest::drainedEndpointFinishesWhatItHas()
{
    Fixture f(kTwoProviders);
    RequestExecution *streaming = f.send(true);
    Q_UNUSED(streaming);
    std::shared_ptr<ClientLog> first = f.log;
    f.transport.beginStream();
    f.transport.chunk(u"started "_s);
    // An operator drains alpha while its stream runs: that stream finishes on alpha...
    f.health.applyAction(f.slot(u"alpha"_s), ProviderAction::Drain);
    const std::size_t streamCall = f.transport.calls.size() - 1;
    // ...while a new request goes to beta without a call to alpha.
    f.send();
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    f.transport.answer(u"from beta"_s);
    QCOMPARE(f.log->content(), u"from beta"_s);
    QCOMPARE(f.log->attempts(), 1);

    FakeCallState &alphaCall = *f.transport.calls[streamCall];
    QVERIFY(alphaCall.live);
    alphaCall.observer->onResponseBody("data: {\"choices\":[{\"index\":0,\"delta\":"
                                       "{\"content\":\"and finished\"}}]}\n\ndata: [DONE]\n\n");
    alphaCall.live = false;
    alphaCall.observer->onFinished({});
    QCOMPARE(first->streamedText(), u"started and finished"_s);
    QVERIFY(first->streamEnded && !first->streamFailure);
    QCOMPARE(f.health.inFlight(f.slot(u"alpha"_s)), 0);
}

void RequestExecutionTest::backPressurePausesAndResumes()
{
    Fixture f(kTwoProviders);
    f.send(true);
    f.transport.beginStream();
    f.log->pendingBytes = 2 * 1024 * 1024; // the client reads slower than the provider writes
    f.transport.chunk(u"a"_s);
    QVERIFY(f.transport.last().paused);
    // A slow client is not a stalled one: it took some, so the watch starts again.
    f.advance(2s);
    f.log->pendingBytes = 512 * 1024;
    f.log->listener->onClientDrained();
    QVERIFY(f.transport.last().paused);
    f.advance(2s);
    f.log->pendingBytes = 0;
    f.log->listener->onClientDrained();
    QVERIFY(!f.transport.last().paused);
    f.transport.chunk(u"b"_s);
    f.transport.done();
    f.transport.finish();
    QCOMPARE(f.log->streamedText(), u"ab"_s);
    QVERIFY(f.traceHas(u"client back-pressure"_s, u"paused 1 time(s)"_s));
}

void RequestExecutionTest::stalledClientIsDropped()
{
    Fixture f(kTwoProviders);
    f.send(true);
    f.transport.beginStream();
    f.log->pendingBytes = 2 * 1024 * 1024;
    f.transport.chunk(u"a"_s);
    f.advance(3s); // an idle period without taking a byte
    QVERIFY(f.log->aborted);
    QVERIFY(!f.transport.last().live);
    QCOMPARE(f.lastTrace().status, 499);
    QCOMPARE(f.health.inFlight(f.slot(u"alpha"_s)), 0);
}

void RequestExecutionTest::clientDisconnectStopsEverything()
{
    Fixture f(kTwoProviders);
    f.send(true);
    f.transport.beginStream();
    f.log->listener->onClientGone();
    QVERIFY(!f.transport.last().live);
    QCOMPARE(f.finished, 1);
    QCOMPARE(f.lastTrace().status, 499);
    QCOMPARE(f.scheduler.pending(), std::size_t(0));
    QCOMPARE(f.health.inFlight(f.slot(u"alpha"_s)), 0);
    QCOMPARE(f.health.snapshot()[f.slot(u"alpha"_s)].errors, quint64(0));
}

void RequestExecutionTest::clientDisconnectDuringABackoff()
{
    Fixture f(kTwoProviders);
    f.send();
    f.transport.status(500);
    QCOMPARE(f.retryBudget.retriesInFlight(), 1);
    f.log->listener->onClientGone();
    QCOMPARE(f.finished, 1);
    QCOMPARE(f.retryBudget.retriesInFlight(), 0);
    QCOMPARE(f.retryBudget.requestsInFlight(), 0);
    f.advance(1s);
    QCOMPARE(f.transport.calls.size(), std::size_t(1)); // the backoff never led anywhere
}

void RequestExecutionTest::deletedWhileWaitingLeavesNothingBehind()
{
    Fixture f(kTwoProviders);
    RequestExecution *run = f.send();
    f.transport.status(500); // now in its backoff
    delete run;
    QCOMPARE(f.scheduler.pending(), std::size_t(0));
    QCOMPARE(f.retryBudget.retriesInFlight(), 0);
    QCOMPARE(f.retryBudget.requestsInFlight(), 0);
    f.advance(1s);
    QCOMPARE(f.transport.calls.size(), std::size_t(1));

    RequestExecution *streaming = f.send(true);
    f.transport.beginStream();
    delete streaming; // mid-attempt
    QVERIFY(!f.transport.last().live);
    QCOMPARE(f.health.inFlight(f.slot(u"alpha"_s)), 0);
}

QTEST_GUILESS_MAIN(RequestExecutionTest)
#include "tst_request_execution.moc"
