// `alerts`: the rules' defaults when the section is absent (the seed articles' numbers), every
// key, and every error a person can make in them, each with its FILE:LINE:COL.
#include "config/config_loader.h"
#include "config_error_lines.h"

#include <QtTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using switchyard::config::AlertRuleConfig;
using switchyard::config::AlertRuleKind;
using switchyard::config::AlertsConfig;
using switchyard::config::AlertSeverity;
using switchyard::config::ConfiguredValue;
using switchyard::config::LoadResult;

namespace {

constexpr auto oneSimulatedProvider = "providers:\n"
                                      "  - id: sim\n"
                                      "    kind: simulated\n"
                                      "    models: [demo]\n";

LoadResult load(const QByteArray &alerts)
{
    const auto environment = [](const QString &name) -> std::optional<QByteArray> {
        if (name == u"HOOK_TOKEN"_s)
            return "Bearer hk-123"_ba;
        if (name == u"HOOK_URL"_s)
            return "https://hooks.example.test/services/T1/B2/secret\n"_ba;
        if (name == u"NOT_A_URL"_s)
            return "hooks.example.test/secret"_ba;
        return std::nullopt;
    };
    return switchyard::config::loadConfigText(QByteArray(oneSimulatedProvider) + alerts,
                                              u"test.yaml"_s, environment);
}

} // namespace

class TestAlertsConfig : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void appliesTheSeedDefaultsWithoutTheSection();
    void loadsEveryKey();
    void keepsTheDefaultsOfRulesNotMentioned();
    void readsTheWebhookUrlFromTheEnvironment();
    void reportsEveryError_data();
    void reportsEveryError();
};

void TestAlertsConfig::appliesTheSeedDefaultsWithoutTheSection()
{
    const LoadResult result = load({});
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const AlertsConfig &alerts = result.config->alerts;
    QCOMPARE(alerts.evaluateEvery, 5000ms);
    QCOMPARE(alerts.eventsKept, 100);
    QVERIFY(!alerts.webhook);

    const AlertRuleConfig &success = alerts.rule(AlertRuleKind::TierSuccessRate);
    QVERIFY(success.enabled);
    QCOMPARE(success.threshold, 0.90);
    QCOMPARE(success.holdFor, 180000ms);
    QCOMPARE(success.window, 60000ms);
    QCOMPARE(success.minRequests, 20);
    QCOMPARE(success.clearAfter, 60000ms);
    QCOMPARE(success.severity, AlertSeverity::Critical);

    const AlertRuleConfig &errors = alerts.rule(AlertRuleKind::TierErrorRate);
    QCOMPARE(errors.threshold, 0.05);
    QCOMPARE(errors.holdFor, 300000ms);
    QCOMPARE(errors.severity, AlertSeverity::Warning);

    const AlertRuleConfig &latency = alerts.rule(AlertRuleKind::TierLatencyP95);
    QCOMPARE(latency.threshold, 2.0);
    QCOMPARE(latency.baseline, 3600000ms);
    QCOMPARE(latency.baselineMinSamples, 100);

    const AlertRuleConfig &failSafe = alerts.rule(AlertRuleKind::FailSafeAnswers);
    QCOMPARE(failSafe.threshold, 1.0);
    QCOMPARE(failSafe.holdFor, 0ms);
    QCOMPARE(failSafe.severity, AlertSeverity::Critical);

    const AlertRuleConfig &budget = alerts.rule(AlertRuleKind::BudgetUsed);
    QCOMPARE(budget.threshold, 0.80);
    QCOMPARE(budget.holdFor, 0ms);
}

