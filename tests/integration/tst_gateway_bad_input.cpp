// Requests the gateway must refuse: each gets the exact OpenAI-shaped error a client would show,
// never reaches a provider, and leaves the gateway serving the next request as before.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QLoggingCategory>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;

namespace {

constexpr qint64 kSmallBodyLimit = 1024;

// The JSON value of error.param or error.code: null when the expected text is empty.
QJsonValue nullable(const QString &text)
{
    return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text);
}

} // namespace

class GatewayBadInputTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void invalidChatBodyIsRefusedWithOpenAiError_data();
    void invalidChatBodyIsRefusedWithOpenAiError();
    void unknownModelIsNotFound();
    void wrongMethodIsNotAllowed_data();
    void wrongMethodIsNotAllowed();
    void unknownPathIsNotFound();
    void declaredBodyOverTheLimitIsRefusedBeforeItIsSent();
    void bodyOverTheLimitIsRefusedAndTheGatewayServesOn();
    void bodyAtTheLimitIsAccepted();
    void chunkedBodyOverTheLimitIsRefused();
    void chunkedBodyIsRefusedWhileItArrives();
    void chunkedBodyWithinTheLimitKeepsTheConnectionInStep();
    void invalidContentLengthIsRefused();
    void malformedRequestHeadsAreRefused_data();
    void malformedRequestHeadsAreRefused();
    void percentEncodedPathsAreDecoded();
    void bareLineFeedsDoNotBypassTheLimit();
    void oversizeHeadersAreRefused();

private:
    // After any refusal the gateway still answers a good request, on a fresh connection.
    void verifyGatewayStillServes();

    std::unique_ptr<FakeUpstream> m_fake;
    std::unique_ptr<Engine> m_engine;
};

void GatewayBadInputTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayBadInputTest::init()
{
    m_fake = std::make_unique<FakeUpstream>();
    config::Config config = gatewayConfig(
        {providerFor(QStringLiteral("primary"), *m_fake, {QStringLiteral("test-model")})});
    config.server.maxBodyBytes = kSmallBodyLimit;
    m_engine = startEngine(config);
    QVERIFY(m_engine);
}

void GatewayBadInputTest::cleanup()
{
    m_engine.reset();
    m_fake.reset();
}

void GatewayBadInputTest::verifyGatewayStillServes()
{
    TestClient client(m_engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(m_engine->inFlight(), 0);
    QCOMPARE(healthInFlight(*m_engine), 0);
}

void GatewayBadInputTest::invalidChatBodyIsRefusedWithOpenAiError_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("param");
    QTest::addColumn<QString>("message");

    QTest::newRow("malformed JSON")
        << QByteArray(R"({"model":"test-model","messages":[)") << QString()
        << QStringLiteral("We could not parse the JSON body of your request (The JSON document "
                          "has an improper structure: missing or superfluous commas, braces, "
                          "missing keys, etc.). The body must be a JSON object.");
    QTest::newRow("empty body")
        << QByteArray() << QString()
        << QStringLiteral("We could not parse the JSON body of your request (Empty: no JSON "
                          "found). The body must be a JSON object.");
    QTest::newRow("body is an array")
        << QByteArray(R"([{"model":"test-model"}])") << QString()
        << QStringLiteral("The request body must be a JSON object, but got an array.");
    QTest::newRow("body is a string")
        << QByteArray(R"("hello")") << QString()
        << QStringLiteral("The request body must be a JSON object, but got a string.");
    QTest::newRow("model missing")
        << QByteArray(R"({"messages":[{"role":"user","content":"hi"}]})") << QStringLiteral("model")
        << QStringLiteral("Missing required parameter: 'model'.");
    QTest::newRow("model not a string")
        << QByteArray(R"({"model":42,"messages":[{"role":"user","content":"hi"}]})")
        << QStringLiteral("model")
        << QStringLiteral(
               "Invalid type for 'model': expected a string, but got an integer instead.");
    QTest::newRow("model empty")
        << QByteArray(R"({"model":"","messages":[{"role":"user","content":"hi"}]})")
        << QStringLiteral("model")
        << QStringLiteral("Invalid value for 'model': it must not be empty.");
    QTest::newRow("messages missing")
        << QByteArray(R"({"model":"test-model"})") << QStringLiteral("messages")
        << QStringLiteral("Missing required parameter: 'messages'.");
    QTest::newRow("messages not an array")
        << QByteArray(R"({"model":"test-model","messages":{"role":"user"}})")
        << QStringLiteral("messages")
        << QStringLiteral(
               "Invalid type for 'messages': expected an array, but got an object instead.");
    QTest::newRow("messages empty")
        << QByteArray(R"({"model":"test-model","messages":[]})") << QStringLiteral("messages")
        << QStringLiteral("Invalid 'messages': empty array. Expected an array with minimum "
                          "length 1, but got an empty array instead.");
    QTest::newRow("message not an object")
        << QByteArray(R"({"model":"test-model","messages":["hi"]})")
        << QStringLiteral("messages[0]")
        << QStringLiteral(
               "Invalid type for 'messages[0]': expected an object, but got a string instead.");
    QTest::newRow("role missing")
        << QByteArray(
               R"({"model":"test-model","messages":[{"role":"user","content":"a"},{"content":"b"}]})")
        << QStringLiteral("messages[1].role")
        << QStringLiteral("Missing required parameter: 'messages[1].role'.");
    QTest::newRow("content a number")
        << QByteArray(R"({"model":"test-model","messages":[{"role":"user","content":1.5}]})")
        << QStringLiteral("messages[0].content")
        << QStringLiteral("Invalid type for 'messages[0].content': expected one of a string or "
                          "an array, but got a number instead.");
    QTest::newRow("stream not a boolean")
        << QByteArray(
               R"({"model":"test-model","stream":"yes","messages":[{"role":"user","content":"hi"}]})")
        << QStringLiteral("stream")
        << QStringLiteral(
               "Invalid type for 'stream': expected a boolean, but got a string instead.");
}

