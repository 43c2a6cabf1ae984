// The operations beside chat through the real server: embeddings and legacy completions passed
// through to a provider that speaks them, embeddings answered by the simulated provider, and the
// model list and refusals that say which endpoint serves which model.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "sim/simulator_host.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>
#include <cstring>
#include <memory>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

const QByteArray kEmbeddingsAnswer =
    R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-0.25]}],)"
    R"("model":"text-embedding-3-small","usage":{"prompt_tokens":3,"total_tokens":3}})";

const QByteArray kCompletionAnswer =
    R"({"id":"cmpl-1","object":"text_completion","created":1,"model":"gpt-3.5-turbo-instruct",)"
    R"("choices":[{"text":" world","index":0,"logprobs":null,"finish_reason":"stop"}],)"
    R"("usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}})";

const QByteArray kCompletionStream =
    R"(data: {"id":"cmpl-1","object":"text_completion","created":1,"choices":[{"text":" wor",)"
    R"("index":0,"logprobs":null,"finish_reason":null}],"model":"gpt-3.5-turbo-instruct"})"
    "\n\n"
    R"(data: {"id":"cmpl-1","object":"text_completion","created":1,"choices":[{"text":"ld",)"
    R"("index":0,"logprobs":null,"finish_reason":"stop"}],"model":"gpt-3.5-turbo-instruct"})"
    "\n\n"
    "data: [DONE]\n\n";

const QByteArray kNativeResponse =
    R"({"id":"resp_native","object":"response","created_at":1,"status":"completed",)"
    R"("model":"gpt-native-2025","output":[{"type":"message","id":"msg_1","status":"completed",)"
    R"("role":"assistant","content":[{"type":"output_text","text":"native hi","annotations":[]}]}],)"
    R"("usage":{"input_tokens":4,"output_tokens":2,"total_tokens":6}})";

// A Responses API stream as a provider that speaks it writes one.
QByteArray nativeStream(bool complete)
{
    QByteArray stream =
        "event: response.created\n"
        R"(data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_native",)"
        R"("object":"response","status":"in_progress","output":[]}})"
        "\n\n"
        "event: response.output_text.delta\n"
        R"(data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"msg_1",)"
        R"("output_index":0,"content_index":0,"delta":"native hi"})"
        "\n\n";
    if (complete)
        stream += "event: response.completed\n"
                  R"(data: {"type":"response.completed","sequence_number":2,"response":)" +
                  kNativeResponse + "}\n\n";
    return stream;
}

QJsonObject jsonOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object();
}

} // namespace

class GatewayOperationsTest final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void embeddingsPassThroughToAnOpenAiProvider();
    void simulatedEmbeddingsAreDeterministicVectors();
    void completionsPassThroughWhole();
    void completionsPassThroughStreamed();
    void aModelOnAnEndpointItDoesNotServeIsRefused_data();
    void aModelOnAnEndpointItDoesNotServeIsRefused();
    void badEmbeddingsRequestsAreRefused_data();
    void badEmbeddingsRequestsAreRefused();
    void modelListSaysWhatEachModelServes();
    void embeddingsFailOverButNeverDegradeToCannedText();
    void embeddingsDegradeOnlyToAModelOfTheSameDimensions();
    void responsesTranslatedToChatWhole();
    void responsesTranslatedToChatStreamed();
    void responsesStreamFailsOverBeforeItsFirstByte();
    void responsesPassThroughToAProviderThatSpeaksThem();
    void responsesPassThroughStreamCutEndsWithAnErrorEvent();
    void previousResponseIdNeedsAProviderThatSpeaksResponses();
    void responsesDegradeToACannedResponse();

private:
    // A chat provider on `chat` and one that speaks the Responses API itself on `native`.
    config::Config responsesConfig(const FakeUpstream &chat, const FakeUpstream &native,
                                   const QByteArray &extra = {}) const;
    // Chat and instruct models on `chatFake`, an embeddings model (renamed upstream) on
    // `embedFake`, and a simulated embeddings model of 8 dimensions.
    config::Config operationsConfig(const FakeUpstream &chatFake, const FakeUpstream &embedFake,
                                    const QByteArray &extra = {}) const;
};

void GatewayOperationsTest::initTestCase()
{
    QLoggingCategory::setFilterRules(u"switchyard.*.debug=false"_s);
}

