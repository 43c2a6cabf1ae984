#include "descriptors_taken.h"
#include "eventloop/epoll_event_dispatcher.h"
#include "fake_upstream.h"
#include "transport_outcome.h"
#include "upstream/curl_transport.h"

#include <QAbstractEventDispatcher>
#include <QCoreApplication>
#include <QHostInfo>
#include <QPointer>
#include <QSocketNotifier>
#include <QTest>
#include <cerrno>
#include <cstring>

using namespace switchyard;
using switchyard::testing::chatBody;
using switchyard::testing::dispatcherCounters;
using switchyard::testing::FakeUpstream;
using switchyard::testing::TransportOutcome;

namespace {

QList<QSocketNotifier *> enabledNotifiers(const upstream::CurlTransport &transport)
{
    QList<QSocketNotifier *> enabled;
    for (QSocketNotifier *notifier : transport.findChildren<QSocketNotifier *>()) {
        if (notifier->isEnabled())
            enabled.append(notifier);
    }
    return enabled;
}

} // namespace

// The libcurl transport on its own, on the engine thread's event dispatcher, against a fake
// provider on a real loopback socket: what a call on a kept-alive connection costs the event loop.
class CurlTransportTest : public QObject {
    Q_OBJECT
private slots:
    void headersGoOutAsGivenAndComeBackLowerCased();
    void callsOnAKeptAliveConnectionReuseItsNotifier();
    void aConnectionTheProviderClosesWhileIdleIsNoLongerWatched();
    void hostNamesAreResolvedWithoutLeavingNotifiersBehind();
    void aSentBodyIsLetGoOnceTheAnswerBegins_data();
    void aSentBodyIsLetGoOnceTheAnswerBegins();
    void aStreamIsReadThroughASmallBufferWithoutLosingAByte();
    void aSocketThisProcessCannotOpenIsReportedAsItsOwnLimit();

private:
    // Makes one non-streamed call and waits for its end.
    static bool call(upstream::CurlTransport &transport, const QByteArray &baseUrl,
                     TransportOutcome &outcome)
    {
        upstream::UpstreamRequest request;
        request.url = QUrl::fromEncoded(baseUrl + "/chat/completions");
        request.headers = {{"Content-Type", "application/json"}};
        request.body = chatBody("test-model", false);
        const std::unique_ptr<upstream::UpstreamCall> running = transport.start(request, &outcome);
        return QTest::qWaitFor([&] { return outcome.finished; }, 5000);
    }
};

// The request's header lines reach the provider as given, in order, none lost or run
// together (the transport lays them out for libcurl itself); the answer's status is read from its
// status line and its header names come back lower-cased with their values trimmed.
void CurlTransportTest::headersGoOutAsGivenAndComeBackLowerCased()
{
    FakeUpstream fake;
    fake.mode = FakeUpstream::Mode::Status;
    fake.status = 429;
    fake.extraHeaders = {{"X-RateLimit-Remaining-Requests", "  0  "}, {"Retry-After", "7"}};
    upstream::CurlTransport transport;
    upstream::UpstreamRequest request;
    request.url = QUrl::fromEncoded(fake.baseUrl() + "/chat/completions");
    const QByteArray longValue = "Bearer " + QByteArray(3000, 'k');
    request.headers = {{"Content-Type", "application/json"},
                       {"Authorization", longValue},
                       {"X-Trace", "a:b;c=d"},
                       {"x-lower", "v"}};
    request.body = chatBody("test-model", false, "hi");
    TransportOutcome outcome;
    const std::unique_ptr<upstream::UpstreamCall> running = transport.start(request, &outcome);
    QTRY_VERIFY_WITH_TIMEOUT(outcome.finished, 5000);
    QCOMPARE(outcome.status, 429);
    QCOMPARE(fake.requests().size(), 1);
    const FakeUpstream::ReceivedRequest &received = fake.requests().first();
    QCOMPARE(received.header("content-type"), QByteArray("application/json"));
    QCOMPARE(received.header("authorization"), longValue);
    QCOMPARE(received.header("x-trace"), QByteArray("a:b;c=d"));
    QCOMPARE(received.header("x-lower"), QByteArray("v"));
    QVERIFY(received.header("expect").isEmpty()); // no "100 Continue" wait

    upstream::UpstreamResponseHead head;
    head.headers = outcome.headers;
    QCOMPARE(head.header("x-ratelimit-remaining-requests"), QByteArray("0"));
    QCOMPARE(head.header("retry-after"), QByteArray("7"));
    QCOMPARE(head.header("content-type"), QByteArray("application/json"));
    for (const auto &[name, value] : std::as_const(outcome.headers))
        QCOMPARE(name, name.toLower());
}

