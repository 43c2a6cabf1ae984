// Client API keys, tenants, the admin token and TLS, through the real server: real requests on a
// loopback port (and on a non-loopback one when the machine has one) against fake providers that
// record every header they receive.

#include "auth/credentials.h"
#include "config/config_store.h"
#include "control/operator_commands.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/request_recorder.h"
#include "telemetry/trace.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QNetworkInterface>
#include <QProcess>
#include <QRegularExpression>
#include <QSslSocket>
#include <QTemporaryDir>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using namespace switchyard::testing;

namespace {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

constexpr QByteArrayView kKeyA = "sk-test-team-a";
constexpr QByteArrayView kKeyB = "sk-test-team-b";
constexpr QByteArrayView kAdminToken = "admin-secret-token";
const QByteArray kMessagesBody =
    R"({"model":"test-model","max_tokens":16,"messages":[{"role":"user","content":"hi"}]})";

QByteArray digestText(QByteArrayView key)
{
    return "sha256:" + auth::sha256(key).toHex();
}

// The fake as the config's only provider, with `providerExtra` lines in its entry and `tail`
// after the provider list.
config::Config configFor(const FakeUpstream &fake, const QByteArray &tail,
                         const QByteArray &providerExtra = {},
                         const config::EnvironmentLookup &environment = {})
{
    config::Config config = loadTestConfig("listen: 127.0.0.1:0\n"
                                           "providers:\n"
                                           "  - id: fake\n"
                                           "    kind: openai\n"
                                           "    base_url: " +
                                               fake.baseUrl() +
                                               "\n"
                                               "    models: [test-model, other-model]\n" +
                                               providerExtra + tail,
                                           u"keys.yaml"_s, environment);
    config.resilience.probes.enabled = false;
    return config;
}

// Two file keys: team-a (2 requests a minute, test-model only) and team-b (no limits).
QByteArray twoKeys(const QByteArray &extraForA = {})
{
    return "auth:\n"
           "  keys:\n"
           "    - id: key-a\n"
           "      tenant: team-a\n"
           "      key: " +
           digestText(kKeyA) + "\n" + extraForA +
           "    - id: key-b\n"
           "      tenant: team-b\n"
           "      key: " +
           digestText(kKeyB) + "\n";
}

HeaderList bearer(QByteArrayView token)
{
    return {{"Authorization", "Bearer " + token.toByteArray()}};
}

QJsonObject jsonOf(const TestClient &client)
{
    return QJsonDocument::fromJson(client.body()).object();
}

// GET with `headers`; the whole answer.
std::unique_ptr<TestClient> get(quint16 port, const QByteArray &path,
                                const HeaderList &headers = {})
{
    auto client = std::make_unique<TestClient>(port);
    client->send("GET", path, {}, headers);
    client->waitForFinished();
    return client;
}

std::unique_ptr<TestClient> chat(quint16 port, const HeaderList &headers,
                                 const QByteArray &model = "test-model")
{
    auto client = std::make_unique<TestClient>(port);
    client->post("/v1/chat/completions", chatBody(model, false), headers);
    client->waitForFinished();
    return client;
}

// The newest finished request's record, once nothing is running.
telemetry::Trace newestTrace(Engine &engine)
{
    if (!QTest::qWaitFor([&] { return engine.recorder().liveCount() == 0; }, 5000))
        return {};
    const QList<telemetry::Trace> newest = engine.traces().latest(1);
    return newest.isEmpty() ? telemetry::Trace{} : newest.first();
}

// A self-signed certificate for 127.0.0.1 and its key, made with the openssl command.
bool makeCertificate(const QString &directory, const QString &name)
{
    QProcess openssl;
    openssl.start(u"openssl"_s, {u"req"_s, u"-x509"_s, u"-newkey"_s, u"rsa:2048"_s, u"-nodes"_s,
                                 u"-days"_s, u"2"_s, u"-subj"_s, u"/CN=%1"_s.arg(name),
                                 u"-addext"_s, u"subjectAltName=IP:127.0.0.1"_s, u"-keyout"_s,
                                 directory + u"/%1.key"_s.arg(name), u"-out"_s,
                                 directory + u"/%1.pem"_s.arg(name)});
    return openssl.waitForFinished(60000) && openssl.exitStatus() == QProcess::NormalExit &&
           openssl.exitCode() == 0;
}

struct HttpsAnswer {
    QByteArray head;           // the status line and headers, or empty when none came
    QSslCertificate presented; // what the server showed in its handshake
    QString error;
};

// Whether `received` holds a whole answer: its head and as many body bytes as it declares.
bool wholeAnswer(const QByteArray &received)
{
    const qsizetype headEnd = received.indexOf("\r\n\r\n");
    if (headEnd < 0)
        return false;
    const QByteArray head = received.left(headEnd).toLower();
    const qsizetype length = head.indexOf("content-length:");
    if (length < 0)
        return true;
    const qsizetype lineEnd = head.indexOf("\r\n", length);
    const qint64 bodyBytes =
        head.mid(length + 15, lineEnd < 0 ? -1 : lineEnd - length - 15).trimmed().toLongLong();
    return received.size() - headEnd - 4 >= bodyBytes;
}

// Reads `socket` until a whole answer is in, spinning the event loop: the engine answering lives
// on this thread.
QByteArray readAnswer(QAbstractSocket &socket)
{
    QByteArray received;
    const QMetaObject::Connection reading =
        QObject::connect(&socket, &QIODevice::readyRead, [&] { received += socket.readAll(); });
    (void)QTest::qWaitFor(
        [&] {
            return wholeAnswer(received) || socket.state() == QAbstractSocket::UnconnectedState;
        },
        10000);
    QObject::disconnect(reading);
    return received + socket.readAll();
}

// One request over TLS, trusting `trusted` only and checking the server is 127.0.0.1.
HttpsAnswer httpsGet(quint16 port, const QSslCertificate &trusted, const QByteArray &path)
{
    HttpsAnswer answer;
    QSslSocket socket;
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setCaCertificates({trusted});
    socket.setSslConfiguration(configuration);
    QObject::connect(&socket, &QSslSocket::sslErrors, [&](const QList<QSslError> &errors) {
        answer.error = errors.first().errorString();
    });
    socket.connectToHostEncrypted(u"127.0.0.1"_s, port);
    if (!QTest::qWaitFor(
            [&] {
                return socket.isEncrypted() || !answer.error.isEmpty() ||
                       socket.state() == QAbstractSocket::UnconnectedState;
            },
            10000) ||
        !socket.isEncrypted()) {
        if (answer.error.isEmpty())
            answer.error = socket.errorString();
        return answer;
    }
    answer.presented = socket.peerCertificate();
    socket.write("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    const QByteArray received = readAnswer(socket);
    answer.head = received.left(received.indexOf("\r\n\r\n"));
    return answer;
}

// One plain HTTP request to `host`, the whole answer.
QByteArray plainExchange(const QHostAddress &host, quint16 port, const QByteArray &request)
{
    QTcpSocket socket;
    socket.connectToHost(host, port);
    socket.write(request);
    return readAnswer(socket);
}

} // namespace

class GatewayKeysTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void withoutKeysTheGatewayStaysOpen();
    void requiredKeysStayRequiredWhenTheLastIsRevoked_data();
    void requiredKeysStayRequiredWhenTheLastIsRevoked();
    void aRequestWithoutAValidKeyGets401InOpenAisShape_data();
    void aRequestWithoutAValidKeyGets401InOpenAisShape();
    void messagesAnswer401InAnthropicsShape();
    void aValidKeyIsTakenFromBearerOrXApiKey_data();
    void aValidKeyIsTakenFromBearerOrXApiKey();
    void theTenantComesFromTheKey();
    void requestsPerMinuteOverTheLimitGet429();
    void aRequestRefusedAfterTheKeyCheckCostsTheKeyNothing();
    void tokensPerMinuteOverTheLimitGet429();
    void modelsOutsideTheKeysListGet403();
    void keysCreatedThroughTheAdminApiSurviveARestart();
    void fileKeysCannotBeRevokedThroughTheApi();
    void patchRefusesWhatPostRefusesInItsWords_data();
    void patchRefusesWhatPostRefusesInItsWords();
    void patchOfAnUnknownKeyIs404AndOfAFileKey409();
    void patchedLimitsApplyFromTheNextRequestAndSurviveARestart();
    void aDamagedKeyStoreRefusesAllButFileKeys();
    void clientCredentialsNeverReachAProvider();
    void aProviderMayOptInToTheClientsCredentials();
    void theSwitchyardKeyIsNeverForwarded();
    void adminApiAndMetricsNeedTheTokenWhenOneIsConfigured();
    void offLoopbackTheAdminApiNeedsTheToken();
    void theListenerSpeaksTlsAndTakesANewCertificateWithTheConfig();
};

