// Which stream events only open an answer: held by an attempt until its first content, so that a
// provider failing right after them still fails over (execution/opening_events.h).
#include "execution/opening_events.h"

#include <QTest>

using namespace Qt::StringLiterals;
using switchyard::execution::carriesChatText;
using switchyard::execution::isOpeningEvent;
using switchyard::upstream::SseEvent;

class OpeningEventsTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void classifies_data();
    void classifies();
    void findsChatTextWithoutParsing_data();
    void findsChatTextWithoutParsing();
    void chatTextFoundOnlyWhereNothingOpens_data() { classifies_data(); }
    void chatTextFoundOnlyWhereNothingOpens();
};

void OpeningEventsTest::classifies_data()
{
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<bool>("opening");

    // Chat chunks, as every chat client receives them.
    QTest::newRow("role only") << QByteArray()
                               << R"({"choices":[{"index":0,"delta":{"role":"assistant"},)"
                                  R"("finish_reason":null}]})"_ba
                               << true;
    QTest::newRow("role and empty content")
        << QByteArray()
        << R"({"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})"_ba << true;
    QTest::newRow("content") << QByteArray()
                             << R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})"_ba << false;
    QTest::newRow("role and content")
        << QByteArray()
        << R"({"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]})"_ba << false;
    QTest::newRow("content written with spaces")
        << QByteArray() << R"({"choices": [{"index": 0, "delta": {"content": "Hi"}}]})"_ba << false;
    QTest::newRow("content starting with an escaped quote")
        << QByteArray() << R"({"choices":[{"delta":{"content":"\"Hi\""}}]})"_ba << false;
    QTest::newRow("content in a second choice")
        << QByteArray()
        << R"({"choices":[{"index":0,"delta":{"content":""}},{"index":1,"delta":{"content":"Hi"}}]})"_ba
        << false;
    QTest::newRow("tool call") << QByteArray()
                               << R"({"choices":[{"index":0,"delta":{"role":"assistant",)"
                                  R"("tool_calls":[{"index":0,"id":"call_1"}]}}]})"_ba
                               << false;
    QTest::newRow("finish reason alone")
        << QByteArray() << R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"_ba
        << false;
    QTest::newRow("usage chunk") << QByteArray()
                                 << R"({"choices":[],"usage":{"total_tokens":3}})"_ba << false;
    QTest::newRow("azure prompt filter results")
        << QByteArray()
        << R"({"id":"","choices":[],"created":0,"model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]})"_ba
        << true;
    QTest::newRow("done") << QByteArray() << "[DONE]"_ba << false;
    QTest::newRow("usage null") << QByteArray()
                                << R"({"choices":[{"delta":{"role":"assistant"}}],"usage":null})"_ba
                                << true;
    QTest::newRow("content null")
        << QByteArray() << R"({"choices":[{"delta":{"role":"assistant","content":null}}]})"_ba
        << true;
    QTest::newRow("refusal") << QByteArray()
                             << R"({"choices":[{"delta":{"role":"assistant","refusal":"No"}}]})"_ba
                             << false;
    QTest::newRow("choices not an array") << QByteArray() << R"({"choices":{}})"_ba << false;
    QTest::newRow("not JSON") << QByteArray() << "{\"choices\":["_ba << false;
    QTest::newRow("not an object") << QByteArray() << "[1, 2]"_ba << false;

    // Anthropic's Messages events, passed through.
    QTest::newRow("message_start") << "message_start"_ba
                                   << R"({"type":"message_start","message":{"id":"m"}})"_ba << true;
    QTest::newRow("ping") << "ping"_ba
                          << R"({"type":"ping"})"_ba << true;
    QTest::newRow("empty text block")
        << "content_block_start"_ba
        << R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"_ba
        << true;
    QTest::newRow("tool use block")
        << "content_block_start"_ba
        << R"({"type":"content_block_start","index":0,"content_block":{"type":"tool_use",)"
           R"("id":"t","name":"f","input":{}}})"_ba
        << false;
    QTest::newRow("text delta") << "content_block_delta"_ba
                                << R"({"type":"content_block_delta","index":0,)"
                                   R"("delta":{"type":"text_delta","text":"Hi"}})"_ba
                                << false;
    QTest::newRow("ping whatever its data") << "ping"_ba
                                            << "not json"_ba << true;
    QTest::newRow("block start not JSON") << "content_block_start"_ba
                                          << "{"_ba << false;
    QTest::newRow("stream error") << "error"_ba
                                  << R"({"type":"error","error":{"type":"overloaded_error"}})"_ba
                                  << false;

    // The Responses API's events, passed through; with their event line or their type alone.
    QTest::newRow("response.created") << "response.created"_ba
                                      << R"({"type":"response.created","response":{}})"_ba << true;
    QTest::newRow("response.in_progress by type")
        << QByteArray() << R"({"type":"response.in_progress","response":{}})"_ba << true;
    QTest::newRow("empty message item")
        << "response.output_item.added"_ba
        << R"({"type":"response.output_item.added","item":{"type":"message","content":[]}})"_ba
        << true;
    QTest::newRow("function call item")
        << "response.output_item.added"_ba
        << R"({"type":"response.output_item.added","item":{"type":"function_call",)"
           R"("name":"f"}})"_ba
        << false;
    QTest::newRow("empty text part")
        << "response.content_part.added"_ba
        << R"({"type":"response.content_part.added","part":{"type":"output_text","text":""}})"_ba
        << true;
    QTest::newRow("message item without content")
        << QByteArray() << R"({"type":"response.output_item.added","item":{"type":"message"}})"_ba
        << true;
    QTest::newRow("message item with content")
        << QByteArray()
        << R"({"type":"response.output_item.added","item":{"type":"message","content":[{}]}})"_ba
        << false;
    QTest::newRow("output text delta")
        << "response.output_text.delta"_ba
        << R"({"type":"response.output_text.delta","delta":"Hi"})"_ba << false;
}

