// The usage ledger against a real SQLite file in a temporary state directory: rows land in
// batches on the writer's thread and survive a restart; reports group and filter them, rows still
// in memory included; a damaged or locked database leaves the rows in memory, bounded, until it
// can be written; budgets start seeded from what the file holds.

#include "config/config_loader.h"
#include "config/config_store.h"
#include "storage/state_database.h"
#include "telemetry/trace.h"
#include "usage/pricing.h"
#include "usage/usage_ledger.h"
#include "usage/usage_query.h"

#include <QFile>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace switchyard;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;

namespace {

config::Config pricedConfig()
{
    const config::LoadResult result = config::loadConfigText(
        R"(providers:
  - id: cloud
    kind: simulated
    models: [gpt-4o, small]
pricing:
  models:
    gpt-4o: {input_per_million: 2, output_per_million: 10, cache_read_per_million: 0.5,
             cache_write_per_million: 2.5}
budgets:
  - {tenant: team-a, daily_usd: 1}
)",
        u"gateway.yaml"_s, [](const QString &) { return std::nullopt; });
    if (!result.ok())
        qFatal("fixture does not load");
    return *result.config;
}

const config::PricingConfig &pricing()
{
    static const config::PricingConfig table = pricedConfig().usage.pricing;
    return table;
}

// A finished request as the recorder hands it to its sinks: priced.
telemetry::Trace finished(const QString &tenant, const QString &model, qint64 input, qint64 output,
                          const QDateTime &at = QDateTime::currentDateTimeUtc(),
                          bool estimated = false)
{
    static int sequence = 0;
    telemetry::Trace trace;
    trace.requestId = "req-" + QByteArray::number(++sequence);
    trace.startedAtUtc = at;
    trace.totalMicros = 250000;
    trace.tenant = tenant;
    trace.model = model;
    trace.provider = u"cloud"_s;
    trace.tier = u"light"_s;
    trace.status = 200;
    trace.inputTokens = input;
    trace.outputTokens = output;
    trace.tokensEstimated = estimated;
    usage::priceRecord(trace, pricing());
    return trace;
}

// The same, with `cacheRead` and `cacheWrite` of its input tokens from a prompt cache.
telemetry::Trace finishedCached(const QString &tenant, qint64 input, qint64 cacheRead,
                                qint64 cacheWrite, qint64 output,
                                const QDateTime &at = QDateTime::currentDateTimeUtc())
{
    telemetry::Trace trace = finished(tenant, u"gpt-4o"_s, input, output, at);
    trace.cacheReadTokens = cacheRead;
    trace.cacheWriteTokens = cacheWrite;
    usage::priceRecord(trace, pricing());
    return trace;
}

// Rows in the file, read through a connection of the test's own.
int rowsInFile(const QString &path)
{
    const QString name = u"test-reader"_s;
    int rows = -1;
    {
        storage::OpenedDatabase opened = storage::openStateDatabase(path, name, 100);
        if (!opened.ok())
            return -1;
        QSqlQuery count(opened.database);
        if (count.exec(u"SELECT COUNT(*) FROM usage_ledger"_s) && count.next())
            rows = count.value(0).toInt();
    }
    storage::closeStateDatabase(name);
    return rows;
}

// A report, waited for on this thread's event loop.
usage::UsageReport report(usage::UsageLedger &ledger, const usage::UsageQuery &query)
{
    std::optional<usage::UsageReport> answer;
    QObject context;
    ledger.query(query, &context, [&](const usage::UsageReport &report) { answer = report; });
    if (!QTest::qWaitFor([&] { return answer.has_value(); }, 10000))
        qFatal("no usage report");
    return *answer;
}

usage::UsageQuery today(QList<usage::UsageDimension> groupBy)
{
    usage::UsageQuery query;
    query.groupBy = std::move(groupBy);
    query.from = usage::startOfUtcDay(QDateTime::currentDateTimeUtc());
    query.to = query.from.addDays(1);
    return query;
}

// Waits until everything the writer was asked so far has run: a report is answered after it.
void roundTrip(usage::UsageLedger &ledger)
{
    report(ledger, today({usage::UsageDimension::Tenant}));
}

