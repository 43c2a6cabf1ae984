// One agent registry across a fleet, and each node's endpoint states published to the others,
// for real: three Switchyard processes (the shipped binary, headless) on one Redis (Debian's
// redis-server, started by the test on a free loopback port), an agent that is a fake upstream on
// port 0, and two fake providers, one of which fails. Registration, heartbeat and removal on
// different nodes; Redis killed and restarted empty; a breaker opened on one node only.
#include "fleet_test_bed.h"
#include "test_client.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <memory>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);
constexpr QByteArrayView kIntent = "travel/book/flight";

struct Answer {
    int status = 0;
    QByteArray provider; // x-switchyard-provider
    QByteArray body;
};

Answer call(quint16 port, const QByteArray &method, const QByteArray &path,
            const QByteArray &body = {}, const QList<QPair<QByteArray, QByteArray>> &headers = {})
{
    TestClient client(port);
    client.send(method, path, body, headers);
    if (!client.waitForFinished(15000))
        return {};
    return {client.status(), client.header("x-switchyard-provider"), client.body()};
}

// The ids of the agents the node lists, sorted.
QStringList agentIds(quint16 port)
{
    QStringList ids;
    for (const QJsonValue &agent : getJson(port, "/admin/v1/agents").value(u"agents"_s).toArray())
        ids.append(agent.toObject().value(u"id"_s).toString());
    ids.sort(); // a node learns agents in the fleet's order, not their registration order
    return ids;
}

// A chat request asking for the intent: which endpoint answered it, or the status when none did.
QByteArray intentAnsweredBy(quint16 port)
{
    const Answer answer =
        call(port, "POST", "/v1/chat/completions",
             R"({"model":"test-model","messages":[{"role":"user","content":"book it"}]})",
             {{"x-switchyard-intent", kIntent.toByteArray()}});
    return answer.status == 200 ? answer.provider : QByteArray::number(answer.status);
}

int registerAgent(quint16 port, const QByteArray &id, const FakeUpstream &agent)
{
    return call(port, "POST", "/admin/v1/agents",
                R"({"id":")" + id + R"(","base_url":")" + agent.baseUrl() +
                    R"(","capabilities":[")" + kIntent.toByteArray() + R"("]})")
        .status;
}

int heartbeat(quint16 port, const QByteArray &id)
{
    return call(port, "POST", "/admin/v1/agents/" + id + "/heartbeat").status;
}

// What node `about` published of endpoint `id`, as node `port` lists it in GET /admin/v1/fleet.
QJsonObject publishedEndpoint(quint16 port, const QString &about, const QString &id)
{
    for (const QJsonValue &node : getJson(port, "/admin/v1/fleet").value(u"nodes"_s).toArray()) {
        if (node.toObject().value(u"node"_s).toString() != about)
            continue;
        for (const QJsonValue &endpoint : node.toObject().value(u"endpoints"_s).toArray()) {
            if (endpoint.toObject().value(u"id"_s).toString() == id)
                return endpoint.toObject();
        }
    }
    return {};
}

QString breakerOf(quint16 port, const QByteArray &provider)
{
    return getJson(port, "/admin/v1/providers/" + provider)
        .value(u"breaker"_s)
        .toObject()
        .value(u"state"_s)
        .toString();
}

} // namespace

class TestFleetAgents : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void anAgentRegisteredOnOneNodeRoutesFromEveryNode();
    void aHeartbeatOnAnyNodeKeepsTheAgentAliveEverywhere();
    void aRemovalOnOneNodeRemovesTheAgentEverywhere();
    void withRedisGoneEachNodeRoutesFromItsCopyAndExpiresOnItsOwn();
    void redisRestartedEmptyGetsTheRegistryBack();
    void eachNodesEndpointStatesAreListedOnTheOthers();

private:
    // Three nodes a, b, c at the default sync interval, each listing all three.
    bool startThree();
    GatewayProcess &node(int index) { return m_bed->node(size_t(index)); }

    std::unique_ptr<FleetTestBed> m_bed;
    std::unique_ptr<FakeUpstream> m_failing;
    std::unique_ptr<FakeUpstream> m_agent;
};

void TestFleetAgents::initTestCase()
{
    QVERIFY2(QFile::exists(kBinary), qPrintable(kBinary));
}

