#include "health/health_registry.h"
#include "logging/log_line.h"
#include "routing/tier_watch.h"
#include "telemetry/request_log.h"
#include "timing/clock.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QtTest>

using namespace Qt::StringLiterals;
using switchyard::logging::LogFields;
using switchyard::logging::LogFormat;
using switchyard::logging::LogLevel;
using switchyard::telemetry::RequestRecord;
namespace config = switchyard::config;

Q_LOGGING_CATEGORY(lcTest, "switchyard.test")

namespace {

// Every line written while a Capture lives, formatted as the process would write it.
class Capture {
public:
    explicit Capture(LogFormat format) : m_previous(qInstallMessageHandler(handler))
    {
        s_format = format;
        s_lines.clear();
    }
    ~Capture() { qInstallMessageHandler(m_previous); }
    static const QList<QByteArray> &lines() { return s_lines; }

private:
    static void handler(QtMsgType type, const QMessageLogContext &context, const QString &message)
    {
        s_lines.append(switchyard::logging::formatLine(s_format, type, context, message));
    }
    static inline LogFormat s_format = LogFormat::Text;
    static inline QList<QByteArray> s_lines;
    QtMessageHandler m_previous;
};

RequestRecord finishedRequest()
{
    RequestRecord record;
    record.requestId = "req-1";
    record.traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    record.endpoint = u"/v1/chat/completions"_s;
    record.tenant = u"team a"_s;
    record.model = u"gpt-4o"_s;
    record.route = u"default"_s;
    record.tier = u"light"_s;
    record.provider = u"cloud-a"_s;
    record.attempts = 2;
    record.status = 200;
    record.outcome = u"ok"_s;
    record.errorClass = u"server_error"_s;
    record.totalMicros = 1234567;
    record.timeToFirstByteMicros = 250001;
    record.inputTokens = 12;
    record.outputTokens = 34;
    record.degradedLevel = 1;
    record.streamed = true;
    return record;
}

config::ProviderConfig endpoint(const QString &id)
{
    config::ProviderConfig provider;
    provider.id = id;
    provider.models = {{u"m"_s, u"m"_s}};
    return provider;
}

// Two endpoints, "a" alone in tier light and "b" alone in tier pro.
config::Config twoTiers()
{
    config::Config config;
    config.providers = {endpoint(u"a"_s), endpoint(u"b"_s)};
    config.routing.tiers = {config::TierConfig::light(), config::TierConfig::pro()};
    config.routing.tiers[0].pool = {u"a"_s};
    config.routing.tiers[1].pool = {u"b"_s};
    return config;
}

QJsonObject jsonOf(const QByteArray &line)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(line, &error);
    if (error.error != QJsonParseError::NoError)
        qWarning("not JSON (%s): %s", qPrintable(error.errorString()), line.constData());
    return document.object();
}

} // namespace

class TestLogLine : public QObject {
    Q_OBJECT

private slots:
    void init()
    {
        QLoggingCategory::setFilterRules(switchyard::logging::filterRules(LogLevel::Info));
    }
    void cleanupTestCase() { QLoggingCategory::setFilterRules(QString()); }

    void jsonLineHasTheCommonMembers();
    void jsonLineOfARequestHasItsFieldsAsMembers();
    void jsonLineWritesUnknownValuesAsNull();
    void textLineOfARequestIsKeyValuePairs();
    void aRequestWithAClientKeyNamesItsId();
    void textValuesThatCouldSplitAreQuoted_data();
    void textValuesThatCouldSplitAreQuoted();
    void noValueCanBreakAJsonLine();
    void aDisabledRequestLineBuildsNothing();
    void credentialHeadersInAnyMessageAreRedacted_data();
    void credentialHeadersInAnyMessageAreRedacted();
    void levelsEnableTheirCategories_data();
    void levelsEnableTheirCategories();
    void parsesNames();
    void aBreakerTransitionIsOneInfoLine();
    void aTierGoingDownAndUpIsOneInfoLineEach();
};

void TestLogLine::jsonLineHasTheCommonMembers()
{
    const Capture capture(LogFormat::Json);
    qCInfo(lcTest) << "listening on" << 8080;

    QCOMPARE(Capture::lines().size(), 1);
    const QJsonObject line = jsonOf(Capture::lines().constFirst());
    // RFC 3339, UTC, milliseconds.
    static const QRegularExpression time(
        u"^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z$"_s);
    QVERIFY2(time.match(line.value(u"time"_s).toString()).hasMatch(),
             qPrintable(line.value(u"time"_s).toString()));
    QCOMPARE(line.value(u"level"_s).toString(), u"info"_s);
    QCOMPARE(line.value(u"logger"_s).toString(), u"switchyard.test"_s);
    QCOMPARE(line.value(u"message"_s).toString(), u"listening on 8080"_s);
    QCOMPARE(line.size(), 4);
}

