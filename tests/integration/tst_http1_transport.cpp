#include "descriptors_taken.h"
#include "eventloop/epoll_event_dispatcher.h"
#include "fake_upstream.h"
#include "transport_outcome.h"
#include "upstream/gateway_transport.h"
#include "upstream/http1_transport.h"

#include <QAbstractEventDispatcher>
#include <QCoreApplication>
#include <QHostInfo>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QTimer>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace switchyard;
using switchyard::testing::chatBody;
using switchyard::testing::dispatcherCounters;
using switchyard::testing::FakeUpstream;
using switchyard::testing::TransportOutcome;
using upstream::TransportError;

namespace {

// A provider on a thread of its own, blocking: it answers one request per connection, then
// closes that connection after `closeAfter` while the test's thread is busy elsewhere (its event
// loop not running), as a provider's idle timeout does.
class ClosingProvider {
public:
    explicit ClosingProvider(std::chrono::milliseconds closeAfter) : m_closeAfter(closeAfter)
    {
        m_listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof(address);
        ::bind(m_listener, reinterpret_cast<sockaddr *>(&address), length);
        ::listen(m_listener, 8);
        ::getsockname(m_listener, reinterpret_cast<sockaddr *>(&address), &length);
        m_port = ntohs(address.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~ClosingProvider()
    {
        ::shutdown(m_listener, SHUT_RDWR);
        m_thread.join();
        ::close(m_listener);
    }
    QByteArray url() const { return "http://127.0.0.1:" + QByteArray::number(m_port) + "/v1"; }
    std::atomic<int> connections{0};

private:
    void serve()
    {
        for (;;) {
            const int client = ::accept4(m_listener, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0)
                return;
            ++connections;
            QByteArray received;
            char buffer[4096];
            while (!received.contains("\r\n\r\n") || !received.endsWith("}")) {
                const ssize_t n = ::recv(client, buffer, sizeof(buffer), 0);
                if (n <= 0)
                    break;
                received.append(buffer, n);
            }
            const QByteArray answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
            ::send(client, answer.constData(), size_t(answer.size()), MSG_NOSIGNAL);
            std::this_thread::sleep_for(m_closeAfter);
            ::close(client);
        }
    }

    std::chrono::milliseconds m_closeAfter;
    int m_listener = -1;
    quint16 m_port = 0;
    std::thread m_thread;
};

// A provider that answers every request on a connection with the same bytes, written in pieces
// of a given size a millisecond apart: how an answer's framing is tested under any split.
class ScriptedProvider final : public QObject {
public:
    explicit ScriptedProvider(QByteArray answer, qsizetype pieceBytes = 0,
                              bool closeAfterAnswer = false)
        : m_answer(std::move(answer)), m_pieceBytes(pieceBytes), m_close(closeAfterAnswer)
    {
        QObject::connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                ++connections;
                QObject::connect(socket, &QTcpSocket::readyRead, this,
                                 [this, socket] { onReadyRead(socket); });
            }
        });
        m_server.listen(QHostAddress::LocalHost, 0);
    }
    QByteArray url() const
    {
        return "http://127.0.0.1:" + QByteArray::number(m_server.serverPort()) + "/v1/chat";
    }

    int connections = 0;
    int requests = 0;
    QByteArray lastRequest;

private:
    void onReadyRead(QTcpSocket *socket)
    {
        QByteArray &pending = m_received[socket];
        pending.append(socket->readAll());
        const qsizetype headEnd = pending.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        const QByteArray head = pending.left(headEnd).toLower();
        const qsizetype lengthAt = head.indexOf("content-length: ");
        const qsizetype bodyBytes =
            lengthAt < 0 ? 0
                         : head.mid(lengthAt + 16, head.indexOf("\r", lengthAt) - lengthAt - 16)
                               .toLongLong();
        if (pending.size() < headEnd + 4 + bodyBytes)
            return;
        lastRequest = pending.left(headEnd + 4 + bodyBytes);
        pending.remove(0, headEnd + 4 + bodyBytes);
        ++requests;
        writeFrom(socket, 0);
    }
    void writeFrom(QTcpSocket *socket, qsizetype offset)
    {
        const qsizetype piece = m_pieceBytes > 0 ? m_pieceBytes : m_answer.size();
        socket->write(m_answer.mid(offset, piece));
        socket->flush();
        if (offset + piece < m_answer.size()) {
            QTimer::singleShot(
                1, socket, [this, socket, offset, piece] { writeFrom(socket, offset + piece); });
        } else if (m_close) {
            socket->disconnectFromHost();
        }
    }

    QTcpServer m_server;
    QByteArray m_answer;
    qsizetype m_pieceBytes;
    bool m_close;
    QHash<QTcpSocket *, QByteArray> m_received;
};

