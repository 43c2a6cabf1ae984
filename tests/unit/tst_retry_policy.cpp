// The executor's pure rules: how an attempt's ending is classified, whether and where it is
// retried, how long it waits first, and how many retries may be in flight at once.

#include "resilience/error_class.h"
#include "resilience/retry_policy.h"

#include <QtTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using std::chrono::milliseconds;
using switchyard::health::CallOutcome;
using switchyard::resilience::ErrorClass;
using switchyard::resilience::RetryAction;
using switchyard::resilience::RetryStop;
using switchyard::resilience::TimeoutKind;
using switchyard::upstream::TransportError;
namespace config = switchyard::config;
namespace resilience = switchyard::resilience;

using OptionalMs = std::optional<milliseconds>;
Q_DECLARE_METATYPE(OptionalMs)

class TestRetryPolicy : public QObject {
    Q_OBJECT

private slots:
    void classifiesEveryEnding_data();
    void classifiesEveryEnding();
    void countsOutcomesForHealth_data();
    void countsOutcomesForHealth();
    void readsRetryAfter_data();
    void readsRetryAfter();
    void backsOffExponentiallyWithJitter_data();
    void backsOffExponentiallyWithJitter();
    void stretchesTimeoutsAlongTheGradient_data();
    void stretchesTimeoutsAlongTheGradient();
    void decidesRetriesByErrorClass_data();
    void decidesRetriesByErrorClass();
    void waitsOutACoolDownOnlyWhenItFits_data();
    void waitsOutACoolDownOnlyWhenItFits();
    void budgetAllowsAShareOfRequestsInFlight_data();
    void budgetAllowsAShareOfRequestsInFlight();
    void budgetSlotsAreGivenBack();
};

void TestRetryPolicy::classifiesEveryEnding_data()
{
    QTest::addColumn<TransportError>("transport");
    QTest::addColumn<int>("status");
    QTest::addColumn<TimeoutKind>("timeout");
    QTest::addColumn<ErrorClass>("expected");

    QTest::newRow("200") << TransportError::None << 200 << TimeoutKind::None << ErrorClass::None;
    QTest::newRow("201") << TransportError::None << 201 << TimeoutKind::None << ErrorClass::None;
    QTest::newRow("connect refused")
        << TransportError::ConnectFailed << 0 << TimeoutKind::None << ErrorClass::ConnectFailed;
    QTest::newRow("TLS failed") << TransportError::TlsFailed << 0 << TimeoutKind::None
                                << ErrorClass::ConnectFailed;
    QTest::newRow("connect timeout")
        << TransportError::ConnectTimeout << 0 << TimeoutKind::None << ErrorClass::Timeout;
    QTest::newRow("total timeout")
        << TransportError::TotalTimeout << 0 << TimeoutKind::None << ErrorClass::Timeout;
    QTest::newRow("first-token timer")
        << TransportError::None << 200 << TimeoutKind::FirstToken << ErrorClass::Timeout;
    QTest::newRow("idle timer") << TransportError::None << 200 << TimeoutKind::Idle
                                << ErrorClass::Timeout;
    QTest::newRow("reset") << TransportError::ConnectionLost << 0 << TimeoutKind::None
                           << ErrorClass::ConnectionLost;
    QTest::newRow("not HTTP") << TransportError::ProtocolError << 0 << TimeoutKind::None
                              << ErrorClass::ConnectionLost;
    QTest::newRow("other transport error")
        << TransportError::Other << 0 << TimeoutKind::None << ErrorClass::ConnectionLost;
    QTest::newRow("429") << TransportError::None << 429 << TimeoutKind::None
                         << ErrorClass::RateLimited;
    QTest::newRow("500") << TransportError::None << 500 << TimeoutKind::None
                         << ErrorClass::ServerError;
    QTest::newRow("503") << TransportError::None << 503 << TimeoutKind::None
                         << ErrorClass::ServerError;
    QTest::newRow("402, a provider's billing problem")
        << TransportError::None << 402 << TimeoutKind::None << ErrorClass::ServerError;
    QTest::newRow("302") << TransportError::None << 302 << TimeoutKind::None
                         << ErrorClass::ServerError;
    for (int status : {400, 401, 403, 404, 413, 422}) {
        QTest::addRow("%d", status)
            << TransportError::None << status << TimeoutKind::None << ErrorClass::RequestRejected;
    }
}

