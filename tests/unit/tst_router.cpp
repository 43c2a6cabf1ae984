// The router: rules by priority, the gearbox's five steps, the order of candidates and why,
// scoring with a neutral start, session affinity and canary buckets that stay put when the pool
// or the percentage changes, and registered agents with heartbeats on an injected clock.

#include "config/config_loader.h"
#include "health/health_registry.h"
#include "routing/endpoint_scoring.h"
#include "routing/gearbox.h"
#include "routing/router.h"
#include "routing/stable_hash.h"

#include <QSet>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using namespace switchyard;
using routing::CandidateRole;
using routing::CascadeStep;

namespace {

constexpr auto kRoutedConfig = R"(
providers:
  - {id: light-a, kind: simulated, models: [small]}
  - {id: light-b, kind: simulated, models: [small, small-2]}
  - {id: pro-a, kind: simulated, models: [big]}
  - {id: pro-b, kind: simulated, models: [{name: big, upstream: big-2025}]}
  - {id: backup, kind: simulated, models: [any]}
tiers:
  light: {pool: [light-a, light-b]}
  pro: {pool: [pro-a, pro-b]}
fallback_chain: [backup, light-a]
routes:
  - name: local-only
    priority: 100
    when: {field: sensitivity, eq: high}
    to: {pool: [light-a]}
  - name: canary
    priority: 50
    when: {field: model, eq: agent}
    to: {split: [{target: pro-a, weight: 95}, {target: pro-b, weight: 5}], key: user}
  - name: pinned-pro
    priority: 10
    when: {field: header.x-pin, eq: pro}
    to: {tier: pro}
  - name: auto
    when: {field: model, eq: auto}
    to: {tier: auto}
)";

constexpr auto kPlainConfig = R"(
providers:
  - {id: first, kind: simulated, models: [shared, only-first]}
  - {id: second, kind: simulated, models: [shared]}
)";

std::shared_ptr<const config::Config> loadConfig(const char *yaml)
{
    config::LoadResult result = config::loadConfigText(
        yaml, u"router.yaml"_s, [](const QString &) { return std::optional<QByteArray>(); });
    if (!result.ok())
        qFatal("test config does not load: %s", qPrintable(result.errors.first().toString()));
    return std::make_shared<const config::Config>(std::move(*result.config));
}

// A router over a real health registry, both on a clock the test moves by hand.
struct Fixture {
    explicit Fixture(const char *yaml = kRoutedConfig)
        : config(loadConfig(yaml)), store(config), health(store, clock), router(store, health)
    {}

    int index(const QString &id) const { return health.indexOf(id); }
    // A new snapshot, applied as the engine applies one: endpoints first, then the store.
    void apply(std::shared_ptr<const config::Config> next)
    {
        health.syncConfiguredEndpoints(*next);
        store.replace(std::move(next));
    }

    timing::ManualClock clock;
    std::shared_ptr<const config::Config> config;
    config::ConfigStore store;
    health::HealthRegistry health;
    routing::Router router;
};

routing::RequestContext request(const QString &model, const QByteArray &requestId = "req-1")
{
    routing::RequestContext context;
    context.model = model;
    context.requestId = requestId;
    return context;
}

QStringList providers(const routing::RouteDecision &decision)
{
    QStringList ids;
    for (const routing::RouteCandidate &candidate : decision.candidates)
        ids.append(candidate.providerId);
    return ids;
}

bool hasStep(const routing::RouteDecision &decision, const QString &stage, const QString &part)
{
    for (const routing::RouteStep &step : decision.steps) {
        if (step.stage == stage && step.detail.contains(part))
            return true;
    }
    return false;
}

routing::EndpointProfile profile(const QString &id, int weight = 1, int capacity = 10)
{
    return {-1, weight, capacity, 1000.0, routing::stableHash(QStringView(id))};
}

// The endpoint each session goes to first, by rendezvous hashing over `ids`.
QList<QString> sessionHomes(const QStringList &ids, const QSet<QString> &unselectable, int sessions)
{
    QList<routing::EndpointProfile> profiles;
    QList<routing::EndpointHealth> health;
    for (const QString &id : ids) {
        profiles.append(profile(id));
        routing::EndpointHealth now;
        now.selectable = !unselectable.contains(id);
        health.append(now);
    }
    QList<QString> homes;
    for (int s = 0; s < sessions; ++s) {
        const QString session = u"session-%1"_s.arg(s);
        const routing::PoolRanking ranking = routing::rankPool(
            {profiles.constData(), std::size_t(profiles.size())},
            {health.constData(), std::size_t(health.size())}, config::ScoringWeights{},
            routing::PoolOrder::ChooseFirst, routing::stableHash(QStringView(session)) | 1, 0.5);
        homes.append(ids[ranking.ranked.first().member]);
    }
    return homes;
}

} // namespace

