// Rules as written in the config file: every operator and combination matching a request, the
// routing sections loading with their defaults, and every mistake reported with FILE:LINE:COL and
// the same words a console form gets from validateRule.

#include "config/config_loader.h"
#include "config/glob_pattern.h"
#include "config/route_rules_io.h"
#include "config/rule_validation.h"
#include "config_error_lines.h"
#include "routing/request_context.h"
#include "routing/rule_matcher.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using namespace switchyard;

namespace {

// Ten lines: routing sections in a case start at line 11.
constexpr auto kProviders = "providers:\n"
                            "  - id: local\n"
                            "    kind: simulated\n"
                            "    models: [small]\n"
                            "  - id: cloud-a\n"
                            "    kind: simulated\n"
                            "    models: [big]\n"
                            "  - id: cloud-b\n"
                            "    kind: simulated\n"
                            "    models: [big]\n";

config::LoadResult load(const QByteArray &routing)
{
    return config::loadConfigText(QByteArray(kProviders) + routing, u"test.yaml"_s,
                                  [](const QString &) { return std::optional<QByteArray>(); });
}

// A route with `shadow: <shadow>` on line 15, among a model API, an agent and the simulator.
QByteArray shadowConfig(const QByteArray &shadow)
{
    return "providers:\n"
           "  - {id: cloud, kind: openai, base_url: \"http://127.0.0.1:9/v1\", models: [m]}\n"
           "  - id: booker\n"
           "    kind: mapped\n"
           "    base_url: http://127.0.0.1:9100\n"
           "    models: [m]\n"
           "    mapping:\n"
           "      path: /generate\n"
           "      request: {prompt: $.messages}\n"
           "      answer: $.text\n"
           "  - {id: sim, kind: simulated, models: [m]}\n"
           "routes:\n"
           "  - name: mirrored\n"
           "    to: {provider: cloud}\n"
           "    shadow: "_ba +
           shadow + "\n";
}

// The request every condition case is matched against.
routing::RequestContext sampleRequest()
{
    routing::RequestContext context;
    context.model = u"gpt-4o-mini"_s;
    context.tenant = u"acme"_s;
    context.user = u"alice"_s;
    context.task = u"chat"_s;
    context.sensitivity = u"high"_s;
    context.priority = u"normal"_s;
    context.estimatedInputTokens = 1500;
    context.headers = {{"X-Team", "blue"}};
    context.meta = {{u"app"_s, u"demo"_s}, {u"n"_s, u"7"_s}};
    return context;
}

} // namespace

