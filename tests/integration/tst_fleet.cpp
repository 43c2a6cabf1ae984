// A fleet for real: three Switchyard processes (the shipped binary, headless) on one Redis
// (Debian's redis-server, started by the test on a free loopback port), in front of one fake
// provider. Membership, keys and limits shared across the nodes (a key's limits edited on one
// node in force on another); Redis killed under traffic and
// brought back empty; a node killed; a name or a state directory taken twice.
#include "fleet_test_bed.h"
#include "test_client.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <memory>
#include <vector>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);

QByteArray chatBody()
{
    return R"({"model":"test-model","messages":[{"role":"user","content":"hi"}]})"_ba;
}

// The status of one chat request for `model`, without a key.
int modelStatus(quint16 port, const QByteArray &model)
{
    TestClient client(port);
    client.post("/v1/chat/completions",
                R"({"model":")" + model + R"(","messages":[{"role":"user","content":"hi"}]})");
    if (!client.waitForFinished(15000))
        return 0;
    return client.status();
}

// Applies `text` as the running config through the admin API; the answer's status.
int applyConfig(quint16 port, const QByteArray &text, const QByteArray &baseVersion = {})
{
    TestClient client(port);
    QList<QPair<QByteArray, QByteArray>> headers{{"x-switchyard-author", "test"}};
    if (!baseVersion.isEmpty())
        headers.append({"x-switchyard-base-version", baseVersion});
    client.post("/admin/v1/config/apply", text, headers);
    if (!client.waitForFinished(15000))
        return 0;
    return client.status();
}

// The fleet's spend as the node's budgets see it, in US dollars (-1: no such budget).
double budgetSpent(quint16 port, const QString &name)
{
    const QJsonArray budgets = getJson(port, "/admin/v1/usage/budgets").value(u"data"_s).toArray();
    for (const QJsonValue &budget : budgets) {
        if (budget.toObject().value(u"name"_s).toString() == name)
            return budget.toObject().value(u"spent_usd"_s).toDouble();
    }
    return -1.0;
}

// The status of one chat request for a tenant (no keys: the tenant header names it).
int tenantStatus(quint16 port, const QByteArray &tenant)
{
    TestClient client(port);
    client.post("/v1/chat/completions", chatBody(), {{"x-switchyard-tenant", tenant}});
    if (!client.waitForFinished(15000))
        return 0;
    return client.status();
}

// Today's requests of `tenant` as the node's usage report counts them (-1: not in the report).
qint64 reportedRequests(quint16 port, const QString &tenant)
{
    const QJsonObject report = getJson(port, "/admin/v1/usage?group_by=tenant");
    for (const QJsonValue &row : report.value(u"data"_s).toArray()) {
        if (row.toObject().value(u"tenant"_s).toString() == tenant)
            return qint64(row.toObject().value(u"requests"_s).toDouble());
    }
    return -1;
}

quint64 fleetConfigVersion(quint16 port)
{
    return quint64(getJson(port, "/admin/v1/fleet")
                       .value(u"config"_s)
                       .toObject()
                       .value(u"version"_s)
                       .toDouble());
}

// The status of one chat request with `key`.
int chatStatus(quint16 port, const QByteArray &key)
{
    TestClient client(port);
    client.post("/v1/chat/completions", chatBody(), {{"Authorization", "Bearer " + key}});
    if (!client.waitForFinished(15000))
        return 0;
    return client.status();
}

} // namespace

class TestFleet : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void membershipListsEveryNodeAndForgetsAKilledOne();
    void aKeyCreatedOnOneNodeWorksOnEveryNodeAndItsRevocationToo();
    void aLimitHoldsAcrossTheFleet();
    void aLimitEditedOnOneNodeIsInForceOnAnother();
    void aLateLimitEditNeverBringsBackARevokedKey();
    void redisKilledUnderTrafficLosesNoRequestAndComesBackEmpty();
    void aNameOrAStateDirectoryTakenTwiceIsRefused();
    void aRequestMakesNoRedisRoundTrip();
    void aConfigAppliedOnOneNodeServesOnEveryNode();
    void aVersionANodeCannotLoadLeavesItOnItsOwn();
    void aBudgetCountsWhatEveryNodeSpent();
    void versionsDiffsAndRollbackAreTheFleets();
    void aPreviousReleasesStateDatabaseJoinsTheFleet();
    void usageIsReportedForTheFleetFromAnyNode();

