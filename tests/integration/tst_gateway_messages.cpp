// Anthropic's clients through the real server. POST /v1/messages to an anthropic provider is
// passed through: the client's bytes with only the model replaced, its anthropic-version and
// beta features, the provider's answer and events as they came. To any other kind it is
// translated, and what was not applied is named. count_tokens is passed through or estimated,
// and every path under /v1/messages answers in Anthropic's error shape.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

// A file of tests/golden/adapters/, shared with the adapters' unit tests.
QByteArray goldenFile(const QString &name)
{
    QFile file(qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") + u"/tests/golden/adapters/"_s + name);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(file.fileName()));
    return file.readAll();
}

// What a coding agent sends: cache markers on the system prompt, a tool and a user block,
// extended thinking with an earlier thinking block and its signature, a redacted thinking block,
// a tool round trip, fields the translation has no place for (top_k, service_tier,
// context_management) and one no gateway has heard of yet. Spacing and key order are the
// client's own, and must reach the provider as they are.
const QByteArray kAgentRequest = goldenFile(u"anthropic_ingress/coding_agent.request.in.json"_s);

const QByteArray kAnthropicAnswer =
    R"({"id":"msg_01","type":"message","role":"assistant","model":"claude-3-5-haiku-20241022",)"
    R"("content":[{"type":"thinking","thinking":"The target is missing.","signature":"Sig+/=="},)"
    R"({"type":"text","text":"Add the target."}],"stop_reason":"end_turn",)"
    R"("stop_sequence":null,"usage":{"input_tokens":12,"cache_creation_input_tokens":300,)"
    R"("cache_read_input_tokens":4000,"output_tokens":9}})";

// Anthropic's own stream with everything a translation would lose: a ping, thinking and
// signature deltas, usage in message_start and message_delta.
const QByteArray kThinkingStream = goldenFile(u"anthropic_passthrough/thinking.events.sse"_s);

const QList<QPair<QByteArray, QByteArray>> kAgentHeaders{
    {"anthropic-version", "2023-06-01"},
    {"anthropic-beta", "prompt-caching-2024-07-31, interleaved-thinking-2025-05-14"},
    {"x-api-key", "sk-ant-the-clients-own"},
    {"x-stainless-lang", "js"}};

// An anthropic provider whose key comes from its environment variable, with a beta feature of
// its own and one the agent also sends.
config::ProviderConfig anthropicAt(const QString &id, const FakeUpstream &fake)
{
    const config::Config loaded = loadTestConfig(
        "providers:\n"
        "  - id: " +
            id.toUtf8() +
            "\n"
            "    kind: anthropic\n"
            "    base_url: " +
            fake.baseUrl() +
            "\n"
            "    api_key_env: ANTHROPIC_KEY\n"
            "    anthropic:\n"
            "      version: '2023-01-01'\n"
            "      beta: [interleaved-thinking-2025-05-14, context-management-2025-06-27]\n"
            "    models: [{name: claude-fast, upstream: claude-3-5-haiku-20241022}]\n",
        u"messages.yaml"_s, environmentOf({{u"ANTHROPIC_KEY"_s, "sk-ant-provider"}}));
    return loaded.providers.value(0);
}

QJsonObject jsonOf(const QByteArray &bytes)
{
    return QJsonDocument::fromJson(bytes).object();
}

QByteArray renamed(QByteArray body, const QByteArray &from, const QByteArray &to)
{
    return body.replace("\"" + from + "\"", "\"" + to + "\"");
}

// The fake answers every request with `body`: Anthropic's whole answer, or its event stream.
void answersWith(FakeUpstream &fake, const QByteArray &body,
                 const QByteArray &contentType = "application/json")
{
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 200;
    fake.statusContentType = contentType;
    fake.statusBody = body;
}

FakeUpstream::ReceivedRequest onlyRequest(const FakeUpstream &fake)
{
    return fake.requests().value(0);
}

} // namespace

class GatewayMessagesTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    void anthropicProviderGetsTheClientsBytes();
    void anthropicProviderGetsTheClientsVersionAndBetas();
    void providersVersionWhenTheClientSendsNone();
    void anthropicAnswerReachesTheClientAsItCame();
    void anthropicStreamIsRelayedEventByEvent();
    void passedThroughStreamCutEndsWithAnthropicErrorEvent();
    void passedThroughErrorEventBeforeTheFirstByteFailsOver_data();
    void passedThroughErrorEventBeforeTheFirstByteFailsOver();
    void translatedAttemptNamesWhatItDidNotApply();
    void passedThroughAttemptAfterATranslatedOneSaysNothingIgnored();
    void serverToolGoesToAnthropicProvidersOnly();
    void serverToolIsRefusedWithoutAnAnthropicProvider();
    void routingObjectIsReadAndNotForwarded();
    void countTokensIsPassedThrough();
    void countTokensIsEstimatedWithoutAnAnthropicProvider();
    void unknownMessagesPathAnswersInAnthropicShape();
    void oversizeMessagesBodyAnswersInAnthropicShape();
    void countTokensForAnUnknownModelIsNotFound();
};

void GatewayMessagesTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayMessagesTest::anthropicProviderGetsTheClientsBytes()
{
    FakeUpstream fake;
    answersWith(fake, kAnthropicAnswer);
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", kAgentRequest, kAgentHeaders);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);

    QCOMPARE(fake.requests().size(), 1);
    const FakeUpstream::ReceivedRequest sent = onlyRequest(fake);
    QCOMPARE(sent.path, "/v1/messages"_ba);
    // Byte for byte, apart from the model's name at this provider.
    QCOMPARE(sent.body, renamed(kAgentRequest, "claude-fast", "claude-3-5-haiku-20241022"));
    QCOMPARE(sent.body.count("cache_control"), 3);
}

void GatewayMessagesTest::anthropicProviderGetsTheClientsVersionAndBetas()
{
    FakeUpstream fake;
    answersWith(fake, kAnthropicAnswer);
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", kAgentRequest, kAgentHeaders);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);

    const FakeUpstream::ReceivedRequest sent = onlyRequest(fake);
    QCOMPARE(sent.header("anthropic-version"), "2023-06-01"_ba);
    // The client's features, then the provider's it did not name: each once.
    QCOMPARE(sent.header("anthropic-beta"),
             "prompt-caching-2024-07-31,interleaved-thinking-2025-05-14,"
             "context-management-2025-06-27"_ba);
    // The provider's key, never the client's; and no other client header.
    QCOMPARE(sent.header("x-api-key"), "sk-ant-provider"_ba);
    QVERIFY(sent.header("authorization").isEmpty());
    QVERIFY(sent.header("x-stainless-lang").isEmpty());
    // Each of the protocol's headers once: the client's were merged, not added beside.
    int protocolHeaders = 0;
    for (const auto &[name, value] : sent.headers)
        protocolHeaders +=
            name == "x-api-key" || name == "anthropic-version" || name == "anthropic-beta";
    QCOMPARE(protocolHeaders, 3);
}

void GatewayMessagesTest::providersVersionWhenTheClientSendsNone()
{
    FakeUpstream fake;
    answersWith(fake, kAnthropicAnswer);
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", kAgentRequest);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);

    const FakeUpstream::ReceivedRequest sent = onlyRequest(fake);
    QCOMPARE(sent.header("anthropic-version"), "2023-01-01"_ba);
    QCOMPARE(sent.header("anthropic-beta"),
             "interleaved-thinking-2025-05-14,context-management-2025-06-27"_ba);
}

void GatewayMessagesTest::anthropicAnswerReachesTheClientAsItCame()
{
    FakeUpstream fake;
    answersWith(fake, kAnthropicAnswer);
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", kAgentRequest, kAgentHeaders);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.body(), kAnthropicAnswer);
    QCOMPARE(client.header("x-switchyard-provider"), "claude"_ba);
    QCOMPARE(client.header("x-switchyard-attempts"), "1"_ba);
    QVERIFY(!client.header("x-switchyard-request-id").isEmpty());
    // Nothing was translated, so nothing was left out.
    QVERIFY(client.header("x-switchyard-ignored-fields").isEmpty());
}

void GatewayMessagesTest::anthropicStreamIsRelayedEventByEvent()
{
    FakeUpstream fake;
    answersWith(fake, kThinkingStream, "text/event-stream");
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    QByteArray streamed = kAgentRequest;
    streamed.replace(R"("temperature": 1})", R"("temperature": 1, "stream": true})");
    QVERIFY(streamed.contains("\"stream\": true"));
    TestClient client(engine->port());
    client.post("/v1/messages", streamed, kAgentHeaders);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(client.header("content-type").startsWith("text/event-stream"));
    QCOMPARE(client.body(), kThinkingStream);
    QCOMPARE(client.header("x-switchyard-provider"), "claude"_ba);
    QCOMPARE(onlyRequest(fake).header("accept"), "text/event-stream"_ba);
}