void GatewayKeysTest::withoutKeysTheGatewayStaysOpen()
{
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, {}));
    QVERIFY(engine);

    const auto answer = chat(engine->port(), {{"x-switchyard-tenant", "anyone"}});

    QCOMPARE(answer->status(), 200);
    QCOMPARE(newestTrace(*engine).tenant, u"anyone"_s);
    QCOMPARE(newestTrace(*engine).keyId, QString());
}

void GatewayKeysTest::requiredKeysStayRequiredWhenTheLastIsRevoked_data()
{
    QTest::addColumn<bool>("required");
    QTest::newRow("auth.required: true") << true;
    QTest::newRow("by default") << false;
}

void GatewayKeysTest::requiredKeysStayRequiredWhenTheLastIsRevoked()
{
    QFETCH(bool, required);
    QTemporaryDir state;
    QVERIFY(state.isValid());
    FakeUpstream fake;
    config::Config config =
        configFor(fake, required ? QByteArray("auth:\n  required: true\n") : QByteArray());
    QCOMPARE(config.auth.required, required);
    config.state.directory = state.path();
    const std::unique_ptr<Engine> engine = startEngine(config);
    QVERIFY(engine);
    // No key exists yet: a required gateway refuses, the default one is open.
    QCOMPARE(chat(engine->port(), {})->status(), required ? 401 : 200);

    TestClient create(engine->port());
    create.post("/admin/v1/keys", R"({"tenant":"team-c","id":"only-bot"})");
    QVERIFY(create.waitForFinished());
    QCOMPARE(create.status(), 201);
    QCOMPARE(chat(engine->port(), {})->status(), 401);
    TestClient revoke(engine->port());
    revoke.send("DELETE", "/admin/v1/keys/only-bot");
    QVERIFY(revoke.waitForFinished());
    QCOMPARE(revoke.status(), 200);
    // The last key gone: required stays locked; the default opens again, as documented.
    QCOMPARE(chat(engine->port(), {})->status(), required ? 401 : 200);
}

void GatewayKeysTest::aRequestWithoutAValidKeyGets401InOpenAisShape_data()
{
    QTest::addColumn<HeaderList>("headers");
    QTest::addColumn<QString>("code");

    QTest::newRow("no key") << HeaderList{} << u"missing_api_key"_s;
    QTest::newRow("wrong bearer") << bearer("sk-wrong") << u"invalid_api_key"_s;
    QTest::newRow("wrong x-api-key")
        << HeaderList{{"x-api-key", "sk-wrong"}} << u"invalid_api_key"_s;
    QTest::newRow("basic, not bearer")
        << HeaderList{{"Authorization", "Basic c2stdGVzdA=="}} << u"missing_api_key"_s;
}