private:
    QByteArray createKey(quint16 port, const QByteArray &body);

    std::unique_ptr<FleetTestBed> m_bed;
};

void TestFleet::initTestCase()
{
    QVERIFY2(QFile::exists(kBinary), qPrintable(kBinary));
}

void TestFleet::init()
{
    m_bed = std::make_unique<FleetTestBed>(kBinary);
    QVERIFY(m_bed->start());
}

void TestFleet::cleanup()
{
    m_bed.reset();
}

QByteArray TestFleet::createKey(quint16 port, const QByteArray &body)
{
    TestClient client(port);
    client.post("/admin/v1/keys", body);
    if (!client.waitForFinished(10000) || client.status() != 201)
        return {};
    return QJsonDocument::fromJson(client.body()).object().value(u"key"_s).toString().toUtf8();
}

void TestFleet::membershipListsEveryNodeAndForgetsAKilledOne()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    GatewayProcess &c = m_bed->startNode(u"c"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort() && c.waitForPort(), a.errors().constData());

    const QStringList all{u"a"_s, u"b"_s, u"c"_s};
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()), all, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(c.port()), all, 10000);
    const QJsonObject fleet = getJson(b.port(), "/admin/v1/fleet");
    QCOMPARE(fleet.value(u"enabled"_s).toBool(), true);
    QCOMPARE(fleet.value(u"node"_s).toString(), u"b"_s);
    QCOMPARE(fleet.value(u"link"_s).toObject().value(u"up"_s).toBool(), true);
    for (const QJsonValue &value : fleet.value(u"nodes"_s).toArray()) {
        const QJsonObject node = value.toObject();
        QVERIFY(node.value(u"address"_s).toString().startsWith(u"127.0.0.1:"_s));
        QCOMPARE(node.value(u"self"_s).toBool(), node.value(u"node"_s).toString() == u"b"_s);
    }

    c.kill(); // SIGKILL: no goodbye, its entry expires
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()), (QStringList{u"a"_s, u"b"_s}), 10000);
    QCOMPARE(m_bed->redis().command({"EXISTS", "switchyard:default:node:c"}), "0"_ba);
}

void TestFleet::aKeyCreatedOnOneNodeWorksOnEveryNodeAndItsRevocationToo()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    GatewayProcess &c = m_bed->startNode(u"c"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort() && c.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 3, 10000);

    // A second key keeps the gateway closed once the first is revoked: without any key it
    // would let every request in, as a single node does.
    QVERIFY(!createKey(a.port(), R"({"tenant":"team","id":"other-bot"})").isEmpty());
    const QByteArray key = createKey(a.port(), R"({"tenant":"team","id":"shared-bot"})");
    QVERIFY(!key.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(c.port(), key), 200, 5000);
    QCOMPARE(chatStatus(b.port(), key), 200);
    // Never the key's text in Redis: its SHA-256 only.
    const QByteArray stored =
        m_bed->redis().command({"HGET", "switchyard:default:keys", "shared-bot"});
    QVERIFY(stored.contains("\"sha256\""));
    QVERIFY(!stored.contains(key));

    TestClient revoke(b.port());
    revoke.send("DELETE", "/admin/v1/keys/shared-bot");
    QVERIFY(revoke.waitForFinished());
    QCOMPARE(revoke.status(), 200);
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(a.port(), key), 401, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(c.port(), key), 401, 5000);
}

