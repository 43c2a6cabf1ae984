// The `retries`, `admission` and `degradation` sections: every value read, every default kept,
// every mistake reported with FILE:LINE:COL.

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

constexpr auto oneProvider = "providers:\n"
                             "  - id: sim\n"
                             "    kind: simulated\n"
                             "    models: [demo]\n";

} // namespace

class TestResilienceConfig : public QObject {
    Q_OBJECT

private slots:
    void readsEveryValue();
    void keepsDefaultsForAbsentKeys();
    void reportsEveryError_data();
    void reportsEveryError();
};

void TestResilienceConfig::readsEveryValue()
{
    const LoadResult result =
        load(QByteArray(oneProvider) + "retries:\n"
                                       "  backoff_base: 100ms\n"
                                       "  backoff_jitter: 0\n"
                                       "  backoff_max: 2s\n"
                                       "  budget_percent: 10\n"
                                       "  min_retries_in_flight: 1\n"
                                       "  max_attempts: 3\n"
                                       "  timeout_gradient: 2\n"
                                       "  max_retry_after: 0\n"
                                       "  default_cool_down: 2500ms\n"
                                       "admission:\n"
                                       "  max_in_flight: 64\n"
                                       "  default_tenant_rpm: 120\n"
                                       "  failover_capacity_share: 0.25\n"
                                       "  degraded_admit_share: 1\n"
                                       "  max_depth: 2\n"
                                       "  overload_lag: 75ms\n"
                                       "  max_start_wait: 3s\n"
                                       "  tenants:\n"
                                       "    acme: {requests_per_minute: 600}\n"
                                       "    beta:\n"
                                       "      requests_per_minute: 60\n"
                                       "      burst: 5\n"
                                       "degradation:\n"
                                       "  canned:\n"
                                       "    - when: {model: \"support-*\", "
                                       "contains: [order, delivery]}\n"
                                       "      reply: Orders ship daily.\n"
                                       "    - when: {contains: hours}\n"
                                       "      reply: 9 to 5.\n"
                                       "  fail_safe: Please try again soon.\n");
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const Config &config = *result.config;

    const auto &retries = config.resilience.retries;
    QCOMPARE(retries.backoffBase, 100ms);
    QCOMPARE(retries.backoffJitter, 0ms);
    QCOMPARE(retries.backoffMax, 2000ms);
    QCOMPARE(retries.budgetPercent, 10.0);
    QCOMPARE(retries.minRetriesInFlight, 1);
    QCOMPARE(retries.maxAttempts, 3);
    QCOMPARE(retries.timeoutGradient, 2.0);
    QCOMPARE(retries.maxRetryAfter, 0ms);
    QCOMPARE(retries.defaultCoolDown, 2500ms);

    const auto &admission = config.resilience.admission;
    QCOMPARE(admission.maxInFlight, 64);
    QCOMPARE(admission.defaultTenantRpm, 120);
    QCOMPARE(admission.failoverCapacityShare, 0.25);
    QCOMPARE(admission.degradedAdmitShare, 1.0);
    QCOMPARE(admission.maxDepth, 2);
    QCOMPARE(admission.overloadLag, 75ms);
    QCOMPARE(admission.maxStartWait, 3s);
    QCOMPARE(admission.tenants.size(), 2);
    QCOMPARE(admission.tenants.value(u"acme"_s).requestsPerMinute, 600);
    QCOMPARE(admission.tenants.value(u"acme"_s).burst, 0);
    QCOMPARE(admission.tenants.value(u"beta"_s).requestsPerMinute, 60);
    QCOMPARE(admission.tenants.value(u"beta"_s).burst, 5);

    const auto &degradation = config.resilience.degradation;
    QCOMPARE(degradation.canned.size(), 2);
    QCOMPARE(degradation.canned[0].modelGlob, u"support-*"_s);
    QCOMPARE(degradation.canned[0].contains, (QStringList{u"order"_s, u"delivery"_s}));
    QCOMPARE(degradation.canned[0].reply, u"Orders ship daily."_s);
    QCOMPARE(degradation.canned[1].modelGlob, QString());
    QCOMPARE(degradation.canned[1].contains, QStringList{u"hours"_s});
    QCOMPARE(degradation.canned[1].reply, u"9 to 5."_s);
    QCOMPARE(degradation.failSafe, u"Please try again soon."_s);
}