void TestLogLine::jsonLineOfARequestHasItsFieldsAsMembers()
{
    const Capture capture(LogFormat::Json);
    switchyard::telemetry::Trace trace;
    static_cast<RequestRecord &>(trace) = finishedRequest();
    switchyard::telemetry::requestLog().traceFinished(trace);

    QCOMPARE(Capture::lines().size(), 1);
    const QJsonObject line = jsonOf(Capture::lines().constFirst());
    QCOMPARE(line.value(u"logger"_s).toString(), u"switchyard.requests"_s);
    QCOMPARE(line.value(u"message"_s).toString(), u"request finished"_s);
    QCOMPARE(line.value(u"request_id"_s).toString(), u"req-1"_s);
    QCOMPARE(line.value(u"trace_id"_s).toString(), u"4bf92f3577b34da6a3ce929d0e0e4736"_s);
    QCOMPARE(line.value(u"endpoint"_s).toString(), u"/v1/chat/completions"_s);
    QCOMPARE(line.value(u"tenant"_s).toString(), u"team a"_s);
    QCOMPARE(line.value(u"model"_s).toString(), u"gpt-4o"_s);
    QCOMPARE(line.value(u"route"_s).toString(), u"default"_s);
    QCOMPARE(line.value(u"tier"_s).toString(), u"light"_s);
    QCOMPARE(line.value(u"provider"_s).toString(), u"cloud-a"_s);
    QCOMPARE(line.value(u"attempts"_s).toInt(), 2);
    QCOMPARE(line.value(u"status"_s).toInt(), 200);
    QCOMPARE(line.value(u"outcome"_s).toString(), u"ok"_s);
    QCOMPARE(line.value(u"error_class"_s).toString(), u"server_error"_s);
    QCOMPARE(line.value(u"latency_ms"_s).toDouble(), 1234.567);
    QCOMPARE(line.value(u"ttft_ms"_s).toDouble(), 250.001);
    QCOMPARE(line.value(u"tokens_in"_s).toInt(), 12);
    QCOMPARE(line.value(u"tokens_out"_s).toInt(), 34);
    QCOMPARE(line.value(u"degraded"_s).toInt(), 1);
    QCOMPARE(line.value(u"streamed"_s).toBool(), true);
}

void TestLogLine::jsonLineWritesUnknownValuesAsNull()
{
    RequestRecord refused;
    refused.requestId = "req-2";
    refused.endpoint = u"/v1/chat/completions"_s;
    refused.status = 429;
    refused.outcome = u"tenant_rate_limited"_s;

    const Capture capture(LogFormat::Json);
    switchyard::logging::write(lcTest(), QtInfoMsg, u"request finished"_s,
                               switchyard::telemetry::requestLogFields(refused));

    const QJsonObject line = jsonOf(Capture::lines().constFirst());
    for (const QString &unknown : {u"tenant"_s, u"provider"_s, u"tier"_s, u"ttft_ms"_s,
                                   u"tokens_in"_s, u"tokens_out"_s, u"error_class"_s})
        QVERIFY2(line.value(unknown).isNull(), qPrintable(unknown));
    QCOMPARE(line.value(u"attempts"_s).toInt(), 0);
    QCOMPARE(line.value(u"status"_s).toInt(), 429);
}

void TestLogLine::aRequestWithAClientKeyNamesItsId()
{
    RequestRecord record = finishedRequest();
    record.keyId = u"team-a-bot"_s;

    const Capture capture(LogFormat::Text);
    switchyard::logging::write(lcTest(), QtInfoMsg, u"request finished"_s,
                               switchyard::telemetry::requestLogFields(record));

    const QString line = QString::fromUtf8(Capture::lines().constFirst());
    QVERIFY2(line.endsWith(u" degraded=1 streamed=true key_id=team-a-bot"_s), qPrintable(line));
}

