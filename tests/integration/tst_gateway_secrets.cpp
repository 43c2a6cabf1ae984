// No secret ever appears in a log line, a trace or an admin answer: real requests through the
// real server, with a provider key, secret provider headers and query values, and a client's
// keys all set, against providers that fail in every way, one of them repeating every header
// it received in its error. Every category writes at debug, in both log formats, and every
// line is searched.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "logging/log_line.h"
#include "telemetry/trace.h"
#include "test_client.h"

#include <QMutex>
#include <QUrl>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using namespace switchyard::testing;

namespace {

constexpr auto kProviderKey = "sk-provider-SECRET-4d1f";
constexpr auto kHeaderSecret = "header-SECRET-77c2";
constexpr auto kQuerySecret = "query+SECRET/9=";
constexpr auto kClientKey = "sk-client-SECRET-a90e";
constexpr auto kClientApiKey = "sk-client-SECRET-x-api-b31c";

config::EnvironmentLookup secrets()
{
    return environmentOf({{u"PROVIDER_KEY"_s, kProviderKey},
                          {u"HEADER_SECRET"_s, kHeaderSecret},
                          {u"QUERY_SECRET"_s, kQuerySecret}});
}

// Every secret, in every form it could be written: as is, percent-encoded, a `+` read as a space.
QStringList secretForms()
{
    QStringList forms;
    for (const char *secret :
         {kProviderKey, kHeaderSecret, kQuerySecret, kClientKey, kClientApiKey}) {
        const QString text = QString::fromLatin1(secret);
        forms << text << QString::fromLatin1(QUrl::toPercentEncoding(text))
              << QString(text).replace(u'+', u' ');
    }
    forms.removeDuplicates();
    return forms;
}

// Every line every category writes, at debug, formatted as text and as JSON just as the
// process's own handler formats them.
class LogCapture {
public:
    LogCapture()
    {
        QLoggingCategory::setFilterRules(u"*.debug=true\n*.info=true\n*.warning=true"_s);
        m_previous = qInstallMessageHandler(&LogCapture::record);
    }
    ~LogCapture()
    {
        qInstallMessageHandler(m_previous);
        QLoggingCategory::setFilterRules(QString());
    }
    QString text() const
    {
        QMutexLocker lock(&s_mutex);
        return QString::fromUtf8(s_lines.join('\n'));
    }
    int lineCount(QByteArrayView containing) const
    {
        QMutexLocker lock(&s_mutex);
        return int(
            std::count_if(s_lines.cbegin(), s_lines.cend(), [containing](const QByteArray &line) {
                return line.contains(containing);
            }));
    }

private:
    static void record(QtMsgType type, const QMessageLogContext &context, const QString &message)
    {
        QMutexLocker lock(&s_mutex);
        s_lines.append(logging::formatLine(logging::LogFormat::Text, type, context, message));
        s_lines.append(logging::formatLine(logging::LogFormat::Json, type, context, message));
    }

    QtMessageHandler m_previous = nullptr;
    static inline QMutex s_mutex;
    static inline QList<QByteArray> s_lines;
};

// Everything a trace holds, as text.
QString everythingIn(const telemetry::Trace &trace)
{
    QStringList parts{QString::fromLatin1(trace.requestId),
                      QString::fromLatin1(trace.traceId),
                      trace.endpoint,
                      trace.tenant,
                      trace.model,
                      trace.route,
                      trace.tier,
                      trace.provider,
                      trace.upstreamModel,
                      trace.outcome,
                      trace.errorClass,
                      trace.finishReason,
                      QString::fromLatin1(trace.method),
                      QString::fromUtf8(trace.path),
                      QString::fromUtf8(trace.requestBody),
                      QString::fromUtf8(trace.responseBody)};
    for (const telemetry::Span &span : trace.spans) {
        parts << span.name << span.detail << span.provider << span.upstreamModel << span.outcome
              << span.errorClass;
    }
    parts << trace.explainSteps;
    for (const auto &[name, value] : trace.requestHeaders)
        parts << QString::fromUtf8(name + ": " + value);
    return parts.join(u'\n');
}

struct Answer {
    int status = 0;
    QByteArray body;
};

Answer send(quint16 port, const QByteArray &path, const QByteArray &body)
{
    TestClient client(port);
    client.post(path, body,
                {{"Authorization", "Bearer " + QByteArray(kClientKey)},
                 {"x-api-key", kClientApiKey},
                 {"x-switchyard-tenant", "team-a"}});
    if (!client.waitForFinished())
        return {};
    return {client.status(), client.body()};
}

QByteArray adminGet(quint16 port, const QByteArray &path)
{
    TestClient client(port);
    client.send("GET", "/admin/v1/" + path);
    return client.waitForFinished() ? client.body() : QByteArray();
}

QByteArray provider(const QByteArray &id, const QByteArray &kind, const QByteArray &baseUrl,
                    const QByteArray &model)
{
    return "  - id: " + id + "\n    kind: " + kind + "\n    base_url: " + baseUrl +
           "\n    api_key_env: PROVIDER_KEY\n"
           "    headers: {X-Secret: {env: HEADER_SECRET}}\n"
           "    query: {sig: {env: QUERY_SECRET}}\n"
           "    models: [" +
           model + "]\n";
}

} // namespace