void TestFleet::aLimitHoldsAcrossTheFleet()
{
    // At the default sync interval, as an operator runs it.
    m_bed->config.fleetTiming = "  membership_ttl: 1500ms\n";
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    GatewayProcess &c = m_bed->startNode(u"c"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort() && c.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 3, 10000);
    const QByteArray key =
        createKey(a.port(), R"({"tenant":"team","id":"limited","requests_per_minute":600})");
    QVERIFY(!key.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(c.port(), key), 200, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(b.port(), key), 200, 5000);

    // 1,200 requests, a third to each node, 24 at a time: twice the key's allowance.
    const QList<quint16> ports{a.port(), b.port(), c.port()};
    int admitted = 2; // the two above
    int refused = 0;
    int sent = 0;
    constexpr int kRequests = 1200;
    constexpr int kParallel = 24;
    std::vector<std::unique_ptr<TestClient>> running;
    while (sent < kRequests || !running.empty()) {
        while (sent < kRequests && int(running.size()) < kParallel) {
            auto client = std::make_unique<TestClient>(ports[sent % 3]);
            client->post("/v1/chat/completions", chatBody(), {{"Authorization", "Bearer " + key}});
            running.push_back(std::move(client));
            ++sent;
        }
        QTest::qWait(1);
        for (auto it = running.begin(); it != running.end();) {
            if (!(*it)->finished() && !(*it)->connectionClosed()) {
                ++it;
                continue;
            }
            if ((*it)->status() == 200)
                ++admitted;
            else if ((*it)->status() == 429)
                ++refused;
            it = running.erase(it);
        }
    }
    qInfo("admitted %d and refused %d of %d requests at 600 requests per minute", admitted, refused,
          kRequests + 2);
    QCOMPARE(admitted + refused, kRequests + 2);
    QVERIFY2(admitted >= 540 && admitted <= 660, qPrintable(QString::number(admitted)));
}

void TestFleet::aLimitEditedOnOneNodeIsInForceOnAnother()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);
    const QByteArray key = createKey(a.port(), R"({"tenant":"team","id":"edited-bot"})");
    QVERIFY(!key.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(b.port(), key), 200, 5000);
    QCOMPARE(chatStatus(b.port(), key), 200); // no limit yet

    // One request a minute, set on node a: the record the fleet holds carries it...
    TestClient edit(a.port());
    edit.send("PATCH", "/admin/v1/keys/edited-bot", R"({"requests_per_minute":1})");
    QVERIFY(edit.waitForFinished());
    QCOMPARE(edit.status(), 200);
    const QJsonObject shared =
        QJsonDocument::fromJson(
            m_bed->redis().command({"HGET", "switchyard:default:keys", "edited-bot"}))
            .object();
    QCOMPARE(shared.value(u"requests_per_minute"_s).toInt(), 1);
    QVERIFY(!shared.value(u"sha256"_s).toString().isEmpty()); // the whole key, not the limit alone

    // ...node b lists it at its next sync, and refuses the request after the one it allows.
    const auto limitOnB = [&] {
        for (const QJsonValue &listed :
             getJson(b.port(), "/admin/v1/keys").value(u"data"_s).toArray()) {
            if (listed.toObject().value(u"id"_s).toString() == u"edited-bot"_s)
                return listed.toObject().value(u"requests_per_minute"_s).toInt();
        }
        return -1;
    };
    QTRY_COMPARE_WITH_TIMEOUT(limitOnB(), 1, 5000);
    // No request was counted while the key had no limit: b serves the one a minute allows, and
    // its refill of one a minute keeps the next refused however slow the machine.
    QCOMPARE(chatStatus(b.port(), key), 200);
    TestClient refused(b.port());
    refused.post("/v1/chat/completions", chatBody(), {{"Authorization", "Bearer " + key}});
    QVERIFY(refused.waitForFinished(15000));
    QCOMPARE(refused.status(), 429);
    QCOMPARE(QJsonDocument::fromJson(refused.body())
                 .object()
                 .value(u"error"_s)
                 .toObject()
                 .value(u"code"_s)
                 .toString(),
             u"key_requests_per_minute_exceeded"_s);
}

