// The impact preview: sampled contexts routed by Router::route under the live and the edited
// table, grouped from -> to, with the moves first, refusals counted and examples capped.

#include "config/config_loader.h"
#include "health/health_registry.h"
#include "routing/impact_preview.h"
#include "routing/router.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using routing::ImpactCell;
using routing::ImpactPreview;
using routing::RouteDecision;

namespace {

constexpr auto kLiveConfig = R"(
providers:
  - {id: light-a, kind: simulated, models: [small]}
  - {id: pro-a, kind: simulated, models: [big]}
  - {id: pro-b, kind: simulated, models: [big]}
tiers:
  light: {pool: [light-a]}
  pro: {pool: [pro-a, pro-b]}
routes:
  - name: canary
    priority: 50
    when: {field: model, eq: agent}
    to: {split: [{target: pro-a, weight: 90}, {target: pro-b, weight: 10}], key: user}
)";

std::shared_ptr<const config::Config> loadConfig(const char *yaml)
{
    config::LoadResult result = config::loadConfigText(
        yaml, u"impact.yaml"_s, [](const QString &) { return std::optional<QByteArray>(); });
    if (!result.ok())
        qFatal("test config does not load: %s", qPrintable(result.errors.first().toString()));
    return std::make_shared<const config::Config>(std::move(*result.config));
}

// The live router over a real health registry, and trial tables built as the dry run builds one:
// the snapshot in force with other rules.
struct Fixture {
    Fixture()
        : config(loadConfig(kLiveConfig)), store(config), health(store, clock),
          router(store, health)
    {}

    std::shared_ptr<const routing::RoutingTable>
    withRules(const QList<config::RouteRule> &rules) const
    {
        auto trial = std::make_shared<config::Config>(*config);
        trial->routing.routes = rules;
        return std::make_shared<const routing::RoutingTable>(std::move(trial), health);
    }

    // The live rules with the canary's weights replaced.
    std::shared_ptr<const routing::RoutingTable> canaryAt(int stable, int canary) const
    {
        QList<config::RouteRule> rules = config->routing.routes;
        rules[0].split[0].weight = stable;
        rules[0].split[1].weight = canary;
        return withRules(rules);
    }

    timing::ManualClock clock;
    std::shared_ptr<const config::Config> config;
    config::ConfigStore store;
    health::HealthRegistry health;
    routing::Router router;
};

// `count` requests of model `model` from users user-0, user-1...
QList<routing::SampledRequest> sampleOf(int count, const QString &model = u"agent"_s)
{
    QList<routing::SampledRequest> sample;
    for (int i = 0; i < count; ++i) {
        routing::SampledRequest request;
        request.context.model = model;
        request.context.requestId = "req-" + QByteArray::number(i);
        request.context.user = u"user-%1"_s.arg(i);
        sample.append(request);
    }
    return sample;
}

int totalOf(const ImpactPreview &preview)
{
    int total = 0;
    for (const ImpactCell &cell : preview.cells)
        total += cell.count;
    return total;
}

} // namespace

class ImpactPreviewTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aGrowingCanaryMovesOnlyStableUsersToTheCanary()
    {
        Fixture fixture;
        const QList<routing::SampledRequest> sample = sampleOf(200);
        const auto edited = fixture.canaryAt(50, 50);
        const ImpactPreview preview =
            routing::previewImpact(fixture.router, *fixture.router.table(), *edited, sample);

        QCOMPARE(preview.sampled, 200);
        QCOMPARE(totalOf(preview), 200);
        QCOMPARE(preview.newlyRefused, 0);
        // Each request is where Router::route puts it under each table, the same call live
        // traffic makes: the canary bucket of its user decides both sides.
        int expectedMoves = 0;
        for (const routing::SampledRequest &request : sample) {
            const RouteDecision live = fixture.router.route(request.context);
            const RouteDecision after = fixture.router.route(*edited, request.context);
            if (live.canarySide != after.canarySide) {
                ++expectedMoves;
                QCOMPARE(live.canarySide, u"pro-a"_s); // nobody leaves a canary that grows
                QCOMPARE(after.canarySide, u"pro-b"_s);
            }
        }
        QVERIFY(expectedMoves > 0);
        QCOMPARE(preview.moved, expectedMoves);
        // The one moving cell comes first, with the rule and provider on both sides.
        const ImpactCell &moving = preview.cells.first();
        QVERIFY(moving.moves());
        QCOMPARE(moving.count, expectedMoves);
        QCOMPARE(moving.from.rule, u"canary"_s);
        QCOMPARE(moving.from.provider, u"pro-a"_s);
        QCOMPARE(moving.to.rule, u"canary"_s);
        QCOMPARE(moving.to.provider, u"pro-b"_s);
        for (const ImpactCell &cell : preview.cells.mid(1))
            QVERIFY(!cell.moves());
    }

    void examplesAreTheCellsFirstRequestsWithBothDecisions()
    {
        Fixture fixture;
        const QList<routing::SampledRequest> sample = sampleOf(200);
        const ImpactPreview preview = routing::previewImpact(
            fixture.router, *fixture.router.table(), *fixture.canaryAt(50, 50), sample, 3);
        for (const ImpactCell &cell : preview.cells) {
            QCOMPARE(cell.examples.size(), qMin(cell.count, 3));
            for (const routing::ImpactExample &example : cell.examples) {
                QVERIFY(example.requestId.startsWith("req-"));
                QCOMPARE(routing::RouteDestination::of(example.live), cell.from);
                QCOMPARE(routing::RouteDestination::of(example.edited), cell.to);
            }
        }
    }

    void removingTheOnlyRuleForAModelRefusesItsRequests()
    {
        Fixture fixture;
        // No provider lists `agent`: without the canary rule nothing routes it (a 404).
        QList<routing::SampledRequest> sample = sampleOf(10);
        sample.append(sampleOf(5, u"small"_s));
        const ImpactPreview preview = routing::previewImpact(
            fixture.router, *fixture.router.table(), *fixture.withRules({}), sample);
        QCOMPARE(preview.sampled, 15);
        QCOMPARE(preview.moved, 10);
        QCOMPARE(preview.newlyRefused, 10);
        int refused = 0;
        for (const ImpactCell &cell : preview.cells) {
            if (cell.to.refusal == RouteDecision::Refusal::UnknownModel) {
                QVERIFY(cell.moves());
                QVERIFY(cell.to.provider.isEmpty());
                refused += cell.count;
            }
        }
        QCOMPARE(refused, 10);
        // `small` is served by its provider either way: it stays.
        QCOMPARE(preview.cells.last().from.provider, u"light-a"_s);
        QVERIFY(!preview.cells.last().moves());
        QCOMPARE(preview.cells.last().count, 5);
    }

    void anEmptySampleAnswersEmpty()
    {
        Fixture fixture;
        const ImpactPreview preview = routing::previewImpact(
            fixture.router, *fixture.router.table(), *fixture.canaryAt(50, 50), {});
        QCOMPARE(preview.sampled, 0);
        QCOMPARE(preview.moved, 0);
        QCOMPARE(preview.oldestMsSinceEpoch, 0);
        QVERIFY(preview.cells.isEmpty());
    }
};

QTEST_GUILESS_MAIN(ImpactPreviewTest)
#include "tst_impact_preview.moc"
