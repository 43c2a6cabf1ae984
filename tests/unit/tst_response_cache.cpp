// The response cache's parts that need no server: the `cache:` maps of route rules and model
// entries and the `response_cache` section, with the errors a file can make in them; which
// `cache:` a route decision carries; the key (what counts as the request's meaning, and what is
// left to the provider's sampling); and the node's cache, least recently used first beyond its
// bounds, with each entry's ttl.

#include "answers/response_cache.h"
#include "config/config_loader.h"
#include "config/config_store.h"
#include "config/route_rules_io.h"
#include "config_error_lines.h"
#include "health/health_registry.h"
#include "http/response_caching.h"
#include "routing/router.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using namespace switchyard;

namespace {

config::LoadResult load(const QByteArray &yaml)
{
    return config::loadConfigText(yaml, u"cache.yaml"_s,
                                  [](const QString &) { return std::optional<QByteArray>(); });
}

std::shared_ptr<const config::Config> loaded(const QByteArray &yaml)
{
    config::LoadResult result = load(yaml);
    if (!result.ok())
        qFatal("test config does not load: %s", qPrintable(result.errors.first().toString()));
    return std::make_shared<const config::Config>(std::move(*result.config));
}

constexpr auto kCached = R"(providers:
  - id: a
    kind: simulated
    models:
      - {name: small, cache: {ttl: 10m, max_bytes: 512KiB}}
      - plain
      - {name: embed, endpoints: [embeddings], cache: {ttl: 1h}}
routes:
  - name: evals
    priority: 10
    when: {field: header.x-suite, exists: true}
    to: {provider: a}
    cache: {ttl: 30s, sampled: true}
  - name: default
    to: {provider: a}
response_cache:
  max_entries: 500
  max_bytes: 8MiB
)";

answers::StoredAnswer answerOf(const QByteArray &body)
{
    answers::StoredAnswer answer;
    answer.contentType = "application/json";
    answer.body = body;
    answer.requestId = "req";
    return answer;
}

std::optional<QByteArray> bodyOf(answers::LocalResponseCache &cache, const QByteArray &key)
{
    const std::optional<answers::StoredAnswer> answer = cache.find(key);
    return answer ? std::optional(answer->body) : std::nullopt;
}

QByteArray keyOf(const QByteArray &body, const config::ResponseCacheConfig &cache = {},
                 protocol::Operation operation = protocol::Operation::Chat,
                 const QString &tenant = u"t"_s, const QString &rule = {},
                 const protocol::HeaderList &headers = {})
{
    const auto key =
        http::ResponseCaching::keyFor(operation, body, headers, cache, rule.toUtf8(), {}, tenant);
    const auto *found = std::get_if<http::ResponseCaching::Key>(&key);
    return found ? found->storeKey : QByteArray();
}

} // namespace

class TestResponseCache : public QObject {
    Q_OBJECT

private slots:
    void readsTheCachesOfRulesAndModels()
    {
        const std::shared_ptr<const config::Config> config = loaded(kCached);
        const config::ModelRoute &small = config->providers[0].models[0];
        QVERIFY(small.cache);
        QCOMPARE(small.cache->ttl, 10min);
        QCOMPARE(small.cache->maxAnswerBytes, 512 * 1024);
        QVERIFY(!small.cache->sampled);
        QVERIFY(!config->providers[0].models[1].cache);
        const config::RouteRule &evals = config->routing.routes[0];
        QVERIFY(evals.cache);
        QCOMPARE(evals.cache->ttl, 30s);
        QCOMPARE(evals.cache->maxAnswerBytes, 1024 * 1024); // the default
        QVERIFY(evals.cache->sampled);
        QVERIFY(!config->routing.routes[1].cache);
        QCOMPARE(config->responseCache.maxEntries, 500);
        QCOMPARE(config->responseCache.maxBytes, 8 * 1024 * 1024);
        QCOMPARE(config::Config().responseCache.maxEntries, 10000);
    }