class TestRouter : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // ---- rules ----

    void withoutRulesTheModelsProvidersAreThePool()
    {
        Fixture fixture(kPlainConfig);
        const routing::RouteDecision decision = fixture.router.route(request(u"shared"_s));
        QCOMPARE(decision.refusal, routing::RouteDecision::Refusal::None);
        QVERIFY(decision.rule.isEmpty());
        QVERIFY(decision.tier.isEmpty());
        QCOMPARE(decision.cascadeStep, CascadeStep::NotUsed);
        const QStringList chosen = providers(decision);
        QCOMPARE(QSet<QString>(chosen.cbegin(), chosen.cend()),
                 (QSet<QString>{u"first"_s, u"second"_s}));
        QVERIFY(hasStep(decision, u"rule"_s, u"no rules configured"_s));
        QCOMPARE(providers(fixture.router.route(request(u"only-first"_s))),
                 QStringList{u"first"_s});
        QCOMPARE(fixture.router.models(),
                 (QList<routing::Router::ModelListing>{
                     {u"only-first"_s, u"first"_s, protocol::kChatOperations},
                     {u"shared"_s, u"first"_s, protocol::kChatOperations}}));
    }

    void unknownModelIsRefused()
    {
        Fixture fixture;
        const routing::RouteDecision decision = fixture.router.route(request(u"nope"_s));
        QCOMPARE(decision.refusal, routing::RouteDecision::Refusal::UnknownModel);
        QVERIFY(decision.candidates.isEmpty());
        QVERIFY(hasStep(decision, u"model"_s, u"no provider serves model `nope`"_s));
    }

    void highestPriorityMatchWins()
    {
        Fixture fixture;
        routing::RequestContext context = request(u"auto"_s);
        context.sensitivity = u"high"_s; // local-only (100) and auto (0) both match
        const routing::RouteDecision decision = fixture.router.route(context);
        QCOMPARE(decision.rule, u"local-only"_s);
        // A pinned pool is a promise: no other tier and no fallback chain after it.
        QCOMPARE(providers(decision), QStringList{u"light-a"_s});
        QVERIFY(hasStep(decision, u"rule"_s,
                        u"`local-only` (priority 100) matched: sensitivity eq high"_s));
        QVERIFY(hasStep(decision, u"target"_s, u"pinned to pool [light-a]"_s));
    }

    void continueStreamsComesFromTheRuleOrTheTier()
    {
        QByteArray yaml(kRoutedConfig);
        yaml.replace("  pro: {pool: [pro-a, pro-b]}",
                     "  pro: {pool: [pro-a, pro-b], continue_streams: true}");
        yaml.replace("    when: {field: sensitivity, eq: high}\n    to: {pool: [light-a]}",
                     "    when: {field: sensitivity, eq: high}\n    to: {pool: [light-a]}\n"
                     "    continue_streams: true");
        Fixture fixture(yaml.constData());
        routing::RequestContext local = request(u"small"_s);
        local.sensitivity = u"high"_s;
        QVERIFY(fixture.router.route(local).continueStreams); // the rule's
        routing::RequestContext pinned = request(u"small"_s);
        pinned.headers = {{"X-Pin", "pro"}};
        QVERIFY(fixture.router.route(pinned).continueStreams);               // the tier's
        QVERIFY(!fixture.router.route(request(u"small"_s)).continueStreams); // light: neither
    }

    // A rule's shadow goes to the decision for the share of requests whose id draws under it,
    // the same ones every time, renamed for the shadow provider; only chat is mirrored.
    void aShadowIsDrawnOnTheRequestId()
    {
        constexpr auto kShadowed =
            "providers:\n"
            "  - {id: live, kind: openai, base_url: 'http://127.0.0.1:9/v1', models: [m]}\n"
            "  - {id: candidate, kind: openai, base_url: 'http://127.0.0.1:9/v1',\n"
            "     models: [{name: m, upstream: m-next}]}\n"
            "routes:\n"
            "  - name: mirrored\n"
            "    to: {provider: live}\n"
            "    shadow: {target: candidate, share: 0.25}\n";
        Fixture fixture(kShadowed);
        int mirrored = 0;
        constexpr int kRequests = 4000;
        for (int index = 0; index < kRequests; ++index) {
            const QByteArray id = "req-" + QByteArray::number(index);
            const routing::RouteDecision decision = fixture.router.route(request(u"m"_s, id));
            QCOMPARE(providers(decision), QStringList{u"live"_s}); // the live route is unchanged
            if (!decision.shadow)
                continue;
            ++mirrored;
            QCOMPARE(decision.shadow->providerId, u"candidate"_s);
            QCOMPARE(decision.shadow->upstreamModel, u"m-next"_s);
            QVERIFY(hasStep(decision, u"shadow"_s,
                            u"also sent to candidate as m-next; its answer is only recorded"_s));
            // The same request id draws the same way again.
            QVERIFY(fixture.router.route(request(u"m"_s, id)).shadow);
        }
        QVERIFY2(mirrored > kRequests * 0.22 && mirrored < kRequests * 0.28,
                 qPrintable(QString::number(mirrored)));

        routing::RequestContext embeddings = request(u"m"_s);
        embeddings.operation = protocol::Operation::Embeddings;
        for (int index = 0; index < 100; ++index) {
            embeddings.requestId = "emb-" + QByteArray::number(index);
            QVERIFY(!fixture.router.route(embeddings).shadow);
        }
    }

    void headerConditionPinsATier()
    {
        Fixture fixture;
        routing::RequestContext context = request(u"small"_s);
        context.headers = {{"X-Pin", "pro"}};
        const routing::RouteDecision decision = fixture.router.route(context);
        QCOMPARE(decision.rule, u"pinned-pro"_s);
        QCOMPARE(decision.tier, u"pro"_s);
        QCOMPARE(decision.cascadeStep, CascadeStep::NotUsed);
        QCOMPARE(decision.candidates.first().upstreamModel.isEmpty(), false);
    }

    // ---- the gearbox ----

    void cascadeAnswersAtEveryStep_data()
    {
        QTest::addColumn<QString>("tierHint");
        QTest::addColumn<QString>("priority");
        QTest::addColumn<QString>("task");
        QTest::addColumn<int>("tokens");
        QTest::addColumn<int>("messages");
        QTest::addColumn<int>("tools");
        QTest::addColumn<int>("codeBlocks");
        QTest::addColumn<QString>("tier");
        QTest::addColumn<CascadeStep>("step");
        QTest::addColumn<int>("complexity");
        QTest::newRow("1: tier hint") << u"pro"_s << QString() << u"chat"_s << 10 << 1 << 0 << 0
                                      << u"pro"_s << CascadeStep::ExplicitHint << -1;
        QTest::newRow("1: hint beats priority")
            << u"light"_s << u"high"_s << QString() << 10 << 1 << 0 << 0 << u"light"_s
            << CascadeStep::ExplicitHint << -1;
        QTest::newRow("1: priority high") << QString() << u"high"_s << u"chat"_s << 10 << 1 << 0
                                          << 0 << u"pro"_s << CascadeStep::ExplicitHint << -1;
        QTest::newRow("2: pro task") << QString() << u"normal"_s << u"code_gen"_s << 10 << 1 << 0
                                     << 0 << u"pro"_s << CascadeStep::TaskTag << -1;
        QTest::newRow("2: light task beats size")
            << QString() << QString() << u"summarize"_s << 50000 << 1 << 0 << 0 << u"light"_s
            << CascadeStep::TaskTag << -1;
        QTest::newRow("3: above light's maximum")
            << QString() << QString() << u"translate"_s << 12001 << 1 << 0 << 0 << u"pro"_s
            << CascadeStep::InputTokens << -1;
        // length 4000/4000 * 35 + turns 10/10 * 20 + tools 4/4 * 25 = 80
        QTest::newRow("4: complex") << QString() << QString() << QString() << 4000 << 11 << 4 << 0
                                    << u"pro"_s << CascadeStep::Complexity << 80;
        // 35 + 20 + 25 * 3/4 = 73.75
        QTest::newRow("4: just above") << QString() << QString() << QString() << 4000 << 11 << 3
                                       << 0 << u"pro"_s << CascadeStep::Complexity << 74;
        // 35 * 0.5 = 17.5
        QTest::newRow("5: simple") << QString() << QString() << QString() << 2000 << 1 << 0 << 0
                                   << u"light"_s << CascadeStep::Default << 18;
        // 35 + 20 + 25 * 0.5 = 67.5: rounds to 68, below 70
        QTest::newRow("5: just below") << QString() << QString() << QString() << 4000 << 11 << 2
                                       << 0 << u"light"_s << CascadeStep::Default << 68;
    }
    void cascadeAnswersAtEveryStep()
    {
        QFETCH(QString, tierHint);
        QFETCH(QString, priority);
        QFETCH(QString, task);
        QFETCH(int, tokens);
        QFETCH(int, messages);
        QFETCH(int, tools);
        QFETCH(int, codeBlocks);
        QFETCH(QString, tier);
        QFETCH(CascadeStep, step);
        QFETCH(int, complexity);
        Fixture fixture;
        routing::RequestContext context = request(u"auto"_s);
        context.tierHint = tierHint;
        context.priority = priority;
        context.task = task;
        context.estimatedInputTokens = tokens;
        context.messageCount = messages;
        context.toolCount = tools;
        context.codeBlockCount = codeBlocks;
        const routing::RouteDecision decision = fixture.router.route(context);
        QCOMPARE(decision.rule, u"auto"_s);
        QCOMPARE(decision.tier, tier);
        QCOMPARE(decision.cascadeStep, step);
        QCOMPARE(decision.complexityScore, complexity);
        QCOMPARE(decision.candidates.first().tier, tier);
        QVERIFY(hasStep(decision, u"cascade"_s, u"step %1"_s.arg(int(step))));
    }

    void complexityScoreUsesConfiguredWeights()
    {
        config::ComplexityConfig config;
        config.lengthWeight = 0;
        config.turnsWeight = 0;
        config.toolsWeight = 0;
        config.codeBlocksWeight = 1;
        config.codeBlocksFull = 2;
        routing::RequestContext context;
        context.codeBlockCount = 1;
        context.estimatedInputTokens = 100000;
        QCOMPARE(routing::complexityScore(routing::complexityFeatures(context, config), config),
                 50);
        context.codeBlockCount = 5;
        QCOMPARE(routing::complexityScore(routing::complexityFeatures(context, config), config),
                 100);
    }

    // ---- candidates ----

    void lightDecisionFailsOverToProThenTheChain()
    {
        Fixture fixture;
        const routing::RouteDecision decision = fixture.router.route(request(u"auto"_s));
        QCOMPARE(decision.tier, u"light"_s);
        QCOMPARE(decision.candidates.size(), 5);
        const QList<routing::RouteCandidate> &c = decision.candidates;
        QCOMPARE((QSet<QString>{c[0].providerId, c[1].providerId}),
                 (QSet<QString>{u"light-a"_s, u"light-b"_s}));
        QCOMPARE(c[0].role, CandidateRole::Primary);
        QCOMPARE(c[1].role, CandidateRole::Primary);
        QCOMPARE((QSet<QString>{c[2].providerId, c[3].providerId}),
                 (QSet<QString>{u"pro-a"_s, u"pro-b"_s}));
        QCOMPARE(c[2].role, CandidateRole::CrossTier);
        QCOMPARE(c[2].tier, u"pro"_s);
        QCOMPARE(c[2].degradationLevel, 0);
        // light-a is in the chain too, but already listed.
        QCOMPARE(c[4].providerId, u"backup"_s);
        QCOMPARE(c[4].role, CandidateRole::FallbackChain);
        QVERIFY(c[4].tier.isEmpty());
    }

    void proDecisionDegradesToTheLightTier()
    {
        Fixture fixture;
        routing::RequestContext context = request(u"auto"_s);
        context.tierHint = u"pro"_s;
        const routing::RouteDecision decision = fixture.router.route(context);
        const QList<routing::RouteCandidate> &c = decision.candidates;
        QCOMPARE(c.size(), 5);
        QCOMPARE(c[0].role, CandidateRole::Primary);
        QCOMPARE(c[2].role, CandidateRole::LighterModel);
        QCOMPARE(c[2].degradationLevel, 1);
        QCOMPARE(c[2].tier, u"light"_s);
        QCOMPARE(c[4].providerId, u"backup"_s);

        context.fallbackLevel = 0;
        const routing::RouteDecision strict = fixture.router.route(context);
        // The pro pool, then the fallback chain as configured: it is the operator's own
        // failover list, so the request's fallback level does not prune it.
        QCOMPARE(providers(strict).mid(2), (QStringList{u"backup"_s, u"light-a"_s}));
        QCOMPARE(strict.candidates[3].role, CandidateRole::FallbackChain);
        QVERIFY(hasStep(strict, u"failover"_s, u"no lighter model"_s));
    }

    void upstreamModelFollowsTheProvider()
    {
        Fixture fixture;
        routing::RequestContext context = request(u"big"_s);
        context.tierHint = u"pro"_s;
        context.headers = {{"x-pin", "pro"}};
        for (const routing::RouteCandidate &candidate : fixture.router.route(context).candidates) {
            // Serving the model: its own name for it. Not serving it: its first model.
            const QString expected = candidate.providerId == u"pro-a"_s    ? u"big"_s
                                     : candidate.providerId == u"pro-b"_s  ? u"big-2025"_s
                                     : candidate.providerId == u"backup"_s ? u"any"_s
                                                                           : u"small"_s;
            QCOMPARE(candidate.upstreamModel, expected);
        }
    }

    void unselectableEndpointsAreSkippedAndSaidSo()
    {
        Fixture fixture;
        fixture.health.applyAction(fixture.index(u"light-a"_s), ProviderAction::Disable);
        const routing::RouteDecision decision = fixture.router.route(request(u"auto"_s));
        QVERIFY(!providers(decision).contains(u"light-a"_s));
        QCOMPARE(providers(decision).first(), u"light-b"_s);
        QVERIFY(hasStep(decision, u"pool"_s, u"skipped `light-a`: not selectable"_s));

        fixture.health.applyAction(fixture.index(u"light-b"_s), ProviderAction::Drain);
        const routing::RouteDecision degraded = fixture.router.route(request(u"auto"_s));
        QCOMPARE(degraded.candidates.first().role, CandidateRole::CrossTier);
        QVERIFY(hasStep(degraded, u"tier"_s, u"tier light is degraded"_s));

        routing::RequestContext local = request(u"small"_s);
        local.sensitivity = u"high"_s;
        const routing::RouteDecision refused = fixture.router.route(local);
        QCOMPARE(refused.refusal, routing::RouteDecision::Refusal::NoCandidate);
        QVERIFY(refused.candidates.isEmpty());
    }

    void sameRequestSameDecision()
    {
        Fixture fixture(kPlainConfig);
        const routing::RouteDecision first = fixture.router.route(request(u"shared"_s, "abc"));
        const routing::RouteDecision again = fixture.router.route(request(u"shared"_s, "abc"));
        QCOMPARE(providers(again), providers(first));
        QCOMPARE(again.reason(), first.reason());
        // Across request ids, equal endpoints share the traffic.
        int firstChosen = 0;
        for (int i = 0; i < 1000; ++i) {
            const auto decision =
                fixture.router.route(request(u"shared"_s, QByteArray::number(i) + "-id"));
            firstChosen += decision.candidates.first().providerId == u"first"_s ? 1 : 0;
        }
        QVERIFY2(firstChosen > 400 && firstChosen < 600, qPrintable(QString::number(firstChosen)));
    }

    void sessionStaysOnItsEndpoint()
    {
        Fixture fixture(kPlainConfig);
        routing::RequestContext context = request(u"shared"_s);
        context.session = u"conversation-42"_s;
        const QString home = fixture.router.route(context).candidates.first().providerId;
        for (int i = 0; i < 50; ++i) {
            context.requestId = QByteArray::number(i);
            const routing::RouteDecision decision = fixture.router.route(context);
            QCOMPARE(decision.candidates.first().providerId, home);
            QCOMPARE(decision.candidates.first().reason,
                     u"first: the session's endpoint (rendezvous hash)"_s);
        }
        // Unhealthy, it gives its sessions up; healthy again, they come back.
        fixture.health.applyAction(fixture.index(home), ProviderAction::Disable);
        QVERIFY(fixture.router.route(context).candidates.first().providerId != home);
        fixture.health.applyAction(fixture.index(home), ProviderAction::Enable);
        QCOMPARE(fixture.router.route(context).candidates.first().providerId, home);
    }

    // ---- scoring ----

    void scoreCombinesLoadLatencySuccessAndWeight()
    {
        const routing::EndpointProfile profiles[] = {profile(u"a"_s, 2, 10), profile(u"b"_s, 4)};
        routing::EndpointHealth health[2];
        health[0].inFlight = 5;
        health[0].latencyP50Ms = 1000; // exactly its objective
        health[0].successRatio = 0.8;
        health[0].recentCalls = 20;
        const routing::PoolRanking ranking = routing::rankPool(
            profiles, health, config::ScoringWeights{}, routing::PoolOrder::ByScore);
        const routing::ScoredEndpoint &a = ranking.ranked[1];
        QCOMPARE(a.member, 0);
        QCOMPARE(a.factors.load, 0.5);
        QCOMPARE(a.factors.latency, 0.5);
        QCOMPARE(a.factors.success, 0.8);
        QCOMPARE(a.factors.weight, 0.5);
        QVERIFY(qFuzzyCompare(a.score, 0.5 * (0.4 * 0.5 + 0.3 * 0.5 + 0.3 * 0.8)));
    }

    void newEndpointStartsNeutral()
    {
        const routing::EndpointProfile profiles[] = {profile(u"old"_s), profile(u"new"_s)};
        routing::EndpointHealth health[2];
        health[0].latencyP50Ms = 500;
        health[0].successRatio = 0.6;
        health[0].recentCalls = 20;
        const routing::PoolRanking ranking = routing::rankPool(
            profiles, health, config::ScoringWeights{}, routing::PoolOrder::AsListed);
        const routing::ScoreFactors &old = ranking.ranked[0].factors;
        const routing::ScoreFactors &fresh = ranking.ranked[1].factors;
        // Nothing measured yet: the pool's own figures, neither flooding nor starving it.
        QCOMPARE(fresh.latency, old.latency);
        QCOMPARE(fresh.success, 0.6);
        QCOMPARE(ranking.ranked[1].score, ranking.ranked[0].score);
    }

    void fullAndWeightlessEndpointsGoLast()
    {
        const routing::EndpointProfile profiles[] = {
            profile(u"full"_s, 1, 4), profile(u"zero"_s, 0), profile(u"free"_s, 1, 4)};
        routing::EndpointHealth health[3];
        health[0].inFlight = 4;
        for (double draw : {0.0, 0.5, 0.999}) {
            const routing::PoolRanking ranking =
                routing::rankPool(profiles, health, config::ScoringWeights{},
                                  routing::PoolOrder::ChooseFirst, 0, draw);
            QCOMPARE(ranking.ranked[0].member, 2);
            QCOMPARE(ranking.ranked[2].member, 1); // weight 0: only a last resort
        }
    }

    void rampingEndpointGetsItsShare()
    {
        const routing::EndpointProfile profiles[] = {profile(u"steady"_s), profile(u"back"_s)};
        routing::EndpointHealth health[2];
        health[1].trafficShare = 0.05;
        const routing::PoolRanking ranking = routing::rankPool(
            profiles, health, config::ScoringWeights{}, routing::PoolOrder::ByScore);
        QVERIFY(qFuzzyCompare(ranking.ranked[1].score, ranking.ranked[0].score * 0.05));
    }

    void addingAnEndpointMovesOnlyItsShareOfSessions()
    {
        const QStringList five{u"e1"_s, u"e2"_s, u"e3"_s, u"e4"_s, u"e5"_s};
        const int sessions = 3000;
        const QList<QString> before = sessionHomes(five, {}, sessions);
        const QList<QString> after = sessionHomes(five + QStringList{u"e6"_s}, {}, sessions);
        int moved = 0;
        for (int s = 0; s < sessions; ++s) {
            if (before[s] != after[s]) {
                ++moved;
                QCOMPARE(after[s], u"e6"_s); // only ever to the new endpoint
            }
        }
        // About 1/6 of the sessions (500); never a reshuffle.
        QVERIFY2(moved > 400 && moved < 600, qPrintable(QString::number(moved)));

        const QList<QString> withoutE2 = sessionHomes(five, {u"e2"_s}, sessions);
        for (int s = 0; s < sessions; ++s) {
            if (before[s] != u"e2"_s)
                QCOMPARE(withoutE2[s], before[s]); // only e2's sessions move
        }
    }

    // ---- canary ----

    void canarySideIsStableAsThePercentageMoves()
    {
        Fixture fixture;
        const int users = 10000;
        const auto sides = [&] {
            QStringList result;
            for (int u = 0; u < users; ++u) {
                routing::RequestContext context = request(u"agent"_s, QByteArray::number(u));
                context.user = u"user-%1"_s.arg(u);
                result.append(fixture.router.route(context).canarySide);
            }
            return result;
        };
        const QStringList at5 = sides();
        const qsizetype canaryAt5 = at5.count(u"pro-b"_s);
        QVERIFY2(canaryAt5 > 400 && canaryAt5 < 600, qPrintable(QString::number(canaryAt5)));

        QCOMPARE(fixture.router.setCanaryWeights(u"canary"_s, {90, 10}), QString());
        const QStringList at10 = sides();
        int moved = 0;
        for (int u = 0; u < users; ++u) {
            if (at5[u] == u"pro-b"_s)
                QCOMPARE(at10[u], u"pro-b"_s); // nobody leaves the canary as it grows
            else if (at10[u] == u"pro-b"_s)
                ++moved;
        }
        QVERIFY2(moved > 400 && moved < 600, qPrintable(QString::number(moved)));

        QVERIFY(fixture.router.resetCanaryWeights(u"canary"_s));
        QCOMPARE(sides(), at5);
    }

    void canaryExplainsTheBucket()
    {
        Fixture fixture;
        routing::RequestContext context = request(u"agent"_s, "req-9");
        const routing::RouteDecision withoutUser = fixture.router.route(context);
        QVERIFY(hasStep(withoutUser, u"canary"_s,
                        u"no user given, so request id `req-9` is in "
                        u"bucket"_s));
        context.user = u"alice"_s;
        const routing::RouteDecision decision = fixture.router.route(context);
        QCOMPARE(decision.rule, u"canary"_s);
        // The chosen branch first; the other branch follows as failover (the split follows
        // health).
        QCOMPARE(providers(decision).first(), decision.canarySide);
        QCOMPARE(decision.candidates.size(), 2);
        QCOMPARE(decision.candidates[1].role, CandidateRole::OtherBranch);
        const bool stable = decision.canarySide == u"pro-a"_s;
        QVERIFY(hasStep(decision, u"canary"_s,
                        stable ? u"`pro-a` takes buckets 0-9499 (weight 95 of 100)"_s
                               : u"`pro-b` takes buckets 9500-9999 (weight 5 of 100)"_s));
    }

    void canaryWeightsAreChecked_data()
    {
        QTest::addColumn<QString>("rule");
        QTest::addColumn<QList<int>>("weights");
        QTest::addColumn<QString>("error");
        QTest::newRow("no such rule")
            << u"nope"_s << QList<int>{1, 1} << u"no route named `nope` has a split"_s;
        QTest::newRow("rule without split")
            << u"auto"_s << QList<int>{1, 1} << u"no route named `auto` has a split"_s;
        QTest::newRow("wrong count")
            << u"canary"_s << QList<int>{100} << u"route `canary` splits 2 ways, got 1 weight(s)"_s;
        QTest::newRow("negative") << u"canary"_s << QList<int>{-1, 5}
                                  << u"split weight must be at least 0, got -1"_s;
        QTest::newRow("all zero") << u"canary"_s << QList<int>{0, 0}
                                  << u"split weights must add up to more than 0"_s;
    }
    void canaryWeightsAreChecked()
    {
        QFETCH(QString, rule);
        QFETCH(QList<int>, weights);
        QFETCH(QString, error);
        Fixture fixture;
        QCOMPARE(fixture.router.setCanaryWeights(rule, weights), error);
        QVERIFY(!fixture.router.canarySplits().first().overridden);
    }

    void liveCanaryWeightsSurviveAReloadThatKeepsTheSplit()
    {
        Fixture fixture;
        QCOMPARE(fixture.router.setCanaryWeights(u"canary"_s, {50, 50}), QString());
        fixture.apply(loadConfig(kRoutedConfig));
        routing::CanarySplitState split = fixture.router.canarySplits().first();
        QVERIFY(split.overridden);
        QCOMPARE(split.branches[1].weight, 50);
        QCOMPARE(split.branches[1].configuredWeight, 5);

        QByteArray changed(kRoutedConfig);
        changed.replace("{target: pro-b, weight: 5}", "{target: backup, weight: 5}");
        fixture.apply(loadConfig(changed.constData()));
        split = fixture.router.canarySplits().first();
        QVERIFY(!split.overridden);
        QCOMPARE(split.branches[1].target, u"backup"_s);
        QCOMPARE(split.branches[1].weight, 5);
    }

    void aSplitFollowsHealth()
    {
        Fixture fixture;
        const int users = 4000;
        const auto route = [&](int u) {
            routing::RequestContext context = request(u"agent"_s, QByteArray::number(u));
            context.user = u"user-%1"_s.arg(u);
            return fixture.router.route(context);
        };
        const auto sides = [&] {
            QStringList result;
            for (int u = 0; u < users; ++u)
                result.append(route(u).canarySide);
            return result;
        };
        const QStringList healthy = sides();
        const qsizetype onCanary = healthy.count(u"pro-b"_s);
        QVERIFY2(onCanary > 120 && onCanary < 280, qPrintable(QString::number(onCanary)));

        // The canary's branch has nothing to choose: its users go to pro-a, nobody else moves.
        fixture.health.applyAction(fixture.index(u"pro-b"_s), ProviderAction::Disable);
        const QStringList disabled = sides();
        QCOMPARE(disabled.count(u"pro-b"_s), 0);
        int movedUser = -1;
        for (int u = 0; u < users; ++u) {
            if (healthy[u] == u"pro-b"_s && movedUser < 0)
                movedUser = u;
        }
        QVERIFY(movedUser >= 0);
        const routing::RouteDecision moved = route(movedUser);
        QCOMPARE(moved.canarySide, u"pro-a"_s);
        QCOMPARE(moved.canaryMovedFrom, u"pro-b"_s);
        QCOMPARE(providers(moved), QStringList{u"pro-a"_s});
        QVERIFY(hasStep(moved, u"canary"_s,
                        u"branch `pro-b` unavailable: none of its endpoints can be chosen, share "
                        u"moved to `pro-a`"_s));

        // Back through the breaker's ramp: 5 % of its users at first, all of them once it ends,
        // each the same user as before.
        fixture.health.applyAction(fixture.index(u"pro-b"_s), ProviderAction::Enable);
        const QStringList ramping = sides();
        const qsizetype back = ramping.count(u"pro-b"_s);
        QVERIFY2(back > 0 && back < onCanary / 4, qPrintable(QString::number(back)));
        for (int u = 0; u < users; ++u) {
            if (ramping[u] == u"pro-b"_s)
                QCOMPARE(healthy[u], u"pro-b"_s); // only its own users come back
        }
        fixture.clock.advance(60s);
        QCOMPARE(sides(), healthy);
        QVERIFY(route(movedUser).canaryMovedFrom.isEmpty());
    }

    void aFailedBranchFailsOverToTheOthers()
    {
        Fixture fixture;
        routing::RequestContext context = request(u"agent"_s, "req-1");
        context.user = u"alice"_s;
        const routing::RouteDecision decision = fixture.router.route(context);
        const QString other = decision.canarySide == u"pro-a"_s ? u"pro-b"_s : u"pro-a"_s;
        QCOMPARE(providers(decision), (QStringList{decision.canarySide, other}));
        QCOMPARE(decision.candidates[0].role, CandidateRole::Primary);
        QCOMPARE(decision.candidates[1].role, CandidateRole::OtherBranch);
        QVERIFY(hasStep(decision, u"target"_s, u"split branch provider `"_s));
        QVERIFY(hasStep(decision, u"failover"_s,
                        u"then 1 endpoint(s) of the split's other branches"_s));

        // A branch an operator set to weight 0 is off: no traffic, and no failover to it.
        QCOMPARE(fixture.router.setCanaryWeights(u"canary"_s, {100, 0}), QString());
        const routing::RouteDecision off = fixture.router.route(context);
        QCOMPARE(providers(off), QStringList{u"pro-a"_s});
    }

    void aStrictSplitKeepsItsPromise()
    {
        QByteArray strict(kRoutedConfig);
        strict.replace("{target: pro-b, weight: 5}], key: user}",
                       "{target: pro-b, weight: 5}], key: user, strict: true}");
        Fixture fixture(strict.constData());
        QVERIFY(fixture.config->routing.routes[1].strictSplit);
        fixture.health.applyAction(fixture.index(u"pro-b"_s), ProviderAction::Disable);
        int refused = 0;
        for (int u = 0; u < 400; ++u) {
            routing::RequestContext context = request(u"agent"_s, QByteArray::number(u));
            context.user = u"user-%1"_s.arg(u);
            const routing::RouteDecision decision = fixture.router.route(context);
            QVERIFY(decision.canaryMovedFrom.isEmpty());
            QCOMPARE(decision.candidates.size(), decision.canarySide == u"pro-a"_s ? 1 : 0);
            if (decision.refusal == routing::RouteDecision::Refusal::NoCandidate) {
                ++refused;
                QVERIFY(hasStep(decision, u"target"_s,
                                u"pinned to provider `pro-b`; no failover beyond it"_s));
            }
        }
        QVERIFY2(refused > 0 && refused < 60, qPrintable(QString::number(refused)));
    }

    // ---- agents ----

    void agentRegistryForgetsSilentAgents()
    {
        timing::ManualClock clock;
        health::AgentRegistry registry(clock, [] { return 30s; });
        registry.upsert(
            {u"planner"_s, QUrl(u"http://127.0.0.1:9001/v1"_s), {u"travel/plan/trip"_s}, 4, {}}, 7);
        clock.advance(29s);
        QVERIFY(registry.heartbeat(u"planner"_s, std::nullopt));
        clock.advance(29s);
        QCOMPARE(registry.offering(u"travel/plan/trip"_s).size(), 1);
        QVERIFY(registry.expire().isEmpty());
        clock.advance(1s); // 30 s since the last heartbeat
        QVERIFY(registry.offering(u"travel/plan/trip"_s).isEmpty());
        QVERIFY(!registry.heartbeat(u"planner"_s, std::nullopt)); // too late: register again
        const QList<health::AgentRecord> expired = registry.expire();
        QCOMPARE(expired.size(), 1);
        QCOMPARE(expired.first().endpoint, 7);
        QVERIFY(registry.agents().isEmpty());
    }

    void busyAgentsAreSkippedUntilTheySayOtherwise()
    {
        timing::ManualClock clock;
        health::AgentRegistry registry(clock, [] { return 30s; });
        registry.upsert({u"a"_s, QUrl(u"http://127.0.0.1:9001"_s), {u"x/y/z"_s}, 0, {}}, 1);
        QVERIFY(registry.heartbeat(u"a"_s, true));
        QVERIFY(registry.offering(u"x/y/z"_s).isEmpty());
        QVERIFY(registry.heartbeat(u"a"_s, std::nullopt)); // no word on busy: still busy
        QVERIFY(registry.offering(u"x/y/z"_s).isEmpty());
        QVERIFY(registry.heartbeat(u"a"_s, false));
        QCOMPARE(registry.offering(u"x/y/z"_s).size(), 1);
        QVERIFY(registry.offering(u"x/y"_s).isEmpty()); // all three parts must match
    }

    void intentGoesToARegisteredAgent()
    {
        Fixture fixture;
        const int configured = fixture.health.providerCount();
        QVERIFY(!fixture.router.registerAgent({u"booker"_s,
                                               QUrl(u"http://127.0.0.1:9002/v1"_s),
                                               {u"travel/book/flight"_s, u"travel/book/hotel"_s},
                                               8,
                                               {}}));
        QVERIFY(!fixture.router.registerAgent({u"other"_s,
                                               QUrl(u"http://127.0.0.1:9003/v1"_s),
                                               {u"travel/book/car"_s},
                                               0,
                                               {u"car-model"_s}}));
        QCOMPARE(fixture.health.providerCount(), configured + 2);

        routing::RequestContext context = request(u"whatever"_s);
        context.intent = u"travel/book/flight"_s;
        const routing::RouteDecision decision = fixture.router.route(context);
        QCOMPARE(providers(decision), QStringList{u"booker"_s});
        QCOMPARE(decision.candidates.first().endpoint, configured);
        QCOMPARE(decision.candidates.first().upstreamModel, u"whatever"_s);
        QCOMPARE(fixture.health.providerConfig(configured).baseUrl,
                 QUrl(u"http://127.0.0.1:9002/v1"_s));
        QCOMPARE(fixture.health.providerConfig(configured).capacity, 8);

        QVERIFY(!fixture.router.agentHeartbeat(u"booker"_s, true));
        const routing::RouteDecision busy = fixture.router.route(context);
        QCOMPARE(busy.refusal, routing::RouteDecision::Refusal::NoCandidate);
        QVERIFY(hasStep(busy, u"intent"_s,
                        u"no live, idle agent offers `travel/book/flight` (2 agent(s) "
                        u"registered)"_s));

        fixture.clock.advance(31s);
        fixture.router.expireAgents();
        QVERIFY(fixture.router.agents().agents().isEmpty());
        QVERIFY(fixture.health.isRetired(configured));
        QVERIFY(fixture.health.isRetired(configured + 1));
    }

    void agentRegistrationIsChecked_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<QString>("url");
        QTest::addColumn<QStringList>("capabilities");
        QTest::addColumn<QString>("error");
        QTest::newRow("id") << u"a b"_s << u"http://127.0.0.1:1"_s << QStringList{u"a/b/c"_s}
                            << u"`id` must be 1 to 64 letters, digits, `.`, `_` or `-`"_s;
        QTest::newRow("taken") << u"backup"_s << u"http://127.0.0.1:1"_s << QStringList{u"a/b/c"_s}
                               << u"`backup` is a configured provider; an agent needs an id of "
                                  u"its own"_s;
        QTest::newRow("url") << u"a"_s << u"ftp://host"_s << QStringList{u"a/b/c"_s}
                             << u"`base_url` must be an http or https URL such as "
                                u"`http://127.0.0.1:9001/v1`"_s;
        QTest::newRow("no capabilities") << u"a"_s << u"http://h"_s << QStringList{}
                                         << u"`capabilities` must list at least one tag"_s;
        QTest::newRow("tag shape") << u"a"_s << u"http://h"_s << QStringList{u"a/b"_s}
                                   << u"capability `a/b` must be `domain/action/attribute`, "
                                      u"each a word of letters, digits, `-`, `_`, `.` or `:`"_s;
    }
    void agentRegistrationIsChecked()
    {
        QFETCH(QString, id);
        QFETCH(QString, url);
        QFETCH(QStringList, capabilities);
        QFETCH(QString, error);
        Fixture fixture;
        const auto refusal = fixture.router.registerAgent({id, QUrl(url), capabilities, 0, {}});
        QVERIFY(refusal);
        QCOMPARE(refusal->message, error);
    }

    void reRegistrationKeepsTheEndpointUnlessItMoved()
    {
        Fixture fixture;
        const health::AgentRegistration agent{
            u"a"_s, QUrl(u"http://127.0.0.1:9001"_s), {u"x/y/z"_s}, 0, {}};
        QVERIFY(!fixture.router.registerAgent(agent));
        const int first = fixture.router.agents().find(u"a"_s)->endpoint;
        QVERIFY(!fixture.router.registerAgent(agent));
        QCOMPARE(fixture.router.agents().find(u"a"_s)->endpoint, first);
        health::AgentRegistration moved = agent;
        moved.baseUrl = QUrl(u"http://127.0.0.1:9005"_s);
        QVERIFY(!fixture.router.registerAgent(moved));
        QVERIFY(fixture.router.agents().find(u"a"_s)->endpoint != first);
        QVERIFY(fixture.health.isRetired(first));
    }

    // ---- snapshots and endpoint identity ----

    void aRequestKeepsTheTableItTookWhenRulesChange()
    {
        Fixture fixture;
        const std::shared_ptr<const routing::RoutingTable> taken = fixture.router.table();
        auto next = std::make_shared<config::Config>(*fixture.config);
        next->routing.routes.removeIf(
            [](const config::RouteRule &rule) { return rule.name == u"local-only"_s; });
        fixture.apply(std::move(next));

        routing::RequestContext sensitive = request(u"small"_s);
        sensitive.sensitivity = u"high"_s;
        QCOMPARE(fixture.router.route(*taken, sensitive).rule, u"local-only"_s);
        QCOMPARE(providers(fixture.router.route(*taken, sensitive)), QStringList{u"light-a"_s});
        QCOMPARE(fixture.router.route(sensitive).rule, QString()); // the new table has no rule
        QCOMPARE(taken->config().routing.routes.size(), 4);        // the old snapshot is intact
        QCOMPARE(fixture.store.config().routing.routes.size(), 3);
    }

    void aConfiguredProviderTakesItsIdOverFromAnAgent()
    {
        Fixture fixture(kPlainConfig);
        const health::AgentRegistration agent{
            u"third"_s, QUrl(u"http://127.0.0.1:9001"_s), {u"x/y/z"_s}, 0, {}};
        QVERIFY(!fixture.router.registerAgent(agent));
        const int agentSlot = fixture.index(u"third"_s);
        QCOMPARE(fixture.health.configuredIndexOf(u"third"_s), -1);

        fixture.apply(loadConfig(R"(
providers:
  - {id: first, kind: simulated, models: [shared, only-first]}
  - {id: third, kind: simulated, models: [only-third]}
)"));
        QVERIFY(fixture.health.isRetired(agentSlot));
        QCOMPARE(fixture.router.agents().find(u"third"_s), nullptr);
        const int third = fixture.health.configuredIndexOf(u"third"_s);
        QVERIFY(third >= 0 && third != agentSlot);
        QCOMPARE(fixture.router.route(request(u"only-third"_s)).candidates.first().endpoint, third);
    }

    void endpointsKeepTheirIdentityAcrossSnapshots()
    {
        Fixture fixture(kPlainConfig);
        const int first = fixture.index(u"first"_s);
        const int second = fixture.index(u"second"_s);
        fixture.health.applyAction(second, ProviderAction::Trip);

        // `first` leaves, `third` arrives, `second` moves to the top of the file.
        fixture.apply(loadConfig(R"(
providers:
  - {id: second, kind: simulated, models: [shared]}
  - {id: third, kind: simulated, models: [shared, only-third]}
)"));
        QCOMPARE(fixture.index(u"second"_s), second); // same slot, same state
        QCOMPARE(fixture.health.breakerState(second), BreakerState::Open);
        QCOMPARE(fixture.index(u"first"_s), -1);
        QVERIFY(fixture.health.isRetired(first));
        const int third = fixture.index(u"third"_s);
        QVERIFY(third != first && third != second); // slots are never reused

        // Positions in the new file are not slots: the decision names the right endpoints.
        const routing::RouteDecision decision = fixture.router.route(request(u"only-third"_s));
        QCOMPARE(decision.candidates.size(), 1);
        QCOMPARE(decision.candidates.first().providerId, u"third"_s);
        QCOMPARE(decision.candidates.first().endpoint, third);
        QCOMPARE(fixture.health.providerConfig(third).id, u"third"_s);
        // `second` is open: only `third` can take the shared model now.
        QCOMPARE(providers(fixture.router.route(request(u"shared"_s))), QStringList{u"third"_s});
        QCOMPARE(fixture.router.models(),
                 (QList<routing::Router::ModelListing>{
                     {u"only-third"_s, u"third"_s, protocol::kChatOperations},
                     {u"shared"_s, u"second"_s, protocol::kChatOperations}}));
    }
};

QTEST_GUILESS_MAIN(TestRouter)
#include "tst_router.moc"