void TestRetryPolicy::classifiesEveryEnding()
{
    QFETCH(TransportError, transport);
    QFETCH(int, status);
    QFETCH(TimeoutKind, timeout);
    QFETCH(ErrorClass, expected);
    QCOMPARE(resilience::classify(transport, status, timeout), expected);
}

void TestRetryPolicy::countsOutcomesForHealth_data()
{
    QTest::addColumn<ErrorClass>("error");
    QTest::addColumn<bool>("cutByBudget");
    QTest::addColumn<CallOutcome>("expected");

    QTest::newRow("ok") << ErrorClass::None << false << CallOutcome::Success;
    QTest::newRow("timeout") << ErrorClass::Timeout << false << CallOutcome::CallFailure;
    QTest::newRow("timeout cut short by the client's budget")
        << ErrorClass::Timeout << true << CallOutcome::Cancelled;
    QTest::newRow("429 is a cool-down, not a failure")
        << ErrorClass::RateLimited << false << CallOutcome::RateLimited;
    QTest::newRow("5xx") << ErrorClass::ServerError << false << CallOutcome::CallFailure;
    QTest::newRow("connect") << ErrorClass::ConnectFailed << false << CallOutcome::CallFailure;
    QTest::newRow("cut") << ErrorClass::ConnectionLost << false << CallOutcome::CallFailure;
    QTest::newRow("broken JSON") << ErrorClass::UnusableAnswer << false << CallOutcome::Unusable;
    QTest::newRow("400") << ErrorClass::RequestRejected << false << CallOutcome::RequestFault;
}

void TestRetryPolicy::countsOutcomesForHealth()
{
    QFETCH(ErrorClass, error);
    QFETCH(bool, cutByBudget);
    QFETCH(CallOutcome, expected);
    QCOMPARE(resilience::callOutcomeFor(error, cutByBudget), expected);
}