void GatewayBadInputTest::invalidChatBodyIsRefusedWithOpenAiError()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, param);
    QFETCH(QString, message);
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", body);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 400);
    QCOMPARE(client.header("content-type"), QByteArray("application/json"));
    QVERIFY(!client.header("x-switchyard-request-id").isEmpty());
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("none"));
    // Refused before routing: the chat headers say nothing was routed or tried.
    QCOMPARE(client.header("x-switchyard-route"), QByteArray("none"));
    QCOMPARE(client.header("x-switchyard-tier"), QByteArray("none"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("0"));
    QCOMPARE(client.header("x-switchyard-degraded"), QByteArray("0"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(),
             QStringLiteral("invalid_request_error"));
    QCOMPARE(error.value(QStringLiteral("param")), nullable(param));
    QCOMPARE(error.value(QStringLiteral("code")), QJsonValue(QJsonValue::Null));
    QCOMPARE(error.value(QStringLiteral("message")).toString(), message);
    QVERIFY(m_fake->requests().isEmpty());

    // The same connection stays usable after a refusal.
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    verifyGatewayStillServes();
}

void GatewayBadInputTest::unknownModelIsNotFound()
{
    TestClient client(m_engine->port());

    client.post("/v1/chat/completions", chatBody("no-such-model", false));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 404);
    QCOMPARE(client.header("x-switchyard-route"), QByteArray("none"));
    QCOMPARE(client.header("x-switchyard-attempts"), QByteArray("0"));
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(),
             QStringLiteral("invalid_request_error"));
    QCOMPARE(error.value(QStringLiteral("param")).toString(), QStringLiteral("model"));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("model_not_found"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("The model `no-such-model` does not exist or is not served by any "
                            "configured provider. GET /v1/models lists the models available."));
    QVERIFY(m_fake->requests().isEmpty());
    verifyGatewayStillServes();
}

void GatewayBadInputTest::wrongMethodIsNotAllowed_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("allow");

    QTest::newRow("GET chat completions")
        << QByteArray("GET") << QByteArray("/v1/chat/completions") << QByteArray("POST");
    QTest::newRow("DELETE chat completions")
        << QByteArray("DELETE") << QByteArray("/v1/chat/completions") << QByteArray("POST");
    QTest::newRow("POST models") << QByteArray("POST") << QByteArray("/v1/models")
                                 << QByteArray("GET");
    QTest::newRow("PUT healthz") << QByteArray("PUT") << QByteArray("/healthz")
                                 << QByteArray("GET");
}

