#include "config/config_sections.h"

#include <limits>

namespace switchyard::config {

using namespace Qt::StringLiterals;
using std::chrono::milliseconds;

namespace {

const QList<QLatin1StringView> alertsKeys{"evaluate_every"_L1, "events_kept"_L1, "rules"_L1,
                                          "webhook"_L1};
const QList<QLatin1StringView> webhookKeys{"url"_L1,     "headers"_L1, "timeout"_L1,
                                           "retries"_L1, "backoff"_L1, "queue"_L1};

// Each rule's keys: its threshold's own word, then what every rule of its family shares.
QList<QLatin1StringView> ruleKeys(AlertRuleKind kind)
{
    const QList<QLatin1StringView> timing{"enabled"_L1, "for"_L1, "clear_after"_L1, "severity"_L1};
    switch (kind) {
    case AlertRuleKind::TierSuccessRate:
        return timing + QList{"below"_L1, "window"_L1, "min_requests"_L1};
    case AlertRuleKind::TierErrorRate:
        return timing + QList{"above"_L1, "window"_L1, "min_requests"_L1};
    case AlertRuleKind::TierLatencyP95:
        return timing + QList{"factor"_L1, "window"_L1, "min_requests"_L1, "baseline"_L1,
                              "baseline_min_samples"_L1};
    case AlertRuleKind::FailSafeAnswers:
        return timing + QList{"min_answers"_L1, "window"_L1};
    case AlertRuleKind::BudgetUsed:
        return timing + QList{"above"_L1};
    }
    return timing;
}

QList<QLatin1StringView> ruleNames()
{
    QList<QLatin1StringView> names;
    for (int kind = 0; kind < kAlertRuleKinds; ++kind)
        names.append(alertRuleName(AlertRuleKind(kind)));
    return names;
}

// Far more than a person means: a bigger number is a typo.
constexpr qint64 kMostEventsKept = 100'000;
constexpr qint64 kMostRequests = 1'000'000'000;
constexpr qint64 kMostRetries = 10;
// The evaluator keeps ten-second steps for the longest window plus the longest baseline
// (alerts/tier_windows.h): a window or baseline must fit in them.
constexpr milliseconds kLongestWindow{std::chrono::minutes(30)};
constexpr milliseconds kLongestBaseline{std::chrono::hours(1)};

void readRule(YamlReader &reader, const MapEntry &entry, AlertRuleKind kind, AlertRuleConfig &rule)
{
    const std::optional<KeyedMap> section = reader.readSection(entry, ruleKeys(kind));
    if (!section)
        return;
    if (const MapEntry *enabled = section->find("enabled"_L1)) {
        if (const auto value = reader.readBool(*enabled))
            rule.enabled = *value;
    }
    // A rate is a fraction: 90 % is written 0.9, so `below: 90` is a mistake worth naming.
    const auto readFraction = [&](const MapEntry &value) {
        if (const auto number = reader.readNumber(value)) {
            if (*number > 0.0 && *number < 1.0 + 1e-12)
                rule.threshold = *number;
            else
                reader.reportValue(value, u"`%1` is a fraction between 0 and 1 (0.9 for 90 %), "
                                          u"got %2"_s.arg(value.name, describe(value.value)));
        }
    };
    if (const MapEntry *below = section->find("below"_L1))
        readFraction(*below);
    if (const MapEntry *above = section->find("above"_L1))
        readFraction(*above);
    if (const MapEntry *factor = section->find("factor"_L1)) {
        if (const auto number = reader.readNumber(*factor)) {
            if (*number > 1.0)
                rule.threshold = *number;
            else
                reader.reportValue(*factor, u"`factor` must be greater than 1 (2 for twice the "
                                            u"baseline), got %1"_s.arg(describe(factor->value)));
        }
    }
    if (const MapEntry *answers = section->find("min_answers"_L1)) {
        if (const auto count = reader.readInteger(*answers, 1, kMostRequests))
            rule.threshold = double(*count);
    }
    if (const MapEntry *holdFor = section->find("for"_L1)) {
        if (const auto duration = reader.readDuration(*holdFor, ZeroDuration::Allowed))
            rule.holdFor = *duration;
    }
    if (const MapEntry *clearAfter = section->find("clear_after"_L1)) {
        if (const auto duration = reader.readDuration(*clearAfter, ZeroDuration::Allowed))
            rule.clearAfter = *duration;
    }
    if (const MapEntry *window = section->find("window"_L1)) {
        if (const auto duration = reader.readDuration(*window, ZeroDuration::Rejected)) {
            if (*duration < std::chrono::seconds(10) || *duration > kLongestWindow)
                reader.reportValue(*window, u"`window` must be from 10s to 30m, got %1"_s.arg(
                                                describe(window->value)));
            else
                rule.window = *duration;
        }
    }
    if (const MapEntry *requests = section->find("min_requests"_L1)) {
        if (const auto count = reader.readInteger(*requests, 1, kMostRequests))
            rule.minRequests = int(*count);
    }
    if (const MapEntry *baseline = section->find("baseline"_L1)) {
        if (const auto duration = reader.readDuration(*baseline, ZeroDuration::Rejected)) {
            if (*duration < std::chrono::minutes(1) || *duration > kLongestBaseline)
                reader.reportValue(*baseline, u"`baseline` must be from 1m to 1h, got %1"_s.arg(
                                                  describe(baseline->value)));
            else
                rule.baseline = *duration;
        }
    }
    if (const MapEntry *samples = section->find("baseline_min_samples"_L1)) {
        if (const auto count = reader.readInteger(*samples, 1, kMostRequests))
            rule.baselineMinSamples = int(*count);
    }
    if (const MapEntry *severity = section->find("severity"_L1)) {
        if (const auto text = reader.readString(*severity)) {
            if (*text == u"warning"_s)
                rule.severity = AlertSeverity::Warning;
            else if (*text == u"critical"_s)
                rule.severity = AlertSeverity::Critical;
            else
                reader.reportValue(*severity,
                                   u"`severity` must be `warning` or `critical`, got %1"_s.arg(
                                       describe(severity->value)));
        }
    }
}

// The webhook's URL, written in the file or `{env: NAME}`: a Slack or Mattermost incoming
// webhook's URL is its credential, so it may live in the environment, and then no message shows it.
void readWebhookUrl(YamlReader &reader, const EnvironmentLookup &environment, const MapEntry &url,
                    QUrl &target)
{
    QString text;
    QString variable;
    if (url.value.IsMap()) {
        const KeyedMap keys = reader.readKeys(url.value, {"env"_L1});
        const MapEntry *env = keys.find("env"_L1);
        if (!env) {
            reader.reportMissing(url.value, u"`url`"_s, "env"_L1);
            return;
        }
        const auto name = reader.readString(*env);
        if (!name)
            return;
        const std::optional<QByteArray> value = environment(*name);
        if (!value) {
            reader.reportValue(*env, u"environment variable %1 is not set"_s.arg(*name));
            return;
        }
        variable = *name;
        text = QString::fromUtf8(*value).trimmed();
    } else if (const auto written = reader.readString(url)) {
        text = *written;
    } else {
        return;
    }
    const QUrl parsed(text, QUrl::StrictMode);
    const bool httpScheme = parsed.scheme() == u"http"_s || parsed.scheme() == u"https"_s;
    if (parsed.isValid() && httpScheme && !parsed.host().isEmpty() && !parsed.hasFragment()) {
        target = parsed;
        return;
    }
    const QString expected = u"an http or https URL such as `https://hooks.example.com/alerts`"_s;
    if (variable.isEmpty())
        reader.reportValue(url, u"`url` must be %1, got %2"_s.arg(expected, describe(url.value)));
    else
        reader.reportValue(
            url, u"`url` from environment variable %1 must be %2"_s.arg(variable, expected));
}

void readWebhook(YamlReader &reader, const EnvironmentLookup &environment, const MapEntry &entry,
                 std::optional<AlertWebhookConfig> &webhook)
{
    const std::optional<KeyedMap> section = reader.readSection(entry, webhookKeys);
    if (!section)
        return;
    AlertWebhookConfig hook;
    const qsizetype errorsBefore = reader.errorCount();
    if (const MapEntry *url = section->find("url"_L1))
        readWebhookUrl(reader, environment, *url, hook.url);
    else
        reader.reportMissing(entry.value, u"`alerts.webhook`"_s, "url"_L1);
    if (const MapEntry *headers = section->find("headers"_L1))
        readHeaderMap(reader, environment, *headers, hook.headers);
    if (const MapEntry *timeout = section->find("timeout"_L1)) {
        if (const auto duration = reader.readDuration(*timeout, ZeroDuration::Rejected))
            hook.timeout = *duration;
    }
    if (const MapEntry *retries = section->find("retries"_L1)) {
        if (const auto count = reader.readInteger(*retries, 0, kMostRetries))
            hook.retries = int(*count);
    }
    if (const MapEntry *backoff = section->find("backoff"_L1)) {
        if (const auto duration = reader.readDuration(*backoff, ZeroDuration::Allowed))
            hook.backoff = *duration;
    }
    if (const MapEntry *queue = section->find("queue"_L1)) {
        if (const auto count = reader.readInteger(*queue, 1, kMostEventsKept))
            hook.queue = int(*count);
    }
    if (reader.errorCount() == errorsBefore)
        webhook = std::move(hook);
}

} // namespace

QLatin1StringView alertRuleName(AlertRuleKind kind)
{
    switch (kind) {
    case AlertRuleKind::TierSuccessRate:
        return "tier_success_rate"_L1;
    case AlertRuleKind::TierErrorRate:
        return "tier_error_rate"_L1;
    case AlertRuleKind::TierLatencyP95:
        return "tier_latency_p95"_L1;
    case AlertRuleKind::FailSafeAnswers:
        return "fail_safe_answers"_L1;
    case AlertRuleKind::BudgetUsed:
        return "budget_used"_L1;
    }
    return "unknown"_L1;
}

QLatin1StringView alertSeverityName(AlertSeverity severity)
{
    return severity == AlertSeverity::Critical ? "critical"_L1 : "warning"_L1;
}

AlertRuleConfig alertRuleDefaults(AlertRuleKind kind)
{
    using namespace std::chrono_literals;
    AlertRuleConfig rule;
    switch (kind) {
    case AlertRuleKind::TierSuccessRate:
        // The seed: "any tier's success rate below 90 % for 3 minutes" is one of the only two
        // things worth waking someone for.
        rule.threshold = 0.90;
        rule.holdFor = 3min;
        rule.severity = AlertSeverity::Critical;
        break;
    case AlertRuleKind::TierErrorRate:
        // The seed: "error rate above 5 % for 5 minutes in a row".
        rule.threshold = 0.05;
        rule.holdFor = 5min;
        break;
    case AlertRuleKind::TierLatencyP95:
        // The seed: "P95 latency above twice the baseline"; the issue: the baseline is the
        // previous hour's p95, trusted from 100 samples.
        rule.threshold = 2.0;
        rule.holdFor = 5min;
        break;
    case AlertRuleKind::FailSafeAnswers:
        // The seed's other page-worthy event: the fail-safe answering at all.
        rule.threshold = 1;
        rule.holdFor = 0s;
        rule.severity = AlertSeverity::Critical;
        break;
    case AlertRuleKind::BudgetUsed:
        rule.threshold = 0.80;
        rule.holdFor = 0s;
        break;
    }
    return rule;
}

AlertsConfig::AlertsConfig()
{
    for (int kind = 0; kind < kAlertRuleKinds; ++kind)
        rules.append(alertRuleDefaults(AlertRuleKind(kind)));
}

QList<QLatin1StringView> alertsRootKeys()
{
    return {"alerts"_L1};
}

void checkAlertsSection(YamlReader &reader, const EnvironmentLookup &environment,
                        const KeyedMap &root, Config &config)
{
    const MapEntry *entry = root.find("alerts"_L1);
    if (!entry)
        return;
    const std::optional<KeyedMap> section = reader.readSection(*entry, alertsKeys);
    if (!section)
        return;
    AlertsConfig &alerts = config.alerts;
    if (const MapEntry *every = section->find("evaluate_every"_L1)) {
        if (const auto duration = reader.readDuration(*every, ZeroDuration::Rejected)) {
            if (*duration < milliseconds(100) || *duration > std::chrono::minutes(1))
                reader.reportValue(*every,
                                   u"`evaluate_every` must be from 100ms to 1m, got %1"_s.arg(
                                       describe(every->value)));
            else
                alerts.evaluateEvery = *duration;
        }
    }
    if (const MapEntry *kept = section->find("events_kept"_L1)) {
        if (const auto count = reader.readInteger(*kept, 1, kMostEventsKept))
            alerts.eventsKept = int(*count);
    }
    if (const MapEntry *rules = section->find("rules"_L1)) {
        if (const std::optional<KeyedMap> named = reader.readSection(*rules, ruleNames())) {
            for (int kind = 0; kind < kAlertRuleKinds; ++kind) {
                if (const MapEntry *rule = named->find(alertRuleName(AlertRuleKind(kind))))
                    readRule(reader, *rule, AlertRuleKind(kind), alerts.rules[kind]);
            }
        }
    }
    if (const MapEntry *webhook = section->find("webhook"_L1))
        readWebhook(reader, environment, *webhook, alerts.webhook);
}

} // namespace switchyard::config
