// A provider that fails, in every way the fake can fail: the client gets an OpenAI-shaped error
// saying what went wrong, the failure is counted against the provider, nothing stays in flight,
// and the gateway serves the next request as before.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "health/health_registry.h"
#include "resilience/retry_policy.h"
#include "test_client.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QLoggingCategory>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;

Q_DECLARE_METATYPE(switchyard::testing::FakeUpstream::Mode)

namespace {

using Mode = FakeUpstream::Mode;
using Headers = QList<QPair<QByteArray, QByteArray>>;

// A second provider that always answers, so "the gateway still serves" can be checked even
// when the provider under test is unreachable.
const QString kHealthyModel = QStringLiteral("healthy-model");

} // namespace

class GatewayUpstreamFailuresTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void upstreamStatusIsMappedToAnOpenAiError_data();
    void upstreamStatusIsMappedToAnOpenAiError();
    void transportFailureBecomesAGatewayError_data();
    void transportFailureBecomesAGatewayError();
    void unreachableProviderIsUnavailable();
    void hangOnAReusedConnectionIsAnAnswerTimeout();
    void reusedConnectionClosedUnderARequestIsNeverResentUncounted_data();
    void reusedConnectionClosedUnderARequestIsNeverResentUncounted();
    void connectNeverAcceptedIsAConnectTimeout();
    void streamEndingEarlyEndsWithAnErrorEvent_data();
    void streamEndingEarlyEndsWithAnErrorEvent();
    void silentStreamEndsWithATimeoutErrorEvent();
    void answerWholeAtDoneEndsCleanly_data();
    void answerWholeAtDoneEndsCleanly();
    void streamEndsSoonAfterDoneEvenWithALongIdleTimeout();
    void unusableAnswersNeverMarkTheProviderDown_data();
    void unusableAnswersNeverMarkTheProviderDown();
    void repeatedCallFailuresMarkTheProviderDown();

private:
    // Starts the gateway with `primary` (test-model) at `primaryBaseUrl` and a healthy provider.
    void startGateway(const QByteArray &primaryBaseUrl);
    // Nothing is left in flight, and a good request to the healthy provider is answered.
    void verifyRecovered();

    std::unique_ptr<FakeUpstream> m_fake;    // the provider under test
    std::unique_ptr<FakeUpstream> m_healthy; // always answers
    std::unique_ptr<Engine> m_engine;
};

void GatewayUpstreamFailuresTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayUpstreamFailuresTest::init()
{
    m_fake = std::make_unique<FakeUpstream>();
    m_healthy = std::make_unique<FakeUpstream>();
}

void GatewayUpstreamFailuresTest::cleanup()
{
    m_engine.reset();
    m_healthy.reset();
    m_fake.reset();
}

void GatewayUpstreamFailuresTest::startGateway(const QByteArray &primaryBaseUrl)
{
    config::Config config = gatewayConfig(
        {providerAt(QStringLiteral("primary"), primaryBaseUrl, {QStringLiteral("test-model")}),
         providerFor(QStringLiteral("healthy"), *m_healthy, {kHealthyModel})});
    config.timeouts = shortTimeouts();
    m_engine = startEngine(config);
    QVERIFY(m_engine);
}

void GatewayUpstreamFailuresTest::verifyRecovered()
{
    QTRY_COMPARE_WITH_TIMEOUT(m_engine->inFlight(), 0, 5000);
    QCOMPARE(healthInFlight(*m_engine), 0);
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody(kHealthyModel.toUtf8(), true));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.events().constLast().data, QByteArray("[DONE]"));
    QCOMPARE(m_engine->inFlight(), 0);
}

