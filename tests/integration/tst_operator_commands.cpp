// One command surface: the console (through the engine bridge) and the admin API give the engine
// the same commands and get the same answers. A dry run of unchanged rules equals live explain,
// registered agents and intents included; rules applied through either are the other's rules;
// bad rules are refused with their place and change nothing.
#include "admin/routing_admin.h"
#include "bridge/engine_host.h"
#include "config/config_loader.h"
#include "config/config_store.h"
#include "config/route_rules_io.h"
#include "control/operator_commands.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSignalSpy>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using namespace switchyard::testing;
using Headers = QList<QPair<QByteArray, QByteArray>>;

namespace {

// Two light endpoints, two pro endpoints, a rule on metadata, a canary split and the gearbox.
config::Config routedConfig(const FakeUpstream &upstream)
{
    const QByteArray url = upstream.baseUrl();
    const QByteArray yaml = "listen: 127.0.0.1:0\n"
                            "providers:\n"
                            "  - {id: light-a, kind: openai, base_url: " +
                            url +
                            ", models: [small]}\n"
                            "  - {id: light-b, kind: openai, base_url: " +
                            url +
                            ", models: [small]}\n"
                            "  - {id: pro-a, kind: openai, base_url: " +
                            url +
                            ", models: [big]}\n"
                            "  - {id: pro-b, kind: openai, base_url: " +
                            url +
                            ", models: [big]}\n"
                            "tiers:\n"
                            "  light: {pool: [light-a, light-b]}\n"
                            "  pro: {pool: [pro-a, pro-b]}\n"
                            "routes:\n"
                            "  - name: demo-app\n"
                            "    priority: 20\n"
                            "    when: {any: [{field: meta.app, eq: demo}, "
                            "{not: {field: tenant, in: [acme, initech]}}]}\n"
                            "    to: {provider: pro-b}\n"
                            "  - name: big-canary\n"
                            "    priority: 10\n"
                            "    when: {field: model, eq: big}\n"
                            "    to: {split: [{target: pro-a, weight: 90}, "
                            "{target: pro-b, weight: 10}], key: user}\n"
                            "  - name: gearbox\n"
                            "    to: {tier: auto}\n";
    return loadTestConfig(yaml, u"commands test"_s);
}

struct Answer {
    int status = 0;
    QJsonObject body;
};

Answer call(quint16 port, const QByteArray &method, const QByteArray &path,
            const QByteArray &body = {}, const Headers &headers = {})
{
    TestClient client(port);
    client.send(method, path, body, headers);
    if (!client.waitForFinished())
        return {};
    return {client.status(), QJsonDocument::fromJson(client.body()).object()};
}

QByteArray chat(const QByteArray &model)
{
    return R"({"model":")" + model + R"(","messages":[{"role":"user","content":"hello"}]})";
}

QByteArray agentRegistration(const FakeUpstream &agent)
{
    return R"({"id":"flight-booker","base_url":")" + agent.baseUrl() +
           R"(","capabilities":["travel/book/flight"],"capacity":4})";
}

QJsonObject decisionOf(const std::variant<routing::Explanation, protocol::ApiError> &result)
{
    if (const auto *error = std::get_if<protocol::ApiError>(&result))
        return QJsonObject{{u"error"_s, error->message}};
    return admin::decisionJson(std::get<routing::Explanation>(result).decision);
}

QString firstCandidate(const QJsonObject &decision)
{
    return decision.value(u"candidates"_s)
        .toArray()
        .first()
        .toObject()
        .value(u"provider"_s)
        .toString();
}

