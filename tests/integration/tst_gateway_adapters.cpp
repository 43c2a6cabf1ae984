// Protocol adapters through the real server: providers that speak Anthropic's Messages API or a
// mapped agent's own JSON answer OpenAI clients exactly as an OpenAI provider would, and clients
// that speak the Messages API (POST /v1/messages) reach an OpenAI provider.

#include "config/config_loader.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>
#include <memory>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

const QByteArray kAnthropicAnswer =
    R"({"id":"msg_01","type":"message","role":"assistant","model":"claude-3-5-haiku-20241022",)"
    R"("content":[{"type":"text","text":"Hello there"}],"stop_reason":"end_turn",)"
    R"("stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}})";

const QByteArray kAnthropicStream =
    "event: message_start\n"
    R"(data: {"type":"message_start","message":{"id":"msg_01","type":"message",)"
    R"("role":"assistant","model":"claude-3-5-haiku-20241022","content":[],)"
    R"("stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}})"
    "\n\n"
    "event: content_block_start\n"
    R"(data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"
    "\n\n"
    "event: ping\n"
    R"(data: {"type":"ping"})"
    "\n\n"
    "event: content_block_delta\n"
    R"(data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}})"
    "\n\n"
    "event: content_block_delta\n"
    R"(data: {"type":"content_block_delta","index":0,)"
    R"("delta":{"type":"text_delta","text":" there"}})"
    "\n\n"
    "event: content_block_stop\n"
    R"(data: {"type":"content_block_stop","index":0})"
    "\n\n"
    "event: message_delta\n"
    R"(data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},)"
    R"("usage":{"output_tokens":5}})"
    "\n\n"
    "event: message_stop\n"
    R"(data: {"type":"message_stop"})"
    "\n\n";

const QByteArray kOverloaded =
    R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})";

// A provider entry read by the real config loader, so adapter settings are compiled as in use.
config::ProviderConfig loadedProvider(const QByteArray &yaml)
{
    const config::LoadResult loaded = config::loadConfigText(
        yaml, u"adapters.yaml"_s, [](const QString &) { return std::optional<QByteArray>(); });
    for (const config::ConfigError &error : loaded.errors)
        qWarning().noquote() << error.toString();
    return loaded.ok() ? loaded.config->providers.value(0) : config::ProviderConfig();
}

config::ProviderConfig anthropicAt(const QString &id, const FakeUpstream &fake)
{
    return loadedProvider(
        "providers:\n"
        "  - id: " +
        id.toUtf8() +
        "\n"
        "    kind: anthropic\n"
        "    base_url: " +
        fake.baseUrl() +
        "\n"
        "    models: [{name: claude-fast, upstream: claude-3-5-haiku-20241022}]\n");
}

// An agent with a `stream:` mapping when `streams`; without one it is always called unstreamed.
config::ProviderConfig mappedAt(const FakeUpstream &fake, bool streams = true)
{
    const QByteArray stream = "      stream:\n"
                              "        path: /generate/stream\n"
                              "        delta: $.delta\n"
                              "        done: $.done\n"
                              "        finish_reason: $.stop_reason\n";
    return loadedProvider("providers:\n"
                          "  - id: helpdesk\n"
                          "    kind: mapped\n"
                          "    base_url: " +
                          fake.baseUrl() +
                          "\n"
                          "    models: [{name: helpdesk-agent, upstream: helpdesk-v2}]\n"
                          "    mapping:\n"
                          "      path: /generate\n"
                          "      request:\n"
                          "        agent: $.model\n"
                          "        conversation:\n"
                          "          $map: $.messages\n"
                          "          to: {role: \"@.role\", text: {$text: \"@.content\"}}\n"
                          "        stream: $.stream\n"
                          "      answer: $.reply\n"
                          "      finish_reason: $.stop_reason\n" +
                          (streams ? stream : QByteArray()));
}

QJsonObject jsonOf(const QByteArray &bytes)
{
    return QJsonDocument::fromJson(bytes).object();
}

