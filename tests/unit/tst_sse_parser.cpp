// The SSE parser must produce the same events however the network splits the bytes.

#include "upstream/sse_parser.h"

#include <QTest>

using switchyard::upstream::SseEvent;
using switchyard::upstream::SseParser;

namespace {

QList<SseEvent> parseInPieces(const QByteArray &stream, const QList<qsizetype> &cuts)
{
    SseParser parser;
    QList<SseEvent> events;
    qsizetype start = 0;
    for (qsizetype cut : cuts) {
        parser.feed(QByteArrayView(stream).sliced(start, cut - start), events);
        start = cut;
    }
    parser.feed(QByteArrayView(stream).sliced(start), events);
    return events;
}

QByteArray describe(const QList<SseEvent> &events)
{
    QByteArray text;
    for (const SseEvent &event : events)
        text += "[" + event.event + "|" + event.id + "|" + event.data + "]";
    return text;
}

} // namespace

class TestSseParser : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void parsesEvents_data()
    {
        QTest::addColumn<QByteArray>("stream");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("one event")
            << QByteArray("data: {\"a\":1}\n\n") << QByteArray("[||{\"a\":1}]");
        QTest::newRow("two events and done") << QByteArray("data: a\n\ndata: b\n\ndata: [DONE]\n\n")
                                             << QByteArray("[||a][||b][||[DONE]]");
        QTest::newRow("crlf line endings")
            << QByteArray("data: a\r\n\r\ndata: b\r\n\r\n") << QByteArray("[||a][||b]");
        QTest::newRow("cr only line endings")
            << QByteArray("data: a\r\rdata: b\r\r") << QByteArray("[||a][||b]");
        QTest::newRow("multi-line data joined with newline")
            << QByteArray("data: line1\ndata: line2\n\n") << QByteArray("[||line1\nline2]");
        QTest::newRow("event name and id") << QByteArray("event: message_start\nid: 7\ndata: x\n\n")
                                           << QByteArray("[message_start|7|x]");
        QTest::newRow("comments are skipped")
            << QByteArray(": keep-alive\n\ndata: x\n\n") << QByteArray("[||x]");
        QTest::newRow("no space after colon") << QByteArray("data:x\n\n") << QByteArray("[||x]");
        QTest::newRow("only the first space is stripped")
            << QByteArray("data:  x\n\n") << QByteArray("[|| x]");
        QTest::newRow("event without data is not dispatched")
            << QByteArray("event: ping\n\ndata: y\n\n") << QByteArray("[||y]");
        QTest::newRow("a lone cr ends a line before the next lf")
            << QByteArray("data: a\rdata: b\n\n") << QByteArray("[||a\nb]");
        QTest::newRow("an empty data line is an event")
            << QByteArray("data:\n\ndata: c\n\n") << QByteArray("[||][||c]");
        QTest::newRow("unterminated last event is held back")
            << QByteArray("data: a\n\ndata: b\n") << QByteArray("[||a]");
    }

    void parsesEvents()
    {
        QFETCH(QByteArray, stream);
        QFETCH(QByteArray, expected);
        QCOMPARE(describe(parseInPieces(stream, {})), expected);
    }

    // Every possible split into two and three pieces yields identical events.
    void anySplitGivesTheSameEvents_data() { parsesEvents_data(); }
    void anySplitGivesTheSameEvents()
    {
        QFETCH(QByteArray, stream);
        QFETCH(QByteArray, expected);
        for (qsizetype first = 0; first <= stream.size(); ++first) {
            QCOMPARE(describe(parseInPieces(stream, {first})), expected);
            for (qsizetype second = first; second <= stream.size(); ++second)
                QCOMPARE(describe(parseInPieces(stream, {first, second})), expected);
        }
    }

    void byteByByteFeeding()
    {
        const QByteArray stream =
            "data: {\"choices\":[]}\r\n\r\n: ping\r\n\r\ndata: [DONE]\r\n\r\n";
        SseParser parser;
        QList<SseEvent> events;
        for (char byte : stream)
            parser.feed(QByteArrayView(&byte, 1), events);
        QCOMPARE(describe(events), QByteArray("[||{\"choices\":[]}][||[DONE]]"));
        QVERIFY(events.last().isDone());
        QVERIFY(!parser.hasPartialEvent());
    }

    void partialEventIsReported()
    {
        SseParser parser;
        QList<SseEvent> events;
        parser.feed("data: {\"cho", events);
        QVERIFY(events.isEmpty());
        QVERIFY(parser.hasPartialEvent());
        parser.feed("ices\":1}\n", events);
        QVERIFY(parser.hasPartialEvent()); // a field, but no blank line yet
        parser.feed("\n", events);
        QVERIFY(!parser.hasPartialEvent());
        QCOMPARE(events.size(), 1);
    }

    void overlongLineIsRefused()
    {
        SseParser parser;
        QList<SseEvent> events;
        const QByteArray huge(SseParser::kMaxLineBytes + 1, 'x');
        QVERIFY(!parser.feed("data: " + huge, events));
        QVERIFY(!parser.feed("\n\n", events));
        QVERIFY(events.isEmpty());
    }

    void toWireRoundTrips()
    {
        SseEvent event;
        event.event = "delta";
        event.id = "3";
        event.data = "first\nsecond";
        QCOMPARE(event.toWire(), QByteArray("event: delta\nid: 3\ndata: first\ndata: second\n\n"));
        QCOMPARE(describe(parseInPieces(event.toWire(), {})),
                 QByteArray("[delta|3|first\nsecond]"));
    }
};

QTEST_GUILESS_MAIN(TestSseParser)
#include "tst_sse_parser.moc"