upstream::UpstreamRequest chatRequest(const QByteArray &url, bool stream = false)
{
    upstream::UpstreamRequest request;
    request.url = QUrl::fromEncoded(url);
    request.headers = {{"Content-Type", "application/json"}};
    request.body = chatBody("test-model", stream);
    request.answerStreams = stream;
    return request;
}

// Makes one call and waits for its end.
bool call(upstream::UpstreamTransport &transport, const upstream::UpstreamRequest &request,
          TransportOutcome &outcome)
{
    const std::unique_ptr<upstream::UpstreamCall> running = transport.start(request, &outcome);
    return QTest::qWaitFor([&] { return outcome.finished; }, 5000);
}

} // namespace

// The plain-http transport on its own, on the engine thread's event dispatcher, against fake
// providers on real loopback sockets: framing, keep-alive, errors and callbacks that cancel.
class Http1TransportTest : public QObject {
    Q_OBJECT
private slots:
    void onlyPlainHttpWithoutProxyIsHandledHere_data();
    void onlyPlainHttpWithoutProxyIsHandledHere();
    void headersGoOutAsGivenAndComeBackLowerCased();
    void aKeptAliveConnectionCarriesTheNextCallWithoutEventLoopChanges();
    void aConnectionTheProviderClosesWhileIdleIsClosedHere();
    void aKeptAliveConnectionClosedAsTheRequestArrivesIsNotSentTwice();
    void answersAreReadWhateverTheirFramingAndSplit_data();
    void answersAreReadWhateverTheirFramingAndSplit();
    void malformedAnswersAreProtocolErrors_data();
    void malformedAnswersAreProtocolErrors();
    void anAnswerCutShortIsAConnectionLost();
    void aRefusedConnectionIsAConnectFailure();
    void hostNamesAreResolvedAndUnknownOnesNamed();
    void aNameWhoseAddressesAllFailIsLookedUpAgain();
    void aLargeRequestBodyGoesOutWhole();
    void aPausedAnswerHoldsItsEndAndLosesNothing();
    void aCallCancelledFromItsOwnCallbackEndsCleanly();
    void aCallStartedFromACallbackRuns();
    void aSocketThisProcessCannotOpenIsReportedAsItsOwnLimit();
    void theTotalTimeoutEndsACallThatGetsNoAnswer();
    void theGatewayTransportSendsTlsThroughLibcurl();
    void aTargetOfOnlyAQueryIsSentFromTheRoot();
    void theRequestHeadIsExactlyWhatTheCallerFramed();
    void aCallerAskingToCloseGetsANewConnectionNextTime();
    void aPauseFromTheHeadHoldsWhatCameWithIt();
    void aCallCancelledWhileItsNameIsResolvedNeverEnds();
    void anIdleConnectionClosedUnnoticedIsCheckedBeforeReuse();
};

void Http1TransportTest::onlyPlainHttpWithoutProxyIsHandledHere_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<QString>("proxy");
    QTest::addColumn<QString>("caFile");
    QTest::addColumn<bool>("overLibcurl");
    QTest::addColumn<bool>("handled");
    QTest::newRow("plain http") << "http://127.0.0.1:9/v1"
                                << ""
                                << "" << false << true;
    QTest::newRow("a name") << "http://vllm.internal:8000/v1"
                            << ""
                            << "" << false << true;
    QTest::newRow("https") << "https://api.example.com/v1"
                           << ""
                           << "" << false << false;
    QTest::newRow("through a proxy") << "http://127.0.0.1:9/v1"
                                     << "http://proxy:3128"
                                     << "" << false << false;
    QTest::newRow("with a CA file") << "http://127.0.0.1:9/v1"
                                    << ""
                                    << "/ca.pem" << false << false;
    QTest::newRow("transport: libcurl") << "http://127.0.0.1:9/v1"
                                        << ""
                                        << "" << true << false;
}

void Http1TransportTest::onlyPlainHttpWithoutProxyIsHandledHere()
{
    QFETCH(QString, url);
    QFETCH(QString, proxy);
    QFETCH(QString, caFile);
    QFETCH(bool, overLibcurl);
    QFETCH(bool, handled);
    upstream::UpstreamRequest request;
    request.url = QUrl(url);
    request.proxy = QUrl(proxy);
    request.caFile = caFile;
    request.overLibcurl = overLibcurl;
    QCOMPARE(upstream::Http1Transport::handles(request), handled);
}