config::Config GatewayOperationsTest::operationsConfig(const FakeUpstream &chatFake,
                                                       const FakeUpstream &embedFake,
                                                       const QByteArray &extra) const
{
    const QByteArray yaml =
        "listen: 127.0.0.1:0\n"
        "providers:\n"
        "  - id: chat-provider\n"
        "    kind: openai\n"
        "    base_url: " +
        chatFake.baseUrl() +
        "\n"
        "    models:\n"
        "      - gpt-test\n"
        "      - {name: instruct, upstream: gpt-3.5-turbo-instruct, "
        "endpoints: [completions]}\n"
        "  - id: embed-provider\n"
        "    kind: openai\n"
        "    base_url: " +
        embedFake.baseUrl() +
        "\n"
        "    models:\n"
        "      - {name: embed, upstream: text-embedding-3-small, "
        "endpoints: [embeddings], dimensions: 1536}\n"
        "  - id: sim-embed\n"
        "    kind: simulated\n"
        "    models:\n"
        "      - {name: sim-vectors, endpoints: [embeddings], dimensions: 8}\n" +
        extra;
    return loadTestConfig(yaml, u"operations test"_s);
}

config::Config GatewayOperationsTest::responsesConfig(const FakeUpstream &chat,
                                                      const FakeUpstream &native,
                                                      const QByteArray &extra) const
{
    return loadTestConfig("listen: 127.0.0.1:0\n"
                          "providers:\n"
                          "  - id: chat-provider\n"
                          "    kind: openai\n"
                          "    base_url: " +
                              chat.baseUrl() +
                              "\n"
                              "    models: [gpt-test]\n"
                              "  - id: native-provider\n"
                              "    kind: openai\n"
                              "    responses_api: true\n"
                              "    base_url: " +
                              native.baseUrl() +
                              "\n"
                              "    models:\n"
                              "      - {name: gpt-native, upstream: gpt-native-2025}\n" +
                              extra,
                          u"responses test"_s);
}

void GatewayOperationsTest::embeddingsPassThroughToAnOpenAiProvider()
{
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    embedFake.mode = FakeUpstream::Mode::Status;
    embedFake.status = 200;
    embedFake.statusBody = kEmbeddingsAnswer;
    // A rule that takes every chat request does not take embeddings: they go by model.
    auto engine = startEngine(operationsConfig(chatFake, embedFake,
                                               "routes:\n"
                                               "  - name: everything\n"
                                               "    to: {provider: chat-provider}\n"));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/embeddings",
                R"({"model":"embed","input":["a","b"],"dimensions":2,"user":"u1"})");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.body(), kEmbeddingsAnswer); // relayed as the provider wrote it
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("embed-provider"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("1"));
    QCOMPARE(chatFake.requests().size(), 0);
    QCOMPARE(embedFake.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &sent = embedFake.requests().first();
    QCOMPARE(sent.path, QByteArray("/v1/embeddings"));
    const QJsonObject body = jsonOf(sent.body);
    QCOMPARE(body.value("model"_L1).toString(), u"text-embedding-3-small"_s);
    QCOMPARE(body.value("input"_L1).toArray().size(), 2);
    QCOMPARE(body.value("dimensions"_L1).toInt(), 2); // options pass on untouched
    QCOMPARE(body.value("user"_L1).toString(), u"u1"_s);
}