void GatewayMessagesTest::passedThroughStreamCutEndsWithAnthropicErrorEvent()
{
    // The provider stops after its thinking block, without message_stop.
    FakeUpstream fake;
    const qsizetype cut =
        kThinkingStream.indexOf("event: content_block_start\n", kThinkingStream.indexOf("Sig+/=="));
    answersWith(fake, kThinkingStream.left(cut), "text/event-stream");
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", R"({"model":"claude-fast","max_tokens":10,"stream":true,)"
                                R"("messages":[{"role":"user","content":"hi"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    // Everything the provider sent, then Anthropic's own error event, and no message_stop.
    QVERIFY(client.body().startsWith(fake.statusBody));
    const upstream::SseEvent last = client.events().constLast();
    QCOMPARE(last.event, "error"_ba);
    const QJsonObject error = jsonOf(last.data);
    QCOMPARE(error.value(u"type"_s).toString(), u"error"_s);
    QCOMPARE(error.value(u"error"_s).toObject().value(u"type"_s).toString(), u"api_error"_s);
    QCOMPARE(error.value(u"error"_s).toObject().value(u"message"_s).toString(),
             u"Provider `claude` ended the stream before its `message_stop` event; the answer is "
             u"incomplete."_s);
    for (const upstream::SseEvent &event : client.events())
        QVERIFY(event.event != "message_stop");
}

void GatewayMessagesTest::passedThroughErrorEventBeforeTheFirstByteFailsOver_data()
{
    const QByteArray overloadedEvent =
        "event: error\n"
        R"(data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"
        "\n\n";
    QTest::addColumn<QByteArray>("busyStream");
    QTest::newRow("before it says anything") << overloadedEvent;
    // Opening events carry none of the answer: they wait for the first content, and go nowhere
    // when the attempt fails first.
    QTest::newRow("after message_start and ping")
        << "event: message_start\n"
           R"(data: {"type":"message_start","message":{"id":"msg_busy","type":"message",)"
           R"("role":"assistant","content":[],"model":"claude-3-5-haiku-20241022",)"
           R"("stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}})"
           "\n\n"
           "event: ping\n"
           R"(data: {"type":"ping"})"
           "\n\n"_ba +
               overloadedEvent;
}