void TestResilienceConfig::keepsDefaultsForAbsentKeys()
{
    const LoadResult result = load(QByteArray(oneProvider) + "retries: {}\nadmission: {}\n"
                                                             "degradation: {}\n");
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const Config &config = *result.config;

    const auto &retries = config.resilience.retries;
    QCOMPARE(retries.backoffBase, 500ms);
    QCOMPARE(retries.backoffJitter, 200ms);
    QCOMPARE(retries.backoffMax, 5000ms);
    QCOMPARE(retries.budgetPercent, 20.0);
    QCOMPARE(retries.minRetriesInFlight, 3);
    QCOMPARE(retries.maxAttempts, 5);
    QCOMPARE(retries.timeoutGradient, 1.5);
    QCOMPARE(retries.maxRetryAfter, 10'000ms);
    QCOMPARE(retries.defaultCoolDown, 1000ms);
    const auto &admission = config.resilience.admission;
    QCOMPARE(admission.maxInFlight, 4096);
    QCOMPARE(admission.defaultTenantRpm, 0);
    QVERIFY(admission.tenants.isEmpty());
    QCOMPARE(admission.failoverCapacityShare, 0.5);
    QCOMPARE(admission.degradedAdmitShare, 0.5);
    QCOMPARE(admission.maxDepth, 5);
    QCOMPARE(admission.overloadLag, 250ms);
    QCOMPARE(admission.maxStartWait, 20s);
    QVERIFY(config.resilience.degradation.canned.isEmpty());
    QVERIFY(config.resilience.degradation.failSafe.isEmpty());
}

void TestResilienceConfig::reportsEveryError_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QStringList>("expectedErrors");

    const QByteArray head(oneProvider); // the sections below start on line 5

    QTest::newRow("unknown retries key")
        << head + "retries:\n  max_attemps: 3\n"
        << QStringList{u"test.yaml:6:3: unknown key `max_attemps` (did you mean "
                       u"`max_attempts`?)"_s};
    QTest::newRow("unknown root key near a section")
        << head + "admision: {}\n"
        << QStringList{u"test.yaml:5:1: unknown key `admision` (did you mean `admission`?)"_s};
    QTest::newRow("section not a map")
        << head + "retries: 3\n"
        << QStringList{u"test.yaml:5:10: `retries` must be a map, got \"3\""_s};
    QTest::newRow("attempts out of range")
        << head + "retries:\n  max_attempts: 0\n"
        << QStringList{u"test.yaml:6:17: `max_attempts` must be at least 1, got \"0\""_s};
    QTest::newRow("percent above 100")
        << head + "retries: {budget_percent: 120}\n"
        << QStringList{u"test.yaml:5:27: `budget_percent` must be between 0 and 100, got "
                       u"\"120\""_s};
    QTest::newRow("gradient below 1")
        << head + "retries: {timeout_gradient: 0.5}\n"
        << QStringList{u"test.yaml:5:29: `timeout_gradient` must be between 1 and 10, got "
                       u"\"0.5\""_s};
    QTest::newRow("bad duration")
        << head + "retries:\n  backoff_base: soon\n"
        << QStringList{u"test.yaml:6:17: `backoff_base` must be a duration such as `250ms`, `3s` "
                       u"or `2m`, got \"soon\""_s};
    QTest::newRow("backoff_max below backoff_base")
        << head + "retries:\n  backoff_base: 2s\n  backoff_max: 1s\n"
        << QStringList{u"test.yaml:7:16: `backoff_max` (1000 ms) must be at least `backoff_base` "
                       u"(2000 ms)"_s};
    QTest::newRow("share above 1")
        << head + "admission:\n  failover_capacity_share: 1.5\n"
        << QStringList{u"test.yaml:6:28: `failover_capacity_share` must be between 0 and 1, got "
                       u"\"1.5\""_s};
    QTest::newRow("overload_lag zero")
        << head + "admission:\n  overload_lag: 0ms\n"
        << QStringList{u"test.yaml:6:17: `overload_lag` must be greater than 0, got \"0ms\""_s};
    QTest::newRow("max_start_wait zero")
        << head + "admission:\n  max_start_wait: 0s\n"
        << QStringList{u"test.yaml:6:19: `max_start_wait` must be greater than 0, got \"0s\""_s};
    QTest::newRow("max_in_flight zero")
        << head + "admission:\n  max_in_flight: 0\n"
        << QStringList{u"test.yaml:6:18: `max_in_flight` must be at least 1, got \"0\""_s};
    QTest::newRow("tenants not a map")
        << head + "admission:\n  tenants: [acme]\n"
        << QStringList{u"test.yaml:6:12: `tenants` must be a map of tenant names to limits, got "
                       u"a list"_s};
    QTest::newRow("tenant without a rate")
        << head + "admission:\n  tenants:\n    acme: {burst: 3}\n"
        << QStringList{u"test.yaml:7:11: tenant `acme` is missing required key "
                       u"`requests_per_minute`"_s};
    QTest::newRow("tenant with a typo")
        << head + "admission:\n  tenants:\n    acme:\n      requests_per_minute: 10\n"
                  "      brust: 3\n"
        << QStringList{u"test.yaml:9:7: unknown key `brust` (did you mean `burst`?)"_s};
    QTest::newRow("tenant limit not a map")
        << head + "admission:\n  tenants:\n    acme: 60\n"
        << QStringList{u"test.yaml:7:11: tenant `acme` must be a map with "
                       u"`requests_per_minute`, got \"60\""_s};
    QTest::newRow("tenant given twice")
        << head + "admission:\n  tenants:\n    acme: {requests_per_minute: 1}\n"
                  "    acme: {requests_per_minute: 2}\n"
        << QStringList{u"test.yaml:8:5: duplicate tenant `acme` (first at line 7)"_s};
    QTest::newRow("zero rate")
        << head + "admission:\n  tenants:\n    acme: {requests_per_minute: 0}\n"
        << QStringList{u"test.yaml:7:33: `requests_per_minute` must be at least 1, got \"0\""_s};
    QTest::newRow("canned not a list")
        << head + "degradation:\n  canned: {reply: x}\n"
        << QStringList{u"test.yaml:6:11: `canned` must be a list of {when, reply} entries, got "
                       u"a map"_s};
    QTest::newRow("canned entry without when and reply")
        << head + "degradation:\n  canned:\n    - {}\n"
        << QStringList{u"test.yaml:7:7: canned answer is missing required key `when`"_s,
                       u"test.yaml:7:7: canned answer is missing required key `reply`"_s};
    QTest::newRow("canned when without conditions")
        << head + "degradation:\n  canned:\n    - when: {}\n      reply: hi\n"
        << QStringList{u"test.yaml:7:13: `when` must name `model`, `contains` or both"_s};
    QTest::newRow("canned when with an unknown condition")
        << head + "degradation:\n  canned:\n    - when: {modle: x}\n      reply: hi\n"
        << QStringList{u"test.yaml:7:14: unknown key `modle` (did you mean `model`?)"_s};
    QTest::newRow("canned empty reply")
        << head + "degradation:\n  canned:\n    - when: {contains: x}\n      reply: \"\"\n"
        << QStringList{u"test.yaml:8:14: `reply` must not be empty"_s};
    QTest::newRow("canned empty keyword")
        << head + "degradation:\n  canned:\n    - when: {contains: [a, \"\"]}\n      reply: hi\n"
        << QStringList{u"test.yaml:7:24: `contains` must not be empty or hold an empty text"_s};
    QTest::newRow("fail_safe empty")
        << head + "degradation:\n  fail_safe: \"\"\n"
        << QStringList{u"test.yaml:6:14: `fail_safe` must not be empty"_s};
}

void TestResilienceConfig::reportsEveryError()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QStringList, expectedErrors);

    const LoadResult result = load(yaml);

    QVERIFY(!result.ok());
    QCOMPARE(errorLines(result), expectedErrors);
}

QTEST_APPLESS_MAIN(TestResilienceConfig)
#include "tst_resilience_config.moc"