void TestFleet::aLateLimitEditNeverBringsBackARevokedKey()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    // Another key stays: without any key left the gateway would not ask for one.
    QVERIFY(!createKey(a.port(), R"({"tenant":"team","id":"staying-bot"})").isEmpty());
    const QByteArray key = createKey(a.port(), R"({"tenant":"team","id":"late-bot"})");
    QVERIFY(!key.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(
        !m_bed->redis().command({"HGET", "switchyard:default:keys", "late-bot"}).isEmpty(), 5000);
    // Another node revokes it (its HDEL), and an operator edits it on this node before this
    // node has synced: whichever comes first, the key stays revoked everywhere.
    m_bed->redis().command({"HDEL", "switchyard:default:keys", "late-bot"});
    m_bed->redis().command({"INCR", "switchyard:default:keys:revision"});
    TestClient edit(a.port());
    edit.send("PATCH", "/admin/v1/keys/late-bot", R"({"requests_per_minute":5})");
    QVERIFY(edit.waitForFinished());
    QVERIFY2(edit.status() == 200 || edit.status() == 404, edit.body().constData());
    const auto listedOnA = [&] {
        for (const QJsonValue &listed :
             getJson(a.port(), "/admin/v1/keys").value(u"data"_s).toArray()) {
            if (listed.toObject().value(u"id"_s).toString() == u"late-bot"_s)
                return true;
        }
        return false;
    };
    QTRY_VERIFY_WITH_TIMEOUT(!listedOnA(), 5000);
    QVERIFY(m_bed->redis().command({"HGET", "switchyard:default:keys", "late-bot"}).isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(a.port(), key), 401, 5000);
    QVERIFY(m_bed->redis().command({"HGET", "switchyard:default:keys", "late-bot"}).isEmpty());
}

void TestFleet::redisKilledUnderTrafficLosesNoRequestAndComesBackEmpty()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);
    const QByteArray key = createKey(a.port(), R"({"tenant":"team","id":"kept"})");
    QVERIFY(!key.isEmpty());
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(b.port(), key), 200, 5000);

    int answered = 0;
    for (int i = 0; i < 40; ++i) {
        if (i == 10)
            m_bed->redis().kill();
        if (i == 30)
            QVERIFY(m_bed->redis().restart()); // empty: no persistence
        const int status = chatStatus(i % 2 ? a.port() : b.port(), key);
        QVERIFY2(status == 200, qPrintable(u"request %1 got %2"_s.arg(i).arg(status)));
        ++answered;
        if (i == 10) {
            QTRY_VERIFY_WITH_TIMEOUT(!getJson(a.port(), "/admin/v1/fleet")
                                          .value(u"link"_s)
                                          .toObject()
                                          .value(u"up"_s)
                                          .toBool(),
                                     5000);
            const QJsonObject link =
                getJson(b.port(), "/admin/v1/fleet").value(u"link"_s).toObject();
            QVERIFY(!link.value(u"down_since"_s).isNull());
            QVERIFY(!link.value(u"problem"_s).toString().isEmpty());
            TestClient scrape(a.port());
            scrape.send("GET", "/metrics");
            QVERIFY(scrape.waitForFinished());
            QVERIFY(scrape.body().contains("\nswitchyard_fleet_link_up 0\n"));
        }
    }
    QCOMPARE(answered, 40);
    // Back and empty: the nodes announce themselves and republish the keys they hold.
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(m_bed->redis().command({"HLEN", "switchyard:default:keys"}), "1"_ba,
                              10000);
    QCOMPARE(chatStatus(b.port(), key), 200);
}

void TestFleet::aNameOrAStateDirectoryTakenTwiceIsRefused()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 1, 10000);

    GatewayProcess &twin = m_bed->startNode(u"a"_s, {.stateName = u"twin"_s});
    QVERIFY(twin.waitForExit(20000));
    QCOMPARE(twin.exitCode(), 1);
    QVERIFY2(twin.errors().contains("fleet node name \"a\" is taken by a live node at 127.0.0.1:"),
             twin.errors().constData());

    GatewayProcess &sharing = m_bed->startNode(u"d"_s, {.stateName = u"a"_s});
    QVERIFY(sharing.waitForExit(20000));
    QCOMPARE(sharing.exitCode(), 1);
    QVERIFY2(sharing.errors().contains("is in use by another Switchyard"),
             sharing.errors().constData());
    QCOMPARE(liveNodes(a.port()), QStringList{u"a"_s});
}