void GatewayBadInputTest::wrongMethodIsNotAllowed()
{
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, allow);
    TestClient client(m_engine->port());

    client.send(method, path);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 405);
    QCOMPARE(client.header("allow"), allow);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(),
             QStringLiteral("invalid_request_error"));
    QCOMPARE(error.value(QStringLiteral("param")), QJsonValue(QJsonValue::Null));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("method_not_allowed"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Method %1 is not allowed on %2.")
                 .arg(QString::fromLatin1(method), QString::fromLatin1(path)));
    verifyGatewayStillServes();
}

void GatewayBadInputTest::unknownPathIsNotFound()
{
    TestClient client(m_engine->port());

    client.send("GET", "/v1/engines");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 404);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(),
             QStringLiteral("invalid_request_error"));
    QCOMPARE(error.value(QStringLiteral("param")), QJsonValue(QJsonValue::Null));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("unknown_url"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Unknown request URL: GET /v1/engines."));
    verifyGatewayStillServes();
}

void GatewayBadInputTest::declaredBodyOverTheLimitIsRefusedBeforeItIsSent()
{
    TestClient client(m_engine->port());

    // Only the head: the answer must come from the declared length alone.
    client.sendRaw("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/json\r\nContent-Length: 50000000\r\n\r\n");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 413);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("type")).toString(),
             QStringLiteral("invalid_request_error"));
    QCOMPARE(error.value(QStringLiteral("param")), QJsonValue(QJsonValue::Null));
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("request_too_large"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Request body is larger than the limit of 1024 bytes."));
    QTRY_VERIFY_WITH_TIMEOUT(client.connectionClosed(), 5000);
    QVERIFY(m_fake->requests().isEmpty());
    verifyGatewayStillServes();
}

void GatewayBadInputTest::bodyOverTheLimitIsRefusedAndTheGatewayServesOn()
{
    TestClient client(m_engine->port());
    const QByteArray padding(kSmallBodyLimit, 'x');

    client.post("/v1/chat/completions", chatBody("test-model", false, padding));

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 413);
    QCOMPARE(errorOf(client.body()).value(QStringLiteral("code")).toString(),
             QStringLiteral("request_too_large"));
    QVERIFY(m_fake->requests().isEmpty());
    verifyGatewayStillServes();
}

void GatewayBadInputTest::bodyAtTheLimitIsAccepted()
{
    TestClient client(m_engine->port());
    const QByteArray shortBody = chatBody("test-model", false, {});
    const QByteArray body =
        chatBody("test-model", false, QByteArray(kSmallBodyLimit - shortBody.size(), 'x'));
    QCOMPARE(body.size(), kSmallBodyLimit);

    client.post("/v1/chat/completions", body);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(m_fake->requests().size(), 1);
    QCOMPARE(m_fake->requests().constFirst().body, body);
}

void GatewayBadInputTest::chunkedBodyOverTheLimitIsRefused()
{
    TestClient client(m_engine->port());
    const QByteArray body = chatBody("test-model", false, QByteArray(kSmallBodyLimit, 'x'));

    // No declared length to refuse up front: the decoded body is measured instead.
    client.sendRaw("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                   QByteArray::number(body.size(), 16) + "\r\n" + body + "\r\n0\r\n\r\n");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 413);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("request_too_large"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Request body is larger than the limit of 1024 bytes."));
    QVERIFY(m_fake->requests().isEmpty());
    verifyGatewayStillServes();
}

