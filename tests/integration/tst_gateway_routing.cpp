// Routing through the real gateway: explain answers what live traffic does, metadata headers and
// the body's `switchyard` object reach the router (and the object never reaches a provider),
// canary weights move live through the admin API, and registered agents take intent requests.

#include "config/config_loader.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QSet>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using namespace switchyard::testing;
using Headers = QList<QPair<QByteArray, QByteArray>>;

namespace {

// Two light endpoints, two pro endpoints, and rules that exercise every kind of target.
config::Config routedConfig(const FakeUpstream &lightA, const FakeUpstream &lightB,
                            const FakeUpstream &proA, const FakeUpstream &proB)
{
    const QByteArray yaml = "listen: 127.0.0.1:0\n"
                            "providers:\n"
                            "  - {id: light-a, kind: openai, base_url: " +
                            lightA.baseUrl() +
                            ", models: [small]}\n"
                            "  - {id: light-b, kind: openai, base_url: " +
                            lightB.baseUrl() +
                            ", models: [small]}\n"
                            "  - {id: pro-a, kind: openai, base_url: " +
                            proA.baseUrl() +
                            ", models: [big]}\n"
                            "  - {id: pro-b, kind: openai, base_url: " +
                            proB.baseUrl() +
                            ", models: [big]}\n"
                            "tiers:\n"
                            "  light: {pool: [light-a, light-b]}\n"
                            "  pro: {pool: [pro-a, pro-b]}\n"
                            "routes:\n"
                            "  - name: demo-app\n"
                            "    priority: 20\n"
                            "    when: {field: meta.app, eq: demo}\n"
                            "    to: {provider: pro-b}\n"
                            "  - name: big-canary\n"
                            "    priority: 10\n"
                            "    when: {field: model, eq: big}\n"
                            "    to: {split: [{target: pro-a, weight: 90}, "
                            "{target: pro-b, weight: 10}], key: user}\n"
                            "  - name: gearbox\n"
                            "    to: {tier: auto}\n";
    return loadTestConfig(yaml, u"routing test"_s);
}

struct Answer {
    int status = 0;
    QByteArray body;
    QByteArray provider;
    QByteArray route;
    QByteArray tier;
};

Answer send(quint16 port, const QByteArray &path, const QByteArray &body,
            const Headers &headers = {}, const QByteArray &method = "POST")
{
    TestClient client(port);
    client.send(method, path, body, headers);
    if (!client.waitForFinished())
        return {};
    return {client.status(), client.body(), client.header("x-switchyard-provider"),
            client.header("x-switchyard-route"), client.header("x-switchyard-tier")};
}

Answer get(quint16 port, const QByteArray &path)
{
    TestClient client(port);
    client.send("GET", path);
    if (!client.waitForFinished())
        return {};
    return {client.status(), client.body(), {}, {}, {}};
}

QJsonObject jsonOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object();
}

QString firstCandidate(const QJsonObject &explained)
{
    return explained.value(u"decision"_s)
        .toObject()
        .value(u"candidates"_s)
        .toArray()
        .first()
        .toObject()
        .value(u"provider"_s)
        .toString();
}

} // namespace

class GatewayRoutingTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
    }

    void explainAndLiveTrafficChooseTheSameEndpoint_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<Headers>("headers");
        QTest::addColumn<QByteArray>("route");
        QTest::addColumn<QByteArray>("tier");
        QTest::newRow("gearbox, light") << chatBody("small", false) << Headers{} << "gearbox"_ba
                                        << "light"_ba;
        QTest::newRow("gearbox, pro by task")
            << chatBody("small", false) << Headers{{"x-switchyard-task", "code_gen"}}
            << "gearbox"_ba
            << "pro"_ba;
        QTest::newRow("canary by user")
            << chatBody("big", false) << Headers{{"x-switchyard-user", "carol"}} << "big-canary"_ba
            << "none"_ba; // a pinned provider is in no tier
        QTest::newRow("session affinity")
            << chatBody("small", true) << Headers{{"x-switchyard-session", "chat-7"}}
            << "gearbox"_ba
            << "light"_ba;
    }
    void explainAndLiveTrafficChooseTheSameEndpoint()
    {
        QFETCH(QByteArray, body);
        QFETCH(Headers, headers);
        QFETCH(QByteArray, route);
        QFETCH(QByteArray, tier);
        FakeUpstream lightA, lightB, proA, proB;
        auto engine = startEngine(routedConfig(lightA, lightB, proA, proB));
        QVERIFY(engine);
        // Several request ids, so more than one endpoint is drawn along the way.
        QSet<QByteArray> chosen;
        for (int i = 0; i < 8; ++i) {
            Headers withId = headers;
            withId.append({"x-request-id", "same-request-" + QByteArray::number(i)});
            const Answer explained = send(engine->port(), "/admin/v1/route/explain", body, withId);
            QCOMPARE(explained.status, 200);
            const QString predicted = firstCandidate(jsonOf(explained.body));
            QVERIFY(!predicted.isEmpty());

            const Answer live = send(engine->port(), "/v1/chat/completions", body, withId);
            QCOMPARE(live.status, 200);
            QCOMPARE(QString::fromLatin1(live.provider), predicted);
            QCOMPARE(live.route, route);
            QCOMPARE(live.tier, tier);
            chosen.insert(live.provider);
        }
        QVERIFY(!chosen.isEmpty());
    }

    void explainCallsNoProviderAndExplainsEveryStep()
    {
        FakeUpstream lightA, lightB, proA, proB;
        auto engine = startEngine(routedConfig(lightA, lightB, proA, proB));
        QVERIFY(engine);
        const Answer explained =
            send(engine->port(), "/admin/v1/route/explain", chatBody("small", false),
                 {{"x-request-id", "explain-1"}, {"x-switchyard-tenant", "acme"}});
        QCOMPARE(explained.status, 200);
        const QJsonObject answer = jsonOf(explained.body);
        QCOMPARE(answer.value(u"request_id"_s).toString(), u"explain-1"_s);
        const QJsonObject decision = answer.value(u"decision"_s).toObject();
        QCOMPARE(decision.value(u"rule"_s).toString(), u"gearbox"_s);
        QCOMPARE(decision.value(u"tier"_s).toString(), u"light"_s);
        QCOMPARE(decision.value(u"cascade_step"_s).toString(), u"default"_s);
        QVERIFY(decision.value(u"complexity_score"_s).toInt() < 70);
        QVERIFY(decision.value(u"refusal"_s).isNull());
        const QJsonArray candidates = decision.value(u"candidates"_s).toArray();
        QCOMPARE(candidates.size(), 4);
        QCOMPARE(candidates[0].toObject().value(u"role"_s).toString(), u"primary"_s);
        QCOMPARE(candidates[2].toObject().value(u"role"_s).toString(), u"cross_tier"_s);
        QVERIFY(candidates[0].toObject().value(u"factors"_s).toObject().contains(u"load"_s));
        QStringList stages;
        for (const QJsonValue &step : decision.value(u"steps"_s).toArray())
            stages.append(step.toObject().value(u"stage"_s).toString());
        QCOMPARE(stages, (QStringList{u"rule"_s, u"cascade"_s, u"pool"_s, u"failover"_s}));
        QCOMPARE(answer.value(u"context"_s).toObject().value(u"tenant"_s).toString(), u"acme"_s);
        for (const FakeUpstream *fake : {&lightA, &lightB, &proA, &proB})
            QVERIFY(fake->requests().isEmpty());
    }

    void explainReportsRefusalsAndBadRequests()
    {
        FakeUpstream fake;
        auto engine = startEngine(gatewayConfig({providerFor(u"only"_s, fake, {u"test-model"_s})}));
        QVERIFY(engine);
        const Answer unknown =
            send(engine->port(), "/admin/v1/route/explain", chatBody("nope", false));
        QCOMPARE(unknown.status, 200);
        QCOMPARE(jsonOf(unknown.body).value(u"decision"_s).toObject().value(u"refusal"_s),
                 QJsonValue(u"unknown_model"_s));
        const Answer badHeader =
            send(engine->port(), "/admin/v1/route/explain", chatBody("test-model", false),
                 {{"x-switchyard-fallback-level", "9"}});
        QCOMPARE(badHeader.status, 400);
        QCOMPARE(errorOf(badHeader.body).value(u"param"_s).toString(),
                 u"x-switchyard-fallback-level"_s);
        const Answer badBody = send(engine->port(), "/admin/v1/route/explain", "[]");
        QCOMPARE(badBody.status, 400);
    }

    void invalidMetadataHeaderIsA400NamingIt()
    {
        FakeUpstream fake;
        auto engine = startEngine(gatewayConfig({providerFor(u"only"_s, fake, {u"test-model"_s})}));
        QVERIFY(engine);
        const Answer answer =
            send(engine->port(), "/v1/chat/completions", chatBody("test-model", false),
                 {{"X-Switchyard-Priority", "urgent"}});
        QCOMPARE(answer.status, 400);
        const QJsonObject error = errorOf(answer.body);
        QCOMPARE(error.value(u"type"_s).toString(), u"invalid_request_error"_s);
        QCOMPARE(error.value(u"param"_s).toString(), u"X-Switchyard-Priority"_s);
        QCOMPARE(error.value(u"code"_s).toString(), u"invalid_header"_s);
        QCOMPARE(error.value(u"message"_s).toString(),
                 u"Invalid value for header 'X-Switchyard-Priority': expected one of `low`, "
                 u"`normal` or `high`, but got 'urgent'."_s);
        QVERIFY(fake.requests().isEmpty());
    }

    void switchyardObjectRoutesAndIsStrippedBeforeForwarding()
    {
        FakeUpstream lightA, lightB, proA, proB;
        auto engine = startEngine(routedConfig(lightA, lightB, proA, proB));
        QVERIFY(engine);
        const QByteArray body = R"({"model":"small", "switchyard": {"app": "demo", "n": 2},)"
                                R"( "messages":[{"role":"user","content":"hi"}]})";
        const Answer answer = send(engine->port(), "/v1/chat/completions", body);
        QCOMPARE(answer.status, 200);
        QCOMPARE(answer.provider, "pro-b"_ba);
        QCOMPARE(answer.route, "demo-app"_ba);
        QCOMPARE(proB.requests().size(), 1);
        // The provider serves `big`, not `small`: it is sent its own model, and no routing object.
        QCOMPARE(proB.requests().first().body,
                 R"({"model":"big", "messages":[{"role":"user","content":"hi"}]})"_ba);
    }

    void unknownModelWithoutRulesIsStillA404()
    {
        FakeUpstream fake;
        auto engine = startEngine(gatewayConfig({providerFor(u"only"_s, fake, {u"test-model"_s})}));
        QVERIFY(engine);
        const Answer answer = send(engine->port(), "/v1/chat/completions", chatBody("nope", false));
        QCOMPARE(answer.status, 404);
        QCOMPARE(errorOf(answer.body).value(u"code"_s).toString(), u"model_not_found"_s);
    }

    // The impact preview of moving the canary from 90/10 to 50/50 names, request by request, the
    // provider live traffic then gets once the edit is applied: same ids, same users.
    void impactPreviewPredictsWhereTrafficMoves()
    {
        FakeUpstream lightA, lightB, proA, proB;
        auto engine = startEngine(routedConfig(lightA, lightB, proA, proB));
        QVERIFY(engine);
        constexpr int kRequests = 30; // under the sample's 34 a minute: every one is sampled
        const auto headersOf = [](int i) {
            return Headers{{"x-request-id", "impact-" + QByteArray::number(i)},
                           {"x-switchyard-user", "user-" + QByteArray::number(i)}};
        };
        QHash<QString, QString> servedBefore;
        for (int i = 0; i < kRequests; ++i) {
            const Answer answer =
                send(engine->port(), "/v1/chat/completions", chatBody("big", false), headersOf(i));
            QCOMPARE(answer.status, 200);
            servedBefore.insert(u"impact-%1"_s.arg(i), QString::fromLatin1(answer.provider));
        }

        const QByteArray routes =
            R"({"routes": [)"
            R"({"name": "demo-app", "priority": 20, "when": {"field": "meta.app", "eq": "demo"},)"
            R"( "to": {"provider": "pro-b"}},)"
            R"({"name": "big-canary", "priority": 10, "when": {"field": "model", "eq": "big"},)"
            R"( "to": {"split": [{"target": "pro-a", "weight": 50},)"
            R"( {"target": "pro-b", "weight": 50}], "key": "user"}},)"
            R"({"name": "gearbox", "to": {"tier": "auto"}}])";
        const QByteArray previewBody = routes + R"(, "examples_per_cell": 100})";
        const Answer previewed = send(engine->port(), "/admin/v1/routes/impact", previewBody);
        QCOMPARE(previewed.status, 200);
        const QJsonObject preview = jsonOf(previewed.body);
        QCOMPARE(preview.value(u"sampled"_s).toInt(), kRequests);
        QCOMPARE(preview.value(u"newly_refused"_s).toInt(), 0);
        QHash<QString, QString> predicted;
        int moved = 0;
        double shares = 0.0;
        for (const QJsonValue &value : preview.value(u"cells"_s).toArray()) {
            const QJsonObject cell = value.toObject();
            const QString from = cell.value(u"from"_s).toObject().value(u"provider"_s).toString();
            const QString to = cell.value(u"to"_s).toObject().value(u"provider"_s).toString();
            QCOMPARE(cell.value(u"moves"_s).toBool(), from != to);
            if (from != to)
                moved += cell.value(u"count"_s).toInt();
            shares += cell.value(u"share"_s).toDouble();
            const QJsonArray examples = cell.value(u"examples"_s).toArray();
            QCOMPARE(examples.size(), cell.value(u"count"_s).toInt());
            for (const QJsonValue &example : examples) {
                const QString id = example.toObject().value(u"request_id"_s).toString();
                // The live side is what the request got when it was served.
                QCOMPARE(from, servedBefore.value(id));
                predicted.insert(id, to);
            }
        }
        QCOMPARE(predicted.size(), kRequests);
        QCOMPARE(preview.value(u"moved"_s).toInt(), moved);
        QVERIFY(moved > 0); // 40% of the users move from pro-a to pro-b: some of these 30 do
        QVERIFY(qAbs(shares - 1.0) < 1e-9);

        const Answer applied = send(engine->port(), "/admin/v1/routes", routes + '}', {}, "PUT");
        QCOMPARE(applied.status, 200);
        for (int i = 0; i < kRequests; ++i) {
            const Answer answer =
                send(engine->port(), "/v1/chat/completions", chatBody("big", false), headersOf(i));
            QCOMPARE(answer.status, 200);
            QCOMPARE(QString::fromLatin1(answer.provider), predicted.value(u"impact-%1"_s.arg(i)));
        }
    }

    void impactPreviewRefusesRulesThatDoNotValidate()
    {
        FakeUpstream lightA, lightB, proA, proB;
        auto engine = startEngine(routedConfig(lightA, lightB, proA, proB));
        QVERIFY(engine);
        const Answer refused =
            send(engine->port(), "/admin/v1/routes/impact",
                 R"({"routes": [{"name": "r", "to": {"provider": "nowhere"}}]})");
        QCOMPARE(refused.status, 400);
        QCOMPARE(errorOf(refused.body).value(u"code"_s).toString(), u"invalid_routes"_s);
        const Answer badCount = send(engine->port(), "/admin/v1/routes/impact",
                                     R"({"routes": [], "examples_per_cell": -1})");
        QCOMPARE(badCount.status, 400);
        QCOMPARE(errorOf(badCount.body).value(u"param"_s).toString(), u"examples_per_cell"_s);
    }

    void canaryWeightsMoveLive()
    {
        FakeUpstream lightA, lightB, proA, proB;
        auto engine = startEngine(routedConfig(lightA, lightB, proA, proB));
        QVERIFY(engine);
        const Answer listed = get(engine->port(), "/admin/v1/routes/canary");
        QCOMPARE(listed.status, 200);
        const QJsonObject split =
            jsonOf(listed.body).value(u"splits"_s).toArray().first().toObject();
        QCOMPARE(split.value(u"rule"_s).toString(), u"big-canary"_s);
        QCOMPARE(split.value(u"key"_s).toString(), u"user"_s);
        QCOMPARE(split.value(u"branches"_s).toArray()[1].toObject().value(u"weight"_s).toInt(), 10);

        const Answer moved = send(engine->port(), "/admin/v1/routes/canary",
                                  R"({"rule":"big-canary","weights":{"pro-a":0,"pro-b":100}})");
        QCOMPARE(moved.status, 200);
        QVERIFY(jsonOf(moved.body).value(u"overridden"_s).toBool());
        for (int user = 0; user < 5; ++user) {
            const Answer answer =
                send(engine->port(), "/v1/chat/completions", chatBody("big", false),
                     {{"x-switchyard-user", "user-" + QByteArray::number(user)}});
            QCOMPARE(answer.status, 200);
            QCOMPARE(answer.provider, "pro-b"_ba);
        }

        const Answer wrong = send(engine->port(), "/admin/v1/routes/canary",
                                  R"({"rule":"big-canary","weights":{"pro-c":1}})");
        QCOMPARE(wrong.status, 400);
        QCOMPARE(errorOf(wrong.body).value(u"message"_s).toString(),
                 u"Route `big-canary` has no split target `pro-c`; its targets are pro-a, "
                 u"pro-b."_s);
        const Answer unknown =
            send(engine->port(), "/admin/v1/routes/canary", R"({"rule":"gearbox","reset":true})");
        QCOMPARE(unknown.status, 404);
        const Answer reset = send(engine->port(), "/admin/v1/routes/canary",
                                  R"({"rule":"big-canary","reset":true})");
        QCOMPARE(reset.status, 200);
        QVERIFY(!jsonOf(reset.body).value(u"overridden"_s).toBool());
    }

    void agentsRegisterBeatAndLeaveThroughTheAdminApi()
    {
        FakeUpstream fake, agent;
        auto engine = startEngine(gatewayConfig({providerFor(u"only"_s, fake, {u"test-model"_s})}));
        QVERIFY(engine);
        const Answer registered =
            send(engine->port(), "/admin/v1/agents",
                 R"({"id":"flight-booker","base_url":")" + agent.baseUrl() +
                     R"(","capabilities":["travel/book/flight"],"capacity":4})");
        QCOMPARE(registered.status, 201);
        QCOMPARE(jsonOf(registered.body).value(u"id"_s).toString(), u"flight-booker"_s);
        QCOMPARE(jsonOf(registered.body).value(u"capacity"_s).toInt(), 4);

        const Headers intent{{"x-switchyard-intent", "travel/book/flight"},
                             {"x-request-id", "intent-1"}};
        const Answer explained =
            send(engine->port(), "/admin/v1/route/explain", chatBody("test-model", false), intent);
        QCOMPARE(firstCandidate(jsonOf(explained.body)), u"flight-booker"_s);

        const Answer busy =
            send(engine->port(), "/admin/v1/agents/flight-booker/heartbeat", R"({"busy":true})");
        QCOMPARE(busy.status, 200);
        QVERIFY(jsonOf(busy.body).value(u"busy"_s).toBool());
        const Answer refused =
            send(engine->port(), "/v1/chat/completions", chatBody("test-model", false), intent);
        QCOMPARE(refused.status, 503);
        QCOMPARE(errorOf(refused.body).value(u"code"_s).toString(), u"no_route_candidate"_s);

        const Answer unknown =
            send(engine->port(), "/admin/v1/agents/nobody/heartbeat", QByteArray());
        QCOMPARE(unknown.status, 404);
        const Answer taken = send(engine->port(), "/admin/v1/agents",
                                  R"({"id":"only","base_url":"http://127.0.0.1:1",)"
                                  R"("capabilities":["a/b/c"]})");
        QCOMPARE(taken.status, 409);
        const Answer invalid = send(engine->port(), "/admin/v1/agents",
                                    R"({"id":"x","base_url":"http://127.0.0.1:1",)"
                                    R"("capabilities":["a/b"]})");
        QCOMPARE(invalid.status, 400);
        QCOMPARE(errorOf(invalid.body).value(u"message"_s).toString(),
                 u"capability `a/b` must be `domain/action/attribute`, each a word of letters, "
                 u"digits, `-`, `_`, `.` or `:`."_s);

        TestClient remover(engine->port());
        remover.send("DELETE", "/admin/v1/agents/flight-booker");
        QVERIFY(remover.waitForFinished());
        QCOMPARE(remover.status(), 200);
        const Answer listed = get(engine->port(), "/admin/v1/agents");
        QVERIFY(jsonOf(listed.body).value(u"agents"_s).toArray().isEmpty());
    }

    // An agent is an endpoint of the health registry, not of the config file: the executor
    // finds its address through HealthRegistry::providerConfig.
    void registeredAgentAnswersIntentRequests()
    {
        FakeUpstream fake, agent;
        auto engine = startEngine(gatewayConfig({providerFor(u"only"_s, fake, {u"test-model"_s})}));
        QVERIFY(engine);
        const Answer registered = send(engine->port(), "/admin/v1/agents",
                                       R"({"id":"flight-booker","base_url":")" + agent.baseUrl() +
                                           R"(","capabilities":["travel/book/flight"]})");
        QCOMPARE(registered.status, 201);
        const Answer answer =
            send(engine->port(), "/v1/chat/completions", chatBody("test-model", false),
                 {{"x-switchyard-intent", "travel/book/flight"}});
        QCOMPARE(answer.status, 200);
        QCOMPARE(answer.provider, "flight-booker"_ba);
        QCOMPARE(agent.requests().size(), 1);
        QVERIFY(fake.requests().isEmpty());
    }
};

QTEST_GUILESS_MAIN(GatewayRoutingTest)
#include "tst_gateway_routing.moc"