// The assertions every OpenAI client's whole answer gets, whatever provider is behind it.
void verifyCompletion(const TestClient &client, const QByteArray &provider, const QString &content,
                      const QString &finishReason)
{
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("content-type"), QByteArray("application/json"));
    QCOMPARE(client.header("x-switchyard-provider"), provider);
    const QJsonObject completion = jsonOf(client.body());
    QCOMPARE(completion.value(u"object"_s).toString(), u"chat.completion"_s);
    const QJsonObject choice = completion.value(u"choices"_s).toArray().at(0).toObject();
    QCOMPARE(choice.value(u"message"_s).toObject().value(u"role"_s).toString(), u"assistant"_s);
    QCOMPARE(choice.value(u"message"_s).toObject().value(u"content"_s).toString(), content);
    QCOMPARE(choice.value(u"finish_reason"_s).toString(), finishReason);
}

// The same for a streamed answer: chunks of one id, the text in order, then [DONE].
void verifyChunks(const TestClient &client, const QByteArray &provider, const QString &content,
                  const QString &finishReason)
{
    QCOMPARE(client.status(), 200);
    QVERIFY(client.header("content-type").startsWith("text/event-stream"));
    QCOMPARE(client.header("x-switchyard-provider"), provider);
    const QList<upstream::SseEvent> &events = client.events();
    QVERIFY(events.size() >= 3);
    QVERIFY(events.last().isDone());
    QString text;
    QString finish;
    QString id;
    for (qsizetype i = 0; i + 1 < events.size(); ++i) {
        const QJsonObject chunk = jsonOf(events[i].data);
        QCOMPARE(chunk.value(u"object"_s).toString(), u"chat.completion.chunk"_s);
        if (i == 0)
            id = chunk.value(u"id"_s).toString();
        QCOMPARE(chunk.value(u"id"_s).toString(), id);
        const QJsonObject choice = chunk.value(u"choices"_s).toArray().at(0).toObject();
        text += choice.value(u"delta"_s).toObject().value(u"content"_s).toString();
        if (choice.value(u"finish_reason"_s).isString())
            finish = choice.value(u"finish_reason"_s).toString();
    }
    QVERIFY(!id.isEmpty());
    QCOMPARE(text, content);
    QCOMPARE(finish, finishReason);
}

QList<QByteArray> eventNames(const TestClient &client)
{
    QList<QByteArray> names;
    for (const upstream::SseEvent &event : client.events())
        names.append(event.event);
    return names;
}

} // namespace

class GatewayAdaptersTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void anthropicProviderAnswersWhole();
    void anthropicProviderStreams();
    void anthropicOverloadedBecomesServiceUnavailable();
    void anthropicOverloadedFailsOverToTheNextProvider();
    void mappedAgentAnswersWhole();
    void mappedAgentStreams();
    void mappedAnswerWithoutItsPathIsUnusable();
    void unstreamableAgentIsReplayedAsChunks();
    void requestAnAdapterCannotExpressIsRefused();
    void errorEventBeforeTheFirstByteFailsOver();
    void messagesClientReachesAnOpenAiProvider();
    void messagesClientStreamsFromAnOpenAiProvider();
    void messagesClientGetsProviderErrorsInAnthropicShape();
    void messagesStreamCutEndsWithAnthropicErrorEvent();
    void messagesRefusalsUseAnthropicErrorShape_data();
    void messagesRefusalsUseAnthropicErrorShape();
    void messagesWrongMethodIsRefusedInAnthropicShape();
    void aFailoverAdaptersRefusalKeepsTheEarlierProvidersError();
    void anthropicStreamCutIsDescribedInItsOwnTerms();
};

void GatewayAdaptersTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayAdaptersTest::anthropicProviderAnswersWhole()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 200;
    fake.statusBody = kAnthropicAnswer;
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("claude-fast", false));
    QVERIFY(client.waitForFinished());
    verifyCompletion(client, "claude", u"Hello there"_s, u"stop"_s);
    const QJsonObject usage = jsonOf(client.body()).value(u"usage"_s).toObject();
    QCOMPARE(usage.value(u"prompt_tokens"_s).toInt(), 10);
    QCOMPARE(usage.value(u"completion_tokens"_s).toInt(), 5);

    QCOMPARE(fake.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &sent = fake.requests().first();
    QCOMPARE(sent.path, QByteArray("/v1/messages"));
    QCOMPARE(sent.header("anthropic-version"), QByteArray("2023-06-01"));
    QVERIFY(!sent.header("x-request-id").isEmpty());
    const QJsonObject body = jsonOf(sent.body);
    QCOMPARE(body.value(u"model"_s).toString(), u"claude-3-5-haiku-20241022"_s);
    QCOMPARE(body.value(u"max_tokens"_s).toInt(), 4096);
}

void GatewayAdaptersTest::anthropicProviderStreams()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 200;
    fake.statusContentType = "text/event-stream";
    fake.statusBody = kAnthropicStream;
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("claude-fast", true));
    QVERIFY(client.waitForFinished());
    verifyChunks(client, "claude", u"Hello there"_s, u"stop"_s);
    QVERIFY(client.chunked());
    QVERIFY(jsonOf(fake.requests().first().body).value(u"stream"_s).toBool());
}

void GatewayAdaptersTest::anthropicOverloadedBecomesServiceUnavailable()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 529;
    fake.statusBody = kOverloaded;
    fake.extraHeaders = {{"retry-after", "7"}};
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("claude-fast", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 503);
    QCOMPARE(client.header("retry-after"), QByteArray("7"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(u"code"_s).toString(), u"upstream_error"_s);
    QCOMPARE(error.value(u"type"_s).toString(), u"upstream_error"_s);
    QCOMPARE(error.value(u"message"_s).toString(),
             u"Provider `claude` failed with HTTP 529: Overloaded (overloaded_error)"_s);
}

void GatewayAdaptersTest::anthropicOverloadedFailsOverToTheNextProvider()
{
    FakeUpstream overloaded;
    overloaded.mode = FakeUpstream::Mode::Status;
    overloaded.status = 529;
    overloaded.statusBody = kOverloaded;
    FakeUpstream backup;
    // Weight 0: never drawn first, so the overloaded provider is always tried before it.
    config::ProviderConfig second = providerFor(u"backup"_s, backup, {u"claude-fast"_s});
    second.weight = 0;
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, overloaded), second}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("claude-fast", false));
    QVERIFY(client.waitForFinished());
    verifyCompletion(client, "backup", u"hi"_s, u"stop"_s);
    QVERIFY(overloaded.requests().size() >= 1);
    QCOMPARE(backup.requests().size(), 1);
    QCOMPARE(backup.requests().first().path, QByteArray("/v1/chat/completions"));
}