void GatewayOperationsTest::simulatedEmbeddingsAreDeterministicVectors()
{
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    config::Config config = operationsConfig(chatFake, embedFake);
    // Started here the way the console's bridge starts them on the simulator thread.
    sim::SimulatorHost simulator;
    QString error;
    sim::applySimulatorUrls(config, simulator.start(config.providers, &error));
    QVERIFY2(error.isEmpty(), qPrintable(error));
    auto engine = startEngine(config);
    QVERIFY(engine);
    const auto embed = [&](const QByteArray &body) {
        TestClient client(engine->port());
        client.post("/v1/embeddings", body);
        if (!client.waitForFinished() || client.status() != 200) {
            qWarning() << client.status() << client.body();
            return QJsonArray();
        }
        return jsonOf(client.body()).value("data"_L1).toArray();
    };

    const QJsonArray first = embed(R"({"model":"sim-vectors","input":["alpha","beta"]})");
    const QJsonArray again = embed(R"({"model":"sim-vectors","input":"alpha"})");
    QCOMPARE(first.size(), 2);
    QCOMPARE(again.size(), 1);
    const QJsonArray alpha = first.at(0).toObject().value("embedding"_L1).toArray();
    const QJsonArray beta = first.at(1).toObject().value("embedding"_L1).toArray();
    QCOMPARE(alpha.size(), 8); // the model's configured dimensions
    QCOMPARE(again.at(0).toObject().value("embedding"_L1).toArray(), alpha);
    QVERIFY(alpha != beta);
    double norm = 0.0;
    for (const QJsonValue &value : alpha)
        norm += value.toDouble() * value.toDouble();
    QVERIFY(qAbs(norm - 1.0) < 1e-5); // unit length
    QCOMPARE(first.at(1).toObject().value("index"_L1).toInt(), 1);

    // `dimensions` asks for shorter vectors; base64 carries the same floats, little-endian.
    QCOMPARE(embed(R"({"model":"sim-vectors","input":"alpha","dimensions":3})")
                 .at(0)
                 .toObject()
                 .value("embedding"_L1)
                 .toArray()
                 .size(),
             3);
    const QByteArray encoded =
        QByteArray::fromBase64(embed(R"({"model":"sim-vectors","input":"alpha",)"
                                     R"("encoding_format":"base64"})")
                                   .at(0)
                                   .toObject()
                                   .value("embedding"_L1)
                                   .toString()
                                   .toLatin1());
    QCOMPARE(encoded.size(), qsizetype(8 * sizeof(float)));
    for (int index = 0; index < 8; ++index) {
        float value = 0;
        std::memcpy(&value, encoded.constData() + index * sizeof(float), sizeof(float));
        QCOMPARE(value, float(alpha.at(index).toDouble()));
    }
}

void GatewayOperationsTest::completionsPassThroughWhole()
{
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    chatFake.mode = FakeUpstream::Mode::Status;
    chatFake.status = 200;
    chatFake.statusBody = kCompletionAnswer;
    auto engine = startEngine(operationsConfig(chatFake, embedFake));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/completions", R"({"model":"instruct","prompt":"hello","max_tokens":5})");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.body(), kCompletionAnswer);
    QCOMPARE(chatFake.requests().size(), 1);
    QCOMPARE(chatFake.requests().first().path, QByteArray("/v1/completions"));
    const QJsonObject sent = jsonOf(chatFake.requests().first().body);
    QCOMPARE(sent.value("model"_L1).toString(), u"gpt-3.5-turbo-instruct"_s);
    QCOMPARE(sent.value("max_tokens"_L1).toInt(), 5);
}

void GatewayOperationsTest::completionsPassThroughStreamed()
{
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    chatFake.mode = FakeUpstream::Mode::Status;
    chatFake.status = 200;
    chatFake.statusContentType = "text/event-stream";
    chatFake.statusBody = kCompletionStream;
    auto engine = startEngine(operationsConfig(chatFake, embedFake));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/completions", R"({"model":"instruct","prompt":["hello"],"stream":true})");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(client.header("content-type").startsWith("text/event-stream"));
    QCOMPARE(client.events().size(), 3);
    QCOMPARE(jsonOf(client.events().at(0).data).value("object"_L1).toString(),
             u"text_completion"_s);
    QVERIFY(client.events().at(2).isDone());
    QCOMPARE(chatFake.requests().first().header("accept"), QByteArray("text/event-stream"));
}

void GatewayOperationsTest::aModelOnAnEndpointItDoesNotServeIsRefused_data()
{
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("message");

    QTest::newRow("a chat model asked for embeddings")
        << QByteArray("/v1/embeddings") << QByteArray(R"({"model":"gpt-test","input":"x"})") << 400
        << u"model_not_supported_on_endpoint"_s
        << u"The model `gpt-test` is not served on /v1/embeddings; it is served on "
           u"/v1/chat/completions, /v1/responses."_s;
    QTest::newRow("an embeddings model asked for chat")
        << QByteArray("/v1/chat/completions")
        << QByteArray(R"({"model":"embed","messages":[{"role":"user","content":"x"}]})") << 400
        << u"model_not_supported_on_endpoint"_s
        << u"The model `embed` is not served on /v1/chat/completions; it is served on "
           u"/v1/embeddings."_s;
    QTest::newRow("a chat model asked for legacy completions")
        << QByteArray("/v1/completions") << QByteArray(R"({"model":"gpt-test","prompt":"x"})")
        << 400 << u"model_not_supported_on_endpoint"_s
        << u"The model `gpt-test` is not served on /v1/completions; it is served on "
           u"/v1/chat/completions, /v1/responses."_s;
    QTest::newRow("a model nobody serves")
        << QByteArray("/v1/embeddings") << QByteArray(R"({"model":"nope","input":"x"})") << 404
        << u"model_not_found"_s << QString();
}