void GatewayUpstreamFailuresTest::upstreamStatusIsMappedToAnOpenAiError_data()
{
    QTest::addColumn<bool>("stream");
    QTest::addColumn<int>("upstreamStatus");
    QTest::addColumn<QByteArray>("upstreamBody");
    QTest::addColumn<Headers>("upstreamHeaders");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QByteArray>("retryAfter");
    QTest::addColumn<bool>("providerAtFault");

    const auto openAiError = [](const char *message) {
        return QByteArray(R"({"error":{"message":")") + message +
               R"(","type":"x","param":null,"code":null}})";
    };
    QTest::newRow("500 becomes 502")
        << false << 500 << openAiError("boom") << Headers() << 502
        << QStringLiteral("upstream_error") << QStringLiteral("upstream_error")
        << QStringLiteral("Provider `primary` failed with HTTP 500: boom") << QByteArray() << true;
    QTest::newRow("500 without a JSON body")
        << false << 500 << QByteArray("<html>  Internal\n Error </html>") << Headers() << 502
        << QStringLiteral("upstream_error") << QStringLiteral("upstream_error")
        << QStringLiteral("Provider `primary` failed with HTTP 500: <html> Internal Error </html>")
        << QByteArray() << true;
    QTest::newRow("503 keeps Retry-After")
        << false << 503 << openAiError("overloaded") << Headers{{"Retry-After", "30"}} << 503
        << QStringLiteral("upstream_error") << QStringLiteral("upstream_error")
        << QStringLiteral("Provider `primary` failed with HTTP 503: overloaded") << QByteArray("30")
        << true;
    // 7 s do not fit the 400 ms total a plain request has here, and no other provider serves
    // the model: the client gets a 429 with the time its provider cools down. A rate limit is
    // a cool-down, not an error against the provider's health.
    QTest::newRow("429 keeps Retry-After")
        << false << 429 << openAiError("slow down") << Headers{{"Retry-After", "7"}} << 429
        << QStringLiteral("rate_limit_error") << QStringLiteral("upstream_rate_limited")
        << QStringLiteral("Every endpoint for model `test-model` that could take the request is "
                          "rate limited: `primary` for 7 s more. The last said: Provider "
                          "`primary` is rate limiting requests: slow down")
        << QByteArray("7") << false;
    QTest::newRow("400 passes through")
        << false << 400 << openAiError("temperature must be at most 2") << Headers() << 400
        << QStringLiteral("invalid_request_error") << QStringLiteral("upstream_rejected")
        << QStringLiteral(
               "Provider `primary` rejected the request (HTTP 400): temperature must be at most 2")
        << QByteArray() << false;
    QTest::newRow("401 passes through")
        << false << 401 << openAiError("invalid api key") << Headers() << 401
        << QStringLiteral("authentication_error") << QStringLiteral("upstream_rejected")
        << QStringLiteral("Provider `primary` rejected the request (HTTP 401): invalid api key")
        << QByteArray() << false;
    // A streamed request refused before any event gets the same answer as a plain one. A
    // stream has no deadline of its own, so the wait asked for is longer than the gateway waits
    // out itself (`retries.max_retry_after`, 10 s); a shorter one is waited out once when no
    // other provider can take the request (tst_gateway_resilience).
    QTest::newRow("429 to a streamed request")
        << true << 429 << openAiError("slow down") << Headers{{"Retry-After", "30"}} << 429
        << QStringLiteral("rate_limit_error") << QStringLiteral("upstream_rate_limited")
        << QStringLiteral("Every endpoint for model `test-model` that could take the request is "
                          "rate limited: `primary` for 30 s more. The last said: Provider "
                          "`primary` is rate limiting requests: slow down")
        << QByteArray("30") << false;
    QTest::newRow("500 to a streamed request")
        << true << 500 << openAiError("boom") << Headers() << 502
        << QStringLiteral("upstream_error") << QStringLiteral("upstream_error")
        << QStringLiteral("Provider `primary` failed with HTTP 500: boom") << QByteArray() << true;
}

