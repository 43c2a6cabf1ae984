// The `breaker:` and `probes:` sections and a provider's `probe_path`: every key, its default,
// and the exact error for each wrong value.

#include "config/config_loader.h"
#include "config_error_lines.h"

#include <QtTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using switchyard::config::Config;
using switchyard::config::LoadResult;

namespace {

LoadResult load(const QByteArray &yaml)
{
    return switchyard::config::loadConfigText(
        yaml, u"test.yaml"_s, [](const QString &) { return std::optional<QByteArray>(); });
}

// Four lines: a case's own lines start at line 5.
constexpr auto oneProvider = "providers:\n"
                             "  - id: sim\n"
                             "    kind: simulated\n"
                             "    models: [demo]\n";

} // namespace

class TestHealthConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void defaultsAreTheDesignNumbers();
    void readsEveryKey();
    void openForAboveTheDefaultCapRaisesTheCap();
    void probeTimeoutFollowsAShortInterval();
    void reportsEveryError_data();
    void reportsEveryError();
};

void TestHealthConfig::defaultsAreTheDesignNumbers()
{
    const LoadResult result = load(oneProvider);
    QCOMPARE(errorLines(result), QStringList());
    const Config &config = *result.config;
    const auto &breaker = config.resilience.breaker;
    QCOMPARE(breaker.consecutiveFailures, 5);
    QCOMPARE(breaker.failureRate, 0.4);
    QCOMPARE(breaker.window, 20);
    QCOMPARE(breaker.minCalls, 5);
    QCOMPARE(breaker.slowP95Factor, 2.0);
    QCOMPARE(breaker.slowWindow, 60s);
    QCOMPARE(breaker.slowMinCalls, 20);
    QCOMPARE(breaker.openFor, 60s);
    QCOMPARE(breaker.maxOpenFor, 5min);
    QCOMPARE(breaker.ramp, 60s);
    QCOMPARE(breaker.rampStart, 0.05);
    const auto &probes = config.resilience.probes;
    QCOMPARE(probes.enabled, true);
    QCOMPARE(probes.interval, 10s);
    QCOMPARE(probes.timeout, 3s);
    QCOMPARE(probes.unhealthyAfter, 3);
    QCOMPARE(probes.healthyAfter, 2);
    QCOMPARE(probes.path, QString());
    QCOMPARE(probes.pathFor(u"sim"_s), QString());
}

void TestHealthConfig::readsEveryKey()
{
    const LoadResult result = load("providers:\n"
                                   "  - id: local\n"
                                   "    kind: openai\n"
                                   "    base_url: http://127.0.0.1:8000/v1\n"
                                   "    models: [m]\n"
                                   "    probe_path: /health\n"
                                   "  - id: sim\n"
                                   "    kind: simulated\n"
                                   "    models: [demo]\n"
                                   "breaker:\n"
                                   "  consecutive_failures: 3\n"
                                   "  failure_rate: 0.5\n"
                                   "  window: 50\n"
                                   "  min_calls: 10\n"
                                   "  slow_p95_factor: 1.5\n"
                                   "  slow_window: 2m\n"
                                   "  slow_min_calls: 30\n"
                                   "  open_for: 10s\n"
                                   "  max_open_for: 1m\n"
                                   "  ramp: 0s\n"
                                   "  ramp_start: 0.2\n"
                                   "probes:\n"
                                   "  enabled: false\n"
                                   "  interval: 5s\n"
                                   "  timeout: 1s\n"
                                   "  unhealthy_after: 4\n"
                                   "  healthy_after: 1\n"
                                   "  path: /v1/models\n"_ba);
    QCOMPARE(errorLines(result), QStringList());
    const Config &config = *result.config;
    const auto &breaker = config.resilience.breaker;
    QCOMPARE(breaker.consecutiveFailures, 3);
    QCOMPARE(breaker.failureRate, 0.5);
    QCOMPARE(breaker.window, 50);
    QCOMPARE(breaker.minCalls, 10);
    QCOMPARE(breaker.slowP95Factor, 1.5);
    QCOMPARE(breaker.slowWindow, 2min);
    QCOMPARE(breaker.slowMinCalls, 30);
    QCOMPARE(breaker.openFor, 10s);
    QCOMPARE(breaker.maxOpenFor, 1min);
    QCOMPARE(breaker.ramp, 0ms);
    QCOMPARE(breaker.rampStart, 0.2);
    const auto &probes = config.resilience.probes;
    QCOMPARE(probes.enabled, false);
    QCOMPARE(probes.interval, 5s);
    QCOMPARE(probes.timeout, 1s);
    QCOMPARE(probes.unhealthyAfter, 4);
    QCOMPARE(probes.healthyAfter, 1);
    QCOMPARE(probes.pathFor(u"local"_s), u"/health"_s);
    QCOMPARE(probes.pathFor(u"sim"_s), u"/v1/models"_s);
}

void TestHealthConfig::openForAboveTheDefaultCapRaisesTheCap()
{
    const LoadResult result = load(QByteArray(oneProvider) + "breaker: {open_for: 10m}\n");
    QCOMPARE(errorLines(result), QStringList());
    QCOMPARE(result.config->resilience.breaker.openFor, 10min);
    QCOMPARE(result.config->resilience.breaker.maxOpenFor, 10min);
}

