// The blocking JSON poster the span export and the alert webhook share, against a real HTTP
// receiver on a loopback port: what it sends, the answer kept up to its cap, a status read
// whatever it is, libcurl's words for a refused connection, and a post cut off on request.
// The post blocks, so it runs on a thread of its own (as in the exporters) while this thread's
// event loop serves the receiver.

#include "posting/json_poster.h"

#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <atomic>
#include <map>
#include <memory>
#include <thread>

using namespace switchyard;
using namespace std::chrono_literals;
using namespace Qt::StringLiterals;
using posting::JsonPoster;
using posting::JsonPosterOptions;
using posting::JsonPostReply;

namespace {

// The far side of the seam: a loopback HTTP/1.1 receiver that reads each request whole (its
// Content-Length says how much body) and writes `response` back, or nothing when it is empty.
class Receiver final : public QObject {
public:
    struct Request {
        QList<QByteArray> headLines; // the request line first
        QByteArray body;

        QByteArray header(const QByteArray &name) const
        {
            for (const QByteArray &line : headLines.mid(1)) {
                const qsizetype colon = line.indexOf(':');
                if (colon > 0 && line.left(colon).trimmed().compare(name, Qt::CaseInsensitive) == 0)
                    return line.mid(colon + 1).trimmed();
            }
            return {};
        }
        bool hasHeader(const QByteArray &name) const
        {
            for (const QByteArray &line : headLines.mid(1)) {
                if (line.left(line.indexOf(':')).trimmed().compare(name, Qt::CaseInsensitive) == 0)
                    return true;
            }
            return false;
        }
    };

    QByteArray response;
    QList<Request> requests;

    Receiver()
    {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection()) {
                socket->setParent(this);
                connect(socket, &QTcpSocket::readyRead, this, [this, socket] { read(socket); });
            }
        });
        m_server.listen(QHostAddress::LocalHost, 0);
    }

    quint16 port() const { return m_server.serverPort(); }
    QByteArray url() const { return "http://127.0.0.1:" + QByteArray::number(port()) + "/v1/in"; }

private:
    void read(QTcpSocket *socket)
    {
        QByteArray &buffer = m_buffers[socket];
        buffer += socket->readAll();
        const qsizetype headEnd = buffer.indexOf("\r\n\r\n");
        if (headEnd < 0)
            return;
        Request request;
        request.headLines = buffer.left(headEnd).split('\n');
        for (QByteArray &line : request.headLines)
            line = line.trimmed();
        const qsizetype length = request.header("content-length").toLongLong();
        if (buffer.size() < headEnd + 4 + length)
            return;
        request.body = buffer.mid(headEnd + 4, length);
        buffer.remove(0, headEnd + 4 + length);
        requests.append(request);
        if (!response.isEmpty())
            socket->write(response);
    }

    QTcpServer m_server;
    std::map<QTcpSocket *, QByteArray> m_buffers;
};

QByteArray httpResponse(int status, const QByteArray &reason, const QByteArray &body)
{
    return "HTTP/1.1 " + QByteArray::number(status) + ' ' + reason +
           "\r\nContent-Type: application/json\r\nContent-Length: " +
           QByteArray::number(body.size()) + "\r\n\r\n" + body;
}

JsonPosterOptions optionsFor(const QByteArray &url)
{
    JsonPosterOptions options;
    options.url = url;
    options.headerLines = {"Authorization: Bearer t-1", "X-Tenant: blue"};
    options.timeout = 60s; // no test waits for it: each ends by an answer, a refusal or a stop
    options.maxAnswerBytes = 16;
    return options;
}

// One post on a thread of its own; finished() turns true once its reply is there to read.
class BackgroundPost {
public:
    BackgroundPost(JsonPoster &poster, QByteArray body, std::function<bool()> shouldStop)
        : m_thread([this, &poster, body = std::move(body), shouldStop = std::move(shouldStop)] {
              m_reply = poster.post(body, shouldStop);
              m_finished.store(true);
          })
    {}
    ~BackgroundPost() { m_thread.join(); }

    bool finished() const { return m_finished.load(); }
    const JsonPostReply &reply() const { return m_reply; }

private:
    JsonPostReply m_reply;
    std::atomic<bool> m_finished{false};
    std::thread m_thread; // last: starts once the members it writes exist
};

const std::function<bool()> kNeverStop = [] { return false; };

} // namespace

class JsonPosterTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sendsTheBodyWithItsHeaders();
    void keepsTheAnswerUpToTheCap();
    void readsAStatusThatIsNotSuccess();
    void saysWhyAConnectionWasRefused();
    void stopCutsOffAPostThatGetsNoAnswer();
};