void GatewayUpstreamFailuresTest::upstreamStatusIsMappedToAnOpenAiError()
{
    QFETCH(bool, stream);
    QFETCH(int, upstreamStatus);
    QFETCH(QByteArray, upstreamBody);
    QFETCH(Headers, upstreamHeaders);
    QFETCH(int, status);
    QFETCH(QString, type);
    QFETCH(QString, code);
    QFETCH(QString, message);
    QFETCH(QByteArray, retryAfter);
    QFETCH(bool, providerAtFault);
    m_fake->mode = Mode::Status;
    m_fake->status = upstreamStatus;
    m_fake->statusBody = upstreamBody;
    m_fake->extraHeaders = upstreamHeaders;
    startGateway(m_fake->baseUrl());
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", stream));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    QCOMPARE(client.header("content-type"), QByteArray("application/json"));
    QCOMPARE(client.header("retry-after"), retryAfter);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("primary"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(), type);
    QCOMPARE(error.value(QStringLiteral("code")).toString(), code);
    QCOMPARE(error.value(QStringLiteral("param")), QJsonValue(QJsonValue::Null));
    QCOMPARE(error.value(QStringLiteral("message")).toString(), message);
    const ProviderHealth health = providerHealth(*m_engine, QStringLiteral("primary"));
    QCOMPARE(health.requests, quint64(1));
    QCOMPARE(health.errors, quint64(providerAtFault ? 1 : 0));
    verifyRecovered();
}

void GatewayUpstreamFailuresTest::transportFailureBecomesAGatewayError_data()
{
    QTest::addColumn<Mode>("mode");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("messageStart");

    QTest::newRow("connection reset")
        << Mode::Reset << false << 502 << QStringLiteral("upstream_connection_lost")
        << QStringLiteral("Provider `primary` broke off the answer: ");
    QTest::newRow("connection reset, streamed")
        << Mode::Reset << true << 502 << QStringLiteral("upstream_connection_lost")
        << QStringLiteral("Provider `primary` broke off the answer: ");
    QTest::newRow("answer not JSON")
        << Mode::Garbage << false << 502 << QStringLiteral("invalid_upstream_response")
        << QStringLiteral("Provider `primary` sent an answer that is not valid JSON.");
    QTest::newRow("hang, total timeout")
        << Mode::Hang << false << 504 << QStringLiteral("upstream_timeout")
        << QStringLiteral("Provider `primary` did not answer in time: timed out (no answer within "
                          "400 ms).");
    QTest::newRow("hang, first-token timeout")
        << Mode::Hang << true << 504 << QStringLiteral("upstream_timeout")
        << QStringLiteral("Provider `primary` timed out: no first token within 300 ms.");
    QTest::newRow("stream cut before the first event")
        << Mode::CutStream << true << 502 << QStringLiteral("upstream_connection_lost")
        << QStringLiteral("Provider `primary` broke off the answer: ");
    QTest::newRow("JSON answer to a streamed request")
        << Mode::NotAStream << true << 502 << QStringLiteral("invalid_upstream_response")
        << QStringLiteral(
               "Provider `primary` answered a streamed request without an event stream.");
}

void GatewayUpstreamFailuresTest::transportFailureBecomesAGatewayError()
{
    QFETCH(Mode, mode);
    QFETCH(bool, stream);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(QString, messageStart);
    m_fake->mode = mode;
    m_fake->cutAfterEvents = 0;
    startGateway(m_fake->baseUrl());
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", stream));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    QCOMPARE(client.header("content-type"), QByteArray("application/json"));
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("primary"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(), QStringLiteral("upstream_error"));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), code);
    const QString message = error.value(QStringLiteral("message")).toString();
    QVERIFY2(message.startsWith(messageStart), qPrintable(message));
    QCOMPARE(m_fake->requests().size(), 1);
    const ProviderHealth health = providerHealth(*m_engine, QStringLiteral("primary"));
    QCOMPARE(health.requests, quint64(1));
    QCOMPARE(health.errors, quint64(1));
    verifyRecovered();
}

void GatewayUpstreamFailuresTest::unreachableProviderIsUnavailable()
{
    const quint16 port = closedLoopbackPort();
    QVERIFY(port != 0);
    startGateway("http://127.0.0.1:" + QByteArray::number(port) + "/v1");
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 502);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(), QStringLiteral("upstream_error"));
    QCOMPARE(error.value(QStringLiteral("code")).toString(),
             QStringLiteral("upstream_unavailable"));
    const QString message = error.value(QStringLiteral("message")).toString();
    QVERIFY2(message.startsWith(QStringLiteral("Provider `primary` could not be reached: ")),
             qPrintable(message));
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("primary")).errors, quint64(1));
    verifyRecovered();
}