void OpeningEventsTest::classifies()
{
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, data);
    QFETCH(bool, opening);
    SseEvent sse;
    sse.event = event;
    sse.data = data;
    QCOMPARE(isOpeningEvent(sse), opening);
}

void OpeningEventsTest::findsChatTextWithoutParsing_data()
{
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<bool>("text");
    QTest::newRow("content") << R"({"choices":[{"delta":{"content":"Hi"}}]})"_ba << true;
    QTest::newRow("after a space") << R"({"choices": [{"delta": {"content": "Hi"}}]})"_ba << true;
    QTest::newRow("empty") << R"({"choices":[{"delta":{"content":""}}]})"_ba << false;
    QTest::newRow("empty after a space")
        << R"({"choices":[{"delta":{"content": ""}}]})"_ba << false;
    QTest::newRow("null") << R"({"choices":[{"delta":{"content":null}}]})"_ba << false;
    QTest::newRow("role only") << R"({"choices":[{"delta":{"role":"assistant"}}]})"_ba << false;
    QTest::newRow("the word inside a text")
        << R"({"choices":[{"delta":{"reasoning":"say \"content\":\"x\""}}]})"_ba << false;
    QTest::newRow("no choices") << R"({"type":"message","content":"Hi"})"_ba << false;
    QTest::newRow("cut after the key") << R"({"choices":[{"delta":{"content":)"_ba << false;
    QTest::newRow("cut after the quote") << R"({"choices":[{"delta":{"content":")"_ba << false;
    QTest::newRow("empty data") << QByteArray() << false;
}

void OpeningEventsTest::findsChatTextWithoutParsing()
{
    QFETCH(QByteArray, data);
    QFETCH(bool, text);
    QCOMPARE(carriesChatText(data), text);
}

// The shortcut never decides otherwise than the parse: every event it finds text in is one the
// table says opens nothing.
void OpeningEventsTest::chatTextFoundOnlyWhereNothingOpens()
{
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, data);
    QFETCH(bool, opening);
    if (event.isEmpty() && carriesChatText(data))
        QVERIFY(!opening);
}

QTEST_MAIN(OpeningEventsTest)
#include "tst_opening_events.moc"