void GatewayKeysTest::aRequestWithoutAValidKeyGets401InOpenAisShape()
{
    QFETCH(HeaderList, headers);
    QFETCH(QString, code);
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, twoKeys()));
    QVERIFY(engine);

    const auto answer = chat(engine->port(), headers);

    QCOMPARE(answer->status(), 401);
    const QJsonObject error = errorOf(answer->body());
    QCOMPARE(error.value(u"type"_s).toString(), u"invalid_request_error"_s);
    QCOMPARE(error.value(u"code"_s).toString(), code);
    QVERIFY(error.value(u"message"_s).toString().contains(u"API key"_s));
    QVERIFY(fake.requests().isEmpty());
    // The model list is behind the key too.
    QCOMPARE(get(engine->port(), "/v1/models", headers)->status(), 401);
}

void GatewayKeysTest::messagesAnswer401InAnthropicsShape()
{
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, twoKeys()));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/messages", kMessagesBody, {{"x-api-key", "sk-wrong"}});
    QVERIFY(client.waitForFinished());

    QCOMPARE(client.status(), 401);
    const QJsonObject body = jsonOf(client);
    QCOMPARE(body.value(u"type"_s).toString(), u"error"_s);
    QCOMPARE(body.value(u"error"_s).toObject().value(u"type"_s).toString(),
             u"authentication_error"_s);
    QVERIFY(body.value(u"error"_s)
                .toObject()
                .value(u"message"_s)
                .toString()
                .startsWith(u"Incorrect API key provided."_s));

    TestClient allowed(engine->port());
    allowed.post("/v1/messages", kMessagesBody, {{"x-api-key", kKeyA.toByteArray()}});
    QVERIFY(allowed.waitForFinished());
    QCOMPARE(allowed.status(), 200);
}

void GatewayKeysTest::aValidKeyIsTakenFromBearerOrXApiKey_data()
{
    QTest::addColumn<HeaderList>("headers");
    QTest::newRow("Authorization: Bearer") << bearer(kKeyA);
    QTest::newRow("x-api-key") << HeaderList{{"x-api-key", kKeyA.toByteArray()}};
}

void GatewayKeysTest::aValidKeyIsTakenFromBearerOrXApiKey()
{
    QFETCH(HeaderList, headers);
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, twoKeys()));
    QVERIFY(engine);

    const auto answer = chat(engine->port(), headers);

    QCOMPARE(answer->status(), 200);
    QCOMPARE(get(engine->port(), "/v1/models", headers)->status(), 200);
    // The trace names the key, in the admin API's JSON too.
    const QByteArray requestId = answer->header("x-switchyard-request-id");
    const auto trace = get(engine->port(), "/admin/v1/traces/" + requestId);
    QCOMPARE(trace->status(), 200);
    QCOMPARE(jsonOf(*trace).value(u"key_id"_s).toString(), u"key-a"_s);
    QCOMPARE(jsonOf(*trace).value(u"tenant"_s).toString(), u"team-a"_s);
}

void GatewayKeysTest::theTenantComesFromTheKey()
{
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, twoKeys()));
    QVERIFY(engine);

    const auto withoutHeader = chat(engine->port(), bearer(kKeyB));
    QCOMPARE(withoutHeader->status(), 200);
    QCOMPARE(newestTrace(*engine).tenant, u"team-b"_s);

    HeaderList sameTenant = bearer(kKeyB);
    sameTenant.append({QByteArray("x-switchyard-tenant"), QByteArray("team-b")});
    QCOMPARE(chat(engine->port(), sameTenant)->status(), 200);

    HeaderList otherTenant = bearer(kKeyB);
    otherTenant.append({QByteArray("x-switchyard-tenant"), QByteArray("team-a")});
    const auto refused = chat(engine->port(), otherTenant);
    QCOMPARE(refused->status(), 403);
    const QJsonObject error = errorOf(refused->body());
    QCOMPARE(error.value(u"type"_s).toString(), u"permission_error"_s);
    QCOMPARE(error.value(u"code"_s).toString(), u"tenant_mismatch"_s);
    QCOMPARE(error.value(u"param"_s).toString(), u"x-switchyard-tenant"_s);
    QCOMPARE(fake.requests().size(), 2);
}

void GatewayKeysTest::requestsPerMinuteOverTheLimitGet429()
{
    // The refill is one request a minute, so however slow the machine the second request finds
    // the bucket empty (the per-key bucket's arithmetic is tested on a manual clock in
    // tst_client_keys).
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine =
        startEngine(configFor(fake, twoKeys("      requests_per_minute: 1\n")));
    QVERIFY(engine);

    QCOMPARE(chat(engine->port(), bearer(kKeyA))->status(), 200);
    const auto refused = chat(engine->port(), bearer(kKeyA));

    QCOMPARE(refused->status(), 429);
    QCOMPARE(errorOf(refused->body()).value(u"code"_s).toString(),
             u"key_requests_per_minute_exceeded"_s);
    QVERIFY(errorOf(refused->body())
                .value(u"message"_s)
                .toString()
                .startsWith(u"API key `key-a` has sent its 1 requests per minute "
                            u"(`requests_per_minute`); retry in "_s));
    const int retryAfter = refused->header("retry-after").toInt();
    QVERIFY2(retryAfter > 50 && retryAfter <= 60, refused->header("retry-after").constData());
    // The other key has its own allowance.
    QCOMPARE(chat(engine->port(), bearer(kKeyB))->status(), 200);
}

void GatewayKeysTest::aRequestRefusedAfterTheKeyCheckCostsTheKeyNothing()
{
    // The key allows 2 a minute, its tenant 1: after the first, the tenant's limit refuses, and
    // those refusals must not spend the key's second request.
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine =
        startEngine(configFor(fake, twoKeys("      requests_per_minute: 2\n") +
                                        "admission:\n"
                                        "  tenants:\n"
                                        "    team-a: {requests_per_minute: 1}\n"));
    QVERIFY(engine);

    QCOMPARE(chat(engine->port(), bearer(kKeyA))->status(), 200);
    for (int refusal = 0; refusal < 3; ++refusal) {
        const auto refused = chat(engine->port(), bearer(kKeyA));
        QCOMPARE(refused->status(), 429);
        QCOMPARE(errorOf(refused->body()).value(u"code"_s).toString(), u"tenant_rate_limited"_s);
    }
    QCOMPARE(fake.requests().size(), 1);
}