void TestLogLine::textLineOfARequestIsKeyValuePairs()
{
    RequestRecord record = finishedRequest();
    record.outputTokens = -1;

    const Capture capture(LogFormat::Text);
    switchyard::logging::write(lcTest(), QtInfoMsg, u"request finished"_s,
                               switchyard::telemetry::requestLogFields(record));

    const QString line = QString::fromUtf8(Capture::lines().constFirst());
    const QString expected =
        u" info switchyard.test: request finished request_id=req-1 "
        u"trace_id=4bf92f3577b34da6a3ce929d0e0e4736 endpoint=/v1/chat/completions "
        u"tenant=\"team a\" model=gpt-4o route=default tier=light provider=cloud-a attempts=2 "
        u"status=200 outcome=ok error_class=server_error latency_ms=1234.567 ttft_ms=250.001 "
        u"tokens_in=12 tokens_out=- degraded=1 streamed=true"_s;
    QVERIFY2(line.endsWith(expected), qPrintable(line));
    static const QRegularExpression time(
        u"^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z "_s);
    QVERIFY2(time.match(line).hasMatch(), qPrintable(line));
}

void TestLogLine::textValuesThatCouldSplitAreQuoted_data()
{
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("written");

    QTest::newRow("one word") << u"gpt-4o"_s << u"gpt-4o"_s;
    QTest::newRow("space") << u"team a"_s << u"\"team a\""_s;
    QTest::newRow("equals sign") << u"a=b"_s << u"\"a=b\""_s;
    QTest::newRow("quote") << u"say \"hi\""_s << u"\"say \\\"hi\\\"\""_s;
    QTest::newRow("newline: no forged second line")
        << u"x\n2025 info forged"_s << u"\"x\\n2025 info forged\""_s;
    QTest::newRow("empty is unknown") << QString() << u"-"_s;
}

void TestLogLine::textValuesThatCouldSplitAreQuoted()
{
    QFETCH(QString, value);
    QFETCH(QString, written);

    const Capture capture(LogFormat::Text);
    switchyard::logging::write(lcTest(), QtInfoMsg, u"m"_s, LogFields().add("tenant"_L1, value));

    const QString line = QString::fromUtf8(Capture::lines().constFirst());
    QVERIFY2(line.endsWith(u": m tenant="_s + written), qPrintable(line));
}

void TestLogLine::noValueCanBreakAJsonLine()
{
    const QString nasty = u"\"}\n{\"level\":\"error\"\\\u0001\u2028"_s;
    const Capture capture(LogFormat::Json);
    switchyard::logging::write(lcTest(), QtWarningMsg, nasty, LogFields().add("tenant"_L1, nasty));

    const QByteArray raw = Capture::lines().constFirst();
    QVERIFY(!raw.contains('\n'));
    const QJsonObject line = jsonOf(raw);
    QCOMPARE(line.value(u"message"_s).toString(), nasty);
    QCOMPARE(line.value(u"tenant"_s).toString(), nasty);
    QCOMPARE(line.value(u"level"_s).toString(), u"warning"_s);
}

void TestLogLine::aDisabledRequestLineBuildsNothing()
{
    QLoggingCategory::setFilterRules(switchyard::logging::filterRules(LogLevel::Warning));
    const Capture capture(LogFormat::Json);
    switchyard::telemetry::requestLog().traceFinished(switchyard::telemetry::Trace{});
    QVERIFY(Capture::lines().isEmpty());
}

void TestLogLine::credentialHeadersInAnyMessageAreRedacted_data()
{
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("written");

    // As qt.httpserver prints a request at debug.
    QTest::newRow("Qt's request dump")
        << u"Request: ((Headers: (\"Host\": \"h\"), (\"Authorization\": \"Bearer sk-1\"), "
           u"(\"x-api-key\": \"sk-2\"), (\"Cookie\": \"s=3\")))"_s
        << u"Request: ((Headers: (\"Host\": \"h\"), (\"Authorization\": \"[redacted]\"), "
           u"(\"x-api-key\": \"[redacted]\"), (\"Cookie\": \"[redacted]\")))"_s;
    QTest::newRow("header lines") << u"proxy-authorization: Basic dTpw, next"_s
                                  << u"proxy-authorization: \"[redacted]\", next"_s;
    QTest::newRow("a word, not a header") << u"authorization failed for x-goog-api-key"_s
                                          << u"authorization failed for x-goog-api-key"_s;
}

void TestLogLine::credentialHeadersInAnyMessageAreRedacted()
{
    QFETCH(QString, message);
    QFETCH(QString, written);

    const Capture capture(LogFormat::Text);
    qCWarning(lcTest).noquote() << message;

    const QString line = QString::fromUtf8(Capture::lines().constFirst());
    QVERIFY2(line.endsWith(u"switchyard.test: "_s + written), qPrintable(line));
}