class GatewaySecretsTest : public QObject {
    Q_OBJECT

private slots:
    void noSecretInLogsTracesOrAdmin();
};

void GatewaySecretsTest::noSecretInLogsTracesOrAdmin()
{
    const LogCapture log;
    FakeUpstream answering;
    FakeUpstream rejecting; // 401, every header repeated in its error
    rejecting.mode = FakeUpstream::Mode::Status;
    rejecting.status = 401;
    rejecting.echoHeadersInStatus = true;
    FakeUpstream failing; // 500, the same
    failing.mode = FakeUpstream::Mode::Status;
    failing.status = 500;
    failing.echoHeadersInStatus = true;
    FakeUpstream anthropicRejecting; // the key in x-api-key this time
    anthropicRejecting.mode = FakeUpstream::Mode::Status;
    anthropicRejecting.status = 400;
    anthropicRejecting.echoHeadersInStatus = true;
    const QByteArray unreachable =
        "http://127.0.0.1:" + QByteArray::number(closedLoopbackPort()) + "/v1";

    auto engine = startEngine(loadTestConfig(
        "listen: 127.0.0.1:0\n"
        "probes: {enabled: false}\n"
        "trace: {keep_bodies: true}\n"
        "providers:\n" +
            provider("answering", "openai", answering.baseUrl(), "works") +
            provider("rejecting", "openai", rejecting.baseUrl(), "rejects") +
            provider("failing", "openai", failing.baseUrl(), "fails") +
            provider("unreachable", "openai", unreachable, "fails") +
            provider("anthropic", "anthropic", anthropicRejecting.baseUrl(), "claude"),
        u"secrets test"_s, secrets()));
    QVERIFY(engine);

    QList<Answer> answers;
    answers << send(engine->port(), "/v1/chat/completions", chatBody("works", false))
            << send(engine->port(), "/v1/chat/completions", chatBody("works", true))
            << send(engine->port(), "/v1/chat/completions", chatBody("rejects", false))
            << send(engine->port(), "/v1/chat/completions", chatBody("rejects", true))
            << send(engine->port(), "/v1/chat/completions", chatBody("claude", false))
            << send(engine->port(), "/v1/chat/completions", "{not json");
    // Enough failures on both of its providers for their breakers to open.
    for (int i = 0; i < 6; ++i)
        answers << send(engine->port(), "/v1/chat/completions", chatBody("fails", i % 2 == 1));
    QCOMPARE(answers.at(0).status, 200);
    QCOMPARE(answers.at(1).status, 200);
    QCOMPARE(answers.at(2).status, 401);
    QCOMPARE(answers.at(4).status, 400);
    QCOMPARE(answers.at(5).status, 400);
    QVERIFY(answers.constLast().status >= 500);
    // The provider did repeat the secrets it was sent: this test's adversary is real.
    QVERIFY(!rejecting.requests().isEmpty());
    QCOMPARE(rejecting.requests().constFirst().header("x-secret"), QByteArray(kHeaderSecret));

    // The lines this test is about were written: one per request, breaker transitions,
    // single failures at debug.
    QCOMPARE(log.lineCount("request finished"), 2 * int(answers.size()));
    QVERIFY(log.lineCount("breaker transition") >= 2);
    QVERIFY(log.lineCount("attempt failed") >= 2);

    QStringList written{log.text()};
    QCOMPARE(engine->traces().size(), int(answers.size()));
    for (const telemetry::Trace &trace : engine->traces().latest(100))
        written << everythingIn(trace);
    for (const QByteArray &path :
         {"providers"_ba, "providers/answering"_ba, "providers/rejecting"_ba,
          "providers/failing"_ba, "providers/unreachable"_ba, "providers/anthropic"_ba, "routes"_ba,
          "routes/canary"_ba, "agents"_ba})
        written << QString::fromUtf8(adminGet(engine->port(), path));
    // The client learns what went wrong, never a provider's credentials.
    for (const Answer &answer : std::as_const(answers))
        written << QString::fromUtf8(answer.body);
    const QString everything = written.join(u'\n');

    for (const QString &secret : secretForms())
        QVERIFY2(!everything.contains(secret),
                 qPrintable(u"found "_s + secret + u" in: "_s +
                            everything.mid(std::max<qsizetype>(0, everything.indexOf(secret) - 300),
                                           400)));
    // Nor does a provider ever see the client's keys.
    for (const FakeUpstream *fake : {&answering, &rejecting, &failing, &anthropicRejecting}) {
        for (const FakeUpstream::ReceivedRequest &request : fake->requests()) {
            for (const auto &[name, value] : request.headers) {
                QVERIFY2(!value.contains(kClientKey) && !value.contains(kClientApiKey),
                         name.constData());
            }
        }
    }
}

QTEST_GUILESS_MAIN(GatewaySecretsTest)
#include "tst_gateway_secrets.moc"