void GatewayMessagesTest::passedThroughErrorEventBeforeTheFirstByteFailsOver()
{
    // The first provider is overloaded before any content; the second answers the whole stream.
    QFETCH(QByteArray, busyStream);
    FakeUpstream overloaded, healthy;
    answersWith(overloaded, busyStream, "text/event-stream");
    answersWith(healthy, kThinkingStream, "text/event-stream");
    config::Config config =
        gatewayConfig({anthropicAt(u"busy"_s, overloaded), anthropicAt(u"spare"_s, healthy)});
    config.routing.fallbackChain = {u"spare"_s};
    config.providers[0].models[0].publicName = u"claude-busy"_s;
    auto engine = startEngine(config);
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", R"({"model":"claude-busy","max_tokens":10,"stream":true,)"
                                R"("messages":[{"role":"user","content":"hi"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), "spare"_ba);
    QCOMPARE(client.header("x-switchyard-attempts"), "2"_ba);
    QCOMPARE(client.body(), kThinkingStream); // nothing of the busy provider's
}

void GatewayMessagesTest::translatedAttemptNamesWhatItDidNotApply()
{
    // The anthropic provider is overloaded; the fallback speaks OpenAI's chat protocol, so the
    // answer is translated, and says which of the agent's fields it could not apply.
    FakeUpstream anthropic, openai;
    anthropic.mode = FakeUpstream::Mode::Status;
    anthropic.status = 529;
    anthropic.statusBody =
        R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";
    config::Config config = gatewayConfig(
        {anthropicAt(u"claude"_s, anthropic), providerFor(u"openai"_s, openai, {u"gpt-x"_s})});
    config.routing.fallbackChain = {u"openai"_s};
    auto engine = startEngine(config);
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", kAgentRequest, kAgentHeaders);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), "openai"_ba);
    QCOMPARE(client.header("x-switchyard-ignored-fields"),
             "a_field_from_next_year,cache_control,context_management,"
             "messages.content[type=redacted_thinking],messages.content[type=thinking],"
             "service_tier,thinking,top_k"_ba);
    const QJsonObject message = jsonOf(client.body());
    QCOMPARE(message.value(u"type"_s).toString(), u"message"_s);
    QCOMPARE(message.value(u"content"_s).toArray().at(0).toObject().value(u"text"_s).toString(),
             u"hi"_s);

    // The chat request the OpenAI provider got carries what chat can express.
    const QJsonObject sent = jsonOf(onlyRequest(openai).body);
    QCOMPARE(sent.value(u"model"_s).toString(), u"gpt-x"_s);
    QCOMPARE(sent.value(u"max_tokens"_s).toInt(), 2048);
    QCOMPARE(sent.value(u"user"_s).toString(), u"dev-7"_s);
    QCOMPARE(sent.value(u"tools"_s).toArray().size(), 1);
    QVERIFY(!sent.contains(u"thinking"_s));
    QVERIFY(!onlyRequest(openai).body.contains("cache_control"));
}

void GatewayMessagesTest::passedThroughAttemptAfterATranslatedOneSaysNothingIgnored()
{
    // The OpenAI provider fails first; the anthropic fallback answers with the client's request.
    FakeUpstream openai, anthropic;
    openai.mode = FakeUpstream::Mode::Status;
    openai.status = 500;
    answersWith(anthropic, kAnthropicAnswer);
    config::Config config = gatewayConfig(
        {providerFor(u"openai"_s, openai, {u"gpt-x"_s}), anthropicAt(u"claude"_s, anthropic)});
    config.routing.fallbackChain = {u"claude"_s};
    auto engine = startEngine(config);
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", renamed(kAgentRequest, "claude-fast", "gpt-x"), kAgentHeaders);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), "claude"_ba);
    QCOMPARE(client.header("x-switchyard-attempts"), "2"_ba);
    QVERIFY(client.header("x-switchyard-ignored-fields").isEmpty());
    QCOMPARE(client.body(), kAnthropicAnswer);
    QCOMPARE(onlyRequest(anthropic).body,
             renamed(kAgentRequest, "claude-fast", "claude-3-5-haiku-20241022"));
    QVERIFY(!onlyRequest(openai).body.contains("cache_control"));
}

void GatewayMessagesTest::serverToolGoesToAnthropicProvidersOnly()
{
    // A web search runs at Anthropic: no chat provider can be given it. With both kinds behind
    // the model, only the anthropic one is tried.
    FakeUpstream openai, anthropic;
    answersWith(anthropic, kAnthropicAnswer);
    config::ProviderConfig chat = providerFor(u"openai"_s, openai, {u"claude-fast"_s});
    chat.weight = 100; // preferred, were it able to serve the request
    auto engine = startEngine(gatewayConfig({chat, anthropicAt(u"claude"_s, anthropic)}));
    QVERIFY(engine);

    const QByteArray body =
        R"({"model":"claude-fast","max_tokens":10,"messages":[{"role":"user","content":"news?"}],)"
        R"("tools":[{"type":"web_search_20250305","name":"web_search","max_uses":3}]})";
    TestClient client(engine->port());
    client.post("/v1/messages", body);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), "claude"_ba);
    QCOMPARE(openai.requests().size(), 0);
    QCOMPARE(onlyRequest(anthropic).body,
             renamed(body, "claude-fast", "claude-3-5-haiku-20241022"));
}