    void reportsCacheErrors_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QStringList>("expectedErrors");
        const QByteArray provider = "providers:\n  - id: a\n    kind: simulated\n    models:\n";
        QTest::newRow("unknown key")
            << provider + "      - {name: m, cache: {ttl: 5m, max_byte: 1KiB}}\n"
            << QStringList{u"cache.yaml:5:36: unknown key `max_byte` (did you mean "
                           u"`max_bytes`?)"_s};
        QTest::newRow("ttl too long")
            << provider + "      - {name: m, cache: {ttl: 48h}}\n"
            << QStringList{u"cache.yaml:5:32: `ttl` must be at most 24h, got \"48h\""_s};
        QTest::newRow("ttl too short")
            << provider + "      - {name: m, cache: {ttl: 500ms}}\n"
            << QStringList{u"cache.yaml:5:32: `ttl` must be between 1s and 24h, got \"500ms\""_s};
        QTest::newRow("answer bound too small")
            << provider + "      - {name: m, cache: {max_bytes: 10}}\n"
            << QStringList{u"cache.yaml:5:38: `max_bytes` (the largest answer kept) must be "
                           u"between 1KiB and 64MiB, got \"10\""_s};
        QTest::newRow("not a map") << provider + "      - {name: m, cache: yes}\n"
                                   << QStringList{u"cache.yaml:5:26: `cache` must be a map, "
                                                  u"got \"yes\""_s};
        QTest::newRow("a rule's unknown key")
            << provider + "      - m\nroutes:\n  - name: r\n    to: {provider: a}\n"
                          "    cache: {tll: 5m}\n"
            << QStringList{u"cache.yaml:9:13: unknown key `tll` (did you mean `ttl`?)"_s};
        QTest::newRow("two providers disagree")
            << "providers:\n"
               "  - {id: a, kind: simulated, models: [{name: m, cache: {ttl: 5m}}]}\n"
               "  - {id: b, kind: simulated, models: [{name: m, cache: {ttl: 6m}}]}\n"_ba
            << QStringList{u"cache.yaml:3:56: model `m` has another `cache` at line 2: a "
                           u"model's cache is said once, or the same for every provider that "
                           u"lists it"_s};
        QTest::newRow("the section's bound")
            << provider + "      - m\nresponse_cache: {max_entries: 0, max_bytes: 1KiB}\n"
            << QStringList{
                   u"cache.yaml:6:31: `max_entries` must be at least 1, got \"0\""_s,
                   u"cache.yaml:6:45: `max_bytes` must be between 64KiB and 16GiB, got \"1KiB\""_s};
    }

    void reportsCacheErrors()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QStringList, expectedErrors);
        const config::LoadResult result = load(yaml);
        QCOMPARE(errorLines(result), expectedErrors);
        QVERIFY(!result.ok());
    }

    // The console's rule editor writes rules back through JSON: a rule's cache must survive it.
    void aRulesCacheSurvivesTheJsonRoundTrip()
    {
        const std::shared_ptr<const config::Config> config = loaded(kCached);
        const QJsonArray json = config::routeRulesJson(config->routing.routes);
        QVERIFY(json[0].toObject().contains(u"cache"_s));
        QVERIFY(!json[1].toObject().contains(u"cache"_s));
        const auto read = config::readRouteRules(
            QJsonDocument(QJsonObject{{u"routes"_s, json}}).toJson(), u"rules.json"_s, *config);
        QVERIFY(std::holds_alternative<QList<config::RouteRule>>(read));
        const QList<config::RouteRule> rules = std::get<QList<config::RouteRule>>(read);
        QVERIFY(rules[0].cache && rules[0].cache->sameSettings(*config->routing.routes[0].cache));
        QCOMPARE(config::routeRulesJson(rules), json);
    }

    void theDecisionCarriesTheRulesCacheThenTheModels()
    {
        timing::ManualClock clock;
        config::ConfigStore store(loaded(kCached));
        health::HealthRegistry health(store, clock);
        routing::Router router(store, health);
        const auto route = [&](const QString &model, bool suite,
                               protocol::Operation operation = protocol::Operation::Chat,
                               const QString &intent = {}) {
            routing::RequestContext context;
            context.requestId = "req-1";
            context.model = model;
            context.operation = operation;
            context.intent = intent;
            if (suite)
                context.headers.append({QByteArray("x-suite"), QByteArray("nightly")});
            return router.route(context);
        };
        const routing::RouteDecision evals = route(u"small"_s, true);
        QVERIFY(evals.cache);
        QCOMPARE(evals.cache->ttl, 30s); // the rule's, not the model's 10m
        QVERIFY(evals.explanation().contains(u"cache: answers kept for 30 s (rule `evals`)"_s));
        const routing::RouteDecision model = route(u"small"_s, false);
        QVERIFY(model.cache);
        QCOMPARE(model.cache->ttl, 10min);
        QVERIFY(!route(u"plain"_s, false).cache);
        const routing::RouteDecision embed =
            route(u"embed"_s, false, protocol::Operation::Embeddings);
        QVERIFY(embed.cache);
        QCOMPARE(embed.cache->ttl, 1h);
        // An agent may act on a request: never answered from the cache.
        QVERIFY(!route(u"small"_s, false, protocol::Operation::Chat, u"summarize"_s).cache);
    }

    void theKeyIsTheRequestsMeaning()
    {
        const QByteArray base =
            R"({"model":"m","temperature":0,"messages":[{"role":"user","content":"hi"}]})";
        const QByteArray key = keyOf(base);
        QVERIFY(!key.isEmpty());
        QCOMPARE(key.size(), 64); // a SHA-256, in hex: no client text reaches a store
        // The same fields in another order, and fields that say who asks or how to keep it.
        QCOMPARE(keyOf(R"({"messages":[{"role":"user","content":"hi"}],"temperature":0,)"
                       R"("model":"m","user":"u","metadata":{"a":"b"},"store":false,)"
                       R"("safety_identifier":"s","prompt_cache_key":"p"})"),
                 key);
        // What is asked, and who asks.
        for (const QByteArray &other :
             {QByteArray(R"({"model":"m","temperature":0,"messages":[{"role":"user",)"
                         R"("content":"ho"}]})"),
              QByteArray(R"({"model":"n","temperature":0,"messages":[{"role":"user",)"
                         R"("content":"hi"}]})"),
              QByteArray(R"({"model":"m","temperature":0,"stream":true,"messages":[)"
                         R"({"role":"user","content":"hi"}]})"),
              QByteArray(R"({"model":"m","temperature":0,"tools":[],"messages":[)"
                         R"({"role":"user","content":"hi"}]})")})
            QVERIFY(keyOf(other) != key);
        QVERIFY(keyOf(base, {}, protocol::Operation::Chat, u"other tenant"_s) != key);
        QVERIFY(keyOf(base, {}, protocol::Operation::Chat, u"t"_s, u"a rule"_s) != key);
        QVERIFY(keyOf(base, {}, protocol::Operation::Completions) != key);
        const QByteArray messages = keyOf(base, {}, protocol::Operation::Messages);
        QVERIFY(keyOf(base, {}, protocol::Operation::Messages, u"t"_s, {},
                      {{"anthropic-beta", "tools-2024"}}) != messages);
        // The request id header is not part of it; the credentials the client sent are (a
        // provider that takes the client's own may answer each differently).
        QCOMPARE(keyOf(base, {}, protocol::Operation::Chat, u"t"_s, {}, {{"x-request-id", "abc"}}),
                 key);
        QVERIFY(keyOf(base, {}, protocol::Operation::Chat, u"t"_s, {},
                      {{"Authorization", "Bearer sk-one"}}) != key);
        QVERIFY(keyOf(base, {}, protocol::Operation::Chat, u"t"_s, {}, {{"x-api-key", "sk-two"}}) !=
                key);
    }

    // What answers is part of what was asked: the tier, the canary branch and the models the
    // planned endpoints are sent; not which provider of one model health picked.
    void theTargetIsWhatRoutingChose()
    {
        routing::RouteDecision light;
        light.rule = u"r"_s;
        light.tier = u"light"_s;
        routing::RouteCandidate a;
        a.providerId = u"a"_s;
        a.upstreamModel = u"small-v1"_s;
        routing::RouteCandidate b = a;
        b.providerId = u"b"_s;
        routing::RouteCandidate fallback = a;
        fallback.upstreamModel = u"other"_s;
        fallback.role = routing::CandidateRole::FallbackChain;
        light.candidates = {a, b, fallback};
        const QByteArray target = http::ResponseCaching::targetOf(light);

        routing::RouteDecision reordered = light;
        reordered.candidates = {b, a};
        QCOMPARE(http::ResponseCaching::targetOf(reordered), target);
        routing::RouteDecision pro = light;
        pro.tier = u"pro"_s;
        QVERIFY(http::ResponseCaching::targetOf(pro) != target);
        routing::RouteDecision renamed = light;
        renamed.candidates[1].upstreamModel = u"small-v2"_s;
        QVERIFY(http::ResponseCaching::targetOf(renamed) != target);
        routing::RouteDecision canary = light;
        canary.canarySide = u"[a]"_s;
        QVERIFY(http::ResponseCaching::targetOf(canary) != target);
    }

    // The tap keeps a whole 2xx answer once its trace is in, whichever comes first; never one
    // another model gave after an error, nor two answers under one request id.
    void theTapKeepsOnlyAnAnswerThatQualifies()
    {
        answers::LocalResponseCache store({});
        http::ResponseCaching caching(store);
        const config::ResponseCacheConfig cache;
        const auto run = [&](const QByteArray &requestId, const QByteArray &storeKey,
                             const protocol::HeaderList &headers, bool traceFirst) {
            std::unique_ptr<httpwire::AnswerTap> tap =
                caching.keeper({storeKey, false, true}, requestId, cache);
            QVERIFY(tap);
            telemetry::Trace trace;
            trace.requestId = requestId;
            trace.status = 200;
            trace.model = u"m"_s;
            trace.provider = u"p"_s;
            trace.inputTokens = 3;
            trace.costUsd = 0.5;
            trace.priced = true;
            if (traceFirst)
                caching.traceFinished(trace);
            tap->whole(200, headers, "application/json", "{}");
            tap->ended(true);
            if (!traceFirst)
                caching.traceFinished(trace);
        };
        run("r1", "kept", {}, false);
        run("r2", "kept too", {}, true);
        run("r3", "fallback", {{"x-switchyard-fallback-model", "other"}}, false);
        QVERIFY(store.find("kept") && store.find("kept too"));
        QCOMPARE(store.find("kept")->costUsd, 0.5);
        QCOMPARE(store.find("kept")->provider, u"p"_s);
        QVERIFY(!store.find("fallback"));

        // Two running requests with one id: neither answer is kept under either key.
        std::unique_ptr<httpwire::AnswerTap> first =
            caching.keeper({"one", false, true}, "same", cache);
        QVERIFY(first);
        QVERIFY(!caching.keeper({"two", false, true}, "same", cache));
        first->whole(200, {}, "application/json", "{}");
        first->ended(true);
        telemetry::Trace trace;
        trace.requestId = "same";
        trace.status = 200;
        caching.traceFinished(trace);
        QVERIFY(!store.find("one") && !store.find("two"));
        QCOMPARE(caching.counts().notKept, quint64(2));
    }

    void sampledRequestsNeedTheCachesConsent()
    {
        const QByteArray unset = R"({"model":"m","messages":[]})";
        const QByteArray warm = R"({"model":"m","temperature":0.2,"messages":[]})";
        const config::ResponseCacheConfig strict;
        config::ResponseCacheConfig sampled;
        sampled.sampled = true;
        for (const QByteArray &body : {unset, warm}) {
            const auto refused = http::ResponseCaching::keyFor(protocol::Operation::Chat, body, {},
                                                               strict, {}, {}, u"t"_s);
            QVERIFY(std::holds_alternative<QString>(refused));
            QVERIFY(!keyOf(body, sampled).isEmpty());
        }
        QVERIFY(std::get<QString>(http::ResponseCaching::keyFor(protocol::Operation::Chat, warm, {},
                                                                strict, {}, {}, u"t"_s))
                    .contains(u"temperature 0.2"_s));
        // An embedding has no temperature and is never sampled.
        QVERIFY(!keyOf(R"({"model":"e","input":"x"})", strict, protocol::Operation::Embeddings)
                     .isEmpty());
    }

    void cacheControlRefreshesOrKeepsNothing()
    {
        const QByteArray body = R"({"model":"m","temperature":0,"messages":[]})";
        const auto directives = [&](const QByteArray &value) {
            return std::get<http::ResponseCaching::Key>(http::ResponseCaching::keyFor(
                protocol::Operation::Chat, body, {{"Cache-Control", value}}, {}, {}, {}, u"t"_s));
        };
        QVERIFY(directives("no-cache").refresh);
        QVERIFY(directives("no-cache").keep);
        QVERIFY(!directives("No-Store").keep);
        QVERIFY(!directives("max-age=0, no-store").refresh);
        QVERIFY(directives("max-age=0, NO-CACHE, no-store").refresh);
    }

    void theNodesCacheDropsTheLeastRecentlyUsed()
    {
        timing::ManualClock clock;
        const qint64 oneAnswer =
            answerOf(QByteArray(100, 'a')).approximateBytes() + QByteArray("k1").size();
        answers::LocalResponseCache cache({3, 1024 * 1024}, clock);
        cache.keep("k1", answerOf(QByteArray(100, 'a')), 1min);
        cache.keep("k2", answerOf(QByteArray(100, 'b')), 1min);
        cache.keep("k3", answerOf(QByteArray(100, 'c')), 1min);
        QCOMPARE(cache.counts().entries, 3);
        QCOMPARE(cache.counts().bytes, 3 * oneAnswer);
        QVERIFY(bodyOf(cache, "k1")); // k2 is now the least recently used
        cache.keep("k4", answerOf(QByteArray(100, 'd')), 1min);
        QVERIFY(!bodyOf(cache, "k2"));
        QVERIFY(bodyOf(cache, "k1") && bodyOf(cache, "k3") && bodyOf(cache, "k4"));
        QCOMPARE(cache.counts().evictedByBound, quint64(1));

        // The byte bound, lowered: two answers' worth keeps the two most recently used.
        cache.setLimits({3, 2 * oneAnswer});
        QCOMPARE(cache.counts().entries, 2);
        QVERIFY(cache.counts().bytes <= 2 * oneAnswer);
        QVERIFY(!bodyOf(cache, "k1"));
        QVERIFY(bodyOf(cache, "k3") && bodyOf(cache, "k4"));
        // An answer larger than the whole cache is not kept, and pushes nothing out.
        cache.keep("huge", answerOf(QByteArray(4096, 'h')), 1min);
        QVERIFY(!bodyOf(cache, "huge"));
        QCOMPARE(cache.counts().entries, 2);

        // A keep replaces the entry under its key.
        cache.keep("k4", answerOf(QByteArray(100, 'e')), 1min);
        QCOMPARE(*bodyOf(cache, "k4"), QByteArray(100, 'e'));
        QCOMPARE(cache.counts().entries, 2);
    }

    void theNodesCacheForgetsAnAnswerAfterItsTtl()
    {
        timing::ManualClock clock;
        answers::LocalResponseCache cache({}, clock);
        cache.keep("short", answerOf("s"), 1s);
        cache.keep("long", answerOf("l"), 1h);
        clock.advance(999ms);
        QVERIFY(bodyOf(cache, "short"));
        clock.advance(1ms);
        QVERIFY(!bodyOf(cache, "short"));
        QVERIFY(bodyOf(cache, "long"));
        QCOMPARE(cache.counts().expired, quint64(1));
        QCOMPARE(cache.counts().entries, 1);
    }

    void anAnswerWithItsCostSurvivesEncoding()
    {
        answers::StoredAnswer answer = answerOf("body");
        answer.streamed = true;
        answer.model = u"m"_s;
        answer.provider = u"p"_s;
        answer.inputTokens = 11;
        answer.outputTokens = 7;
        answer.costUsd = 1.25;
        answer.priced = true;
        QCOMPARE(answers::decodeAnswer(answers::encodeAnswer(answer)), std::optional(answer));
        // The duplicate guard's answers carry no usage, and read back without one.
        const answers::StoredAnswer plain = answerOf("plain");
        QVERIFY(!answers::encodeAnswer(plain).contains("usage"));
        QCOMPARE(answers::decodeAnswer(answers::encodeAnswer(plain)), std::optional(plain));
    }
};

QTEST_GUILESS_MAIN(TestResponseCache)
#include "tst_response_cache.moc"
