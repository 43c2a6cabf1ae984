// appendDecimal, appendOneDecimal and decimalDigits: the hot path's numbers written in place, for
// both kinds of text, at the edges of a qint64 and as QString::number writes a duration with one
// decimal (protocol/decimal_text.h).
#include "protocol/decimal_text.h"

#include <QTest>
#include <array>
#include <limits>

using switchyard::protocol::appendDecimal;
using switchyard::protocol::appendOneDecimal;
using switchyard::protocol::decimalDigits;
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
        if (value >= 0) {
            std::array<char, 20> buffer{};
            QCOMPARE(decimalDigits(buffer, quint64(value)).toByteArray(),
                     QByteArray::number(value));
        }
    }

    void writesOneDecimalAsNumberDoes_data()
    {
        QTest::addColumn<double>("value");
        QTest::newRow("zero") << 0.0;
        QTest::newRow("whole") << 236.0;
        QTest::newRow("a first token") << 410.62;
        QTest::newRow("rounds up") << 0.96;
        QTest::newRow("rounds up to a whole") << 9.97;
        QTest::newRow("below a tenth") << 0.04;
        QTest::newRow("long") << 86399999.9;
        QTest::newRow("negative") << -3.25;
        QTest::newRow("negative below one") << -0.5;
    }

    void writesOneDecimalAsNumberDoes()
    {
        QFETCH(double, value);
        QString text = u"after "_s;
        QCOMPARE(appendOneDecimal(text, value), u"after "_s + QString::number(value, 'f', 1));
        QByteArray bytes = "after ";
        QCOMPARE(appendOneDecimal(bytes, value), "after " + QByteArray::number(value, 'f', 1));
    }
};

QTEST_APPLESS_MAIN(DecimalTextTest)
#include "tst_decimal_text.moc"
