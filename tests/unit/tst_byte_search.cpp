// findBytes and containsBytes: the hot path's searches for a key in an event or an answer
// (protocol/byte_search.h), against what QByteArrayView::indexOf finds, at the edges.
#include "protocol/byte_search.h"

#include <QTest>

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
};

QTEST_APPLESS_MAIN(ByteSearchTest)
#include "tst_byte_search.moc"
