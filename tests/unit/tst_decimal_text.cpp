// appendDecimal: the hot path's numbers written in place, for both kinds of text, at the edges
// of a qint64 (protocol/decimal_text.h).
#include "protocol/decimal_text.h"

#include <QTest>
#include <limits>

using switchyard::protocol::appendDecimal;
using namespace Qt::StringLiterals;

class DecimalTextTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void writesWhatNumberWrites_data()
    {
        QTest::addColumn<qint64>("value");
        QTest::newRow("zero") << qint64(0);
        QTest::newRow("one digit") << qint64(7);
        QTest::newRow("a status") << qint64(503);
        QTest::newRow("negative") << qint64(-1);
        QTest::newRow("a length") << qint64(1234567890123);
        QTest::newRow("largest") << std::numeric_limits<qint64>::max();
        QTest::newRow("smallest") << std::numeric_limits<qint64>::min();
    }

    void writesWhatNumberWrites()
    {
        QFETCH(qint64, value);
        QString text = u"n="_s;
        QCOMPARE(appendDecimal(text, value), u"n="_s + QString::number(value));
        QByteArray bytes = "n=";
        QCOMPARE(appendDecimal(bytes, value), "n=" + QByteArray::number(value));
    }
};

QTEST_APPLESS_MAIN(DecimalTextTest)
#include "tst_decimal_text.moc"