void GatewayUpstreamFailuresTest::hangOnAReusedConnectionIsAnAnswerTimeout()
{
    startGateway(m_fake->baseUrl());
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    m_fake->mode = Mode::Hang;

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 504);
    QCOMPARE(m_fake->requests().size(), 2);
    // One connection in all: the second call went over the first one.
    QCOMPARE(m_fake->openConnections() + m_fake->closedConnections(), 1);
    const QString message = errorOf(client.body()).value(QStringLiteral("message")).toString();
    QVERIFY2(message.startsWith(
                 QStringLiteral("Provider `primary` did not answer in time: timed out (")),
             qPrintable(message));
}

void GatewayUpstreamFailuresTest::reusedConnectionClosedUnderARequestIsNeverResentUncounted_data()
{
    QTest::addColumn<bool>("otherEndpoint");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("provider");
    QTest::addColumn<QByteArray>("attempts");

    QTest::newRow("no other endpoint: the client is told")
        << false << 502 << QByteArray("primary") << QByteArray("1");
    QTest::newRow("another endpoint: the executor retries there")
        << true << 200 << QByteArray("backup") << QByteArray("2");
}

void GatewayUpstreamFailuresTest::reusedConnectionClosedUnderARequestIsNeverResentUncounted()
{
    // The provider reads the second request whole, on the connection kept alive from the
    // first, then closes that connection without answering: it may have started the call. The
    // transport must not quietly send the request again on a fresh connection; calling again
    // is the executor's decision, counted in the attempts the client is told of.
    QFETCH(bool, otherEndpoint);
    QFETCH(int, status);
    QFETCH(QByteArray, provider);
    QFETCH(QByteArray, attempts);
    m_fake->mode = Mode::CloseOnReuse;
    FakeUpstream backup;
    QList<config::ProviderConfig> providers{
        providerFor(QStringLiteral("primary"), *m_fake, {QStringLiteral("test-model")})};
    if (otherEndpoint) {
        // Weight 0: never drawn first, so the first request goes to primary.
        providers.append(
            providerFor(QStringLiteral("backup"), backup, {QStringLiteral("test-model")}));
        providers.last().weight = 0;
    }
    config::Config config = gatewayConfig(providers);
    config.timeouts = shortTimeouts();
    config.resilience.retries.backoffBase = std::chrono::milliseconds(0);
    config.resilience.retries.backoffJitter = std::chrono::milliseconds(0);
    config.resilience.probes.enabled = false; // a probe would be one more request to count
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("primary"));
    const int firstAttempts = client.header("x-switchyard-attempts").toInt();

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    const int secondAttempts = client.header("x-switchyard-attempts").toInt();
    // Every call a provider received is one the client was told of.
    QCOMPARE(m_fake->requests().size() + backup.requests().size(), firstAttempts + secondAttempts);
    QCOMPARE(client.status(), status);
    QCOMPARE(client.header("x-switchyard-provider"), provider);
    QCOMPARE(client.header("x-switchyard-attempts"), attempts);
    QCOMPARE(client.header("content-type"), QByteArray("application/json"));
    if (otherEndpoint) {
        QCOMPARE(backup.requests().size(), 1);
        QCOMPARE(m_engine->retryBudget().retriesGranted(), quint64(1));
    } else {
        const QJsonObject error = errorOf(client.body());
        QCOMPARE(error.value(QStringLiteral("code")).toString(),
                 QStringLiteral("upstream_connection_lost"));
        QCOMPARE(error.value(QStringLiteral("message")).toString(),
                 QStringLiteral("Provider `primary` broke off the answer: the kept-alive "
                                "connection closed before the answer; the request was not "
                                "sent again."));
    }
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("primary")).errors, quint64(1));
    QTRY_COMPARE_WITH_TIMEOUT(m_engine->inFlight(), 0, 5000);
}