void TestAlertsConfig::loadsEveryKey()
{
    const LoadResult result = load("alerts:\n"
                                   "  evaluate_every: 2s\n"
                                   "  events_kept: 500\n"
                                   "  rules:\n"
                                   "    tier_success_rate:\n"
                                   "      below: 0.8\n"
                                   "      for: 2m\n"
                                   "      window: 30s\n"
                                   "      min_requests: 50\n"
                                   "      clear_after: 3m\n"
                                   "      severity: warning\n"
                                   "    tier_error_rate: {enabled: false, above: 0.1}\n"
                                   "    tier_latency_p95:\n"
                                   "      factor: 3\n"
                                   "      baseline: 30m\n"
                                   "      baseline_min_samples: 500\n"
                                   "    fail_safe_answers: {min_answers: 5, window: 5m}\n"
                                   "    budget_used: {above: 0.95, severity: critical}\n"
                                   "  webhook:\n"
                                   "    url: https://hooks.example.test/services/T1\n"
                                   "    headers:\n"
                                   "      Authorization: {env: HOOK_TOKEN}\n"
                                   "      X-Team: platform\n"
                                   "    timeout: 2s\n"
                                   "    retries: 5\n"
                                   "    backoff: 250ms\n"
                                   "    queue: 20\n");
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const AlertsConfig &alerts = result.config->alerts;
    QCOMPARE(alerts.evaluateEvery, 2000ms);
    QCOMPARE(alerts.eventsKept, 500);
    const AlertRuleConfig &success = alerts.rule(AlertRuleKind::TierSuccessRate);
    QCOMPARE(success.threshold, 0.8);
    QCOMPARE(success.holdFor, 120000ms);
    QCOMPARE(success.window, 30000ms);
    QCOMPARE(success.minRequests, 50);
    QCOMPARE(success.clearAfter, 180000ms);
    QCOMPARE(success.severity, AlertSeverity::Warning);
    QVERIFY(!alerts.rule(AlertRuleKind::TierErrorRate).enabled);
    QCOMPARE(alerts.rule(AlertRuleKind::TierErrorRate).threshold, 0.1);
    const AlertRuleConfig &latency = alerts.rule(AlertRuleKind::TierLatencyP95);
    QCOMPARE(latency.threshold, 3.0);
    QCOMPARE(latency.baseline, 1800000ms);
    QCOMPARE(latency.baselineMinSamples, 500);
    QCOMPARE(alerts.rule(AlertRuleKind::FailSafeAnswers).threshold, 5.0);
    QCOMPARE(alerts.rule(AlertRuleKind::FailSafeAnswers).window, 300000ms);
    QCOMPARE(alerts.rule(AlertRuleKind::BudgetUsed).threshold, 0.95);
    QCOMPARE(alerts.rule(AlertRuleKind::BudgetUsed).severity, AlertSeverity::Critical);

    QVERIFY(alerts.webhook);
    QCOMPARE(alerts.webhook->url, QUrl(u"https://hooks.example.test/services/T1"_s));
    const QList<ConfiguredValue> headers{{"Authorization", "Bearer hk-123", u"HOOK_TOKEN"_s},
                                         {"X-Team", "platform", {}}};
    QCOMPARE(alerts.webhook->headers, headers);
    QCOMPARE(alerts.webhook->timeout, 2000ms);
    QCOMPARE(alerts.webhook->retries, 5);
    QCOMPARE(alerts.webhook->backoff, 250ms);
    QCOMPARE(alerts.webhook->queue, 20);
}

void TestAlertsConfig::keepsTheDefaultsOfRulesNotMentioned()
{
    const LoadResult result = load("alerts:\n"
                                   "  rules:\n"
                                   "    tier_error_rate: {for: 10m}\n");
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const AlertsConfig &alerts = result.config->alerts;
    QCOMPARE(alerts.rule(AlertRuleKind::TierErrorRate).holdFor, 600000ms);
    QCOMPARE(alerts.rule(AlertRuleKind::TierErrorRate).threshold, 0.05);
    QCOMPARE(alerts.rule(AlertRuleKind::TierSuccessRate).threshold, 0.90);
    QCOMPARE(alerts.rule(AlertRuleKind::TierSuccessRate).holdFor, 180000ms);
}

void TestAlertsConfig::readsTheWebhookUrlFromTheEnvironment()
{
    const LoadResult result = load("alerts:\n"
                                   "  webhook: {url: {env: HOOK_URL}}\n");
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    QCOMPARE(result.config->alerts.webhook->url,
             QUrl(u"https://hooks.example.test/services/T1/B2/secret"_s));
}