void GatewayBadInputTest::chunkedBodyIsRefusedWhileItArrives()
{
    TestClient client(m_engine->port());

    // The body never ends: only a guard that counts chunks as they arrive can answer at all.
    const QByteArray firstChunk(kSmallBodyLimit + 1, 'x');
    client.sendRaw("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                   QByteArray::number(firstChunk.size(), 16) + "\r\n" + firstChunk + "\r\n");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 413);
    QCOMPARE(errorOf(client.body()).value(QStringLiteral("code")).toString(),
             QStringLiteral("request_too_large"));
    QVERIFY(m_fake->requests().isEmpty());
    verifyGatewayStillServes();
}

void GatewayBadInputTest::chunkedBodyWithinTheLimitKeepsTheConnectionInStep()
{
    TestClient client(m_engine->port());
    const QByteArray body = chatBody("test-model", false);
    const QByteArray half = body.left(body.size() / 2);
    const QByteArray rest = body.mid(body.size() / 2);

    client.sendRaw("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                   QByteArray::number(half.size(), 16) + "\r\n" + half + "\r\n" +
                   QByteArray::number(rest.size(), 16) + "\r\n" + rest + "\r\n0\r\n\r\n");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(m_fake->requests().constLast().body, body);

    // The guard must have found the end of the chunked body: a large declared length on the
    // same connection is still refused from its headers.
    client.sendRaw("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " +
                   QByteArray::number(kSmallBodyLimit + 1) + "\r\n\r\n");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 413);
}

void GatewayBadInputTest::invalidContentLengthIsRefused()
{
    TestClient client(m_engine->port());

    client.sendRaw("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   "Content-Length: abc\r\n\r\n");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 400);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(),
             QStringLiteral("invalid_content_length"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Invalid Content-Length header: it must be a non-negative number of "
                            "bytes."));
    verifyGatewayStillServes();
}

void GatewayBadInputTest::malformedRequestHeadsAreRefused_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::newRow("no target") << QByteArray("GET HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") << 400
                               << QStringLiteral("invalid_request_line");
    QTest::newRow("HTTP/2 without upgrade") << QByteArray("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") << 505
                                            << QStringLiteral("http_version_not_supported");
    QTest::newRow("space before the colon")
        << QByteArray("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Content-Length : 5\r\n\r\nhello")
        << 400 << QStringLiteral("invalid_header");
}

void GatewayBadInputTest::malformedRequestHeadsAreRefused()
{
    QFETCH(QByteArray, head);
    QFETCH(int, status);
    QFETCH(QString, code);
    TestClient client(m_engine->port());

    client.sendRaw(head);

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), status);
    QCOMPARE(errorOf(client.body()).value(QStringLiteral("code")).toString(), code);
    QTRY_VERIFY_WITH_TIMEOUT(client.connectionClosed(), 5000); // nothing after it is read
    verifyGatewayStillServes();
}

void GatewayBadInputTest::percentEncodedPathsAreDecoded()
{
    TestClient client(m_engine->port());

    client.send("GET", "/v1/%6Dodels"); // "/v1/models", one letter encoded

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(client.body().contains("\"object\":\"list\""));
}

void GatewayBadInputTest::bareLineFeedsDoNotBypassTheLimit()
{
    TestClient client(m_engine->port());

    // Qt's parser accepts LF-only line ends; the guard must find this header block's end too.
    client.sendRaw("POST /v1/chat/completions HTTP/1.1\nHost: 127.0.0.1\nContent-Length: " +
                   QByteArray::number(kSmallBodyLimit * 50) + "\n\n");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 413);
    QCOMPARE(errorOf(client.body()).value(QStringLiteral("code")).toString(),
             QStringLiteral("request_too_large"));
    verifyGatewayStillServes();
}

void GatewayBadInputTest::oversizeHeadersAreRefused()
{
    TestClient client(m_engine->port());
    const QByteArray padding = "X-Padding: " + QByteArray(40 * 1024, 'h') + "\r\n";

    // Over 64 KiB of headers in two writes, then a body far over the limit.
    client.sendRaw("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n" + padding);
    QTest::qWait(20);
    client.sendRaw(padding + "Content-Length: " + QByteArray::number(kSmallBodyLimit * 50) +
                   "\r\n\r\n");

    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 431);
    const QJsonObject error = errorOf(client.body());
    QCOMPARE(error.value(QStringLiteral("code")).toString(), QStringLiteral("headers_too_large"));
    QCOMPARE(error.value(QStringLiteral("message")).toString(),
             QStringLiteral("Request headers are larger than the limit of 65536 bytes."));
    QVERIFY(m_fake->requests().isEmpty());
    verifyGatewayStillServes();
}

QTEST_GUILESS_MAIN(GatewayBadInputTest)
#include "tst_gateway_bad_input.moc"