void GatewayUpstreamFailuresTest::connectNeverAcceptedIsAConnectTimeout()
{
    // A listener that accepts nothing, its queue already full: the kernel drops further SYNs,
    // so a connect neither succeeds nor fails until the gateway gives up on it.
    QTcpServer listener;
    listener.setListenBacklogSize(0);
    QVERIFY(listener.listen(QHostAddress::LocalHost, 0));
    listener.pauseAccepting();
    QTcpSocket queueFiller;
    queueFiller.connectToHost(QHostAddress::LocalHost, listener.serverPort());
    QVERIFY(queueFiller.waitForConnected(5000));
    startGateway("http://127.0.0.1:" + QByteArray::number(listener.serverPort()) + "/v1");
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 504);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("upstream_timeout"));
    const QString message = error.value(QStringLiteral("message")).toString();
    QVERIFY2(message.startsWith(
                 QStringLiteral("Provider `primary` did not answer in time: connect timed out (")),
             qPrintable(message));
    verifyRecovered();
}

void GatewayUpstreamFailuresTest::streamEndingEarlyEndsWithAnErrorEvent_data()
{
    QTest::addColumn<Mode>("mode");
    QTest::addColumn<int>("eventsBeforeError");
    QTest::addColumn<QString>("messageStart");

    // Cut: the connection closes after two events, with no final chunk.
    QTest::newRow("stream cut after two events")
        << Mode::CutStream << 2 << QStringLiteral("Provider `primary` broke off the stream: ");
    // No [DONE]: three events and the final one, then a properly ended stream.
    QTest::newRow("stream ended without [DONE]")
        << Mode::StreamNoDone << 4
        << QStringLiteral("Provider `primary` ended the stream before `data: [DONE]`; the "
                          "answer is incomplete.");
}

void GatewayUpstreamFailuresTest::streamEndingEarlyEndsWithAnErrorEvent()
{
    QFETCH(Mode, mode);
    QFETCH(int, eventsBeforeError);
    QFETCH(QString, messageStart);
    m_fake->mode = mode;
    m_fake->cutAfterEvents = 2;
    m_fake->streamEvents = 3;
    startGateway(m_fake->baseUrl());
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(client.chunked());
    QVERIFY(!client.framingError());
    QCOMPARE(client.events().size(), eventsBeforeError + 1);
    for (int i = 0; i < eventsBeforeError; ++i)
        QVERIFY(errorOf(client.events().at(i).data).isEmpty());
    const QJsonObject error = errorOf(client.events().constLast().data);
    QCOMPARE(error.value(QStringLiteral("type")).toString(), QStringLiteral("upstream_error"));
    QCOMPARE(error.value(QStringLiteral("code")).toString(),
             QStringLiteral("upstream_stream_interrupted"));
    const QString message = error.value(QStringLiteral("message")).toString();
    QVERIFY2(message.startsWith(messageStart), qPrintable(message));
    for (const upstream::SseEvent &event : client.events())
        QVERIFY(!event.isDone());
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("primary")).errors, quint64(1));
    verifyRecovered();
}

void GatewayUpstreamFailuresTest::silentStreamEndsWithATimeoutErrorEvent()
{
    m_fake->manualStreaming = true; // sends the first event, then nothing until released
    startGateway(m_fake->baseUrl());
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(!client.framingError());
    QCOMPARE(client.events().size(), 2);
    const QJsonObject error = errorOf(client.events().constLast().data);
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("upstream_timeout"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Provider `primary` timed out: no data for 300 ms between chunks."));
    for (const upstream::SseEvent &event : client.events())
        QVERIFY(!event.isDone());
    QTRY_COMPARE_WITH_TIMEOUT(m_fake->openConnections(), 0, 5000);
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("primary")).errors, quint64(1));
    verifyRecovered();
}

void GatewayUpstreamFailuresTest::answerWholeAtDoneEndsCleanly_data()
{
    QTest::addColumn<bool>("closeAfterDone");
    // After [DONE] the provider either leaves its response open or drops the connection
    // before the response's own end.
    QTest::newRow("stream left open after [DONE]") << false;
    QTest::newRow("connection lost just after [DONE]") << true;
}