void addSamples()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<Headers>("headers");
    QTest::addColumn<QString>("provider");

    QTest::newRow("gearbox") << chat("small") << Headers{{"x-switchyard-tenant", "acme"}}
                             << QString();
    QTest::newRow("nested rule") << chat("small") << Headers{{"x-switchyard-tenant", "umbrella"}}
                                 << u"pro-b"_s;
    QTest::newRow("canary by user")
        << chat("big") << Headers{{"x-switchyard-user", "carol"}, {"x-switchyard-tenant", "acme"}}
        << QString();
    QTest::newRow("intent to an agent")
        << chat("small") << Headers{{"x-switchyard-intent", "travel/book/flight"}}
        << u"flight-booker"_s;
}

} // namespace

class OperatorCommandsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
    }

    void dryRunOfUnchangedRulesEqualsLiveExplain_data() { addSamples(); }
    void dryRunOfUnchangedRulesEqualsLiveExplain()
    {
        QFETCH(QByteArray, body);
        QFETCH(Headers, headers);
        QFETCH(QString, provider);
        FakeUpstream upstream, agent;
        auto engine = startEngine(routedConfig(upstream));
        QVERIFY(engine);
        QCOMPARE(call(engine->port(), "POST", "/admin/v1/agents", agentRegistration(agent)).status,
                 201);
        Headers sample = headers;
        sample.append(QPair<QByteArray, QByteArray>("x-request-id", "same-draw-1"));

        const Answer explained =
            call(engine->port(), "POST", "/admin/v1/route/explain", body, sample);
        QCOMPARE(explained.status, 200);
        const QJsonObject live = explained.body.value(u"decision"_s).toObject();
        if (!provider.isEmpty())
            QCOMPARE(firstCandidate(live), provider);

        // The console's dry run, through the same commands: live, and the live rules as an edit.
        control::OperatorCommands &commands = engine->commands();
        const QList<config::RouteRule> rules = commands.routesState().rules();
        QCOMPARE(decisionOf(commands.explain(sample, body)), live);
        QCOMPARE(decisionOf(commands.explain(sample, body, rules)), live);

        // And the admin API's own dry run of the rules it reads back.
        const Answer shown = call(engine->port(), "GET", "/admin/v1/routes");
        QCOMPARE(shown.status, 200);
        QJsonObject request{{u"request"_s, QJsonDocument::fromJson(body).object()},
                            {u"routes"_s, shown.body.value(u"routes"_s)}};
        QJsonObject headerObject;
        for (const auto &[name, value] : sample)
            headerObject.insert(QString::fromLatin1(name), QString::fromUtf8(value));
        request.insert(u"headers"_s, headerObject);
        const Answer dryRun = call(engine->port(), "POST", "/admin/v1/routes/dry-run",
                                   QJsonDocument(request).toJson(QJsonDocument::Compact));
        QCOMPARE(dryRun.status, 200);
        QCOMPARE(dryRun.body.value(u"live"_s).toObject().value(u"decision"_s).toObject(), live);
        QCOMPARE(dryRun.body.value(u"edited"_s).toObject().value(u"decision"_s).toObject(), live);
    }

    void consoleBridgeDryRunEqualsAdminExplain_data() { addSamples(); }
    void consoleBridgeDryRunEqualsAdminExplain()
    {
        QFETCH(QByteArray, body);
        QFETCH(Headers, headers);
        FakeUpstream upstream, agent;
        EngineHost bridge(routedConfig(upstream));
        QString error;
        QVERIFY2(bridge.start(&error), qPrintable(error));
        QCOMPARE(call(bridge.port(), "POST", "/admin/v1/agents", agentRegistration(agent)).status,
                 201);
        Headers sample = headers;
        sample.append(QPair<QByteArray, QByteArray>("x-request-id", "same-draw-2"));
        const Answer explained =
            call(bridge.port(), "POST", "/admin/v1/route/explain", body, sample);
        QCOMPARE(explained.status, 200);

        QSignalSpy answered(&bridge, &EngineBridge::routeExplained);
        bridge.explainRoute(1, std::nullopt, sample, body, protocol::Operation::Chat);
        bridge.explainRoute(2, bridge.routesState().rules(), sample, body,
                            protocol::Operation::Chat);
        QTRY_COMPARE_WITH_TIMEOUT(answered.size(), 2, 5000);
        for (const QList<QVariant> &arguments : std::as_const(answered)) {
            const auto explanation = arguments.at(1).value<RouteExplanation>();
            QVERIFY2(explanation.error.isEmpty(), qPrintable(explanation.error));
            QCOMPARE(explanation.requestId, u"same-draw-2"_s);
            QCOMPARE(admin::decisionJson(explanation.decision),
                     explained.body.value(u"decision"_s).toObject());
        }
    }

    void dryRunOfOtherEndpointsRoutesAsTheGatewayDoes()
    {
        FakeUpstream upstream;
        const QByteArray url = upstream.baseUrl();
        EngineHost bridge(loadTestConfig("listen: 127.0.0.1:0\n"
                                         "providers:\n"
                                         "  - {id: chatty, kind: openai, base_url: " +
                                             url +
                                             ", models: [small]}\n"
                                             "  - {id: embedder, kind: openai, base_url: " +
                                             url +
                                             ", models: [{name: vec, endpoints: [embeddings]}]}\n"
                                             "routes:\n"
                                             "  - name: everything\n"
                                             "    to: {provider: chatty}\n",
                                         u"endpoints test"_s));
        QString error;
        QVERIFY2(bridge.start(&error), qPrintable(error));
        const QByteArray embeddings = R"({"model":"vec","input":"hello"})";
        const QByteArray responses = R"({"model":"small","input":"hello","store":true})";

        // The admin API's dry run: embeddings go by model, past the rule that takes all chat.
        const Answer admin = call(bridge.port(), "POST", "/admin/v1/routes/dry-run",
                                  R"({"endpoint":"/v1/embeddings","request":)" + embeddings + "}");
        QCOMPARE(admin.status, 200);
        const QJsonObject adminDecision =
            admin.body.value(u"live"_s).toObject().value(u"decision"_s).toObject();
        QCOMPARE(firstCandidate(adminDecision), u"embedder"_s);
        QCOMPARE(call(bridge.port(), "POST", "/admin/v1/routes/dry-run",
                      R"({"endpoint":"/v1/nothing","request":)" + embeddings + "}")
                     .status,
                 400);

        // The console's: the same decision for embeddings; a Responses request as its chat form.
        const Headers sample{{"x-request-id", "same-draw-3"}};
        QSignalSpy answered(&bridge, &EngineBridge::routeExplained);
        bridge.explainRoute(1, std::nullopt, sample, embeddings, protocol::Operation::Embeddings);
        bridge.explainRoute(2, std::nullopt, sample, responses, protocol::Operation::Responses);
        QTRY_COMPARE_WITH_TIMEOUT(answered.size(), 2, 5000);
        QHash<quint64, RouteExplanation> byTicket;
        for (const QList<QVariant> &arguments : std::as_const(answered))
            byTicket.insert(arguments.at(0).toULongLong(),
                            arguments.at(1).value<RouteExplanation>());
        QVERIFY2(byTicket[1].error.isEmpty(), qPrintable(byTicket[1].error));
        QCOMPARE(firstCandidate(admin::decisionJson(byTicket[1].decision)), u"embedder"_s);
        QVERIFY2(byTicket[2].error.isEmpty(), qPrintable(byTicket[2].error));
        QCOMPARE(byTicket[2].decision.rule, u"everything"_s);
        QCOMPARE(firstCandidate(admin::decisionJson(byTicket[2].decision)), u"chatty"_s);
    }

    void consoleDryRunDrawsOneIdWhenTheSampleHasNoUsableOne()
    {
        FakeUpstream upstream;
        EngineHost bridge(routedConfig(upstream));
        QString error;
        QVERIFY2(bridge.start(&error), qPrintable(error));
        // Live traffic would not take this id and would draw a fresh one; a comparison must
        // draw the same on both sides, so the console's fixed id replaces it.
        const Headers sample{{"x-request-id", "not a token"}, {"x-switchyard-user", ""}};
        QSignalSpy answered(&bridge, &EngineBridge::routeExplained);
        bridge.explainRoute(1, std::nullopt, sample, chat("big"), protocol::Operation::Chat);
        bridge.explainRoute(2, bridge.routesState().rules(), sample, chat("big"),
                            protocol::Operation::Chat);
        QTRY_COMPARE_WITH_TIMEOUT(answered.size(), 2, 5000);
        for (const QList<QVariant> &arguments : std::as_const(answered))
            QCOMPARE(arguments.at(1).value<RouteExplanation>().requestId, u"console-dry-run"_s);
    }

    void rulesAppliedThroughTheAdminApiAreTheConsolesRules()
    {
        FakeUpstream upstream;
        auto engine = startEngine(routedConfig(upstream));
        QVERIFY(engine);
        control::OperatorCommands &commands = engine->commands();
        QSignalSpy changed(&commands, &control::OperatorCommands::routesChanged);
        const quint64 before = commands.routesState().configVersion;

        // What GET shows, PUT takes back unchanged: the same rules, a new version.
        const Answer shown = call(engine->port(), "GET", "/admin/v1/routes");
        QCOMPARE(shown.status, 200);
        const QJsonArray routes = shown.body.value(u"routes"_s).toArray();
        QCOMPARE(routes, config::routeRulesJson(commands.routesState().rules()));
        const QByteArray same =
            QJsonDocument(QJsonObject{{u"routes"_s, routes}}).toJson(QJsonDocument::Compact);
        const Answer again = call(engine->port(), "PUT", "/admin/v1/routes", same);
        QCOMPARE(again.status, 200);
        QCOMPARE(again.body.value(u"routes"_s).toArray(), routes);
        QCOMPARE(commands.routesState().configVersion, before + 1);

        // An edit: demo traffic now goes to pro-a. The console sees it at once.
        const QByteArray edited = R"({"routes": [
            {"name": "demo-app", "priority": 20, "when": {"field": "meta.app", "eq": "demo"},
             "to": {"provider": "pro-a"}},
            {"name": "gearbox", "to": {"tier": "auto"}}]})";
        const Answer applied = call(engine->port(), "PUT", "/admin/v1/routes", edited);
        QCOMPARE(applied.status, 200);
        QCOMPARE(changed.size(), 2);
        const RoutesState state = commands.routesState();
        QCOMPARE(state.rules().size(), 2);
        QCOMPARE(state.rules().first().to.names, QStringList{u"pro-a"_s});
        QCOMPARE(state.configVersion, before + 2);
        QVERIFY(state.canarySplits.isEmpty());
        const Answer explained = call(engine->port(), "POST", "/admin/v1/route/explain",
                                      R"({"model":"small","switchyard":{"app":"demo"},)"
                                      R"("messages":[{"role":"user","content":"hi"}]})",
                                      {{"x-switchyard-tenant", "acme"}});
        QCOMPARE(explained.status, 200);
        QCOMPARE(explained.body.value(u"decision"_s).toObject().value(u"rule"_s).toString(),
                 u"demo-app"_s);
        QCOMPARE(firstCandidate(explained.body.value(u"decision"_s).toObject()), u"pro-a"_s);

        // And what the console applies, the admin API shows.
        QList<config::RouteRule> fromConsole = state.rules();
        fromConsole.removeLast();
        QVERIFY(commands.applyRoutes(fromConsole).isEmpty());
        QCOMPARE(call(engine->port(), "GET", "/admin/v1/routes").body.value(u"routes"_s).toArray(),
                 config::routeRulesJson(fromConsole));
    }

    void badRulesAreRefusedWithTheirPlaceAndChangeNothing_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("message");

        QTest::newRow("unknown provider")
            << R"({"routes": [{"name": "x", "to": {"provider": "nowhere"}}]})"_ba
            << u"The rules were not applied: request body:1:46: target names no provider "
               u"`nowhere`"_s;
        QTest::newRow("misspelt key")
            << "{\"routes\": [\n  {\"name\": \"x\", \"too\": {\"tier\": \"auto\"}}]}"_ba
            << u"The rules were not applied: request body:2:17: unknown key `too` (did you mean "
               u"`to`?); request body:2:3: route is missing required key `to`"_s;
        QTest::newRow("not JSON") << "{\"routes\": ["
                                     ""_ba
                                  << u"The rules were not applied: request body:1:1: invalid "
                                     u"JSON or YAML: end of sequence flow not found"_s;
        QTest::newRow("no routes")
            << R"({"rules": []})"_ba
            << u"The rules were not applied: request body:1:2: unknown key `rules` (did you mean "
               u"`routes`?); request body:1:1: the document is missing required key `routes`"_s;
    }
    void badRulesAreRefusedWithTheirPlaceAndChangeNothing()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, message);
        FakeUpstream upstream;
        auto engine = startEngine(routedConfig(upstream));
        QVERIFY(engine);
        const RoutesState before = engine->commands().routesState();

        const Answer refused = call(engine->port(), "PUT", "/admin/v1/routes", body);
        QCOMPARE(refused.status, 400);
        const QJsonObject error = errorOf(QJsonDocument(refused.body).toJson());
        QCOMPARE(error.value(u"code"_s).toString(), u"invalid_routes"_s);
        QCOMPARE(error.value(u"param"_s).toString(), u"routes"_s);
        QCOMPARE(error.value(u"message"_s).toString(), message);
        QVERIFY(!error.value(u"problems"_s).toArray().isEmpty());

        const RoutesState after = engine->commands().routesState();
        QCOMPARE(after.configVersion, before.configVersion);
        QCOMPARE(config::routeRulesJson(after.rules()), config::routeRulesJson(before.rules()));
    }

    void dryRunShowsTheEditAsTheOnlyDifference()
    {
        FakeUpstream upstream;
        auto engine = startEngine(routedConfig(upstream));
        QVERIFY(engine);
        const QByteArray request = R"({
            "request": {"model": "small", "switchyard": {"app": "demo"},
                        "messages": [{"role": "user", "content": "hi"}]},
            "headers": {"x-switchyard-tenant": "acme", "x-request-id": "not a token"},
            "routes": [{"name": "demo-app", "priority": 20,
                        "when": {"field": "meta.app", "eq": "demo"}, "to": {"provider": "pro-a"}}]
        })";
        const Answer answer = call(engine->port(), "POST", "/admin/v1/routes/dry-run", request);
        QCOMPARE(answer.status, 200);
        const QJsonObject live = answer.body.value(u"live"_s).toObject();
        const QJsonObject edited = answer.body.value(u"edited"_s).toObject();
        QCOMPARE(firstCandidate(live.value(u"decision"_s).toObject()), u"pro-b"_s);
        QCOMPARE(firstCandidate(edited.value(u"decision"_s).toObject()), u"pro-a"_s);
        // The client's id was unusable: the live side drew a fresh one, the edited side the same.
        QVERIFY(live.value(u"request_id"_s).toString().startsWith(u"req_"_s));
        QCOMPARE(edited.value(u"request_id"_s), live.value(u"request_id"_s));
        // Nothing was applied.
        QCOMPARE(engine->commands().routesState().rules().size(), 3);

        const Answer unknownField = call(engine->port(), "POST", "/admin/v1/routes/dry-run",
                                         R"({"request": {}, "rule": []})");
        QCOMPARE(unknownField.status, 400);
        QCOMPARE(errorOf(QJsonDocument(unknownField.body).toJson()).value(u"param"_s).toString(),
                 u"rule"_s);
    }
};

QTEST_GUILESS_MAIN(OperatorCommandsTest)
#include "tst_operator_commands.moc"
