// findBytes and containsBytes: the hot path's searches for a key in an event or an answer
// (protocol/byte_search.h), against what QByteArrayView::indexOf finds, at the edges; and
// appendPieces (protocol/byte_append.h), the relay's framing, against QByteArray::append.
#include "protocol/byte_append.h"
#include "protocol/byte_search.h"

#include <QTest>
#include <random>

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

    // Texts of every length from 0 to 300 over a three-letter alphabet, so that partial and
    // whole matches are everywhere: at the sixteen-byte blocks' edges, straddling them, in the
    // last few positions, and from every kind of start.
    void findsWhatIndexOfFindsInRandomTexts()
    {
        std::mt19937 random(37); // fixed: a failure is reproduced by running again
        const auto pick = [&random](int size) {
            QByteArray text(size, Qt::Uninitialized);
            for (char &c : text)
                c = "abc"[random() % 3];
            return text;
        };
        for (int size = 0; size <= 300; ++size) {
            const QByteArray text = pick(size);
            for (int round = 0; round < 20; ++round) {
                const int length = 1 + int(random() % 20);
                // Half the needles are taken from the text, so most of them are found.
                const QByteArray needle =
                    round % 2 == 0 && length <= size
                        ? text.mid(int(random() % (size - length + 1)), length)
                        : pick(length);
                const qsizetype from = size == 0 ? 0 : qsizetype(random() % (size + 1));
                QCOMPARE(findBytes(text, needle, from), QByteArrayView(text).indexOf(needle, from));
            }
        }
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
