// Shadow traffic through the real server (docs/routing.md, "Shadow traffic"): a rule's `shadow`
// sends a copy of a live request to another provider, whose answer the client never sees and
// which never holds the live answer back, whether the shadow provider hangs or fails; under load
// the shadows are dropped, or let go while they run, and counted, while every live request is
// served; a shadow's cost is in the ledger, marked, and no budget or tenant rate pays it; the two
// traces name each other.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "health/health_registry.h"
#include "test_client.h"
#include "usage/budget_tracker.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QProcess>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <vector>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

using Mode = FakeUpstream::Mode;

const QByteArray kLiveAnswer = R"({"id":"chatcmpl-live","object":"chat.completion",)"
                               R"("model":"fake","choices":[{"index":0,"message":)"
                               R"({"role":"assistant","content":"live"},"finish_reason":"stop"}]})";
const QByteArray kShadowAnswer =
    R"({"id":"chatcmpl-shadow","object":"chat.completion",)"
    R"("model":"fake","choices":[{"index":0,"message":)"
    R"({"role":"assistant","content":"shadow"},"finish_reason":"stop"}]})";

// Rule `mirrored` routes every request to `live` and mirrors `share` of them to `shadow`. Ten
// cents a token: a request is priced, so its cost shows in the ledger and the budgets.
config::Config shadowConfig(const FakeUpstream &live, const FakeUpstream &shadow,
                            double share = 1.0)
{
    config::Config config = gatewayConfig({providerFor(u"live"_s, live, {u"test-model"_s}),
                                           providerFor(u"shadow"_s, shadow, {u"test-model"_s})});
    config.resilience.probes.enabled = false;
    config.usage.pricing.models.insert(u"test-model"_s,
                                       {100000.0, 100000.0, std::nullopt, std::nullopt});
    config::RouteRule rule;
    rule.name = u"mirrored"_s;
    rule.to.kind = config::RouteTarget::Kind::Provider;
    rule.to.names = {u"live"_s};
    rule.shadow = config::ShadowConfig{u"shadow"_s, share, {}, {}};
    config.routing.routes = {rule};
    return config;
}

// A request the test keeps until its answer is whole.
std::unique_ptr<TestClient> post(quint16 port, const QByteArray &requestId, bool stream = false)
{
    auto client = std::make_unique<TestClient>(port);
    client->post("/v1/chat/completions", chatBody("test-model", stream, "compare me"),
                 {{"x-request-id", requestId}, {"x-switchyard-tenant", "acme"}});
    return client;
}

QString contentOf(const QByteArray &completion)
{
    return QJsonDocument::fromJson(completion)
        .object()
        .value(u"choices"_s)
        .toArray()
        .at(0)
        .toObject()
        .value(u"message"_s)
        .toObject()
        .value(u"content"_s)
        .toString();
}

// The sample of switchyard_shadow_requests_total for route `mirrored` and `outcome`; -1 when
// there is none.
qint64 shadowCount(Engine &engine, const QByteArray &outcome)
{
    const QByteArray prefix =
        QByteArray("switchyard_shadow_requests_total{route=\"mirrored\",outcome=\"") + outcome +
        "\"} ";
    for (const QByteArray &line : engine.metricsText().split('\n')) {
        if (line.startsWith(prefix))
            return line.sliced(prefix.size()).toLongLong();
    }
    return -1;
}

// The detail of the trace's first point event called `name`; empty when there is none.
QString eventDetail(const telemetry::Trace &trace, const QString &name)
{
    for (const telemetry::Span &span : trace.spans) {
        if (span.name == name)
            return span.detail;
    }
    return {};
}

// Lets `live` stream its held events until every client has its whole answer; false when that
// has not happened in ten seconds (a bound on waiting, never a measurement).
bool releaseUntilAnswered(FakeUpstream &live,
                          const std::vector<std::unique_ptr<TestClient>> &clients)
{
    QDeadlineTimer deadline(10000);
    const auto answered = [&] {
        return std::all_of(
            clients.begin(), clients.end(),
            [](const std::unique_ptr<TestClient> &client) { return client->finished(); });
    };
    while (!answered()) {
        if (deadline.hasExpired())
            return false;
        live.releaseEvent();
        QTest::qWait(5);
    }
    return true;
}

} // namespace

class GatewayShadowTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
    }

    void theClientGetsTheLiveAnswerWhileTheShadowStillHangs()
    {
        FakeUpstream live;
        live.completionBody = kLiveAnswer;
        FakeUpstream shadow;
        shadow.mode = Mode::Hang;
        auto engine = startEngine(shadowConfig(live, shadow));
        QVERIFY(engine);

        auto client = post(engine->port(), "mirror-1");
        QVERIFY(client->waitForFinished());
        QCOMPARE(client->status(), 200);
        QCOMPARE(contentOf(client->body()), u"live"_s);
        QCOMPARE(client->header("x-switchyard-provider"), QByteArray("live"));

        // The shadow was sent the same request, in the live request's trace, and is still
        // waiting for its provider: the live answer did not wait for it.
        QTRY_COMPARE_WITH_TIMEOUT(shadow.requests().size(), 1, 5000);
        QCOMPARE(shadow.answersCompleted(), 0);
        QCOMPARE(shadowCount(*engine, "sent"), 0);
        QCOMPARE(shadowCount(*engine, "failed"), 0);
        const FakeUpstream::ReceivedRequest &mirrored = shadow.requests().at(0);
        const FakeUpstream::ReceivedRequest &original = live.requests().at(0);
        QCOMPARE(QJsonDocument::fromJson(mirrored.body).object().value(u"messages"_s),
                 QJsonDocument::fromJson(original.body).object().value(u"messages"_s));
        QCOMPARE(mirrored.header("x-request-id"), QByteArray("mirror-1-shadow"));
        const std::optional<telemetry::Trace> liveTrace = engine->findTrace("mirror-1");
        QVERIFY(liveTrace);
        QVERIFY(mirrored.header("traceparent").contains(liveTrace->traceId));
        // Only the live request was the gateway's in flight; the shadow is not.
        QTRY_COMPARE_WITH_TIMEOUT(engine->inFlight(), 0, 5000);
    }

    // A shadow provider that fails, with a fail-safe message configured: the live answer is
    // the live provider's, the shadow is counted failed (the ladder never answers for it), and
    // the live provider's health saw one successful call and nothing of the shadow's.
    void aFailingShadowChangesNothingForTheLiveRequest()
    {
        FakeUpstream live;
        live.completionBody = kLiveAnswer;
        FakeUpstream shadow;
        shadow.mode = Mode::Status;
        shadow.status = 500;
        config::Config config = shadowConfig(live, shadow);
        config.resilience.degradation.failSafe = u"Try again later."_s;
        auto engine = startEngine(config);
        QVERIFY(engine);

        auto client = post(engine->port(), "failing-1");
        QVERIFY(client->waitForFinished());
        QCOMPARE(client->status(), 200);
        QCOMPARE(contentOf(client->body()), u"live"_s);
        QCOMPARE(client->header("x-switchyard-degraded"), QByteArray("0"));

        QTRY_COMPARE_WITH_TIMEOUT(shadowCount(*engine, "failed"), 1, 10000);
        QCOMPARE(shadowCount(*engine, "sent"), 0);
        QVERIFY(shadow.requests().size() >= 1);
        const std::optional<telemetry::Trace> shadowTrace = engine->findTrace("failing-1-shadow");
        QVERIFY(shadowTrace);
        QCOMPARE(shadowTrace->degradedLevel, 0);
        QVERIFY(shadowTrace->status >= 500);
        const ProviderHealth liveHealth = providerHealth(*engine, u"live"_s);
        QCOMPARE(liveHealth.requests, quint64(1));
        QCOMPARE(liveHealth.errors, quint64(0));
        QCOMPARE(live.requests().size(), 1);
    }

    void aShadowsCostIsRecordedAsShadowAndNoBudgetPaysIt()
    {
        QTemporaryDir state;
        QVERIFY(state.isValid());
        FakeUpstream live;
        live.completionBody = kLiveAnswer;
        FakeUpstream shadow;
        shadow.completionBody = kShadowAnswer;
        config::Config config = shadowConfig(live, shadow);
        config.state.directory = state.path();
        auto engine = startEngine(config);
        QVERIFY(engine);

        auto client = post(engine->port(), "mirror-2");
        QVERIFY(client->waitForFinished());
        QCOMPARE(client->status(), 200);
        QCOMPARE(contentOf(client->body()), u"live"_s);
        QTRY_COMPARE_WITH_TIMEOUT(shadowCount(*engine, "sent"), 1, 5000);

        const std::optional<telemetry::Trace> liveTrace = engine->findTrace("mirror-2");
        const std::optional<telemetry::Trace> shadowTrace = engine->findTrace("mirror-2-shadow");
        QVERIFY(liveTrace);
        QVERIFY(shadowTrace);
        QCOMPARE(shadowTrace->status, 200);
        QCOMPARE(shadowTrace->provider, u"shadow"_s);
        QCOMPARE(shadowTrace->route, u"mirrored"_s);
        QCOMPARE(shadowTrace->tenant, u"acme"_s);
        QVERIFY(shadowTrace->costUsd > 0.0);
        // The tenant's spend is the live request's alone.
        QVERIFY(liveTrace->costUsd > 0.0);
        QCOMPARE(engine->budgets().tenantSpentUsd(u"acme"_s, u"day"_s), liveTrace->costUsd);
        const double shadowCost = shadowTrace->costUsd;
        const double liveCost = liveTrace->costUsd;
        engine.reset(); // the ledger is written when the engine stops

        {
            QSqlDatabase database = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"shadow-check"_s);
            database.setDatabaseName(QDir(state.path()).filePath(u"switchyard.db"_s));
            QVERIFY(database.open());
            QSqlQuery query(database);
            QVERIFY(query.exec(u"SELECT request_id, shadow_of, cost_usd FROM usage_ledger "
                               u"ORDER BY request_id"_s));
            QVERIFY(query.next());
            QCOMPARE(query.value(0).toString(), u"mirror-2"_s);
            QCOMPARE(query.value(1).toString(), QString());
            QVERIFY(query.next());
            QCOMPARE(query.value(0).toString(), u"mirror-2-shadow"_s);
            QCOMPARE(query.value(1).toString(), u"mirror-2"_s);
            QCOMPARE(query.value(2).toDouble(), shadowCost);
            QVERIFY(!query.next());
        }
        QSqlDatabase::removeDatabase(u"shadow-check"_s);

        // A restarted gateway seeds its budgets from the ledger: from the live row alone.
        engine = startEngine(config);
        QVERIFY(engine);
        QTRY_COMPARE_WITH_TIMEOUT(engine->budgets().tenantSpentUsd(u"acme"_s, u"day"_s), liveCost,
                                  5000);
    }

    // The live trace names its shadow call, and the shadow's names the live request: same trace
    // id, the live request's span its parent. Both appear so in the admin API's JSON.
    void theTracesOfLiveAndShadowNameEachOther()
    {
        FakeUpstream live;
        FakeUpstream shadow;
        auto engine = startEngine(shadowConfig(live, shadow));
        QVERIFY(engine);

        auto client = post(engine->port(), "linked-1");
        QVERIFY(client->waitForFinished());
        QCOMPARE(client->status(), 200);
        QTRY_COMPARE_WITH_TIMEOUT(shadowCount(*engine, "sent"), 1, 5000);

        const std::optional<telemetry::Trace> liveTrace = engine->findTrace("linked-1");
        const std::optional<telemetry::Trace> shadowTrace = engine->findTrace("linked-1-shadow");
        QVERIFY(liveTrace);
        QVERIFY(shadowTrace);
        QCOMPARE(liveTrace->shadowRequestId, QByteArray("linked-1-shadow"));
        QVERIFY(!liveTrace->isShadow());
        QCOMPARE(eventDetail(*liveTrace, u"shadow"_s), u"mirrored to shadow as linked-1-shadow"_s);
        QCOMPARE(shadowTrace->shadowOf, QByteArray("linked-1"));
        QVERIFY(shadowTrace->shadowRequestId.isEmpty());
        QCOMPARE(shadowTrace->traceId, liveTrace->traceId);
        QCOMPARE(shadowTrace->parentSpanId, liveTrace->spanId);

        // The admin API's JSON of each.
        const auto traceJson = [&](const QByteArray &requestId) {
            TestClient admin(engine->port());
            admin.send("GET", "/admin/v1/traces/" + requestId);
            if (!admin.waitForFinished() || admin.status() != 200)
                return QJsonObject();
            return QJsonDocument::fromJson(admin.body()).object();
        };
        const QJsonObject liveJson = traceJson("linked-1");
        QCOMPARE(liveJson.value(u"shadow_request_id"_s).toString(), u"linked-1-shadow"_s);
        QVERIFY(!liveJson.contains(u"shadow_of"_s));
        const QJsonObject shadowJson = traceJson("linked-1-shadow");
        QCOMPARE(shadowJson.value(u"shadow_of"_s).toString(), u"linked-1"_s);
        QCOMPARE(shadowJson.value(u"trace_id"_s), liveJson.value(u"trace_id"_s));
        QVERIFY(!shadowJson.contains(u"shadow_request_id"_s));
    }

    // The tenant may start one request a minute, two at once. Both of its mirrored requests are
    // served: their shadows took nothing from its allowance. The third is over it.
    void aShadowTakesNothingFromTheTenantsRate()
    {
        FakeUpstream live;
        FakeUpstream shadow;
        config::Config config = shadowConfig(live, shadow);
        config.resilience.admission.tenants.insert(u"acme"_s, {1, 2});
        auto engine = startEngine(config);
        QVERIFY(engine);

        for (const QByteArray id : {"rate-1", "rate-2"}) {
            auto client = post(engine->port(), id);
            QVERIFY(client->waitForFinished());
            QCOMPARE(client->status(), 200);
        }
        QTRY_COMPARE_WITH_TIMEOUT(shadowCount(*engine, "sent"), 2, 5000);
        auto over = post(engine->port(), "rate-3");
        QVERIFY(over->waitForFinished());
        QCOMPARE(over->status(), 429);
        QCOMPARE(shadow.requests().size(), 2);
    }

    // The gate takes two live requests, held by their provider (a stream whose events the test
    // releases). The first request's shadow runs and answers; the second fills the gate, so its
    // shadow is dropped before it starts. Both live requests are answered in full.
    void aFullGateDropsTheShadowAndServesEveryLiveRequest()
    {
        FakeUpstream live;
        live.manualStreaming = true;
        FakeUpstream shadow;
        config::Config config = shadowConfig(live, shadow);
        config.resilience.admission.maxInFlight = 2;
        auto engine = startEngine(config);
        QVERIFY(engine);

        std::vector<std::unique_ptr<TestClient>> clients;
        clients.push_back(post(engine->port(), "busy-1", true));
        QTRY_COMPARE_WITH_TIMEOUT(shadowCount(*engine, "sent"), 1, 5000);
        QTRY_COMPARE_WITH_TIMEOUT(live.requests().size(), 1, 5000);
        QVERIFY(!clients[0]->finished());
        clients.push_back(post(engine->port(), "busy-2", true));
        QTRY_COMPARE_WITH_TIMEOUT(shadowCount(*engine, "dropped"), 1, 5000);
        QTRY_COMPARE_WITH_TIMEOUT(live.requests().size(), 2, 5000);
        QCOMPARE(engine->inFlight(), 2);

        QVERIFY(releaseUntilAnswered(live, clients));
        for (const std::unique_ptr<TestClient> &client : clients)
            QCOMPARE(client->status(), 200);
        QCOMPARE(shadow.requests().size(), 1);
        QCOMPARE(shadowCount(*engine, "sent"), 1);
        QCOMPARE(shadowCount(*engine, "failed"), 0);
        QVERIFY(!engine->findTrace("busy-2-shadow"));
        const std::optional<telemetry::Trace> secondTrace = engine->findTrace("busy-2");
        QVERIFY(secondTrace);
        QVERIFY(secondTrace->shadowRequestId.isEmpty());
        QCOMPARE(eventDetail(*secondTrace, u"shadow"_s),
                 u"dropped: 2 of 2 requests in flight leave no room"_s);
    }

    // A gate of four: one shadow at a time. The first request's shadow hangs at its provider
    // while live requests arrive and stay, held by theirs. The fourth fills the gate, and the
    // running shadow is let go for it: counted dropped, its trace ended with the reason. Every
    // live request is answered.
    void aRunningShadowIsLetGoWhenLiveRequestsFillTheGate()
    {
        FakeUpstream live;
        live.manualStreaming = true;
        FakeUpstream shadow;
        shadow.mode = Mode::Hang;
        config::Config config = shadowConfig(live, shadow);
        config.resilience.admission.maxInFlight = 4;
        auto engine = startEngine(config);
        QVERIFY(engine);

        std::vector<std::unique_ptr<TestClient>> clients;
        clients.push_back(post(engine->port(), "full-1", true));
        QTRY_COMPARE_WITH_TIMEOUT(shadow.requests().size(), 1, 5000);
        for (const QByteArray id : {"full-2", "full-3"})
            clients.push_back(post(engine->port(), id, true));
        QTRY_COMPARE_WITH_TIMEOUT(live.requests().size(), 3, 5000);
        // Their shadows found the one shadow place taken.
        QCOMPARE(shadowCount(*engine, "dropped"), 2);
        const std::optional<telemetry::Trace> running = engine->findTrace("full-1-shadow");
        QVERIFY(running);
        QCOMPARE(running->status, 0); // still waiting for its provider

        clients.push_back(post(engine->port(), "full-4", true));
        QTRY_COMPARE_WITH_TIMEOUT(live.requests().size(), 4, 5000);
        QCOMPARE(shadowCount(*engine, "dropped"), 4); // full-4's own, and full-1's let go
        const std::optional<telemetry::Trace> letGo = engine->findTrace("full-1-shadow");
        QVERIFY(letGo);
        QCOMPARE(letGo->status, 499);
        QCOMPARE(eventDetail(*letGo, u"completion"_s), u"shadow_let_go"_s);
        QCOMPARE(eventDetail(*letGo, u"cancelled"_s), u"4 live requests filled the gate of 4"_s);

        QVERIFY(releaseUntilAnswered(live, clients));
        for (const std::unique_ptr<TestClient> &client : clients)
            QCOMPARE(client->status(), 200);
        QCOMPARE(shadowCount(*engine, "sent"), 0);
        QCOMPARE(shadowCount(*engine, "failed"), 0);
    }

    // A shadow provider whose breaker is not closed is not called: a half-open breaker's one
    // trial call is live traffic's. The live request is served; the shadow is counted dropped.
    void aProviderWhoseBreakerIsNotClosedGetsNoShadow()
    {
        FakeUpstream live;
        FakeUpstream shadow;
        auto engine = startEngine(shadowConfig(live, shadow));
        QVERIFY(engine);
        engine->health().applyAction(engine->health().indexOf(u"shadow"_s), ProviderAction::Trip);

        auto client = post(engine->port(), "tripped-1");
        QVERIFY(client->waitForFinished());
        QCOMPARE(client->status(), 200);
        QCOMPARE(shadowCount(*engine, "dropped"), 1);
        QCOMPARE(shadow.requests().size(), 0);
        const std::optional<telemetry::Trace> liveTrace = engine->findTrace("tripped-1");
        QVERIFY(liveTrace);
        QCOMPARE(eventDetail(*liveTrace, u"shadow"_s),
                 u"dropped: shadow takes no shadow calls now (its breaker is not closed)"_s);
    }

    void aShareOfZeroMirrorsNothing()
    {
        FakeUpstream live;
        FakeUpstream shadow;
        auto engine = startEngine(shadowConfig(live, shadow, 0.0));
        QVERIFY(engine);
        auto client = post(engine->port(), "unmirrored");
        QVERIFY(client->waitForFinished());
        QCOMPARE(client->status(), 200);
        QCOMPARE(shadow.requests().size(), 0);
        QCOMPARE(shadowCount(*engine, "dropped"), -1); // never drawn: nothing to count
    }

    // The shadow family as scraped after a call of each outcome; Prometheus's own checker finds
    // nothing to complain about, and no request family counts the shadow.
    void theShadowFamilyIsCleanUnderPromtool()
    {
        const QString promtool = QStandardPaths::findExecutable(u"promtool"_s);
        QVERIFY2(!promtool.isEmpty(),
                 "promtool is missing: scripts/setup.sh installs it (Debian package prometheus)");
        FakeUpstream live;
        FakeUpstream shadow;
        auto engine = startEngine(shadowConfig(live, shadow));
        QVERIFY(engine);
        auto client = post(engine->port(), "scraped-1");
        QVERIFY(client->waitForFinished());
        QTRY_COMPARE_WITH_TIMEOUT(shadowCount(*engine, "sent"), 1, 5000);

        const QByteArray text = engine->metricsText();
        QVERIFY(text.contains("# TYPE switchyard_shadow_requests_total counter\n"));
        QVERIFY(text.contains(
            "switchyard_shadow_requests_total{route=\"mirrored\",outcome=\"dropped\"} 0\n"));
        QVERIFY(text.contains("switchyard_requests_total{provider=\"live\""));
        QVERIFY(!text.contains("switchyard_requests_total{provider=\"shadow\""));
        QProcess check;
        check.start(promtool, {u"check"_s, u"metrics"_s});
        QVERIFY(check.waitForStarted());
        check.write(text);
        check.closeWriteChannel();
        QVERIFY(check.waitForFinished(60000));
        const QByteArray complaints = check.readAllStandardOutput() + check.readAllStandardError();
        QVERIFY2(complaints.isEmpty(), complaints.constData());
        QCOMPARE(check.exitCode(), 0);
    }
};

QTEST_MAIN(GatewayShadowTest)
#include "tst_gateway_shadow.moc"