// The request's header lines reach the provider as given, in order, with Host and the body's
// length added; the answer's status is read from its status line and its header names come back
// lower-cased with their values trimmed.
void Http1TransportTest::headersGoOutAsGivenAndComeBackLowerCased()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 429;
    fake.extraHeaders = {{"X-RateLimit-Remaining-Requests", "  0  "}, {"Retry-After", "7"}};
    upstream::Http1Transport transport;
    upstream::UpstreamRequest request = chatRequest(fake.baseUrl() + "/chat/completions?x=1");
    const QByteArray longValue = "Bearer " + QByteArray(3000, 'k');
    request.headers = {{"Content-Type", "application/json"},
                       {"Authorization", longValue},
                       {"X-Trace", "a:b;c=d"},
                       {"x-lower", "v"}};
    TransportOutcome outcome;
    QVERIFY(call(transport, request, outcome));
    QCOMPARE(outcome.error, TransportError::None);
    QCOMPARE(outcome.status, 429);
    QCOMPARE(outcome.body, fake.statusBody);
    QCOMPARE(fake.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &received = fake.requests().first();
    QCOMPARE(received.method, QByteArray("POST"));
    QCOMPARE(received.path, QByteArray("/v1/chat/completions?x=1"));
    QCOMPARE(received.header("host"), "127.0.0.1:" + QByteArray::number(fake.port()));
    QCOMPARE(received.header("content-length"), QByteArray::number(request.body.size()));
    QCOMPARE(received.header("content-type"), QByteArray("application/json"));
    QCOMPARE(received.header("authorization"), longValue);
    QCOMPARE(received.header("x-trace"), QByteArray("a:b;c=d"));
    QCOMPARE(received.header("x-lower"), QByteArray("v"));
    QCOMPARE(received.body, request.body);

    upstream::UpstreamResponseHead head;
    head.headers = outcome.headers;
    QCOMPARE(head.header("x-ratelimit-remaining-requests"), QByteArray("0"));
    QCOMPARE(head.header("retry-after"), QByteArray("7"));
    QCOMPARE(head.header("content-type"), QByteArray("application/json"));
    for (const auto &[name, value] : std::as_const(outcome.headers))
        QCOMPARE(name, name.toLower());
}

// The point of the transport: a call on a kept-alive connection is a send and a receive on a
// descriptor already watched, with no change to the kernel's epoll set.
void Http1TransportTest::aKeptAliveConnectionCarriesTheNextCallWithoutEventLoopChanges()
{
    FakeUpstream fake;
    upstream::Http1Transport transport;
    const upstream::UpstreamRequest request = chatRequest(fake.baseUrl() + "/chat/completions");
    TransportOutcome first;
    QVERIFY(call(transport, request, first));
    QCOMPARE(first.error, TransportError::None);
    QCOMPARE(first.body, fake.completionBody);
    QCOMPARE(transport.openConnections(), 1);
    QCOMPARE(transport.idleConnections(), 1);

    const eventloop::DispatcherCounters before = dispatcherCounters();
    for (int i = 0; i < 20; ++i) {
        TransportOutcome next;
        QVERIFY(call(transport, request, next));
        QCOMPARE(next.error, TransportError::None);
        QCOMPARE(next.status, 200);
        QCOMPARE(next.body, fake.completionBody);
    }
    const eventloop::DispatcherCounters after = dispatcherCounters();
    QCOMPARE(fake.requests().size(), 21);
    QCOMPARE(fake.openConnections(), 1);
    QCOMPARE(transport.openConnections(), 1);
    QVERIFY(after.waits > before.waits); // the counters are the dispatcher's: they move
    // (The fake's own QTcpSocket switches its write notifier per answer: modifications are its.)
    QCOMPARE(after.epollAdds, before.epollAdds);
    QCOMPARE(after.epollDeletes, before.epollDeletes);
}

void Http1TransportTest::aConnectionTheProviderClosesWhileIdleIsClosedHere()
{
    FakeUpstream fake;
    upstream::Http1Transport transport;
    const upstream::UpstreamRequest request = chatRequest(fake.baseUrl() + "/chat/completions");
    TransportOutcome first;
    QVERIFY(call(transport, request, first));
    QCOMPARE(transport.idleConnections(), 1);

    fake.closeConnections();
    QTRY_COMPARE_WITH_TIMEOUT(transport.openConnections(), 0, 5000);
    QCOMPARE(transport.idleConnections(), 0);

    // The next call opens a new connection instead of failing on the closed one.
    TransportOutcome second;
    QVERIFY(call(transport, request, second));
    QCOMPARE(second.error, TransportError::None);
    QCOMPARE(second.status, 200);
    QCOMPARE(fake.requests().size(), 2);
}

// A provider that drops a kept-alive connection just as a request arrives may have started the
// call: the request is not sent again behind the executor's back (its retry policy decides).
void Http1TransportTest::aKeptAliveConnectionClosedAsTheRequestArrivesIsNotSentTwice()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::CloseOnReuse;
    upstream::Http1Transport transport;
    const upstream::UpstreamRequest request = chatRequest(fake.baseUrl() + "/chat/completions");
    TransportOutcome first;
    QVERIFY(call(transport, request, first));
    QCOMPARE(first.error, TransportError::None);

    TransportOutcome second;
    QVERIFY(call(transport, request, second));
    QCOMPARE(second.error, TransportError::ConnectionLost);
    QVERIFY2(
        second.description.startsWith(
            u"the kept-alive connection closed before the answer; the request was not sent again"),
        qPrintable(second.description));
    QCOMPARE(second.heads, 0);
    QCOMPARE(fake.requests().size(), 2); // once each, never a third time
    QTRY_COMPARE_WITH_TIMEOUT(transport.openConnections(), 0, 5000);
}