void TestFleetAgents::init()
{
    m_failing = std::make_unique<FakeUpstream>();
    m_failing->mode = FakeUpstream::Mode::Status; // 500, a server error: the provider's fault
    m_agent = std::make_unique<FakeUpstream>();
    m_bed = std::make_unique<FleetTestBed>(kBinary);
    QVERIFY(m_bed->start());
    // The default sync_interval (100 ms), as an operator runs it; a short membership TTL so a
    // node's published states arrive every 375 ms.
    m_bed->config.fleetTiming = "  membership_ttl: 1500ms\n";
    m_bed->config.providers =
        "providers:\n" +
        FleetTestBed::openAiProvider("fake", m_bed->fake().baseUrl(), "[test-model]") +
        FleetTestBed::openAiProvider("failing", m_failing->baseUrl(), "[broken-model]");
    // Only requests call the fakes: a node's breaker opens from its own calls alone, and the
    // agent counts only what was routed to it.
    m_bed->config.extra = "probes: {enabled: false}\n";
}

void TestFleetAgents::cleanup()
{
    m_bed.reset();
    m_agent.reset();
    m_failing.reset();
}

bool TestFleetAgents::startThree()
{
    for (const QString &name : {u"a"_s, u"b"_s, u"c"_s})
        m_bed->startNode(name);
    for (const auto &started : m_bed->nodes()) {
        if (!started->waitForPort()) {
            qWarning("a node did not start: %s", started->errors().constData());
            return false;
        }
    }
    const QStringList all{u"a"_s, u"b"_s, u"c"_s};
    for (const auto &started : m_bed->nodes()) {
        if (!QTest::qWaitFor([&] { return liveNodes(started->port()) == all; }, 10000))
            return false;
    }
    return true;
}

void TestFleetAgents::anAgentRegisteredOnOneNodeRoutesFromEveryNode()
{
    QVERIFY(startThree());
    QCOMPARE(intentAnsweredBy(node(2).port()), "503"_ba); // nobody offers it yet

    QElapsedTimer sinceRegistered;
    QCOMPARE(registerAgent(node(0).port(), "booker", *m_agent), 201);
    sinceRegistered.start();
    // Within a sync interval and a round trip or two; the bound here is generous so a loaded
    // machine does not fail it, and the time it took is printed.
    QTRY_COMPARE_WITH_TIMEOUT(intentAnsweredBy(node(2).port()), "booker"_ba, 10000);
    qInfo("an agent registered on node a routed from node c after %lld ms",
          sinceRegistered.elapsed());
    // Node b syncs on its own clock: seen on c says nothing of b yet.
    QTRY_COMPARE_WITH_TIMEOUT(intentAnsweredBy(node(1).port()), "booker"_ba, 10000);
    // The agent itself answered (QTRY evaluates its expression more than once, so count here).
    const qsizetype before = m_agent->requests().size();
    QCOMPARE(intentAnsweredBy(node(1).port()), "booker"_ba);
    QCOMPARE(m_agent->requests().size(), before + 1);
    QVERIFY(m_bed->fake().requests().isEmpty());
    QCOMPARE(m_bed->redis().command({"HEXISTS", "switchyard:default:agents", "booker"}), "1"_ba);
}

