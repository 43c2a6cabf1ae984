// The /v1/messages door (ingress::chatRequestFromMessages and MessagesAnswers): what an
// Anthropic client sends becomes a chat request the gateway's own parser accepts, and every
// answer the executor writes for OpenAI clients leaves as the bytes an Anthropic client expects.
// The translations themselves have golden files (tst_adapters); this checks the wire bytes and
// the hand-off to parseChatRequest.

#include "http/messages_answers.h"
#include "protocol/chat_request.h"
#include "upstream/sse_parser.h"

#include <QtTest>

using namespace Qt::StringLiterals;
using switchyard::http::MessagesAnswers;
using switchyard::protocol::ApiError;
using switchyard::protocol::ChatRequest;
using switchyard::upstream::SseEvent;

namespace {

SseEvent dataEvent(const QByteArray &data)
{
    SseEvent event;
    event.data = data;
    return event;
}

} // namespace

class TestAdaptersIngress : public QObject {
    Q_OBJECT

private slots:
    void convertedRequestPassesTheChatParser_data();
    void convertedRequestPassesTheChatParser();
    void refusesInAnthropicsShape();
    void wholeAnswer();
    void unconvertibleAnswerBecomesAnError();
    void streamWireBytes();
    void streamFailureAfterItBegan();
};

void TestAdaptersIngress::convertedRequestPassesTheChatParser_data()
{
    QTest::addColumn<QByteArray>("messagesBody");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<int>("messageCount");
    QTest::newRow("text") << R"({"model":"m","max_tokens":5,"system":"Be brief.",)"
                             R"("messages":[{"role":"user","content":"Hi"}]})"_ba
                          << false << 2;
    QTest::newRow("streamed tool result")
        << R"({"model":"m","max_tokens":5,"stream":true,"messages":[)"
           R"({"role":"user","content":"time?"},)"
           R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"now","input":{}}]},)"
           R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"12:00"}]}]})"_ba
        << true << 3;
}

void TestAdaptersIngress::convertedRequestPassesTheChatParser()
{
    QFETCH(QByteArray, messagesBody);
    QFETCH(bool, stream);
    QFETCH(int, messageCount);
    const auto converted = switchyard::ingress::chatRequestFromMessages(messagesBody);
    using switchyard::ingress::MessagesChatRequest;
    QVERIFY(std::holds_alternative<MessagesChatRequest>(converted));
    QVERIFY(std::get<MessagesChatRequest>(converted).ignoredFields.isEmpty());
    QVERIFY(!std::get<MessagesChatRequest>(converted).untranslatable);
    const auto parsed =
        switchyard::protocol::parseChatRequest(std::get<MessagesChatRequest>(converted).chatBody);
    QVERIFY(std::holds_alternative<ChatRequest>(parsed));
    QCOMPARE(std::get<ChatRequest>(parsed).model, u"m"_s);
    QCOMPARE(std::get<ChatRequest>(parsed).stream, stream);
    QCOMPARE(std::get<ChatRequest>(parsed).messageCount, messageCount);
}

void TestAdaptersIngress::refusesInAnthropicsShape()
{
    const auto converted =
        switchyard::ingress::chatRequestFromMessages(R"({"model":"m","messages":{}})");
    QVERIFY(std::holds_alternative<ApiError>(converted));
    const ApiError &error = std::get<ApiError>(converted);
    QCOMPARE(error.status, 400);
    QCOMPARE(MessagesAnswers::errorBody(error),
             R"({"error":{"message":"Invalid type for 'messages': expected an array, but got an )"
             R"(object instead.","type":"invalid_request_error"},"type":"error"})"_ba);
}