void TestRetryPolicy::readsRetryAfter_data()
{
    QTest::addColumn<QByteArray>("retryAfterMs");
    QTest::addColumn<QByteArray>("retryAfter");
    QTest::addColumn<OptionalMs>("expected");

    QTest::newRow("absent") << QByteArray() << QByteArray() << OptionalMs();
    QTest::newRow("seconds") << QByteArray() << "7"_ba << OptionalMs(7000ms);
    QTest::newRow("zero seconds") << QByteArray() << "0"_ba << OptionalMs(0ms);
    QTest::newRow("retry-after-ms wins") << "250"_ba
                                         << "7"_ba << OptionalMs(250ms);
    QTest::newRow("fractional ms") << "1.6"_ba << QByteArray() << OptionalMs(2ms);
    QTest::newRow("HTTP date 30 s ahead")
        << QByteArray() << "Tue, 14 Nov 2023 22:13:50 GMT"_ba << OptionalMs(30'000ms);
    QTest::newRow("HTTP date in the past")
        << QByteArray() << "Tue, 14 Nov 2023 22:00:00 GMT"_ba << OptionalMs(0ms);
    QTest::newRow("garbage") << QByteArray() << "soon"_ba << OptionalMs();
    QTest::newRow("negative") << QByteArray() << "-3"_ba << OptionalMs();
    QTest::newRow("absurdly long is capped at ten minutes")
        << QByteArray() << "99999999"_ba << OptionalMs(600'000ms);
}

void TestRetryPolicy::readsRetryAfter()
{
    QFETCH(QByteArray, retryAfterMs);
    QFETCH(QByteArray, retryAfter);
    QFETCH(OptionalMs, expected);
    const QDateTime now = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000, QTimeZone::utc());
    QCOMPARE(resilience::retryAfterDelay(retryAfterMs, retryAfter, now), expected);
}

void TestRetryPolicy::backsOffExponentiallyWithJitter_data()
{
    QTest::addColumn<int>("retryIndex");
    QTest::addColumn<double>("jitterDraw");
    QTest::addColumn<qint64>("expectedMs");

    // The defaults: 500 ms base, 200 ms jitter, 5 s cap.
    QTest::newRow("first retry, no jitter") << 0 << 0.0 << qint64(500);
    QTest::newRow("first retry, half jitter") << 0 << 0.5 << qint64(600);
    QTest::newRow("first retry, most jitter") << 0 << 0.999 << qint64(700);
    QTest::newRow("second retry") << 1 << 0.0 << qint64(1000);
    QTest::newRow("third retry") << 2 << 0.25 << qint64(2050);
    QTest::newRow("fourth retry") << 3 << 0.0 << qint64(4000);
    QTest::newRow("fifth retry is capped") << 4 << 0.0 << qint64(5000);
    QTest::newRow("cap plus jitter") << 20 << 1.0 << qint64(5200);
    QTest::newRow("huge index does not overflow") << 1000 << 0.0 << qint64(5000);
}

void TestRetryPolicy::backsOffExponentiallyWithJitter()
{
    QFETCH(int, retryIndex);
    QFETCH(double, jitterDraw);
    QFETCH(qint64, expectedMs);
    const switchyard::config::RetryConfig defaults;
    QCOMPARE(resilience::backoffDelay(defaults, retryIndex, jitterDraw).count(), expectedMs);
}

void TestRetryPolicy::stretchesTimeoutsAlongTheGradient_data()
{
    QTest::addColumn<qint64>("baseMs");
    QTest::addColumn<double>("gradient");
    QTest::addColumn<int>("earlier");
    QTest::addColumn<qint64>("expectedMs");

    QTest::newRow("first attempt") << qint64(8000) << 1.5 << 0 << qint64(8000);
    QTest::newRow("first retry") << qint64(8000) << 1.5 << 1 << qint64(12000);
    QTest::newRow("second retry") << qint64(8000) << 1.5 << 2 << qint64(18000);
    QTest::newRow("no gradient") << qint64(30000) << 1.0 << 3 << qint64(30000);
    QTest::newRow("capped at a day") << qint64(80'000'000) << 10.0 << 30 << qint64(86'400'000);
}

void TestRetryPolicy::stretchesTimeoutsAlongTheGradient()
{
    QFETCH(qint64, baseMs);
    QFETCH(double, gradient);
    QFETCH(int, earlier);
    QFETCH(qint64, expectedMs);
    QCOMPARE(resilience::stretchedTimeout(milliseconds(baseMs), gradient, earlier).count(),
             expectedMs);
}

void TestRetryPolicy::decidesRetriesByErrorClass_data()
{
    QTest::addColumn<ErrorClass>("error");
    QTest::addColumn<bool>("answerReachedClient");
    QTest::addColumn<int>("attemptsMade");
    QTest::addColumn<OptionalMs>("remaining");
    QTest::addColumn<RetryAction>("action");
    QTest::addColumn<qint64>("delayMs");
    QTest::addColumn<RetryStop>("stop");
    QTest::addColumn<QString>("reason");

    const OptionalMs none;
    // Jitter is fixed at 0.5 (100 ms of the default 200 ms) in every row.
    QTest::newRow("timeout: next endpoint")
        << ErrorClass::Timeout << false << 1 << none << RetryAction::NextEndpoint << qint64(600)
        << RetryStop::None << u"next endpoint after a backoff of 600 ms"_s;
    QTest::newRow("5xx: next endpoint, second backoff")
        << ErrorClass::ServerError << false << 2 << none << RetryAction::NextEndpoint
        << qint64(1100) << RetryStop::None << u"next endpoint after a backoff of 1100 ms"_s;
    QTest::newRow("connect: next endpoint")
        << ErrorClass::ConnectFailed << false << 1 << none << RetryAction::NextEndpoint
        << qint64(600) << RetryStop::None << u"next endpoint after a backoff of 600 ms"_s;
    QTest::newRow("cut before the first byte: next endpoint")
        << ErrorClass::ConnectionLost << false << 1 << none << RetryAction::NextEndpoint
        << qint64(600) << RetryStop::None << u"next endpoint after a backoff of 600 ms"_s;
    QTest::newRow("broken JSON: next endpoint")
        << ErrorClass::UnusableAnswer << false << 1 << none << RetryAction::NextEndpoint
        << qint64(600) << RetryStop::None << u"next endpoint after a backoff of 600 ms"_s;
    QTest::newRow("429: next endpoint at once, even with little time left")
        << ErrorClass::RateLimited << false << 1 << OptionalMs(50ms) << RetryAction::NextEndpoint
        << qint64(0) << RetryStop::None
        << u"rate limited: the endpoint cools down, the next endpoint at once"_s;
    QTest::newRow("400 is never retried")
        << ErrorClass::RequestRejected << false << 1 << none << RetryAction::GiveUp << qint64(0)
        << RetryStop::NotRetryable
        << u"the request itself was refused; any endpoint would refuse it alike"_s;
    QTest::newRow("nothing after the first streamed byte")
        << ErrorClass::ConnectionLost << true << 1 << none << RetryAction::GiveUp << qint64(0)
        << RetryStop::AnswerStarted
        << u"the answer had begun to reach the client; a second provider would repeat or "
           u"contradict it"_s;
    QTest::newRow("attempt cap reached")
        << ErrorClass::ServerError << false << 5 << none << RetryAction::GiveUp << qint64(0)
        << RetryStop::AttemptsExhausted
        << u"5 attempt(s) made, the most `retries.max_attempts` allows"_s;
    QTest::newRow("attempt cap reached by a 429")
        << ErrorClass::RateLimited << false << 5 << none << RetryAction::GiveUp << qint64(0)
        << RetryStop::AttemptsExhausted
        << u"5 attempt(s) made, the most `retries.max_attempts` allows"_s;
    QTest::newRow("backoff does not fit the budget")
        << ErrorClass::ServerError << false << 1 << OptionalMs(300ms) << RetryAction::GiveUp
        << qint64(0) << RetryStop::TimeBudget
        << u"a backoff of 600 ms does not fit the 300 ms left of the time budget"_s;
}

void TestRetryPolicy::decidesRetriesByErrorClass()
{
    QFETCH(ErrorClass, error);
    QFETCH(bool, answerReachedClient);
    QFETCH(int, attemptsMade);
    QFETCH(OptionalMs, remaining);
    QFETCH(RetryAction, action);
    QFETCH(qint64, delayMs);
    QFETCH(RetryStop, stop);
    QFETCH(QString, reason);
    const switchyard::config::RetryConfig defaults;
    const resilience::RetryInput input{error, answerReachedClient, attemptsMade, remaining, 0.5};

    const resilience::RetryDecision decision = resilience::decideRetry(input, defaults);

    QCOMPARE(decision.action, action);
    QCOMPARE(decision.delay.count(), delayMs);
    QCOMPARE(decision.stop, stop);
    QCOMPARE(decision.reason, reason);
}

void TestRetryPolicy::waitsOutACoolDownOnlyWhenItFits_data()
{
    QTest::addColumn<qint64>("coolDownMs");
    QTest::addColumn<bool>("alreadyWaited");
    QTest::addColumn<int>("attemptsMade");
    QTest::addColumn<OptionalMs>("remaining");
    QTest::addColumn<RetryAction>("action");
    QTest::addColumn<RetryStop>("stop");

    const OptionalMs none;
    QTest::newRow("fits the budget") << qint64(2000) << false << 1 << OptionalMs(5000ms)
                                     << RetryAction::SameEndpoint << RetryStop::None;
    QTest::newRow("no deadline, within max_retry_after")
        << qint64(10'000) << false << 1 << none << RetryAction::SameEndpoint << RetryStop::None;
    QTest::newRow("a first attempt waits too")
        << qint64(500) << false << 0 << none << RetryAction::SameEndpoint << RetryStop::None;
    QTest::newRow("only once per request")
        << qint64(100) << true << 1 << none << RetryAction::GiveUp << RetryStop::AlreadyWaited;
    QTest::newRow("beyond the budget") << qint64(9000) << false << 1 << OptionalMs(5000ms)
                                       << RetryAction::GiveUp << RetryStop::TimeBudget;
    QTest::newRow("beyond max_retry_after")
        << qint64(10'001) << false << 1 << none << RetryAction::GiveUp << RetryStop::WaitTooLong;
    QTest::newRow("no attempt left")
        << qint64(100) << false << 5 << none << RetryAction::GiveUp << RetryStop::AttemptsExhausted;
}

void TestRetryPolicy::waitsOutACoolDownOnlyWhenItFits()
{
    QFETCH(qint64, coolDownMs);
    QFETCH(bool, alreadyWaited);
    QFETCH(int, attemptsMade);
    QFETCH(OptionalMs, remaining);
    QFETCH(RetryAction, action);
    QFETCH(RetryStop, stop);
    const switchyard::config::RetryConfig defaults;

    const resilience::RetryDecision decision = resilience::decideCoolDownWait(
        milliseconds(coolDownMs), alreadyWaited, attemptsMade, remaining, defaults);

    QCOMPARE(decision.action, action);
    QCOMPARE(decision.stop, stop);
    QCOMPARE(decision.delay.count(), action == RetryAction::SameEndpoint ? coolDownMs : 0);
    QVERIFY(!decision.reason.isEmpty());
}

void TestRetryPolicy::budgetAllowsAShareOfRequestsInFlight_data()
{
    QTest::addColumn<double>("percent");
    QTest::addColumn<int>("minimum");
    QTest::addColumn<int>("requestsInFlight");
    QTest::addColumn<int>("allowed");

    QTest::newRow("quiet gateway: the floor") << 20.0 << 3 << 1 << 3;
    QTest::newRow("10 requests: still the floor") << 20.0 << 3 << 10 << 3;
    QTest::newRow("20 requests: 20 % is 4") << 20.0 << 3 << 20 << 4;
    QTest::newRow("512 requests") << 20.0 << 3 << 512 << 102;
    QTest::newRow("no floor, 4 requests") << 20.0 << 0 << 4 << 0;
    QTest::newRow("no floor, 10 requests") << 20.0 << 0 << 10 << 2;
    QTest::newRow("zero percent keeps the floor") << 0.0 << 3 << 1000 << 3;
}

void TestRetryPolicy::budgetAllowsAShareOfRequestsInFlight()
{
    QFETCH(double, percent);
    QFETCH(int, minimum);
    QFETCH(int, requestsInFlight);
    QFETCH(int, allowed);
    config::Config rules;
    rules.resilience.retries.budgetPercent = percent;
    rules.resilience.retries.minRetriesInFlight = minimum;
    const config::ConfigStore store(rules);
    resilience::RetryBudget budget(store);
    for (int i = 0; i < requestsInFlight; ++i)
        budget.requestStarted();

    QCOMPARE(budget.allowedRetriesInFlight(), allowed);
    for (int i = 0; i < allowed; ++i)
        QVERIFY(budget.tryStartRetry());
    QVERIFY(!budget.tryStartRetry());
    QCOMPARE(budget.retriesInFlight(), allowed);
    QCOMPARE(budget.retriesGranted(), quint64(allowed));
    QCOMPARE(budget.retriesRefused(), quint64(1));
    QCOMPARE(budget.peakRetriesInFlight(), allowed);
}

void TestRetryPolicy::budgetSlotsAreGivenBack()
{
    config::Config rules;
    rules.resilience.retries.budgetPercent = 20.0;
    rules.resilience.retries.minRetriesInFlight = 1;
    const config::ConfigStore store(rules);
    resilience::RetryBudget budget(store);
    budget.requestStarted();
    QVERIFY(budget.tryStartRetry());
    QVERIFY(!budget.tryStartRetry());

    budget.retryFinished();

    QVERIFY(budget.tryStartRetry());
    QCOMPARE(budget.retriesGranted(), quint64(2));
    QCOMPARE(budget.retriesRefused(), quint64(1));
    QCOMPARE(budget.peakRetriesInFlight(), 1);
    budget.retryFinished();
    budget.requestFinished();
    QCOMPARE(budget.requestsInFlight(), 0);
    QCOMPARE(budget.retriesInFlight(), 0);
}

QTEST_APPLESS_MAIN(TestRetryPolicy)
#include "tst_retry_policy.moc"
