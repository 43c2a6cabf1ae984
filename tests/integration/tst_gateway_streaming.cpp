// Streamed answers: relayed event by event as the provider produces them, framed as a proper
// chunked event stream, and many at once.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/trace.h"
#include "test_client.h"

#include <QLoggingCategory>
#include <QTest>
#include <algorithm>
#include <memory>
#include <vector>

using namespace switchyard;
using namespace switchyard::testing;

namespace {

QByteArray contentEvent(int index)
{
    return R"({"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":[{"index":0,)"
           R"("delta":{"content":"t)" +
           QByteArray::number(index) + R"("},"finish_reason":null}]})";
}

const QByteArray kStopEvent = R"({"id":"chatcmpl-fake","object":"chat.completion.chunk",)"
                              R"("choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})";

} // namespace

class GatewayStreamingTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void eachEventReachesTheClientBeforeTheNextExists();
    void streamIsChunkedAndEndsCleanlyAfterDone();
    void streamedAnswerIsAnEventStreamWithIdentityHeaders();
    void providerStreamIsRelayedEventForEvent();
    void nothingFollowsDone();
    void twoHundredConcurrentStreamsAllComplete();
    void slowClientPausesTheProviderInsteadOfBuffering();
    void stalledClientIsLetGoAfterAnIdlePeriod();
    void pipelinedRequestsAreAnsweredInOrder();
    void pipelinedContinueWaitsForTheStreamBeforeIt();
};

void GatewayStreamingTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayStreamingTest::eachEventReachesTheClientBeforeTheNextExists()
{
    FakeUpstream fake;
    fake.manualStreaming = true;
    fake.streamEvents = 3;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    // The fake sends its first event at once and holds each further one until released.
    QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), 1, 5000);
    QCOMPARE(client.events().at(0).data, contentEvent(0));
    QCOMPARE(client.status(), 200);
    QVERIFY(!client.finished());

    fake.releaseEvent();
    QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), 2, 5000);
    QCOMPARE(client.events().at(1).data, contentEvent(1));
    QVERIFY(!client.finished());

    fake.releaseEvent();
    QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), 3, 5000);
    QCOMPARE(client.events().at(2).data, contentEvent(2));
    QVERIFY(!client.finished());

    fake.releaseEvent(); // the final event, [DONE] and the end of the stream
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.events().size(), 5);
    QCOMPARE(client.events().at(3).data, kStopEvent);
    QCOMPARE(client.events().at(4).data, QByteArray("[DONE]"));
}

void GatewayStreamingTest::streamIsChunkedAndEndsCleanlyAfterDone()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(client.chunked());
    QVERIFY(!client.framingError());
    QVERIFY(client.header("content-length").isEmpty());
    QVERIFY(!client.events().isEmpty());
    QCOMPARE(client.events().constLast().data, QByteArray("[DONE]"));
    QVERIFY(client.body().endsWith("data: [DONE]\n\n"));
    QVERIFY(!client.connectionClosed());
}

void GatewayStreamingTest::streamedAnswerIsAnEventStreamWithIdentityHeaders()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true), {{"x-request-id", "s-1"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("content-type"), QByteArray("text/event-stream; charset=utf-8"));
    QCOMPARE(client.header("cache-control"), QByteArray("no-cache"));
    QCOMPARE(client.header("x-switchyard-request-id"), QByteArray("s-1"));
    QCOMPARE(client.header("x-switchyard-trace-id").size(), 32);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("primary"));
    QCOMPARE(fake.requests().size(), 1);
    QCOMPARE(fake.requests().constFirst().header("accept"), QByteArray("text/event-stream"));
}

void GatewayStreamingTest::providerStreamIsRelayedEventForEvent()
{
    FakeUpstream fake;
    fake.streamEvents = 6;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    QVERIFY(client.waitForFinished());
    QList<QByteArray> expected;
    for (int i = 0; i < 6; ++i)
        expected.append(contentEvent(i));
    expected.append(kStopEvent);
    expected.append("[DONE]");
    QList<QByteArray> received;
    for (const upstream::SseEvent &event : client.events())
        received.append(event.data);
    QCOMPARE(received, expected);
}

