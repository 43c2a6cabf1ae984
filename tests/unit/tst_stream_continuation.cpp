// What a stream that may continue on another provider reads of the chunks the client got, what
// it refuses to continue, and how it makes the continuing provider's chunks read as one stream;
// with the request each kind of provider is sent to continue it.

#include "config/config.h"
#include "execution/stream_continuation.h"
#include "ingress/anthropic_ingress.h"
#include "upstream/adapters/provider_adapter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace switchyard;
using execution::StreamContinuation;
using upstream::SseEvent;

namespace {

SseEvent sseEvent(const QByteArray &data)
{
    SseEvent made;
    made.data = data;
    return made;
}

SseEvent chunk(const QByteArray &id, const QByteArray &delta,
               const QByteArray &finishReason = "null")
{
    return sseEvent(R"({"id":")" + id +
                    R"(","object":"chat.completion.chunk","choices":[{"index":0,"delta":)" + delta +
                    R"(,"finish_reason":)" + finishReason + "}]}");
}

QJsonObject chunkJson(const SseEvent &sent)
{
    return QJsonDocument::fromJson(sent.data).object();
}

QString deltaText(const SseEvent &sent)
{
    return chunkJson(sent)
        .value(u"choices")
        .toArray()
        .at(0)
        .toObject()
        .value(u"delta")
        .toObject()
        .value(u"content")
        .toString();
}

} // namespace

class StreamContinuationTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void requestsWithOtherAnswersThanTextAreNeverContinued_data();
    void requestsWithOtherAnswersThanTextAreNeverContinued();
    void collectsTheTextTheClientGot();
    void streamsWithMoreThanTextAreNotContinuable_data();
    void streamsWithMoreThanTextAreNotContinuable();
    void nothingToContinueBeforeTheFirstText();
    void continuedChunksReadAsOneStream();
    void trimmedTailDropsTheContinuationsLeadingSpace();
    void aContinuationThatEndsAtOnceStillCarriesTheMarker();
    void continuationBodyForEachKind();
    void aNoteOnAFinishOnlyChunkReachesAMessagesClient();
};

void StreamContinuationTest::requestsWithOtherAnswersThanTextAreNeverContinued_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("allowed");
    const QByteArray messages = R"("messages":[{"role":"user","content":"hi"}])";
    QTest::newRow("plain") << QByteArray("{" + messages + "}") << true;
    QTest::newRow("n 1") << QByteArray("{\"n\":1," + messages + "}") << true;
    QTest::newRow("n 2") << QByteArray("{\"n\":2," + messages + "}") << false;
    QTest::newRow("logprobs") << QByteArray("{\"logprobs\":true," + messages + "}") << false;
    QTest::newRow("logprobs false") << QByteArray("{\"logprobs\":false," + messages + "}") << true;
    QTest::newRow("top_logprobs") << QByteArray("{\"top_logprobs\":3," + messages + "}") << false;
}

void StreamContinuationTest::requestsWithOtherAnswersThanTextAreNeverContinued()
{
    QFETCH(QByteArray, body);
    QFETCH(bool, allowed);
    QCOMPARE(StreamContinuation::requestAllows(body), allowed);
}

void StreamContinuationTest::collectsTheTextTheClientGot()
{
    StreamContinuation stream;
    stream.observe({chunk("a-1", R"({"role":"assistant","content":""})"),
                    chunk("a-1", R"({"content":"Hello"})")});
    stream.observe({chunk("a-1", R"({"content":", wor","tool_calls":null})")});
    QVERIFY(stream.continuable());
    QCOMPARE(stream.text(), QStringLiteral("Hello, wor"));
    QVERIFY(stream.refusal().isEmpty());
}

