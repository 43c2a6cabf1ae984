// How the gateway calls a provider, through the real server against fakes on port 0: the
// configured headers and query, the key in its configured header, Azure OpenAI's deployments
// behind one provider, a proxy, a private CA, and the secrets among them kept out of traces,
// the admin API and the log.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/trace.h"
#include "test_client.h"

#include <QJsonDocument>
#include <QLoggingCategory>
#include <QMutex>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using namespace switchyard::testing;

namespace {

constexpr auto kProviderKey = "sk-provider-7f3a9c";
constexpr auto kHeaderSecret = "header-secret-91bd";
// `+`, `/` and `=` as in base64 secrets: they must arrive encoded, not read as a space.
constexpr auto kQuerySecret = "query+secret/42=";

config::EnvironmentLookup secrets()
{
    return environmentOf({{u"PROVIDER_KEY"_s, kProviderKey},
                          {u"HEADER_SECRET"_s, kHeaderSecret},
                          {u"QUERY_SECRET"_s, kQuerySecret}});
}

// A gateway config around `providers`, the YAML of one or more provider entries.
config::Config providersConfig(const QByteArray &providers)
{
    return loadTestConfig("listen: 127.0.0.1:0\n"
                          "probes: {enabled: false}\n"
                          "providers:\n" +
                              providers,
                          u"providers test"_s, secrets());
}

struct Answer {
    int status = 0;
    QByteArray body;
    QByteArray requestId;
};

Answer chat(quint16 port, const QByteArray &model, bool stream = false)
{
    TestClient client(port);
    client.post("/v1/chat/completions", chatBody(model, stream));
    Answer answer;
    if (!client.waitForFinished())
        return answer;
    answer.status = client.status();
    answer.body = client.body();
    answer.requestId = client.header("x-switchyard-request-id");
    return answer;
}

QByteArray adminGet(quint16 port, const QByteArray &path)
{
    TestClient client(port);
    client.send("GET", "/admin/v1/" + path);
    return client.waitForFinished() ? client.body() : QByteArray();
}

// Every message logged while it lives, every category at debug level included.
class LogCapture {
public:
    LogCapture()
    {
        QLoggingCategory::setFilterRules(u"switchyard.*=true"_s);
        s_messages.clear();
        m_previous = qInstallMessageHandler(&LogCapture::record);
    }
    ~LogCapture()
    {
        qInstallMessageHandler(m_previous);
        QLoggingCategory::setFilterRules(QString());
    }
    QStringList messages() const
    {
        QMutexLocker lock(&s_mutex);
        return s_messages;
    }

private:
    static void record(QtMsgType, const QMessageLogContext &context, const QString &message)
    {
        QMutexLocker lock(&s_mutex);
        s_messages.append(QString::fromLatin1(context.category) + u": "_s + message);
    }

    QtMessageHandler m_previous = nullptr;
    static inline QMutex s_mutex;
    static inline QStringList s_messages;
};

// Sets an environment variable for as long as it lives, then puts back what was there.
class EnvironmentVariable {
public:
    EnvironmentVariable(const char *name, const QByteArray &value)
        : m_name(name), m_wasSet(qEnvironmentVariableIsSet(name)), m_before(qgetenv(name))
    {
        qputenv(name, value);
    }
    ~EnvironmentVariable()
    {
        if (m_wasSet)
            qputenv(m_name, m_before);
        else
            qunsetenv(m_name);
    }

private:
    const char *m_name;
    bool m_wasSet;
    QByteArray m_before;
};

} // namespace

class GatewayProvidersTest : public QObject {
    Q_OBJECT

private slots:
    void sendsConfiguredHeadersQueryAndKeyHeader();
    void routesEachModelToItsAzureDeployment();
    void aFailoverSendsEachProviderItsOwnModelName_data();
    void aFailoverSendsEachProviderItsOwnModelName();
    void reachesTheProviderThroughItsProxy();
    void ignoresTheEnvironmentsProxy();
    void trustsAPrivateCaFromCaFile();
    void refusesAProviderCertificateWithoutItsCa();
    void keepsSecretsOutOfTracesAdminAndLogs();
};