void Http1TransportTest::answersAreReadWhateverTheirFramingAndSplit_data()
{
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<int>("pieceBytes");
    QTest::addColumn<bool>("closeAfter");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<bool>("keptAlive");

    const QByteArray lengthAnswer =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"
        "{\"ok\":true}";
    const QByteArray chunkedAnswer =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nX-Trailer: t\r\n\r\n";
    for (const int piece : {0, 1, 7}) {
        const QByteArray split = piece == 0 ? "whole" : QByteArray::number(piece) + "-byte pieces";
        QTest::addRow("content-length, %s", split.constData())
            << lengthAnswer << piece << false << 200 << QByteArray("{\"ok\":true}") << true;
        QTest::addRow("chunked with an extension and a trailer, %s", split.constData())
            << chunkedAnswer << piece << false << 200 << QByteArray("hello, world") << true;
        QTest::addRow("until the provider closes, %s", split.constData())
            << QByteArray("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nto the end") << piece
            << true << 200 << QByteArray("to the end") << false;
        QTest::addRow("100 Continue before the answer, %s", split.constData())
            << "HTTP/1.1 100 Continue\r\n\r\n" + lengthAnswer << piece << false << 200
            << QByteArray("{\"ok\":true}") << true;
    }
    for (const int piece : {0, 1}) {
        QTest::addRow("lines ending in a bare line feed, %s",
                      piece == 0 ? "whole" : "1-byte pieces")
            << QByteArray("HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: 5\n\nhello")
            << piece << false << 200 << QByteArray("hello") << true;
    }
    QTest::newRow("204 has no body") << QByteArray("HTTP/1.1 204 No Content\r\n\r\n") << 0 << false
                                     << 204 << QByteArray() << true;
    QTest::newRow("Connection: close is honoured")
        << QByteArray("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok") << 0
        << false << 200 << QByteArray("ok") << false;
    QTest::newRow("HTTP/1.0 is not kept alive")
        << QByteArray("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok") << 0 << false << 200
        << QByteArray("ok") << false;
    QTest::newRow("chunked and a Content-Length: read as chunked, the connection not reused")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 40\r\nTransfer-Encoding: chunked\r\n"
                      "\r\n2\r\nok\r\n0\r\n\r\n")
        << 0 << false << 200 << QByteArray("ok") << false;
    QTest::newRow("chunked on HTTP/1.0 kept alive: read as chunked, the connection not reused")
        << QByteArray("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n"
                      "\r\n2\r\nok\r\n0\r\n\r\n")
        << 0 << false << 200 << QByteArray("ok") << false;
    QTest::newRow("a status line without a reason")
        << QByteArray("HTTP/1.1 503\r\nContent-Length: 0\r\n\r\n") << 0 << false << 503
        << QByteArray() << true;
}

void Http1TransportTest::answersAreReadWhateverTheirFramingAndSplit()
{
    QFETCH(QByteArray, answer);
    QFETCH(int, pieceBytes);
    QFETCH(bool, closeAfter);
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(bool, keptAlive);
    ScriptedProvider provider(answer, pieceBytes, closeAfter);
    upstream::Http1Transport transport;
    TransportOutcome outcome;
    QVERIFY(call(transport, chatRequest(provider.url()), outcome));
    QCOMPARE(outcome.error, TransportError::None);
    QCOMPARE(outcome.description, QString());
    QCOMPARE(outcome.heads, 1);
    QCOMPARE(outcome.status, status);
    QCOMPARE(outcome.body, body);
    QCOMPARE(transport.idleConnections(), keptAlive ? 1 : 0);
    QTRY_COMPARE_WITH_TIMEOUT(transport.openConnections(), keptAlive ? 1 : 0, 5000);
    QVERIFY(provider.lastRequest.startsWith("POST /v1/chat HTTP/1.1\r\n"));

    // A kept-alive connection carries the next call; a spent one is replaced.
    TransportOutcome next;
    QVERIFY(call(transport, chatRequest(provider.url()), next));
    QCOMPARE(next.error, TransportError::None);
    QCOMPARE(next.body, body);
    QCOMPARE(provider.connections, keptAlive ? 1 : 2);
}