void GatewayStreamingTest::nothingFollowsDone()
{
    FakeUpstream fake;
    fake.streamEvents = 1;
    fake.afterDone = "data: {\"late\":true}\n\n";
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", true));

    QVERIFY(client.waitForFinished());
    QVERIFY(!client.framingError());
    QVERIFY(!client.body().contains("late"));
    QCOMPARE(client.body().count("data: [DONE]"), 1);
    QVERIFY(client.body().endsWith("data: [DONE]\n\n"));
}

void GatewayStreamingTest::twoHundredConcurrentStreamsAllComplete()
{
    constexpr int kStreams = 200;
    constexpr int kContentEvents = 3;
    FakeUpstream fake;
    fake.manualStreaming = true; // every stream stays open until all of them are
    fake.streamEvents = kContentEvents;
    config::ProviderConfig provider =
        providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")});
    provider.capacity = kStreams;
    auto engine = startEngine(gatewayConfig({provider}));
    QVERIFY(engine);

    std::vector<std::unique_ptr<TestClient>> clients;
    clients.reserve(kStreams);
    for (int i = 0; i < kStreams; ++i) {
        clients.push_back(std::make_unique<TestClient>(engine->port()));
        clients.back()->post("/v1/chat/completions",
                             chatBody("test-model", true, "stream " + QByteArray::number(i)));
    }
    const auto allHaveEvents = [&clients](qsizetype count) {
        return std::all_of(clients.cbegin(), clients.cend(), [count](const auto &client) {
            return client->events().size() >= count;
        });
    };
    QTRY_VERIFY_WITH_TIMEOUT(allHaveEvents(1), 60000);
    QCOMPARE(engine->inFlight(), kStreams);
    QCOMPARE(healthInFlight(*engine), kStreams);

    for (int released = 1; released <= kContentEvents; ++released) {
        fake.releaseEvent();
        QTRY_VERIFY_WITH_TIMEOUT(allHaveEvents(released + 1), 60000);
    }
    const auto allFinished = [&clients] {
        return std::all_of(clients.cbegin(), clients.cend(),
                           [](const auto &client) { return client->finished(); });
    };
    QTRY_VERIFY_WITH_TIMEOUT(allFinished(), 60000);

    for (const auto &client : clients) {
        QCOMPARE(client->status(), 200);
        QVERIFY(!client->framingError());
        QCOMPARE(client->events().size(), kContentEvents + 2);
        QCOMPARE(client->events().constLast().data, QByteArray("[DONE]"));
    }
    QCOMPARE(fake.requests().size(), kStreams);
    QCOMPARE(engine->inFlight(), 0);
    QCOMPARE(healthInFlight(*engine), 0);
    const ProviderHealth health = providerHealth(*engine, QStringLiteral("primary"));
    QCOMPARE(health.requests, quint64(kStreams));
    QCOMPARE(health.errors, quint64(0));
}

void GatewayStreamingTest::slowClientPausesTheProviderInsteadOfBuffering()
{
    FakeUpstream fake;
    constexpr int kEvents = 256;
    fake.streamEvents = kEvents; // 256 events of 64 KiB: 16 MiB, far above what sockets buffer
    fake.eventIntervalMs = 0;
    fake.eventPaddingBytes = 64 * 1024;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());
    client.pauseReading();

    client.post("/v1/chat/completions", chatBody("test-model", true));

    // The provider writes its whole answer while the client reads nothing.
    QTRY_COMPARE_WITH_TIMEOUT(fake.answersCompleted(), 1, 20000);
    client.resumeReading();

    QVERIFY(client.waitForFinished(30000));
    QVERIFY(!client.framingError());
    QCOMPARE(client.events().size(), kEvents + 2);
    QCOMPARE(client.events().at(kEvents - 1).data.size(),
             contentEvent(kEvents - 1).size() + 64 * 1024);
    QCOMPARE(client.events().constLast().data, QByteArray("[DONE]"));
    // The gateway stopped reading the provider instead of holding the answer in memory.
    const auto trace = engine->traces().find(client.header("x-switchyard-request-id"));
    QVERIFY(trace.has_value());
    QVERIFY(trace->span(QStringLiteral("client back-pressure")) != nullptr);
    QCOMPARE(trace->outcome, QStringLiteral("ok"));
}

