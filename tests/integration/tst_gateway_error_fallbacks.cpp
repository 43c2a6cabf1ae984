// Fallbacks by error over real HTTP: a provider on port 0 answers 400 context_length_exceeded (or
// an answer its content filter emptied, whole or streamed) and the fallback model on another
// provider answers the client; a chain of fallbacks that leads back ends with the last error;
// without fallbacks the client gets the provider's 400 as before. Counted in /metrics and said
// by explain.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using namespace switchyard::testing;

namespace {

const QByteArray kContextError =
    R"({"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})";

const QByteArray kFilteredAnswer =
    R"({"id":"chatcmpl-f","object":"chat.completion","model":"small-2025","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]})";

const QByteArray kFilteredStream =
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
    "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
    "\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n"
    "data: [DONE]\n\n";

// chat-small at `small`, chat-large at `large`. With `fallbacks`, chat-small's context and filter
// errors go to chat-large, whose own context errors go back to chat-small.
config::Config fallbackConfig(const FakeUpstream &small, const FakeUpstream &large,
                              bool fallbacks = true)
{
    const QByteArray smallModel =
        fallbacks ? "{name: chat-small, upstream: small-2025, fallbacks: "
                    "{context_length_exceeded: [chat-large], content_filtered: [chat-large]}}"
                  : "{name: chat-small, upstream: small-2025}";
    const QByteArray largeModel =
        fallbacks ? "{name: chat-large, fallbacks: {context_length_exceeded: [chat-small]}}"
                  : "chat-large";
    return loadTestConfig("listen: 127.0.0.1:0\n"
                          "providers:\n"
                          "  - id: small\n"
                          "    kind: openai\n"
                          "    base_url: " +
                              small.baseUrl() +
                              "\n"
                              "    models: [" +
                              smallModel +
                              "]\n"
                              "  - id: large\n"
                              "    kind: openai\n"
                              "    base_url: " +
                              large.baseUrl() +
                              "\n"
                              "    models: [" +
                              largeModel + "]\n",
                          u"fallbacks.yaml"_s);
}

void answersWith(FakeUpstream &fake, int status, const QByteArray &body,
                 const QByteArray &contentType = "application/json")
{
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = status;
    fake.statusContentType = contentType;
    fake.statusBody = body;
}

QJsonObject jsonOf(const QByteArray &bytes)
{
    return QJsonDocument::fromJson(bytes).object();
}

} // namespace

class GatewayErrorFallbacksTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void contextLengthIsAnsweredByTheFallbackModel();
    void filteredAnswerIsAnsweredByTheFallbackModel_data();
    void filteredAnswerIsAnsweredByTheFallbackModel();
    void chainThatLeadsBackEndsWithTheLastError();
    void withoutFallbacksThe400IsPassedUnchanged();
    void explainSaysWhichFallbacksApply();
};

void GatewayErrorFallbacksTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayErrorFallbacksTest::contextLengthIsAnsweredByTheFallbackModel()
{
    FakeUpstream small;
    FakeUpstream large;
    answersWith(small, 400, kContextError);
    auto engine = startEngine(fallbackConfig(small, large));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("chat-small", false));
    QVERIFY(client.waitForFinished());

    QCOMPARE(client.status(), 200);
    QCOMPARE(jsonOf(client.body())[u"choices"_s][0][u"message"_s][u"content"_s].toString(),
             u"hi"_s);
    QCOMPARE(client.header("x-switchyard-provider"), "large"_ba);
    QCOMPARE(client.header("x-switchyard-fallback-model"), "chat-large"_ba);
    QCOMPARE(client.header("x-switchyard-fallback-reason"), "context_length_exceeded"_ba);
    QCOMPARE(client.header("x-switchyard-attempts"), "2"_ba);
    QCOMPARE(client.header("x-switchyard-degraded"), "0"_ba);
    // One call each: another endpoint of chat-small would answer the same.
    QCOMPARE(small.requests().size(), 1);
    QCOMPARE(large.requests().size(), 1);
    QCOMPARE(jsonOf(large.requests().first().body)[u"model"_s].toString(), u"chat-large"_s);

    TestClient scrape(engine->port());
    scrape.send("GET", "/metrics");
    QVERIFY(scrape.waitForFinished());
    QVERIFY(scrape.body().contains(
        R"(switchyard_error_fallbacks_total{reason="context_length_exceeded"} 1)"));
    QVERIFY(
        scrape.body().contains(R"(switchyard_error_fallbacks_total{reason="content_filtered"} 0)"));
}