void GatewayMessagesTest::serverToolIsRefusedWithoutAnAnthropicProvider()
{
    FakeUpstream openai;
    auto engine = startEngine(gatewayConfig({providerFor(u"openai"_s, openai, {u"gpt-x"_s})}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages",
                R"({"model":"gpt-x","max_tokens":10,"messages":[{"role":"user","content":"x"}],)"
                R"("mcp_servers":[{"type":"url","url":"https://mcp.example","name":"docs"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 400);
    const QJsonObject error = jsonOf(client.body()).value(u"error"_s).toObject();
    QCOMPARE(error.value(u"type"_s).toString(), u"invalid_request_error"_s);
    QCOMPARE(error.value(u"message"_s).toString(),
             u"'mcp_servers' is run by Anthropic's own API only: it can only be passed to an "
             u"anthropic provider, and none of this model's providers is one."_s);
    QCOMPARE(openai.requests().size(), 0);
}

void GatewayMessagesTest::routingObjectIsReadAndNotForwarded()
{
    // The gateway's own `switchyard` object routes the request and never reaches the provider.
    FakeUpstream fake;
    answersWith(fake, kAnthropicAnswer);
    config::Config config = gatewayConfig({anthropicAt(u"claude"_s, fake)});
    auto engine = startEngine(config);
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages",
                R"({"model":"claude-fast","switchyard":{"team":"infra"},"max_tokens":10,)"
                R"("messages":[{"role":"user","content":"hi"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(onlyRequest(fake).body, R"({"model":"claude-3-5-haiku-20241022","max_tokens":10,)"
                                     R"("messages":[{"role":"user","content":"hi"}]})"_ba);
}

void GatewayMessagesTest::countTokensIsPassedThrough()
{
    FakeUpstream fake;
    answersWith(fake, R"({"input_tokens":1234})");
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    const QByteArray body = R"({"model":"claude-fast","system":[{"type":"text","text":"x",)"
                            R"("cache_control":{"type":"ephemeral"}}],)"
                            R"("messages":[{"role":"user","content":"count me"}]})";
    TestClient client(engine->port());
    client.post("/v1/messages/count_tokens", body, kAgentHeaders);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.body(), R"({"input_tokens":1234})"_ba);
    QCOMPARE(client.header("x-switchyard-provider"), "claude"_ba);
    QVERIFY(client.header("x-switchyard-tokens-estimated").isEmpty());

    const FakeUpstream::ReceivedRequest sent = onlyRequest(fake);
    QCOMPARE(sent.path, "/v1/messages/count_tokens"_ba);
    QCOMPARE(sent.body, renamed(body, "claude-fast", "claude-3-5-haiku-20241022"));
    QCOMPARE(sent.header("anthropic-version"), "2023-06-01"_ba);
    QCOMPARE(sent.header("x-api-key"), "sk-ant-provider"_ba);
}

void GatewayMessagesTest::countTokensIsEstimatedWithoutAnAnthropicProvider()
{
    FakeUpstream openai;
    auto engine = startEngine(gatewayConfig({providerFor(u"openai"_s, openai, {u"gpt-x"_s})}));
    QVERIFY(engine);

    // 400 characters of text: the gateway's estimate is one token per four characters.
    const QByteArray text(400, 'a');
    TestClient client(engine->port());
    client.post("/v1/messages/count_tokens",
                R"({"model":"gpt-x","messages":[{"role":"user","content":")" + text + R"("}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-tokens-estimated"), "true"_ba);
    const qint64 counted = jsonOf(client.body()).value(u"input_tokens"_s).toInteger();
    QVERIFY2(counted >= 100 && counted < 120, QByteArray::number(counted).constData());
    QCOMPARE(openai.requests().size(), 0);
}

void GatewayMessagesTest::unknownMessagesPathAnswersInAnthropicShape()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages/batches", R"({"requests":[]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 404);
    const QJsonObject answer = jsonOf(client.body());
    QCOMPARE(answer.value(u"type"_s).toString(), u"error"_s);
    QCOMPARE(answer.value(u"error"_s).toObject().value(u"type"_s).toString(), u"not_found_error"_s);
    QVERIFY(!answer.value(u"error"_s).toObject().value(u"message"_s).toString().isEmpty());
    QCOMPARE(fake.requests().size(), 0);
}

void GatewayMessagesTest::oversizeMessagesBodyAnswersInAnthropicShape()
{
    // Refused by the listener before any handler runs, and still in the client's protocol.
    FakeUpstream fake;
    config::Config config = gatewayConfig({anthropicAt(u"claude"_s, fake)});
    config.server.maxBodyBytes = 1024;
    auto engine = startEngine(config);
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", R"({"model":"claude-fast","max_tokens":5,"messages":[{"role":)"
                                R"("user","content":")" +
                                    QByteArray(2048, 'a') + R"("}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 413);
    const QJsonObject answer = jsonOf(client.body());
    QCOMPARE(answer.value(u"type"_s).toString(), u"error"_s);
    QCOMPARE(answer.value(u"error"_s).toObject().value(u"type"_s).toString(),
             u"request_too_large"_s);
    QCOMPARE(fake.requests().size(), 0);
}

void GatewayMessagesTest::countTokensForAnUnknownModelIsNotFound()
{
    // A typo is a 404, not an estimate of a model nobody serves.
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages/count_tokens",
                R"({"model":"claude-fsat","messages":[{"role":"user","content":"x"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 404);
    QVERIFY(client.header("x-switchyard-tokens-estimated").isEmpty());
    QCOMPARE(jsonOf(client.body()).value(u"error"_s).toObject().value(u"type"_s).toString(),
             u"not_found_error"_s);
    QCOMPARE(fake.requests().size(), 0);
}

QTEST_GUILESS_MAIN(GatewayMessagesTest)
#include "tst_gateway_messages.moc"
