// Streams that survive a cut (`continue_streams`), through the real server: a provider breaks off
// a stream after its first text, another provider is given that text as the assistant's partial
// answer and continues it, and the client reads one stream with one end, in each protocol it
// may speak. Without the setting, or with nobody able to continue, the cut ends the stream as
// before.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;

namespace {

using Mode = FakeUpstream::Mode;

QJsonObject bodyJson(const QByteArray &data)
{
    return QJsonDocument::fromJson(data).object();
}

// Both providers call the same fake, which cuts the first stream it serves after two chunks
// ("t0", "t1") and answers the next whole ("t0", "t1", "t2"): whichever provider the pool ranks
// first is cut, and the other continues.
struct Bed {
    FakeUpstream fake;
    std::unique_ptr<Engine> engine;

    bool start(bool continueStreams, bool secondContinues = true)
    {
        fake.scriptedModes = {Mode::CutStream, Mode::Answer};
        fake.cutAfterEvents = 2;
        fake.streamEvents = 3;
        config::ProviderConfig first =
            providerAt(QStringLiteral("first"), fake.baseUrl(), {QStringLiteral("test-model")});
        config::ProviderConfig second =
            providerAt(QStringLiteral("second"), fake.baseUrl(), {QStringLiteral("test-model")});
        first.continuesAnswersSetting = secondContinues;
        second.continuesAnswersSetting = secondContinues;
        config::Config config = gatewayConfig({first, second});
        config.timeouts = shortTimeouts();
        config::RouteRule rule;
        rule.name = QStringLiteral("continued");
        rule.to.kind = config::RouteTarget::Kind::Pool;
        rule.to.names = {QStringLiteral("first"), QStringLiteral("second")};
        rule.continueStreams = continueStreams;
        config.routing.routes = {rule};
        engine = startEngine(config);
        return engine != nullptr;
    }
};

} // namespace

class GatewayContinuationTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aCutChatStreamContinuesOnTheOtherProvider();
    void aMessagesClientReadsOneContinuedStream();
    void aResponsesClientReadsOneContinuedStream();
    void withoutContinueStreamsTheCutEndsTheStream();
    void nobodyWhoCanContinueMeansTheCutEndsTheStream();
};

void GatewayContinuationTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayContinuationTest::aCutChatStreamContinuesOnTheOtherProvider()
{
    Bed bed;
    QVERIFY(bed.start(true));
    TestClient client(bed.engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", true, "count"));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QVERIFY(!client.framingError());

    QString text;
    QString continuedOn;
    int marked = 0;
    int finishes = 0;
    for (const upstream::SseEvent &event : client.events()) {
        if (event.isDone())
            continue;
        const QJsonObject chunk = bodyJson(event.data);
        QVERIFY2(!chunk.contains(u"error"), event.data.constData());
        const QJsonObject choice = chunk.value(u"choices").toArray().at(0).toObject();
        const QString piece = choice.value(u"delta").toObject().value(u"content").toString();
        if (chunk.contains(u"switchyard")) {
            ++marked;
            // The switch is marked on the first continued chunk: after the cut one's text.
            QCOMPARE(text, QStringLiteral("t0t1"));
            const QJsonObject note = chunk.value(u"switchyard").toObject();
            continuedOn = note.value(u"continued_on").toString();
            QCOMPARE(note.value(u"reason").toString(),
                     QStringLiteral("upstream_stream_interrupted"));
            QCOMPARE(note.value(u"characters_before").toInt(), 4);
            QVERIFY(note.value(u"continued_from").toString() !=
                    note.value(u"continued_on").toString());
        }
        text += piece;
        if (choice.value(u"finish_reason").isString())
            ++finishes;
    }
    QCOMPARE(marked, 1);
    QCOMPARE(finishes, 1); // one stream, one finish reason
    QCOMPARE(text, QStringLiteral("t0t1t0t1t2"));
    QVERIFY(client.events().constLast().isDone());

    // The continuing provider was given the text the client had, to continue as its own.
    QCOMPARE(bed.fake.requests().size(), 2);
    const QJsonObject continued = bodyJson(bed.fake.requests().at(1).body);
    const QJsonArray messages = continued.value(u"messages").toArray();
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages.at(1).toObject().value(u"role").toString(), QStringLiteral("assistant"));
    QCOMPARE(messages.at(1).toObject().value(u"content").toString(), QStringLiteral("t0t1"));
    QCOMPARE(continued.value(u"continue_final_message").toBool(), true);
    QCOMPARE(continued.value(u"add_generation_prompt").toBool(true), false);
    QTRY_COMPARE_WITH_TIMEOUT(bed.engine->inFlight(), 0, 5000);
    QCOMPARE(healthInFlight(*bed.engine), 0);

    // Counted, by the provider that continued.
    TestClient metrics(bed.engine->port());
    metrics.send("GET", "/metrics");
    QVERIFY(metrics.waitForFinished());
    const QByteArray counted =
        "switchyard_stream_continuations_total{provider=\"" + continuedOn.toUtf8() + "\"} 1";
    QVERIFY2(metrics.body().split('\n').contains(counted), counted.constData());
}