void TestFleet::aRequestMakesNoRedisRoundTrip()
{
    // Syncs ten seconds apart and heartbeats minutes apart: between two syncs, whatever Redis
    // hears comes from the requests.
    m_bed->config.fleetTiming = "  sync_interval: 10s\n  membership_ttl: 10m\n";
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    QVERIFY2(a.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 1, 10000);
    const QByteArray key =
        createKey(a.port(), R"({"tenant":"team","id":"counted","requests_per_minute":6000})");
    QVERIFY(!key.isEmpty());
    // A machine slow enough for a sync to fall inside the burst gets another try.
    bool measured = false;
    for (int attempt = 0; attempt < 5 && !measured; ++attempt) {
        const QJsonObject before = getJson(a.port(), "/admin/v1/fleet");
        for (int i = 0; i < 50; ++i)
            QCOMPARE(chatStatus(a.port(), key), 200);
        const QJsonObject after = getJson(a.port(), "/admin/v1/fleet");
        if (after.value(u"sync_rounds"_s) != before.value(u"sync_rounds"_s))
            continue;
        measured = true;
        QCOMPARE(after.value(u"redis_commands"_s).toObject().value(u"sent"_s).toDouble(),
                 before.value(u"redis_commands"_s).toObject().value(u"sent"_s).toDouble());
    }
    QVERIFY(measured);
}