void TestAlertsConfig::reportsEveryError_data()
{
    QTest::addColumn<QByteArray>("alerts");
    QTest::addColumn<QStringList>("errors");

    QTest::newRow("unknown key in the section")
        << "alerts:\n  rule: {}\n"_ba
        << QStringList{u"test.yaml:6:3: unknown key `rule` (did you mean `rules`?)"_s};
    QTest::newRow("unknown rule")
        << "alerts:\n  rules:\n    tier_succes_rate: {below: 0.5}\n"_ba
        << QStringList{
               u"test.yaml:7:5: unknown key `tier_succes_rate` (did you mean `tier_success_rate`?)"_s};
    QTest::newRow("a key of another rule")
        << "alerts:\n  rules:\n    tier_success_rate: {above: 0.5}\n"_ba
        << QStringList{u"test.yaml:7:25: unknown key `above`"_s};
    QTest::newRow("a percentage written as a whole number")
        << "alerts:\n  rules:\n    tier_success_rate: {below: 90}\n"_ba
        << QStringList{u"test.yaml:7:32: `below` is a fraction between 0 and 1 (0.9 for 90 %), "
                       u"got \"90\""_s};
    QTest::newRow("a factor of one")
        << "alerts:\n  rules:\n    tier_latency_p95: {factor: 1}\n"_ba
        << QStringList{u"test.yaml:7:32: `factor` must be greater than 1 (2 for twice the "
                       u"baseline), got \"1\""_s};
    QTest::newRow("a window shorter than a step")
        << "alerts:\n  rules:\n    tier_error_rate: {window: 5s}\n"_ba
        << QStringList{u"test.yaml:7:31: `window` must be from 10s to 30m, got \"5s\""_s};
    QTest::newRow("a baseline longer than an hour")
        << "alerts:\n  rules:\n    tier_latency_p95: {baseline: 2h}\n"_ba
        << QStringList{u"test.yaml:7:34: `baseline` must be from 1m to 1h, got \"2h\""_s};
    QTest::newRow("no minimum of requests")
        << "alerts:\n  rules:\n    tier_error_rate: {min_requests: 0}\n"_ba
        << QStringList{u"test.yaml:7:37: `min_requests` must be at least 1, got \"0\""_s};
    QTest::newRow("an unknown severity")
        << "alerts:\n  rules:\n    budget_used: {severity: page}\n"_ba
        << QStringList{u"test.yaml:7:29: `severity` must be `warning` or `critical`, got "
                       u"\"page\""_s};
    QTest::newRow("enabled is not a boolean")
        << "alerts:\n  rules:\n    fail_safe_answers: {enabled: maybe}\n"_ba
        << QStringList{u"test.yaml:7:34: `enabled` must be true or false, got \"maybe\""_s};
    QTest::newRow("a webhook without a url")
        << "alerts:\n  webhook: {timeout: 2s}\n"_ba
        << QStringList{u"test.yaml:6:12: `alerts.webhook` is missing required key `url`"_s};
    QTest::newRow("a webhook url that is not http")
        << "alerts:\n  webhook: {url: \"ftp://hooks.example.test\"}\n"_ba
        << QStringList{u"test.yaml:6:18: `url` must be an http or https URL such as "
                       u"`https://hooks.example.com/alerts`, got \"ftp://hooks.example.test\""_s};
    QTest::newRow("a webhook header from a variable that is not set")
        << "alerts:\n  webhook: {url: \"http://127.0.0.1:9\", headers: {X-Key: {env: NOPE}}}\n"_ba
        << QStringList{u"test.yaml:6:63: environment variable NOPE is not set"_s};
    QTest::newRow("a webhook url from a variable that is not set")
        << "alerts:\n  webhook: {url: {env: NOPE}}\n"_ba
        << QStringList{u"test.yaml:6:24: environment variable NOPE is not set"_s};
    // The variable's value is the credential: the message names the variable only.
    QTest::newRow("a webhook url from a variable that is not a URL")
        << "alerts:\n  webhook: {url: {env: NOT_A_URL}}\n"_ba
        << QStringList{u"test.yaml:6:18: `url` from environment variable NOT_A_URL must be an "
                       u"http or https URL such as `https://hooks.example.com/alerts`"_s};
    QTest::newRow("too many retries")
        << "alerts:\n  webhook: {url: \"http://127.0.0.1:9\", retries: 11}\n"_ba
        << QStringList{u"test.yaml:6:49: `retries` must be at most 10, got \"11\""_s};
    QTest::newRow("an evaluation period of an hour")
        << "alerts:\n  evaluate_every: 1h\n"_ba
        << QStringList{u"test.yaml:6:19: `evaluate_every` must be from 100ms to 1m, got \"1h\""_s};
}

void TestAlertsConfig::reportsEveryError()
{
    QFETCH(QByteArray, alerts);
    QFETCH(QStringList, errors);
    const LoadResult result = load(alerts);
    QVERIFY(!result.ok());
    QCOMPARE(errorLines(result), errors);
}

QTEST_GUILESS_MAIN(TestAlertsConfig)
#include "tst_alerts_config.moc"
