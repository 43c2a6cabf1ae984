// Reading a request's head: the request line, the headers, and how the body is framed. What is
// refused here is what a proxy in front could read differently.

#include "http/request_head.h"

#include <QTest>
#include <optional>

using switchyard::http::parseRequestHead;
using switchyard::http::RequestHead;
using Method = QHttpServerRequest::Method;

namespace {

// The head, or nothing (and why, in the test's log) when it was refused.
std::optional<RequestHead> parsed(QByteArrayView block)
{
    auto result = parseRequestHead(block);
    if (const auto *error = std::get_if<switchyard::protocol::ApiError>(&result)) {
        qWarning("refused: %s", qPrintable(error->message));
        return std::nullopt;
    }
    return std::get<RequestHead>(std::move(result));
}

} // namespace

class TestRequestHead : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsARequestLineAndHeaders()
    {
        const auto head = parsed("POST /v1/chat/completions HTTP/1.1\r\n"
                                 "Host: 127.0.0.1:8080\r\n"
                                 "Content-Type:application/json\r\n"
                                 "X-Request-Id:   abc  \r\n"
                                 "Content-Length: 42");
        QVERIFY(head);
        QCOMPARE(head->request.method, Method::Post);
        QCOMPARE(head->request.path, QStringLiteral("/v1/chat/completions"));
        QVERIFY(head->request.query.isEmpty());
        const QList<QPair<QByteArray, QByteArray>> expected = {
            {"Host", "127.0.0.1:8080"},
            {"Content-Type", "application/json"},
            {"X-Request-Id", "abc"},
            {"Content-Length", "42"},
        };
        QCOMPARE(head->request.headers, expected);
        QCOMPARE(head->contentLength, 42);
        QVERIFY(!head->chunked);
        QVERIFY(!head->expectsContinue);
        QVERIFY(!head->request.closeAfterAnswer);
        QVERIFY(!head->request.http10);
    }

    void bareLineFeedsAreLineEnds()
    {
        const auto head = parsed("GET /healthz HTTP/1.1\nHost: x\nAccept: */*");
        QVERIFY(head);
        QCOMPARE(head->request.method, Method::Get);
        QCOMPARE(head->request.path, QStringLiteral("/healthz"));
        QCOMPARE(head->request.headers.size(), 2);
        QCOMPARE(head->request.headers.at(1).second, QByteArray("*/*"));
    }

    void targetsAreShownAsQtShowedThem_data()
    {
        QTest::addColumn<QByteArray>("target");
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("query");
        QTest::newRow("plain") << QByteArray("/v1/models") << u"/v1/models"_qs << QString();
        QTest::newRow("query") << QByteArray("/admin/v1/traces?limit=5&outcome=ok")
                               << u"/admin/v1/traces"_qs << u"limit=5&outcome=ok"_qs;
        QTest::newRow("percent-encoded path") << QByteArray("/v1/models/gpt%2D4o%20mini")
                                              << u"/v1/models/gpt-4o mini"_qs << QString();
        QTest::newRow("absolute form") << QByteArray("http://gateway.example:8080/v1/models?x=1")
                                       << u"/v1/models"_qs << u"x=1"_qs;
        QTest::newRow("a fragment is dropped")
            << QByteArray("/v1/models#top") << u"/v1/models"_qs << QString();
        QTest::newRow("asterisk") << QByteArray("*") << u"*"_qs << QString();
    }
    void targetsAreShownAsQtShowedThem()
    {
        QFETCH(QByteArray, target);
        QFETCH(QString, path);
        QFETCH(QString, query);
        const auto head = parsed("OPTIONS " + target + " HTTP/1.1\r\nHost: x");
        QVERIFY(head);
        QCOMPARE(head->request.method, Method::Options);
        QCOMPARE(head->request.path, path);
        QCOMPARE(head->request.query, query);
    }

    void unknownMethodsAreKeptAsUnknown()
    {
        const auto head = parsed("BREW /pot HTTP/1.1\r\nHost: x");
        QVERIFY(head);
        QCOMPARE(head->request.method, Method::Unknown);
        QCOMPARE(head->request.path, QStringLiteral("/pot"));
    }

    void chunkedFramingIsReadAlone()
    {
        const auto head = parsed("POST /v1/embeddings HTTP/1.1\r\n"
                                 "Transfer-Encoding: Chunked\r\n"
                                 "Expect: 100-Continue");
        QVERIFY(head);
        QVERIFY(head->chunked);
        QCOMPARE(head->contentLength, 0);
        QVERIFY(head->expectsContinue);
    }

    void twoEqualLengthsAreOne()
    {
        const auto head = parsed("POST / HTTP/1.1\r\nContent-Length: 7\r\ncontent-length: 7");
        QVERIFY(head);
        QCOMPARE(head->contentLength, 7);
    }

    void connectionCloseFollowsTheVersion_data()
    {
        QTest::addColumn<QByteArray>("block");
        QTest::addColumn<bool>("closes");
        QTest::newRow("1.1") << QByteArray("GET / HTTP/1.1\r\nHost: x") << false;
        QTest::newRow("1.1 close") << QByteArray("GET / HTTP/1.1\r\nConnection: Close") << true;
        QTest::newRow("1.1 close among options")
            << QByteArray("GET / HTTP/1.1\r\nConnection: te\r\nConnection: foo, close") << true;
        QTest::newRow("1.0") << QByteArray("GET / HTTP/1.0\r\nHost: x") << true;
        QTest::newRow("1.0 keep-alive")
            << QByteArray("GET / HTTP/1.0\r\nConnection: keep-alive") << false;
        QTest::newRow("1.1 close with an empty option")
            << QByteArray("GET / HTTP/1.1\r\nConnection: ,close,") << true;
        QTest::newRow("1.1 an option that only starts like close")
            << QByteArray("GET / HTTP/1.1\r\nConnection: closed, te") << false;
        QTest::newRow("1.0 keep-alive among spaced options")
            << QByteArray("GET / HTTP/1.0\r\nConnection: Upgrade ,  Keep-Alive ") << false;
        QTest::newRow("1.0 no option") << QByteArray("GET / HTTP/1.0\r\nConnection: ") << true;
    }
    void connectionCloseFollowsTheVersion()
    {
        QFETCH(QByteArray, block);
        QFETCH(bool, closes);
        const auto head = parsed(block);
        QVERIFY(head);
        QCOMPARE(head->request.closeAfterAnswer, closes);
        QCOMPARE(head->request.http10, block.contains("HTTP/1.0"));
    }

    void malformedHeadsAreRefused_data()
    {
        QTest::addColumn<QByteArray>("block");
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("code");
        const QString requestLine = u"invalid_request_line"_qs;
        const QString header = u"invalid_header"_qs;
        const QString length = u"invalid_content_length"_qs;
        QTest::newRow("no target") << QByteArray("GET HTTP/1.1") << 400 << requestLine;
        QTest::newRow("TLS hello on the plain port")
            << QByteArray("\x16\x03\x01\x02\x00 hello world", 17) << 400 << requestLine;
        QTest::newRow("relative target")
            << QByteArray("GET v1/models HTTP/1.1") << 400 << requestLine;
        QTest::newRow("space in the target")
            << QByteArray("GET /a b HTTP/1.1") << 400 << requestLine;
        QTest::newRow("control character in the target")
            << QByteArray("GET /a\x01 HTTP/1.1") << 400 << requestLine;
        QTest::newRow("other scheme") << QByteArray("GET ftp://x/ HTTP/1.1") << 400 << requestLine;
        QTest::newRow("lower-case version") << QByteArray("GET / http/1.1") << 400 << requestLine;
        QTest::newRow("HTTP/2 preface")
            << QByteArray("PRI * HTTP/2.0") << 505 << u"http_version_not_supported"_qs;
        QTest::newRow("HTTP/1.9") << QByteArray("GET / HTTP/1.9") << 505
                                  << u"http_version_not_supported"_qs;
        QTest::newRow("header without colon")
            << QByteArray("GET / HTTP/1.1\r\nHost x") << 400 << header;
        QTest::newRow("space before colon")
            << QByteArray("GET / HTTP/1.1\r\nContent-Length : 5") << 400 << header;
        QTest::newRow("folded header")
            << QByteArray("GET / HTTP/1.1\r\nX-A: 1\r\n  continued") << 400 << header;
        QTest::newRow("bare CR in a value")
            << QByteArray("GET / HTTP/1.1\r\nX-A: a\rTransfer-Encoding: chunked") << 400 << header;
        QTest::newRow("NUL in a value")
            << QByteArray("GET / HTTP/1.1\r\nX-A: a\x00z", 24) << 400 << header;
        QTest::newRow("length not a number")
            << QByteArray("POST / HTTP/1.1\r\nContent-Length: 12abc") << 400 << length;
        QTest::newRow("length with a sign")
            << QByteArray("POST / HTTP/1.1\r\nContent-Length: +5") << 400 << length;
        QTest::newRow("negative length")
            << QByteArray("POST / HTTP/1.1\r\nContent-Length: -1") << 400 << length;
        QTest::newRow("length with a space inside")
            << QByteArray("POST / HTTP/1.1\r\nContent-Length: 1 2") << 400 << length;
        QTest::newRow("two lengths that disagree")
            << QByteArray("POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6") << 400
            << length;
        QTest::newRow("chunked beside a length")
            << QByteArray("POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked")
            << 400 << u"invalid_transfer_encoding"_qs;
        QTest::newRow("chunked in HTTP/1.0")
            << QByteArray("POST / HTTP/1.0\r\nTransfer-Encoding: chunked") << 400
            << u"invalid_transfer_encoding"_qs;
        QTest::newRow("a coding that only contains chunked")
            << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: xchunked") << 501
            << u"unsupported_transfer_encoding"_qs;
        QTest::newRow("chunked, then another header's coding")
            << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n"
                          "Transfer-Encoding: identity")
            << 501 << u"unsupported_transfer_encoding"_qs;
        QTest::newRow("gzip before chunked")
            << QByteArray("POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked") << 501
            << u"unsupported_transfer_encoding"_qs;
    }
    void malformedHeadsAreRefused()
    {
        QFETCH(QByteArray, block);
        QFETCH(int, status);
        QFETCH(QString, code);
        const auto result = parseRequestHead(block);
        const auto *error = std::get_if<switchyard::protocol::ApiError>(&result);
        QVERIFY(error);
        QCOMPARE(error->status, status);
        QCOMPARE(error->code, code);
        QVERIFY(!error->message.isEmpty());
    }

    // Values are searched for control characters eight bytes at a time: one is found at every
    // position of a value, in the whole words and in the bytes after them, and at its edges,
    // where only spaces and tabs are optional whitespace (a vertical tab is not); bytes that are
    // none (a tab, a space, '~', UTF-8) pass wherever they stand.
    void controlCharactersAreFoundAnywhereInAValue()
    {
        const QByteArray clean = "ab\tc d~\xc3\xa9"
                                 "f\tgh\x80"
                                 "ij\xff"
                                 "klmn"; // 21 bytes
        const auto parse = [](const QByteArray &value) {
            return parseRequestHead("GET / HTTP/1.1\r\nHost: x\r\nX-A: " + value);
        };
        QVERIFY(std::holds_alternative<switchyard::http::RequestHead>(parse(clean)));
        for (const char control : {'\x01', '\x0b', '\x1f', '\x7f', '\x00'}) {
            for (qsizetype at = 0; at < clean.size(); ++at) {
                QByteArray value = clean;
                value[at] = control;
                const auto result = parse(value);
                const auto *error = std::get_if<switchyard::protocol::ApiError>(&result);
                QVERIFY2(error, qPrintable(u"byte %1 at %2"_qs.arg(int(control)).arg(at)));
                QCOMPARE(error->code, u"invalid_header"_qs);
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestRequestHead)
#include "tst_request_head.moc"