void TestFleet::aConfigAppliedOnOneNodeServesOnEveryNode()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    GatewayProcess &c = m_bed->startNode(u"c"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort() && c.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 3, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(fleetConfigVersion(a.port()) > 0, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(fleetConfigVersion(c.port()), fleetConfigVersion(a.port()), 10000);
    const quint64 before = fleetConfigVersion(b.port());
    QCOMPARE(modelStatus(a.port(), "other-model"), 404);

    // B's own file with one more model: B's listen and fleet sections stay B's.
    QFile file(m_bed->configPath(u"b"_s));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text =
        file.readAll().replace("models: [test-model]", "models: [test-model, other-model]");
    QCOMPARE(applyConfig(b.port(), text), 200);
    QTRY_COMPARE_WITH_TIMEOUT(modelStatus(a.port(), "other-model"), 200, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(modelStatus(c.port(), "other-model"), 200, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(fleetConfigVersion(a.port()), before + 1, 5000);
    QCOMPARE(fleetConfigVersion(c.port()), before + 1);
    // Each node kept its own name and listener: the fleet shares what is not a node's own.
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(c.port()), (QStringList{u"a"_s, u"b"_s, u"c"_s}), 5000);
    const QByteArray shared = m_bed->redis().command({"GET", "switchyard:default:config:head"});
    QVERIFY(shared.contains("other-model"));
    QVERIFY(!shared.contains("listen"));
    QVERIFY(!shared.contains("fleet"));
}

void TestFleet::aVersionANodeCannotLoadLeavesItOnItsOwn()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b =
        m_bed->startNode(u"b"_s, {.environment = {{u"EXTRA_HEADER"_s, u"only-on-b"_s}}});
    QVERIFY2(a.waitForPort() && b.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(fleetConfigVersion(a.port()) > 0, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(fleetConfigVersion(b.port()), fleetConfigVersion(a.port()), 10000);
    const quint64 before = fleetConfigVersion(a.port());

    // A header from a variable that only B's environment has: A cannot load the version.
    QFile file(m_bed->configPath(u"b"_s));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray text = file.readAll().replace(
        "    capacity: 256\n", "    capacity: 256\n    headers: {x-extra: {env: EXTRA_HEADER}}\n");
    QCOMPARE(applyConfig(b.port(), text), 200);
    QTRY_COMPARE_WITH_TIMEOUT(fleetConfigVersion(b.port()), before + 1, 5000);
    QTRY_VERIFY_WITH_TIMEOUT(!getJson(a.port(), "/admin/v1/fleet")
                                  .value(u"config"_s)
                                  .toObject()
                                  .value(u"problem"_s)
                                  .isNull(),
                             5000);
    const QString problem = getJson(a.port(), "/admin/v1/fleet")
                                .value(u"config"_s)
                                .toObject()
                                .value(u"problem"_s)
                                .toString();
    QVERIFY2(problem.contains(u"does not load here"_s) && problem.contains(u"EXTRA_HEADER"_s),
             qPrintable(problem));
    QCOMPARE(fleetConfigVersion(a.port()), before); // it keeps its own, and serves
    QCOMPARE(modelStatus(a.port(), "test-model"), 200);
}

void TestFleet::aBudgetCountsWhatEveryNodeSpent()
{
    // Every answer costs $1 (ten prompt tokens at $100,000 a million); the tenant may spend $10
    // a day across the fleet.
    m_bed->fake().completionBody =
        R"({"id":"c","object":"chat.completion","model":"fake","choices":[{"index":0,)"
        R"("message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],)"
        R"("usage":{"prompt_tokens":10,"completion_tokens":0,"total_tokens":10}})";
    m_bed->config.extra = "pricing:\n"
                          "  models:\n"
                          "    test-model: {input_per_million: 100000, output_per_million: 0}\n"
                          "budgets:\n"
                          "  - tenant: team\n"
                          "    name: team budget\n"
                          "    daily_usd: 10\n";
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    GatewayProcess &c = m_bed->startNode(u"c"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort() && c.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 3, 10000);

    for (int i = 0; i < 4; ++i) {
        QCOMPARE(tenantStatus(a.port(), "team"), 200);
        QCOMPARE(tenantStatus(b.port(), "team"), 200);
    }
    // C served nothing yet, and knows what A and B spent.
    QTRY_COMPARE_WITH_TIMEOUT(budgetSpent(c.port(), u"team budget"_s), 8.0, 5000);
    QCOMPARE(tenantStatus(c.port(), "team"), 200);
    QCOMPARE(tenantStatus(c.port(), "team"), 200);
    QCOMPARE(tenantStatus(c.port(), "team"), 429); // $10 spent across the fleet
    // The others refuse once they have read C's spend: until then (about two sync intervals)
    // they would admit, which is the overshoot docs/fleet.md states.
    QTRY_COMPARE_WITH_TIMEOUT(budgetSpent(a.port(), u"team budget"_s), 10.0, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(budgetSpent(b.port(), u"team budget"_s), 10.0, 5000);
    QCOMPARE(tenantStatus(a.port(), "team"), 429);
    QCOMPARE(tenantStatus(b.port(), "team"), 429);
    QCOMPARE(tenantStatus(b.port(), "other"), 200); // another tenant is not touched

    // Each node's own spend, as an absolute figure: never a secret, never counted twice.
    const QByteArray day = "switchyard:default:spend:day:" +
                           QDateTime::currentDateTimeUtc().toString(u"yyyy-MM-dd"_s).toUtf8() +
                           ":tenant:team";
    QCOMPARE(m_bed->redis().command({"HGET", day, "a"}), "4"_ba);
    QCOMPARE(m_bed->redis().command({"HGET", day, "c"}), "2"_ba);

    // A restarted node reads its own spend from its ledger and writes the same figure again.
    a.stop();
    GatewayProcess &again = m_bed->startNode(u"a"_s);
    QVERIFY2(again.waitForPort(), again.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(budgetSpent(again.port(), u"team budget"_s), 10.0, 10000);
    QCOMPARE(tenantStatus(again.port(), "team"), 429);
    QCOMPARE(m_bed->redis().command({"HGET", day, "a"}), "4"_ba);

    // Redis restarted empty: every node writes its own again, and the fleet's sum is whole.
    m_bed->redis().kill();
    QCOMPARE(tenantStatus(b.port(), "team"), 429); // served from what B knew
    QVERIFY(m_bed->redis().restart());
    QTRY_COMPARE_WITH_TIMEOUT(m_bed->redis().command({"HLEN", day}), "3"_ba, 10000);
    QCOMPARE(m_bed->redis().command({"HGET", day, "b"}), "4"_ba);
    QTRY_COMPARE_WITH_TIMEOUT(budgetSpent(c.port(), u"team budget"_s), 10.0, 5000);
    QCOMPARE(tenantStatus(c.port(), "team"), 429);
}

void TestFleet::versionsDiffsAndRollbackAreTheFleets()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 2, 10000);
    QTRY_VERIFY_WITH_TIMEOUT(fleetConfigVersion(a.port()) > 0, 10000);
    QTRY_COMPARE_WITH_TIMEOUT(fleetConfigVersion(b.port()), fleetConfigVersion(a.port()), 10000);
    const quint64 first = fleetConfigVersion(a.port());

    QFile file(m_bed->configPath(u"a"_s));
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray original = file.readAll();
    const QByteArray wider =
        QByteArray(original).replace("models: [test-model]", "models: [test-model, other-model]");
    QCOMPARE(applyConfig(a.port(), wider, QByteArray::number(first)), 200);
    QTRY_COMPARE_WITH_TIMEOUT(fleetConfigVersion(b.port()), first + 1, 5000);

    // B lists the fleet's numbers, and shows A's change as a diff between them.
    const QJsonObject list = getJson(b.port(), "/admin/v1/config/versions");
    QCOMPARE(quint64(list.value(u"running"_s).toDouble()), first + 1);
    const QJsonObject newest = list.value(u"versions"_s).toArray().first().toObject();
    QCOMPARE(quint64(newest.value(u"number"_s).toDouble()), first + 1);
    QVERIFY2(newest.value(u"note"_s).toString().startsWith(u"from node a"_s),
             qPrintable(newest.value(u"note"_s).toString()));
    const QJsonObject whole =
        getJson(b.port(), "/admin/v1/config/versions/" + QByteArray::number(first + 1));
    const QString diff = whole.value(u"diff"_s).toString();
    QVERIFY2(diff.contains(u"+    models: [test-model, other-model]"_s), qPrintable(diff));
    QVERIFY(diff.contains(u"fleet version %1"_s.arg(first)));
    // The text is as B runs it: B's own listener and name, not A's.
    QVERIFY(whole.value(u"text"_s).toString().contains(u"node: b"_s));

    // A stale base version is refused on any node, by the fleet's numbers.
    QCOMPARE(applyConfig(b.port(), original, QByteArray::number(first)), 409);

    // B rolls the fleet back to the first version: a new fleet version, served everywhere.
    TestClient rollback(b.port());
    rollback.post("/admin/v1/config/rollback/" + QByteArray::number(first), {});
    QVERIFY(rollback.waitForFinished(10000));
    QCOMPARE(rollback.status(), 200);
    QCOMPARE(
        quint64(QJsonDocument::fromJson(rollback.body()).object().value(u"version"_s).toDouble()),
        first + 2);
    QTRY_COMPARE_WITH_TIMEOUT(fleetConfigVersion(a.port()), first + 2, 5000);
    QTRY_COMPARE_WITH_TIMEOUT(modelStatus(a.port(), "other-model"), 404, 5000);
    const QJsonObject rolledBack = getJson(a.port(), "/admin/v1/config/versions")
                                       .value(u"versions"_s)
                                       .toArray()
                                       .first()
                                       .toObject();
    QCOMPARE(rolledBack.value(u"source"_s).toString(), u"rollback"_s);
    QCOMPARE(quint64(rolledBack.value(u"number"_s).toDouble()), first + 2);
}

// tests/data/state/previous_release.db: the state file of a release before fleets, holding the
// client key `ci-runner` (the SHA-256 of "test"), ledger rows and a config version.
void TestFleet::aPreviousReleasesStateDatabaseJoinsTheFleet()
{
    const QString state = m_bed->stateDirectory(u"a"_s);
    QVERIFY(QDir().mkpath(state));
    const QString database = state + u"/switchyard.db"_s;
    QVERIFY(QFile::copy(qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") +
                            u"/tests/data/state/previous_release.db"_s,
                        database));
    QVERIFY(QFile::setPermissions(database, QFile::ReadOwner | QFile::WriteOwner));
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(b.port()).size(), 2, 10000);

    // A's old key reaches the fleet, and B lets it in.
    QTRY_VERIFY_WITH_TIMEOUT(
        m_bed->redis().command({"HGET", "switchyard:default:keys", "ci-runner"}).contains("sha256"),
        10000);
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(b.port(), "test"), 200, 5000);
    // Its ledger was migrated and still answers for the old day.
    const QJsonObject usage =
        getJson(a.port(), "/admin/v1/usage?from=2026-11-30&to=2026-11-30&group_by=tenant");
    QVERIFY2(!usage.value(u"data"_s).toArray().isEmpty(),
             QJsonDocument(usage).toJson().constData());

    // Revoked while A is away: A comes back following the fleet, the key does not return.
    QVERIFY(!createKey(b.port(), R"({"tenant":"team","id":"keeps-auth-on"})").isEmpty());
    a.stop();
    TestClient revoke(b.port());
    revoke.send("DELETE", "/admin/v1/keys/ci-runner");
    QVERIFY(revoke.waitForFinished());
    QCOMPARE(revoke.status(), 200);
    GatewayProcess &again = m_bed->startNode(u"a"_s);
    QVERIFY2(again.waitForPort(), again.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(chatStatus(again.port(), "test"), 401, 10000);
    QCOMPARE(m_bed->redis().command({"HEXISTS", "switchyard:default:keys", "ci-runner"}), "0"_ba);
}