void CurlTransportTest::callsOnAKeptAliveConnectionReuseItsNotifier()
{
    QVERIFY2(dynamic_cast<eventloop::EpollEventDispatcher *>(QAbstractEventDispatcher::instance()),
             "the test runs on the engine's dispatcher");
    FakeUpstream fake;
    upstream::CurlTransport transport;

    TransportOutcome first;
    QVERIFY(call(transport, fake.baseUrl(), first));
    QCOMPARE(first.error, upstream::TransportError::None);
    QCOMPARE(first.status, 200);
    // Between calls the idle connection's read notifier stays: nothing is readable on it.
    const QList<QSocketNotifier *> idle = enabledNotifiers(transport);
    QCOMPARE(idle.size(), 1);
    QCOMPARE(idle.first()->type(), QSocketNotifier::Read);
    const QPointer<QSocketNotifier> kept = idle.first();

    const eventloop::DispatcherCounters before = dispatcherCounters();
    TransportOutcome second;
    QVERIFY(call(transport, fake.baseUrl(), second));
    const eventloop::DispatcherCounters after = dispatcherCounters();

    QCOMPARE(second.error, upstream::TransportError::None);
    QCOMPARE(second.status, 200);
    QVERIFY(second.body.contains("chatcmpl-fake"));
    QCOMPARE(fake.requests().size(), 2);
    QCOMPARE(fake.closedConnections(), 0); // the same connection carried both calls
    QVERIFY(kept);
    QCOMPARE(enabledNotifiers(transport), QList<QSocketNotifier *>{kept.data()});
    // Neither side of the connection left or joined the kernel's epoll set for the second call.
    QCOMPARE(after.epollAdds, before.epollAdds);
    QCOMPARE(after.epollDeletes, before.epollDeletes);
}

