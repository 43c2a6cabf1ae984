// The public API on the happy path: what a client sends reaches the provider as sent, and what
// the provider answers reaches the client as answered, with Switchyard's identity headers added.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;

namespace {

bool matches(const QString &pattern, const QByteArray &text)
{
    return QRegularExpression(pattern).match(QString::fromUtf8(text)).hasMatch();
}

} // namespace

class GatewayApiTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void nonStreamedAnswerIsRelayedByteForByte();
    void largeAnswerIsRelayedWhole();
    void requestBodyReachesTheProviderUnchanged();
    void answerCarriesRequestTraceAndProviderHeaders();
    void everyAnswerCarriesIdentityHeaders_data();
    void everyAnswerCarriesIdentityHeaders();
    void providerReceivesTheRequestAndTraceIds();
    void incomingTraceparentTraceIdIsHonoured();
    void clientRequestIdIsEchoed();
    void unsafeClientRequestIdIsReplaced();
    void modelsListsEveryProvidersModelsOnceSorted();
    void healthzAnswersOk();
    void readyzCountsProvidersUp();
    void renamedModelReachesTheProviderUnderItsUpstreamName();
    void configuredApiKeyReachesTheProviderAsBearerToken();
    void providerWithoutApiKeyGetsNoAuthorizationHeader();
    void twoRequestsShareOneKeptAliveConnection();
    void expectContinueIsAnsweredBeforeTheBodyIsSent();
};

void GatewayApiTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayApiTest::nonStreamedAnswerIsRelayedByteForByte()
{
    FakeUpstream fake;
    // Odd spacing, key order and escapes: anything re-serialised on the way would change them.
    fake.completionBody = R"({ "id":"chatcmpl-42",  "object" : "chat.completion", "choices":[)"
                          R"({"index":0,"message":{"role":"assistant","content":"h\u00e9 \"x\""},)"
                          R"("finish_reason":"stop"}], "usage":{"total_tokens":7} })";
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("content-type"), QByteArray("application/json"));
    QCOMPARE(client.body(), fake.completionBody);
}

void GatewayApiTest::largeAnswerIsRelayedWhole()
{
    FakeUpstream fake;
    // Arrives in many reads upstream; must leave in one piece, unchanged.
    fake.completionBody = R"({"id":"big","choices":[{"index":0,"message":{"role":"assistant",)"
                          R"("content":")" +
                          QByteArray(4 * 1024 * 1024, 'z') + R"("},"finish_reason":"stop"}]})";
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished(30000));
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("content-length"), QByteArray::number(fake.completionBody.size()));
    QVERIFY(client.body() == fake.completionBody);
}

void GatewayApiTest::requestBodyReachesTheProviderUnchanged()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());
    const QByteArray body = R"({"messages": [{"role":"user","content":"caf\u00e9"}],)"
                            R"( "model" : "test-model", "temperature":0.25})";

    client.post("/v1/chat/completions", body);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(fake.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &received = fake.requests().constFirst();
    QCOMPARE(received.method, QByteArray("POST"));
    QCOMPARE(received.path, QByteArray("/v1/chat/completions"));
    QCOMPARE(received.header("content-type"), QByteArray("application/json"));
    QCOMPARE(received.body, body);
}

void GatewayApiTest::answerCarriesRequestTraceAndProviderHeaders()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY2(
        matches(QStringLiteral("^req_[0-9a-f]{24}$"), client.header("x-switchyard-request-id")),
        client.header("x-switchyard-request-id").constData());
    QVERIFY2(matches(QStringLiteral("^[0-9a-f]{32}$"), client.header("x-switchyard-trace-id")),
             client.header("x-switchyard-trace-id").constData());
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("primary"));
}

void GatewayApiTest::everyAnswerCarriesIdentityHeaders_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("provider");

    const auto post = [](const QByteArray &body) {
        return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
               QByteArray::number(body.size()) + "\r\n\r\n" + body;
    };
    const auto get = [](const QByteArray &path) {
        return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    };
    QTest::newRow("answer") << post(chatBody("test-model", false)) << 200 << QByteArray("primary");
    QTest::newRow("streamed answer")
        << post(chatBody("test-model", true)) << 200 << QByteArray("primary");
    QTest::newRow("invalid body") << post("{") << 400 << QByteArray("none");
    QTest::newRow("unknown model") << post(chatBody("nope", false)) << 404 << QByteArray("none");
    QTest::newRow("provider error")
        << post(chatBody("failing-model", false)) << 502 << QByteArray("failing");
    QTest::newRow("declared body over the limit")
        << QByteArray("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Content-Length: 1000000000\r\n\r\n")
        << 413 << QByteArray("none");
    QTest::newRow("wrong method") << get("/v1/chat/completions") << 405 << QByteArray("none");
    QTest::newRow("unknown path") << get("/nowhere") << 404 << QByteArray("none");
    QTest::newRow("models") << get("/v1/models") << 200 << QByteArray("none");
    QTest::newRow("healthz") << get("/healthz") << 200 << QByteArray("none");
    QTest::newRow("readyz") << get("/readyz") << 200 << QByteArray("none");
}

