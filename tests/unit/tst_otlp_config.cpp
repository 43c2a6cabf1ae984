// `trace.otlp`: the OpenTelemetry export's keys, their defaults, and every error a person can
// make in them, each with its FILE:LINE:COL.
#include "config/config_loader.h"
#include "config_error_lines.h"

#include <QtTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using switchyard::config::ConfiguredValue;
using switchyard::config::LoadResult;
using switchyard::config::OtlpExportConfig;

namespace {

constexpr auto oneSimulatedProvider = "providers:\n"
                                      "  - id: sim\n"
                                      "    kind: simulated\n"
                                      "    models: [demo]\n";

LoadResult load(const QByteArray &trace)
{
    const auto environment = [](const QString &name) -> std::optional<QByteArray> {
        if (name == u"COLLECTOR_KEY"_s)
            return "ck-123"_ba;
        return std::nullopt;
    };
    return switchyard::config::loadConfigText(QByteArray(oneSimulatedProvider) + trace,
                                              u"test.yaml"_s, environment);
}

} // namespace

class TestOtlpConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void loadsEveryKey();
    void appliesTheOpenTelemetryDefaults();
    void isOffWithoutTheSection();
    void appendsTheTracesPath_data();
    void appendsTheTracesPath();
    void reportsEveryError_data();
    void reportsEveryError();
};

void TestOtlpConfig::loadsEveryKey()
{
    const LoadResult result = load("trace:\n"
                                   "  capacity: 100\n"
                                   "  otlp:\n"
                                   "    endpoint: https://collector.example.test:4318/otel\n"
                                   "    headers:\n"
                                   "      X-Team: support\n"
                                   "      Api-Key: {env: COLLECTOR_KEY}\n"
                                   "    sampling_ratio: 0.25\n"
                                   "    batch: 256\n"
                                   "    interval: 2s\n"
                                   "    queue: 4096\n"
                                   "    timeout: 3s\n");
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    QCOMPARE(result.config->trace.capacity, 100);
    const std::optional<OtlpExportConfig> &otlp = result.config->trace.otlp;
    QVERIFY(otlp.has_value());
    QCOMPARE(otlp->endpoint, QUrl(u"https://collector.example.test:4318/otel"_s));
    QCOMPARE(otlp->tracesUrl(), QUrl(u"https://collector.example.test:4318/otel/v1/traces"_s));
    const QList<ConfiguredValue> headers{{"X-Team", "support", {}},
                                         {"Api-Key", "ck-123", u"COLLECTOR_KEY"_s}};
    QCOMPARE(otlp->headers, headers);
    QCOMPARE(otlp->samplingRatio, 0.25);
    QCOMPARE(otlp->batchSpans, 256);
    QCOMPARE(otlp->interval, 2000ms);
    QCOMPARE(otlp->queueSpans, 4096);
    QCOMPARE(otlp->timeout, 3000ms);
}

void TestOtlpConfig::appliesTheOpenTelemetryDefaults()
{
    const LoadResult result = load("trace: {otlp: {endpoint: \"http://127.0.0.1:4318\"}}\n");
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const std::optional<OtlpExportConfig> &otlp = result.config->trace.otlp;
    QVERIFY(otlp.has_value());
    QVERIFY(otlp->headers.isEmpty());
    QCOMPARE(otlp->samplingRatio, 1.0);
    QCOMPARE(otlp->batchSpans, 512);
    QCOMPARE(otlp->interval, 5000ms);
    QCOMPARE(otlp->queueSpans, 2048);
    QCOMPARE(otlp->timeout, 10000ms);
}

void TestOtlpConfig::isOffWithoutTheSection()
{
    const LoadResult result = load("trace: {capacity: 10}\n");
    QVERIFY(result.ok());
    QVERIFY(!result.config->trace.otlp.has_value());
}

void TestOtlpConfig::appendsTheTracesPath_data()
{
    QTest::addColumn<QString>("endpoint");
    QTest::addColumn<QString>("tracesUrl");
    QTest::newRow("host and port")
        << u"http://127.0.0.1:4318"_s << u"http://127.0.0.1:4318/v1/traces"_s;
    QTest::newRow("trailing slash")
        << u"http://127.0.0.1:4318/"_s << u"http://127.0.0.1:4318/v1/traces"_s;
    QTest::newRow("a path of its own")
        << u"https://otel.example.test/api/"_s << u"https://otel.example.test/api/v1/traces"_s;
}