void GatewayKeysTest::tokensPerMinuteOverTheLimitGet429()
{
    FakeUpstream fake;
    fake.completionBody = R"({"id":"chatcmpl-fake","object":"chat.completion","model":"fake",)"
                          R"("choices":[{"index":0,"message":{"role":"assistant","content":"hi"},)"
                          R"("finish_reason":"stop"}],"usage":{"prompt_tokens":80,)"
                          R"("completion_tokens":40,"total_tokens":120}})";
    const std::unique_ptr<Engine> engine =
        startEngine(configFor(fake, twoKeys("      tokens_per_minute: 100\n")));
    QVERIFY(engine);

    QCOMPARE(chat(engine->port(), bearer(kKeyA))->status(), 200);
    QTRY_COMPARE(engine->recorder().liveCount(), 0); // its tokens are charged
    const auto refused = chat(engine->port(), bearer(kKeyA));

    QCOMPARE(refused->status(), 429);
    QCOMPARE(errorOf(refused->body()).value(u"code"_s).toString(),
             u"key_tokens_per_minute_exceeded"_s);
    QVERIFY(!refused->header("retry-after").isEmpty());
    QCOMPARE(fake.requests().size(), 1);
}

void GatewayKeysTest::modelsOutsideTheKeysListGet403()
{
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine =
        startEngine(configFor(fake, twoKeys("      models: [test-*]\n")));
    QVERIFY(engine);

    QCOMPARE(chat(engine->port(), bearer(kKeyA), "test-model")->status(), 200);
    const auto refused = chat(engine->port(), bearer(kKeyA), "other-model");

    QCOMPARE(refused->status(), 403);
    QCOMPARE(errorOf(refused->body()).value(u"code"_s).toString(), u"model_not_allowed"_s);
    QCOMPARE(errorOf(refused->body()).value(u"message"_s).toString(),
             u"API key `key-a` may not use model `other-model`; it may use: test-*."_s);
    QCOMPARE(chat(engine->port(), bearer(kKeyB), "other-model")->status(), 200);

    // The model list offers each key what it may use.
    const auto modelIds = [&](QByteArrayView key) {
        QStringList ids;
        const QJsonArray data =
            jsonOf(*get(engine->port(), "/v1/models", bearer(key))).value(u"data"_s).toArray();
        for (const QJsonValue &model : data)
            ids.append(model.toObject().value(u"id"_s).toString());
        return ids;
    };
    QCOMPARE(modelIds(kKeyA), QStringList({u"test-model"_s}));
    QVERIFY(modelIds(kKeyB).contains(u"other-model"_s));
    QVERIFY(modelIds(kKeyB).contains(u"test-model"_s));
}

void GatewayKeysTest::keysCreatedThroughTheAdminApiSurviveARestart()
{
    QTemporaryDir state;
    QVERIFY(state.isValid());
    FakeUpstream fake;
    config::Config config = configFor(fake, twoKeys());
    config.state.directory = state.path();
    QByteArray createdKey;
    {
        const std::unique_ptr<Engine> engine = startEngine(config);
        QVERIFY(engine);
        TestClient create(engine->port());
        create.post("/admin/v1/keys",
                    R"({"tenant":"team-c","id":"ci-bot","requests_per_minute":100,)"
                    R"("models":["test-model"]})");
        QVERIFY(create.waitForFinished());
        QCOMPARE(create.status(), 201);
        const QJsonObject created = jsonOf(create);
        createdKey = created.value(u"key"_s).toString().toLatin1();
        QVERIFY(createdKey.startsWith("sk-sy-"));
        QCOMPARE(created.value(u"id"_s).toString(), u"ci-bot"_s);
        QCOMPARE(created.value(u"source"_s).toString(), u"api"_s);

        QCOMPARE(chat(engine->port(), bearer(createdKey))->status(), 200);
        QCOMPARE(newestTrace(*engine).tenant, u"team-c"_s);

        TestClient taken(engine->port());
        taken.post("/admin/v1/keys", R"({"tenant":"x","id":"key-a"})");
        QVERIFY(taken.waitForFinished());
        QCOMPARE(taken.status(), 409);
        TestClient bad(engine->port());
        bad.post("/admin/v1/keys", R"({"tenant":"x","budget":5})");
        QVERIFY(bad.waitForFinished());
        QCOMPARE(bad.status(), 400);
        QCOMPARE(errorOf(bad.body()).value(u"param"_s).toString(), u"budget"_s);
    }
    // The database holds the digest only, never the key's text.
    QFile database(state.filePath(u"switchyard.db"_s));
    QVERIFY(database.open(QIODevice::ReadOnly));
    QVERIFY(!database.readAll().contains(createdKey));
    database.close();

    const std::unique_ptr<Engine> restarted = startEngine(config);
    QVERIFY(restarted);
    const auto listed = get(restarted->port(), "/admin/v1/keys");
    QCOMPARE(listed->status(), 200);
    const QJsonArray keys = jsonOf(*listed).value(u"data"_s).toArray();
    QCOMPARE(keys.size(), 3);
    QCOMPARE(keys[0].toObject().value(u"id"_s).toString(), u"key-a"_s);
    QCOMPARE(keys[0].toObject().value(u"source"_s).toString(), u"file"_s);
    const QJsonObject apiKey = keys[2].toObject();
    QCOMPARE(apiKey.value(u"id"_s).toString(), u"ci-bot"_s);
    QCOMPARE(apiKey.value(u"tenant"_s).toString(), u"team-c"_s);
    QCOMPARE(apiKey.value(u"source"_s).toString(), u"api"_s);
    QCOMPARE(apiKey.value(u"requests_per_minute"_s).toInt(), 100);
    QCOMPARE(apiKey.value(u"models"_s).toArray(), QJsonArray{u"test-model"_s});
    QVERIFY(!apiKey.value(u"created_at"_s).toString().isEmpty());
    QVERIFY(!listed->body().contains(createdKey));
    QVERIFY(!apiKey.contains(u"key"_s));
    QCOMPARE(chat(restarted->port(), bearer(createdKey))->status(), 200);
    // Only that key: another text of the same form is refused.
    QCOMPARE(chat(restarted->port(), bearer(auth::newKeyText()))->status(), 401);

    TestClient revoke(restarted->port());
    revoke.send("DELETE", "/admin/v1/keys/ci-bot");
    QVERIFY(revoke.waitForFinished());
    QCOMPARE(revoke.status(), 200);
    QCOMPARE(chat(restarted->port(), bearer(createdKey))->status(), 401);
    TestClient again(restarted->port());
    again.send("DELETE", "/admin/v1/keys/ci-bot");
    QVERIFY(again.waitForFinished());
    QCOMPARE(again.status(), 404);
}