void JsonPosterTest::sendsTheBodyWithItsHeaders()
{
    Receiver receiver;
    receiver.response = httpResponse(200, "OK", "{}");
    JsonPoster poster(optionsFor(receiver.url()));
    const QByteArray body = R"({"resourceSpans":[]})";

    BackgroundPost post(poster, body, kNeverStop);
    QTRY_VERIFY_WITH_TIMEOUT(post.finished(), 10000);

    QCOMPARE(post.reply().outcome, JsonPostReply::Outcome::Answered);
    QCOMPARE(receiver.requests.size(), 1);
    const Receiver::Request &request = receiver.requests.first();
    QCOMPARE(request.headLines.first(), "POST /v1/in HTTP/1.1"_ba);
    QCOMPARE(request.header("content-type"), "application/json"_ba);
    QCOMPARE(request.header("authorization"), "Bearer t-1"_ba);
    QCOMPARE(request.header("x-tenant"), "blue"_ba);
    QVERIFY(!request.hasHeader("expect")); // libcurl would wait for a 100 Continue first
    QCOMPARE(request.body, body);
}

void JsonPosterTest::keepsTheAnswerUpToTheCap()
{
    Receiver receiver;
    const QByteArray answer = R"({"partialSuccess":{"rejectedSpans":"2"}})";
    QVERIFY(answer.size() > 16);
    receiver.response = httpResponse(200, "OK", answer);
    JsonPoster poster(optionsFor(receiver.url()));

    // Twice on the same poster: the second answer starts empty, not after the first one's bytes.
    for (int round = 0; round < 2; ++round) {
        BackgroundPost post(poster, "{}", kNeverStop);
        QTRY_VERIFY_WITH_TIMEOUT(post.finished(), 10000);
        QCOMPARE(post.reply().outcome, JsonPostReply::Outcome::Answered);
        QCOMPARE(post.reply().httpStatus, 200);
        QCOMPARE(post.reply().answer, answer.left(16));
        QVERIFY(post.reply().error.isEmpty());
    }
    QCOMPARE(receiver.requests.size(), 2);
}

void JsonPosterTest::readsAStatusThatIsNotSuccess()
{
    Receiver receiver;
    receiver.response = httpResponse(503, "Service Unavailable", R"({"code":14})");
    JsonPoster poster(optionsFor(receiver.url()));

    BackgroundPost post(poster, "{}", kNeverStop);
    QTRY_VERIFY_WITH_TIMEOUT(post.finished(), 10000);

    QCOMPARE(post.reply().outcome, JsonPostReply::Outcome::Answered);
    QCOMPARE(post.reply().httpStatus, 503);
    QCOMPARE(post.reply().answer, R"({"code":14})"_ba);
}

void JsonPosterTest::saysWhyAConnectionWasRefused()
{
    quint16 closedPort = 0;
    {
        QTcpServer server; // a port that was just free, and is closed again
        QVERIFY(server.listen(QHostAddress::LocalHost, 0));
        closedPort = server.serverPort();
    }
    JsonPoster poster(optionsFor("http://127.0.0.1:" + QByteArray::number(closedPort) + "/v1/in"));

    BackgroundPost post(poster, "{}", kNeverStop);
    QTRY_VERIFY_WITH_TIMEOUT(post.finished(), 10000);

    const JsonPostReply &reply = post.reply();
    QCOMPARE(reply.outcome, JsonPostReply::Outcome::Failed);
    QCOMPARE(reply.httpStatus, 0);
    // libcurl's error buffer, word for word what the exporters log: "Failed to connect to HOST port
    // PORT after N ms: Couldn't connect to server" (libcurl names ECONNREFUSED so)
    QVERIFY2(reply.error.startsWith(u"Failed to connect to 127.0.0.1 port %1 "_s.arg(closedPort)),
             qPrintable(reply.error));
    QVERIFY2(reply.error.endsWith(u" ms: Couldn't connect to server"_s), qPrintable(reply.error));
}

void JsonPosterTest::stopCutsOffAPostThatGetsNoAnswer()
{
    Receiver receiver; // reads the request and never answers
    JsonPoster poster(optionsFor(receiver.url()));
    std::atomic<bool> stop{false};

    BackgroundPost post(poster, "{}", [&stop] { return stop.load(); });
    QTRY_COMPARE_WITH_TIMEOUT(receiver.requests.size(), 1, 10000);
    QVERIFY(!post.finished()); // the receiver's silence holds it: only the stop may end it now

    stop.store(true);
    QTRY_VERIFY_WITH_TIMEOUT(post.finished(), 10000);
    QCOMPARE(post.reply().outcome, JsonPostReply::Outcome::CutOff);
    QCOMPARE(post.reply().httpStatus, 0);
    QVERIFY(post.reply().answer.isEmpty());
}

QTEST_GUILESS_MAIN(JsonPosterTest)
#include "tst_json_poster.moc"
