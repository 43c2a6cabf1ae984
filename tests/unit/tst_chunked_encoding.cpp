// Chunked transfer framing: what the gateway writes for streams, and the decoder that reads it.

#include "httpwire/chunked_encoding.h"

#include <QTest>

using switchyard::httpwire::appendChunk;
using switchyard::httpwire::borrowFramingBuffer;
using switchyard::httpwire::ChunkedDecoder;
using switchyard::httpwire::encodeChunk;
using switchyard::httpwire::giveBackFramingBuffer;
using switchyard::httpwire::kLastChunk;
using switchyard::httpwire::resetFramingBuffer;

class TestChunkedEncoding : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void encodesSizeInHex_data()
    {
        QTest::addColumn<QByteArray>("payload");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("short") << QByteArray("hello") << QByteArray("5\r\nhello\r\n");
        QTest::newRow("sixteen bytes")
            << QByteArray(16, 'a') << QByteArray("10\r\n" + QByteArray(16, 'a') + "\r\n");
        QTest::newRow("sse event")
            << QByteArray("data: [DONE]\n\n") << QByteArray("e\r\ndata: [DONE]\n\n\r\n");
        QTest::newRow("4 KiB") << QByteArray(4096, 'z')
                               << QByteArray("1000\r\n" + QByteArray(4096, 'z') + "\r\n");
        QTest::newRow("one byte") << QByteArray("x") << QByteArray("1\r\nx\r\n");
        QTest::newRow("every hex digit")
            << QByteArray(0xabcde, 'y')
            << QByteArray("abcde\r\n" + QByteArray(0xabcde, 'y') + "\r\n");
    }
    void encodesSizeInHex()
    {
        QFETCH(QByteArray, payload);
        QFETCH(QByteArray, expected);
        QCOMPARE(encodeChunk(payload), expected);
    }

    // Appending keeps what the buffer held: a writer frames several events into one send.
    void appendsAfterWhatIsThere()
    {
        QByteArray out = "HTTP/1.1 200 OK\r\n\r\n";
        appendChunk(out, "abc");
        appendChunk(out, QByteArray(26, 'b'));
        QCOMPARE(out, QByteArray("HTTP/1.1 200 OK\r\n\r\n3\r\nabc\r\n1a\r\n" + QByteArray(26, 'b') +
                                 "\r\n"));
    }

    // A stream's framing buffer keeps a usual event's capacity, and lets a burst's go.
    void framingBufferKeepsOnlyASmallCapacity()
    {
        QByteArray small;
        appendChunk(small, QByteArray(200, 'e'));
        const qsizetype smallCapacity = small.capacity();
        resetFramingBuffer(small);
        QVERIFY(small.isEmpty());
        QCOMPARE(small.capacity(), smallCapacity);

        QByteArray burst;
        appendChunk(burst, QByteArray(64 * 1024, 'b'));
        resetFramingBuffer(burst);
        QVERIFY(burst.isEmpty());
        QCOMPARE(burst.capacity(), 0);
    }

    // A framing buffer given back is lent to the next writer on the thread, emptied; the thread
    // keeps the larger of two, and none a burst grew.
    void framingBuffersAreLentPerThread()
    {
        giveBackFramingBuffer(QByteArray()); // whatever an earlier test left stays the spare
        QByteArray first = borrowFramingBuffer();
        QVERIFY(first.isEmpty());
        QCOMPARE(borrowFramingBuffer().capacity(), 0); // the spare went with `first`

        appendChunk(first, QByteArray(200, 'e'));
        const char *const firstBlock = first.constData();
        const qsizetype firstCapacity = first.capacity();
        giveBackFramingBuffer(std::move(first));
        QByteArray again = borrowFramingBuffer();
        QVERIFY(again.isEmpty());
        QCOMPARE(again.capacity(), firstCapacity);
        QCOMPARE(again.constData(), firstBlock);

        QByteArray smaller;
        smaller.reserve(16);
        giveBackFramingBuffer(std::move(again));
        giveBackFramingBuffer(std::move(smaller));
        QCOMPARE(borrowFramingBuffer().capacity(), firstCapacity);

        QByteArray burst;
        appendChunk(burst, QByteArray(64 * 1024, 'b'));
        giveBackFramingBuffer(std::move(burst));
        QCOMPARE(borrowFramingBuffer().capacity(), 0);
    }

    void lastChunkEndsTheBody() { QCOMPARE(kLastChunk, QByteArrayView("0\r\n\r\n")); }

    // Encoded chunks decode back to the payload whatever the split of the bytes.
    void decodesAnySplit()
    {
        const QByteArray payloadA = "data: {\"x\":1}\n\n";
        const QByteArray payloadB(300, 'q');
        const QByteArray wire =
            encodeChunk(payloadA) + encodeChunk(payloadB) + kLastChunk.toByteArray();
        for (qsizetype cut = 0; cut <= wire.size(); ++cut) {
            ChunkedDecoder decoder;
            QByteArray out;
            QCOMPARE(decoder.feed(QByteArrayView(wire).first(cut), out) ==
                         ChunkedDecoder::Status::Malformed,
                     false);
            QCOMPARE(decoder.feed(QByteArrayView(wire).sliced(cut), out),
                     ChunkedDecoder::Status::Finished);
            QCOMPARE(out, payloadA + payloadB);
        }
    }

    // A byte a read: every framing line is kept and joined across reads, none is lost.
    void decodesOneByteAtATime()
    {
        const QByteArray wire = "1A\r\n" + QByteArray(26, 'u') + "\r\nb\r\n" + QByteArray(11, 'l') +
                                "\r\n0;ext=1\r\nX-T: 1\r\n\r\n";
        ChunkedDecoder decoder;
        QByteArray out;
        for (qsizetype i = 0; i + 1 < wire.size(); ++i)
            QCOMPARE(decoder.feed(QByteArrayView(wire).sliced(i, 1), out),
                     ChunkedDecoder::Status::NeedMore);
        QCOMPARE(decoder.feed(QByteArrayView(wire).last(1), out), ChunkedDecoder::Status::Finished);
        QCOMPARE(out, QByteArray(26, 'u') + QByteArray(11, 'l'));
    }

    void readsSizesInEitherCase()
    {
        ChunkedDecoder decoder;
        QByteArray out;
        const QByteArray wire = "F\r\n" + QByteArray(15, 'a') + "\r\nf\r\n" + QByteArray(15, 'b') +
                                "\r\n000000000000010\r\n" + QByteArray(16, 'c') + "\r\n0\r\n\r\n";
        QCOMPARE(decoder.feed(wire, out), ChunkedDecoder::Status::Finished);
        QCOMPARE(out, QByteArray(15, 'a') + QByteArray(15, 'b') + QByteArray(16, 'c'));
    }

    // A framing line longer than any HTTP one is refused even when it arrives in pieces, each
    // short, and even when its end is in sight.
    void refusesALongLineInPieces()
    {
        const QByteArray line = QByteArray(3000, '0') + ";" + QByteArray(2000, 'x') + "\r\n";
        ChunkedDecoder decoder;
        QByteArray out;
        QCOMPARE(decoder.feed(QByteArrayView(line).first(2500), out),
                 ChunkedDecoder::Status::NeedMore);
        QCOMPARE(decoder.feed(QByteArrayView(line).sliced(2500), out),
                 ChunkedDecoder::Status::Malformed);
        QVERIFY(out.isEmpty());
    }

    void acceptsSpaceBeforeAnExtension()
    {
        ChunkedDecoder decoder;
        QByteArray out;
        QCOMPARE(decoder.feed("5 ;name=value\r\nhello\r\n0\r\n\r\n", out),
                 ChunkedDecoder::Status::Finished);
        QCOMPARE(out, QByteArray("hello"));
    }

    void acceptsExtensionsAndTrailers()
    {
        ChunkedDecoder decoder;
        QByteArray out;
        QCOMPARE(decoder.feed("3;name=value\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n", out),
                 ChunkedDecoder::Status::Finished);
        QCOMPARE(out, QByteArray("abc"));
    }

    void rejectsMalformedFraming_data()
    {
        QTest::addColumn<QByteArray>("wire");
        QTest::newRow("size not hex") << QByteArray("zz\r\nabc\r\n");
        QTest::newRow("missing CRLF after data") << QByteArray("3\r\nabcX\r\n");
        QTest::newRow("endless size line") << QByteArray(5000, '1');
        // Sizes another parser could read as something else, and so end the body elsewhere.
        QTest::newRow("0x prefix") << QByteArray("0x5\r\nhello\r\n0\r\n\r\n");
        QTest::newRow("plus sign") << QByteArray("+5\r\nhello\r\n0\r\n\r\n");
        QTest::newRow("minus zero") << QByteArray("-0\r\n\r\n");
        QTest::newRow("leading space") << QByteArray(" 5\r\nhello\r\n0\r\n\r\n");
        QTest::newRow("empty size") << QByteArray("\r\nhello\r\n");
        QTest::newRow("sixteen hex digits") << QByteArray("0000000000000005\r\nhello\r\n");
    }
    void rejectsMalformedFraming()
    {
        QFETCH(QByteArray, wire);
        ChunkedDecoder decoder;
        QByteArray out;
        QCOMPARE(decoder.feed(wire, out), ChunkedDecoder::Status::Malformed);
    }

    // Bytes after the last chunk belong to the next message on the connection.
    void reportsWhereTheBodyEnds()
    {
        ChunkedDecoder decoder;
        QByteArray out;
        qsizetype consumed = -1;
        const QByteArray body = encodeChunk("abc") + kLastChunk.toByteArray();
        QCOMPARE(decoder.feed(body + "GET / HTTP/1.1\r\n", out, &consumed),
                 ChunkedDecoder::Status::Finished);
        QCOMPARE(consumed, body.size());
        QCOMPARE(out, QByteArray("abc"));
    }

    void unfinishedStreamNeedsMore()
    {
        ChunkedDecoder decoder;
        QByteArray out;
        QCOMPARE(decoder.feed(encodeChunk("abc"), out), ChunkedDecoder::Status::NeedMore);
        QCOMPARE(out, QByteArray("abc"));
    }
};

QTEST_GUILESS_MAIN(TestChunkedEncoding)
#include "tst_chunked_encoding.moc"