void TestFleet::usageIsReportedForTheFleetFromAnyNode()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    GatewayProcess &c = m_bed->startNode(u"c"_s);
    QVERIFY2(a.waitForPort() && b.waitForPort() && c.waitForPort(), a.errors().constData());
    QTRY_COMPARE_WITH_TIMEOUT(liveNodes(a.port()).size(), 3, 10000);
    const QList<GatewayProcess *> nodes{&a, &b, &c};
    int sent = 0;
    for (int i = 0; i < 6; ++i) {
        QCOMPARE(tenantStatus(nodes[i % 3]->port(), "team"), 200);
        ++sent;
    }
    for (GatewayProcess *node : nodes)
        QTRY_COMPARE_WITH_TIMEOUT(reportedRequests(node->port(), u"team"_s), qint64(sent), 10000);
    const QJsonObject report = getJson(b.port(), "/admin/v1/usage?group_by=tenant");
    QCOMPARE(report.value(u"fleet_nodes"_s).toArray(), (QJsonArray{u"a"_s, u"c"_s}));
    QVERIFY(report.value(u"fleet_problem"_s).isNull());

    // Redis killed under traffic and brought back empty: each node says the report is its own
    // meanwhile, and afterwards the fleet's count is whole again, nothing lost or counted twice.
    m_bed->redis().kill();
    for (int i = 0; i < 6; ++i) {
        QCOMPARE(tenantStatus(nodes[i % 3]->port(), "team"), 200);
        ++sent;
    }
    QTRY_VERIFY_WITH_TIMEOUT(
        !getJson(a.port(), "/admin/v1/usage?group_by=tenant").value(u"fleet_problem"_s).isNull(),
        5000);
    QCOMPARE(reportedRequests(a.port(), u"team"_s), qint64(4)); // its own: two before, two during
    QVERIFY(m_bed->redis().restart());
    for (GatewayProcess *node : nodes)
        QTRY_COMPARE_WITH_TIMEOUT(reportedRequests(node->port(), u"team"_s), qint64(sent), 10000);

    // A node restarted from its state directory writes the same figures again.
    c.stop();
    GatewayProcess &again = m_bed->startNode(u"c"_s);
    QVERIFY2(again.waitForPort(), again.errors().constData());
    QCOMPARE(tenantStatus(again.port(), "team"), 200);
    ++sent;
    QTRY_COMPARE_WITH_TIMEOUT(reportedRequests(a.port(), u"team"_s), qint64(sent), 10000);
    QTRY_COMPARE_WITH_TIMEOUT(reportedRequests(again.port(), u"team"_s), qint64(sent), 10000);
}

QTEST_GUILESS_MAIN(TestFleet)
#include "tst_fleet.moc"