void StreamContinuationTest::streamsWithMoreThanTextAreNotContinuable_data()
{
    QTest::addColumn<SseEvent>("sent");
    QTest::addColumn<QString>("refusal");
    QTest::newRow("tool call")
        << chunk("a", R"({"tool_calls":[{"index":0,"id":"c","function":{"name":"f"}}]})")
        << QStringLiteral("the stream carries tool calls");
    QTest::newRow("reasoning") << chunk("a", R"({"reasoning_content":"let me think"})")
                               << QStringLiteral("the stream carries `reasoning_content`, not "
                                                 "only text");
    QTest::newRow("logprobs")
        << sseEvent(
               R"({"id":"a","choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[]},"finish_reason":null}]})")
        << QStringLiteral("the stream carries logprobs");
    QTest::newRow("second choice")
        << sseEvent(
               R"({"id":"a","choices":[{"index":1,"delta":{"content":"x"},"finish_reason":null}]})")
        << QStringLiteral("the stream carries more than one choice");
    QTest::newRow("finished") << chunk("a", R"({})", R"("stop")")
                              << QStringLiteral("the answer had already finished");
}

void StreamContinuationTest::streamsWithMoreThanTextAreNotContinuable()
{
    QFETCH(SseEvent, sent);
    QFETCH(QString, refusal);
    StreamContinuation stream;
    stream.observe({chunk("a", R"({"content":"Some text"})"), sent});
    QVERIFY(!stream.continuable());
    QCOMPARE(stream.refusal(), refusal);
    // Nothing after it makes it continuable again.
    stream.observe({chunk("a", R"({"content":" more"})")});
    QVERIFY(!stream.continuable());
}

void StreamContinuationTest::nothingToContinueBeforeTheFirstText()
{
    StreamContinuation stream;
    stream.observe({chunk("a", R"({"role":"assistant","content":""})")});
    QVERIFY(!stream.continuable());
    QCOMPARE(stream.refusal(), QStringLiteral("no text reached the client yet"));
}

void StreamContinuationTest::continuedChunksReadAsOneStream()
{
    StreamContinuation stream;
    stream.observe({chunk("first-id", R"({"content":"The answer "})")});
    stream.beginContinuation(QStringLiteral("cut-provider"), QStringLiteral("next-provider"),
                             QStringLiteral("upstream_stream_interrupted"), 2, false);
    QList<SseEvent> events{chunk("second-id", R"({"role":"assistant","content":""})"),
                           chunk("second-id", R"({"content":"is 42"})"),
                           chunk("second-id", R"({"content":"."})"),
                           chunk("second-id", R"({})", R"("stop")"), sseEvent("[DONE]")};
    stream.rewriteContinued(events);

    QCOMPARE(events.size(), 4); // the continuing provider's own role chunk is dropped
    QCOMPARE(deltaText(events.at(0)), QStringLiteral("is 42"));
    const QJsonObject marker = chunkJson(events.at(0)).value(u"switchyard").toObject();
    QCOMPARE(marker.value(u"continued_from").toString(), QStringLiteral("cut-provider"));
    QCOMPARE(marker.value(u"continued_on").toString(), QStringLiteral("next-provider"));
    QCOMPARE(marker.value(u"reason").toString(), QStringLiteral("upstream_stream_interrupted"));
    QCOMPARE(marker.value(u"attempt").toInt(), 2);
    QCOMPARE(marker.value(u"characters_before").toInt(), 11);
    QVERIFY(!chunkJson(events.at(1)).contains(u"switchyard")); // marked once
    for (int i = 0; i < 3; ++i)
        QCOMPARE(chunkJson(events.at(i)).value(u"id").toString(), QStringLiteral("first-id"));
    QVERIFY(events.at(3).isDone());
    QCOMPARE(stream.text(), QStringLiteral("The answer is 42."));
    QCOMPARE(stream.continuations(), 1);
}

void StreamContinuationTest::trimmedTailDropsTheContinuationsLeadingSpace()
{
    StreamContinuation stream;
    stream.observe({chunk("a", R"({"content":"Hello "})")});
    stream.beginContinuation(QStringLiteral("x"), QStringLiteral("y"), {}, 2, true);
    QList<SseEvent> events{chunk("b", R"({"content":" "})"), chunk("b", R"({"content":" world"})")};
    stream.rewriteContinued(events);
    QCOMPARE(events.size(), 1);
    QCOMPARE(deltaText(events.at(0)), QStringLiteral("world"));
    QVERIFY(chunkJson(events.at(0)).contains(u"switchyard"));
}

