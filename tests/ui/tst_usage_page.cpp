// The Usage page on a fake bridge answering scripted reports: what it asks for per range and
// breakdown, how a report becomes stacked series (the largest five and "other", every bucket of
// the range), stale answers dropped by ticket, today's top spenders under the model tester, the
// banner when the ledger cannot write, and the screenshot in docs/screenshots.

#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/common/usd_format.h"
#include "ui/shell/main_window.h"
#include "ui/shell/translation.h"
#include "ui/usage/usage_chart.h"
#include "ui/usage/usage_page.h"

#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QProgressBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocumentFragment>
#include <QTranslator>
#include <cmath>

using namespace switchyard;
using namespace switchyard::ui;
using switchyard::testing::FakeEngineBridge;
using namespace Qt::StringLiterals;

namespace {

const QDateTime kNow(QDate(2026, 12, 1), QTime(15, 20), Qt::UTC);

config::Config bridgeConfig()
{
    config::Config config;
    config::ProviderConfig provider;
    provider.id = u"sim"_s;
    provider.kind = config::ProviderKind::Simulated;
    config.providers.append(provider);
    return config;
}

usage::UsageGroup group(QStringList keys, double usd, qint64 requests, qint64 input, qint64 output,
                        qint64 estimated = 0)
{
    usage::UsageGroup group;
    group.keys = std::move(keys);
    group.costUsd = usd;
    group.requests = requests;
    group.inputTokens = input;
    group.outputTokens = output;
    group.estimatedRequests = estimated;
    return group;
}

// `group` with a prompt cache: `read` and `written` of its input tokens, and what that saved.
usage::UsageGroup cached(usage::UsageGroup group, qint64 read, qint64 written, double saved)
{
    group.cacheReadTokens = read;
    group.cacheWriteTokens = written;
    group.cacheSavedUsd = saved;
    return group;
}

// `group` with the response cache: `hits` and `misses` of its requests, and what the hits saved.
usage::UsageGroup withResponseCache(usage::UsageGroup group, qint64 hits, qint64 misses,
                                    double saved)
{
    group.responseCacheHits = hits;
    group.responseCacheMisses = misses;
    group.responseCacheSavedUsd = saved;
    return group;
}

// A working day of a team's gateway: each tenant's spend follows office hours.
usage::UsageReport demoReport(const usage::UsageQuery &query)
{
    usage::UsageReport report;
    const bool byTenant = query.groupBy.value(1) == usage::UsageDimension::Tenant ||
                          query.groupBy.value(0) == usage::UsageDimension::Tenant;
    const QList<QPair<QString, double>> tenants{
        {u"checkout"_s, 1.0},     {u"search"_s, 0.7},     {u"support-bot"_s, 0.45},
        {u"data-science"_s, 0.3}, {u"mobile-app"_s, 0.2}, {u"internal-tools"_s, 0.08},
        {QString(), 0.04}};
    const QList<QPair<QString, double>> models{{u"gpt-4o"_s, 1.0},
                                               {u"claude-sonnet"_s, 0.6},
                                               {u"qwen2.5-32b"_s, 0.25},
                                               {u"gpt-4o-mini"_s, 0.15}};
    const auto &names = byTenant ? tenants : models;
    if (query.groupBy.size() == 1) { // today's top spenders
        for (const auto &[name, weight] : tenants)
            report.groups.append(
                cached(group({name}, 18.4 * weight, qint64(2400 * weight), qint64(3.1e6 * weight),
                             qint64(6.2e5 * weight), qint64(310 * weight)),
                       qint64(1.24e6 * weight), qint64(6.2e4 * weight), 2.79 * weight));
        return report;
    }
    const bool hourly = query.groupBy.value(0) == usage::UsageDimension::Hour;
    for (QDateTime bucket = query.from; bucket < query.to && bucket <= kNow;
         bucket = hourly ? bucket.addSecs(3600) : bucket.addDays(1)) {
        const double hour = hourly ? bucket.time().hour() : 12.0;
        // Office hours in UTC+1, and quieter weekends over the days.
        double load = hourly ? std::exp(-std::pow((hour - 11.5) / 4.0, 2.0)) + 0.05 : 1.0;
        if (!hourly && bucket.date().dayOfWeek() >= 6)
            load = 0.35;
        if (!hourly)
            load *= 0.85 + 0.15 * std::sin(bucket.date().day());
        const QString key =
            hourly ? bucket.toString(Qt::ISODate) : bucket.date().toString(Qt::ISODate);
        for (const auto &[name, weight] : names) {
            const double usd = (hourly ? 2.2 : 24.0) * load * weight;
            // An evaluation suite on a cached route: about a third of its lookups hit.
            report.groups.append(withResponseCache(
                cached(group({key, name}, usd, qint64(usd * 130), qint64(usd * 170000),
                             qint64(usd * 34000), qint64(usd * 13)),
                       qint64(usd * 68000), qint64(usd * 3400), usd * 0.15),
                qint64(usd * 14), qint64(usd * 27), usd * 0.11));
        }
    }
    return report;
}

} // namespace

class UsagePageTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

    void showingThePageAsksForTodayAndTheTopSpenders()
    {
        FakeEngineBridge bridge(bridgeConfig());
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        page.resize(1200, 800);
        page.show();
        QCOMPARE(bridge.usageQueries.size(), 2);
        const usage::UsageQuery &chart = bridge.usageQueries[0];
        QCOMPARE(chart.groupBy, (QList<usage::UsageDimension>{usage::UsageDimension::Hour,
                                                              usage::UsageDimension::Tenant}));
        QCOMPARE(chart.from, QDateTime(QDate(2026, 12, 1), QTime(0, 0), Qt::UTC));
        QCOMPARE(chart.to, QDateTime(QDate(2026, 12, 2), QTime(0, 0), Qt::UTC));
        const usage::UsageQuery &top = bridge.usageQueries[1];
        QCOMPARE(top.groupBy, QList<usage::UsageDimension>{usage::UsageDimension::Tenant});
        QCOMPARE(top.from, chart.from);
    }

    void eachRangeAndBreakdownAsksItsOwnReport_data()
    {
        QTest::addColumn<int>("range");
        QTest::addColumn<int>("breakdown");
        QTest::addColumn<usage::UsageDimension>("bucket");
        QTest::addColumn<usage::UsageDimension>("by");
        QTest::addColumn<QDate>("from");
        QTest::addColumn<int>("buckets");
        QTest::newRow("today by model") << 0 << 1 << usage::UsageDimension::Hour
                                        << usage::UsageDimension::Model << QDate(2026, 12, 1) << 24;
        QTest::newRow("7 days by tenant")
            << 1 << 0 << usage::UsageDimension::Day << usage::UsageDimension::Tenant
            << QDate(2026, 11, 25) << 7;
        QTest::newRow("30 days by model")
            << 2 << 1 << usage::UsageDimension::Day << usage::UsageDimension::Model
            << QDate(2026, 11, 2) << 30;
    }
    void eachRangeAndBreakdownAsksItsOwnReport()
    {
        QFETCH(int, range);
        QFETCH(int, breakdown);
        QFETCH(usage::UsageDimension, bucket);
        QFETCH(usage::UsageDimension, by);
        QFETCH(QDate, from);
        QFETCH(int, buckets);
        FakeEngineBridge bridge(bridgeConfig());
        bridge.usageReportFor = demoReport;
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        page.show();
        page.breakdownBox()->setCurrentIndex(breakdown);
        page.rangeBox()->setCurrentIndex(range);
        const usage::UsageQuery &asked = bridge.usageQueries[bridge.usageQueries.size() - 2];
        QCOMPARE(asked.groupBy, (QList<usage::UsageDimension>{bucket, by}));
        QCOMPARE(asked.from.date(), from);
        QCOMPARE(asked.to.date(), QDate(2026, 12, 2));
        QCOMPARE(page.chartData().bucketKeys.size(), buckets);
    }

    void aReportBecomesTheLargestFiveAndOther()
    {
        FakeEngineBridge bridge(bridgeConfig());
        bridge.usageReportFor = demoReport;
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        page.show();
        const UsageChartData &data = page.chartData();
        QCOMPARE(data.bucketLabels.first(), u"00"_s);
        QCOMPARE(data.bucketLabels.last(), u"23"_s);
        QCOMPARE(page.spendChart()->legendNames(),
                 (QStringList{u"checkout"_s, u"search"_s, u"support-bot"_s, u"data-science"_s,
                              u"mobile-app"_s, u"Other"_s}));
        QCOMPARE(page.tokensChart()->seriesCount(), 6);
        // "Other" holds internal-tools and requests without a tenant.
        const UsageSeries &other = data.series.last();
        QVERIFY(other.isOther);
        double expected = 0.0;
        for (const usage::UsageGroup &group :
             demoReport(chartQuery(UsageRange::Today, UsageBreakdown::Tenant, kNow)).groups) {
            if (group.keys[1] == u"internal-tools"_s || group.keys[1].isEmpty())
                expected += group.costUsd;
        }
        QVERIFY(qAbs(other.totalSpendUsd - expected) < 1e-9);
        // Hours after now have no data but are on the axis.
        QCOMPARE(data.series.first().spendUsd.size(), 24);
        QCOMPARE(data.series.first().spendUsd.last(), 0.0);
        QVERIFY(page.spendChart()->axisMaximum() >= data.spendUsd / 24.0);
        QVERIFY2(page.totalsLabel()->text().contains(formatUsd(data.spendUsd)),
                 qPrintable(page.totalsLabel()->text()));
    }

    void inAFleetTheTotalsSayWhoseUsageTheyAre()
    {
        FakeEngineBridge bridge(bridgeConfig());
        QString problem;
        bridge.usageReportFor = [&problem](const usage::UsageQuery &query) {
            usage::UsageReport report = demoReport(query);
            report.fleetNodes = {u"gw-2"_s, u"gw-3"_s};
            report.fleetProblem = problem;
            return report;
        };
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        page.show();
        const auto lastLine = [&page] {
            return QTextDocumentFragment::fromHtml(page.totalsLabel()->text())
                .toPlainText()
                .split(u'\n')
                .last();
        };
        QCOMPARE(lastLine(), u"The whole fleet: this node and gw-2, gw-3"_s);
        problem = u"Redis is unreachable: the report is this node's usage only"_s;
        page.rangeBox()->setCurrentIndex(1); // asks again
        QCOMPARE(lastLine(),
                 u"This node only: Redis is unreachable: the report is this node's usage only"_s);
    }

    void thePromptCacheSavingsAreShown_data()
    {
        QTest::addColumn<double>("saved");
        QTest::addColumn<QString>("line");
        QTest::newRow("saved") << 41.2
                               << u"Prompt-cache savings: $41.20  ·  21,000,000 input tokens "
                                  u"read from the prompt cache, 1,000,000 written to it"_s;
        QTest::newRow("writes cost more than the reads saved")
            << -1.2
            << u"Prompt-cache savings: -$1.20, as cache writes cost more than the reads saved  "
               u"·  21,000,000 input tokens read from the prompt cache, 1,000,000 written to it"_s;
    }
    void thePromptCacheSavingsAreShown()
    {
        QFETCH(double, saved);
        QFETCH(QString, line);
        FakeEngineBridge bridge(bridgeConfig());
        bridge.usageReportFor = [saved](const usage::UsageQuery &query) {
            usage::UsageReport report;
            const QString bucket = query.groupBy.value(0) == usage::UsageDimension::Hour
                                       ? u"2026-12-01T09:00:00Z"_s
                                       : u"2026-12-01"_s;
            const QStringList keys = query.groupBy.size() == 1 ? QStringList{u"checkout"_s}
                                                               : QStringList{bucket, u"checkout"_s};
            report.groups.append(cached(group(keys, 120.0, 900, 30'000'000, 2'000'000), 21'000'000,
                                        1'000'000, saved));
            return report;
        };
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        QAbstractItemModelTester tester(page.topSpenders(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        page.show();
        QCOMPARE(page.chartData().cacheReadTokens, 21'000'000);
        QCOMPARE(page.chartData().cacheWriteTokens, 1'000'000);
        QCOMPARE(page.chartData().cacheSavedUsd, saved);
        const QStringList lines = QTextDocumentFragment::fromHtml(page.totalsLabel()->text())
                                      .toPlainText()
                                      .replace(QChar::Nbsp, u' ')
                                      .split(u'\n');
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines[1], line);
        QVERIFY(page.totalsLabel()->toolTip().startsWith(u"Prompt-cache savings: what the input "
                                                         u"tokens read from or written to"_s));

        // Each tenant's, in its spend's tooltip.
        const QModelIndex spend = page.topSpenders()->index(0, TopSpendersModel::SpendColumn);
        QCOMPARE(spend.data().toString(), u"$120.00"_s);
        QCOMPARE(spend.data(Qt::ToolTipRole).toString(),
                 u"Prompt-cache savings: "_s + formatUsd(saved) +
                     u"\n21,000,000 input tokens read from the prompt cache, 1,000,000 written "
                     u"to it"_s);
    }

    void theResponseCacheSavingsAreShownApartFromThePromptCaches()
    {
        FakeEngineBridge bridge(bridgeConfig());
        bridge.usageReportFor = [](const usage::UsageQuery &query) {
            usage::UsageReport report;
            const QStringList keys = query.groupBy.size() == 1
                                         ? QStringList{u"evals"_s}
                                         : QStringList{u"2026-12-01T09:00:00Z"_s, u"evals"_s};
            report.groups.append(
                withResponseCache(group(keys, 30.0, 1000, 4'000'000, 500'000), 300, 100, 12.5));
            return report;
        };
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        page.show();
        QCOMPARE(page.chartData().responseCacheHits, 300);
        QCOMPARE(page.chartData().responseCacheMisses, 100);
        const QStringList lines = QTextDocumentFragment::fromHtml(page.totalsLabel()->text())
                                      .toPlainText()
                                      .replace(QChar::Nbsp, u' ')
                                      .split(u'\n');
        QCOMPARE(lines.size(), 3);
        QVERIFY2(lines[1].startsWith(u"Prompt-cache savings: $0.00"_s), qPrintable(lines[1]));
        QCOMPARE(lines[2], u"Response-cache savings: $12.50  ·  hit ratio 75% (300 of 400 "
                           u"lookups)"_s);
        QVERIFY(page.totalsLabel()->toolTip().contains(u"Response-cache savings: what the "
                                                       u"answers given again"_s));

        // A range without a lookup has no such line: nothing on it was cached.
        bridge.usageReportFor = [](const usage::UsageQuery &query) {
            usage::UsageReport report;
            report.groups.append(group(query.groupBy.size() == 1
                                           ? QStringList{u"evals"_s}
                                           : QStringList{u"2026-12-01"_s, u"evals"_s},
                                       1.0, 10, 100, 10));
            return report;
        };
        page.rangeBox()->setCurrentIndex(1);
        QCOMPARE(QTextDocumentFragment::fromHtml(page.totalsLabel()->text())
                     .toPlainText()
                     .split(u'\n')
                     .size(),
                 2);
    }

    void theResponseCacheSavingsAreTranslated()
    {
        QTranslator translator;
        QVERIFY(ui::loadSwitchyardTranslation(
            translator,
            QLocale(QLocale::Chinese, QLocale::SimplifiedChineseScript, QLocale::China)));
        QVERIFY(QCoreApplication::installTranslator(&translator));
        FakeEngineBridge bridge(bridgeConfig());
        bridge.usageReportFor = [](const usage::UsageQuery &query) {
            usage::UsageReport report;
            const QString bucket = query.groupBy.value(0) == usage::UsageDimension::Hour
                                       ? u"2026-12-01T09:00:00Z"_s
                                       : u"2026-12-01"_s;
            report.groups.append(
                withResponseCache(group(query.groupBy.size() == 1 ? QStringList{u"evals"_s}
                                                                  : QStringList{bucket, u"evals"_s},
                                        30.0, 1000, 4'000'000, 500'000),
                                  300, 100, 12.5));
            return report;
        };
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        page.show();
        page.rangeBox()->setCurrentIndex(1); // the totals are written again, in Chinese
        const QString text = page.totalsLabel()->text();
        QVERIFY(QCoreApplication::removeTranslator(&translator));
        QVERIFY2(text.contains(u"响应缓存节省"_s), qPrintable(text));
    }

    void anOlderAnswerIsDropped()
    {
        FakeEngineBridge bridge(bridgeConfig());
        bridge.usageReportFor = demoReport;
        bridge.holdUsage = true;
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        page.show();
        page.rangeBox()->setCurrentIndex(int(UsageRange::ThirtyDays));
        QCOMPARE(bridge.heldUsage.size(), 4);
        // The 30-day answer first, then the stale answer for today: today's is ignored.
        bridge.answerUsage(bridge.heldUsage[2].first, bridge.heldUsage[2].second);
        bridge.answerUsage(bridge.heldUsage[0].first, bridge.heldUsage[0].second);
        QCOMPARE(page.chartData().bucketKeys.size(), 30);
    }

    void topSpendersAreTodaysTenantsByCost()
    {
        FakeEngineBridge bridge(bridgeConfig());
        bridge.usageReportFor = demoReport;
        timing::ManualClock clock(kNow);
        UsagePage page(bridge, clock);
        QAbstractItemModelTester tester(page.topSpenders(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        page.show();
        TopSpendersModel *model = page.topSpenders();
        QCOMPARE(model->rowCount(), 7);
        QCOMPARE(model->index(0, TopSpendersModel::TenantColumn).data().toString(), u"checkout"_s);
        QCOMPARE(model->index(0, TopSpendersModel::SpendColumn).data().toString(), u"$18.40"_s);
        QCOMPARE(model->index(0, TopSpendersModel::TokensColumn).data().toString(),
                 u"3,100,000 → 620,000"_s);
        QCOMPARE(model->index(0, TopSpendersModel::EstimatedColumn).data().toString(), u"13%"_s);
        QCOMPARE(model->index(6, TopSpendersModel::TenantColumn).data().toString(),
                 u"(no tenant)"_s);
        page.refresh(); // a new ranking replaces the old
        QCOMPARE(model->rowCount(), 7);
    }

    void theBannerSaysWhenTheLedgerCannotWrite()
    {
        FakeEngineBridge bridge(bridgeConfig());
        MainWindow window(bridge);
        UsagePage *page = window.usagePage();
        QVERIFY(page);
        QCOMPARE(window.pageTabs()->tabText(window.pageTabs()->indexOf(page)), u"Usage"_s);
        window.show();
        QVERIFY(page->ledgerBanner()->isHidden());
        EngineSnapshot snapshot = bridge.lastSnapshot();
        snapshot.usageLedger.persistent = true;
        snapshot.usageLedger.writable = false;
        snapshot.usageLedger.problem = u"database is locked"_s;
        snapshot.usageLedger.rowsInMemory = 42;
        snapshot.usageLedger.memoryCapacityRows = 100000;
        bridge.publish(snapshot);
        QVERIFY(!page->ledgerBanner()->isHidden());
        QCOMPARE(page->ledgerBanner()->text(),
                 u"The usage ledger cannot be written: database is locked. Traffic is served; 42 "
                 u"row(s) wait in memory (at most 100,000) and writing is retried."_s);
        QLabel *statusWarning = window.findChild<QLabel *>(u"ledgerWarning"_s);
        QVERIFY(statusWarning && statusWarning->isVisible());
        snapshot.usageLedger = {};
        bridge.publish(snapshot);
        QVERIFY(page->ledgerBanner()->isHidden());
        QVERIFY(!statusWarning->isVisible());
    }

    void screenshot()
    {
        FakeEngineBridge bridge(bridgeConfig());
        bridge.usageReportFor = demoReport;
        timing::ManualClock clock(kNow); // outlives the window, which will own the page
        MainWindow window(bridge);
        window.resize(1280, 860);
        // The page on a fixed clock, in the window as a user sees it.
        auto *page = new UsagePage(bridge, clock);
        const int usageTab = window.pageTabs()->indexOf(window.usagePage());
        window.pageTabs()->removeTab(usageTab);
        window.pageTabs()->insertTab(usageTab, page, u"Usage"_s);
        window.pageTabs()->setCurrentWidget(page);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        EngineSnapshot snapshot = bridge.lastSnapshot();
        const auto budget = [](QString name, QString window, double limit, double spent,
                               QDateTime resets) {
            usage::BudgetStatus status;
            status.name = std::move(name);
            status.scope = u"tenant"_s;
            status.window = std::move(window);
            status.limitUsd = limit;
            status.spentUsd = spent;
            status.resetsAt = std::move(resets);
            return status;
        };
        const QDateTime midnight(QDate(2026, 12, 2), QTime(0, 0), Qt::UTC);
        snapshot.budgets = {budget(u"tenant checkout"_s, u"day"_s, 25.0, 18.4, midnight),
                            budget(u"tenant checkout"_s, u"month"_s, 600.0, 212.5,
                                   QDateTime(QDate(2027, 1, 1), QTime(0, 0), Qt::UTC)),
                            budget(u"CI runner"_s, u"day"_s, 5.0, 5.02, midnight)};
        bridge.publish(snapshot);
        QCOMPARE(page->budgetBars().size(), 3);
        QCOMPARE(page->budgetBars()[2]->value(), 1000);
        page->rangeBox()->setCurrentIndex(int(UsageRange::SevenDays));
        QCoreApplication::processEvents();
        QTemporaryDir scratch;
        const QString path =
            switchyard::testing::screenshotPath(scratch.path(), u"usage_page.png"_s);
        QVERIFY2(window.grab().save(path), qPrintable(path));
        qInfo("usage screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));
    }
};

QTEST_MAIN(UsagePageTest)
#include "tst_usage_page.moc"