void GatewayContinuationTest::aMessagesClientReadsOneContinuedStream()
{
    Bed bed;
    QVERIFY(bed.start(true));
    TestClient client(bed.engine->port());
    client.post("/v1/messages",
                R"({"model":"test-model","max_tokens":64,"stream":true,)"
                R"("messages":[{"role":"user","content":"count"}]})",
                {{"anthropic-version", "2023-06-01"}});
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QString text;
    int marked = 0;
    QStringList types;
    for (const upstream::SseEvent &event : client.events()) {
        const QJsonObject data = bodyJson(event.data);
        types.append(data.value(u"type").toString());
        if (data.value(u"type").toString() == u"content_block_delta")
            text += data.value(u"delta").toObject().value(u"text").toString();
        if (data.contains(u"switchyard")) {
            ++marked;
            QCOMPARE(data.value(u"type").toString(), QStringLiteral("content_block_delta"));
        }
    }
    QCOMPARE(text, QStringLiteral("t0t1t0t1t2"));
    QCOMPARE(marked, 1);
    QCOMPARE(types.count(QStringLiteral("message_start")), 1);
    QCOMPARE(types.constLast(), QStringLiteral("message_stop"));
    QVERIFY2(!types.contains(QStringLiteral("error")), qPrintable(types.join(u',')));
}

void GatewayContinuationTest::aResponsesClientReadsOneContinuedStream()
{
    Bed bed;
    QVERIFY(bed.start(true));
    TestClient client(bed.engine->port());
    client.post("/v1/responses", R"({"model":"test-model","input":"count","stream":true})");
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QString text;
    int marked = 0;
    QStringList types;
    for (const upstream::SseEvent &event : client.events()) {
        const QJsonObject data = bodyJson(event.data);
        types.append(data.value(u"type").toString());
        if (data.value(u"type").toString() == u"response.output_text.delta")
            text += data.value(u"delta").toString();
        if (data.contains(u"switchyard")) {
            ++marked;
            QCOMPARE(data.value(u"type").toString(), QStringLiteral("response.output_text.delta"));
        }
    }
    QCOMPARE(text, QStringLiteral("t0t1t0t1t2"));
    QCOMPARE(marked, 1);
    QCOMPARE(types.count(QStringLiteral("response.created")), 1);
    QCOMPARE(types.constLast(), QStringLiteral("response.completed"));
}

void GatewayContinuationTest::withoutContinueStreamsTheCutEndsTheStream()
{
    Bed bed;
    QVERIFY(bed.start(false));
    TestClient client(bed.engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", true, "count"));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QJsonObject error = errorOf(client.events().constLast().data);
    QCOMPARE(error.value(u"code").toString(), QStringLiteral("upstream_stream_interrupted"));
    QCOMPARE(bed.fake.requests().size(), 1);
}

void GatewayContinuationTest::nobodyWhoCanContinueMeansTheCutEndsTheStream()
{
    Bed bed;
    QVERIFY(bed.start(true, false)); // openai providers that never said they continue answers
    TestClient client(bed.engine->port());
    client.post("/v1/chat/completions", chatBody("test-model", true, "count"));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QJsonObject error = errorOf(client.events().constLast().data);
    QCOMPARE(error.value(u"code").toString(), QStringLiteral("upstream_stream_interrupted"));
    QCOMPARE(bed.fake.requests().size(), 1);
    QTRY_COMPARE_WITH_TIMEOUT(bed.engine->inFlight(), 0, 5000);
}

QTEST_GUILESS_MAIN(GatewayContinuationTest)
#include "tst_gateway_continuation.moc"