void GatewayKeysTest::fileKeysCannotBeRevokedThroughTheApi()
{
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, twoKeys()));
    QVERIFY(engine);
    TestClient revoke(engine->port());

    revoke.send("DELETE", "/admin/v1/keys/key-a");
    QVERIFY(revoke.waitForFinished());

    QCOMPARE(revoke.status(), 409);
    QCOMPARE(errorOf(revoke.body()).value(u"code"_s).toString(), u"key_defined_in_file"_s);
    QVERIFY(errorOf(revoke.body()).value(u"message"_s).toString().contains(u"auth.keys"_s));
    QCOMPARE(chat(engine->port(), bearer(kKeyA))->status(), 200);
}

void GatewayKeysTest::patchRefusesWhatPostRefusesInItsWords_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("param");
    QTest::addColumn<QString>("message");
    const QString perMinute = u"`%1` must be a whole number of at least 0 (0: no limit)."_s;
    const QString models = u"`models` must be a list of model names or patterns (`*` and `?`)."_s;
    QTest::newRow("not JSON") << "requests_per_minute=5"_ba << QString()
                              << u"The body must be a JSON object such as "
                                 u"{\"requests_per_minute\": 60}."_s;
    QTest::newRow("a list") << "[1]"_ba << QString()
                            << u"The body must be a JSON object such as "
                               u"{\"requests_per_minute\": 60}."_s;
    // The tenant and the id are the key's; only its limits are edited.
    QTest::newRow("tenant") << R"({"tenant":"team-z"})"_ba << u"tenant"_s
                            << u"Unknown field `tenant`; a key's limits are requests_per_minute, "
                               u"tokens_per_minute, models."_s;
    QTest::newRow("a misspelt limit")
        << R"({"request_per_minute":5})"_ba << u"request_per_minute"_s
        << u"Unknown field `request_per_minute`; a key's limits are requests_per_minute, "
           u"tokens_per_minute, models."_s;
    QTest::newRow("negative") << R"({"requests_per_minute":-1})"_ba << u"requests_per_minute"_s
                              << perMinute.arg(u"requests_per_minute"_s);
    QTest::newRow("text") << R"({"requests_per_minute":"60"})"_ba << u"requests_per_minute"_s
                          << perMinute.arg(u"requests_per_minute"_s);
    QTest::newRow("a fraction") << R"({"tokens_per_minute":1.5})"_ba << u"tokens_per_minute"_s
                                << perMinute.arg(u"tokens_per_minute"_s);
    QTest::newRow("beyond an int")
        << R"({"tokens_per_minute":3000000000})"_ba << u"tokens_per_minute"_s
        << perMinute.arg(u"tokens_per_minute"_s);
    QTest::newRow("models as text") << R"({"models":"test-*"})"_ba << u"models"_s << models;
    QTest::newRow("a blank model") << R"({"models":["test-*"," "]})"_ba << u"models"_s << models;
    QTest::newRow("nothing to change")
        << "{}"_ba << QString()
        << u"Nothing to change: send at least one of requests_per_minute, tokens_per_minute, "
           u"models."_s;
}

void GatewayKeysTest::patchRefusesWhatPostRefusesInItsWords()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, param);
    QFETCH(QString, message);
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, twoKeys()));
    QVERIFY(engine);
    TestClient create(engine->port());
    create.post("/admin/v1/keys", R"({"tenant":"team-c","id":"ci-bot","requests_per_minute":7})");
    QVERIFY(create.waitForFinished());
    QCOMPARE(create.status(), 201);

    TestClient patch(engine->port());
    patch.send("PATCH", "/admin/v1/keys/ci-bot", body);
    QVERIFY(patch.waitForFinished());

    QCOMPARE(patch.status(), 400);
    const QJsonObject error = errorOf(patch.body());
    QCOMPARE(error.value(u"message"_s).toString(), message);
    QCOMPARE(error.value(u"param"_s).toString(), param);
    QCOMPARE(error.value(u"type"_s).toString(), u"invalid_request_error"_s);
    QCOMPARE(error.value(u"code"_s).toString(), u"invalid_admin_request"_s);
    // The same words from POST for the same mistake in a limit.
    const QStringList limits{u"requests_per_minute"_s, u"tokens_per_minute"_s, u"models"_s};
    if (limits.contains(param)) {
        QJsonObject created = QJsonDocument::fromJson(body).object();
        created.insert(u"tenant"_s, u"team-d"_s);
        TestClient post(engine->port());
        post.post("/admin/v1/keys", QJsonDocument(created).toJson(QJsonDocument::Compact));
        QVERIFY(post.waitForFinished());
        QCOMPARE(post.status(), 400);
        QCOMPARE(errorOf(post.body()).value(u"message"_s).toString(), message);
        QCOMPARE(errorOf(post.body()).value(u"param"_s).toString(), param);
    }
    // Nothing changed.
    const QJsonArray keys =
        jsonOf(*get(engine->port(), "/admin/v1/keys")).value(u"data"_s).toArray();
    QCOMPARE(keys.size(), 3);
    QCOMPARE(keys[2].toObject().value(u"requests_per_minute"_s).toInt(), 7);
    QCOMPARE(keys[2].toObject().value(u"tenant"_s).toString(), u"team-c"_s);
}

