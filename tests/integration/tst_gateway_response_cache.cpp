// The response cache through the real server on one node: the second request of the same
// meaning makes no provider call (whole and streamed, on chat completions, the Responses API,
// Messages and embeddings; the replayed stream's events equal the original's), fields that do
// not change the meaning share an entry and a changed question does not, sampled requests are
// left alone unless the cache says `sampled: true`, tenants and client keys never share an
// entry, errors, cut streams and degraded answers are not kept, `Cache-Control: no-cache`
// refreshes, the ttl and both bounds evict, and a hit is a ledger row and a trace with no
// attempt that say what it saved. The provider is a FakeUpstream that counts its calls.

#include "auth/credentials.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/request_recorder.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// A chat question at temperature 0: the kind of request the cache answers by default.
QByteArray question(bool stream, const QByteArray &content = "hello", const QByteArray &extra = {})
{
    return R"({"model":"test-model","temperature":0,"stream":)" +
           QByteArray(stream ? "true" : "false") + R"(,"messages":[{"role":"user","content":")" +
           content + R"("}])" + extra + "}";
}

// The fake as `fake`, serving test-model (with `cache:` when `modelCache` is set) and embed,
// then `extra` top-level sections.
config::Config cacheConfig(const FakeUpstream &fake, const QByteArray &modelCache,
                           const QByteArray &extra = {})
{
    QByteArray model = "      - name: test-model\n";
    if (!modelCache.isEmpty())
        model += "        cache: " + modelCache + "\n";
    return loadTestConfig(
        "listen: 127.0.0.1:0\n"
        "providers:\n"
        "  - id: fake\n"
        "    kind: openai\n"
        "    base_url: " +
            fake.baseUrl() +
            "\n"
            "    models:\n" +
            model + "      - {name: embed, endpoints: [embeddings], cache: {ttl: 1h}}\n" + extra,
        u"response cache test"_s);
}

std::unique_ptr<TestClient> send(quint16 port, const QByteArray &path, const QByteArray &body,
                                 const HeaderList &headers = {})
{
    auto client = std::make_unique<TestClient>(port);
    client->post(path, body, headers);
    client->waitForFinished();
    return client;
}

std::unique_ptr<TestClient> ask(quint16 port, const QByteArray &body,
                                const HeaderList &headers = {})
{
    return send(port, "/v1/chat/completions", body, headers);
}

// Two client keys of one tenant; the second may ask only for `secondModels` when set.
QByteArray keysSection(const QByteArray &secondModels = {})
{
    return "auth:\n"
           "  keys:\n"
           "    - {id: key-a, tenant: a, key: sha256:" +
           auth::sha256("sk-test-a").toHex() +
           "}\n"
           "    - {id: key-b, tenant: a, key: sha256:" +
           auth::sha256("sk-test-b").toHex() +
           (secondModels.isEmpty() ? QByteArray() : ", models: " + secondModels) + "}\n";
}

bool waitIdle(Engine &engine)
{
    return QTest::qWaitFor([&] { return engine.recorder().liveCount() == 0; }, 5000);
}

QJsonObject getJson(quint16 port, const QByteArray &path)
{
    TestClient client(port);
    client.send("GET", path);
    client.waitForFinished();
    return QJsonDocument::fromJson(client.body()).object();
}

QByteArray metricsOf(quint16 port)
{
    TestClient client(port);
    client.send("GET", "/metrics");
    client.waitForFinished();
    return client.body();
}

bool hasSample(const QByteArray &metrics, const QByteArray &sample)
{
    return metrics.split('\n').contains(sample);
}

} // namespace

class GatewayResponseCacheTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
    }

    void theSecondIdenticalRequestMakesNoProviderCall_data()
    {
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<bool>("streamed");
        const QByteArray messages = R"({"model":"test-model","max_tokens":16,"temperature":0,)"
                                    R"("messages":[{"role":"user","content":"hi"}])";
        const QByteArray responses = R"({"model":"test-model","input":"hi","temperature":0)";
        QTest::newRow("chat") << QByteArray("/v1/chat/completions") << question(false) << false;
        QTest::newRow("chat, streamed")
            << QByteArray("/v1/chat/completions") << question(true) << true;
        QTest::newRow("responses")
            << QByteArray("/v1/responses") << QByteArray(responses + "}") << false;
        QTest::newRow("responses, streamed")
            << QByteArray("/v1/responses") << QByteArray(responses + R"(,"stream":true})") << true;
        QTest::newRow("messages") << QByteArray("/v1/messages") << QByteArray(messages + "}")
                                  << false;
        QTest::newRow("messages, streamed")
            << QByteArray("/v1/messages") << QByteArray(messages + R"(,"stream":true})") << true;
    }

    void theSecondIdenticalRequestMakesNoProviderCall()
    {
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, body);
        QFETCH(bool, streamed);
        FakeUpstream fake;
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}"));
        QVERIFY(engine);
        std::unique_ptr<TestClient> original = send(engine->port(), path, body);
        QCOMPARE(original->status(), 200);
        QCOMPARE(original->header("x-switchyard-cache"), QByteArray("miss"));
        QVERIFY(waitIdle(*engine));

        std::unique_ptr<TestClient> again = send(engine->port(), path, body);
        QCOMPARE(again->status(), 200);
        QCOMPARE(again->header("x-switchyard-cache"), QByteArray("hit"));
        QCOMPARE(fake.requests().size(), 1);
        QCOMPARE(again->body(), original->body());
        QCOMPARE(again->chunked(), streamed);
        QCOMPARE(again->header("content-type"), original->header("content-type"));
        QCOMPARE(again->events().size(), original->events().size());
        for (qsizetype i = 0; i < original->events().size(); ++i) {
            QCOMPARE(again->events()[i].event, original->events()[i].event);
            QCOMPARE(again->events()[i].data, original->events()[i].data);
        }
        if (streamed)
            QVERIFY(original->events().size() > 2);
        QCOMPARE(again->header("x-switchyard-replay-of"),
                 original->header("x-switchyard-request-id"));
        QVERIFY(again->header("x-switchyard-request-id") !=
                original->header("x-switchyard-request-id"));
    }

    void embeddingsAreCachedWithoutATemperature()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Status;
        fake.status = 200;
        fake.statusBody = R"({"object":"list","data":[{"object":"embedding","index":0,)"
                          R"("embedding":[0.5,-0.25]}],"model":"embed","usage":{"prompt_tokens":)"
                          R"(3,"total_tokens":3}})";
        auto engine = startEngine(cacheConfig(fake, {}));
        QVERIFY(engine);
        const QByteArray body = R"({"model":"embed","input":["a","b"]})";
        QCOMPARE(send(engine->port(), "/v1/embeddings", body)->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*engine));
        std::unique_ptr<TestClient> again = send(engine->port(), "/v1/embeddings", body);
        QCOMPARE(again->status(), 200);
        QCOMPARE(again->header("x-switchyard-cache"), QByteArray("hit"));
        QCOMPARE(again->body(), fake.statusBody);
        QCOMPARE(fake.requests().size(), 1);
    }

    // The key is what is asked: the fields' order, `user` and `metadata` do not change it; the
    // question, a sampling parameter and the stream flag do.
    void onlyTheMeaningIsTheKey()
    {
        FakeUpstream fake;
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}"));
        QVERIFY(engine);
        QCOMPARE(ask(engine->port(), question(false))->status(), 200);
        QVERIFY(waitIdle(*engine));

        const QByteArray reordered =
            R"({"messages":[{"role":"user","content":"hello"}],"stream":false,"temperature":0,)"
            R"("model":"test-model","user":"someone-else","metadata":{"run":"42"}})";
        QCOMPARE(ask(engine->port(), reordered)->header("x-switchyard-cache"), QByteArray("hit"));
        QCOMPARE(ask(engine->port(), question(false), {{"x-request-id", "another-id"}})
                     ->header("x-switchyard-cache"),
                 QByteArray("hit"));
        QCOMPARE(fake.requests().size(), 1);

        for (const QByteArray &other :
             {question(false, "goodbye"), question(false, "hello", R"(,"max_tokens":5)"),
              question(true)}) {
            std::unique_ptr<TestClient> client = ask(engine->port(), other);
            QCOMPARE(client->status(), 200);
            QCOMPARE(client->header("x-switchyard-cache"), QByteArray("miss"));
        }
        QCOMPARE(fake.requests().size(), 4);
    }

    void sampledRequestsAreLeftAloneUnlessTheCacheSaysSo()
    {
        FakeUpstream fake;
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}"));
        QVERIFY(engine);
        const QByteArray noTemperature = chatBody("test-model", false);
        const QByteArray warm =
            question(false).replace(R"("temperature":0)", R"("temperature":0.7)");
        for (const QByteArray &body : {noTemperature, noTemperature, warm, warm}) {
            std::unique_ptr<TestClient> client = ask(engine->port(), body);
            QCOMPARE(client->status(), 200);
            QCOMPARE(client->header("x-switchyard-cache"), QByteArray("bypass"));
            QVERIFY(waitIdle(*engine));
        }
        QCOMPARE(fake.requests().size(), 4);
        QVERIFY(hasSample(metricsOf(engine->port()),
                          R"(switchyard_response_cache_requests_total{result="bypass"} 4)"));

        // A route rule's cache comes before the model's, and says `sampled: true`.
        FakeUpstream other;
        auto sampled = startEngine(cacheConfig(other, "{ttl: 10m}",
                                               "routes:\n"
                                               "  - name: evals\n"
                                               "    when: {field: header.x-suite, exists: true}\n"
                                               "    to: {provider: fake}\n"
                                               "    cache: {ttl: 10m, sampled: true}\n"));
        QVERIFY(sampled);
        const HeaderList suite{{"x-suite", "nightly"}};
        QCOMPARE(ask(sampled->port(), warm, suite)->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*sampled));
        QCOMPARE(ask(sampled->port(), warm, suite)->header("x-switchyard-cache"),
                 QByteArray("hit"));
        QCOMPARE(ask(sampled->port(), warm)->header("x-switchyard-cache"), QByteArray("bypass"));
        QCOMPARE(other.requests().size(), 2);
    }

    void tenantsAndClientKeysNeverShareAnEntry()
    {
        FakeUpstream fake;
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}"));
        QVERIFY(engine);
        const HeaderList teamA{{"x-switchyard-tenant", "a"}};
        const HeaderList teamB{{"x-switchyard-tenant", "b"}};
        QCOMPARE(ask(engine->port(), question(false), teamA)->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*engine));
        QCOMPARE(ask(engine->port(), question(false), teamB)->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*engine));
        QCOMPARE(ask(engine->port(), question(false), teamA)->header("x-switchyard-cache"),
                 QByteArray("hit"));
        QCOMPARE(fake.requests().size(), 2);

        // With client keys, each key is its own scope, whatever tenant header it sends.
        FakeUpstream keyed;
        auto withKeys = startEngine(cacheConfig(keyed, "{ttl: 10m}", keysSection()));
        QVERIFY(withKeys);
        const HeaderList keyA{{"authorization", "Bearer sk-test-a"}};
        const HeaderList keyB{{"authorization", "Bearer sk-test-b"}};
        QCOMPARE(ask(withKeys->port(), question(false), keyA)->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*withKeys));
        QCOMPARE(ask(withKeys->port(), question(false), keyB)->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*withKeys));
        QCOMPARE(ask(withKeys->port(), question(false), keyB)->header("x-switchyard-cache"),
                 QByteArray("hit"));
        QCOMPARE(keyed.requests().size(), 2);
    }

    void errorsAndCutStreamsAreNotKept()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Status;
        fake.status = 400; // not retried, not failed over: the client reads it
        fake.statusBody = R"({"error":{"message":"bad","type":"invalid_request_error"}})";
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}"));
        QVERIFY(engine);
        for (int i = 0; i < 2; ++i) {
            std::unique_ptr<TestClient> client = ask(engine->port(), question(false));
            QCOMPARE(client->status(), 400);
            QCOMPARE(client->header("x-switchyard-cache"), QByteArray("miss"));
            QVERIFY(waitIdle(*engine));
        }
        QCOMPARE(fake.requests().size(), 2);

        fake.mode = FakeUpstream::Mode::CutStream;
        for (int i = 0; i < 2; ++i) {
            ask(engine->port(), question(true));
            QVERIFY(waitIdle(*engine));
        }
        QCOMPARE(fake.requests().size(), 4);
        fake.mode = FakeUpstream::Mode::Answer;
        QCOMPARE(ask(engine->port(), question(true))->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*engine));
        QCOMPARE(ask(engine->port(), question(true))->header("x-switchyard-cache"),
                 QByteArray("hit"));
        QCOMPARE(fake.requests().size(), 5);
        QCOMPARE(engine->responseCacheCounts().store.entries, 1);
    }

    void aDegradedAnswerIsNotKept()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Status;
        fake.status = 503;
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}",
                                              "degradation:\n"
                                              "  canned: [{when: {model: '*'}, reply: Busy.}]\n"));
        QVERIFY(engine);
        for (int i = 0; i < 2; ++i) {
            std::unique_ptr<TestClient> client = ask(engine->port(), question(false));
            QCOMPARE(client->status(), 200);
            QCOMPARE(client->header("x-switchyard-degraded"), QByteArray("2"));
            QCOMPARE(client->header("x-switchyard-cache"), QByteArray("miss"));
            QVERIFY(waitIdle(*engine));
        }
        QCOMPARE(engine->responseCacheCounts().store.entries, 0);
    }

    void noCacheRefreshesTheEntry()
    {
        FakeUpstream fake;
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}"));
        QVERIFY(engine);
        QCOMPARE(ask(engine->port(), question(false))->status(), 200);
        QVERIFY(waitIdle(*engine));
        fake.completionBody.replace("chatcmpl-fake", "chatcmpl-fresh");
        std::unique_ptr<TestClient> refreshed =
            ask(engine->port(), question(false), {{"Cache-Control", "no-cache"}});
        QCOMPARE(refreshed->header("x-switchyard-cache"), QByteArray("miss"));
        QVERIFY(refreshed->body().contains("chatcmpl-fresh"));
        QVERIFY(waitIdle(*engine));
        std::unique_ptr<TestClient> after = ask(engine->port(), question(false));
        QCOMPARE(after->header("x-switchyard-cache"), QByteArray("hit"));
        QCOMPARE(after->body(), refreshed->body());
        QCOMPARE(fake.requests().size(), 2);

        // no-store: answered, and nothing kept.
        QCOMPARE(ask(engine->port(), question(false, "new"), {{"Cache-Control", "no-store"}})
                     ->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*engine));
        QCOMPARE(ask(engine->port(), question(false, "new"))->header("x-switchyard-cache"),
                 QByteArray("miss"));
    }

    void theTtlAndTheBoundsEvict()
    {
        FakeUpstream fake;
        auto engine = startEngine(cacheConfig(fake, "{ttl: 1s}",
                                              "response_cache:\n"
                                              "  max_entries: 2\n"));
        QVERIFY(engine);
        QCOMPARE(ask(engine->port(), question(false))->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*engine));
        QCOMPARE(ask(engine->port(), question(false))->header("x-switchyard-cache"),
                 QByteArray("hit"));
        QTest::qWait(1100); // past the ttl: waiting, not timing anything
        QCOMPARE(ask(engine->port(), question(false))->header("x-switchyard-cache"),
                 QByteArray("miss"));
        QVERIFY(waitIdle(*engine));
        QVERIFY(hasSample(metricsOf(engine->port()),
                          R"(switchyard_response_cache_evictions_total{reason="ttl"} 1)"));

        // Three questions into two places: the least recently used goes.
        ask(engine->port(), question(false, "two"));
        QVERIFY(waitIdle(*engine));
        QCOMPARE(ask(engine->port(), question(false))->header("x-switchyard-cache"),
                 QByteArray("hit")); // "hello" is now the most recently used
        ask(engine->port(), question(false, "three"));
        QVERIFY(waitIdle(*engine));
        QCOMPARE(engine->responseCacheCounts().store.entries, 2);
        QCOMPARE(engine->responseCacheCounts().store.evictedByBound, quint64(1));
        QCOMPARE(ask(engine->port(), question(false))->header("x-switchyard-cache"),
                 QByteArray("hit"));
        QCOMPARE(ask(engine->port(), question(false, "two"))->header("x-switchyard-cache"),
                 QByteArray("miss"));
    }

    void theByteBoundsEvict()
    {
        // Answers of about 40 KB: a 64 KiB cache holds one; a 16 KiB `max_bytes` none.
        FakeUpstream fake;
        const QByteArray answer(40000, 'x');
        fake.completionBody =
            QJsonDocument(
                QJsonObject{
                    {u"id"_s, u"chatcmpl-big"_s},
                    {u"object"_s, u"chat.completion"_s},
                    {u"model"_s, u"fake"_s},
                    {u"choices"_s,
                     QJsonArray{QJsonObject{
                         {u"index"_s, 0},
                         {u"message"_s, QJsonObject{{u"role"_s, u"assistant"_s},
                                                    {u"content"_s, QString::fromLatin1(answer)}}},
                         {u"finish_reason"_s, u"stop"_s}}}}})
                .toJson(QJsonDocument::Compact);
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}",
                                              "response_cache:\n"
                                              "  max_bytes: 64KiB\n"
                                              "routes:\n"
                                              "  - name: small\n"
                                              "    when: {field: header.x-small, exists: true}\n"
                                              "    to: {provider: fake}\n"
                                              "    cache: {ttl: 10m, max_bytes: 16KiB}\n"));
        QVERIFY(engine);
        ask(engine->port(), question(false, "one"));
        QVERIFY(waitIdle(*engine));
        QCOMPARE(engine->responseCacheCounts().store.entries, 1);
        ask(engine->port(), question(false, "two"));
        QVERIFY(waitIdle(*engine));
        const answers::ResponseCacheCounts counts = engine->responseCacheCounts().store;
        QCOMPARE(counts.entries, 1);
        QCOMPARE(counts.evictedByBound, quint64(1));
        QVERIFY(counts.bytes <= 64 * 1024);
        QCOMPARE(ask(engine->port(), question(false, "two"))->header("x-switchyard-cache"),
                 QByteArray("hit"));

        const HeaderList small{{"x-small", "1"}};
        for (int i = 0; i < 2; ++i) {
            QCOMPARE(
                ask(engine->port(), question(false, "small"), small)->header("x-switchyard-cache"),
                QByteArray("miss"));
            QVERIFY(waitIdle(*engine));
        }
    }

    // $0.10 a token in and out: the original (5 input tokens estimated, 2 output) costs $0.70,
    // which is what its hit saves; the hit itself costs nothing and calls nobody.
    void aHitIsALedgerRowAndATraceWithNoAttempt()
    {
        FakeUpstream fake;
        config::Config config = cacheConfig(fake, "{ttl: 10m}");
        config.usage.pricing.models.insert(u"test-model"_s,
                                           {100000.0, 100000.0, std::nullopt, std::nullopt});
        auto engine = startEngine(config);
        QVERIFY(engine);
        QCOMPARE(ask(engine->port(), question(false), {{"x-request-id", "made"}})->status(), 200);
        QVERIFY(waitIdle(*engine));
        QCOMPARE(ask(engine->port(), question(false), {{"x-request-id", "given-again"}})
                     ->header("x-switchyard-cache"),
                 QByteArray("hit"));
        QVERIFY(waitIdle(*engine));

        const std::optional<telemetry::Trace> made = engine->findTrace("made");
        const std::optional<telemetry::Trace> hit = engine->findTrace("given-again");
        QVERIFY(made && hit);
        QVERIFY(made->costUsd > 0.0);
        QCOMPARE(made->responseCache, u"miss"_s);
        QCOMPARE(hit->responseCache, u"hit"_s);
        QCOMPARE(hit->outcome, u"response_cache_hit"_s);
        QCOMPARE(hit->attempts, 0);
        QCOMPARE(hit->costUsd, 0.0);
        QCOMPARE(hit->inputTokens, 0);
        QVERIFY(hit->provider.isEmpty());
        QVERIFY(qAbs(hit->responseCacheSavedUsd - made->costUsd) < 1e-9);
        const telemetry::Span *span = hit->span(u"response cache"_s);
        QVERIFY(span);
        QCOMPARE(span->detail, u"hit (local)"_s);

        const QJsonObject trace = getJson(engine->port(), "/admin/v1/traces/given-again");
        QCOMPARE(trace.value(u"response_cache"_s).toString(), u"hit"_s);
        const QJsonObject usage = getJson(engine->port(), "/admin/v1/usage?group_by=tenant");
        const QJsonObject total = usage.value(u"total"_s).toObject();
        QCOMPARE(total.value(u"requests"_s).toInt(), 2);
        QCOMPARE(total.value(u"response_cache_hits"_s).toInt(), 1);
        QCOMPARE(total.value(u"response_cache_misses"_s).toInt(), 1);
        QCOMPARE(total.value(u"response_cache_hit_ratio"_s).toDouble(), 0.5);
        QVERIFY(qAbs(total.value(u"response_cache_saved_usd"_s).toDouble() - made->costUsd) < 1e-9);
        QVERIFY(qAbs(total.value(u"cost_usd"_s).toDouble() - made->costUsd) < 1e-9);

        const QByteArray metrics = metricsOf(engine->port());
        QVERIFY(hasSample(metrics, R"(switchyard_response_cache_requests_total{result="hit"} 1)"));
        QVERIFY(hasSample(metrics, R"(switchyard_response_cache_requests_total{result="miss"} 1)"));
        QVERIFY(hasSample(metrics, "switchyard_response_cache_entries 1"));
    }

    // Limits run first: a key that may not use the model is refused before any lookup.
    void aKeysModelPermissionsComeBeforeTheLookup()
    {
        FakeUpstream fake;
        auto engine = startEngine(cacheConfig(fake, "{ttl: 10m}", keysSection("[embed]")));
        QVERIFY(engine);
        QCOMPARE(
            ask(engine->port(), question(false), {{"authorization", "Bearer sk-test-a"}})->status(),
            200);
        QVERIFY(waitIdle(*engine));
        std::unique_ptr<TestClient> refused =
            ask(engine->port(), question(false), {{"authorization", "Bearer sk-test-b"}});
        QCOMPARE(refused->status(), 403);
        QVERIFY(refused->header("x-switchyard-cache").isEmpty());
    }
};

QTEST_GUILESS_MAIN(GatewayResponseCacheTest)
#include "tst_gateway_response_cache.moc"
