// Header names and values kept as QByteArrays: the common ones over static text, the rest copied,
// every one byte for byte as it came (or lower-cased, for a provider's answer names).

#include "httpwire/header_text.h"

#include <QTest>

using switchyard::httpwire::headerText;
using switchyard::httpwire::lowerCaseHeaderName;

namespace {
// Static text has no heap block, so no capacity; a copy of a non-empty text has one.
bool onStaticText(const QByteArray &text)
{
    return !text.isEmpty() && text.capacity() == 0;
}
} // namespace

class TestHeaderText : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void keepsTheTextAsItCame_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("common");
        QTest::newRow("a lower-case name") << QByteArray("content-type") << true;
        QTest::newRow("a capitalised name") << QByteArray("Content-Type") << true;
        QTest::newRow("another spelling") << QByteArray("CONTENT-TYPE") << false;
        QTest::newRow("a common value") << QByteArray("application/json") << true;
        QTest::newRow("a value with its charset")
            << QByteArray("text/event-stream; charset=utf-8") << true;
        QTest::newRow("a prefix of a common text") << QByteArray("application/js") << false;
        QTest::newRow("a credential") << QByteArray("Bearer sk-secret") << false;
        QTest::newRow("empty") << QByteArray() << false;
    }
    void keepsTheTextAsItCame()
    {
        QFETCH(QByteArray, text);
        QFETCH(bool, common);
        const QByteArray kept = headerText(text);
        QCOMPARE(kept, text);
        if (!text.isEmpty())
            QCOMPARE(onStaticText(kept), common);
    }

    void aCommonTextStaysUsable()
    {
        // Static text detaches when written to, like any shared QByteArray.
        QByteArray kept = headerText("keep-alive");
        QVERIFY(onStaticText(kept));
        kept.append(", close");
        QCOMPARE(kept, QByteArray("keep-alive, close"));
        QCOMPARE(headerText("keep-alive"), QByteArray("keep-alive"));
    }

    void lowerCasesNames_data()
    {
        QTest::addColumn<QByteArray>("name");
        QTest::addColumn<QByteArray>("lowered");
        QTest::addColumn<bool>("common");
        QTest::newRow("common, capitalised")
            << QByteArray("Content-Length") << QByteArray("content-length") << true;
        QTest::newRow("common, upper case") << QByteArray("DATE") << QByteArray("date") << true;
        QTest::newRow("uncommon") << QByteArray("X-RateLimit-Remaining-Tokens")
                                  << QByteArray("x-ratelimit-remaining-tokens") << false;
        QTest::newRow("longer than any common name")
            << QByteArray("X-Provider-Specific-Header-With-A-Long-Name")
            << QByteArray("x-provider-specific-header-with-a-long-name") << false;
        QTest::newRow("digits and dashes kept")
            << QByteArray("X-1-2") << QByteArray("x-1-2") << false;
    }
    void lowerCasesNames()
    {
        QFETCH(QByteArray, name);
        QFETCH(QByteArray, lowered);
        QFETCH(bool, common);
        const QByteArray kept = lowerCaseHeaderName(name);
        QCOMPARE(kept, lowered);
        QCOMPARE(onStaticText(kept), common);
    }
};

QTEST_GUILESS_MAIN(TestHeaderText)
#include "tst_header_text.moc"
