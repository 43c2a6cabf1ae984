// Header names and values kept as QByteArrays: the common ones over static text, the rest copied,
// every one byte for byte as it came (or lower-cased, for a provider's answer names); and names
// compared, ASCII case aside.

#include "httpwire/header_text.h"
#include "protocol/gateway_headers.h"

#include <QTest>

using switchyard::httpwire::headerText;
using switchyard::httpwire::lowerCaseHeaderName;
using switchyard::protocol::headerValue;
using switchyard::protocol::sameHeaderName;

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
        // Each of five common texts ten bytes long is found, the last of them too.
        QTest::newRow("the fourth of its length") << QByteArray("Connection") << true;
        QTest::newRow("the fifth of its length") << QByteArray("keep-alive") << true;
        QTest::newRow("as long, not common") << QByteArray("keep-alivf") << false;
        QTest::newRow("the shortest") << QByteArray("*/*") << true;
        QTest::newRow("one byte longer than the longest")
            << QByteArray("text/event-stream; charset=utf-8x") << false;
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

    void comparesNamesByAsciiCaseOnly_data()
    {
        QTest::addColumn<QByteArray>("a");
        QTest::addColumn<QByteArray>("b");
        QTest::addColumn<bool>("same");
        QTest::newRow("equal") << QByteArray("content-type") << QByteArray("content-type") << true;
        QTest::newRow("case apart")
            << QByteArray("Content-Type") << QByteArray("cONTENT-tYPE") << true;
        QTest::newRow("another name, as long")
            << QByteArray("content-type") << QByteArray("content-typf") << false;
        QTest::newRow("a prefix") << QByteArray("content") << QByteArray("content-type") << false;
        QTest::newRow("empty, both") << QByteArray() << QByteArray() << true;
        // One bit apart, but not letters: a lower-casing by the bit alone would match these.
        QTest::newRow("@ and `") << QByteArray("x@") << QByteArray("x`") << false;
        QTest::newRow("[ and {") << QByteArray("x[") << QByteArray("x{") << false;
        QTest::newRow("- and \r") << QByteArray("a-b") << QByteArray("a\rb") << false;
        QTest::newRow("digits") << QByteArray("x-1") << QByteArray("X-1") << true;
        QTest::newRow("a byte above ASCII") << QByteArray("x\xc4") << QByteArray("x\xe4") << false;
    }
    void comparesNamesByAsciiCaseOnly()
    {
        QFETCH(QByteArray, a);
        QFETCH(QByteArray, b);
        QFETCH(bool, same);
        QCOMPARE(sameHeaderName(a, b), same);
        QCOMPARE(sameHeaderName(b, a), same);
    }

    void findsTheFirstValueOfAName()
    {
        const switchyard::protocol::HeaderList headers{
            {"X-Team", "search"}, {"x-team", "ads"}, {"Accept", "*/*"}};
        QCOMPARE(headerValue(headers, "x-team"), QByteArray("search"));
        QCOMPARE(headerValue(headers, "ACCEPT"), QByteArray("*/*"));
        QVERIFY(headerValue(headers, "x-tean").isNull());
    }
};

QTEST_GUILESS_MAIN(TestHeaderText)
#include "tst_header_text.moc"