void TestAdaptersIngress::wholeAnswer()
{
    const MessagesAnswers ingress;
    const MessagesAnswers::WholeAnswer answer =
        ingress.answer(200, R"({"id":"chatcmpl-1","model":"m","choices":[{"index":0,"message":)"
                            R"({"role":"assistant","content":"Hi"},"finish_reason":"stop"}],)"
                            R"("usage":{"prompt_tokens":3,"completion_tokens":1}})");
    QCOMPARE(answer.status, 200);
    QCOMPARE(answer.body,
             R"({"content":[{"text":"Hi","type":"text"}],"id":"chatcmpl-1","model":"m",)"
             R"("role":"assistant","stop_reason":"end_turn","stop_sequence":null,"type":"message",)"
             R"("usage":{"input_tokens":3,"output_tokens":1}})"_ba);
}

void TestAdaptersIngress::unconvertibleAnswerBecomesAnError()
{
    const MessagesAnswers ingress;
    const MessagesAnswers::WholeAnswer answer = ingress.answer(
        200, R"({"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant",)"
             R"("tool_calls":[{"id":"t","type":"function","function":{"name":"f",)"
             R"("arguments":"nope"}}]},"finish_reason":"tool_calls"}]})");
    QCOMPARE(answer.status, 502);
    QCOMPARE(answer.body,
             R"({"error":{"message":"The provider sent tool call arguments that are not a JSON )"
             R"(object; they cannot be given as Anthropic tool input.","type":"api_error"},)"
             R"("type":"error"})"_ba);
}

void TestAdaptersIngress::streamWireBytes()
{
    MessagesAnswers ingress;
    const QByteArray first = ingress.streamEvents(
        {dataEvent(R"({"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi"},)"
                   R"("finish_reason":null}]})")});
    QCOMPARE(first, "event: message_start\n"
                    R"(data: {"message":{"content":[],"id":"c1","model":"m","role":"assistant",)"
                    R"("stop_reason":null,"stop_sequence":null,"type":"message",)"
                    R"("usage":{"input_tokens":0,"output_tokens":0}},"type":"message_start"})"
                    "\n\n"
                    "event: content_block_start\n"
                    R"(data: {"content_block":{"text":"","type":"text"},"index":0,)"
                    R"("type":"content_block_start"})"
                    "\n\n"
                    "event: content_block_delta\n"
                    R"(data: {"delta":{"text":"Hi","type":"text_delta"},"index":0,)"
                    R"("type":"content_block_delta"})"
                    "\n\n"_ba);
    QVERIFY(!ingress.streamCompleted());
    const QByteArray last = ingress.streamEvents(
        {dataEvent(
             R"({"id":"c1","model":"m","choices":[{"index":0,"delta":{},)"
             R"("finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":1}})"),
         dataEvent("[DONE]")});
    QCOMPARE(last, "event: content_block_stop\n"
                   R"(data: {"index":0,"type":"content_block_stop"})"
                   "\n\n"
                   "event: message_delta\n"
                   R"(data: {"delta":{"stop_reason":"end_turn","stop_sequence":null},"type":)"
                   R"("message_delta","usage":{"input_tokens":4,"output_tokens":1}})"
                   "\n\n"
                   "event: message_stop\n"
                   R"(data: {"type":"message_stop"})"
                   "\n\n"_ba);
    QVERIFY(ingress.streamCompleted());
}

void TestAdaptersIngress::streamFailureAfterItBegan()
{
    MessagesAnswers ingress;
    QVERIFY(
        !ingress.streamEvents({dataEvent(R"({"id":"c1","model":"m","choices":[]})")}).isEmpty());
    const ApiError error{504, u"Provider `p` timed out."_s, u"upstream_error"_s, {}, {}, {}};
    QCOMPARE(ingress.streamError(error),
             "event: error\n"
             R"(data: {"error":{"message":"Provider `p` timed out.","type":"api_error"},)"
             R"("type":"error"})"
             "\n\n"_ba);
    QVERIFY(ingress.streamError(error).isEmpty()); // one error, then nothing
    QVERIFY(!ingress.streamCompleted());
}

QTEST_GUILESS_MAIN(TestAdaptersIngress)
#include "tst_adapters_ingress.moc"