void GatewayApiTest::everyAnswerCarriesIdentityHeaders()
{
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QByteArray, provider);
    FakeUpstream fake;
    FakeUpstream failing;
    failing.mode = FakeUpstream::Mode::Status;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")}),
         providerFor(QStringLiteral("failing"), failing, {QStringLiteral("failing-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.sendRaw(request);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    QVERIFY2(
        matches(QStringLiteral("^req_[0-9a-f]{24}$"), client.header("x-switchyard-request-id")),
        client.header("x-switchyard-request-id").constData());
    QVERIFY2(matches(QStringLiteral("^[0-9a-f]{32}$"), client.header("x-switchyard-trace-id")),
             client.header("x-switchyard-trace-id").constData());
    QCOMPARE(client.header("x-switchyard-provider"), provider);
}

void GatewayApiTest::providerReceivesTheRequestAndTraceIds()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(fake.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &received = fake.requests().constFirst();
    QCOMPARE(received.header("x-request-id"), client.header("x-switchyard-request-id"));
    const QByteArray traceparent = received.header("traceparent");
    QVERIFY2(matches(QStringLiteral("^00-[0-9a-f]{32}-[0-9a-f]{16}-01$"), traceparent),
             traceparent.constData());
    QCOMPARE(traceparent.mid(3, 32), client.header("x-switchyard-trace-id"));
}

void GatewayApiTest::incomingTraceparentTraceIdIsHonoured()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());
    const QByteArray traceId = "4bf92f3577b34da6a3ce929d0e0e4736";

    client.post("/v1/chat/completions", chatBody("test-model", false),
                {{"traceparent", "00-" + traceId + "-00f067aa0ba902b7-01"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-trace-id"), traceId);
    QCOMPARE(fake.requests().size(), 1);
    QCOMPARE(fake.requests().constFirst().header("traceparent").mid(3, 32), traceId);
}

void GatewayApiTest::clientRequestIdIsEchoed()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false),
                {{"x-request-id", "client-request-7.a_b:c"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-request-id"), QByteArray("client-request-7.a_b:c"));
    QCOMPARE(fake.requests().size(), 1);
    QCOMPARE(fake.requests().constFirst().header("x-request-id"),
             QByteArray("client-request-7.a_b:c"));
}

void GatewayApiTest::unsafeClientRequestIdIsReplaced()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false),
                {{"x-request-id", "two words;and=more"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY2(
        matches(QStringLiteral("^req_[0-9a-f]{24}$"), client.header("x-switchyard-request-id")),
        client.header("x-switchyard-request-id").constData());
}

void GatewayApiTest::modelsListsEveryProvidersModelsOnceSorted()
{
    FakeUpstream first;
    FakeUpstream second;
    auto engine = startEngine(
        gatewayConfig({providerFor(QStringLiteral("first"), first,
                                   {QStringLiteral("zeta"), QStringLiteral("shared")}),
                       providerFor(QStringLiteral("second"), second,
                                   {QStringLiteral("shared"), QStringLiteral("alpha")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.send("GET", "/v1/models");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("content-type"), QByteArray("application/json"));
    const QJsonObject list = QJsonDocument::fromJson(client.body()).object();
    QCOMPARE(list.value(QStringLiteral("object")).toString(), QStringLiteral("list"));
    const QJsonArray data = list.value(QStringLiteral("data")).toArray();
    QStringList ids;
    QStringList owners;
    for (const QJsonValue &entry : data) {
        const QJsonObject model = entry.toObject();
        QCOMPARE(model.value(QStringLiteral("object")).toString(), QStringLiteral("model"));
        QVERIFY(model.value(QStringLiteral("created")).toInteger() > 0);
        ids.append(model.value(QStringLiteral("id")).toString());
        owners.append(model.value(QStringLiteral("owned_by")).toString());
    }
    QCOMPARE(ids, QStringList(
                      {QStringLiteral("alpha"), QStringLiteral("shared"), QStringLiteral("zeta")}));
    // A model served by several providers belongs to the one listed first in the config.
    QCOMPARE(owners, QStringList({QStringLiteral("second"), QStringLiteral("first"),
                                  QStringLiteral("first")}));
    QVERIFY(first.requests().isEmpty());
    QVERIFY(second.requests().isEmpty());
}

void GatewayApiTest::healthzAnswersOk()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.send("GET", "/healthz");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.body(), QByteArray(R"({"status":"ok"})"));
    QVERIFY(!client.header("x-switchyard-request-id").isEmpty());
}

void GatewayApiTest::readyzCountsProvidersUp()
{
    FakeUpstream first;
    FakeUpstream second;
    auto engine = startEngine(
        gatewayConfig({providerFor(QStringLiteral("first"), first, {QStringLiteral("a")}),
                       providerFor(QStringLiteral("second"), second, {QStringLiteral("b")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.send("GET", "/readyz");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QJsonObject ready = QJsonDocument::fromJson(client.body()).object();
    QCOMPARE(ready.value(QStringLiteral("status")).toString(), QStringLiteral("ready"));
    QCOMPARE(ready.value(QStringLiteral("providers_up")).toInt(), 2);
    QCOMPARE(ready.value(QStringLiteral("providers")).toInt(), 2);
}

void GatewayApiTest::renamedModelReachesTheProviderUnderItsUpstreamName()
{
    FakeUpstream fake;
    config::ProviderConfig provider = providerFor(QStringLiteral("primary"), fake, {});
    provider.models = {config::ModelRoute{QStringLiteral("public-name"),
                                          QStringLiteral("vendor/upstream-\"name\"")}};
    auto engine = startEngine(gatewayConfig({provider}));
    QVERIFY(engine);
    TestClient client(engine->port());
    const QByteArray body = R"({"temperature":0.5, "model" :  "public-name" ,"messages":)"
                            R"([{"role":"user","content":"the model is public-name"}]})";

    client.post("/v1/chat/completions", body);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(fake.requests().size(), 1);
    QByteArray expected = body;
    expected.replace(R"("public-name" ,)", R"("vendor/upstream-\"name\"" ,)");
    QCOMPARE(fake.requests().constFirst().body, expected);
}

void GatewayApiTest::configuredApiKeyReachesTheProviderAsBearerToken()
{
    FakeUpstream fake;
    config::ProviderConfig provider =
        providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")});
    provider.apiKey = "sk-test-0123456789";
    auto engine = startEngine(gatewayConfig({provider}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false),
                {{"Authorization", "Bearer client-key-never-forwarded"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(fake.requests().size(), 1);
    QCOMPARE(fake.requests().constFirst().header("authorization"),
             QByteArray("Bearer sk-test-0123456789"));
}

void GatewayApiTest::providerWithoutApiKeyGetsNoAuthorizationHeader()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false),
                {{"Authorization", "Bearer client-key-never-forwarded"}});

    QVERIFY(client.waitForFinished());
    QCOMPARE(fake.requests().size(), 1);
    for (const auto &[name, value] : fake.requests().constFirst().headers)
        QVERIFY2(name != "authorization", value.constData());
}

void GatewayApiTest::twoRequestsShareOneKeptAliveConnection()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false, "first"));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QByteArray firstRequestId = client.header("x-switchyard-request-id");

    client.post("/v1/chat/completions", chatBody("test-model", true, "second"));
    QVERIFY(client.waitForFinished());

    QCOMPARE(client.status(), 200);
    QVERIFY(!client.connectionClosed());
    QVERIFY(!client.events().isEmpty());
    QCOMPARE(client.events().constLast().data, QByteArray("[DONE]"));
    QVERIFY(client.header("x-switchyard-request-id") != firstRequestId);
    QCOMPARE(fake.requests().size(), 2);
    QVERIFY(fake.requests().at(0).body.contains("first"));
    QVERIFY(fake.requests().at(1).body.contains("second"));
}

void GatewayApiTest::expectContinueIsAnsweredBeforeTheBodyIsSent()
{
    FakeUpstream fake;
    auto engine = startEngine(gatewayConfig(
        {providerFor(QStringLiteral("primary"), fake, {QStringLiteral("test-model")})}));
    QVERIFY(engine);
    TestClient client(engine->port());
    const QByteArray body = chatBody("test-model", false);

    client.sendRaw(rawChatHead(body.size(), "Expect: 100-continue\r\n"));
    QTRY_COMPARE_WITH_TIMEOUT(client.interimStatuses(), QList<int>({100}), 5000);
    QVERIFY(!client.headReceived());
    client.sendMore(body);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(fake.requests().size(), 1);
    QCOMPARE(fake.requests().constFirst().body, body);
}

QTEST_GUILESS_MAIN(GatewayApiTest)
#include "tst_gateway_api.moc"