void Http1TransportTest::malformedAnswersAreProtocolErrors_data()
{
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<QString>("detail");
    QTest::newRow("not HTTP") << QByteArray("SSH-2.0-OpenSSH_9.2\r\n\r\n")
                              << "the status line is \"SSH-2.0-OpenSSH_9.2\"";
    QTest::newRow("a status that is not three digits")
        << QByteArray("HTTP/1.1 2x0 OK\r\n\r\n") << "the status line is \"HTTP/1.1 2x0 OK\"";
    QTest::newRow("a length that is not a number")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n")
        << "Content-Length \"ten\" is not a length";
    QTest::newRow("two lengths that disagree")
        << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc")
        << "Content-Length \"3\" is not a length";
    QTest::newRow("a chunk size that is not hexadecimal")
        << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n")
        << "the chunked body is malformed";
    QTest::newRow("a head without an end")
        << "HTTP/1.1 200 OK\r\nX-Filler: " + QByteArray(70 * 1024, 'x')
        << "the answer's head is larger than 65536 bytes";
}

void Http1TransportTest::malformedAnswersAreProtocolErrors()
{
    QFETCH(QByteArray, answer);
    QFETCH(QString, detail);
    ScriptedProvider provider(answer);
    upstream::Http1Transport transport;
    TransportOutcome outcome;
    QVERIFY(call(transport, chatRequest(provider.url()), outcome));
    QCOMPARE(outcome.error, TransportError::ProtocolError);
    QCOMPARE(outcome.description, QStringLiteral("not a valid HTTP answer (%1)").arg(detail));
    QTRY_COMPARE_WITH_TIMEOUT(transport.openConnections(), 0, 5000); // never reused
}

void Http1TransportTest::anAnswerCutShortIsAConnectionLost()
{
    ScriptedProvider provider("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", 0, true);
    upstream::Http1Transport transport;
    TransportOutcome outcome;
    QVERIFY(call(transport, chatRequest(provider.url()), outcome));
    QCOMPARE(outcome.status, 200);
    QCOMPARE(outcome.body, QByteArray("only this"));
    QCOMPARE(outcome.error, TransportError::ConnectionLost);
    QCOMPARE(outcome.description,
             QStringLiteral("connection lost before the answer was complete (the provider "
                            "closed the connection)"));
    QCOMPARE(transport.openConnections(), 0);
}

void Http1TransportTest::aRefusedConnectionIsAConnectFailure()
{
    quint16 closedPort = 0;
    {
        QTcpServer listener;
        QVERIFY(listener.listen(QHostAddress::LocalHost, 0));
        closedPort = listener.serverPort();
    }
    upstream::Http1Transport transport;
    TransportOutcome outcome;
    QVERIFY(call(transport,
                 chatRequest("http://127.0.0.1:" + QByteArray::number(closedPort) + "/v1"),
                 outcome));
    QCOMPARE(outcome.error, TransportError::ConnectFailed);
    QCOMPARE(outcome.description, QStringLiteral("could not connect (%1)")
                                      .arg(QString::fromLocal8Bit(std::strerror(ECONNREFUSED))));
    QCOMPARE(outcome.heads, 0);
    QCOMPARE(transport.openConnections(), 0);
}

void Http1TransportTest::hostNamesAreResolvedAndUnknownOnesNamed()
{
    FakeUpstream fake;
    upstream::Http1Transport transport;
    // A brand-new root may have no /etc/hosts, and then no name for the loopback at all: the
    // name part needs one, the unknown name below does not.
    const bool localhostResolves = QHostInfo::fromName(QStringLiteral("localhost"))
                                       .addresses()
                                       .contains(QHostAddress(QHostAddress::LocalHost));
    if (!localhostResolves)
        qInfo("\"localhost\" does not resolve to 127.0.0.1 here: only the unknown name is tried");
    // "localhost" may resolve to ::1 first, where the fake does not listen: the next address
    // is tried.
    const QByteArray byName = "http://localhost:" + QByteArray::number(fake.port()) + "/v1/chat";
    for (int i = 0; localhostResolves && i < 2; ++i) { // the second from the kept connection
        TransportOutcome outcome;
        QVERIFY(call(transport, chatRequest(byName), outcome));
        QCOMPARE(outcome.error, TransportError::None);
        QCOMPARE(outcome.status, 200);
    }
    if (localhostResolves) {
        QCOMPARE(fake.requests().size(), 2);
        QCOMPARE(fake.requests().first().header("host"),
                 "localhost:" + QByteArray::number(fake.port()));
    }

    TransportOutcome unknown;
    QVERIFY(call(transport, chatRequest("http://no-such-provider.invalid/v1/chat"), unknown));
    QCOMPARE(unknown.error, TransportError::ConnectFailed);
    QVERIFY2(unknown.description.startsWith(
                 u"could not connect (could not resolve no-such-provider.invalid: "),
             qPrintable(unknown.description));
}