void GatewayOperationsTest::aModelOnAnEndpointItDoesNotServeIsRefused()
{
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(QString, message);
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    auto engine = startEngine(operationsConfig(chatFake, embedFake));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post(path, body);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    QCOMPARE(errorOf(client.body()).value("code"_L1).toString(), code);
    if (!message.isEmpty())
        QCOMPARE(errorOf(client.body()).value("message"_L1).toString(), message);
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("0"));
    QCOMPARE(chatFake.requests().size() + embedFake.requests().size(), 0);
}

void GatewayOperationsTest::badEmbeddingsRequestsAreRefused_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("param");

    QTest::newRow("no input") << QByteArray(R"({"model":"embed"})") << u"input"_s;
    QTest::newRow("empty list") << QByteArray(R"({"model":"embed","input":[]})") << u"input"_s;
    QTest::newRow("a number") << QByteArray(R"({"model":"embed","input":5})") << u"input"_s;
    QTest::newRow("an object in the list")
        << QByteArray(R"({"model":"embed","input":["a",{}]})") << u"input[1]"_s;
    QTest::newRow("unknown encoding")
        << QByteArray(R"({"model":"embed","input":"a","encoding_format":"hex"})")
        << u"encoding_format"_s;
    QTest::newRow("zero dimensions")
        << QByteArray(R"({"model":"embed","input":"a","dimensions":0})") << u"dimensions"_s;
    QTest::newRow("not JSON") << QByteArray("{\"model\":") << QString();
}

void GatewayOperationsTest::badEmbeddingsRequestsAreRefused()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, param);
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    auto engine = startEngine(operationsConfig(chatFake, embedFake));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/embeddings", body);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 400);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value("type"_L1).toString(), u"invalid_request_error"_s);
    if (!param.isEmpty())
        QCOMPARE(error.value("param"_L1).toString(), param);
    QCOMPARE(embedFake.requests().size(), 0);
}

void GatewayOperationsTest::modelListSaysWhatEachModelServes()
{
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    auto engine = startEngine(operationsConfig(chatFake, embedFake));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.send("GET", "/v1/models");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QHash<QString, QStringList> endpoints;
    for (const QJsonValue &model : jsonOf(client.body()).value("data"_L1).toArray()) {
        QStringList paths;
        for (const QJsonValue &path : model.toObject().value("endpoints"_L1).toArray())
            paths.append(path.toString());
        endpoints.insert(model.toObject().value("id"_L1).toString(), paths);
    }
    QCOMPARE(endpoints.value(u"gpt-test"_s),
             (QStringList{u"/v1/chat/completions"_s, u"/v1/responses"_s}));
    QCOMPARE(endpoints.value(u"instruct"_s), QStringList{u"/v1/completions"_s});
    QCOMPARE(endpoints.value(u"embed"_s), QStringList{u"/v1/embeddings"_s});
    QCOMPARE(endpoints.value(u"sim-vectors"_s), QStringList{u"/v1/embeddings"_s});
}

