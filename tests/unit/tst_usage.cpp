// Usage and cost, the pure parts: the price math, the `pricing` and `budgets` config sections
// with their errors, the answer-text token estimate, the usage report's parameters, and budgets
// on a hand-driven UTC clock.

#include "config/config_loader.h"
#include "config/config_store.h"
#include "config_error_lines.h"
#include "protocol/token_estimate.h"
#include "usage/budget_tracker.h"
#include "usage/pricing.h"
#include "usage/usage_query.h"

#include <QSignalSpy>
#include <QTest>

using namespace switchyard;
using namespace Qt::StringLiterals;

namespace {

const QByteArray kProviders = "providers:\n"
                              "  - id: cloud\n"
                              "    kind: simulated\n"
                              "    models: [gpt-4o, small]\n";

config::LoadResult load(const QByteArray &sections)
{
    return config::loadConfigText(kProviders + sections, u"gateway.yaml"_s,
                                  [](const QString &) { return std::nullopt; });
}

config::Config configWith(const QByteArray &sections)
{
    config::LoadResult result = load(sections);
    if (!result.ok())
        qFatal("fixture does not load: %s", qPrintable(errorLines(result).join(u'\n')));
    return *result.config;
}

// Where the hand-driven clock of the budget tests starts.
const QDateTime kNoon(QDate(2026, 12, 1), QTime(12, 0), Qt::UTC);

} // namespace

class UsageTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void costIsTokensTimesThePricePerMillion_data()
    {
        QTest::addColumn<QString>("model");
        QTest::addColumn<qint64>("input");
        QTest::addColumn<qint64>("output");
        QTest::addColumn<double>("usd");
        QTest::addColumn<bool>("priced");
        QTest::newRow("input and output")
            << u"gpt-4o"_s << qint64(1000000) << qint64(500000) << 2.5 + 5.0 << true;
        QTest::newRow("a small request")
            << u"gpt-4o"_s << qint64(1200) << qint64(300) << 0.003 + 0.003 << true;
        QTest::newRow("a free local model")
            << u"small"_s << qint64(5000) << qint64(5000) << 0.0 << true;
        QTest::newRow("no price: zero and unpriced")
            << u"other"_s << qint64(1000) << qint64(1000) << 0.0 << false;
        QTest::newRow("unknown counts cost nothing")
            << u"gpt-4o"_s << qint64(-1) << qint64(-1) << 0.0 << true;
    }
    void costIsTokensTimesThePricePerMillion()
    {
        QFETCH(QString, model);
        QFETCH(qint64, input);
        QFETCH(qint64, output);
        QFETCH(double, usd);
        QFETCH(bool, priced);
        config::PricingConfig pricing;
        pricing.models.insert(u"gpt-4o"_s, {2.5, 10.0, std::nullopt, std::nullopt});
        pricing.models.insert(u"small"_s, {0.0, 0.0, std::nullopt, std::nullopt});
        const usage::Cost cost = usage::costOf(pricing, model, {input, output, 0, 0});
        QVERIFY2(qAbs(cost.usd - usd) < 1e-12, qPrintable(QString::number(cost.usd, 'g', 17)));
        QCOMPARE(cost.priced, priced);
        QCOMPARE(cost.cacheSavedUsd, 0.0);
    }

    // Anthropic's list prices per million: $3 input, $0.30 a cache read, $3.75 a cache write,
    // $15 output. 10,000 prompt tokens of which 8,000 read from the cache and 1,000 written.
    void cachedTokensCostTheirOwnPrice_data()
    {
        QTest::addColumn<std::optional<double>>("readPrice");
        QTest::addColumn<std::optional<double>>("writePrice");
        QTest::addColumn<qint64>("cacheRead");
        QTest::addColumn<qint64>("cacheWrite");
        QTest::addColumn<double>("usd");
        QTest::addColumn<double>("saved");
        const std::optional<double> none;
        // 1,000 uncached × $3 + 500 out × $15 = $0.003 + $0.0075 whatever the cache.
        constexpr double kRest = 1000 * 3.0 / 1e6 + 500 * 15.0 / 1e6;
        QTest::newRow("no cache prices: the input price, nothing saved")
            << none << none << qint64(8000) << qint64(1000) << kRest + 9000 * 3.0 / 1e6 << 0.0;
        QTest::newRow("both cache prices")
            << std::optional(0.3) << std::optional(3.75) << qint64(8000) << qint64(1000)
            << kRest + 8000 * 0.3 / 1e6 + 1000 * 3.75 / 1e6
            << 8000 * (3.0 - 0.3) / 1e6 - 1000 * (3.75 - 3.0) / 1e6;
        QTest::newRow("a read price alone: writes cost the input price")
            << std::optional(0.3) << none << qint64(8000) << qint64(1000)
            << kRest + 8000 * 0.3 / 1e6 + 1000 * 3.0 / 1e6 << 8000 * (3.0 - 0.3) / 1e6;
        QTest::newRow("writes alone cost more than the input: saved is negative")
            << std::optional(0.3) << std::optional(3.75) << qint64(0) << qint64(9000)
            << kRest + 9000 * 3.75 / 1e6 << -9000 * (3.75 - 3.0) / 1e6;
        QTest::newRow("unknown cache counts are none")
            << std::optional(0.3) << std::optional(3.75) << qint64(-1) << qint64(-1)
            << kRest + 9000 * 3.0 / 1e6 << 0.0;
        QTest::newRow("a miscount beyond the prompt is held to it")
            << std::optional(0.3) << std::optional(3.75) << qint64(12000) << qint64(500)
            << 10000 * 0.3 / 1e6 + 500 * 15.0 / 1e6 << 10000 * (3.0 - 0.3) / 1e6;
    }
    void cachedTokensCostTheirOwnPrice()
    {
        QFETCH(std::optional<double>, readPrice);
        QFETCH(std::optional<double>, writePrice);
        QFETCH(qint64, cacheRead);
        QFETCH(qint64, cacheWrite);
        QFETCH(double, usd);
        QFETCH(double, saved);
        config::PricingConfig pricing;
        pricing.models.insert(u"claude"_s, {3.0, 15.0, readPrice, writePrice});
        const usage::Cost cost =
            usage::costOf(pricing, u"claude"_s, {10000, 500, cacheRead, cacheWrite});
        QVERIFY2(qAbs(cost.usd - usd) < 1e-12, qPrintable(QString::number(cost.usd, 'g', 17)));
        QVERIFY2(qAbs(cost.cacheSavedUsd - saved) < 1e-12,
                 qPrintable(QString::number(cost.cacheSavedUsd, 'g', 17)));
        // What was paid plus what was saved is what the same tokens cost with no cache at all.
        QVERIFY(qAbs(cost.usd + cost.cacheSavedUsd -
                     usage::costOf(pricing, u"claude"_s, {10000, 500, 0, 0}).usd) < 1e-12);
        QVERIFY(cost.priced);
    }

    void pricingAndBudgetsLoad()
    {
        const config::Config config = configWith(R"(pricing:
  currency: USD
  models:
    gpt-4o: {input_per_million: 2.5, output_per_million: 10, cache_read_per_million: 1.25}
    small: {output_per_million: 0.2}
budgets:
  - tenant: team-a
    daily_usd: 20
    monthly_usd: 300
  - key: ci-key
    name: CI runner
    monthly_usd: 50
)");
        QCOMPARE(config.usage.pricing.models.size(), 2);
        QCOMPARE(config.usage.pricing.models.value(u"gpt-4o"_s).inputPerMillionUsd, 2.5);
        QCOMPARE(config.usage.pricing.models.value(u"gpt-4o"_s).outputPerMillionUsd, 10.0);
        QCOMPARE(config.usage.pricing.models.value(u"gpt-4o"_s).cacheReadPerMillionUsd,
                 std::optional(1.25));
        QCOMPARE(config.usage.pricing.models.value(u"gpt-4o"_s).cacheWritePerMillionUsd,
                 std::nullopt);
        QCOMPARE(config.usage.pricing.models.value(u"small"_s).inputPerMillionUsd, 0.0);
        QCOMPARE(config.usage.pricing.models.value(u"small"_s).cacheReadPerMillionUsd,
                 std::nullopt);
        QCOMPARE(config.usage.budgets.size(), 2);
        const config::BudgetConfig &team = config.usage.budgets[0];
        QCOMPARE(team.scope, config::BudgetConfig::Scope::Tenant);
        QCOMPARE(team.subject, u"team-a"_s);
        QCOMPARE(team.name, u"tenant team-a"_s);
        QCOMPARE(team.dailyUsd, std::optional(20.0));
        QCOMPARE(team.monthlyUsd, std::optional(300.0));
        const config::BudgetConfig &ci = config.usage.budgets[1];
        QCOMPARE(ci.scope, config::BudgetConfig::Scope::Key);
        QCOMPARE(ci.name, u"CI runner"_s);
        QCOMPARE(ci.dailyUsd, std::nullopt);
    }

    void badPricingAndBudgetsAreRefusedWithTheirPlace_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QString>("error");
        QTest::newRow("another currency")
            << QByteArray("pricing:\n  currency: EUR\n")
            << u"gateway.yaml:6:13: `currency` must be `USD`, the one currency prices, costs and "
               u"budgets are kept in; got \"EUR\""_s;
        QTest::newRow("unknown key in pricing")
            << QByteArray("pricing:\n  model: {}\n")
            << u"gateway.yaml:6:3: unknown key `model` (did you mean `models`?)"_s;
        QTest::newRow("a model no provider serves")
            << QByteArray("pricing:\n  models:\n    gpt-4: {input_per_million: 1}\n")
            << u"gateway.yaml:7:5: no provider serves model `gpt-4` (did you mean `gpt-4o`?)"_s;
        QTest::newRow("a negative price")
            << QByteArray("pricing:\n  models:\n    gpt-4o: {input_per_million: -1}\n")
            << u"gateway.yaml:7:33: `input_per_million` must be from 0 to 1000000 US dollars per "
               u"million tokens, got \"-1\""_s;
        QTest::newRow("a price that is not a number")
            << QByteArray("pricing:\n  models:\n    gpt-4o: {output_per_million: cheap}\n")
            << u"gateway.yaml:7:34: `output_per_million` must be a number, got \"cheap\""_s;
        QTest::newRow("a misspelt price key")
            << QByteArray("pricing:\n  models:\n    gpt-4o: {input_per_milion: 1}\n")
            << u"gateway.yaml:7:14: unknown key `input_per_milion` (did you mean "
               u"`input_per_million`?)"_s;
        QTest::newRow("a misspelt cache price key")
            << QByteArray("pricing:\n  models:\n    gpt-4o: {input_per_million: 1, "
                          "cache_reads_per_million: 0.1}\n")
            << u"gateway.yaml:7:36: unknown key `cache_reads_per_million` (did you mean "
               u"`cache_read_per_million`?)"_s;
        QTest::newRow("a negative cache write price")
            << QByteArray("pricing:\n  models:\n    gpt-4o: {input_per_million: 1, "
                          "cache_write_per_million: -0.5}\n")
            << u"gateway.yaml:7:61: `cache_write_per_million` must be from 0 to 1000000 US "
               u"dollars per million tokens, got \"-0.5\""_s;
        QTest::newRow("cache prices alone")
            << QByteArray("pricing:\n  models:\n    gpt-4o: {cache_read_per_million: 0.1}\n")
            << u"gateway.yaml:7:13: the price of `gpt-4o` needs `input_per_million`, "
               u"`output_per_million` or both"_s;
        QTest::newRow("a price that is not a map")
            << QByteArray("pricing:\n  models:\n    gpt-4o: 2.5\n")
            << u"gateway.yaml:7:13: the price of `gpt-4o` must be a map with `input_per_million` "
               u"and `output_per_million`, got \"2.5\""_s;
        QTest::newRow("budgets not a list")
            << QByteArray("budgets: {tenant: a}\n")
            << u"gateway.yaml:5:10: `budgets` must be a list of entries such as `{tenant: "
               u"team-a, daily_usd: 20}`, got a map"_s;
        QTest::newRow("no subject")
            << QByteArray("budgets:\n  - daily_usd: 5\n")
            << u"gateway.yaml:6:5: budget entry 1 needs `tenant` or `key`"_s;
        QTest::newRow("tenant and key")
            << QByteArray("budgets:\n  - {tenant: a, key: b, daily_usd: 5}\n")
            << u"gateway.yaml:6:17: a budget is for a `tenant` or for a `key`, not both; write "
               u"two entries"_s;
        QTest::newRow("no limit") << QByteArray("budgets:\n  - tenant: a\n")
                                  << u"gateway.yaml:6:5: budget `tenant a` needs `daily_usd`, "
                                     u"`monthly_usd` or both"_s;
        QTest::newRow("a zero limit")
            << QByteArray("budgets:\n  - {tenant: a, daily_usd: 0}\n")
            << u"gateway.yaml:6:28: `daily_usd` must be more than 0 US dollars, got \"0\""_s;
        QTest::newRow("two budgets for one tenant")
            << QByteArray("budgets:\n  - {tenant: a, daily_usd: 5}\n  - {tenant: a, monthly_usd: "
                          "50}\n")
            << u"gateway.yaml:7:5: a second budget for tenant a (first at line 6); put "
               u"`daily_usd` and `monthly_usd` in one entry"_s;
        QTest::newRow("unknown budget key")
            << QByteArray("budgets:\n  - {tenant: a, weekly_usd: 5}\n")
            << u"gateway.yaml:6:17: unknown key `weekly_usd`"_s;
    }
    void badPricingAndBudgetsAreRefusedWithTheirPlace()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QString, error);
        const config::LoadResult result = load(yaml);
        QVERIFY(!result.ok());
        QCOMPARE(errorLines(result), QStringList{error});
    }

    void answerTextIsEstimatedFromItsCharacters_data()
    {
        QTest::addColumn<QList<QByteArray>>("events");
        QTest::addColumn<qint64>("tokens");
        QTest::newRow("a completion's message")
            << QList<QByteArray>{"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":"
                                 "\"Hello there, friend\"}}]}"}
            << qint64(5); // 19 ASCII characters
        QTest::newRow("stream deltas add up")
            << QList<QByteArray>{"{\"choices\":[{\"delta\":{\"content\":\"abcd\"}}]}",
                                 "{\"choices\":[{\"delta\":{\"content\":\"efgh\"}}]}",
                                 "{\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}"}
            << qint64(2);
        QTest::newRow("escapes count once")
            << QList<QByteArray>{"{\"choices\":[{\"delta\":{\"content\":\"a\\nb\\\"c\\u4e2d\"}}]}"}
            << qint64(2 + 1); // a, newline, b, quote, c: 5 ASCII characters; one ideograph
        QTest::newRow("CJK is a token each")
            << QList<QByteArray>{QByteArray("{\"choices\":[{\"delta\":{\"content\":\"") +
                                 QString(u"你好世界"_s).toUtf8() + "\"}}]}"}
            << qint64(4);
        QTest::newRow("tool call arguments count")
            << QList<QByteArray>{"{\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":"
                                 "{\"name\":\"f\",\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}}]}"
                                 "}]}"}
            << qint64(4); // {"city":"Oslo"}: 15 characters
        QTest::newRow("values read whole: an escaped backslash, a name as a value")
            << QList<QByteArray>{"{\"id\":\"x\\\\\",\"object\":\"content\",\"choices\":[{\"delta\":"
                                 "{\"content\" :\r\n \"abcdefgh\"}}]}"}
            << qint64(2); // abcdefgh: 8 characters; `x\\` and `content` are values
        QTest::newRow("null content and other members count nothing")
            << QList<
                   QByteArray>{"{\"id\":\"content\",\"choices\":[{\"delta\":{\"content\":null}}]}"}
            << qint64(0);
    }
    void answerTextIsEstimatedFromItsCharacters()
    {
        QFETCH(QList<QByteArray>, events);
        QFETCH(qint64, tokens);
        protocol::AnswerTextTally tally;
        for (const QByteArray &event : events)
            tally.add(event);
        QCOMPARE(tally.estimatedTokens(), tokens);
    }

    void reportParametersAreRead_data()
    {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QStringList>("groupBy");
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::newRow("default: today by tenant")
            << u""_s << QStringList{u"tenant"_s} << u"2026-12-01T00:00:00Z"_s
            << u"2026-12-02T00:00:00Z"_s;
        for (const QString &key :
             {u"tenant"_s, u"key"_s, u"model"_s, u"provider"_s, u"day"_s, u"hour"_s})
            QTest::newRow(qPrintable(u"group_by="_s + key))
                << u"group_by="_s + key << QStringList{key} << u"2026-12-01T00:00:00Z"_s
                << u"2026-12-02T00:00:00Z"_s;
        QTest::newRow("two dimensions")
            << u"group_by=day,model"_s << QStringList{u"day"_s, u"model"_s}
            << u"2026-12-01T00:00:00Z"_s << u"2026-12-02T00:00:00Z"_s;
        QTest::newRow("dates: to includes its day")
            << u"from=2026-11-01&to=2026-11-30"_s << QStringList{u"tenant"_s}
            << u"2026-11-01T00:00:00Z"_s << u"2026-12-01T00:00:00Z"_s;
        QTest::newRow("RFC 3339 times with an offset")
            << u"from=2026-12-01T08:00:00%2B08:00&to=2026-12-01T10:30:00Z"_s
            << QStringList{u"tenant"_s} << u"2026-12-01T00:00:00Z"_s << u"2026-12-01T10:30:00Z"_s;
    }
    void reportParametersAreRead()
    {
        QFETCH(QString, query);
        QFETCH(QStringList, groupBy);
        QFETCH(QString, from);
        QFETCH(QString, to);
        const auto parsed = usage::parseUsageQuery(
            QUrlQuery(query), QDateTime(QDate(2026, 12, 1), QTime(15, 30), Qt::UTC));
        if (const auto *problem = std::get_if<usage::QueryProblem>(&parsed))
            QFAIL(qPrintable(problem->message));
        const usage::UsageQuery &read = std::get<usage::UsageQuery>(parsed);
        QStringList names;
        for (usage::UsageDimension dimension : read.groupBy)
            names.append(usage::dimensionName(dimension));
        QCOMPARE(names, groupBy);
        QCOMPARE(read.from.toString(Qt::ISODate), from);
        QCOMPARE(read.to.toString(Qt::ISODate), to);
    }

    void badReportParametersAreRefused_data()
    {
        QTest::addColumn<QString>("query");
        QTest::addColumn<QString>("message");
        QTest::addColumn<QString>("param");
        QTest::newRow("unknown dimension")
            << u"group_by=team"_s
            << u"`group_by` must be `tenant`, `key`, `model`, `provider`, `day` or `hour` "
               u"(several separated by commas), got `team`."_s
            << u"group_by"_s;
        QTest::newRow("a dimension twice")
            << u"group_by=day,day"_s << u"`group_by` names `day` twice."_s << u"group_by"_s;
        QTest::newRow("not a date")
            << u"from=yesterday"_s
            << u"`from` must be an ISO date such as `2026-12-01` or an RFC 3339 time such as "
               u"`2026-12-01T14:00:00Z`, got `yesterday`."_s
            << u"from"_s;
        QTest::newRow("a time without its offset")
            << u"to=2026-12-01T10:00:00"_s
            << u"`to` must be an ISO date such as `2026-12-01` or an RFC 3339 time such as "
               u"`2026-12-01T14:00:00Z`, got `2026-12-01T10:00:00`."_s
            << u"to"_s;
        QTest::newRow("from after to")
            << u"from=2026-12-05&to=2026-12-01"_s
            << u"`from` (2026-12-05T00:00:00Z) must be before `to` (2026-12-02T00:00:00Z)."_s
            << u"from"_s;
    }
    void badReportParametersAreRefused()
    {
        QFETCH(QString, query);
        QFETCH(QString, message);
        QFETCH(QString, param);
        const auto parsed =
            usage::parseUsageQuery(QUrlQuery(query), QDateTime::currentDateTimeUtc());
        QVERIFY(std::holds_alternative<usage::QueryProblem>(parsed));
        QCOMPARE(std::get<usage::QueryProblem>(parsed).message, message);
        QCOMPARE(std::get<usage::QueryProblem>(parsed).param, param);
    }

    void anExhaustedBudgetRefusesUntilItsWindowResets()
    {
        config::ConfigStore store(configWith("budgets:\n  - {tenant: team-a, daily_usd: 1}\n"));
        timing::ManualClock clock(kNoon);
        usage::BudgetTracker budgets(store, clock);
        budgets.addSpend(u"team-a"_s, {}, 0.6);
        QVERIFY(!budgets.refusal(u"team-a"_s, {}));
        budgets.addSpend(u"team-a"_s, {}, 0.5);
        budgets.addSpend(u"team-b"_s, {}, 5.0); // no budget: never refused
        QVERIFY(!budgets.refusal(u"team-b"_s, {}));

        const std::optional<protocol::ApiError> refused = budgets.refusal(u"team-a"_s, {});
        QVERIFY(refused);
        QCOMPARE(refused->status, 429);
        QCOMPARE(refused->type, u"insufficient_quota"_s);
        QCOMPARE(refused->code, u"budget_exceeded"_s);
        QCOMPARE(refused->message,
                 u"Budget `tenant team-a` is used up: $1.10 spent of its $1.00 daily limit (UTC "
                 u"day). It resets at 2026-12-02T00:00:00Z."_s);
        QCOMPARE(refused->retryAfter, QByteArray("43200")); // noon to midnight

        clock.advanceTo(QDateTime(QDate(2026, 12, 1), QTime(23, 59, 59), Qt::UTC));
        QCOMPARE(budgets.refusal(u"team-a"_s, {})->retryAfter, QByteArray("1"));
        clock.advanceTo(QDateTime(QDate(2026, 12, 2), QTime(0, 0), Qt::UTC));
        QVERIFY(!budgets.refusal(u"team-a"_s, {}));
        QCOMPARE(budgets.tenantSpentUsd(u"team-a"_s, u"day"_s), 0.0);
        QCOMPARE(budgets.tenantSpentUsd(u"team-a"_s, u"month"_s), 1.1);
    }

    void aMonthlyKeyBudgetResetsAtTheMonthsEnd()
    {
        config::ConfigStore store(configWith("budgets:\n  - {key: k1, monthly_usd: 10}\n"));
        timing::ManualClock clock(kNoon);
        usage::BudgetTracker budgets(store, clock);
        budgets.addSpend(u"any"_s, u"k1"_s, 10.0);
        const std::optional<protocol::ApiError> refused = budgets.refusal(u"other"_s, u"k1"_s);
        QVERIFY(refused);
        QCOMPARE(refused->message, u"Budget `key k1` is used up: $10.00 spent of its $10.00 "
                                   u"monthly limit (UTC month). It resets at "
                                   u"2027-01-01T00:00:00Z."_s);
        QVERIFY(!budgets.refusal(u"other"_s, u"k2"_s));
        QVERIFY(!budgets.refusal(u"any"_s, {})); // the tenant has no budget of its own
        clock.advanceTo(QDateTime(QDate(2026, 12, 31), QTime(23, 0), Qt::UTC));
        QVERIFY(budgets.refusal(u"other"_s, u"k1"_s));
        clock.advanceTo(QDateTime(QDate(2027, 1, 1), QTime(0, 0), Qt::UTC));
        QVERIFY(!budgets.refusal(u"other"_s, u"k1"_s));
    }

    void budgetsListEachWindowWithItsSpendAndReset()
    {
        config::ConfigStore store(
            configWith("budgets:\n  - {tenant: a, name: Team A, daily_usd: 2, monthly_usd: 40}\n"));
        timing::ManualClock clock(kNoon);
        usage::BudgetTracker budgets(store, clock);
        budgets.addSpend(u"a"_s, {}, 0.5);
        const QList<usage::BudgetStatus> statuses = budgets.budgets();
        QCOMPARE(statuses.size(), 2);
        QCOMPARE(statuses[0].name, u"Team A"_s);
        QCOMPARE(statuses[0].scope, u"tenant"_s);
        QCOMPARE(statuses[0].window, u"day"_s);
        QCOMPARE(statuses[0].limitUsd, 2.0);
        QCOMPARE(statuses[0].spentUsd, 0.5);
        QCOMPARE(statuses[0].fraction(), 0.25);
        QCOMPARE(statuses[0].resetsAt.toString(Qt::ISODate), u"2026-12-02T00:00:00Z"_s);
        QCOMPARE(statuses[1].window, u"month"_s);
        QCOMPARE(statuses[1].resetsAt.toString(Qt::ISODate), u"2027-01-01T00:00:00Z"_s);
    }

    void eachNewTenthOfABudgetIsAnnouncedOnce()
    {
        config::ConfigStore store(configWith("budgets:\n  - {tenant: a, daily_usd: 10}\n"));
        timing::ManualClock clock(kNoon);
        usage::BudgetTracker budgets(store, clock);
        QSignalSpy crossed(&budgets, &usage::BudgetTracker::fractionStepCrossed);
        budgets.addSpend(u"a"_s, {}, 0.5); // 5 %
        QCOMPARE(crossed.size(), 0);
        budgets.addSpend(u"a"_s, {}, 0.6); // 11 %
        budgets.addSpend(u"a"_s, {}, 0.1); // 12 %: the same tenth
        QCOMPARE(crossed.size(), 1);
        QCOMPARE(crossed[0][1].toInt(), 10);
        budgets.addSpend(u"a"_s, {}, 7.0); // 82 %
        QCOMPARE(crossed.size(), 2);
        QCOMPARE(crossed[1][1].toInt(), 80);
        QCOMPARE(crossed[1][0].value<usage::BudgetStatus>().name, u"tenant a"_s);
        budgets.addSpend(u"a"_s, {}, 5.0); // 132 %: capped at 100
        QCOMPARE(crossed.last()[1].toInt(), 100);
        // A new day starts the announcements again.
        clock.advance(std::chrono::hours(24));
        budgets.addSpend(u"a"_s, {}, 1.0);
        QCOMPARE(crossed.last()[1].toInt(), 10);
    }

    void aSeedAddsWhatEarlierRunsSpentInTheSameWindows()
    {
        config::ConfigStore store(configWith("budgets:\n  - {tenant: a, daily_usd: 1}\n"));
        timing::ManualClock clock(kNoon);
        usage::BudgetTracker budgets(store, clock);
        usage::SpendSeed seed;
        seed.dayStart = usage::startOfUtcDay(clock.utcNow());
        seed.monthStart = usage::startOfUtcMonth(clock.utcNow());
        seed.tenantDayUsd.insert(u"a"_s, 1.5);
        seed.tenantMonthUsd.insert(u"a"_s, 3.0);
        budgets.addSeed(seed);
        QVERIFY(budgets.refusal(u"a"_s, {}));
        QCOMPARE(budgets.tenantSpentUsd(u"a"_s, u"month"_s), 3.0);

        // A seed read on a day that is over counts for the month only.
        usage::BudgetTracker later(store, clock);
        seed.dayStart = seed.dayStart.addDays(-1);
        later.addSeed(seed);
        QVERIFY(!later.refusal(u"a"_s, {}));
        QCOMPARE(later.tenantSpentUsd(u"a"_s, u"month"_s), 3.0);
    }

    void spendOfManyTenantsIsForgottenWhenItsMonthIsOver()
    {
        config::ConfigStore store(configWith("budgets:\n  - {tenant: a, daily_usd: 10}\n"));
        timing::ManualClock clock(kNoon);
        usage::BudgetTracker budgets(store, clock);
        // Without client keys the tenant is a client's header: any number of them.
        for (int index = 0; index < 1000; ++index)
            budgets.addSpend(u"tenant-%1"_s.arg(index), u"key-%1"_s.arg(index), 0.01);
        budgets.addSpend(u"a"_s, {}, 1.0);
        QCOMPARE(budgets.trackedSpendEntries(), 2001);
        // A new day keeps the month's spend, and the month is all that is kept.
        clock.advance(std::chrono::hours(24));
        QCOMPARE(budgets.trackedSpendEntries(), 2001);
        QCOMPARE(budgets.tenantSpentUsd(u"tenant-7"_s, u"month"_s), 0.01);
        clock.advanceTo(QDateTime(QDate(2027, 1, 1), QTime(0, 0), Qt::UTC));
        budgets.addSpend(u"tenant-new"_s, {}, 0.5);
        QCOMPARE(budgets.trackedSpendEntries(), 1);
        QCOMPARE(budgets.tenantSpentUsd(u"a"_s, u"month"_s), 0.0);
        QCOMPARE(budgets.tenantSpentUsd(u"tenant-new"_s, u"day"_s), 0.5);
    }

    void inAFleetTheOthersSpendCountsButOnlyTheOwnIsHandedOut()
    {
        config::ConfigStore store(configWith("budgets:\n  - {tenant: a, daily_usd: 10}\n"));
        timing::ManualClock clock(kNoon);
        usage::BudgetTracker budgets(store, clock);
        QSignalSpy crossed(&budgets, &usage::BudgetTracker::fractionStepCrossed);
        budgets.setSharing(true);
        budgets.addSpend(u"a"_s, u"bot"_s, 2.0);
        budgets.addSpend(u"a"_s, u"bot"_s, 1.0);
        const QList<usage::SubjectSpend> changed = budgets.takeChangedOwnSpend();
        QCOMPARE(changed.size(), 2); // the tenant and the key, each once
        for (const usage::SubjectSpend &spend : changed) {
            QCOMPARE(spend.dayUsd, 3.0);
            QCOMPARE(spend.monthUsd, 3.0);
        }
        QVERIFY(budgets.takeChangedOwnSpend().isEmpty()); // handed out once

        // The other nodes spent $6.5 of the tenant's budget: it counts, and it is announced.
        budgets.setOthersSpend({true, u"a"_s, 6.5, 6.5});
        QCOMPARE(budgets.tenantSpentUsd(u"a"_s, u"day"_s), 9.5);
        QCOMPARE(crossed.last()[1].toInt(), 90);
        QVERIFY(!budgets.refusal(u"a"_s, {}));
        budgets.setOthersSpend({true, u"a"_s, 7.0, 7.0});
        QVERIFY(budgets.refusal(u"a"_s, {}));
        // ... but never goes out again as this node's own.
        QVERIFY(budgets.takeChangedOwnSpend().isEmpty());
        QCOMPARE(budgets.allOwnSpend().size(), 2);

        // A new day forgets the others' day until they report the new one.
        clock.advance(std::chrono::hours(24));
        QVERIFY(!budgets.refusal(u"a"_s, {}));
        QCOMPARE(budgets.tenantSpentUsd(u"a"_s, u"month"_s), 10.0);
    }
};

QTEST_GUILESS_MAIN(UsageTest)
#include "tst_usage.moc"