void Http1TransportTest::aNameWhoseAddressesAllFailIsLookedUpAgain()
{
    if (!QHostInfo::fromName(QStringLiteral("localhost"))
             .addresses()
             .contains(QHostAddress(QHostAddress::LocalHost)))
        QSKIP("\"localhost\" does not resolve to 127.0.0.1 here (no /etc/hosts entry)");
    const auto byName = [](quint16 port) {
        return "http://localhost:" + QByteArray::number(port) + "/v1/chat";
    };
    quint16 closedPort = 0;
    {
        QTcpServer listener;
        QVERIFY(listener.listen(QHostAddress::LocalHost, 0));
        closedPort = listener.serverPort();
    }
    FakeUpstream first;
    FakeUpstream second;
    FakeUpstream afterTheFailure;
    upstream::Http1Transport transport;

    TransportOutcome one;
    QVERIFY(call(transport, chatRequest(byName(first.port())), one));
    QCOMPARE(one.status, 200);
    QCOMPARE(transport.lookups(), 1);
    // Another port of the same name: a new connection, to the addresses kept.
    TransportOutcome two;
    QVERIFY(call(transport, chatRequest(byName(second.port())), two));
    QCOMPARE(two.status, 200);
    QCOMPARE(transport.lookups(), 1);

    // Every address refuses: they are dropped with the failure...
    TransportOutcome refused;
    QVERIFY(call(transport, chatRequest(byName(closedPort)), refused));
    QCOMPARE(refused.error, TransportError::ConnectFailed);
    QCOMPARE(transport.lookups(), 1);
    // ...so the next new connection to that name looks it up again.
    TransportOutcome three;
    QVERIFY(call(transport, chatRequest(byName(afterTheFailure.port())), three));
    QCOMPARE(three.status, 200);
    QCOMPARE(transport.lookups(), 2);
}

void Http1TransportTest::aLargeRequestBodyGoesOutWhole()
{
    FakeUpstream fake;
    upstream::Http1Transport transport;
    upstream::UpstreamRequest request = chatRequest(fake.baseUrl() + "/chat/completions");
    request.body = chatBody("test-model", false, QByteArray(12 * 1024 * 1024, 'a'));
    TransportOutcome outcome;
    const std::unique_ptr<upstream::UpstreamCall> running = transport.start(request, &outcome);
    QTRY_VERIFY_WITH_TIMEOUT(outcome.finished, 20000);
    QCOMPARE(outcome.error, TransportError::None);
    QCOMPARE(outcome.status, 200);
    QCOMPARE(fake.requests().size(), 1);
    QCOMPARE(fake.requests().first().body.size(), request.body.size());
    QCOMPARE(fake.requests().first().body, request.body);
}

// Back-pressure: a paused call reads nothing more, and its end waits for the resume; nothing
// read before the pause is lost.
void Http1TransportTest::aPausedAnswerHoldsItsEndAndLosesNothing()
{
    FakeUpstream fake;
    fake.streamEvents = 20;
    fake.eventIntervalMs = 1;
    upstream::Http1Transport transport;
    TransportOutcome outcome;
    std::unique_ptr<upstream::UpstreamCall> running;
    outcome.onBody = [&] {
        if (outcome.body.contains("data: [DONE]"))
            return;
        running->pauseReceiving();
    };
    running = transport.start(chatRequest(fake.baseUrl() + "/chat/completions", true), &outcome);
    QTRY_VERIFY_WITH_TIMEOUT(!outcome.body.isEmpty(), 5000);
    // Paused after the first piece: the rest waits in the socket for as long as it takes.
    QTRY_VERIFY_WITH_TIMEOUT(fake.answersCompleted() == 1, 5000);
    const QByteArray beforeResume = outcome.body;
    QTest::qWait(50);
    QCOMPARE(outcome.body, beforeResume);
    QVERIFY(!outcome.finished);

    outcome.onBody = nullptr;
    running->resumeReceiving();
    QTRY_VERIFY_WITH_TIMEOUT(outcome.finished, 5000);
    QCOMPARE(outcome.error, TransportError::None);
    QVERIFY(outcome.body.endsWith("data: [DONE]\n\n"));
    QCOMPARE(outcome.body.count("\"delta\""), 21); // 20 content events and the final one
}

void Http1TransportTest::aCallCancelledFromItsOwnCallbackEndsCleanly()
{
    FakeUpstream fake;
    fake.streamEvents = 5;
    upstream::Http1Transport transport;
    for (const bool inHead : {true, false}) {
        TransportOutcome outcome;
        std::unique_ptr<upstream::UpstreamCall> running;
        (inHead ? outcome.onHead : outcome.onBody) = [&] { running.reset(); };
        running =
            transport.start(chatRequest(fake.baseUrl() + "/chat/completions", true), &outcome);
        QTRY_VERIFY_WITH_TIMEOUT(!running, 5000);
        QTest::qWait(30);
        QVERIFY(!outcome.finished);               // no callback after the call is gone
        QCOMPARE(transport.openConnections(), 0); // mid-answer: the connection is spent
    }
    TransportOutcome after;
    QVERIFY(call(transport, chatRequest(fake.baseUrl() + "/chat/completions"), after));
    QCOMPARE(after.error, TransportError::None);
}