void GatewayOperationsTest::embeddingsFailOverButNeverDegradeToCannedText()
{
    // Two providers of the same embeddings model: the first fails, the second answers. With
    // both failing, the ladder's canned text and fail-safe message are never an embedding.
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    FakeUpstream second;
    embedFake.mode = FakeUpstream::Mode::Status;
    embedFake.status = 500;
    second.mode = FakeUpstream::Mode::Status;
    second.status = 200;
    second.statusBody = kEmbeddingsAnswer;
    const QByteArray extra = "  - id: embed-backup\n"
                             "    kind: openai\n"
                             "    base_url: " +
                             second.baseUrl() +
                             "\n"
                             "    models:\n"
                             "      - {name: embed, upstream: text-embedding-3-small, "
                             "endpoints: [embeddings], dimensions: 1536}\n"
                             "degradation:\n"
                             "  fail_safe: We are busy.\n"
                             "  canned: [{when: {model: '*'}, reply: Canned.}]\n";
    auto engine = startEngine(operationsConfig(chatFake, embedFake, extra));
    QVERIFY(engine);
    // The endpoints are drawn by score: go on until the failing one was drawn first.
    for (int request = 0; request < 20 && embedFake.requests().isEmpty(); ++request) {
        const qsizetype before = second.requests().size();
        TestClient client(engine->port());
        client.post("/v1/embeddings", R"({"model":"embed","input":"a"})");
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
        QCOMPARE(client.body(), kEmbeddingsAnswer);
        QCOMPARE(
            client.header("x-switchyard-attempts"),
            QByteArray::number(embedFake.requests().size() + second.requests().size() - before));
    }
    QCOMPARE(embedFake.requests().size(), 1);
    second.status = 500;
    TestClient client(engine->port());
    client.post("/v1/embeddings", R"({"model":"embed","input":"a"})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 502);
    QCOMPARE(client.header("x-switchyard-degraded"), QByteArray("0"));
    QVERIFY(!client.body().contains("We are busy"));
    QVERIFY(!client.body().contains("Canned"));
}

void GatewayOperationsTest::embeddingsDegradeOnlyToAModelOfTheSameDimensions()
{
    FakeUpstream chatFake;
    FakeUpstream embedFake;
    FakeUpstream sameDimensions;
    FakeUpstream otherDimensions;
    embedFake.mode = FakeUpstream::Mode::Status;
    embedFake.status = 500;
    sameDimensions.mode = FakeUpstream::Mode::Status;
    sameDimensions.status = 200;
    sameDimensions.statusBody = kEmbeddingsAnswer;
    const QByteArray extra =
        "  - id: same-dimensions\n"
        "    kind: openai\n"
        "    base_url: " +
        sameDimensions.baseUrl() +
        "\n"
        "    models:\n"
        "      - {name: embed-lite, endpoints: [embeddings], dimensions: 1536}\n"
        "  - id: other-dimensions\n"
        "    kind: openai\n"
        "    base_url: " +
        otherDimensions.baseUrl() +
        "\n"
        "    models:\n"
        "      - {name: embed-768, endpoints: [embeddings], dimensions: 768}\n";
    auto engine = startEngine(operationsConfig(chatFake, embedFake, extra));
    QVERIFY(engine);

    TestClient client(engine->port());
    client.post("/v1/embeddings", R"({"model":"embed","input":"a"})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-degraded"), QByteArray("1"));
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("same-dimensions"));
    QCOMPARE(jsonOf(sameDimensions.requests().first().body).value("model"_L1).toString(),
             u"embed-lite"_s);
    QCOMPARE(otherDimensions.requests().size(), 0);

    // A client that allows no lighter model gets the planned model's failure.
    TestClient strict(engine->port());
    strict.post("/v1/embeddings", R"({"model":"embed","input":"a"})",
                {{"x-switchyard-fallback-level", "0"}});
    QVERIFY(strict.waitForFinished());
    QCOMPARE(strict.status(), 502);
    QCOMPARE(sameDimensions.requests().size(), 1);
    QCOMPARE(otherDimensions.requests().size(), 0);
}

void GatewayOperationsTest::responsesTranslatedToChatWhole()
{
    FakeUpstream chat;
    FakeUpstream native;
    auto engine = startEngine(responsesConfig(chat, native));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/responses",
                R"({"model":"gpt-test","input":"hello","instructions":"Be brief.",)"
                R"("store":true,"max_output_tokens":50})");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QJsonObject response = jsonOf(client.body());
    QCOMPARE(response.value("object"_L1).toString(), u"response"_s);
    QCOMPARE(response.value("status"_L1).toString(), u"completed"_s);
    const QJsonObject message = response.value("output"_L1).toArray().at(0).toObject();
    QCOMPARE(message.value("type"_L1).toString(), u"message"_s);
    QCOMPARE(message.value("content"_L1).toArray().at(0).toObject().value("text"_L1).toString(),
             u"hi"_s);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("chat-provider"));
    // `store: true` is kept by the gateway now (a stored response with a random id), and the
    // provider never sees it: nothing is listed as ignored.
    QVERIFY(client.header("x-switchyard-ignored-fields").isEmpty());
    QCOMPARE(response.value("store"_L1).toBool(), true);
    QVERIFY(response.value("id"_L1).toString().startsWith(u"resp_"_s));
    QVERIFY(!jsonOf(chat.requests().first().body).contains("store"_L1));
    // The provider was asked for a chat completion.
    QCOMPARE(chat.requests().size(), 1);
    QCOMPARE(chat.requests().first().path, QByteArray("/v1/chat/completions"));
    const QJsonObject sent = jsonOf(chat.requests().first().body);
    QCOMPARE(sent.value("max_completion_tokens"_L1).toInt(), 50);
    const QJsonArray messages = sent.value("messages"_L1).toArray();
    QCOMPARE(messages.at(0).toObject().value("role"_L1).toString(), u"system"_s);
    QCOMPARE(messages.at(1).toObject().value("content"_L1).toString(), u"hello"_s);
}