void GatewayProvidersTest::sendsConfiguredHeadersQueryAndKeyHeader()
{
    FakeUpstream fake;
    auto engine = startEngine(providersConfig("  - id: cloud\n"
                                              "    kind: openai\n"
                                              "    base_url: " +
                                              fake.baseUrl() +
                                              "\n"
                                              "    api_key_env: PROVIDER_KEY\n"
                                              "    api_key_header: api-key\n"
                                              "    headers: {X-Team: support, X-Secret: {env: "
                                              "HEADER_SECRET}}\n"
                                              "    query: {api-version: \"2024-10-21\", sig: "
                                              "{env: QUERY_SECRET}}\n"
                                              "    models: [gpt]\n"));
    QVERIFY(engine);

    const Answer answer = chat(engine->port(), "gpt");

    QCOMPARE(answer.status, 200);
    QCOMPARE(fake.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &received = fake.requests().constFirst();
    QCOMPARE(received.path,
             "/v1/chat/completions?api-version=2024-10-21&sig=query%2Bsecret%2F42%3D"_ba);
    QCOMPARE(received.header("api-key"),
             QByteArray(kProviderKey)); // no prefix outside Authorization
    QCOMPARE(received.header("authorization"), QByteArray());
    QCOMPARE(received.header("x-team"), "support"_ba);
    QCOMPARE(received.header("x-secret"), QByteArray(kHeaderSecret));
    QCOMPARE(received.header("content-type"), "application/json"_ba);
}

void GatewayProvidersTest::routesEachModelToItsAzureDeployment()
{
    FakeUpstream fake;
    const QByteArray origin = "http://127.0.0.1:" + QByteArray::number(fake.port());
    auto engine =
        startEngine(providersConfig("  - id: azure\n"
                                    "    kind: openai\n"
                                    "    base_url: " +
                                    origin +
                                    "/openai/deployments/{model}\n"
                                    "    api_key_env: PROVIDER_KEY\n"
                                    "    api_key_header: api-key\n"
                                    "    query: {api-version: \"2024-10-21\"}\n"
                                    "    models:\n"
                                    "      - {name: gpt-4o, upstream: gpt4o-prod}\n"
                                    "      - {name: gpt-4o-mini, upstream: gpt4o-mini-prod}\n"));
    QVERIFY(engine);

    const Answer whole = chat(engine->port(), "gpt-4o");
    const Answer streamed = chat(engine->port(), "gpt-4o-mini", true);

    QCOMPARE(whole.status, 200);
    QCOMPARE(streamed.status, 200);
    QCOMPARE(fake.requests().size(), 2);
    QCOMPARE(fake.requests().at(0).path,
             "/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21"_ba);
    QVERIFY(fake.requests().at(0).body.contains(R"("model":"gpt4o-prod")"));
    QCOMPARE(fake.requests().at(1).path,
             "/openai/deployments/gpt4o-mini-prod/chat/completions?api-version=2024-10-21"_ba);
    QVERIFY(fake.requests().at(1).body.contains(R"("model":"gpt4o-mini-prod")"));
    for (const FakeUpstream::ReceivedRequest &received : fake.requests())
        QCOMPARE(received.header("api-key"), QByteArray(kProviderKey));
}

void GatewayProvidersTest::aFailoverSendsEachProviderItsOwnModelName_data()
{
    QTest::addColumn<QByteArray>("firstModels");
    QTest::addColumn<QByteArray>("secondModels");
    QTest::addColumn<QByteArray>("firstName");
    QTest::addColumn<QByteArray>("secondName");
    QTest::newRow("renamed, then the client's name") << "[{name: gpt-4o, upstream: first-name}]"_ba
                                                     << "[gpt-4o]"_ba
                                                     << "first-name"_ba
                                                     << "gpt-4o"_ba;
    QTest::newRow("renamed, then renamed otherwise") << "[{name: gpt-4o, upstream: first-name}]"_ba
                                                     << "[{name: gpt-4o, upstream: second-name}]"_ba
                                                     << "first-name"_ba
                                                     << "second-name"_ba;
    QTest::newRow("the client's name, then renamed") << "[gpt-4o]"_ba
                                                     << "[{name: gpt-4o, upstream: second-name}]"_ba
                                                     << "gpt-4o"_ba
                                                     << "second-name"_ba;
}

// The execution keeps the body it last sent (a renamed model's) instead of the client's, so that
// a call in flight holds one copy of the conversation; each later attempt must still get the
// client's request with its own provider's model name, and nothing else changed.
void GatewayProvidersTest::aFailoverSendsEachProviderItsOwnModelName()
{
    QFETCH(QByteArray, firstModels);
    QFETCH(QByteArray, secondModels);
    QFETCH(QByteArray, firstName);
    QFETCH(QByteArray, secondName);
    FakeUpstream first;
    first.mode = FakeUpstream::Mode::Status; // 500: retried, then failed over
    FakeUpstream second;
    auto engine = startEngine(providersConfig(
        "  - id: first\n    kind: openai\n    base_url: " + first.baseUrl() + "\n    models: " +
        firstModels + "\n  - id: second\n    kind: openai\n    base_url: " + second.baseUrl() +
        "\n    weight: 0\n" // only when the first has failed
        "    models: " +
        secondModels + "\n"));
    QVERIFY(engine);

    const Answer answer = chat(engine->port(), "gpt-4o");

    QCOMPARE(answer.status, 200);
    const QByteArray sent = chatBody("gpt-4o", false);
    const auto withModel = [&sent](const QByteArray &name) {
        return QByteArray(sent).replace(R"("model":"gpt-4o")", R"("model":")" + name + '"');
    };
    QVERIFY(sent.contains(R"("model":"gpt-4o")"));
    QVERIFY(!first.requests().isEmpty());
    for (const FakeUpstream::ReceivedRequest &received : first.requests())
        QCOMPARE(received.body, withModel(firstName));
    QCOMPARE(second.requests().size(), 1);
    QCOMPARE(second.requests().first().body, withModel(secondName));
}

void GatewayProvidersTest::reachesTheProviderThroughItsProxy()
{
    // The fake stands in for the proxy. The provider's host cannot be resolved (`.invalid` is
    // reserved for that), so only the way through the proxy can answer.
    FakeUpstream proxy;
    auto engine = startEngine(providersConfig("  - id: behind-proxy\n"
                                              "    kind: openai\n"
                                              "    base_url: http://provider.invalid/v1\n"
                                              "    proxy: http://127.0.0.1:" +
                                              QByteArray::number(proxy.port()) +
                                              "\n"
                                              "    query: {api-version: \"1\"}\n"
                                              "    models: [gpt]\n"));
    QVERIFY(engine);

    const Answer answer = chat(engine->port(), "gpt");

    QCOMPARE(answer.status, 200);
    QCOMPARE(proxy.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &received = proxy.requests().constFirst();
    // A request to a proxy names the whole URL (the absolute form of RFC 9112).
    QCOMPARE(received.method, "POST"_ba);
    QCOMPARE(received.path, "http://provider.invalid/v1/chat/completions?api-version=1"_ba);
    QCOMPARE(received.header("host"), "provider.invalid"_ba);
}

void GatewayProvidersTest::ignoresTheEnvironmentsProxy()
{
    // libcurl on its own would send this call to http_proxy: a provider without `proxy` must
    // be called directly, here at a closed port, so the call fails and the "proxy" sees nothing.
    FakeUpstream proxy;
    const EnvironmentVariable httpProxy("http_proxy",
                                        "http://127.0.0.1:" + QByteArray::number(proxy.port()));
    const EnvironmentVariable allProxy("ALL_PROXY",
                                       "http://127.0.0.1:" + QByteArray::number(proxy.port()));
    const quint16 closedPort = closedLoopbackPort();
    QVERIFY(closedPort != 0);
    auto engine = startEngine(providersConfig("  - id: direct\n"
                                              "    kind: openai\n"
                                              "    base_url: http://127.0.0.1:" +
                                              QByteArray::number(closedPort) +
                                              "/v1\n"
                                              "    models: [gpt]\n"));
    QVERIFY(engine);

    const Answer answer = chat(engine->port(), "gpt");

    QCOMPARE(answer.status, 502);
    QCOMPARE(errorOf(answer.body).value(u"code"_s).toString(), u"upstream_unavailable"_s);
    QCOMPARE(proxy.requests().size(), 0);
    QCOMPARE(proxy.openConnections() + proxy.closedConnections(), 0);
}

void GatewayProvidersTest::trustsAPrivateCaFromCaFile()
{
    FakeUpstream fake(loopbackTlsFiles());
    auto engine = startEngine(providersConfig("  - id: private\n"
                                              "    kind: openai\n"
                                              "    base_url: " +
                                              fake.baseUrl() +
                                              "\n"
                                              "    ca_file: " +
                                              tlsTestFile(u"ca.pem"_s).toUtf8() +
                                              "\n"
                                              "    models: [gpt]\n"));
    QVERIFY(engine);

    const Answer whole = chat(engine->port(), "gpt");
    const Answer streamed = chat(engine->port(), "gpt", true);

    QCOMPARE(whole.status, 200);
    QCOMPARE(streamed.status, 200);
    QCOMPARE(fake.requests().size(), 2);
    QCOMPARE(fake.requests().constFirst().path, "/v1/chat/completions"_ba);
}

void GatewayProvidersTest::refusesAProviderCertificateWithoutItsCa()
{
    // The same server, but the provider trusts only the system's CAs: the handshake fails and
    // no request is ever sent.
    FakeUpstream fake(loopbackTlsFiles());
    auto engine = startEngine(providersConfig("  - id: private\n"
                                              "    kind: openai\n"
                                              "    base_url: " +
                                              fake.baseUrl() +
                                              "\n"
                                              "    models: [gpt]\n"));
    QVERIFY(engine);

    const Answer answer = chat(engine->port(), "gpt");

    QCOMPARE(answer.status, 502);
    const QString message = errorOf(answer.body).value(u"message"_s).toString();
    QVERIFY2(message.contains(u"TLS handshake failed"_s), qPrintable(message));
    QCOMPARE(fake.requests().size(), 0);
}

void GatewayProvidersTest::keepsSecretsOutOfTracesAdminAndLogs()
{
    FakeUpstream fake;
    const LogCapture log;
    auto engine = startEngine(providersConfig("  - id: cloud\n"
                                              "    kind: openai\n"
                                              "    base_url: " +
                                              fake.baseUrl() +
                                              "\n"
                                              "    api_key_env: PROVIDER_KEY\n"
                                              "    headers: {X-Secret: {env: HEADER_SECRET}}\n"
                                              "    query: {api-version: \"2024-10-21\", sig: "
                                              "{env: QUERY_SECRET}}\n"
                                              "    models: [gpt]\n"));
    QVERIFY(engine);

    // One call that succeeds, one the provider refuses and one it fails: every path that
    // writes a trace or a log line.
    const Answer ok = chat(engine->port(), "gpt");
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 401;
    fake.statusBody = R"({"error":{"message":"bad key","type":"invalid_request_error"}})";
    const Answer refused = chat(engine->port(), "gpt");
    fake.status = 500;
    const Answer failed = chat(engine->port(), "gpt", true);
    QCOMPARE(ok.status, 200);
    QCOMPARE(refused.status, 401);
    QCOMPARE(failed.status, 502);
    QCOMPARE(fake.requests().size(), 3);
    QCOMPARE(fake.requests().constFirst().header("x-secret"), QByteArray(kHeaderSecret));

    QStringList written;
    for (const telemetry::Trace &trace : engine->traces().latest(10)) {
        for (const telemetry::Span &span : trace.spans)
            written.append(span.name + u": "_s + span.detail);
    }
    // The three attempts are there to be read. (Their URL, shown while a call is open with
    // secret query values redacted, is replaced by the outcome when it closes: the unit test of
    // displayUrl covers it.)
    QCOMPARE(written.filter(u"upstream attempt: cloud, attempt 1"_s).size(), 3);
    written.append(QString::fromUtf8(adminGet(engine->port(), "providers")));
    written.append(QString::fromUtf8(adminGet(engine->port(), "providers/cloud")));
    written.append(QString::fromUtf8(ok.body + refused.body + failed.body));
    written.append(log.messages());
    const QString everything = written.join(u'\n');
    QVERIFY(!everything.isEmpty());

    const QStringList secretForms{
        QString::fromLatin1(kProviderKey),
        QString::fromLatin1(kHeaderSecret),
        QString::fromLatin1(kQuerySecret),
        QString::fromLatin1(QUrl::toPercentEncoding(QString::fromLatin1(kQuerySecret))),
        u"query secret/42="_s, // a `+` read as a space
    };
    for (const QString &secret : secretForms)
        QVERIFY2(!everything.contains(secret), qPrintable(u"found "_s + secret));
}

QTEST_GUILESS_MAIN(GatewayProvidersTest)
#include "tst_gateway_providers.moc"