void Http1TransportTest::aCallStartedFromACallbackRuns()
{
    FakeUpstream fake;
    upstream::Http1Transport transport;
    const upstream::UpstreamRequest request = chatRequest(fake.baseUrl() + "/chat/completions");
    TransportOutcome first;
    TransportOutcome second;
    std::unique_ptr<upstream::UpstreamCall> secondCall;
    first.onHead = [&] { secondCall = transport.start(request, &second); };
    QVERIFY(call(transport, request, first));
    QTRY_VERIFY_WITH_TIMEOUT(second.finished, 5000);
    QCOMPARE(first.error, TransportError::None);
    QCOMPARE(second.error, TransportError::None);
    QCOMPARE(second.body, fake.completionBody);
}

void Http1TransportTest::aSocketThisProcessCannotOpenIsReportedAsItsOwnLimit()
{
    FakeUpstream fake;
    upstream::Http1Transport transport;
    const upstream::UpstreamRequest request = chatRequest(fake.baseUrl() + "/chat/completions");
    TransportOutcome refused;
    {
        const testing::DescriptorsTaken taken;
        QVERIFY(taken.full());
        QVERIFY(call(transport, request, refused));
    }
    // Not "could not connect", which the executor would hold against the provider.
    QCOMPARE(refused.error, TransportError::LocalResources);
    QVERIFY2(refused.description.contains(QString::fromLocal8Bit(std::strerror(EMFILE))),
             qPrintable(refused.description));
    QCOMPARE(refused.status, 0);
    QCOMPARE(fake.requests().size(), 0);

    TransportOutcome next;
    QVERIFY(call(transport, request, next));
    QCOMPARE(next.error, TransportError::None);
    QCOMPARE(fake.requests().size(), 1);
}

void Http1TransportTest::theTotalTimeoutEndsACallThatGetsNoAnswer()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Hang;
    upstream::Http1Transport transport;
    upstream::UpstreamRequest request = chatRequest(fake.baseUrl() + "/chat/completions");
    request.totalTimeout = std::chrono::milliseconds(100);
    TransportOutcome outcome;
    QVERIFY(call(transport, request, outcome));
    QCOMPARE(outcome.error, TransportError::TotalTimeout);
    QCOMPARE(transport.openConnections(), 0);
    QCOMPARE(fake.requests().size(), 1);
}

void Http1TransportTest::theGatewayTransportSendsTlsThroughLibcurl()
{
    FakeUpstream plain;
    FakeUpstream tls(testing::loopbackTlsFiles());
    upstream::GatewayTransport transport;
    TransportOutcome overPlainHttp;
    QVERIFY(call(transport, chatRequest(plain.baseUrl() + "/chat/completions"), overPlainHttp));
    QCOMPARE(overPlainHttp.error, TransportError::None);
    QCOMPARE(transport.plainHttp().openConnections(), 1);

    upstream::UpstreamRequest request = chatRequest(tls.baseUrl() + "/chat/completions");
    request.caFile = testing::tlsTestFile(QStringLiteral("ca.pem"));
    TransportOutcome overTls;
    QVERIFY(call(transport, request, overTls));
    QCOMPARE(overTls.error, TransportError::None);
    QCOMPARE(overTls.status, 200);
    QCOMPARE(tls.requests().size(), 1);
    QCOMPARE(transport.plainHttp().openConnections(), 1); // not through the plain transport
}