void TestOtlpConfig::appendsTheTracesPath()
{
    QFETCH(QString, endpoint);
    QFETCH(QString, tracesUrl);
    OtlpExportConfig otlp;
    otlp.endpoint = QUrl(endpoint);
    QCOMPARE(otlp.tracesUrl().toString(), tracesUrl);
}

void TestOtlpConfig::reportsEveryError_data()
{
    QTest::addColumn<QByteArray>("trace");
    QTest::addColumn<QStringList>("expectedErrors");

    QTest::newRow("misspelt key")
        << "trace:\n  otlp:\n    endpoint: http://127.0.0.1:4318\n    sampling: 0.5\n"_ba
        << QStringList{u"test.yaml:8:5: unknown key `sampling` (did you mean "
                       u"`sampling_ratio`?)"_s};
    QTest::newRow("misspelt section")
        << "trace:\n  otpl: {endpoint: http://127.0.0.1:4318}\n"_ba
        << QStringList{u"test.yaml:6:3: unknown key `otpl` (did you mean `otlp`?)"_s};
    QTest::newRow("no endpoint")
        << "trace:\n  otlp: {sampling_ratio: 0.5}\n"_ba
        << QStringList{u"test.yaml:6:9: `trace.otlp` is missing required key `endpoint`"_s};
    QTest::newRow("section that is not a map")
        << "trace:\n  otlp: http://127.0.0.1:4318\n"_ba
        << QStringList{u"test.yaml:6:9: `otlp` must be a map, got \"http://127.0.0.1:4318\""_s};
    QTest::newRow("endpoint that is not a URL")
        << "trace:\n  otlp:\n    endpoint: 127.0.0.1:4318\n"_ba
        << QStringList{u"test.yaml:7:15: `endpoint` must be the collector's http or https base "
                       u"URL such as `http://127.0.0.1:4318` (spans go to its `/v1/traces`), got "
                       u"\"127.0.0.1:4318\""_s};
    QTest::newRow("endpoint with the signal's path")
        << "trace:\n  otlp:\n    endpoint: http://127.0.0.1:4318/v1/traces\n"_ba
        << QStringList{u"test.yaml:7:15: `endpoint` is the collector's base URL: leave out "
                       u"`/v1/traces`, which Switchyard appends, got "
                       u"\"http://127.0.0.1:4318/v1/traces\""_s};
    QTest::newRow("bad numbers")
        << "trace:\n"
           "  otlp:\n"
           "    endpoint: http://127.0.0.1:4318\n"
           "    sampling_ratio: 1.5\n"
           "    batch: 0\n"
           "    queue: lots\n"
           "    interval: 0s\n"
           "    timeout: soon\n"_ba
        << QStringList{u"test.yaml:8:21: `sampling_ratio` must be between 0 and 1, got \"1.5\""_s,
                       u"test.yaml:9:12: `batch` must be at least 1, got \"0\""_s,
                       u"test.yaml:10:12: `queue` must be an integer, got \"lots\""_s,
                       u"test.yaml:11:15: `interval` must be greater than 0, got \"0s\""_s,
                       u"test.yaml:12:14: `timeout` must be a duration such as `250ms`, `3s` or "
                       u"`2m`, got \"soon\""_s};
    QTest::newRow("batch larger than the queue")
        << "trace:\n  otlp:\n    endpoint: http://127.0.0.1:4318\n    batch: 3000\n"_ba
        << QStringList{u"test.yaml:8:12: `batch` (3000 spans) must not be larger than `queue` "
                       u"(2048 spans)"_s};
    QTest::newRow("headers Switchyard writes or cannot read")
        << "trace:\n"
           "  otlp:\n"
           "    endpoint: http://127.0.0.1:4318\n"
           "    headers:\n"
           "      Content-Type: application/x-protobuf\n"
           "      Api-Key: {env: NOT_SET_ANYWHERE}\n"_ba
        << QStringList{u"test.yaml:9:7: header `Content-Type` cannot be set here: Switchyard "
                       u"writes it itself"_s,
                       u"test.yaml:10:22: environment variable NOT_SET_ANYWHERE is not set"_s};
}

void TestOtlpConfig::reportsEveryError()
{
    QFETCH(QByteArray, trace);
    QFETCH(QStringList, expectedErrors);

    const LoadResult result = load(trace);

    QCOMPARE(errorLines(result), expectedErrors);
    QVERIFY(!result.ok());
}

QTEST_GUILESS_MAIN(TestOtlpConfig)
#include "tst_otlp_config.moc"