usage::LedgerOptions optionsAt(const QString &path)
{
    usage::LedgerOptions options;
    options.databasePath = path;
    options.flushInterval = 1h; // only the batch size or an explicit flush writes
    options.retryInterval = 20ms;
    options.busyTimeoutMs = 20;
    return options;
}

} // namespace

class UsageLedgerTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QLoggingCategory::setFilterRules(u"switchyard.usage.info=false"_s); }

    void aRowTakesItsRecordsCountsAndCost()
    {
        telemetry::Trace trace = finished(u"team-a"_s, u"gpt-4o"_s, 1000, 200, {}, true);
        trace.startedAtUtc = QDateTime(QDate(2026, 12, 1), QTime(10, 0), Qt::UTC);
        trace.keyId = u"k1"_s;
        const usage::LedgerRow row = usage::UsageLedger::rowFor(trace);
        QCOMPARE(row.finishedAtMs, trace.startedAtUtc.toMSecsSinceEpoch() + 250);
        QCOMPARE(row.latencyMs, 250);
        QCOMPARE(row.keyId, u"k1"_s);
        QVERIFY(row.tokensEstimated);
        QVERIFY(row.priced);
        QVERIFY(qAbs(row.costUsd - (1000 * 2.0 + 200 * 10.0) / 1e6) < 1e-12);
        QCOMPARE(row.cacheReadTokens, 0); // an estimate says nothing of the cache
        QCOMPARE(row.cacheWriteTokens, 0);
        QCOMPARE(row.cacheSavedUsd, 0.0);

        telemetry::Trace refused = finished(u"team-a"_s, u"other"_s, -1, -1);
        refused.status = 429;
        const usage::LedgerRow unpriced = usage::UsageLedger::rowFor(refused);
        QCOMPARE(unpriced.inputTokens, 0);
        QCOMPARE(unpriced.outputTokens, 0);
        QVERIFY(!unpriced.priced);
        QCOMPARE(unpriced.costUsd, 0.0);
    }

    void aRowKeepsThePromptCacheAndWhatItSaved()
    {
        // 10,000 prompt tokens: 1,000 uncached at $2, 8,000 read at $0.50, 1,000 written at
        // $2.50; 500 output at $10 per million.
        const usage::LedgerRow row =
            usage::UsageLedger::rowFor(finishedCached(u"team-a"_s, 10000, 8000, 1000, 500));
        QCOMPARE(row.inputTokens, 10000);
        QCOMPARE(row.cacheReadTokens, 8000);
        QCOMPARE(row.cacheWriteTokens, 1000);
        QVERIFY(qAbs(row.costUsd - (1000 * 2.0 + 8000 * 0.5 + 1000 * 2.5 + 500 * 10.0) / 1e6) <
                1e-12);
        QVERIFY(qAbs(row.cacheSavedUsd - (8000 * 1.5 - 1000 * 0.5) / 1e6) < 1e-12);
    }

    void rowsLandInBatchesNotPerRequest()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::LedgerOptions options = optionsAt(path);
        options.flushRows = 5;
        usage::UsageLedger ledger(budgets, options);
        for (int i = 0; i < 3; ++i)
            ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10));
        roundTrip(ledger);
        QCOMPARE(rowsInFile(path), 0); // waiting for the batch
        QCOMPARE(ledger.state().rowsInMemory, 3);
        // The report is never behind: it counts the rows still in memory.
        QCOMPARE(report(ledger, today({usage::UsageDimension::Tenant})).groups.value(0).requests,
                 3);

        ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10));
        ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10)); // the fifth: a batch
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 5, 10000);
        QCOMPARE(ledger.state().writtenRows, 5u);

        ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10));
        roundTrip(ledger);
        QCOMPARE(rowsInFile(path), 5);
        ledger.flushSoon();
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 6, 10000);
    }

    // The writer binds each column itself (SQLite's own calls, not Qt's): every value lands as
    // it was, text in any script, and a text left empty is '' rather than NULL.
    void everyColumnLandsAsItWasWritten()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(path));

        const QDateTime at = QDateTime(QDate(2026, 12, 1), QTime(10, 0), Qt::UTC);
        telemetry::Trace full = finishedCached(u"团队-α"_s, 10000, 8000, 1000, 500, at);
        full.keyId = u"clé-1"_s;
        full.route = u"rule: 代码"_s;
        full.status = 201;
        full.shadowOf = "req-live";
        full.responseCache = u"miss"_s;
        full.responseCacheSavedUsd = 0.25;
        telemetry::Trace bare = finished(QString(), u"gpt-4o"_s, -1, -1, at);
        bare.provider = QString();
        bare.tier = QString();
        bare.status = 503;
        ledger.traceFinished(full);
        ledger.traceFinished(bare);
        ledger.flushSoon();
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 2, 10000);

        const QString name = u"test-columns"_s;
        {
            storage::OpenedDatabase opened = storage::openStateDatabase(path, name, 100);
            QVERIFY(opened.ok());
            QSqlQuery rows(opened.database);
            QVERIFY(rows.exec(
                u"SELECT finished_at_ms, request_id, tenant, key_id, model, provider, route, tier, "
                u"input_tokens, output_tokens, tokens_estimated, cost_usd, priced, status, "
                u"latency_ms, cache_read_tokens, cache_write_tokens, cache_saved_usd, shadow_of, "
                u"response_cache, response_cache_saved_usd, typeof(tenant), typeof(provider) "
                u"FROM usage_ledger ORDER BY id"_s));
            QVERIFY(rows.next());
            const usage::LedgerRow expected = usage::UsageLedger::rowFor(full);
            QCOMPARE(rows.value(0).toLongLong(), expected.finishedAtMs);
            QCOMPARE(rows.value(1).toByteArray(), full.requestId);
            QCOMPARE(rows.value(2).toString(), u"团队-α"_s);
            QCOMPARE(rows.value(3).toString(), u"clé-1"_s);
            QCOMPARE(rows.value(4).toString(), u"gpt-4o"_s);
            QCOMPARE(rows.value(5).toString(), u"cloud"_s);
            QCOMPARE(rows.value(6).toString(), u"rule: 代码"_s);
            QCOMPARE(rows.value(7).toString(), u"light"_s);
            QCOMPARE(rows.value(8).toLongLong(), 10000);
            QCOMPARE(rows.value(9).toLongLong(), 500);
            QCOMPARE(rows.value(10).toInt(), 0);
            QCOMPARE(rows.value(11).toDouble(), expected.costUsd);
            QCOMPARE(rows.value(12).toInt(), 1);
            QCOMPARE(rows.value(13).toInt(), 201);
            QCOMPARE(rows.value(14).toLongLong(), 250);
            QCOMPARE(rows.value(15).toLongLong(), 8000);
            QCOMPARE(rows.value(16).toLongLong(), 1000);
            QCOMPARE(rows.value(17).toDouble(), expected.cacheSavedUsd);
            QCOMPARE(rows.value(18).toString(), u"req-live"_s);
            QCOMPARE(rows.value(19).toString(), u"miss"_s);
            QCOMPARE(rows.value(20).toDouble(), 0.25);

            QVERIFY(rows.next());
            QCOMPARE(rows.value(1).toByteArray(), bare.requestId);
            for (int column : {2, 3, 5, 6, 7, 18, 19}) {
                QVERIFY2(!rows.value(column).isNull(), qPrintable(QString::number(column)));
                QCOMPARE(rows.value(column).toString(), QString());
            }
            QCOMPARE(rows.value(21).toString(), u"text"_s);
            QCOMPARE(rows.value(22).toString(), u"text"_s);
            QCOMPARE(rows.value(8).toLongLong(), 0);
            QCOMPARE(rows.value(13).toInt(), 503);
            QVERIFY(!rows.next());
        }
        storage::closeStateDatabase(name);
    }

    // A batch is written 32 rows a statement, the rest one by one: 70 rows take both paths, and
    // every row lands once, in order, with its own values.
    void aLargeBatchLandsRowByRowInOrder()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(path));
        QStringList expected;
        for (int i = 0; i < 70; ++i) {
            const QString tenant = i % 3 == 0 ? u"团队-%1"_s.arg(i) : u"team-%1"_s.arg(i);
            telemetry::Trace trace = finished(tenant, u"gpt-4o"_s, i, 2 * i);
            ledger.traceFinished(trace);
            expected.append(u"%1 %2 %3 %4"_s.arg(QString::fromLatin1(trace.requestId), tenant)
                                .arg(i)
                                .arg(2 * i));
        }
        ledger.flushSoon();
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 70, 10000);
        const QString name = u"test-batch"_s;
        {
            storage::OpenedDatabase opened = storage::openStateDatabase(path, name, 100);
            QVERIFY(opened.ok());
            QSqlQuery rows(opened.database);
            QVERIFY(rows.exec(u"SELECT request_id, tenant, input_tokens, output_tokens "
                              u"FROM usage_ledger ORDER BY id"_s));
            QStringList landed;
            while (rows.next())
                landed.append(
                    u"%1 %2 %3 %4"_s.arg(rows.value(0).toString(), rows.value(1).toString())
                        .arg(rows.value(2).toLongLong())
                        .arg(rows.value(3).toLongLong()));
            QCOMPARE(landed, expected);
        }
        storage::closeStateDatabase(name);
    }

    void requestsRefusedAtAuthenticationLeaveNoRow()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(path));
        const auto refused = [](int status, const QString &outcome) {
            telemetry::Trace trace = finished({}, u"gpt-4o"_s, -1, -1);
            trace.provider.clear();
            trace.tier.clear();
            trace.status = status;
            trace.outcome = outcome;
            return trace;
        };
        ledger.traceFinished(refused(401, u"missing_api_key"_s));
        ledger.traceFinished(refused(401, u"invalid_api_key"_s));
        ledger.traceFinished(refused(503, u"keys_unavailable"_s));
        // A key's own refusals are its usage, and a provider's 401 was a real call.
        telemetry::Trace mismatch = refused(403, u"tenant_mismatch"_s);
        mismatch.keyId = u"key-a"_s;
        mismatch.tenant = u"team-a"_s;
        ledger.traceFinished(mismatch);
        telemetry::Trace providerRefused = finished({}, u"gpt-4o"_s, -1, -1);
        providerRefused.status = 401;
        providerRefused.outcome = u"invalid_api_key"_s;
        ledger.traceFinished(providerRefused);
        ledger.flushSoon();
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 2, 10000);
        QCOMPARE(ledger.state().rowsInMemory, 0);
    }

    void tokenCountsLeaveNoRow()
    {
        // POST /v1/messages/count_tokens uses no tokens at any provider: not usage.
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(path));
        telemetry::Trace counted = finished({}, u"gpt-4o"_s, -1, -1);
        counted.operation = u"count_tokens"_s;
        ledger.traceFinished(counted);
        ledger.traceFinished(finished({}, u"gpt-4o"_s, 10, 5));
        ledger.flushSoon();
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 1, 10000);
        QCOMPARE(ledger.state().rowsInMemory, 0);
    }

    void theIntervalWritesABatchThatIsNotFull()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::LedgerOptions options = optionsAt(path);
        options.flushInterval = 50ms;
        usage::UsageLedger ledger(budgets, options);
        ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10));
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 1, 10000);
    }

    void rowsSurviveARestartAndSeedTheBudgets()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        {
            usage::BudgetTracker budgets(store);
            usage::UsageLedger ledger(budgets, optionsAt(path));
            // 0.6 US dollars each: 100k input tokens at 2 and 40k output tokens at 10 per million.
            ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 100000, 40000));
            ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 100000, 40000));
            QVERIFY(budgets.refusal(u"team-a"_s, {}));
        } // stopping writes what is in memory
        QCOMPARE(rowsInFile(path), 2);

        usage::BudgetTracker budgets(store);
        QVERIFY(!budgets.refusal(u"team-a"_s, {}));
        usage::UsageLedger ledger(budgets, optionsAt(path));
        QVERIFY(budgets.refusal(u"team-a"_s, {})); // seeded before the first request
        QVERIFY(qAbs(budgets.tenantSpentUsd(u"team-a"_s, u"day"_s) - 1.2) < 1e-9);
        const usage::UsageReport seen = report(ledger, today({usage::UsageDimension::Model}));
        QCOMPARE(seen.groups.size(), 1);
        QCOMPARE(seen.groups[0].keys, QStringList{u"gpt-4o"_s});
        QCOMPARE(seen.groups[0].requests, 2);
        QCOMPARE(seen.groups[0].inputTokens, 200000);
        QVERIFY(seen.problem.isEmpty());
    }

    void reportsSumThePromptCacheAndItsSavings()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(path));
        // Saves 8,000 × $1.50 − 1,000 × $0.50 per million: $0.0115.
        ledger.traceFinished(finishedCached(u"team-a"_s, 10000, 8000, 1000, 500));
        // Writes alone cost more than the input price: −2,000 × $0.50 per million.
        ledger.traceFinished(finishedCached(u"team-a"_s, 3000, 0, 2000, 100));
        ledger.flushSoon();
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 2, 10000);
        // One more still in memory: the report adds it to the database's sums.
        ledger.traceFinished(finishedCached(u"team-b"_s, 4000, 4000, 0, 0));
        ledger.traceFinished(finished(u"team-b"_s, u"gpt-4o"_s, 700, 70));

        const usage::UsageReport seen = report(ledger, today({usage::UsageDimension::Tenant}));
        QCOMPARE(seen.rowsInMemory, 2);
        QCOMPARE(seen.groups.size(), 2);
        const usage::UsageGroup &a = seen.groups[0];
        QCOMPARE(a.keys, QStringList{u"team-a"_s});
        QCOMPARE(a.inputTokens, 13000);
        QCOMPARE(a.cacheReadTokens, 8000);
        QCOMPARE(a.cacheWriteTokens, 3000);
        QVERIFY(qAbs(a.cacheSavedUsd - (0.0115 - 0.001)) < 1e-12);
        // (1,000 × $2 + 8,000 × $0.50 + 1,000 × $2.50 + 500 × $10) + (1,000 × $2 + 2,000 × $2.50
        // + 100 × $10) per million.
        QVERIFY(qAbs(a.costUsd - (0.0135 + 0.008)) < 1e-12);
        const usage::UsageGroup &b = seen.groups[1];
        QCOMPARE(b.keys, QStringList{u"team-b"_s});
        QCOMPARE(b.inputTokens, 4700);
        QCOMPARE(b.cacheReadTokens, 4000);
        QCOMPARE(b.cacheWriteTokens, 0);
        QVERIFY(qAbs(b.cacheSavedUsd - 4000 * 1.5 / 1e6) < 1e-12);
    }

    // tests/data/state/previous_release.db: the state file as the release before prompt-cache
    // pricing left it (its .sql beside it says how it was made), with three ledger rows of
    // 2026-11-30, a config version and a client key.
    void aPreviousReleasesDatabaseOpensAndMigrates()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        QVERIFY(QFile::copy(qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") +
                                u"/tests/data/state/previous_release.db"_s,
                            path));
        QVERIFY(QFile::setPermissions(path, QFile::ReadOwner | QFile::WriteOwner));
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(path));
        QVERIFY2(ledger.state().writable, qPrintable(ledger.state().problem));

        usage::UsageQuery lastDay;
        lastDay.groupBy = {usage::UsageDimension::Tenant, usage::UsageDimension::Model};
        lastDay.from = QDateTime(QDate(2026, 11, 30), QTime(0, 0), Qt::UTC);
        lastDay.to = lastDay.from.addDays(1);
        usage::UsageReport old = report(ledger, lastDay);
        QVERIFY2(old.problem.isEmpty(), qPrintable(old.problem));
        QCOMPARE(old.groups.size(), 2);
        QCOMPARE(old.groups[0].keys, (QStringList{u"checkout"_s, u"gpt-4o"_s}));
        QCOMPARE(old.groups[0].requests, 2);
        QCOMPARE(old.groups[0].inputTokens, 2000);
        QCOMPARE(old.groups[0].outputTokens, 300);
        QCOMPARE(old.groups[0].estimatedRequests, 1);
        QVERIFY(qAbs(old.groups[0].costUsd - 0.008) < 1e-12);
        QCOMPARE(old.groups[0].cacheReadTokens, 0); // that release counted no cache
        QCOMPARE(old.groups[0].cacheWriteTokens, 0);
        QCOMPARE(old.groups[0].cacheSavedUsd, 0.0);
        QCOMPARE(old.groups[1].keys, (QStringList{u"search"_s, u"local"_s}));
        QCOMPARE(old.groups[1].unpricedRequests, 1);

        // New rows land beside the old ones, with their cache counts.
        ledger.traceFinished(finishedCached(u"checkout"_s, 10000, 8000, 1000, 500,
                                            QDateTime(QDate(2026, 11, 30), QTime(12, 0), Qt::UTC)));
        ledger.flushSoon();
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 4, 10000);
        const usage::UsageReport both = report(ledger, lastDay);
        QCOMPARE(both.rowsInMemory, 0);
        QCOMPARE(both.groups[0].requests, 3);
        QCOMPARE(both.groups[0].inputTokens, 12000);
        QCOMPARE(both.groups[0].cacheReadTokens, 8000);
        QCOMPARE(both.groups[0].cacheWriteTokens, 1000);
        QVERIFY(qAbs(both.groups[0].cacheSavedUsd - 0.0115) < 1e-12);

        // The other owners' tables are as the old release left them.
        const QString name = u"test-reader"_s;
        {
            storage::OpenedDatabase opened = storage::openStateDatabase(path, name, 100);
            QVERIFY2(opened.ok(), qPrintable(opened.error));
            QSqlQuery query(opened.database);
            QVERIFY(query.exec(u"SELECT request_id, cache_read_tokens, cache_write_tokens, "
                               u"cache_saved_usd FROM usage_ledger ORDER BY id"_s));
            QStringList rows;
            while (query.next())
                rows.append(u"%1 %2 %3 %4"_s.arg(query.value(0).toString())
                                .arg(query.value(1).toLongLong())
                                .arg(query.value(2).toLongLong())
                                .arg(query.value(3).toDouble()));
            QCOMPARE(rows.size(), 4);
            QCOMPARE(rows.mid(0, 3), (QStringList{u"req-old-1 0 0 0"_s, u"req-old-2 0 0 0"_s,
                                                  u"req-old-3 0 0 0"_s}));
            QVERIFY2(rows[3].endsWith(u" 8000 1000 0.0115"_s), qPrintable(rows[3]));
            QVERIFY(query.exec(u"SELECT COUNT(*) FROM config_versions"_s) && query.next());
            QCOMPARE(query.value(0).toInt(), 1);
            QVERIFY(query.exec(u"SELECT id, tenant FROM api_keys"_s) && query.next());
            QCOMPARE(query.value(0).toString(), u"ci-runner"_s);
            // Of the old release's indexes only the time index, the one reports use, is left.
            QVERIFY(query.exec(u"SELECT name FROM sqlite_master WHERE type = 'index' AND "
                               u"tbl_name = 'usage_ledger' ORDER BY name"_s));
            QStringList indexes;
            while (query.next())
                indexes.append(query.value(0).toString());
            QCOMPARE(indexes, QStringList{u"usage_ledger_time"_s});
        }
        storage::closeStateDatabase(name);

        // Migrated once: the next start finds nothing left to add.
        usage::UsageLedger restarted(budgets, optionsAt(path));
        QVERIFY2(restarted.state().writable, qPrintable(restarted.state().problem));
        QCOMPARE(report(restarted, lastDay).groups.value(0).requests, 3);
    }

    void reportsGroupByEachDimensionWithinTheirDates_data()
    {
        QTest::addColumn<QList<usage::UsageDimension>>("groupBy");
        QTest::addColumn<QStringList>("keys"); // each group's keys joined by "|", in order
        QTest::addColumn<QList<qint64>>("requests");
        using D = usage::UsageDimension;
        QTest::newRow("tenant") << QList<D>{D::Tenant} << QStringList{u"a"_s, u"b"_s}
                                << QList<qint64>{3, 1};
        QTest::newRow("key") << QList<D>{D::Key} << QStringList{u"k1"_s, u""_s}
                             << QList<qint64>{2, 2};
        QTest::newRow("model") << QList<D>{D::Model} << QStringList{u"gpt-4o"_s, u"small"_s}
                               << QList<qint64>{3, 1};
        QTest::newRow("provider") << QList<D>{D::Provider} << QStringList{u"cloud"_s}
                                  << QList<qint64>{4};
        QTest::newRow("day") << QList<D>{D::Day} << QStringList{u"2026-11-10"_s, u"2026-11-11"_s}
                             << QList<qint64>{3, 1};
        QTest::newRow("hour") << QList<D>{D::Hour}
                              << QStringList{u"2026-11-10T09:00:00Z"_s, u"2026-11-10T23:00:00Z"_s,
                                             u"2026-11-11T00:00:00Z"_s}
                              << QList<qint64>{2, 1, 1};
        QTest::newRow("day and tenant")
            << QList<D>{D::Day, D::Tenant}
            << QStringList{u"2026-11-10|a"_s, u"2026-11-10|b"_s, u"2026-11-11|a"_s}
            << QList<qint64>{2, 1, 1};
    }
    void reportsGroupByEachDimensionWithinTheirDates()
    {
        QFETCH(QList<usage::UsageDimension>, groupBy);
        QFETCH(QStringList, keys);
        QFETCH(QList<qint64>, requests);
        QTemporaryDir dir;
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(storage::stateDatabasePath(dir.path())));
        const QDate day(2026, 11, 10);
        const auto at = [&](int dayOffset, int hour) {
            return QDateTime(day.addDays(dayOffset), QTime(hour, 0), Qt::UTC);
        };
        auto keyed = finished(u"a"_s, u"gpt-4o"_s, 1000, 1000, at(0, 9));
        keyed.keyId = u"k1"_s;
        ledger.traceFinished(keyed);
        keyed.requestId = "keyed-2";
        ledger.traceFinished(keyed);
        ledger.traceFinished(finished(u"b"_s, u"small"_s, 10, 10, at(0, 23)));
        // Half of them written, half still in memory: the report merges both.
        ledger.flushSoon();
        roundTrip(ledger);
        ledger.traceFinished(finished(u"a"_s, u"gpt-4o"_s, 1000, 1000, at(1, 0)));
        // Outside the dates asked for.
        ledger.traceFinished(finished(u"a"_s, u"gpt-4o"_s, 1000, 1000, at(-1, 23)));
        ledger.traceFinished(finished(u"a"_s, u"gpt-4o"_s, 1000, 1000, at(2, 0)));

        usage::UsageQuery query;
        query.groupBy = groupBy;
        query.from = at(0, 0);
        query.to = at(2, 0);
        const usage::UsageReport seen = report(ledger, query);
        QStringList seenKeys;
        QList<qint64> seenRequests;
        for (const usage::UsageGroup &group : seen.groups) {
            seenKeys.append(group.keys.join(u'|'));
            seenRequests.append(group.requests);
        }
        QCOMPARE(seenKeys, keys);
        QCOMPARE(seenRequests, requests);
        QCOMPARE(seen.rowsInMemory, 3);
    }

    void aDamagedFileKeepsRowsInMemoryUntilItIsReplaced()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        {
            QFile damaged(path);
            QVERIFY(damaged.open(QIODevice::WriteOnly));
            damaged.write(QByteArray(8192, 'x'));
        }
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(path));
        usage::UsageLedgerState state = ledger.state();
        QVERIFY(!state.writable);
        QVERIFY2(state.problem.contains(u"damaged or not a database"_s), qPrintable(state.problem));
        QVERIFY(state.persistent);

        ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10));
        ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10));
        ledger.flushSoon();
        const usage::UsageReport seen = report(ledger, today({usage::UsageDimension::Tenant}));
        QCOMPARE(seen.groups.value(0).requests, 2); // from memory
        QVERIFY(!seen.problem.isEmpty());
        QCOMPARE(ledger.state().rowsInMemory, 2);

        // The operator moves the damaged file away: the next try makes a new one.
        QVERIFY(QFile::rename(path, path + u".damaged"_s));
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 2, 10000);
        QVERIFY(ledger.state().writable);
        QCOMPARE(ledger.state().rowsInMemory, 0);
    }

    void aLockedDatabaseIsRetriedUntilTheRowsLand()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::LedgerOptions options = optionsAt(path);
        options.memoryCapacityRows = 4;
        usage::UsageLedger ledger(budgets, options);
        QVERIFY(ledger.state().writable);

        // Another process holds the file with an exclusive transaction.
        const QString lockName = u"test-lock"_s;
        {
            storage::OpenedDatabase locker = storage::openStateDatabase(path, lockName, 100);
            QVERIFY2(locker.ok(), qPrintable(locker.error));
            QSqlQuery begin(locker.database);
            QVERIFY(begin.exec(u"BEGIN EXCLUSIVE"_s));
            // Said loudly, once: however many tries fail, one warning until it recovers.
            QTest::ignoreMessage(QtWarningMsg,
                                 QRegularExpression(u"^usage ledger: cannot write to .*database "
                                                    u"is locked.*Switchyard goes on serving"_s));
            QTest::failOnWarning(QRegularExpression(u"^usage ledger: cannot write"_s));

            for (int i = 0; i < 6; ++i)
                ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10));
            ledger.flushSoon();
            QTRY_COMPARE_WITH_TIMEOUT(ledger.state().writable, false, 10000);
            const usage::UsageLedgerState state = ledger.state();
            QVERIFY2(state.problem.contains(u"locked"_s), qPrintable(state.problem));
            // Bounded: four kept, the two oldest dropped and counted.
            QTRY_COMPARE_WITH_TIMEOUT(ledger.state().droppedRows, 2u, 10000);
            QCOMPARE(ledger.state().rowsInMemory, 4);

            QSqlQuery end(locker.database);
            QVERIFY(end.exec(u"ROLLBACK"_s));
        }
        storage::closeStateDatabase(lockName);
        // Retried on its own, every retry interval: the rows land without another request.
        QTRY_COMPARE_WITH_TIMEOUT(rowsInFile(path), 4, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(ledger.state().writable, true, 10000);
        QCOMPARE(ledger.state().rowsInMemory, 0);
        QCOMPARE(ledger.state().droppedRows, 2u);
    }

    void theMemoryLimitCountsBothWaitingLists()
    {
        QTemporaryDir dir;
        const QString path = storage::stateDatabasePath(dir.path());
        {
            QFile damaged(path);
            QVERIFY(damaged.open(QIODevice::WriteOnly));
            damaged.write(QByteArray(8192, 'x'));
        }
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::LedgerOptions options = optionsAt(path);
        options.memoryCapacityRows = 4;
        usage::UsageLedger ledger(budgets, options);
        QVERIFY(!ledger.state().writable);
        // Three rows the writer has taken, then three that wait for it to take them.
        for (int i = 0; i < 3; ++i)
            ledger.traceFinished(finished(u"early"_s, u"gpt-4o"_s, 10, 10));
        ledger.flushSoon();
        roundTrip(ledger);
        QCOMPARE(ledger.state().rowsInMemory, 3);
        QTest::ignoreMessage(
            QtWarningMsg,
            QRegularExpression(u"^usage ledger: 4 row\\(s\\) in memory, its limit"_s));
        for (int i = 0; i < 3; ++i)
            ledger.traceFinished(finished(u"late"_s, u"gpt-4o"_s, 10, 10));
        QCOMPARE(ledger.state().rowsInMemory, 4);
        QCOMPARE(ledger.state().droppedRows, 2u);
        // The two dropped are the oldest.
        const usage::UsageReport seen = report(ledger, today({usage::UsageDimension::Tenant}));
        QCOMPARE(seen.rowsInMemory, 4);
        qint64 early = 0;
        qint64 late = 0;
        for (const usage::UsageGroup &group : seen.groups)
            (group.keys.value(0) == u"early"_s ? early : late) += group.requests;
        QCOMPARE(early, 1);
        QCOMPARE(late, 3);
        QCOMPARE(ledger.state().rowsInMemory, 4);
        QCOMPARE(ledger.state().droppedRows, 2u);
    }

    void aReportForAContextThatIsGoneIsDropped()
    {
        config::ConfigStore store(pricedConfig());
        usage::BudgetTracker budgets(store);
        usage::UsageLedger ledger(budgets, optionsAt(QString()));
        ledger.traceFinished(finished(u"team-a"_s, u"gpt-4o"_s, 10, 10));
        bool called = false;
        auto context = std::make_unique<QObject>();
        ledger.query(today({usage::UsageDimension::Tenant}), context.get(),
                     [&](const usage::UsageReport &) { called = true; });
        context.reset();
        roundTrip(ledger); // answered after the first: the first was made by then
        QCoreApplication::processEvents();
        QVERIFY(!called);
    }
};

QTEST_GUILESS_MAIN(UsageLedgerTest)
#include "tst_usage_ledger.moc"