void GatewayKeysTest::patchOfAnUnknownKeyIs404AndOfAFileKey409()
{
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, twoKeys()));
    QVERIFY(engine);

    TestClient unknown(engine->port());
    unknown.send("PATCH", "/admin/v1/keys/nobody", R"({"requests_per_minute":5})");
    QVERIFY(unknown.waitForFinished());
    QCOMPARE(unknown.status(), 404);
    QCOMPARE(
        QJsonDocument::fromJson(unknown.body()).object(),
        QJsonObject({{u"error"_s, QJsonObject({{u"message"_s, u"No API key has id `nobody`."_s},
                                               {u"type"_s, u"invalid_request_error"_s},
                                               {u"param"_s, QJsonValue::Null},
                                               {u"code"_s, u"key_not_found"_s}})}}));

    TestClient file(engine->port());
    file.send("PATCH", "/admin/v1/keys/key-a", R"({"requests_per_minute":5})");
    QVERIFY(file.waitForFinished());
    QCOMPARE(file.status(), 409);
    QCOMPARE(errorOf(file.body()).value(u"code"_s).toString(), u"key_defined_in_file"_s);
    QCOMPARE(errorOf(file.body()).value(u"message"_s).toString(),
             u"Key `key-a` is defined in the config file (keys.yaml); change its limits under "
             u"`auth.keys` there and reload."_s);
}

void GatewayKeysTest::patchedLimitsApplyFromTheNextRequestAndSurviveARestart()
{
    // A refill of one request a minute: however slow the machine, the request after the one
    // the new limit allows finds the bucket empty.
    QTemporaryDir state;
    QVERIFY(state.isValid());
    FakeUpstream fake;
    config::Config config = configFor(fake, twoKeys());
    config.state.directory = state.path();
    QByteArray key;
    {
        const std::unique_ptr<Engine> engine = startEngine(config);
        QVERIFY(engine);
        TestClient create(engine->port());
        create.post("/admin/v1/keys", R"({"tenant":"team-c","id":"ci-bot"})");
        QVERIFY(create.waitForFinished());
        QCOMPARE(create.status(), 201);
        key = jsonOf(create).value(u"key"_s).toString().toLatin1();
        for (int request = 0; request < 3; ++request)
            QCOMPARE(chat(engine->port(), bearer(key), "other-model")->status(), 200);

        TestClient patch(engine->port());
        patch.send("PATCH", "/admin/v1/keys/ci-bot",
                   R"({"requests_per_minute":1,"models":["test-*"]})");
        QVERIFY(patch.waitForFinished());

        QCOMPARE(patch.status(), 200);
        const QJsonObject edited = jsonOf(patch);
        QCOMPARE(edited.value(u"id"_s).toString(), u"ci-bot"_s);
        QCOMPARE(edited.value(u"tenant"_s).toString(), u"team-c"_s);
        QCOMPARE(edited.value(u"requests_per_minute"_s).toInt(), 1);
        QCOMPARE(edited.value(u"tokens_per_minute"_s).toInt(), 0); // not sent: kept
        QCOMPARE(edited.value(u"models"_s).toArray(), QJsonArray{u"test-*"_s});
        QVERIFY(!edited.contains(u"key"_s));
        const auto refusedModel = chat(engine->port(), bearer(key), "other-model");
        QCOMPARE(refusedModel->status(), 403);
        QCOMPARE(errorOf(refusedModel->body()).value(u"code"_s).toString(), u"model_not_allowed"_s);
        QCOMPARE(chat(engine->port(), bearer(key))->status(), 200);
        const auto refused = chat(engine->port(), bearer(key));
        QCOMPARE(refused->status(), 429);
        QCOMPARE(errorOf(refused->body()).value(u"code"_s).toString(),
                 u"key_requests_per_minute_exceeded"_s);
        QVERIFY(errorOf(refused->body())
                    .value(u"message"_s)
                    .toString()
                    .startsWith(u"API key `ci-bot` has sent its 1 requests per minute "_s));

        // Back to no limit: the next request passes.
        TestClient lift(engine->port());
        lift.send("PATCH", "/admin/v1/keys/ci-bot", R"({"requests_per_minute":null})");
        QVERIFY(lift.waitForFinished());
        QCOMPARE(lift.status(), 200);
        QCOMPARE(jsonOf(lift).value(u"requests_per_minute"_s).toInt(), 0);
        QCOMPARE(jsonOf(lift).value(u"models"_s).toArray(), QJsonArray{u"test-*"_s});
        QCOMPARE(chat(engine->port(), bearer(key))->status(), 200);
        QCOMPARE(chat(engine->port(), bearer(key))->status(), 200);

        // The state database keeps the edit: a restart serves the key with it.
        TestClient tighten(engine->port());
        tighten.send("PATCH", "/admin/v1/keys/ci-bot", R"({"tokens_per_minute":5000})");
        QVERIFY(tighten.waitForFinished());
        QCOMPARE(tighten.status(), 200);
    }
    const std::unique_ptr<Engine> restarted = startEngine(config);
    QVERIFY(restarted);
    const QJsonArray keys =
        jsonOf(*get(restarted->port(), "/admin/v1/keys")).value(u"data"_s).toArray();
    QCOMPARE(keys.size(), 3);
    const QJsonObject kept = keys[2].toObject();
    QCOMPARE(kept.value(u"id"_s).toString(), u"ci-bot"_s);
    QCOMPARE(kept.value(u"tokens_per_minute"_s).toInt(), 5000);
    QCOMPARE(kept.value(u"models"_s).toArray(), QJsonArray{u"test-*"_s});
    QCOMPARE(chat(restarted->port(), bearer(key), "other-model")->status(), 403);
}