void GatewayUpstreamFailuresTest::answerWholeAtDoneEndsCleanly()
{
    QFETCH(bool, closeAfterDone);
    m_fake->endAfterDone = false;
    m_fake->closeAfterDone = closeAfterDone;
    startGateway(m_fake->baseUrl());
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    // [DONE] is the end of the answer: whatever the provider does with its connection after
    // it, the client gets a cleanly ended stream with nothing after [DONE], and the provider
    // is not blamed.
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(!client.framingError());
    QVERIFY(!client.events().isEmpty());
    QCOMPARE(client.events().constLast().data, QByteArray("[DONE]"));
    for (const upstream::SseEvent &event : client.events())
        QVERIFY2(errorOf(event.data).isEmpty(), event.data.constData());
    QCOMPARE(providerHealth(*m_engine, QStringLiteral("primary")).errors, quint64(0));
    verifyRecovered();
}

void GatewayUpstreamFailuresTest::streamEndsSoonAfterDoneEvenWithALongIdleTimeout()
{
    m_fake->endAfterDone = false;
    config::Config config = gatewayConfig(
        {providerFor(QStringLiteral("primary"), *m_fake, {QStringLiteral("test-model")})});
    config.timeouts = shortTimeouts();
    config.timeouts.idle = std::chrono::seconds(60);
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    // The provider never ends its response after [DONE]; the client must not wait out the
    // 60 s idle timeout for an answer that is already whole.
    QVERIFY(client.waitForFinished(20000));
    QCOMPARE(client.events().constLast().data, QByteArray("[DONE]"));
    const ProviderHealth health = providerHealth(*m_engine, QStringLiteral("primary"));
    QCOMPARE(health.errors, quint64(0));
    QCOMPARE(health.requests, quint64(1));
    QTRY_COMPARE_WITH_TIMEOUT(m_engine->inFlight(), 0, 5000);
}

void GatewayUpstreamFailuresTest::unusableAnswersNeverMarkTheProviderDown_data()
{
    QTest::addColumn<Mode>("mode");
    QTest::addColumn<bool>("stream");

    QTest::newRow("answer not JSON") << Mode::Garbage << false;
    QTest::newRow("JSON answer to a streamed request") << Mode::NotAStream << true;
}

void GatewayUpstreamFailuresTest::unusableAnswersNeverMarkTheProviderDown()
{
    QFETCH(Mode, mode);
    QFETCH(bool, stream);
    m_fake->mode = mode;
    startGateway(m_fake->baseUrl());
    constexpr int kCalls = health::HealthRegistry::kDownAfterConsecutiveFailures + 1;

    for (int call = 0; call < kCalls; ++call) {
        TestClient client(m_engine->port());
        client.post("/v1/chat/completions", chatBody("test-model", stream));
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 502);
    }

    // An answer arrived each time: it counts against quality, never as a call failure.
    const ProviderHealth health = providerHealth(*m_engine, QStringLiteral("primary"));
    QCOMPARE(health.errors, quint64(kCalls));
    QCOMPARE(health.state, ProviderState::Up);
}

void GatewayUpstreamFailuresTest::repeatedCallFailuresMarkTheProviderDown()
{
    m_fake->mode = Mode::Status;
    m_fake->status = 500;
    startGateway(m_fake->baseUrl());
    constexpr int kCalls = health::HealthRegistry::kDownAfterConsecutiveFailures;

    for (int call = 0; call < kCalls; ++call) {
        TestClient client(m_engine->port());
        client.post("/v1/chat/completions", chatBody("test-model", false));
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 502);
    }

    const ProviderHealth health = providerHealth(*m_engine, QStringLiteral("primary"));
    QCOMPARE(health.errors, quint64(kCalls));
    QCOMPARE(health.state, ProviderState::Down);
}

QTEST_GUILESS_MAIN(GatewayUpstreamFailuresTest)
#include "tst_gateway_upstream_failures.moc"
