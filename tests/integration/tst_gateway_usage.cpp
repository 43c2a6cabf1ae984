// Usage and cost on the real engine: token counts from the provider or estimated (streams too),
// the ledger in a state directory that survives a restart, GET /admin/v1/usage, budgets refused
// with 429 at admission and seeded at start, a damaged database that leaves traffic served, and
// the console's bridge asking for a report.

#include "bridge/engine_host.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "storage/state_database.h"
#include "test_client.h"
#include "usage/usage_ledger.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

QByteArray chatBody(bool stream)
{
    return "{\"model\":\"test-model\",\"stream\":" + QByteArray(stream ? "true" : "false") +
           ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
}

struct Answer {
    int status = 0;
    QJsonObject body;
    QByteArray retryAfter;
};

Answer get(quint16 port, const QByteArray &path)
{
    TestClient client(port);
    client.send("GET", "/admin/v1/" + path);
    if (!client.waitForFinished())
        return {};
    return {client.status(), QJsonDocument::fromJson(client.body()).object(), {}};
}

Answer chat(quint16 port, const QByteArray &tenant, bool stream = false,
            const QByteArray &requestId = {})
{
    TestClient client(port);
    QList<QPair<QByteArray, QByteArray>> headers{{"x-switchyard-tenant", tenant}};
    if (!requestId.isEmpty())
        headers.append({"x-request-id", requestId});
    client.post("/v1/chat/completions", chatBody(stream), headers);
    if (!client.waitForFinished())
        return {};
    return {client.status(), QJsonDocument::fromJson(client.body()).object(),
            client.header("retry-after")};
}

// Ten cents a token in and out: a request of "hi" (5 input tokens estimated, 1 output token)
// costs 0.6 US dollars.
config::Config pricedConfig(const FakeUpstream &fake, const QString &stateDirectory = {})
{
    config::Config config = gatewayConfig({providerFor(u"primary"_s, fake, {u"test-model"_s})});
    config.usage.pricing.models.insert(u"test-model"_s,
                                       {100000.0, 100000.0, std::nullopt, std::nullopt});
    config.state.directory = stateDirectory;
    return config;
}

config::BudgetConfig dailyBudget(const QString &tenant, double usd)
{
    config::BudgetConfig budget;
    budget.subject = tenant;
    budget.name = u"tenant "_s + tenant;
    budget.dailyUsd = usd;
    return budget;
}

} // namespace

class GatewayUsageTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
    }

    void aStreamWithoutUsageHasEstimatedTokens()
    {
        FakeUpstream fake;
        fake.streamEvents = 3; // "t0", "t1", "t2": six characters
        auto engine = startEngine(pricedConfig(fake));
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), "a", true, "streamed").status, 200);
        const std::optional<telemetry::Trace> trace = engine->findTrace("streamed");
        QVERIFY(trace);
        QVERIFY(trace->tokensEstimated);
        QCOMPARE(trace->inputTokens, 5);  // "hi" and one message's framing
        QCOMPARE(trace->outputTokens, 2); // six characters of relayed text
    }

    void theProvidersUsageIsTakenAsItIs()
    {
        FakeUpstream fake;
        fake.completionBody =
            R"({"id":"c","object":"chat.completion","model":"fake","choices":[{"index":0,)"
            R"("message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],)"
            R"("usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}})";
        auto engine = startEngine(pricedConfig(fake));
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), "a", false, "counted").status, 200);
        const std::optional<telemetry::Trace> trace = engine->findTrace("counted");
        QVERIFY(trace);
        QVERIFY(!trace->tokensEstimated);
        QCOMPARE(trace->inputTokens, 11);
        QCOMPARE(trace->outputTokens, 7);
    }

    // $0.10 a token in and out, $0.01 a cache read: 11 prompt tokens of which 6 were cached
    // and 7 completion tokens cost 5 × 0.1 + 6 × 0.01 + 7 × 0.1 = $1.26 and saved 6 × 0.09.
    void promptCacheTokensArePricedAndReportedEverywhere()
    {
        FakeUpstream fake;
        fake.completionBody =
            R"({"id":"c","object":"chat.completion","model":"fake","choices":[{"index":0,)"
            R"("message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],)"
            R"("usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18,)"
            R"("prompt_tokens_details":{"cached_tokens":6}}})";
        config::Config config = pricedConfig(fake);
        config.usage.pricing.models[u"test-model"_s].cacheReadPerMillionUsd = 10000.0;
        auto engine = startEngine(config);
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), "a", false, "cached").status, 200);

        const Answer trace = get(engine->port(), "traces/cached");
        QCOMPARE(trace.status, 200);
        QCOMPARE(trace.body[u"input_tokens"_s].toInt(), 11);
        QCOMPARE(trace.body[u"cache_read_tokens"_s].toInt(), 6);
        QVERIFY(trace.body[u"cache_write_tokens"_s].isNull()); // OpenAI counts no writes
        QVERIFY(qAbs(trace.body[u"cost_usd"_s].toDouble() - 1.26) < 1e-9);
        QVERIFY(qAbs(trace.body[u"cache_saved_usd"_s].toDouble() - 0.54) < 1e-9);

        const Answer usage = get(engine->port(), "usage?group_by=tenant");
        QCOMPARE(usage.status, 200);
        for (const QJsonValue &group : {usage.body[u"data"_s][0], usage.body[u"total"_s]}) {
            QCOMPARE(group[u"input_tokens"_s].toInt(), 11);
            QCOMPARE(group[u"cache_read_tokens"_s].toInt(), 6);
            QCOMPARE(group[u"cache_write_tokens"_s].toInt(), 0);
            QVERIFY(qAbs(group[u"cost_usd"_s].toDouble() - 1.26) < 1e-9);
            QVERIFY(qAbs(group[u"cache_saved_usd"_s].toDouble() - 0.54) < 1e-9);
        }
    }

    void aFailedRequestUsedNoTokens()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Status;
        fake.status = 400;
        auto engine = startEngine(pricedConfig(fake));
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), "a", false, "refused").status, 400);
        const std::optional<telemetry::Trace> trace = engine->findTrace("refused");
        QVERIFY(trace);
        QVERIFY(!trace->tokensEstimated);
        QCOMPARE(trace->inputTokens, 0);
        QCOMPARE(trace->outputTokens, 0);
    }

    void theUsageReportGroupsTheLedger()
    {
        FakeUpstream fake;
        auto engine = startEngine(pricedConfig(fake));
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), "a").status, 200);
        QCOMPARE(chat(engine->port(), "a", true).status, 200);
        QCOMPARE(chat(engine->port(), "b").status, 200);

        const Answer byTenant = get(engine->port(), "usage?group_by=tenant");
        QCOMPARE(byTenant.status, 200);
        QCOMPARE(byTenant.body[u"object"_s].toString(), u"usage.report"_s);
        QCOMPARE(byTenant.body[u"currency"_s].toString(), u"USD"_s);
        const QJsonArray rows = byTenant.body[u"data"_s].toArray();
        QCOMPARE(rows.size(), 2);
        const QJsonObject first = rows[0].toObject(); // the highest cost first
        QCOMPARE(first[u"tenant"_s].toString(), u"a"_s);
        QCOMPARE(first[u"requests"_s].toInt(), 2);
        QCOMPARE(first[u"input_tokens"_s].toInt(), 10);
        QCOMPARE(first[u"output_tokens"_s].toInt(), 1 + 2);
        QCOMPARE(first[u"estimated_share"_s].toDouble(), 1.0);
        QVERIFY(qAbs(first[u"cost_usd"_s].toDouble() - 1.3) < 1e-9);
        QCOMPARE(rows[1][u"tenant"_s].toString(), u"b"_s);
        QCOMPARE(byTenant.body[u"total"_s][u"requests"_s].toInt(), 3);
        QVERIFY(byTenant.body[u"ledger"_s][u"writable"_s].toBool());

        const Answer byModel = get(engine->port(), "usage?group_by=model");
        QCOMPARE(byModel.body[u"data"_s][0][u"model"_s].toString(), u"test-model"_s);
        QCOMPARE(byModel.body[u"data"_s][0][u"requests"_s].toInt(), 3);
        const Answer byProvider = get(engine->port(), "usage?group_by=provider");
        QCOMPARE(byProvider.body[u"data"_s][0][u"provider"_s].toString(), u"primary"_s);
        const QString today = QDateTime::currentDateTimeUtc().date().toString(Qt::ISODate);
        const Answer byDay = get(engine->port(), "usage?group_by=day&from=" + today.toLatin1());
        QCOMPARE(byDay.body[u"data"_s][0][u"day"_s].toString(), today);
        QCOMPARE(byDay.body[u"data"_s][0][u"requests"_s].toInt(), 3);
        // Yesterday holds nothing.
        const QString yesterday =
            QDateTime::currentDateTimeUtc().date().addDays(-1).toString(Qt::ISODate);
        const Answer before = get(engine->port(), "usage?from=" + yesterday.toLatin1() +
                                                      "&to=" + yesterday.toLatin1());
        QCOMPARE(before.status, 200);
        QCOMPARE(before.body[u"data"_s].toArray().size(), 0);
    }

    void badReportParametersAre400()
    {
        FakeUpstream fake;
        auto engine = startEngine(pricedConfig(fake));
        QVERIFY(engine);
        const Answer badGroup = get(engine->port(), "usage?group_by=colour");
        QCOMPARE(badGroup.status, 400);
        QCOMPARE(badGroup.body[u"error"_s][u"message"_s].toString(),
                 u"`group_by` must be `tenant`, `key`, `model`, `provider`, `day` or `hour` "
                 u"(several separated by commas), got `colour`."_s);
        QCOMPARE(badGroup.body[u"error"_s][u"param"_s].toString(), u"group_by"_s);
        QCOMPARE(badGroup.body[u"error"_s][u"code"_s].toString(), u"invalid_admin_request"_s);
        const Answer badDate = get(engine->port(), "usage?from=2026-13-01");
        QCOMPARE(badDate.status, 400);
        QCOMPARE(badDate.body[u"error"_s][u"param"_s].toString(), u"from"_s);
    }

    void anExhaustedBudgetIsRefusedWith429UntilItResets()
    {
        FakeUpstream fake;
        config::Config config = pricedConfig(fake);
        config.usage.budgets.append(dailyBudget(u"a"_s, 0.5));
        auto engine = startEngine(config);
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), "a").status, 200); // 0.6 spent: now over
        const int requestsBefore = int(fake.requests().size());
        const Answer refused = chat(engine->port(), "a");
        QCOMPARE(refused.status, 429);
        const QJsonObject error = refused.body[u"error"_s].toObject();
        QCOMPARE(error[u"type"_s].toString(), u"insufficient_quota"_s);
        QCOMPARE(error[u"code"_s].toString(), u"budget_exceeded"_s);
        const QDateTime midnight =
            QDateTime(QDateTime::currentDateTimeUtc().date().addDays(1), QTime(0, 0), Qt::UTC);
        QCOMPARE(error[u"message"_s].toString(),
                 u"Budget `tenant a` is used up: $0.6000 spent of its $0.5000 daily limit (UTC "
                 u"day). It resets at %1."_s.arg(midnight.toString(Qt::ISODate)));
        const qint64 untilMidnight = QDateTime::currentDateTimeUtc().secsTo(midnight);
        QVERIFY2(qAbs(refused.retryAfter.toLongLong() - untilMidnight) <= 5, refused.retryAfter);
        QCOMPARE(int(fake.requests().size()), requestsBefore); // no provider was asked
        QCOMPARE(chat(engine->port(), "b").status, 200);       // another tenant is not

        const Answer budgets = get(engine->port(), "usage/budgets");
        QCOMPARE(budgets.body[u"data"_s][0][u"name"_s].toString(), u"tenant a"_s);
        QCOMPARE(budgets.body[u"data"_s][0][u"window"_s].toString(), u"day"_s);
        QVERIFY(qAbs(budgets.body[u"data"_s][0][u"spent_usd"_s].toDouble() - 0.6) < 1e-9);
        QCOMPARE(engine->snapshot().budgets.size(), 1);
    }

    void theLedgerSurvivesARestartAndSeedsTheBudgets()
    {
        QTemporaryDir state;
        FakeUpstream fake;
        config::Config config = pricedConfig(fake, state.path());
        {
            auto engine = startEngine(config);
            QVERIFY(engine);
            QVERIFY(engine->snapshot().usageLedger.persistent);
            QCOMPARE(chat(engine->port(), "a").status, 200);
            QCOMPARE(chat(engine->port(), "a").status, 200);
        }
        config.usage.budgets.append(dailyBudget(u"a"_s, 1.0));
        auto engine = startEngine(config);
        QVERIFY(engine);
        // Seeded at start with the 1.2 US dollars of the first run: refused at once.
        QCOMPARE(chat(engine->port(), "a").status, 429);
        const Answer report = get(engine->port(), "usage?group_by=tenant");
        QCOMPARE(report.body[u"data"_s][0][u"requests"_s].toInt(), 3); // the 429 is a row too
        QVERIFY(qAbs(report.body[u"data"_s][0][u"cost_usd"_s].toDouble() - 1.2) < 1e-9);
    }

    void aDamagedDatabaseStillServesAndSaysSo()
    {
        QTemporaryDir state;
        {
            QFile damaged(storage::stateDatabasePath(state.path()));
            QVERIFY(damaged.open(QIODevice::WriteOnly));
            damaged.write(QByteArray(4096, '\x7f'));
        }
        FakeUpstream fake;
        QTest::ignoreMessage(QtWarningMsg,
                             QRegularExpression(u"^usage ledger: cannot write to .*damaged"_s));
        // No API key was ever stored in it, so the gateway stays open (tst_gateway_keys has the
        // case where one was).
        auto engine = startEngine(pricedConfig(fake, state.path()));
        QVERIFY(engine);
        QCOMPARE(chat(engine->port(), "a").status, 200);
        const EngineSnapshot snapshot = engine->snapshot();
        QVERIFY(!snapshot.usageLedger.writable);
        QVERIFY2(snapshot.usageLedger.problem.contains(u"damaged or not a database"_s),
                 qPrintable(snapshot.usageLedger.problem));
        QCOMPARE(snapshot.usageLedger.rowsInMemory, 1);
        const Answer report = get(engine->port(), "usage");
        QCOMPARE(report.status, 200);
        QCOMPARE(report.body[u"data"_s][0][u"requests"_s].toInt(), 1); // from memory
        QCOMPARE(report.body[u"ledger"_s][u"writable"_s].toBool(), false);
    }

    void theConsolesBridgeLoadsAReport()
    {
        FakeUpstream fake;
        EngineHost host(pricedConfig(fake));
        QString error;
        QVERIFY2(host.start(&error), qPrintable(error));
        QCOMPARE(chat(host.port(), "a").status, 200);
        std::optional<usage::UsageReport> loaded;
        connect(&host, &EngineBridge::usageLoaded, this,
                [&loaded](quint64 ticket, const usage::UsageReport &report) {
                    if (ticket == 3)
                        loaded = report;
                });
        usage::UsageQuery query;
        query.groupBy = {usage::UsageDimension::Hour, usage::UsageDimension::Model};
        query.from = QDateTime::currentDateTimeUtc().addSecs(-3600);
        query.to = QDateTime::currentDateTimeUtc().addSecs(3600);
        host.loadUsage(3, query);
        QTRY_VERIFY_WITH_TIMEOUT(loaded.has_value(), 10000);
        QCOMPARE(loaded->groups.size(), 1);
        QCOMPARE(loaded->groups[0].keys.value(1), u"test-model"_s);
        QCOMPARE(loaded->groups[0].requests, 1);
        host.shutdown(std::chrono::milliseconds(0));
    }
};

QTEST_GUILESS_MAIN(GatewayUsageTest)
#include "tst_gateway_usage.moc"