void GatewayErrorFallbacksTest::filteredAnswerIsAnsweredByTheFallbackModel_data()
{
    QTest::addColumn<bool>("stream");
    QTest::newRow("whole") << false;
    QTest::newRow("streamed") << true;
}

void GatewayErrorFallbacksTest::filteredAnswerIsAnsweredByTheFallbackModel()
{
    QFETCH(bool, stream);
    FakeUpstream small;
    FakeUpstream large;
    if (stream)
        answersWith(small, 200, kFilteredStream, "text/event-stream");
    else
        answersWith(small, 200, kFilteredAnswer);
    auto engine = startEngine(fallbackConfig(small, large));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("chat-small", stream));
    QVERIFY(client.waitForFinished());

    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-fallback-model"), "chat-large"_ba);
    QCOMPARE(client.header("x-switchyard-fallback-reason"), "content_filtered"_ba);
    QCOMPARE(small.requests().size(), 1);
    QCOMPARE(large.requests().size(), 1);
    if (stream) {
        // The fake's stream, and nothing of the filtered one before it.
        QVERIFY(!client.events().isEmpty());
        QVERIFY(client.events().last().isDone());
        for (const upstream::SseEvent &event : client.events())
            QVERIFY2(!event.data.contains("content_filter"), event.data.constData());
    } else {
        QCOMPARE(jsonOf(client.body())[u"choices"_s][0][u"finish_reason"_s].toString(), u"stop"_s);
    }
}

void GatewayErrorFallbacksTest::chainThatLeadsBackEndsWithTheLastError()
{
    FakeUpstream small;
    FakeUpstream large;
    answersWith(small, 400, kContextError);
    answersWith(large, 400, kContextError);
    auto engine = startEngine(fallbackConfig(small, large));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("chat-small", false));
    QVERIFY(client.waitForFinished());

    // chat-large falls back to chat-small, already tried: the chain ends, each model once.
    QCOMPARE(client.status(), 400);
    QCOMPARE(small.requests().size(), 1);
    QCOMPARE(large.requests().size(), 1);
    QVERIFY(errorOf(client.body())[u"message"_s].toString().contains(u"Provider `large`"_s));
    QVERIFY(client.header("x-switchyard-fallback-model").isEmpty());

    // And the gateway serves the next request as before.
    large.mode = FakeUpstream::Mode::Answer;
    TestClient next(engine->port());
    next.post("/v1/chat/completions", chatBody("chat-large", false));
    QVERIFY(next.waitForFinished());
    QCOMPARE(next.status(), 200);
}

void GatewayErrorFallbacksTest::withoutFallbacksThe400IsPassedUnchanged()
{
    FakeUpstream small;
    FakeUpstream large;
    answersWith(small, 400, kContextError);
    auto engine = startEngine(fallbackConfig(small, large, false));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("chat-small", false));
    QVERIFY(client.waitForFinished());

    QCOMPARE(client.status(), 400);
    const QJsonObject error = errorOf(client.body());
    QVERIFY(error[u"message"_s].toString().contains(
        u"This model's maximum context length is 8192 tokens."_s));
    QCOMPARE(client.header("x-switchyard-provider"), "small"_ba);
    QCOMPARE(small.requests().size(), 1);
    QCOMPARE(large.requests().size(), 0);
}

void GatewayErrorFallbacksTest::explainSaysWhichFallbacksApply()
{
    FakeUpstream small;
    FakeUpstream large;
    auto engine = startEngine(fallbackConfig(small, large));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/admin/v1/route/explain", chatBody("chat-small", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QJsonObject decision = jsonOf(client.body())[u"decision"_s].toObject();
    QCOMPARE(decision[u"error_fallbacks"_s].toObject(),
             (QJsonObject{{u"context_length_exceeded"_s, QJsonArray{u"chat-large"_s}},
                          {u"content_filtered"_s, QJsonArray{u"chat-large"_s}}}));
    QVERIFY(decision[u"reason"_s].toString().contains(
        u"fallbacks: on context_length_exceeded -> chat-large (model `chat-small`)"_s));
    QCOMPARE(small.requests().size(), 0); // explain calls nothing
}

QTEST_GUILESS_MAIN(GatewayErrorFallbacksTest)
#include "tst_gateway_error_fallbacks.moc"