void TestLogLine::levelsEnableTheirCategories_data()
{
    QTest::addColumn<LogLevel>("level");
    QTest::addColumn<bool>("debug");
    QTest::addColumn<bool>("info");
    QTest::addColumn<bool>("warning");

    QTest::newRow("debug") << LogLevel::Debug << true << true << true;
    QTest::newRow("info") << LogLevel::Info << false << true << true;
    QTest::newRow("warning") << LogLevel::Warning << false << false << true;
    QTest::newRow("error") << LogLevel::Error << false << false << false;
}

void TestLogLine::levelsEnableTheirCategories()
{
    QFETCH(LogLevel, level);
    QFETCH(bool, debug);
    QFETCH(bool, info);
    QFETCH(bool, warning);

    QLoggingCategory::setFilterRules(switchyard::logging::filterRules(level));

    QCOMPARE(lcTest().isDebugEnabled(), debug);
    QCOMPARE(lcTest().isInfoEnabled(), info);
    QCOMPARE(lcTest().isWarningEnabled(), warning);
    QCOMPARE(lcTest().isCriticalEnabled(), true);
}

void TestLogLine::parsesNames()
{
    QCOMPARE(switchyard::logging::logFormatFromName(u"json"), std::optional(LogFormat::Json));
    QCOMPARE(switchyard::logging::logFormatFromName(u"text"), std::optional(LogFormat::Text));
    QCOMPARE(switchyard::logging::logFormatFromName(u"logfmt"), std::optional<LogFormat>());
    QCOMPARE(switchyard::logging::logLevelFromName(u"warning"), std::optional(LogLevel::Warning));
    QCOMPARE(switchyard::logging::logLevelFromName(u"trace"), std::optional<LogLevel>());
}

void TestLogLine::aBreakerTransitionIsOneInfoLine()
{
    const config::ConfigStore store(twoTiers());
    switchyard::timing::ManualClock clock;
    switchyard::health::HealthRegistry registry(store, clock);

    const Capture capture(LogFormat::Json);
    for (int i = 0; i < switchyard::health::HealthRegistry::kDownAfterConsecutiveFailures; ++i) {
        registry.callStarted(0);
        registry.callFinished(0, switchyard::health::CallOutcome::CallFailure, 100, -1,
                              u"HTTP 500"_s);
    }

    // The failures themselves are debug, off at info: one line in all.
    QCOMPARE(Capture::lines().size(), 1);
    const QJsonObject line = jsonOf(Capture::lines().constFirst());
    QCOMPARE(line.value(u"level"_s).toString(), u"info"_s);
    QCOMPARE(line.value(u"logger"_s).toString(), u"switchyard.health"_s);
    QCOMPARE(line.value(u"message"_s).toString(), u"breaker transition"_s);
    QCOMPARE(line.value(u"provider"_s).toString(), u"a"_s);
    QCOMPARE(line.value(u"from"_s).toString(), u"closed"_s);
    QCOMPARE(line.value(u"to"_s).toString(), u"open"_s);
    QCOMPARE(line.value(u"reason"_s).toString(), u"5 consecutive call failures; open for 60 s"_s);
}

void TestLogLine::aTierGoingDownAndUpIsOneInfoLineEach()
{
    const config::ConfigStore store(twoTiers());
    switchyard::timing::ManualClock clock;
    switchyard::health::HealthRegistry registry(store, clock);
    switchyard::routing::TierWatch tiers(store, registry);
    registry.setEventSink(
        [&tiers](const switchyard::BreakerEvent &) { tiers.endpointStateChanged(); });

    const Capture capture(LogFormat::Text);
    registry.applyAction(0, switchyard::ProviderAction::Disable);
    registry.applyAction(0, switchyard::ProviderAction::Enable);

    QStringList tierLines;
    for (const QByteArray &line : Capture::lines()) {
        if (line.contains(" switchyard.tiers: "))
            tierLines.append(QString::fromUtf8(line.mid(line.indexOf(" info "))));
    }
    QCOMPARE(tierLines,
             (QStringList{u" info switchyard.tiers: tier unavailable tier=light reason=\"none of "
                          u"its endpoints can be chosen: a (disabled by an operator)\""_s,
                          u" info switchyard.tiers: tier available tier=light"_s}));
}

QTEST_GUILESS_MAIN(TestLogLine)

#include "tst_log_line.moc"