void StreamContinuationTest::aContinuationThatEndsAtOnceStillCarriesTheMarker()
{
    StreamContinuation stream;
    stream.observe({chunk("a", R"({"content":"Done."})")});
    stream.beginContinuation(QStringLiteral("x"), QStringLiteral("y"), {}, 2, false);
    QList<SseEvent> events{chunk("b", R"({"role":"assistant"})"), chunk("b", R"({})", R"("stop")")};
    stream.rewriteContinued(events);
    QCOMPARE(events.size(), 1);
    QVERIFY(chunkJson(events.at(0)).contains(u"switchyard"));
}

void StreamContinuationTest::continuationBodyForEachKind()
{
    const QByteArray body =
        R"({"model":"m","stream":true,"messages":[{"role":"user","content":"Say hello"}]})";
    const QString partial = QStringLiteral("Hello, ");

    config::ProviderConfig vllm;
    vllm.kind = config::ProviderKind::OpenAi;
    QVERIFY(!vllm.continuesAnswers()); // only when its operator says so
    vllm.continuesAnswersSetting = true;
    QVERIFY(vllm.continuesAnswers());
    const auto openai = upstream::adapters::continuationBody(vllm, body, partial);
    QJsonObject request = QJsonDocument::fromJson(openai.body).object();
    QCOMPARE(request.value(u"continue_final_message").toBool(), true);
    QCOMPARE(request.value(u"add_generation_prompt").toBool(true), false);
    QCOMPARE(request.value(u"stream").toBool(), true);
    QJsonArray messages = request.value(u"messages").toArray();
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages.at(1).toObject().value(u"role").toString(), QStringLiteral("assistant"));
    QCOMPARE(messages.at(1).toObject().value(u"content").toString(), partial);
    QVERIFY(!openai.trimmedTail);

    config::ProviderConfig anthropic;
    anthropic.kind = config::ProviderKind::Anthropic;
    QVERIFY(!anthropic.continuesAnswers()); // not every model takes a prefill
    anthropic.continuesAnswersSetting = true;
    QVERIFY(anthropic.continuesAnswers());
    const auto prefill = upstream::adapters::continuationBody(anthropic, body, partial);
    request = QJsonDocument::fromJson(prefill.body).object();
    QVERIFY(!request.contains(u"continue_final_message"));
    messages = request.value(u"messages").toArray();
    QCOMPARE(messages.at(1).toObject().value(u"content").toString(), QStringLiteral("Hello,"));
    QVERIFY(prefill.trimmedTail);

    config::ProviderConfig mapped;
    mapped.kind = config::ProviderKind::Mapped;
    mapped.continuesAnswersSetting = true;
    QVERIFY(!mapped.continuesAnswers());
}

void StreamContinuationTest::aNoteOnAFinishOnlyChunkReachesAMessagesClient()
{
    // The continuing provider had nothing to add: its first chunk is its finish reason, which
    // becomes no Messages event of its own. The note rides on the next one.
    ingress::MessagesStreamWriter writer;
    QList<SseEvent> sent = writer.feed(chunk("a", R"({"content":"All done."})"));
    SseEvent finishOnly = chunk("a", R"({})", R"("stop")");
    QJsonObject withNote = chunkJson(finishOnly);
    withNote.insert(u"switchyard",
                    QJsonObject{{QStringLiteral("continued_on"), QStringLiteral("b")}});
    finishOnly.data = QJsonDocument(withNote).toJson(QJsonDocument::Compact);
    sent += writer.feed(finishOnly);
    sent += writer.feed(sseEvent("[DONE]"));
    int noted = 0;
    for (const SseEvent &event : sent)
        noted += chunkJson(event).contains(u"switchyard") ? 1 : 0;
    QCOMPARE(noted, 1);
    QVERIFY(writer.completed());
}

QTEST_GUILESS_MAIN(StreamContinuationTest)
#include "tst_stream_continuation.moc"