void Http1TransportTest::aTargetOfOnlyAQueryIsSentFromTheRoot()
{
    ScriptedProvider provider("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    upstream::Http1Transport transport;
    const QByteArray url = provider.url().replace("/v1/chat", "?key=1");
    TransportOutcome outcome;
    QVERIFY(call(transport, chatRequest(url), outcome));
    QCOMPARE(outcome.error, TransportError::None);
    QVERIFY2(provider.lastRequest.startsWith("POST /?key=1 HTTP/1.1\r\n"),
             provider.lastRequest.left(40).constData());
}

// The head is measured, then written in place: byte for byte what the caller gave, with a Host
// and a Content-Length only where the caller framed none.
void Http1TransportTest::theRequestHeadIsExactlyWhatTheCallerFramed()
{
    ScriptedProvider provider("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    upstream::Http1Transport transport;
    const QByteArray host = provider.url().mid(7, provider.url().indexOf("/v1") - 7);
    const auto sent = [&](const upstream::UpstreamRequest &request) {
        TransportOutcome outcome;
        if (!call(transport, request, outcome) || outcome.error != TransportError::None)
            return QByteArray("(the call failed)");
        return provider.lastRequest;
    };

    upstream::UpstreamRequest chat = chatRequest(provider.url());
    chat.body = QByteArray(1234, 'x');
    QCOMPARE(sent(chat), "POST /v1/chat HTTP/1.1\r\nHost: " + host +
                             "\r\nContent-Type: application/json\r\n"
                             "Content-Length: 1234\r\n\r\n" +
                             chat.body);

    upstream::UpstreamRequest framed = chatRequest(provider.url());
    framed.headers = {{"host", "models.example"}, {"Content-Length", "2"}, {"X-Empty", ""}};
    framed.body = "{}";
    QCOMPARE(sent(framed), QByteArray("POST /v1/chat HTTP/1.1\r\nhost: models.example\r\n"
                                      "Content-Length: 2\r\nX-Empty: \r\n\r\n{}"));

    upstream::UpstreamRequest emptyPost = chatRequest(provider.url());
    emptyPost.headers = {};
    emptyPost.body = {};
    QCOMPARE(sent(emptyPost),
             "POST /v1/chat HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 0\r\n\r\n");

    upstream::UpstreamRequest get = chatRequest(provider.url());
    get.method = "GET";
    get.headers = {};
    get.body = {};
    QCOMPARE(sent(get), "GET /v1/chat HTTP/1.1\r\nHost: " + host + "\r\n\r\n");
}

void Http1TransportTest::aCallerAskingToCloseGetsANewConnectionNextTime()
{
    ScriptedProvider provider("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    upstream::Http1Transport transport;
    upstream::UpstreamRequest request = chatRequest(provider.url());
    request.headers.append(qMakePair(QByteArray("Connection"), QByteArray("close")));
    TransportOutcome first;
    QVERIFY(call(transport, request, first));
    QCOMPARE(first.error, TransportError::None);
    QCOMPARE(transport.openConnections(), 0);
    TransportOutcome second;
    QVERIFY(call(transport, request, second));
    QCOMPARE(second.body, QByteArray("ok"));
    QCOMPARE(provider.connections, 2);
}

void Http1TransportTest::aPauseFromTheHeadHoldsWhatCameWithIt()
{
    ScriptedProvider provider("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    upstream::Http1Transport transport;
    TransportOutcome outcome;
    std::unique_ptr<upstream::UpstreamCall> running;
    outcome.onHead = [&] { running->pauseReceiving(); };
    running = transport.start(chatRequest(provider.url()), &outcome);
    QTRY_COMPARE_WITH_TIMEOUT(outcome.heads, 1, 5000);
    QTest::qWait(30);
    QCOMPARE(outcome.body, QByteArray());
    QVERIFY(!outcome.finished);
    running->resumeReceiving();
    QTRY_VERIFY_WITH_TIMEOUT(outcome.finished, 5000);
    QCOMPARE(outcome.body, QByteArray("hello"));
    QCOMPARE(outcome.error, TransportError::None);
    QCOMPARE(transport.idleConnections(), 1);
}

// Two calls wait for the same name; the first's end cancels the second (a finished request lets
// a queued one go, or makes room by cancelling a shadow call): the second ends there, silently.
void Http1TransportTest::aCallCancelledWhileItsNameIsResolvedNeverEnds()
{
    upstream::Http1Transport transport;
    const QByteArray url = "http://no-such-provider.invalid/v1/chat";
    TransportOutcome first;
    TransportOutcome second;
    std::unique_ptr<upstream::UpstreamCall> secondCall;
    first.onEnd = [&] { secondCall.reset(); };
    const std::unique_ptr<upstream::UpstreamCall> firstCall =
        transport.start(chatRequest(url), &first);
    secondCall = transport.start(chatRequest(url), &second);
    QTRY_VERIFY_WITH_TIMEOUT(first.finished, 10000);
    QCOMPARE(first.error, TransportError::ConnectFailed);
    QTest::qWait(30);
    QVERIFY(!second.finished);
    QCOMPARE(transport.openConnections(), 0);
}

// The provider closed an idle connection while this thread's loop was busy: the close was never
// seen. A connection idle for a second or more is checked before it carries a request, so the
// request goes out on a new connection instead of failing as "not sent again".
void Http1TransportTest::anIdleConnectionClosedUnnoticedIsCheckedBeforeReuse()
{
    ClosingProvider provider(std::chrono::milliseconds(100));
    upstream::Http1Transport transport;
    TransportOutcome first;
    QVERIFY(call(transport, chatRequest(provider.url()), first));
    QCOMPARE(first.body, QByteArray("ok"));
    QCOMPARE(transport.idleConnections(), 1);

    std::this_thread::sleep_for(std::chrono::milliseconds(1300)); // no event loop meanwhile
    TransportOutcome second;
    QVERIFY(call(transport, chatRequest(provider.url()), second));
    QCOMPARE(second.error, TransportError::None);
    QCOMPARE(second.body, QByteArray("ok"));
    QCOMPARE(provider.connections.load(), 2);
}

int main(int argc, char **argv)
{
    // The engine thread's dispatcher, whose counters show what reaches the kernel's epoll set
    // (SWITCHYARD_TEST_EVENT_DISPATCHER=epoll has installed one already).
    if (!QAbstractEventDispatcher::instance())
        QCoreApplication::setEventDispatcher(new eventloop::EpollEventDispatcher);
    QCoreApplication app(argc, argv);
    Http1TransportTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_http1_transport.moc"
