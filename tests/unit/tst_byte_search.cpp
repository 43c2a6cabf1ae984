// findBytes and containsBytes: the hot path's searches for a key in an event or an answer
// (protocol/byte_search.h), against what QByteArrayView::indexOf finds, at the edges; and
// appendPieces (protocol/byte_append.h), the relay's framing, against QByteArray::append.
#include "protocol/byte_append.h"
#include "protocol/byte_search.h"

#include <QTest>

using switchyard::protocol::appendPieces;
using switchyard::protocol::containsBytes;
using switchyard::protocol::findBytes;

class ByteSearchTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void findsWhatIndexOfFinds_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("needle");
        QTest::addColumn<qsizetype>("from");
        const QByteArray event = R"({"choices":[{"delta":{"content":"hi"}}],"usage":null})";
        QTest::newRow("a key") << event << QByteArray(R"("usage")") << qsizetype(0);
        QTest::newRow("from past it") << event << QByteArray(R"("choices")") << qsizetype(1);
        QTest::newRow("at the very end") << event << QByteArray("null})") << qsizetype(0);
        QTest::newRow("at the very start") << event << QByteArray(R"({"choices")") << qsizetype(0);
        QTest::newRow("absent") << event << QByteArray(R"("finish_reason":)") << qsizetype(0);
        QTest::newRow("one byte") << event << QByteArray(":") << qsizetype(10);
        QTest::newRow("longer than the text")
            << QByteArray("ab") << QByteArray("abc") << qsizetype(0);
        QTest::newRow("empty text") << QByteArray() << QByteArray("a") << qsizetype(0);
        QTest::newRow("empty needle") << event << QByteArray() << qsizetype(3);
        QTest::newRow("from the end") << event << QByteArray("}") << qsizetype(event.size());
        QTest::newRow("over 500 bytes")
            << QByteArray(600, 'a') + "needle" << QByteArray("needle") << qsizetype(0);
        QTest::newRow("a partial match first")
            << QByteArray("\"usag\"usage\"") << QByteArray("usage") << qsizetype(0);
    }

    void findsWhatIndexOfFinds()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, needle);
        QFETCH(qsizetype, from);
        const qsizetype expected = QByteArrayView(text).indexOf(needle, from);
        QCOMPARE(findBytes(text, needle, from), expected);
        if (from == 0)
            QCOMPARE(containsBytes(text, needle), expected >= 0);
    }

    void aStartOutsideTheTextFindsNothing()
    {
        QCOMPARE(findBytes("abc", "c", -1), qsizetype(-1));
        QCOMPARE(findBytes("abc", "c", 4), qsizetype(-1));
        QCOMPARE(findBytes("abc", "", 4), qsizetype(-1));
    }

    // Pieces of every kind (empty, null, one byte, longer than the capacity) land in order after
    // what was there, whether the array starts null, shared or with room to spare.
    void appendsWhatAppendAppends_data()
    {
        QTest::addColumn<QByteArray>("start");
        QByteArray roomy;
        roomy.reserve(8000);
        roomy.append("x");
        QTest::newRow("null") << QByteArray();
        QTest::newRow("with text") << QByteArray("head: ");
        QTest::newRow("with room") << roomy;
    }

    void appendsWhatAppendAppends()
    {
        QFETCH(QByteArray, start);
        const QByteArray longer(5000, 'L');
        QByteArray expected = start;
        expected.append("ab").append(QByteArray()).append(QByteArrayView()).append('c');
        expected.append(longer).append("\r\n");
        const QByteArray shared = start; // appendPieces detaches: the copy is untouched
        QByteArray out = start;
        QByteArray &returned =
            appendPieces(out, {"ab", QByteArray(), QByteArrayView(), "c", longer, "\r\n"});
        QCOMPARE(&returned, &out);
        QCOMPARE(out, expected);
        QCOMPARE(out.constData()[out.size()], '\0');
        QCOMPARE(shared, start);
    }

    // Appended to again and again, the array grows geometrically, not by each piece's size.
    void growsGeometrically()
    {
        QByteArray out;
        int reallocations = 0;
        const char *data = nullptr;
        for (int i = 0; i < 10000; ++i) {
            appendPieces(out, {"data: ", "x", "\n"});
            if (out.constData() != data) {
                ++reallocations;
                data = out.constData();
            }
        }
        QCOMPARE(out.size(), 80000);
        QVERIFY2(reallocations < 40, QByteArray::number(reallocations).constData());
    }
};

QTEST_APPLESS_MAIN(ByteSearchTest)
#include "tst_byte_search.moc"
