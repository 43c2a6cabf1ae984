// The Routes page's shadow comparison: a route's mirrored live requests beside their shadow
// calls, from the finished records the console is fed, under QAbstractItemModelTester; and the
// panel that shows it, rendered for docs/screenshots.

#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/routes/routes_view.h"
#include "ui/routes/shadow_comparison_model.h"
#include "ui/routes/shadow_panel.h"
#include "ui/shell/main_window.h"

#include <QAbstractItemModelTester>
#include <QColor>
#include <QComboBox>
#include <QCoreApplication>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

using namespace Qt::StringLiterals;
using switchyard::telemetry::RequestRecord;
using switchyard::testing::FakeEngineBridge;
using switchyard::ui::MainWindow;
using switchyard::ui::ShadowComparisonModel;
using switchyard::ui::ShadowPanel;

namespace {

// A live request of `route`, mirrored as `id`-shadow unless `mirrored` is false.
RequestRecord live(const QString &route, const QByteArray &id, qint64 latencyMs, int status = 200,
                   bool mirrored = true)
{
    RequestRecord record;
    record.requestId = id;
    record.route = route;
    record.provider = u"cloud-a"_s;
    record.status = status;
    record.outcome = status < 400 ? u"ok"_s : u"upstream_error"_s;
    record.totalMicros = latencyMs * 1000;
    record.inputTokens = 100;
    record.outputTokens = 50;
    record.costUsd = 0.002;
    if (mirrored)
        record.shadowRequestId = id + "-shadow";
    return record;
}

// The shadow call of live request `of`.
RequestRecord shadow(const QString &route, const QByteArray &of, qint64 latencyMs, int status = 200,
                     const QString &outcome = u"ok"_s)
{
    RequestRecord record;
    record.requestId = of + "-shadow";
    record.shadowOf = of;
    record.route = route;
    record.provider = u"candidate"_s;
    record.status = status;
    record.outcome = outcome;
    record.totalMicros = latencyMs * 1000;
    record.inputTokens = 100;
    record.outputTokens = 80;
    record.costUsd = 0.001;
    return record;
}

QString cell(const ShadowComparisonModel &model, int measure, int column)
{
    return model.index(measure, column).data().toString();
}

// Two mirrored routes as a console would see them after a while: `support-chat`'s shadow is
// faster and cheaper but timed out once; `code-review` has one pair.
switchyard::telemetry::TraceFeed demoFeed()
{
    switchyard::telemetry::TraceFeed feed;
    const qint64 liveLatencies[] = {820, 760, 905, 1180, 840, 790, 2300, 870};
    const qint64 shadowLatencies[] = {610, 580, 700, 650, 5000, 640, 690, 600};
    for (int index = 0; index < 8; ++index) {
        const QByteArray id = "req-" + QByteArray::number(index);
        feed.finished.append(
            live(u"support-chat"_s, id, liveLatencies[index], index == 6 ? 502 : 200));
        feed.finished.append(
            shadow(u"support-chat"_s, id, shadowLatencies[index], index == 4 ? 504 : 200));
    }
    feed.finished.append(live(u"code-review"_s, "code-1", 1500));
    feed.finished.append(shadow(u"code-review"_s, "code-1", 1900));
    return feed;
}

// The providers and rules of demoFeed(): both rules mirror a share to `candidate`.
switchyard::config::Config demoConfig()
{
    namespace config = switchyard::config;
    config::Config demo;
    for (const QString &id : {u"cloud-a"_s, u"candidate"_s}) {
        config::ProviderConfig provider;
        provider.id = id;
        provider.kind = config::ProviderKind::OpenAi;
        config::ModelRoute model;
        model.publicName = u"chat-large"_s;
        model.upstreamName = model.publicName;
        provider.models = {model};
        demo.providers.append(provider);
    }
    const auto rule = [](const QString &name, int priority, double share) {
        config::RouteRule rule;
        rule.name = name;
        rule.priority = priority;
        rule.to.kind = config::RouteTarget::Kind::Provider;
        rule.to.names = {u"cloud-a"_s};
        rule.shadow = config::ShadowConfig{u"candidate"_s, share, {}, {}};
        return rule;
    };
    demo.routing.routes = {rule(u"support-chat"_s, 20, 0.1), rule(u"code-review"_s, 10, 0.05)};
    return demo;
}

} // namespace

class ShadowComparisonModelTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aRouteIsOfferedOnceAShadowCallOfItFinished()
    {
        ShadowComparisonModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::Fatal);
        QSignalSpy routes(&model, &ShadowComparisonModel::routesChanged);
        model.addRecords({live(u"chat"_s, "r1", 100)});
        QCOMPARE(model.rowCount(), 0); // no shadow yet: nothing to compare
        QCOMPARE(routes.size(), 0);
        model.addRecords({shadow(u"chat"_s, "r1", 300)});
        QCOMPARE(routes.size(), 1);
        QCOMPARE(model.routes(), QList<QString>{u"chat"_s});
        QCOMPARE(model.route(), u"chat"_s);
        QCOMPARE(model.rowCount(), int(ShadowComparisonModel::MeasureCount));
        QCOMPARE(
            cell(model, ShadowComparisonModel::RequestsMeasure, ShadowComparisonModel::LiveColumn),
            u"1"_s);
        QCOMPARE(cell(model, ShadowComparisonModel::MedianLatencyMeasure,
                      ShadowComparisonModel::LiveColumn),
                 u"100 ms"_s);
        QCOMPARE(cell(model, ShadowComparisonModel::MedianLatencyMeasure,
                      ShadowComparisonModel::ShadowColumn),
                 u"300 ms"_s);
        QCOMPARE(cell(model, ShadowComparisonModel::MedianLatencyMeasure,
                      ShadowComparisonModel::DifferenceColumn),
                 u"+200 %"_s);
    }

    // Live requests that were not mirrored, and shadows let go for live traffic, are not
    // compared: both sides describe the same requests, and a let-go shadow says nothing of its
    // provider.
    void onlyMirroredPairsAreCompared()
    {
        ShadowComparisonModel model;
        model.addRecords({live(u"chat"_s, "r1", 100), live(u"chat"_s, "r2", 900, 200, false),
                          shadow(u"chat"_s, "r1", 100),
                          shadow(u"chat"_s, "r3", 0, 499, u"shadow_let_go"_s)});
        const switchyard::ui::ShadowTally *tally = model.tally(u"chat"_s);
        QVERIFY(tally);
        QCOMPARE(tally->live.requests, qint64(1));
        QCOMPARE(tally->shadow.requests, qint64(1));
        QCOMPARE(tally->shadow.errors, qint64(0));
    }

    void differencesAreSignedAndColouredByWhichSideDoesBetter()
    {
        ShadowComparisonModel model;
        model.addRecords({live(u"chat"_s, "r1", 400), live(u"chat"_s, "r2", 400, 502),
                          shadow(u"chat"_s, "r1", 200), shadow(u"chat"_s, "r2", 200)});
        // Error rate: live 50 %, shadow 0 %, in percentage points.
        QCOMPARE(
            cell(model, ShadowComparisonModel::ErrorRateMeasure, ShadowComparisonModel::LiveColumn),
            u"50.0 %"_s);
        QCOMPARE(cell(model, ShadowComparisonModel::ErrorRateMeasure,
                      ShadowComparisonModel::DifferenceColumn),
                 u"−50.0 pts"_s);
        QCOMPARE(cell(model, ShadowComparisonModel::MedianLatencyMeasure,
                      ShadowComparisonModel::DifferenceColumn),
                 u"−50 %"_s);
        // 180 tokens against 150: more, and neither better nor worse in itself.
        QCOMPARE(cell(model, ShadowComparisonModel::TokensPerRequestMeasure,
                      ShadowComparisonModel::DifferenceColumn),
                 u"+20 %"_s);
        QCOMPARE(cell(model, ShadowComparisonModel::CostPerRequestMeasure,
                      ShadowComparisonModel::ShadowColumn),
                 u"$0.0010"_s);
        const auto colour = [&](int measure) {
            return model.index(measure, ShadowComparisonModel::DifferenceColumn)
                .data(Qt::ForegroundRole);
        };
        const QColor better = colour(ShadowComparisonModel::MedianLatencyMeasure).value<QColor>();
        QVERIFY(better.isValid());
        QCOMPARE(colour(ShadowComparisonModel::CostPerRequestMeasure).value<QColor>(), better);
        QVERIFY(!colour(ShadowComparisonModel::TokensPerRequestMeasure).isValid());

        model.addRecords({live(u"chat"_s, "r3", 100), shadow(u"chat"_s, "r3", 2000, 500),
                          live(u"chat"_s, "r4", 100), shadow(u"chat"_s, "r4", 2000)});
        QCOMPARE(cell(model, ShadowComparisonModel::ErrorRateMeasure,
                      ShadowComparisonModel::DifferenceColumn),
                 u"0.0 pts"_s); // one error of four on each side
        QVERIFY(!colour(ShadowComparisonModel::ErrorRateMeasure).isValid());
        // Medians of 400 and 2,000 ms: now the shadow is the slower.
        QCOMPARE(cell(model, ShadowComparisonModel::MedianLatencyMeasure,
                      ShadowComparisonModel::DifferenceColumn),
                 u"+400 %"_s);
        QVERIFY(colour(ShadowComparisonModel::MedianLatencyMeasure).value<QColor>() != better);
    }

    void newRecordsChangeCellsInPlace()
    {
        ShadowComparisonModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::Fatal);
        model.addRecords({live(u"chat"_s, "r1", 100), shadow(u"chat"_s, "r1", 300)});
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.addRecords({live(u"chat"_s, "r2", 200), shadow(u"chat"_s, "r2", 500, 502)});
        QCOMPARE(reset.size(), 0);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(cell(model, ShadowComparisonModel::RequestsMeasure,
                      ShadowComparisonModel::ShadowColumn),
                 u"2"_s);
        QCOMPARE(cell(model, ShadowComparisonModel::ErrorRateMeasure,
                      ShadowComparisonModel::ShadowColumn),
                 u"50.0 %"_s);
        // Another route's records change nothing shown.
        model.addRecords({live(u"other"_s, "o1", 100)});
        QCOMPARE(changed.size(), 1);
    }

    void choosingAnotherRouteReplacesTheFigures()
    {
        ShadowComparisonModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::Fatal);
        model.addRecords({live(u"chat"_s, "r1", 100), shadow(u"chat"_s, "r1", 300),
                          live(u"code"_s, "c1", 700), shadow(u"code"_s, "c1", 350)});
        QCOMPARE(model.routes(), (QList<QString>{u"chat"_s, u"code"_s}));
        QCOMPARE(model.route(), u"chat"_s);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setRoute(u"code"_s);
        QCOMPARE(reset.size(), 1);
        QCOMPARE(cell(model, ShadowComparisonModel::MedianLatencyMeasure,
                      ShadowComparisonModel::LiveColumn),
                 u"700 ms"_s);
        model.setRoute(u"nowhere"_s); // not a shadowed route: nothing changes
        QCOMPARE(model.route(), u"code"_s);
    }

    void theMedianReadsOnlyTheLatestSamples()
    {
        ShadowComparisonModel model;
        QList<RequestRecord> records{shadow(u"chat"_s, "first", 10)};
        for (int index = 0; index < ShadowComparisonModel::kLatencySamples; ++index)
            records.append(shadow(u"chat"_s, "later", 1000));
        model.addRecords(records);
        QCOMPARE(model.tally(u"chat"_s)->shadow.medianLatencyMs(), qint64(1000));
        QCOMPARE(model.tally(u"chat"_s)->shadow.requests,
                 ShadowComparisonModel::kLatencySamples + 1);
        QCOMPARE(model.tally(u"chat"_s)->shadow.latenciesMs.size(),
                 size_t(ShadowComparisonModel::kLatencySamples));
    }

    // The panel: a hint until a shadow call finished, then the route box and the table.
    void thePanelShowsTheComparisonOnceAShadowFinished()
    {
        ShadowPanel panel;
        panel.resize(420, 330);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        QVERIFY(!panel.view()->isVisible());
        QVERIFY(!panel.routeBox()->isVisible());

        panel.applyFeed(demoFeed());
        QVERIFY(panel.view()->isVisible());
        QVERIFY(panel.routeBox()->isVisible());
        QCOMPARE(panel.routeBox()->count(), 2);
        QCOMPARE(panel.routeBox()->currentText(), u"support-chat"_s);
        QCOMPARE(cell(*panel.model(), ShadowComparisonModel::RequestsMeasure,
                      ShadowComparisonModel::LiveColumn),
                 u"8"_s);

        panel.routeBox()->setCurrentIndex(1);
        Q_EMIT panel.routeBox()->activated(1);
        QCOMPARE(panel.model()->route(), u"code-review"_s);
        QCOMPARE(cell(*panel.model(), ShadowComparisonModel::RequestsMeasure,
                      ShadowComparisonModel::LiveColumn),
                 u"1"_s);
    }

    // The Routes page in the window as a user sees it, fed by the bridge, for
    // docs/screenshots/shadow_comparison.png.
    void screenshot()
    {
        FakeEngineBridge bridge(demoConfig());
        MainWindow window(bridge);
        window.resize(1480, 900);
        window.pageTabs()->setCurrentWidget(window.routesView());
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        bridge.publishFeed(demoFeed());
        ShadowPanel *panel = window.routesView()->shadowPanel();
        QVERIFY(panel->view()->isVisible());
        QCoreApplication::processEvents();

        QTemporaryDir scratch;
        const QString path =
            switchyard::testing::screenshotPath(scratch.path(), u"shadow_comparison.png"_s);
        QVERIFY2(window.grab().save(path), qPrintable(path));
    }
};

QTEST_MAIN(ShadowComparisonModelTest)
#include "tst_shadow_comparison_model.moc"