void GatewayOperationsTest::responsesTranslatedToChatStreamed()
{
    FakeUpstream chat;
    FakeUpstream native;
    auto engine = startEngine(responsesConfig(chat, native));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/responses", R"({"model":"gpt-test","input":"hello","stream":true})");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(client.header("content-type").startsWith("text/event-stream"));
    const QList<upstream::SseEvent> &events = client.events();
    QVERIFY(events.size() > 6);
    QCOMPARE(events.first().event, QByteArray("response.created"));
    QCOMPARE(events.at(1).event, QByteArray("response.in_progress"));
    QCOMPARE(events.last().event, QByteArray("response.completed"));
    QString text;
    for (qsizetype index = 0; index < events.size(); ++index) {
        const QJsonObject data = jsonOf(events.at(index).data);
        QCOMPARE(data.value("sequence_number"_L1).toInteger(), index);
        QCOMPARE(data.value("type"_L1).toString().toUtf8(), events.at(index).event);
        if (events.at(index).event == "response.output_text.delta")
            text += data.value("delta"_L1).toString();
    }
    const QJsonObject done = jsonOf(events.last().data).value("response"_L1).toObject();
    const QString finalText = done.value("output"_L1)
                                  .toArray()
                                  .at(0)
                                  .toObject()
                                  .value("content"_L1)
                                  .toArray()
                                  .at(0)
                                  .toObject()
                                  .value("text"_L1)
                                  .toString();
    QVERIFY(!text.isEmpty());
    QCOMPARE(finalText, text);
    QVERIFY(jsonOf(chat.requests().first().body)
                .value("stream_options"_L1)
                .toObject()
                .value("include_usage"_L1)
                .toBool());
}

void GatewayOperationsTest::responsesStreamFailsOverBeforeItsFirstByte()
{
    FakeUpstream chat;
    FakeUpstream native;
    FakeUpstream backup;
    chat.mode = FakeUpstream::Mode::Status; // 500 before any event
    auto engine = startEngine(responsesConfig(chat, native,
                                              "  - id: backup\n"
                                              "    kind: openai\n"
                                              "    base_url: " +
                                                  backup.baseUrl() +
                                                  "\n"
                                                  "    models: [gpt-test]\n"));
    QVERIFY(engine);
    for (int request = 0; request < 20 && chat.requests().isEmpty(); ++request) {
        TestClient client(engine->port());
        client.post("/v1/responses", R"({"model":"gpt-test","input":"hello","stream":true})");
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
        QCOMPARE(client.header("x-switchyard-provider"), QByteArray("backup"));
        QCOMPARE(client.events().first().event, QByteArray("response.created"));
        QCOMPARE(client.events().last().event, QByteArray("response.completed"));
    }
    QCOMPARE(chat.requests().size(), 1); // tried first once, and failed over
}

