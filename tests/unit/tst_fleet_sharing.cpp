// The pure pieces of what a fleet shares about agents and endpoints (docs/fleet.md, "Agents" and
// "Health"): a registration and an endpoint's summary as Redis holds them and back, and how a
// heartbeat taken on another node moves an agent's last heartbeat, on a manual clock.
#include "fleet/shared_agents.h"
#include "fleet/shared_health.h"
#include "health/agent_registry.h"
#include "timing/clock.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

using namespace switchyard;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;

class TestFleetSharing : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aRegistrationReadsBackAsItWasWritten()
    {
        const health::AgentRegistration registration{
            u"booker"_s, QUrl(u"http://127.0.0.1:9001/v1"_s),
            QStringList{u"travel/book/flight"_s, u"travel/book/hotel"_s}, 4,
            QStringList{u"booker-1"_s}};
        const std::optional<health::AgentRegistration> back =
            fleet::agentFromJson(fleet::agentToJson(registration));
        QVERIFY(back);
        QCOMPARE(back->id, registration.id);
        QCOMPARE(back->baseUrl, registration.baseUrl);
        QCOMPARE(back->capabilities, registration.capabilities);
        QCOMPARE(back->capacity, 4);
        QCOMPARE(back->models, registration.models);
    }

    void aRegistrationThatDoesNotReadIsRefused_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("not JSON") << "booker"_ba;
        QTest::newRow("no id") << R"({"base_url":"http://127.0.0.1:9001/v1"})"_ba;
        QTest::newRow("empty id") << R"({"id":"","base_url":"http://127.0.0.1:9001/v1"})"_ba;
    }
    void aRegistrationThatDoesNotReadIsRefused()
    {
        QFETCH(QByteArray, json);
        QVERIFY(!fleet::agentFromJson(json));
    }

    void anEndpointSummaryReadsBackAsItWasWritten()
    {
        EndpointSummary endpoint;
        endpoint.id = u"failing"_s;
        endpoint.state = ProviderState::Down;
        endpoint.breaker = BreakerState::Open;
        endpoint.breakerReason = u"5 consecutive call failures"_s;
        endpoint.operatorState = OperatorState::Draining;
        endpoint.inFlight = 3;
        endpoint.p50LatencyMs = 41.5;
        endpoint.errorRatePercent = 100.0;
        const QJsonObject json = fleet::endpointSummaryJson(endpoint);
        QCOMPARE(json.value(u"breaker"_s).toString(), u"open"_s);
        QCOMPARE(json.value(u"state"_s).toString(), u"down"_s);
        QCOMPARE(json.value(u"healthy"_s).toBool(), false);
        QCOMPARE(json.value(u"operator_state"_s).toString(), u"draining"_s);
        QVERIFY(fleet::endpointSummaryFromJson(json) == endpoint);

        EndpointSummary agent;
        agent.id = u"booker"_s;
        agent.agent = true;
        agent.breaker = BreakerState::HalfOpen;
        agent.state = ProviderState::Degraded;
        const QJsonObject agentJson = fleet::endpointSummaryJson(agent);
        QVERIFY(agentJson.value(u"latency_p50_ms"_s).isNull()); // nothing measured yet
        QVERIFY(agentJson.value(u"breaker_reason"_s).isNull());
        QCOMPARE(agentJson.value(u"healthy"_s).toBool(), true);
        QVERIFY(fleet::endpointSummaryFromJson(agentJson) == agent);
    }

    void anEndpointSummaryWithAnUnknownStateIsSkipped()
    {
        EndpointSummary endpoint;
        endpoint.id = u"fake"_s;
        QJsonObject json = fleet::endpointSummaryJson(endpoint);
        json.insert(u"breaker"_s, u"ajar"_s); // a later release's state this one cannot show
        QVERIFY(!fleet::endpointSummaryFromJson(json));
        json = fleet::endpointSummaryJson(endpoint);
        json.remove(u"id"_s);
        QVERIFY(!fleet::endpointSummaryFromJson(json));
    }

    void aPublishedEntryCarriesTheAgentsCountAndEveryEndpoint()
    {
        EndpointSummary first;
        first.id = u"fake"_s;
        EndpointSummary second;
        second.id = u"booker"_s;
        second.agent = true;
        const QJsonObject object =
            QJsonDocument::fromJson(fleet::publishedHealthJson(1, {first, second}, 1234)).object();
        QCOMPARE(object.value(u"agents"_s).toInt(), 1);
        QCOMPARE(object.value(u"published_ms"_s).toDouble(), 1234.0);
        QCOMPARE(object.value(u"endpoints"_s).toArray().size(), 2);
        QVERIFY(fleet::endpointSummaryFromJson(
                    object.value(u"endpoints"_s).toArray().at(1).toObject()) == second);
    }

    void aHeartbeatTakenElsewhereCountsWhenNewer()
    {
        timing::ManualClock clock;
        health::AgentRegistry registry(clock, [] { return 30s; });
        registry.upsert({u"a"_s, QUrl(u"http://127.0.0.1:9001"_s), {u"x/y/z"_s}, 0, {}}, 1);
        clock.advance(20s);
        // Another node's heartbeat 5 s ago: newer than the registration 20 s ago.
        QVERIFY(registry.heartbeatTakenElsewhere(u"a"_s, 5s, false));
        clock.advance(21s); // 41 s after the registration, 26 s after that heartbeat
        QCOMPARE(registry.offering(u"x/y/z"_s).size(), 1);
        // One older than the last held changes nothing, busy included.
        QVERIFY(registry.heartbeatTakenElsewhere(u"a"_s, 28s, true));
        QCOMPARE(registry.offering(u"x/y/z"_s).size(), 1);
        clock.advance(4s); // 30 s after the newest heartbeat
        QVERIFY(registry.offering(u"x/y/z"_s).isEmpty());
        QCOMPARE(registry.expire().size(), 1);
        QVERIFY(!registry.heartbeatTakenElsewhere(u"a"_s, 0s, false)); // gone: unknown
    }

    void aHeartbeatTakenElsewhereCarriesBusyAndMayRevive()
    {
        timing::ManualClock clock;
        health::AgentRegistry registry(clock, [] { return 30s; });
        registry.upsert({u"a"_s, QUrl(u"http://127.0.0.1:9001"_s), {u"x/y/z"_s}, 0, {}}, 1);
        QVERIFY(registry.heartbeatTakenElsewhere(u"a"_s, 0s, true));
        QVERIFY(registry.offering(u"x/y/z"_s).isEmpty()); // busy, as that node heard
        clock.advance(31s);                               // lapsed here, not yet expired
        QVERIFY(registry.heartbeatTakenElsewhere(u"a"_s, 1s, false));
        QCOMPARE(registry.offering(u"x/y/z"_s).size(), 1);
    }

    void aRegistrationLearntFromTheFleetKeepsItsHeartbeatsAge()
    {
        timing::ManualClock clock;
        health::AgentRegistry registry(clock, [] { return 30s; });
        clock.advance(1h);
        // Registering here stands for a heartbeat now; the fleet says the last was 25 s ago.
        registry.upsert({u"a"_s, QUrl(u"http://127.0.0.1:9001"_s), {u"x/y/z"_s}, 0, {}}, 1);
        const qint64 registeredMs = registry.find(u"a"_s)->lastHeartbeatMsSinceEpoch;
        QVERIFY(registry.heartbeatTakenElsewhere(u"a"_s, 25s, false, /*replace=*/true));
        QCOMPARE(registry.find(u"a"_s)->lastHeartbeatMsSinceEpoch, registeredMs - 25'000);
        clock.advance(5s);
        QVERIFY(registry.offering(u"x/y/z"_s).isEmpty()); // lapsed as it would have elsewhere
    }
};

QTEST_GUILESS_MAIN(TestFleetSharing)
#include "tst_fleet_sharing.moc"