void CurlTransportTest::aConnectionTheProviderClosesWhileIdleIsNoLongerWatched()
{
    FakeUpstream fake;
    upstream::CurlTransport transport;
    TransportOutcome first;
    QVERIFY(call(transport, fake.baseUrl(), first));
    QCOMPARE(first.status, 200);
    QCOMPARE(enabledNotifiers(transport).size(), 1);
    const QPointer<QSocketNotifier> kept = enabledNotifiers(transport).first();

    // The provider ends the idle connection: its socket turns readable (end of stream) with no
    // call to read it. Left enabled, the notifier would fire on every pass of the loop.
    fake.closeConnections();
    QTRY_VERIFY_WITH_TIMEOUT(!kept || !kept->isEnabled(), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(fake.closedConnections(), 1, 5000);

    // The next call finds the connection dead, closes it and opens another.
    TransportOutcome second;
    QVERIFY(call(transport, fake.baseUrl(), second));
    QCOMPARE(second.error, upstream::TransportError::None);
    QCOMPARE(second.status, 200);
    QCOMPARE(fake.requests().size(), 2);
    QTRY_VERIFY_WITH_TIMEOUT(!kept, 5000); // deleted with the socket it watched
    QCOMPARE(enabledNotifiers(transport).size(), 1);
}

void CurlTransportTest::hostNamesAreResolvedWithoutLeavingNotifiersBehind()
{
    // "localhost" goes through libcurl's resolver, which watches a socket of its own and closes
    // it without the transport's close callback; "::1" may be tried first and refused.
    if (QHostInfo::fromName(QStringLiteral("localhost")).addresses().isEmpty())
        QSKIP("this machine resolves no address for localhost (no /etc/hosts entry)");
    FakeUpstream fake;
    upstream::CurlTransport transport;
    const QByteArray byName = "http://localhost:" + QByteArray::number(fake.port()) + "/v1";
    for (int round = 0; round < 2; ++round) {
        TransportOutcome outcome;
        QVERIFY(call(transport, byName, outcome));
        QCOMPARE(outcome.error, upstream::TransportError::None);
        QCOMPARE(outcome.status, 200);
        QCOMPARE(enabledNotifiers(transport).size(), 1); // the kept connection's, only
    }
    QCOMPARE(fake.closedConnections(), 0);
}

void CurlTransportTest::aSentBodyIsLetGoOnceTheAnswerBegins_data()
{
    QTest::addColumn<int>("contentBytes");
    // libcurl copies a body under 64 KiB into the request's head; a larger one it sends from
    // the transport's buffer, piece by piece.
    QTest::newRow("copied behind the head") << 1000;
    QTest::newRow("sent from the body") << 200 * 1000;
}

void CurlTransportTest::aSentBodyIsLetGoOnceTheAnswerBegins()
{
    QFETCH(int, contentBytes);
    FakeUpstream fake;
    fake.manualStreaming = true; // the stream is held open after its head
    upstream::CurlTransport transport;
    upstream::UpstreamRequest request;
    request.url = QUrl::fromEncoded(fake.baseUrl() + "/chat/completions");
    request.headers = {{"Content-Type", "application/json"}};
    const QByteArray body = chatBody("test-model", true, QByteArray(contentBytes, 'x'));
    request.body = body;
    TransportOutcome outcome;
    const std::unique_ptr<upstream::UpstreamCall> running = transport.start(request, &outcome);
    request.body = QByteArray();
    QVERIFY(!body.isDetached()); // the transport holds it while it is being sent

    QTRY_COMPARE_WITH_TIMEOUT(outcome.status, 200, 5000);
    QVERIFY(!outcome.finished);
    // The answer has begun and every byte of the request went out: the transport keeps none of
    // it for the rest of the stream, nor the answer's head, delivered once.
    QVERIFY(body.isDetached());
    QVERIFY(!outcome.headers.isEmpty());
    QVERIFY(outcome.headers.isDetached());

    QVERIFY(QTest::qWaitFor(
        [&] {
            fake.releaseEvent();
            return outcome.finished;
        },
        5000));
    QCOMPARE(outcome.error, upstream::TransportError::None);
    QVERIFY(outcome.body.contains("[DONE]"));
    QCOMPARE(fake.requests().size(), 1);
    QCOMPARE(fake.requests().first().body, body);
}

void CurlTransportTest::aStreamIsReadThroughASmallBufferWithoutLosingAByte()
{
    FakeUpstream fake;
    fake.eventPaddingBytes = 6000; // each event several times the stream's receive buffer
    upstream::CurlTransport transport;
    upstream::UpstreamRequest request;
    request.url = QUrl::fromEncoded(fake.baseUrl() + "/chat/completions");
    request.headers = {{"Content-Type", "application/json"}};
    request.body = chatBody("test-model", true);
    request.answerStreams = true;
    TransportOutcome outcome;
    const std::unique_ptr<upstream::UpstreamCall> running = transport.start(request, &outcome);
    QVERIFY(QTest::qWaitFor([&] { return outcome.finished; }, 5000));

    QCOMPARE(outcome.error, upstream::TransportError::None);
    QCOMPARE(outcome.status, 200);
    QVERIFY(outcome.largestPiece > 0);
    QVERIFY2(outcome.largestPiece <= upstream::CurlTransport::kStreamReceiveBufferBytes,
             QByteArray::number(outcome.largestPiece).constData());
    // Every event arrived whole, in order, however many reads each took.
    const QList<QByteArray> events = outcome.body.split('\n');
    int padded = 0;
    for (const QByteArray &line : events) {
        if (line.startsWith("data: {"))
            padded += line.size() > 6000 ? 1 : 0;
    }
    QCOMPARE(padded, fake.streamEvents);
    QVERIFY(outcome.body.endsWith("data: [DONE]\n\n"));
}

void CurlTransportTest::aSocketThisProcessCannotOpenIsReportedAsItsOwnLimit()
{
    FakeUpstream fake;
    upstream::CurlTransport transport;
    TransportOutcome refused;
    {
        const testing::DescriptorsTaken taken;
        QVERIFY(taken.full());
        QVERIFY(call(transport, fake.baseUrl(), refused));
    }
    // Not "could not connect", which the executor would hold against the provider.
    QCOMPARE(refused.error, upstream::TransportError::LocalResources);
    QVERIFY2(refused.description.contains(QString::fromLocal8Bit(std::strerror(EMFILE))),
             qPrintable(refused.description));
    QCOMPARE(refused.status, 0);
    QCOMPARE(fake.requests().size(), 0);

    // With descriptors free again, the next call connects as usual.
    TransportOutcome next;
    QVERIFY(call(transport, fake.baseUrl(), next));
    QCOMPARE(next.error, upstream::TransportError::None);
    QCOMPARE(next.status, 200);
    QCOMPARE(fake.requests().size(), 1);
}

int main(int argc, char **argv)
{
    // The engine thread's dispatcher, whose counters show what reaches the kernel's epoll set
    // (SWITCHYARD_TEST_EVENT_DISPATCHER=epoll has installed one already).
    if (!QAbstractEventDispatcher::instance())
        QCoreApplication::setEventDispatcher(new eventloop::EpollEventDispatcher);
    QCoreApplication app(argc, argv);
    CurlTransportTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_curl_transport.moc"