void GatewayKeysTest::aDamagedKeyStoreRefusesAllButFileKeys()
{
    // Keys created through the API live in the database: when it cannot be read, nobody can say
    // there are none, so the gateway must not fall open.
    QTemporaryDir state;
    QVERIFY(state.isValid());
    FakeUpstream fake;
    config::Config open = configFor(fake, {});
    open.state.directory = state.path();
    const auto damageTheDatabase = [&state] {
        for (const QString &suffix : {u""_s, u"-wal"_s, u"-shm"_s})
            QFile::remove(state.filePath(u"switchyard.db"_s + suffix));
        QFile damaged(state.filePath(u"switchyard.db"_s));
        QVERIFY(damaged.open(QIODevice::WriteOnly));
        damaged.write(QByteArray(4096, 'x'));
    };
    // A gateway that never stored an API key stays open while its database is damaged: there
    // is nothing in it to lose, and traffic must go on.
    damageTheDatabase();
    {
        const std::unique_ptr<Engine> engine = startEngine(open);
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), {})->status(), 200);
    }
    QCOMPARE(fake.requests().size(), 1);
    // Once a key was created through the API, a damaged database must not open the gateway.
    QFile::remove(state.filePath(u"switchyard.db"_s));
    {
        const std::unique_ptr<Engine> engine = startEngine(open);
        QVERIFY(engine);
        TestClient create(engine->port());
        create.post("/admin/v1/keys", R"({"tenant":"team-c","id":"ci-bot"})");
        QVERIFY(create.waitForFinished());
        QCOMPARE(create.status(), 201);
    }
    QVERIFY(QFile::exists(state.filePath(u"switchyard.db.api-keys"_s)));
    damageTheDatabase();
    {
        const std::unique_ptr<Engine> engine = startEngine(open);
        QVERIFY(engine);

        const auto refused = chat(engine->port(), {});
        QCOMPARE(refused->status(), 503);
        QCOMPARE(errorOf(refused->body()).value(u"code"_s).toString(), u"keys_unavailable"_s);
        QVERIFY(errorOf(refused->body())
                    .value(u"message"_s)
                    .toString()
                    .startsWith(u"Switchyard cannot read its store of API keys ("_s));
        QCOMPARE(chat(engine->port(), bearer("sk-anything"))->status(), 503);
        QCOMPARE(get(engine->port(), "/v1/models")->status(), 503);
        QCOMPARE(fake.requests().size(), 1); // only the open gateway's request above
    }
    // A key from the config file is still known, and still works.
    config::Config withFileKeys = configFor(fake, twoKeys());
    withFileKeys.state.directory = state.path();
    const std::unique_ptr<Engine> engine = startEngine(withFileKeys);
    QVERIFY(engine);
    QCOMPARE(chat(engine->port(), bearer(kKeyA))->status(), 200);
    QCOMPARE(chat(engine->port(), bearer("sk-wrong"))->status(), 503);
    QCOMPARE(fake.requests().size(), 2);
}

void GatewayKeysTest::clientCredentialsNeverReachAProvider()
{
    FakeUpstream withKey;
    FakeUpstream open;
    // One provider with a key of its own (which it must get), one without (which gets none).
    config::Config config = configFor(withKey, twoKeys(), "    api_key_env: PROVIDER_KEY\n",
                                      environmentOf({{u"PROVIDER_KEY"_s, "sk-provider"}}));
    HeaderList headers = bearer(kKeyA);
    headers.append({QByteArray("x-api-key"), kKeyA.toByteArray()});
    {
        const std::unique_ptr<Engine> engine = startEngine(config);
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), headers)->status(), 200);
    }
    QCOMPARE(withKey.requests().size(), 1);
    QCOMPARE(withKey.requests()[0].header("authorization"), QByteArray("Bearer sk-provider"));
    QCOMPARE(withKey.requests()[0].header("x-api-key"), QByteArray());

    // An open gateway: the client's own header is not passed on either.
    const std::unique_ptr<Engine> engine = startEngine(configFor(open, {}));
    QVERIFY(engine);
    QCOMPARE(chat(engine->port(),
                  {{"Authorization", "Bearer sk-clients-own"}, {"x-api-key", "sk-clients-own"}})
                 ->status(),
             200);
    QCOMPARE(open.requests().size(), 1);
    for (const auto &[name, value] : open.requests()[0].headers)
        QVERIFY2(!value.contains("sk-clients-own"), name.constData());
}

void GatewayKeysTest::aProviderMayOptInToTheClientsCredentials()
{
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine =
        startEngine(configFor(fake, {}, "    forward_client_authorization: true\n"));
    QVERIFY(engine);

    QCOMPARE(chat(engine->port(),
                  {{"Authorization", "Bearer sk-clients-own"}, {"x-api-key", "sk-clients-other"}})
                 ->status(),
             200);

    QCOMPARE(fake.requests().size(), 1);
    QCOMPARE(fake.requests()[0].header("authorization"), QByteArray("Bearer sk-clients-own"));
    QCOMPARE(fake.requests()[0].header("x-api-key"), QByteArray("sk-clients-other"));
}

void GatewayKeysTest::theSwitchyardKeyIsNeverForwarded()
{
    // With keys required, the header that carried the client's Switchyard key stays here even
    // for a provider that takes the client's credentials; the other header goes on.
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine =
        startEngine(configFor(fake, twoKeys(), "    forward_client_authorization: true\n"));
    QVERIFY(engine);

    QCOMPARE(chat(engine->port(), {{"Authorization", "Bearer " + kKeyA.toByteArray()},
                                   {"x-api-key", "sk-clients-provider-key"}})
                 ->status(),
             200);
    QCOMPARE(chat(engine->port(), {{"x-api-key", kKeyB.toByteArray()},
                                   {"Authorization", "Basic Y2xpZW50OnByb3ZpZGVy"}})
                 ->status(),
             200);

    QCOMPARE(fake.requests().size(), 2);
    QCOMPARE(fake.requests()[0].header("authorization"), QByteArray());
    QCOMPARE(fake.requests()[0].header("x-api-key"), QByteArray("sk-clients-provider-key"));
    QCOMPARE(fake.requests()[1].header("x-api-key"), QByteArray());
    QCOMPARE(fake.requests()[1].header("authorization"), QByteArray("Basic Y2xpZW50OnByb3ZpZGVy"));
    for (const FakeUpstream::ReceivedRequest &request : fake.requests()) {
        for (const auto &[name, value] : request.headers) {
            QVERIFY2(!value.contains(kKeyA.toByteArray()) && !value.contains(kKeyB.toByteArray()),
                     name.constData());
        }
    }
}