void TestHealthConfig::probeTimeoutFollowsAShortInterval()
{
    const LoadResult result = load(QByteArray(oneProvider) + "probes: {interval: 1s}\n");
    QCOMPARE(errorLines(result), QStringList());
    QCOMPARE(result.config->resilience.probes.interval, 1s);
    QCOMPARE(result.config->resilience.probes.timeout, 1s);
}

void TestHealthConfig::reportsEveryError_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QStringList>("expectedErrors");

    const auto after = [](const char *text) { return QByteArray(oneProvider) + text; };
    QTest::newRow("unknown breaker key")
        << after("breaker:\n  consecutive_failure: 3\n")
        << QStringList{u"test.yaml:6:3: unknown key `consecutive_failure` (did you mean "
                       u"`consecutive_failures`?)"_s};
    QTest::newRow("unknown probes key")
        << after("probes:\n  intervall: 5s\n")
        << QStringList{u"test.yaml:6:3: unknown key `intervall` (did you mean `interval`?)"_s};
    QTest::newRow("breaker is not a map")
        << after("breaker: yes\n")
        << QStringList{u"test.yaml:5:10: `breaker` must be a map, got \"yes\""_s};
    QTest::newRow("zero consecutive failures")
        << after("breaker:\n  consecutive_failures: 0\n")
        << QStringList{u"test.yaml:6:25: `consecutive_failures` must be at least 1, got \"0\""_s};
    QTest::newRow("failure rate above 1")
        << after("breaker:\n  failure_rate: 40\n")
        << QStringList{u"test.yaml:6:17: `failure_rate` must be between 0 and 1, got \"40\""_s};
    QTest::newRow("window not a number")
        << after("breaker:\n  window: twenty\n")
        << QStringList{u"test.yaml:6:11: `window` must be an integer, got \"twenty\""_s};
    QTest::newRow("min calls above the window")
        << after("breaker:\n  window: 10\n  min_calls: 11\n")
        << QStringList{u"test.yaml:7:14: `min_calls` must not be more than `window` (10), "
                       u"got \"11\""_s};
    QTest::newRow("negative slow factor")
        << after("breaker:\n  slow_p95_factor: -1\n")
        << QStringList{u"test.yaml:6:20: `slow_p95_factor` must be between 0 and 1000, "
                       u"got \"-1\""_s};
    QTest::newRow("zero open period")
        << after("breaker:\n  open_for: 0s\n")
        << QStringList{u"test.yaml:6:13: `open_for` must be greater than 0, got \"0s\""_s};
    QTest::newRow("cap shorter than the open period")
        << after("breaker:\n  open_for: 2m\n  max_open_for: 1m\n")
        << QStringList{u"test.yaml:7:17: `max_open_for` must not be shorter than `open_for` "
                       u"(120000 ms), got \"1m\""_s};
    QTest::newRow("ramp not a duration")
        << after("breaker:\n  ramp: slowly\n")
        << QStringList{u"test.yaml:6:9: `ramp` must be a duration such as `250ms`, `3s` or "
                       u"`2m`, got \"slowly\""_s};
    QTest::newRow("ramp start above 1")
        << after("breaker:\n  ramp_start: 5\n")
        << QStringList{u"test.yaml:6:15: `ramp_start` must be between 0 and 1, got \"5\""_s};
    QTest::newRow("probes enabled not a boolean")
        << after("probes:\n  enabled: sometimes\n")
        << QStringList{u"test.yaml:6:12: `enabled` must be true or false, got \"sometimes\""_s};
    QTest::newRow("probe timeout longer than the interval")
        << after("probes:\n  interval: 2s\n  timeout: 5s\n")
        << QStringList{u"test.yaml:7:12: `timeout` must not be longer than `interval` "
                       u"(2000 ms), got \"5s\""_s};
    QTest::newRow("zero healthy after")
        << after("probes:\n  healthy_after: 0\n")
        << QStringList{u"test.yaml:6:18: `healthy_after` must be at least 1, got \"0\""_s};
    QTest::newRow("relative probe path")
        << after("probes:\n  path: health\n")
        << QStringList{u"test.yaml:6:9: `path` must be a path starting with `/` such as "
                       u"`/health`, got \"health\""_s};
    QTest::newRow("relative provider probe path")
        << QByteArray("providers:\n"
                      "  - id: sim\n"
                      "    kind: simulated\n"
                      "    models: [demo]\n"
                      "    probe_path: v1/models\n")
        << QStringList{u"test.yaml:5:17: `probe_path` must be a path starting with `/` such as "
                       u"`/health`, got \"v1/models\""_s};
    QTest::newRow("every error at once")
        << after("breaker: {window: 0, open_for: soon}\nprobes: {unhealthy_after: x}\n")
        << QStringList{
               u"test.yaml:5:19: `window` must be at least 1, got \"0\""_s,
               u"test.yaml:5:32: `open_for` must be a duration such as `250ms`, `3s` or `2m`, "
               u"got \"soon\""_s,
               u"test.yaml:6:27: `unhealthy_after` must be an integer, got \"x\""_s};
}

void TestHealthConfig::reportsEveryError()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QStringList, expectedErrors);

    const LoadResult result = load(yaml);

    QCOMPARE(errorLines(result), expectedErrors);
    QVERIFY(!result.config.has_value());
}

QTEST_GUILESS_MAIN(TestHealthConfig)
#include "tst_health_config.moc"