void TestFleetAgents::aHeartbeatOnAnyNodeKeepsTheAgentAliveEverywhere()
{
    m_bed->config.extra += "agents:\n  ttl: 3s\n";
    QVERIFY(startThree());
    QCOMPARE(registerAgent(node(0).port(), "booker", *m_agent), 201);
    // A node answers 404 to a heartbeat for an agent it has not learnt of yet: wait for both.
    QTRY_COMPARE_WITH_TIMEOUT(agentIds(node(1).port()), QStringList{u"booker"_s}, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(agentIds(node(2).port()), QStringList{u"booker"_s}, 10000);

    // Twice the TTL of heartbeats sent to node b alone: nodes a and c hear of them through the
    // fleet, or the agent lapses there after 3 s.
    QElapsedTimer beating;
    beating.start();
    while (beating.elapsed() < 6000) {
        QCOMPARE(heartbeat(node(1).port(), "booker"), 200);
        QTest::qWait(300);
    }
    QCOMPARE(agentIds(node(0).port()), QStringList{u"booker"_s});
    QCOMPARE(intentAnsweredBy(node(0).port()), "booker"_ba);
    QCOMPARE(intentAnsweredBy(node(2).port()), "booker"_ba);

    // A heartbeat saying busy on node c: skipped on node a too.
    QCOMPARE(call(node(2).port(), "POST", "/admin/v1/agents/booker/heartbeat", R"({"busy":true})")
                 .status,
             200);
    QTRY_COMPARE_WITH_TIMEOUT(intentAnsweredBy(node(0).port()), "503"_ba, 10000);
}

void TestFleetAgents::aRemovalOnOneNodeRemovesTheAgentEverywhere()
{
    QVERIFY(startThree());
    QCOMPARE(registerAgent(node(0).port(), "booker", *m_agent), 201);
    QTRY_COMPARE_WITH_TIMEOUT(intentAnsweredBy(node(2).port()), "booker"_ba, 10000);

    QCOMPARE(call(node(2).port(), "DELETE", "/admin/v1/agents/booker").status, 200);
    QTRY_VERIFY_WITH_TIMEOUT(agentIds(node(0).port()).isEmpty(), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(agentIds(node(1).port()).isEmpty(), 10000);
    QCOMPARE(intentAnsweredBy(node(0).port()), "503"_ba);
    QCOMPARE(heartbeat(node(1).port(), "booker"), 404); // register again to come back
    QCOMPARE(m_bed->redis().command({"HEXISTS", "switchyard:default:agents", "booker"}), "0"_ba);
}

void TestFleetAgents::withRedisGoneEachNodeRoutesFromItsCopyAndExpiresOnItsOwn()
{
    m_bed->config.extra += "agents:\n  ttl: 3s\n";
    QVERIFY(startThree());
    QCOMPARE(registerAgent(node(0).port(), "booker", *m_agent), 201);
    QTRY_COMPARE_WITH_TIMEOUT(agentIds(node(2).port()), QStringList{u"booker"_s}, 10000);

    m_bed->redis().kill();
    QTRY_VERIFY_WITH_TIMEOUT(!getJson(node(2).port(), "/admin/v1/fleet")
                                  .value(u"link"_s)
                                  .toObject()
                                  .value(u"up"_s)
                                  .toBool(),
                             10000);
    // Node c keeps routing from its copy, and its own heartbeats keep the agent alive there
    // past the TTL; nodes a and b hear none of them, and let it lapse.
    QElapsedTimer beating;
    beating.start();
    while (beating.elapsed() < 5000) {
        QCOMPARE(heartbeat(node(2).port(), "booker"), 200);
        QCOMPARE(intentAnsweredBy(node(2).port()), "booker"_ba);
        QTest::qWait(300);
    }
    QTRY_VERIFY_WITH_TIMEOUT(agentIds(node(0).port()).isEmpty(), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(agentIds(node(1).port()).isEmpty(), 10000);
    QCOMPARE(intentAnsweredBy(node(0).port()), "503"_ba);
    QCOMPARE(agentIds(node(2).port()), QStringList{u"booker"_s});

    // The agent stops beating: node c lets it lapse on its own too.
    QTRY_VERIFY_WITH_TIMEOUT(agentIds(node(2).port()).isEmpty(), 10000);
    QCOMPARE(intentAnsweredBy(node(2).port()), "503"_ba);
}

void TestFleetAgents::redisRestartedEmptyGetsTheRegistryBack()
{
    QVERIFY(startThree());
    FakeUpstream planner;
    QCOMPARE(registerAgent(node(0).port(), "booker", *m_agent), 201);
    QCOMPARE(call(node(1).port(), "POST", "/admin/v1/agents",
                  R"({"id":"planner","base_url":")" + planner.baseUrl() +
                      R"(","capabilities":["travel/plan/trip"]})")
                 .status,
             201);
    const QStringList both{u"booker"_s, u"planner"_s};
    QTRY_COMPARE_WITH_TIMEOUT(agentIds(node(2).port()), both, 10000);

    m_bed->redis().kill();
    QVERIFY(m_bed->redis().restart()); // empty: no persistence
    QTRY_COMPARE_WITH_TIMEOUT(m_bed->redis().command({"HLEN", "switchyard:default:agents"}), "2"_ba,
                              15000);
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(node(0).port()).size(), 3, 10000);
    // Every node holds both again, and a node that joins now learns both from Redis alone. A
    // node that read the registry while the others were still publishing it again may have
    // followed it for one sync and dropped an agent; its next read brings the agent back.
    for (int i = 0; i < 3; ++i)
        QTRY_COMPARE_WITH_TIMEOUT(agentIds(node(i).port()), both, 10000);
    GatewayProcess &late = m_bed->startNode(u"d"_s);
    QVERIFY2(late.waitForPort(), late.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(agentIds(late.port()), both, 10000);
    QCOMPARE(intentAnsweredBy(late.port()), "booker"_ba);
}

void TestFleetAgents::eachNodesEndpointStatesAreListedOnTheOthers()
{
    QVERIFY(startThree());
    QCOMPARE(registerAgent(node(0).port(), "booker", *m_agent), 201);
    QTRY_COMPARE_WITH_TIMEOUT(agentIds(node(2).port()), QStringList{u"booker"_s}, 10000);

    // Node b lists every node with its endpoints and agents, as each published them.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            const QJsonArray nodes =
                getJson(node(1).port(), "/admin/v1/fleet").value(u"nodes"_s).toArray();
            if (nodes.size() != 3)
                return false;
            for (const QJsonValue &value : nodes) {
                const QJsonObject listed = value.toObject();
                QStringList ids;
                for (const QJsonValue &endpoint : listed.value(u"endpoints"_s).toArray())
                    ids.append(endpoint.toObject().value(u"id"_s).toString());
                if (listed.value(u"agents"_s).toInt(-1) != 1 ||
                    ids != QStringList{u"fake"_s, u"failing"_s, u"booker"_s})
                    return false;
            }
            return true;
        }(),
        10000);
    const QJsonObject agentOnA = publishedEndpoint(node(1).port(), u"a"_s, u"booker"_s);
    QCOMPARE(agentOnA.value(u"agent"_s).toBool(), true);
    QCOMPARE(agentOnA.value(u"breaker"_s).toString(), u"closed"_s);
    QCOMPARE(agentOnA.value(u"healthy"_s).toBool(), true);

    // Calls through node a alone fail until its breaker opens.
    QTRY_VERIFY_WITH_TIMEOUT(
        [&] {
            call(node(0).port(), "POST", "/v1/chat/completions",
                 R"({"model":"broken-model","messages":[{"role":"user","content":"hi"}]})");
            return breakerOf(node(0).port(), "failing") == u"open"_s;
        }(),
        15000);
    // Shown on node b for node a, closed for node b itself: b judges the provider by its own
    // calls (docs/fleet.md, "Health").
    QTRY_COMPARE_WITH_TIMEOUT(
        publishedEndpoint(node(1).port(), u"a"_s, u"failing"_s).value(u"breaker"_s).toString(),
        u"open"_s, 10000);
    const QJsonObject failingOnA = publishedEndpoint(node(1).port(), u"a"_s, u"failing"_s);
    QCOMPARE(failingOnA.value(u"healthy"_s).toBool(), false);
    QCOMPARE(failingOnA.value(u"state"_s).toString(), u"down"_s);
    QVERIFY(!failingOnA.value(u"breaker_reason"_s).toString().isEmpty());
    QCOMPARE(publishedEndpoint(node(1).port(), u"b"_s, u"failing"_s).value(u"breaker"_s).toString(),
             u"closed"_s);
    // Node c reads the others at its own pace.
    QTRY_COMPARE_WITH_TIMEOUT(
        publishedEndpoint(node(2).port(), u"a"_s, u"failing"_s).value(u"breaker"_s).toString(),
        u"open"_s, 10000);
    QCOMPARE(breakerOf(node(1).port(), "failing"), u"closed"_s);
    // And node b still calls it.
    const qsizetype before = m_failing->requests().size();
    call(node(1).port(), "POST", "/v1/chat/completions",
         R"({"model":"broken-model","messages":[{"role":"user","content":"hi"}]})");
    QVERIFY(m_failing->requests().size() > before);
}

QTEST_GUILESS_MAIN(TestFleetAgents)
#include "tst_fleet_agents.moc"