void GatewayOperationsTest::responsesPassThroughToAProviderThatSpeaksThem()
{
    FakeUpstream chat;
    FakeUpstream native;
    native.mode = FakeUpstream::Mode::Status;
    native.status = 200;
    native.statusBody = kNativeResponse;
    auto engine = startEngine(responsesConfig(chat, native));
    QVERIFY(engine);
    const QByteArray request = R"({"model":"gpt-native","input":"hello","store":true,)"
                               R"("tools":[{"type":"web_search"}],"include":["x"]})";
    {
        TestClient client(engine->port());
        client.post("/v1/responses", request);
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
        QCOMPARE(client.body(), kNativeResponse);
        QVERIFY(client.header("x-switchyard-ignored-fields").isEmpty());
    }
    QCOMPARE(native.requests().size(), 1);
    QCOMPARE(native.requests().first().path, QByteArray("/v1/responses"));
    const QJsonObject sent = jsonOf(native.requests().first().body);
    QCOMPARE(sent.value("model"_L1).toString(), u"gpt-native-2025"_s);
    QCOMPARE(sent.value("tools"_L1).toArray().at(0).toObject().value("type"_L1).toString(),
             u"web_search"_s); // a built-in tool only a native provider can run
    QVERIFY(sent.value("store"_L1).toBool());

    native.statusContentType = "text/event-stream";
    native.statusBody = nativeStream(true);
    TestClient client(engine->port());
    client.post("/v1/responses", R"({"model":"gpt-native","input":"hello","stream":true})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.events().size(), 3);
    QCOMPARE(client.events().at(1).event, QByteArray("response.output_text.delta"));
    QCOMPARE(client.events().last().event, QByteArray("response.completed"));
    QCOMPARE(native.requests().last().header("accept"), QByteArray("text/event-stream"));
}

void GatewayOperationsTest::responsesPassThroughStreamCutEndsWithAnErrorEvent()
{
    FakeUpstream chat;
    FakeUpstream native;
    native.mode = FakeUpstream::Mode::Status;
    native.status = 200;
    native.statusContentType = "text/event-stream";
    native.statusBody = nativeStream(false); // ends without response.completed
    auto engine = startEngine(responsesConfig(chat, native));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/responses", R"({"model":"gpt-native","input":"hello","stream":true})");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.events().size(), 3);
    const upstream::SseEvent &last = client.events().last();
    QCOMPARE(last.event, QByteArray("error"));
    const QJsonObject error = jsonOf(last.data);
    QCOMPARE(error.value("sequence_number"_L1).toInt(), 2); // after the provider's own
    QCOMPARE(error.value("code"_L1).toString(), u"upstream_stream_interrupted"_s);
    QVERIFY(error.value("message"_L1).toString().contains("`response.completed`"_L1));
}

void GatewayOperationsTest::previousResponseIdNeedsAProviderThatSpeaksResponses()
{
    FakeUpstream chat;
    FakeUpstream native;
    native.mode = FakeUpstream::Mode::Status;
    native.status = 200;
    native.statusBody = kNativeResponse;
    auto engine = startEngine(responsesConfig(chat, native));
    QVERIFY(engine);

    TestClient translated(engine->port());
    translated.post("/v1/responses",
                    R"({"model":"gpt-test","input":"more","previous_response_id":"resp_1"})");
    QVERIFY(translated.waitForFinished());
    QCOMPARE(translated.status(), 400);
    QCOMPARE(errorOf(translated.body()).value("param"_L1).toString(), u"previous_response_id"_s);
    QCOMPARE(chat.requests().size(), 0);

    TestClient passed(engine->port());
    passed.post("/v1/responses",
                R"({"model":"gpt-native","input":"more","previous_response_id":"resp_1"})");
    QVERIFY(passed.waitForFinished());
    QCOMPARE(passed.status(), 200);
    QCOMPARE(passed.body(), kNativeResponse);
    QCOMPARE(jsonOf(native.requests().first().body).value("previous_response_id"_L1).toString(),
             u"resp_1"_s);
}

void GatewayOperationsTest::responsesDegradeToACannedResponse()
{
    FakeUpstream chat;
    FakeUpstream native;
    chat.mode = FakeUpstream::Mode::Status; // 500
    auto engine = startEngine(responsesConfig(chat, native,
                                              "degradation:\n"
                                              "  fail_safe: We are busy.\n"));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/responses", R"({"model":"gpt-test","input":"hello"})");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-degraded"), QByteArray("3"));
    const QJsonObject response = jsonOf(client.body());
    QCOMPARE(response.value("object"_L1).toString(), u"response"_s);
    QCOMPARE(response.value("output"_L1)
                 .toArray()
                 .at(0)
                 .toObject()
                 .value("content"_L1)
                 .toArray()
                 .at(0)
                 .toObject()
                 .value("text"_L1)
                 .toString(),
             u"We are busy."_s);
}

QTEST_GUILESS_MAIN(GatewayOperationsTest)
#include "tst_gateway_operations.moc"