class TestRoutingRules : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void conditionMatches_data()
    {
        QTest::addColumn<QByteArray>("when");
        QTest::addColumn<bool>("matches");
        // eq / ne
        QTest::newRow("eq") << "{field: model, eq: gpt-4o-mini}"_ba << true;
        QTest::newRow("eq other") << "{field: model, eq: gpt-4o}"_ba << false;
        QTest::newRow("ne same") << "{field: tenant, ne: acme}"_ba << false;
        QTest::newRow("ne other") << "{field: tenant, ne: globex}"_ba << true;
        QTest::newRow("ne absent field") << "{field: meta.missing, ne: x}"_ba << true;
        QTest::newRow("eq absent field") << "{field: meta.missing, eq: x}"_ba << false;
        // in
        QTest::newRow("in") << "{field: user, in: [bob, alice]}"_ba << true;
        QTest::newRow("in not listed") << "{field: user, in: [bob]}"_ba << false;
        QTest::newRow("in single value") << "{field: task, in: chat}"_ba << true;
        // glob
        QTest::newRow("glob prefix") << "{field: model, glob: \"gpt-4o*\"}"_ba << true;
        QTest::newRow("glob suffix") << "{field: model, glob: \"*mini\"}"_ba << true;
        QTest::newRow("glob one character") << "{field: model, glob: \"gpt-?o-mini\"}"_ba << true;
        QTest::newRow("glob no match") << "{field: model, glob: \"gpt-5*\"}"_ba << false;
        QTest::newRow("glob whole value") << "{field: model, glob: \"gpt\"}"_ba << false;
        // regex: the whole value must match
        QTest::newRow("regex") << "{field: model, regex: \"gpt-4o(-mini)?\"}"_ba << true;
        QTest::newRow("regex part is not enough") << "{field: model, regex: \"4o\"}"_ba << false;
        QTest::newRow("regex search spelled out") << "{field: model, regex: \".*4o.*\"}"_ba << true;
        // numbers
        QTest::newRow("tokens lt") << "{field: tokens.input, lt: 2000}"_ba << true;
        QTest::newRow("tokens le equal") << "{field: tokens.input, le: 1500}"_ba << true;
        QTest::newRow("tokens gt equal") << "{field: tokens.input, gt: 1500}"_ba << false;
        QTest::newRow("tokens ge") << "{field: tokens.input, ge: 1500}"_ba << true;
        QTest::newRow("tokens eq") << "{field: tokens.input, eq: 1500}"_ba << true;
        QTest::newRow("meta number gt") << "{field: meta.n, gt: 5.5}"_ba << true;
        QTest::newRow("text is no number") << "{field: meta.app, lt: 3}"_ba << false;
        // exists
        QTest::newRow("header exists") << "{field: header.x-team, exists: true}"_ba << true;
        QTest::newRow("header absent") << "{field: header.x-missing, exists: true}"_ba << false;
        QTest::newRow("exists false") << "{field: header.x-missing, exists: false}"_ba << true;
        QTest::newRow("session not given") << "{field: user, exists: false}"_ba << false;
        QTest::newRow("meta exists") << "{field: meta.app, exists: true}"_ba << true;
        // the other fields
        QTest::newRow("header any case") << "{field: header.X-TEAM, eq: blue}"_ba << true;
        QTest::newRow("sensitivity") << "{field: sensitivity, eq: high}"_ba << true;
        QTest::newRow("priority") << "{field: priority, eq: normal}"_ba << true;
        QTest::newRow("meta") << "{field: meta.app, eq: demo}"_ba << true;
        // combinations
        QTest::newRow("all true") << "{all: [{field: tenant, eq: acme}, "
                                     "{field: sensitivity, eq: high}]}"_ba
                                  << true;
        QTest::newRow("all one false") << "{all: [{field: tenant, eq: acme}, "
                                          "{field: tenant, eq: globex}]}"_ba
                                       << false;
        QTest::newRow("any one true") << "{any: [{field: tenant, eq: globex}, "
                                         "{field: user, eq: alice}]}"_ba
                                      << true;
        QTest::newRow("any none") << "{any: [{field: tenant, eq: globex}, "
                                     "{field: user, eq: bob}]}"_ba
                                  << false;
        QTest::newRow("not") << "{not: {field: tenant, eq: acme}}"_ba << false;
        QTest::newRow("nested") << "{all: [{any: [{field: task, eq: code_gen}, "
                                   "{field: tokens.input, gt: 1000}]}, "
                                   "{not: {field: sensitivity, eq: low}}]}"_ba
                                << true;
    }
    void conditionMatches()
    {
        QFETCH(QByteArray, when);
        QFETCH(bool, matches);
        const config::LoadResult result =
            load("routes:\n  - name: r\n    when: " + when + "\n    to: {provider: local}\n");
        QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
        const auto condition =
            routing::CompiledCondition::compile(*result.config->routing.routes.first().when);
        QCOMPARE(condition.matches(sampleRequest()), matches);
    }

    void conditionReadsAsText()
    {
        const config::LoadResult result =
            load("routes:\n  - name: r\n    when: {all: [{field: tenant, in: [a, b]}, "
                 "{not: {field: model, glob: \"x*\"}}]}\n    to: {provider: local}\n");
        QVERIFY(result.ok());
        QCOMPARE(
            routing::CompiledCondition::compile(*result.config->routing.routes.first().when).text(),
            u"all of (tenant in [a, b], not (model glob x*))"_s);
    }

    void globMatches_data()
    {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("matches");
        QTest::newRow("star crosses slash") << u"org/*"_s << u"org/team/model"_s << true;
        QTest::newRow("empty star") << u"a*b"_s << u"ab"_s << true;
        QTest::newRow("backtracking") << u"*a*b"_s << u"xaxxab"_s << true;
        QTest::newRow("question needs one") << u"a?"_s << u"a"_s << false;
        QTest::newRow("regex characters are plain") << u"a.b"_s << u"axb"_s << false;
        QTest::newRow("only stars") << u"**"_s << u""_s << true;
        QTest::newRow("model: exact") << u"gpt-4o"_s << u"gpt-4o"_s << true;
        QTest::newRow("model: exact, different") << u"gpt-4o"_s << u"gpt-4"_s << false;
        QTest::newRow("model: star suffix") << u"gpt-*"_s << u"gpt-4o-mini"_s << true;
        QTest::newRow("model: star crosses slashes")
            << u"*/llama*"_s << u"meta/llama-3.1-8b"_s << true;
        QTest::newRow("model: star matches nothing") << u"gpt-*"_s << u"gpt-"_s << true;
        QTest::newRow("model: question mark") << u"qwen?"_s << u"qwen2"_s << true;
        QTest::newRow("model: question mark needs a character") << u"qwen?"_s << u"qwen"_s << false;
        QTest::newRow("model: star in the middle") << u"a*c"_s << u"abbbc"_s << true;
        QTest::newRow("model: star needs the rest") << u"a*c"_s << u"abbb"_s << false;
        QTest::newRow("model: backtracking") << u"*ab*ab"_s << u"xabyabab"_s << true;
        QTest::newRow("model: only a star") << u"*"_s << u""_s << true;
        QTest::newRow("model: case matters") << u"GPT-*"_s << u"gpt-4"_s << false;
    }
    void globMatches()
    {
        QFETCH(QString, pattern);
        QFETCH(QString, text);
        QFETCH(bool, matches);
        QCOMPARE(config::globMatches(pattern, text), matches);
    }

    void loadsEveryRoutingSection()
    {
        const config::LoadResult result = load(
            "tiers:\n"
            "  light: {pool: [local], timeout: 5s, retries: 3, max_input_tokens: 8000}\n"
            "  pro: {pool: [cloud-a, cloud-b], timeout: 45s, retries: 0, continue_streams: true}\n"
            "fallback_chain: [cloud-b, local]\n"
            "gearbox:\n"
            "  pro_tasks: [code_gen]\n"
            "  light_tasks: [chat, translate]\n"
            "  complexity:\n"
            "    threshold: 60\n"
            "    weights: {length: 1, turns: 2, tools: 3, code_blocks: 4}\n"
            "    saturation: {length_tokens: 1000, turns: 5, tools: 2, code_blocks: 1}\n"
            "scoring: {load: 0.5, latency: 0.25, success: 0.25}\n"
            "agents: {ttl: 10s, scoring: {load: 1, latency: 0, success: 0}, default_capacity: 4}\n"
            "routes:\n"
            "  - name: sensitive-stays-local\n"
            "    priority: 100\n"
            "    when: {field: sensitivity, eq: high}\n"
            "    to: {pool: [local]}\n"
            "  - name: agent-canary\n"
            "    priority: 50\n"
            "    when: {field: model, glob: \"agent-*\"}\n"
            "    to: {split: [{target: cloud-a, weight: 95}, {target: {pool: [cloud-b, local]}, "
            "weight: 5}], key: tenant, strict: true}\n"
            "  - name: default\n"
            "    to: {tier: auto}\n"
            "    continue_streams: true\n");
        QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
        const config::RoutingConfig &routing = result.config->routing;
        const config::TierConfig *light = routing.tier(u"light"_s);
        QCOMPARE(light->pool, QStringList{u"local"_s});
        QCOMPARE(light->timeout, 5s);
        QCOMPARE(light->retries, 3);
        QCOMPARE(light->maxInputTokens, 8000);
        const config::TierConfig *pro = routing.tier(u"pro"_s);
        QCOMPARE(pro->pool, (QStringList{u"cloud-a"_s, u"cloud-b"_s}));
        QCOMPARE(pro->timeout, 45s);
        QCOMPARE(pro->retries, 0);
        QCOMPARE(pro->maxInputTokens, 0);
        QVERIFY(pro->continueStreams);
        QVERIFY(!light->continueStreams);
        QCOMPARE(routing.fallbackChain, (QStringList{u"cloud-b"_s, u"local"_s}));
        QCOMPARE(routing.gearbox.proTasks, QStringList{u"code_gen"_s});
        QCOMPARE(routing.gearbox.lightTasks, (QStringList{u"chat"_s, u"translate"_s}));
        QCOMPARE(routing.gearbox.complexity.threshold, 60);
        QCOMPARE(routing.gearbox.complexity.codeBlocksWeight, 4.0);
        QCOMPARE(routing.gearbox.complexity.lengthTokensFull, 1000);
        QCOMPARE(routing.gearbox.complexity.codeBlocksFull, 1);
        QCOMPARE(routing.scoring.load, 0.5);
        QCOMPARE(routing.agents.ttl, 10s);
        QCOMPARE(routing.agents.scoring.latency, 0.0);
        QCOMPARE(routing.agents.defaultCapacity, 4);
        QCOMPARE(routing.routes.size(), 3);
        const config::RouteRule &canary = routing.routes[1];
        QCOMPARE(canary.name, u"agent-canary"_s);
        QCOMPARE(canary.priority, 50);
        QCOMPARE(canary.splitKey, config::SplitKey::Tenant);
        QCOMPARE(canary.split.size(), 2);
        QCOMPARE(canary.split[0].target.kind, config::RouteTarget::Kind::Provider);
        QCOMPARE(canary.split[1].target.label(), u"[cloud-b, local]"_s);
        QCOMPARE(canary.split[1].weight, 5);
        QVERIFY(canary.strictSplit);
        QVERIFY(!routing.routes[0].strictSplit);
        // The admin API's JSON says it, and reads back the same.
        const QJsonObject to =
            config::routeRulesJson(routing.routes)[1].toObject().value(u"to"_s).toObject();
        QCOMPARE(to.value(u"strict"_s), QJsonValue(true));
        QCOMPARE(routing.routes[2].to.kind, config::RouteTarget::Kind::Tier);
        QVERIFY(!routing.routes[2].when);
        QCOMPARE(routing.routes[2].namePosition.line, 33);
        QVERIFY(routing.routes[2].continueStreams);
        QVERIFY(!routing.routes[1].continueStreams);
        const QJsonArray rulesJson = config::routeRulesJson(routing.routes);
        QCOMPARE(rulesJson[2].toObject().value(u"continue_streams"_s), QJsonValue(true));
        QVERIFY(!rulesJson[1].toObject().contains(u"continue_streams"_s));
    }

    void routingDefaultsWhenAbsent()
    {
        const config::LoadResult result = load("");
        QVERIFY(result.ok());
        const config::RoutingConfig &routing = result.config->routing;
        const config::TierConfig *light = routing.tier(u"light"_s);
        QCOMPARE(light->timeout, 8s);
        QCOMPARE(light->retries, 2);
        QCOMPARE(light->maxInputTokens, 12000);
        QVERIFY(light->pool.isEmpty());
        const config::TierConfig *pro = routing.tier(u"pro"_s);
        QCOMPARE(pro->timeout, 30s);
        QCOMPARE(pro->retries, 1);
        QCOMPARE(routing.gearbox.complexity.threshold, 70);
        QCOMPARE(routing.gearbox.proTasks,
                 (QStringList{u"code_gen"_s, u"multi_step_reasoning"_s, u"long_plan"_s}));
        QCOMPARE(routing.gearbox.lightTasks,
                 (QStringList{u"chat"_s, u"extract"_s, u"summarize"_s}));
        QCOMPARE(routing.agents.ttl, 30s);
        QVERIFY(routing.routes.isEmpty());
    }

    void reportsRoutingErrors_data()
    {
        QTest::addColumn<QByteArray>("yaml");
        QTest::addColumn<QStringList>("errors");
        QTest::newRow("regex does not compile")
            << "routes:\n  - name: r\n    when: {field: model, regex: \"gpt-(4\"}\n"
               "    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:33: `regex` does not compile: missing closing "
                           u"parenthesis at offset 6"_s};
        QTest::newRow("unknown field")
            << "routes:\n  - name: r\n    when: {field: tenantt, eq: acme}\n"
               "    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:19: unknown field `tenantt` (did you mean `tenant`?); "
                           u"fields are model, tenant, user, task, sensitivity, priority, "
                           u"tokens.input, header.<name> and meta.<key>"_s};
        QTest::newRow("unknown operator")
            << "routes:\n  - name: r\n    when: {field: tenant, equals: acme}\n"
               "    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:27: unknown operator `equals` (did you mean `eq`?); a "
                           u"condition takes `field` and one of eq, ne, in, glob, regex, lt, le, "
                           u"gt, ge, exists, or one of `all`, `any`, `not`"_s};
        QTest::newRow("two operators")
            << "routes:\n  - name: r\n    when: {field: tenant, eq: a, ne: b}\n"
               "    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:34: a condition takes one operator, got `eq` and `ne`; "
                           u"combine conditions with `all`"_s};
        QTest::newRow("no operator")
            << "routes:\n  - name: r\n    when: {field: tenant}\n    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:11: the condition on `tenant` needs an operator: one "
                           u"of eq, ne, in, glob, regex, lt, le, gt, ge, exists"_s};
        QTest::newRow("number operator without number")
            << "routes:\n  - name: r\n    when: {field: tokens.input, gt: many}\n"
               "    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:37: `gt` compares numbers, got \"many\""_s};
        QTest::newRow("exists not boolean")
            << "routes:\n  - name: r\n    when: {field: user, exists: yes}\n"
               "    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:33: `exists` must be true or false, got \"yes\""_s};
        QTest::newRow("empty all")
            << "routes:\n  - name: r\n    when: {all: []}\n    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:17: `all` needs a list of at least one condition, "
                           u"got a list"_s};
        QTest::newRow("combinator with more keys")
            << "routes:\n  - name: r\n    when: {any: [{field: user, eq: a}], field: user}\n"
               "    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:11: a condition with `any` takes no other keys; put "
                           u"the other conditions inside it"_s};
        QTest::newRow("target names no provider")
            << "routes:\n  - name: r\n    to: {provider: lokal}\n"_ba
            << QStringList{u"test.yaml:13:20: target names no provider `lokal` (did you mean "
                           u"`local`?)"_s};
        QTest::newRow("pool names no provider")
            << "routes:\n  - name: r\n    to: {pool: [local, cloud-c]}\n"_ba
            << QStringList{u"test.yaml:13:16: target names no provider `cloud-c` (did you mean "
                           u"`cloud-a`?)"_s};
        QTest::newRow("unknown tier")
            << "routes:\n  - name: r\n    to: {tier: medium}\n"_ba
            << QStringList{u"test.yaml:13:16: target names no tier `medium`; tiers are `light`, "
                           u"`pro` and `auto` (the cascade)"_s};
        QTest::newRow("tier without pool")
            << "tiers:\n  light: {pool: [local]}\nroutes:\n  - name: r\n    to: {tier: auto}\n"_ba
            << QStringList{u"test.yaml:15:16: target `tier: auto` needs a pool for tier `pro`: "
                           u"add `tiers: {pro: {pool: [...]}}`"_s};
        QTest::newRow("two targets")
            << "routes:\n  - name: r\n    to: {provider: local, tier: auto}\n"_ba
            << QStringList{u"test.yaml:13:9: `to` must name exactly one of `provider`, `pool`, "
                           u"`tier`, `split`"_s};
        QTest::newRow("key without split")
            << "routes:\n  - name: r\n    to: {provider: local, key: user}\n"_ba
            << QStringList{u"test.yaml:13:27: `key` only applies to a `split`"_s};
        QTest::newRow("strict without split")
            << "routes:\n  - name: r\n    to: {provider: local, strict: true}\n"_ba
            << QStringList{u"test.yaml:13:27: `strict` only applies to a `split`: a provider or "
                           u"pool target is strict already, and a tier fails over by design"_s};
        QTest::newRow("continue_streams not boolean")
            << "routes:\n  - name: r\n    to: {tier: auto}\n    continue_streams: often\n"_ba
            << QStringList{
                   u"test.yaml:14:23: `continue_streams` must be true or false, got \"often\""_s};
        QTest::newRow("strict not boolean")
            << "routes:\n  - name: r\n    to: {split: [{target: local, weight: 1}], strict: "
               "always}\n"_ba
            << QStringList{u"test.yaml:13:55: `strict` must be true or false, got \"always\""_s};
        QTest::newRow("split key unknown")
            << "routes:\n  - name: r\n    to: {split: [{target: local, weight: 1}], key: ip}\n"_ba
            << QStringList{u"test.yaml:13:52: `key` must be `user`, `tenant` or `session`, "
                           u"got \"ip\""_s};
        QTest::newRow("split weights zero")
            << "routes:\n  - name: r\n    to: {split: [{target: local, weight: 0}, "
               "{target: cloud-a, weight: 0}]}\n"_ba
            << QStringList{u"test.yaml:13:18: split weights must add up to more than 0"_s};
        QTest::newRow("split target twice")
            << "routes:\n  - name: r\n    to: {split: [{target: local, weight: 1}, "
               "{target: local, weight: 2}]}\n"_ba
            << QStringList{u"test.yaml:13:46: split lists `local` twice"_s};
        QTest::newRow("split target unknown")
            << "routes:\n  - name: r\n    to: {split: [{target: hermes, weight: 1}]}\n"_ba
            << QStringList{u"test.yaml:13:27: target names no provider `hermes`"_s};
        QTest::newRow("duplicate route name")
            << "routes:\n  - name: r\n    to: {provider: local}\n"
               "  - name: r\n    to: {provider: cloud-a}\n"_ba
            << QStringList{u"test.yaml:14:11: duplicate route name `r` (first at line 12)"_s};
        QTest::newRow("route name not a token")
            << "routes:\n  - name: my rule\n    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:12:11: route name may contain only letters, digits, `.`, "
                           u"`_` and `-`, got \"my rule\""_s};
        QTest::newRow("route without to")
            << "routes:\n  - name: r\n"_ba
            << QStringList{u"test.yaml:12:5: route is missing required key `to`"_s};
        QTest::newRow("unknown route key")
            << "routes:\n  - name: r\n    wehn: {field: user, eq: a}\n    to: {provider: local}\n"_ba
            << QStringList{u"test.yaml:13:5: unknown key `wehn` (did you mean `when`?)"_s};
        QTest::newRow("tier pool names no provider")
            << "tiers:\n  pro: {pool: [cloud-a, cloud-z]}\n"_ba
            << QStringList{u"test.yaml:12:15: tier `pro` pool names no provider `cloud-z`"_s};
        QTest::newRow("unknown tier name") << "tiers:\n  heavy: {pool: [cloud-a]}\n"_ba
                                           << QStringList{u"test.yaml:12:3: unknown key `heavy`"_s};
        QTest::newRow("fallback chain names no provider")
            << "fallback_chain: [cloud-a, nowhere]\n"_ba
            << QStringList{u"test.yaml:11:17: `fallback_chain` names no provider `nowhere`"_s};
        QTest::newRow("task in both lists")
            << "gearbox:\n  light_tasks: [chat, code_gen]\n"_ba
            << QStringList{u"test.yaml:12:16: task `code_gen` is in both `pro_tasks` and "
                           u"`light_tasks`"_s};
        QTest::newRow("threshold above 100")
            << "gearbox:\n  complexity: {threshold: 101}\n"_ba
            << QStringList{u"test.yaml:12:27: `threshold` must be at most 100, got \"101\""_s};
        QTest::newRow("scoring all zero")
            << "scoring: {load: 0, latency: 0, success: 0}\n"_ba
            << QStringList{u"test.yaml:11:10: `scoring` weights must add up to more than 0"_s};
        QTest::newRow("agents ttl zero")
            << "agents: {ttl: 0s}\n"_ba
            << QStringList{u"test.yaml:11:15: `ttl` must be greater than 0, got \"0s\""_s};
    }
    // A shadow's answer is thrown away: harmless for a model API, not for an agent, which may
    // act when called. Each refusal names the file, line and column of the target.
    void refusesShadowTargetsThatMayAct_data()
    {
        QTest::addColumn<QByteArray>("shadow");
        QTest::addColumn<QStringList>("errors");
        QTest::newRow("a mapped agent")
            << "{target: booker, share: 0.5}"_ba
            << QStringList{u"test.yaml:15:22: `shadow.target` names `booker`, a `mapped` "
                           u"provider; a shadow must be an `openai` or `anthropic` provider, "
                           u"since calling an agent may act"_s};
        QTest::newRow("the simulator")
            << "{target: sim, share: 0.5}"_ba
            << QStringList{u"test.yaml:15:22: `shadow.target` names `sim`, a `simulated` "
                           u"provider; a shadow must be an `openai` or `anthropic` provider, "
                           u"since calling an agent may act"_s};
        QTest::newRow("a registered agent, not a provider")
            << "{target: flight-booker, share: 0.5}"_ba
            << QStringList{u"test.yaml:15:22: `shadow.target` names no provider `flight-booker`; "
                           u"a shadow is an `openai` or `anthropic` provider, never an agent"_s};
        QTest::newRow("share above 1")
            << "{target: cloud, share: 2}"_ba
            << QStringList{u"test.yaml:15:36: `share` must be between 0 and 1, got \"2\""_s};
        QTest::newRow("no share")
            << "{target: cloud}"_ba
            << QStringList{u"test.yaml:15:13: `shadow` is missing required key `share`"_s};
        QTest::newRow("unknown key") << "{target: cloud, share: 0.1, model: x}"_ba
                                     << QStringList{u"test.yaml:15:41: unknown key `model`"_s};
    }
    void refusesShadowTargetsThatMayAct()
    {
        QFETCH(QByteArray, shadow);
        QFETCH(QStringList, errors);
        const config::LoadResult result =
            config::loadConfigText(shadowConfig(shadow), u"test.yaml"_s,
                                   [](const QString &) { return std::optional<QByteArray>(); });
        QVERIFY(!result.ok());
        QCOMPARE(errorLines(result), errors);
    }

    void readsShadowOfARule()
    {
        const config::LoadResult result =
            config::loadConfigText(shadowConfig("{target: cloud, share: 0.25}"), u"test.yaml"_s,
                                   [](const QString &) { return std::optional<QByteArray>(); });
        QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
        const config::RouteRule &rule = result.config->routing.routes.first();
        QVERIFY(rule.shadow);
        QCOMPARE(rule.shadow->target, u"cloud"_s);
        QCOMPARE(rule.shadow->share, 0.25);
        const QJsonObject shadow = config::routeRulesJson(result.config->routing.routes)[0]
                                       .toObject()
                                       .value(u"shadow"_s)
                                       .toObject();
        QCOMPARE(shadow, (QJsonObject{{u"target"_s, u"cloud"_s}, {u"share"_s, 0.25}}));
    }

    void reportsRoutingErrors()
    {
        QFETCH(QByteArray, yaml);
        QFETCH(QStringList, errors);
        const config::LoadResult result = load(yaml);
        QVERIFY(!result.ok());
        QCOMPARE(errorLines(result), errors);
    }

    // A rule a console form builds gets the words the loader uses, without a position.
    void formValidationSaysWhatTheLoaderSays()
    {
        const config::LoadResult loaded = load("");
        QVERIFY(loaded.ok());
        config::RouteRule rule;
        rule.name = u"from-a-form"_s;
        config::RouteCondition condition;
        condition.field = u"model"_s;
        condition.op = config::ConditionOperator::Regex;
        condition.values = {u"gpt-(4"_s};
        rule.when = condition;
        rule.to.kind = config::RouteTarget::Kind::Provider;
        rule.to.names = {u"lokal"_s};
        const QList<config::RuleProblem> problems = config::validateRule(rule, *loaded.config);
        QStringList messages;
        for (const config::RuleProblem &problem : problems) {
            QCOMPARE(problem.position.line, 0);
            messages.append(problem.message);
        }
        QCOMPARE(
            messages,
            (QStringList{u"`regex` does not compile: missing closing parenthesis at offset 6"_s,
                         u"target names no provider `lokal` (did you mean `local`?)"_s}));

        rule.when->values = {u"gpt-4.*"_s};
        rule.to.names = {u"local"_s};
        QVERIFY(config::validateRule(rule, *loaded.config).isEmpty());
    }

    void fieldAndOperatorNamesForForms()
    {
        QCOMPARE(config::operatorNames(),
                 (QStringList{u"eq"_s, u"ne"_s, u"in"_s, u"glob"_s, u"regex"_s, u"lt"_s, u"le"_s,
                              u"gt"_s, u"ge"_s, u"exists"_s}));
        QCOMPARE(config::fieldNames().last(), u"meta.<key>"_s);
        QCOMPARE(config::parseField(u"header.X-Team"_s)->name, u"x-team"_s);
        QVERIFY(!config::parseField(u"header."_s));
        QCOMPARE(config::operatorFromName(u"ge"_s), config::ConditionOperator::Ge);
    }
};

QTEST_GUILESS_MAIN(TestRoutingRules)
#include "tst_routing_rules.moc"