void GatewayAdaptersTest::mappedAgentAnswersWhole()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 200;
    fake.statusBody = R"({"reply":"Open tray 2.","stop_reason":"max_new_tokens"})";
    auto engine = startEngine(gatewayConfig({mappedAt(fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("helpdesk-agent", false));
    QVERIFY(client.waitForFinished());
    verifyCompletion(client, "helpdesk", u"Open tray 2."_s, u"length"_s);

    const FakeUpstream::ReceivedRequest &sent = fake.requests().first();
    QCOMPARE(sent.path, QByteArray("/v1/generate"));
    const QJsonObject body = jsonOf(sent.body);
    QCOMPARE(body.value(u"agent"_s).toString(), u"helpdesk-v2"_s);
    QCOMPARE(body.value(u"conversation"_s).toArray().at(0).toObject(),
             (QJsonObject{{u"role"_s, u"user"_s}, {u"text"_s, u"hello"_s}}));
}

void GatewayAdaptersTest::mappedAgentStreams()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 200;
    fake.statusContentType = "text/event-stream";
    fake.statusBody = "data: {\"delta\": \"Open \"}\n\n"
                      "data: {\"status\": \"searching\"}\n\n"
                      "data: {\"delta\": \"tray 2.\"}\n\n"
                      "data: {\"delta\": \"\", \"done\": true, \"stop_reason\": \"eos\"}\n\n";
    auto engine = startEngine(gatewayConfig({mappedAt(fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("helpdesk-agent", true));
    QVERIFY(client.waitForFinished());
    verifyChunks(client, "helpdesk", u"Open tray 2."_s, u"stop"_s);
    QCOMPARE(fake.requests().first().path, QByteArray("/v1/generate/stream"));
}

void GatewayAdaptersTest::mappedAnswerWithoutItsPathIsUnusable()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 200;
    fake.statusBody = R"({"status":"thinking"})";
    auto engine = startEngine(gatewayConfig({mappedAt(fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("helpdesk-agent", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 502);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("helpdesk"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(u"code"_s).toString(), u"invalid_upstream_response"_s);
    QCOMPARE(error.value(u"message"_s).toString(),
             u"Provider `helpdesk` sent an answer without `$.reply`, where its mapping expects "
             u"the reply text."_s);
    // Quality, not a call failure: the agent's breaker does not count it against the endpoint.
    QCOMPARE(providerHealth(*engine, u"helpdesk"_s).unusableAnswers, quint64(1));
}

void GatewayAdaptersTest::unstreamableAgentIsReplayedAsChunks()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 200;
    fake.statusBody = R"({"reply":"Open tray 2.","stop_reason":"eos"})";
    auto engine = startEngine(gatewayConfig({mappedAt(fake, false)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("helpdesk-agent", true));
    QVERIFY(client.waitForFinished());
    verifyChunks(client, "helpdesk", u"Open tray 2."_s, u"stop"_s);
    const FakeUpstream::ReceivedRequest &sent = fake.requests().first();
    QCOMPARE(sent.path, QByteArray("/v1/generate"));
    QCOMPARE(jsonOf(sent.body).value(u"stream"_s), QJsonValue(false));
}

void GatewayAdaptersTest::requestAnAdapterCannotExpressIsRefused()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", R"({"model":"claude-fast","n":2,)"
                                        R"("messages":[{"role":"user","content":"hi"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 400);
    QCOMPARE(errorOf(client.body()).value(u"type"_s).toString(), u"invalid_request_error"_s);
    // The client's fault: nothing was sent and the endpoint's record is untouched.
    QCOMPARE(fake.requests().size(), 0);
    const ProviderHealth health = providerHealth(*engine, u"claude"_s);
    QCOMPARE(health.errors, quint64(0));
    QCOMPARE(healthInFlight(*engine), 0);
}

void GatewayAdaptersTest::errorEventBeforeTheFirstByteFailsOver()
{
    FakeUpstream overloaded;
    overloaded.mode = FakeUpstream::Mode::Status;
    overloaded.status = 200;
    overloaded.statusContentType = "text/event-stream";
    overloaded.statusBody = "event: error\ndata: " + kOverloaded + "\n\n";
    FakeUpstream backup;
    config::ProviderConfig second = providerFor(u"backup"_s, backup, {u"claude-fast"_s});
    second.weight = 0;
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, overloaded), second}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("claude-fast", true));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("backup"));
    QVERIFY(!client.events().isEmpty());
    QVERIFY(client.events().last().isDone());
    QCOMPARE(backup.requests().size(), 1);
}

void GatewayAdaptersTest::messagesClientReachesAnOpenAiProvider()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig({providerFor(u"openai"_s, fake, {u"gpt-x"_s})}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", R"({"model":"gpt-x","max_tokens":100,)"
                                R"("messages":[{"role":"user","content":"hello"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("openai"));
    const QJsonObject message = jsonOf(client.body());
    QCOMPARE(message.value(u"type"_s).toString(), u"message"_s);
    QCOMPARE(message.value(u"role"_s).toString(), u"assistant"_s);
    QCOMPARE(message.value(u"stop_reason"_s).toString(), u"end_turn"_s);
    QCOMPARE(message.value(u"content"_s).toArray().at(0).toObject(),
             (QJsonObject{{u"type"_s, u"text"_s}, {u"text"_s, u"hi"_s}}));

    const QJsonObject sent = jsonOf(fake.requests().first().body);
    QCOMPARE(sent.value(u"max_tokens"_s).toInt(), 100);
    QCOMPARE(sent.value(u"messages"_s).toArray().at(0).toObject().value(u"role"_s).toString(),
             u"user"_s);
}

void GatewayAdaptersTest::messagesClientStreamsFromAnOpenAiProvider()
{
    FakeUpstream fake;
    fake.streamEvents = 2;
    auto engine = startEngine(gatewayConfig({providerFor(u"openai"_s, fake, {u"gpt-x"_s})}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", R"({"model":"gpt-x","max_tokens":100,"stream":true,)"
                                R"("messages":[{"role":"user","content":"hello"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(client.header("content-type").startsWith("text/event-stream"));
    const QList<QByteArray> names = eventNames(client);
    QVERIFY2(names.size() >= 5, names.join(' ').constData());
    QCOMPARE(names.first(), QByteArray("message_start"));
    QCOMPARE(names.last(), QByteArray("message_stop"));
    QVERIFY(names.contains("content_block_start"));
    QVERIFY(names.contains("content_block_delta"));
    QVERIFY(names.contains("content_block_stop"));
    QCOMPARE(names.at(names.size() - 2), QByteArray("message_delta"));
    for (const upstream::SseEvent &event : client.events())
        QVERIFY(!event.isDone()); // Anthropic's stream has no [DONE]
}

void GatewayAdaptersTest::messagesClientGetsProviderErrorsInAnthropicShape()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 429;
    fake.statusBody = R"({"error":{"message":"slow down","type":"rate_limit"}})";
    fake.extraHeaders = {{"retry-after", "30"}};
    auto engine = startEngine(gatewayConfig({providerFor(u"openai"_s, fake, {u"gpt-x"_s})}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", R"({"model":"gpt-x","max_tokens":100,)"
                                R"("messages":[{"role":"user","content":"hello"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 429);
    QCOMPARE(client.header("retry-after"), QByteArray("30"));
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("openai"));
    const QJsonObject answer = jsonOf(client.body());
    QCOMPARE(answer.value(u"type"_s).toString(), u"error"_s);
    const QJsonObject error = answer.value(u"error"_s).toObject();
    QCOMPARE(error.value(u"type"_s).toString(), u"rate_limit_error"_s);
    // Which providers cool down and for how long, then the provider's own words.
    const QString message = error.value(u"message"_s).toString();
    QVERIFY2(message.contains(u"`openai` for 30 s more."_s), qPrintable(message));
    QVERIFY2(message.endsWith(u"The last said: Provider `openai` is rate limiting requests: "
                              u"slow down"_s),
             qPrintable(message));
}

void GatewayAdaptersTest::messagesStreamCutEndsWithAnthropicErrorEvent()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::CutStream;
    fake.cutAfterEvents = 2;
    auto engine = startEngine(gatewayConfig({providerFor(u"openai"_s, fake, {u"gpt-x"_s})}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/messages", R"({"model":"gpt-x","max_tokens":100,"stream":true,)"
                                R"("messages":[{"role":"user","content":"hello"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QList<QByteArray> names = eventNames(client);
    QVERIFY(!names.isEmpty());
    QCOMPARE(names.first(), QByteArray("message_start"));
    QCOMPARE(names.last(), QByteArray("error"));
    QVERIFY(!names.contains("message_stop"));
    const QJsonObject error = jsonOf(client.events().last().data);
    QCOMPARE(error.value(u"type"_s).toString(), u"error"_s);
    QCOMPARE(error.value(u"error"_s).toObject().value(u"type"_s).toString(), u"api_error"_s);
}

void GatewayAdaptersTest::messagesRefusalsUseAnthropicErrorShape_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("type");

    QTest::newRow("not json") << QByteArray("{nope") << 400 << u"invalid_request_error"_s;
    QTest::newRow("unknown model") << QByteArray(R"({"model":"nobody","max_tokens":10,)"
                                                 R"("messages":[{"role":"user","content":"hi"}]})")
                                   << 404 << u"not_found_error"_s;
}

void GatewayAdaptersTest::anthropicStreamCutIsDescribedInItsOwnTerms()
{
    // The provider's stream stops after its first text delta, without `message_stop`.
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 200;
    fake.statusContentType = "text/event-stream";
    fake.statusBody = kAnthropicStream.left(kAnthropicStream.indexOf(
        "event: content_block_delta\n", kAnthropicStream.indexOf("Hello")));
    auto engine = startEngine(gatewayConfig({anthropicAt(u"claude"_s, fake)}));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions", chatBody("claude-fast", true));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(client.events().size() >= 2);
    const QJsonObject error = errorOf(client.events().constLast().data);
    QCOMPARE(error.value(u"code"_s).toString(), u"upstream_stream_interrupted"_s);
    QCOMPARE(error.value(u"message"_s).toString(),
             u"Provider `claude` ended the stream before its `message_stop` event; the answer is "
             u"incomplete."_s);
}

void GatewayAdaptersTest::aFailoverAdaptersRefusalKeepsTheEarlierProvidersError()
{
    // The OpenAI provider fails; the fallback speaks Anthropic's protocol, which cannot ask for
    // two choices. The client hears about the failure, not a 400 for a request that was fine.
    FakeUpstream failing, anthropic;
    failing.mode = FakeUpstream::Mode::Status;
    failing.status = 500;
    config::Config config = gatewayConfig(
        {providerFor(u"openai"_s, failing, {u"gpt-x"_s}), anthropicAt(u"claude"_s, anthropic)});
    config.routing.fallbackChain = {u"claude"_s};
    auto engine = startEngine(config);
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/chat/completions",
                R"({"model":"gpt-x","n":2,"messages":[{"role":"user","content":"hi"}]})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 502);
    QCOMPARE(client.header("x-switchyard-provider"), "openai"_ba);
    QCOMPARE(errorOf(client.body()).value(u"code"_s).toString(), u"upstream_error"_s);
    QCOMPARE(failing.requests().size(), 1);
    QCOMPARE(anthropic.requests().size(), 0);
}

void GatewayAdaptersTest::messagesWrongMethodIsRefusedInAnthropicShape()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig({providerFor(u"openai"_s, fake, {u"gpt-x"_s})}));
    QVERIFY(engine);
    TestClient client(engine->port());
    client.send("GET", "/v1/messages");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 405);
    QCOMPARE(client.header("allow"), "POST"_ba);
    const QJsonObject answer = jsonOf(client.body());
    QCOMPARE(answer.value(u"type"_s).toString(), u"error"_s);
    QCOMPARE(answer.value(u"error"_s).toObject().value(u"type"_s).toString(), u"not_found_error"_s);
    QCOMPARE(answer.value(u"error"_s).toObject().value(u"message"_s).toString(),
             u"Method GET is not allowed on /v1/messages."_s);
}

void GatewayAdaptersTest::messagesRefusalsUseAnthropicErrorShape()
{
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, type);

    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig({providerFor(u"openai"_s, fake, {u"gpt-x"_s})}));
    QVERIFY(engine);
    TestClient client(engine->port());
    client.post("/v1/messages", body);
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    const QJsonObject answer = jsonOf(client.body());
    QCOMPARE(answer.value(u"type"_s).toString(), u"error"_s);
    QCOMPARE(answer.value(u"error"_s).toObject().value(u"type"_s).toString(), type);
    QVERIFY(!answer.value(u"error"_s).toObject().value(u"message"_s).toString().isEmpty());
    QCOMPARE(fake.requests().size(), 0);
}

QTEST_GUILESS_MAIN(GatewayAdaptersTest)
#include "tst_gateway_adapters.moc"