void GatewayStreamingTest::stalledClientIsLetGoAfterAnIdlePeriod()
{
    FakeUpstream fake;
    fake.streamEvents = 256;
    fake.eventIntervalMs = 0;
    fake.eventPaddingBytes = 64 * 1024;
    config::Config config = gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})});
    config.timeouts = shortTimeouts();
    auto engine = startEngine(config);
    QVERIFY(engine);
    TestClient client(engine->port());
    client.pauseReading(); // and never resumes, yet keeps its connection open

    client.post("/v1/chat/completions", chatBody("test-model", true));

    // A client that takes nothing for an idle period gives back its provider slot.
    QTRY_COMPARE_WITH_TIMEOUT(engine->inFlight(), 1, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(engine->inFlight(), 0, 20000);
    QCOMPARE(healthInFlight(*engine), 0);
    QTRY_COMPARE_WITH_TIMEOUT(fake.openConnections(), 0, 5000);
    const QList<telemetry::Trace> traces = engine->traces().latest(1);
    QCOMPARE(traces.size(), 1);
    QCOMPARE(traces.first().outcome, QStringLiteral("client_stalled"));
    QCOMPARE(traces.first().status, 499);
    // The client's stall says nothing about the provider.
    QCOMPARE(providerHealth(*engine, QStringLiteral("primary")).errors, quint64(0));
}

void GatewayStreamingTest::pipelinedRequestsAreAnsweredInOrder()
{
    FakeUpstream fake;
    fake.manualStreaming = true;
    fake.streamEvents = 2;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());
    const QByteArray streamed = chatBody("test-model", true);

    // Two requests in one write: a stream that takes its time, then a quick health check.
    client.sendRaw(rawChatHead(streamed.size()) + streamed +
                   "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");

    QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), 1, 5000);
    // HTTP/1.1 answers in request order: the health check waits behind the open stream.
    QVERIFY(!client.rawReceived().contains(R"({"status":"ok"})"));
    fake.releaseEvent();
    fake.releaseEvent();
    QVERIFY(client.waitForFinished());
    QTRY_VERIFY_WITH_TIMEOUT(client.rawReceived().contains(R"({"status":"ok"})"), 5000);
    const QByteArray raw = client.rawReceived();
    QVERIFY(raw.indexOf("0\r\n\r\n") < raw.lastIndexOf("HTTP/1.1 200"));
    QCOMPARE(raw.count("HTTP/1.1 200"), 2);
}

void GatewayStreamingTest::pipelinedContinueWaitsForTheStreamBeforeIt()
{
    FakeUpstream fake;
    fake.manualStreaming = true;
    fake.streamEvents = 2;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());
    const QByteArray streamed = chatBody("test-model", true);
    const QByteArray second = chatBody("test-model", false, "second");

    // A stream, then a request that asks to be told before it sends its body.
    client.sendRaw(rawChatHead(streamed.size()) + streamed +
                   rawChatHead(second.size(), "Expect: 100-continue\r\n"));

    QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), 1, 5000);
    fake.releaseEvent();
    QTRY_COMPARE_WITH_TIMEOUT(client.events().size(), 2, 5000);
    // The interim answer belongs to the second request: inside the stream it would corrupt it.
    QVERIFY(!client.rawReceived().contains("100 Continue"));
    fake.releaseEvent();
    QTRY_VERIFY_WITH_TIMEOUT(client.rawReceived().contains("HTTP/1.1 100 Continue\r\n\r\n"), 5000);
    const QByteArray streamDone = client.rawReceived();
    QVERIFY(streamDone.indexOf("0\r\n\r\n") < streamDone.indexOf("HTTP/1.1 100 Continue"));
    QCOMPARE(streamDone.count("HTTP/1.1 100 Continue"), 1);

    client.sendMore(second);
    QTRY_COMPARE_WITH_TIMEOUT(client.rawReceived().count("HTTP/1.1 200"), 2, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(fake.requests().size(), 2, 5000);
    QCOMPARE(fake.requests().at(1).body, second);
}

QTEST_GUILESS_MAIN(GatewayStreamingTest)
#include "tst_gateway_streaming.moc"
