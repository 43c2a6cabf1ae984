// The duplicate guard on Idempotency-Key through the real server on one node: a duplicate of a
// running request gets 409, one after it the stored answer (whole or streamed) without a provider
// call, another body under the same key 422; failed, cut and abandoned answers are not kept;
// keys are scoped by client key and tenant; a malformed key is a 400 naming the header; and a
// kept answer survives a restart in the state directory. The provider is a FakeUpstream that
// counts its calls.

#include "auth/credentials.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/request_recorder.h"
#include "test_client.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

constexpr QByteArrayView kKeyA = "sk-test-team-a";
constexpr QByteArrayView kKeyB = "sk-test-team-b";

struct Call {
    QByteArray path = "/v1/chat/completions";
    QByteArray body = chatBody("test-model", false);
    HeaderList headers;
};

std::unique_ptr<TestClient> send(quint16 port, const Call &call)
{
    auto client = std::make_unique<TestClient>(port);
    client->post(call.path, call.body, call.headers);
    return client;
}

std::unique_ptr<TestClient> sendAndWait(quint16 port, const Call &call)
{
    std::unique_ptr<TestClient> client = send(port, call);
    client->waitForFinished();
    return client;
}

HeaderList withKey(const QByteArray &key, HeaderList headers = {})
{
    headers.append({"Idempotency-Key", key});
    return headers;
}

config::Config configFor(const FakeUpstream &fake, const QString &stateDirectory = {})
{
    config::Config config = gatewayConfig({providerFor(u"fake"_s, fake, {u"test-model"_s})});
    config.state.directory = stateDirectory;
    return config;
}

QJsonObject errorIn(const TestClient &client)
{
    return errorOf(client.body());
}

bool waitIdle(Engine &engine)
{
    return QTest::qWaitFor([&] { return engine.recorder().liveCount() == 0; }, 5000);
}

} // namespace

class GatewayIdempotencyTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
    }

    void aDuplicateWhileTheFirstRunsGets409()
    {
        FakeUpstream fake;
        fake.manualStreaming = true;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const Call call{"/v1/chat/completions", chatBody("test-model", true), withKey("k-409")};
        std::unique_ptr<TestClient> first = send(engine->port(), call);
        QVERIFY(QTest::qWaitFor([&] { return fake.requests().size() == 1; }, 5000));

        std::unique_ptr<TestClient> duplicate = sendAndWait(engine->port(), call);
        QCOMPARE(duplicate->status(), 409);
        QCOMPARE(duplicate->header("retry-after"), QByteArray("1"));
        const QJsonObject error = errorIn(*duplicate);
        QCOMPARE(error.value(u"code"_s).toString(), u"idempotency_key_in_use"_s);
        QCOMPARE(error.value(u"param"_s).toString(), u"Idempotency-Key"_s);

        QVERIFY(QTest::qWaitFor(
            [&] {
                fake.releaseEvent();
                return first->finished();
            },
            5000));
        QCOMPARE(first->status(), 200);
        std::unique_ptr<TestClient> after = sendAndWait(engine->port(), call);
        QCOMPARE(after->status(), 200);
        QCOMPARE(after->header("x-switchyard-idempotent-replay"), QByteArray("true"));
        QCOMPARE(fake.requests().size(), 1);
    }

    void aReplayEqualsTheOriginal_data()
    {
        QTest::addColumn<QByteArray>("path");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<bool>("streamed");
        const QByteArray messages =
            R"({"model":"test-model","max_tokens":16,"messages":[{"role":"user","content":"hi"}])";
        const QByteArray responses = R"({"model":"test-model","input":"hi")";
        QTest::newRow("chat") << QByteArray("/v1/chat/completions") << chatBody("test-model", false)
                              << false;
        QTest::newRow("chat, streamed")
            << QByteArray("/v1/chat/completions") << chatBody("test-model", true) << true;
        QTest::newRow("messages") << QByteArray("/v1/messages") << QByteArray(messages + "}")
                                  << false;
        QTest::newRow("messages, streamed")
            << QByteArray("/v1/messages") << QByteArray(messages + R"(,"stream":true})") << true;
        QTest::newRow("responses")
            << QByteArray("/v1/responses") << QByteArray(responses + "}") << false;
        QTest::newRow("responses, streamed")
            << QByteArray("/v1/responses") << QByteArray(responses + R"(,"stream":true})") << true;
    }

    void aReplayEqualsTheOriginal()
    {
        QFETCH(QByteArray, path);
        QFETCH(QByteArray, body);
        QFETCH(bool, streamed);
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const Call call{path, body, withKey("k-replay")};
        std::unique_ptr<TestClient> original = sendAndWait(engine->port(), call);
        QCOMPARE(original->status(), 200);
        QVERIFY(original->header("x-switchyard-idempotent-replay").isEmpty());
        QVERIFY(waitIdle(*engine));

        std::unique_ptr<TestClient> replay = sendAndWait(engine->port(), call);
        QCOMPARE(replay->status(), 200);
        QCOMPARE(replay->body(), original->body());
        QCOMPARE(replay->header("content-type"), original->header("content-type"));
        QCOMPARE(replay->chunked(), streamed);
        QCOMPARE(replay->events().size(), original->events().size());
        for (const QByteArray header : {"x-switchyard-provider", "x-switchyard-route",
                                        "x-switchyard-tier", "x-switchyard-attempts"})
            QCOMPARE(replay->header(header), original->header(header));
        QCOMPARE(replay->header("x-switchyard-idempotent-replay"), QByteArray("true"));
        QCOMPARE(replay->header("x-switchyard-replay-of"),
                 original->header("x-switchyard-request-id"));
        QVERIFY(replay->header("x-switchyard-request-id") !=
                original->header("x-switchyard-request-id"));
        QCOMPARE(fake.requests().size(), 1);
    }

    void aReplayIsNotChargedAgain()
    {
        FakeUpstream fake;
        config::Config config = configFor(fake);
        // Ten cents a token: the original costs something, the replay must not.
        config.usage.pricing.models.insert(u"test-model"_s,
                                           {100000.0, 100000.0, std::nullopt, std::nullopt});
        auto engine = startEngine(config);
        QVERIFY(engine);
        const Call first{"/v1/chat/completions", chatBody("test-model", false),
                         withKey("k-cost", {{"x-request-id", "original-1"}})};
        QCOMPARE(sendAndWait(engine->port(), first)->status(), 200);
        const Call again{"/v1/chat/completions", chatBody("test-model", false),
                         withKey("k-cost", {{"x-request-id", "replay-1"}})};
        QCOMPARE(sendAndWait(engine->port(), again)->status(), 200);
        QVERIFY(waitIdle(*engine));
        const std::optional<telemetry::Trace> original = engine->findTrace("original-1");
        const std::optional<telemetry::Trace> replay = engine->findTrace("replay-1");
        QVERIFY(original && replay);
        QVERIFY(original->costUsd > 0.0);
        QCOMPARE(replay->outcome, u"idempotent_replay"_s);
        QCOMPARE(replay->costUsd, 0.0);
        QCOMPARE(replay->inputTokens, 0);
        QCOMPARE(replay->outputTokens, 0);
        QCOMPARE(replay->attempts, 0);
        QVERIFY(replay->provider.isEmpty());
        const telemetry::Span *guard = replay->span(u"idempotency"_s);
        QVERIFY(guard);
        QCOMPARE(guard->detail, u"answered by original-1 (local)"_s);
    }

    void aDifferentBodyUnderTheSameKeyIs422()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        QCOMPARE(
            sendAndWait(engine->port(), {"/v1/chat/completions",
                                         chatBody("test-model", false, "one"), withKey("k-422")})
                ->status(),
            200);
        std::unique_ptr<TestClient> other =
            sendAndWait(engine->port(), {"/v1/chat/completions",
                                         chatBody("test-model", false, "two"), withKey("k-422")});
        QCOMPARE(other->status(), 422);
        const QJsonObject error = errorIn(*other);
        QCOMPARE(error.value(u"code"_s).toString(), u"idempotency_key_reused"_s);
        QCOMPARE(error.value(u"param"_s).toString(), u"Idempotency-Key"_s);
        QVERIFY(error.value(u"message"_s).toString().contains(u"Idempotency-Key"_s));
        // Another path is another request too.
        QCOMPARE(
            sendAndWait(engine->port(), {"/v1/responses", R"({"model":"test-model","input":"one"})",
                                         withKey("k-422")})
                ->status(),
            422);
        QCOMPARE(fake.requests().size(), 1);
        // The same key once more, with the first body: a replay.
        QCOMPARE(
            sendAndWait(engine->port(), {"/v1/chat/completions",
                                         chatBody("test-model", false, "one"), withKey("k-422")})
                ->header("x-switchyard-idempotent-replay"),
            QByteArray("true"));

        // /metrics says what the guard did with each.
        TestClient metrics(engine->port());
        metrics.send("GET", "/metrics");
        QVERIFY(metrics.waitForFinished());
        const QList<QByteArray> lines = metrics.body().split('\n');
        for (const QByteArray &expected :
             {QByteArray(R"(switchyard_idempotency_total{outcome="claimed"} 1)"),
              QByteArray(R"(switchyard_idempotency_total{outcome="reused"} 2)"),
              QByteArray(R"(switchyard_idempotency_total{outcome="replayed"} 1)"),
              QByteArray(R"(switchyard_idempotency_total{outcome="in_use"} 0)")})
            QVERIFY2(lines.contains(expected), expected.constData());
    }

    void aFailedAnswerIsNotKept_data()
    {
        QTest::addColumn<int>("mode");
        QTest::addColumn<bool>("streamed");
        QTest::newRow("provider error") << int(FakeUpstream::Mode::Status) << false;
        QTest::newRow("cut stream") << int(FakeUpstream::Mode::CutStream) << true;
    }

    void aFailedAnswerIsNotKept()
    {
        QFETCH(int, mode);
        QFETCH(bool, streamed);
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode(mode);
        fake.status = 400; // not retried: the client sees it at once
        fake.statusBody = R"({"error":{"message":"bad","type":"invalid_request_error"}})";
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const Call call{"/v1/chat/completions", chatBody("test-model", streamed), withKey("k-f")};
        std::unique_ptr<TestClient> failed = sendAndWait(engine->port(), call);
        QVERIFY(failed->finished());
        if (streamed)
            QVERIFY(!failed->events().isEmpty() &&
                    failed->events().constLast().data.contains("error"));
        else
            QCOMPARE(failed->status(), 400);
        QVERIFY(waitIdle(*engine));
        const qsizetype callsAfterFailure = fake.requests().size();

        fake.mode = FakeUpstream::Mode::Answer;
        std::unique_ptr<TestClient> retry = sendAndWait(engine->port(), call);
        QCOMPARE(retry->status(), 200);
        QVERIFY(retry->header("x-switchyard-idempotent-replay").isEmpty());
        QCOMPARE(fake.requests().size(), callsAfterFailure + 1);
    }

    void aFailSafeAnswerIsNotKept()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Status; // 500: retried, then the ladder answers
        config::Config config = configFor(fake);
        config.resilience.degradation.failSafe = u"We are busy."_s;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const Call call{"/v1/chat/completions", chatBody("test-model", false), withKey("k-busy")};
        std::unique_ptr<TestClient> busy = sendAndWait(engine->port(), call);
        QCOMPARE(busy->status(), 200);
        QCOMPARE(busy->header("x-switchyard-degraded"), QByteArray("3"));
        QVERIFY(waitIdle(*engine));
        const qsizetype callsWhileBusy = fake.requests().size();

        // The provider is back: the retry gets its answer, not the stand-in.
        fake.mode = FakeUpstream::Mode::Answer;
        std::unique_ptr<TestClient> retry = sendAndWait(engine->port(), call);
        QCOMPARE(retry->status(), 200);
        QCOMPARE(retry->header("x-switchyard-degraded"), QByteArray("0"));
        QVERIFY(retry->header("x-switchyard-idempotent-replay").isEmpty());
        QCOMPARE(fake.requests().size(), callsWhileBusy + 1);
    }

    void aClientGoneMidStreamReleasesTheKey()
    {
        FakeUpstream fake;
        fake.manualStreaming = true;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const Call call{"/v1/chat/completions", chatBody("test-model", true), withKey("k-gone")};
        std::unique_ptr<TestClient> first = send(engine->port(), call);
        QVERIFY(QTest::qWaitFor(
            [&] {
                fake.releaseEvent();
                return !first->events().isEmpty();
            },
            5000));
        first->disconnectNow();
        QVERIFY(waitIdle(*engine));

        fake.manualStreaming = false;
        std::unique_ptr<TestClient> retry = sendAndWait(engine->port(), call);
        QCOMPARE(retry->status(), 200);
        QVERIFY(retry->header("x-switchyard-idempotent-replay").isEmpty());
        QCOMPARE(fake.requests().size(), 2);
    }

    void anAnswerOverTheBoundIsNotKept()
    {
        FakeUpstream fake;
        fake.streamEvents = 8;
        fake.eventPaddingBytes = 512; // about 4 KiB of events
        config::Config config = configFor(fake);
        config.idempotency.maxAnswerBytes = 1024;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const Call call{"/v1/chat/completions", chatBody("test-model", true), withKey("k-big")};
        QCOMPARE(sendAndWait(engine->port(), call)->status(), 200);
        QVERIFY(waitIdle(*engine));
        std::unique_ptr<TestClient> again = sendAndWait(engine->port(), call);
        QCOMPARE(again->status(), 200);
        QVERIFY(again->header("x-switchyard-idempotent-replay").isEmpty());
        QCOMPARE(fake.requests().size(), 2);
    }

    void keysAreScopedByClientKey()
    {
        FakeUpstream fake;
        config::Config config =
            loadTestConfig("listen: 127.0.0.1:0\n"
                           "providers:\n"
                           "  - {id: fake, kind: openai, base_url: " +
                               fake.baseUrl() +
                               ", models: [test-model]}\n"
                               "auth:\n"
                               "  keys:\n"
                               "    - {id: key-a, tenant: team-a, key: sha256:" +
                               auth::sha256(kKeyA).toHex() +
                               "}\n"
                               "    - {id: key-b, tenant: team-a, key: sha256:" +
                               auth::sha256(kKeyB).toHex() + "}\n",
                           u"idempotency.yaml"_s);
        config.resilience.probes.enabled = false;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const auto callAs = [&](QByteArrayView apiKey) {
            return sendAndWait(
                engine->port(),
                {"/v1/chat/completions", chatBody("test-model", false),
                 withKey("shared-key", {{"Authorization", "Bearer " + apiKey.toByteArray()}})});
        };
        QVERIFY(callAs(kKeyA)->header("x-switchyard-idempotent-replay").isEmpty());
        // Another key of the same tenant is another scope: it runs, and reads nothing of A's.
        QVERIFY(callAs(kKeyB)->header("x-switchyard-idempotent-replay").isEmpty());
        QCOMPARE(fake.requests().size(), 2);
        QCOMPARE(callAs(kKeyA)->header("x-switchyard-idempotent-replay"), QByteArray("true"));
        QCOMPARE(fake.requests().size(), 2);
    }

    void withoutKeysTheTenantIsTheScope()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const auto callAs = [&](const QByteArray &tenant) {
            return sendAndWait(engine->port(),
                               {"/v1/chat/completions", chatBody("test-model", false),
                                withKey("shared-key", {{"x-switchyard-tenant", tenant}})});
        };
        QVERIFY(callAs("a")->header("x-switchyard-idempotent-replay").isEmpty());
        QVERIFY(callAs("b")->header("x-switchyard-idempotent-replay").isEmpty());
        QCOMPARE(callAs("a")->header("x-switchyard-idempotent-replay"), QByteArray("true"));
        QCOMPARE(fake.requests().size(), 2);
    }

    void aMalformedKeyIs400_data()
    {
        QTest::addColumn<QByteArray>("key");
        QTest::addColumn<QString>("why");
        QTest::newRow("empty") << QByteArray() << u"is empty"_s;
        QTest::newRow("too long") << QByteArray(256, 'k') << u"is 256 characters long"_s;
        QTest::newRow("a tab") << QByteArray("a\tb") << u"not printable ASCII"_s;
        QTest::newRow("not ASCII") << QByteArray("caf\xc3\xa9") << u"not printable ASCII"_s;
    }

    void aMalformedKeyIs400()
    {
        QFETCH(QByteArray, key);
        QFETCH(QString, why);
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        std::unique_ptr<TestClient> client = sendAndWait(
            engine->port(), {"/v1/chat/completions", chatBody("test-model", false), withKey(key)});
        QCOMPARE(client->status(), 400);
        const QJsonObject error = errorIn(*client);
        QCOMPARE(error.value(u"code"_s).toString(), u"invalid_idempotency_key"_s);
        QCOMPARE(error.value(u"param"_s).toString(), u"Idempotency-Key"_s);
        QVERIFY2(error.value(u"message"_s).toString().contains(why),
                 qPrintable(error.value(u"message"_s).toString()));
        QCOMPARE(fake.requests().size(), 0);
    }

    void theLongestKeyIsTaken()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const Call call{"/v1/chat/completions", chatBody("test-model", false),
                        withKey(QByteArray(255, 'k'))};
        QCOMPARE(sendAndWait(engine->port(), call)->status(), 200);
        QCOMPARE(sendAndWait(engine->port(), call)->header("x-switchyard-idempotent-replay"),
                 QByteArray("true"));
    }

    void requestsWithoutAKeyRunEveryTime()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const Call call{
            "/v1/chat/completions", chatBody("test-model", false), {{"x-request-id", "same-id"}}};
        QCOMPARE(sendAndWait(engine->port(), call)->status(), 200);
        QCOMPARE(sendAndWait(engine->port(), call)->status(), 200);
        QCOMPARE(fake.requests().size(), 2);
    }

    void theRequestIdCountsWhenConfigured()
    {
        FakeUpstream fake;
        config::Config config = configFor(fake);
        config.idempotency.requestIdHeader = true;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const Call call{
            "/v1/chat/completions", chatBody("test-model", false), {{"x-request-id", "same-id"}}};
        QCOMPARE(sendAndWait(engine->port(), call)->status(), 200);
        std::unique_ptr<TestClient> again = sendAndWait(engine->port(), call);
        QCOMPARE(again->header("x-switchyard-idempotent-replay"), QByteArray("true"));
        QCOMPARE(fake.requests().size(), 1);
        std::unique_ptr<TestClient> other =
            sendAndWait(engine->port(), {"/v1/chat/completions",
                                         chatBody("test-model", false, "other"), call.headers});
        QCOMPARE(other->status(), 422);
        QCOMPARE(errorIn(*other).value(u"param"_s).toString(), u"x-request-id"_s);
    }

    void turnedOffTheHeaderIsIgnored()
    {
        FakeUpstream fake;
        config::Config config = configFor(fake);
        config.idempotency.enabled = false;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const Call call{"/v1/chat/completions", chatBody("test-model", false), withKey("k-off")};
        QCOMPARE(sendAndWait(engine->port(), call)->status(), 200);
        QCOMPARE(sendAndWait(engine->port(), call)->status(), 200);
        QCOMPARE(fake.requests().size(), 2);
    }

    void aKeptAnswerSurvivesARestart()
    {
        QTemporaryDir state;
        QVERIFY(state.isValid());
        const Call call{"/v1/chat/completions", chatBody("test-model", false),
                        withKey("k-restart")};
        QByteArray originalBody;
        {
            FakeUpstream fake;
            auto engine = startEngine(configFor(fake, state.path()));
            QVERIFY(engine);
            std::unique_ptr<TestClient> original = sendAndWait(engine->port(), call);
            QCOMPARE(original->status(), 200);
            originalBody = original->body();
            QVERIFY(waitIdle(*engine));
        } // the engine stops: its store writes what it holds
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake, state.path()));
        QVERIFY(engine);
        std::unique_ptr<TestClient> replay = sendAndWait(engine->port(), call);
        QCOMPARE(replay->status(), 200);
        QCOMPARE(replay->header("x-switchyard-idempotent-replay"), QByteArray("true"));
        QCOMPARE(replay->body(), originalBody);
        QCOMPARE(fake.requests().size(), 0);
    }
};

QTEST_MAIN(GatewayIdempotencyTest)
#include "tst_gateway_idempotency.moc"