void GatewayKeysTest::adminApiAndMetricsNeedTheTokenWhenOneIsConfigured()
{
    FakeUpstream fake;
    const std::unique_ptr<Engine> engine =
        startEngine(configFor(fake, "auth:\n  admin_token: " + digestText(kAdminToken) + "\n"));
    QVERIFY(engine);

    for (const QByteArray &path : {QByteArray("/admin/v1/keys"), QByteArray("/metrics")}) {
        const auto without = get(engine->port(), path);
        QCOMPARE(without->status(), 401);
        QCOMPARE(errorOf(without->body()).value(u"code"_s).toString(), u"admin_token_required"_s);
        const auto wrong = get(engine->port(), path, bearer("not-the-token"));
        QCOMPARE(wrong->status(), 401);
        QCOMPARE(errorOf(wrong->body()).value(u"code"_s).toString(), u"invalid_admin_token"_s);
        QCOMPARE(get(engine->port(), path, bearer(kAdminToken))->status(), 200);
    }
    // The admin token is no client key: the gateway stays open to chat without one.
    QCOMPARE(chat(engine->port(), {})->status(), 200);
}

void GatewayKeysTest::offLoopbackTheAdminApiNeedsTheToken()
{
    QHostAddress outside;
    for (const QHostAddress &address : QNetworkInterface::allAddresses()) {
        if (address.protocol() == QAbstractSocket::IPv4Protocol && !address.isLoopback()) {
            outside = address;
            break;
        }
    }
    if (outside.isNull())
        QSKIP("this machine has no non-loopback IPv4 address; tst_client_keys tests the rule");
    FakeUpstream fake;
    config::Config config = configFor(fake, {});
    config.server.listenHost = outside.toString();

    // Without a token, Switchyard does not start there.
    Engine unstarted(config);
    QString why;
    QVERIFY(!unstarted.listen(&why));
    QVERIFY2(why.contains(u"auth.admin_token"_s), qPrintable(why));

    config.auth.adminToken.sha256 = auth::sha256(kAdminToken);
    // It starts, saying that keys and prompts cross the network in clear.
    QTest::ignoreMessage(QtWarningMsg,
                         QRegularExpression(u"^listening on .* for other machines in plain HTTP: "
                                            u"API keys and prompts cross the network readable"_s));
    const std::unique_ptr<Engine> engine = startEngine(config);
    QVERIFY(engine);
    QVERIFY(engine->snapshot().exposedWithoutTls);
    // TestClient connects to 127.0.0.1; this listener is on `outside`, so go there.
    const QByteArray request = "GET /admin/v1/keys HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
    const QByteArray refused = plainExchange(outside, engine->port(), request + "\r\n");
    QVERIFY2(refused.startsWith("HTTP/1.1 401"), refused.constData());
    const QByteArray answered =
        plainExchange(outside, engine->port(),
                      request + "Authorization: Bearer " + kAdminToken.toByteArray() + "\r\n\r\n");
    QVERIFY2(answered.startsWith("HTTP/1.1 200"), answered.constData());
}

void GatewayKeysTest::theListenerSpeaksTlsAndTakesANewCertificateWithTheConfig()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QVERIFY(makeCertificate(dir.path(), u"first"_s));
    QVERIFY(makeCertificate(dir.path(), u"second"_s));
    const QSslCertificate first = QSslCertificate::fromPath(dir.filePath(u"first.pem"_s)).first();
    const QSslCertificate second = QSslCertificate::fromPath(dir.filePath(u"second.pem"_s)).first();
    FakeUpstream fake;
    const auto tlsSection = [&](const QString &name) {
        return "tls:\n  certificate_file: " + dir.filePath(name + u".pem"_s).toUtf8() +
               "\n  key_file: " + dir.filePath(name + u".key"_s).toUtf8() + "\n";
    };
    const std::unique_ptr<Engine> engine = startEngine(configFor(fake, tlsSection(u"first"_s)));
    QVERIFY(engine);
    QVERIFY(engine->snapshot().tlsEnabled);

    const HttpsAnswer before = httpsGet(engine->port(), first, "/v1/models");
    QVERIFY2(before.error.isEmpty(), qPrintable(before.error));
    QVERIFY2(before.head.startsWith("HTTP/1.1 200"), before.head.constData());
    QCOMPARE(before.presented, first);
    // A plain-HTTP client gets no answer from a TLS listener.
    TestClient plain(engine->port());
    plain.send("GET", "/v1/models");
    QVERIFY(!plain.waitForFinished(1000) || plain.status() == 0);

    // A new config naming other files: new connections get the new certificate.
    engine->commands().applyConfig(
        std::make_shared<const config::Config>(configFor(fake, tlsSection(u"second"_s))));
    const HttpsAnswer after = httpsGet(engine->port(), second, "/v1/models");
    QVERIFY2(after.error.isEmpty(), qPrintable(after.error));
    QVERIFY2(after.head.startsWith("HTTP/1.1 200"), after.head.constData());
    QCOMPARE(after.presented, second);
    // The first certificate is no longer offered: a client trusting only it refuses.
    QVERIFY(!httpsGet(engine->port(), first, "/v1/models").error.isEmpty());
}

QTEST_GUILESS_MAIN(GatewayKeysTest)
#include "tst_gateway_keys.moc"
