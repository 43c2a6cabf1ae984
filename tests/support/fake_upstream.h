#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QTcpServer>
#include <QTcpSocket>
#include <functional>
#include <memory>
#include <vector>

namespace switchyard::testing {

// A fake OpenAI-compatible provider on 127.0.0.1, port 0, speaking raw HTTP/1.1 so a test can
// make it misbehave exactly: slow, failing, rate limiting, hanging, cutting a stream mid-way or
// sending garbage. Lives on the test's thread.
class FakeUpstream final : public QObject {
    Q_OBJECT
public:
    enum class Mode {
        Answer,       // 200 with a JSON completion, or an SSE stream when the request streams
        Status,       // `status` with `statusBody` and `extraHeaders`
        Hang,         // read the request, never answer
        Reset,        // read the request, then drop the connection
        Garbage,      // 200 application/json whose body is not JSON
        CutStream,    // 200 event stream, `cutAfterEvents` events, then close without an end
        StreamNoDone, // a properly ended event stream that never sends [DONE]
        NotAStream,   // a JSON answer to a streamed request
        // Answers a connection's first request as Answer; reads any later request on it, then
        // closes the connection without answering: a provider dropping a kept-alive
        // connection just as a request arrived, after it may already have started the call.
        CloseOnReuse,
    };

    struct ReceivedRequest {
        QByteArray method;
        QByteArray path;
        QList<QPair<QByteArray, QByteArray>> headers; // names lower-cased
        QByteArray body;
        QByteArray header(QByteArrayView name) const;
    };

    // The certificate (PEM, with the chain a client needs) and key a TLS fake presents.
    struct TlsFiles {
        QString certificateFile;
        QString privateKeyFile;
    };

    explicit FakeUpstream(QObject *parent = nullptr);
    // The same fake behind TLS on its port: HTTPS only.
    explicit FakeUpstream(const TlsFiles &tls, QObject *parent = nullptr);
    ~FakeUpstream() override;

    quint16 port() const { return m_server->serverPort(); }
    QByteArray baseUrl() const; // "http://127.0.0.1:PORT/v1", https for a TLS fake

    // Behaviour for the next requests.
    Mode mode = Mode::Answer;
    // Modes for the next requests, one each, taken from the front as requests arrive; `mode`
    // applies once it is empty. For "fails once, then answers".
    QList<Mode> scriptedModes;
    int status = 500;
    QByteArray statusBody = R"({"error":{"message":"boom","type":"server_error"}})";
    // The Content-Type of a Status answer: with status 200 and an event-stream type, the fake
    // replays a scripted stream in another protocol's words.
    QByteArray statusContentType = "application/json";
    // A Status answer's body is an OpenAI error whose message repeats the request's path and
    // every header, credentials included, instead of `statusBody`.
    bool echoHeadersInStatus = false;
    QList<QPair<QByteArray, QByteArray>> extraHeaders;
    // The answer to a non-streamed request (Answer) or to any request (NotAStream).
    QByteArray completionBody = R"({"id":"chatcmpl-fake","object":"chat.completion",)"
                                R"("model":"fake","choices":[{"index":0,"message":)"
                                R"({"role":"assistant","content":"hi"},"finish_reason":"stop"}]})";
    int answerDelayMs = 0;     // before the head of the answer
    int streamEvents = 3;      // content events before the final one and [DONE]
    int eventIntervalMs = 5;   // between streamed events
    int eventPaddingBytes = 0; // extra content per streamed event, for large answers
    int cutAfterEvents = 2;
    // Event-stream bytes sent after [DONE], as a misbehaving provider might.
    QByteArray afterDone;
    bool closeAfterDone = false; // drop the connection right after [DONE], before the end
    // When false, [DONE] is sent but the response is never ended: the connection stays open.
    bool endAfterDone = true;
    // When true, streamed events are held until releaseEvent() is called: a test can prove the
    // gateway relays an event before the next one exists.
    bool manualStreaming = false;

    void releaseEvent();
    // Closes every open connection from the fake's side, as a provider ending idle kept-alive
    // connections does.
    void closeConnections();

    // Bytes the fake has written that the gateway has not yet read off the socket.
    qint64 pendingWriteBytes() const;

    const QList<ReceivedRequest> &requests() const { return m_requests; }
    // Requests that carried this x-request-id: one per attempt the gateway made on this fake.
    int requestsWithId(const QByteArray &requestId) const;
    int openConnections() const { return m_openConnections; }
    int closedConnections() const { return m_closedConnections; }
    int answersCompleted() const { return m_answersCompleted; }

private:
    struct Connection;
    void onNewConnection();
    void onReadyRead(Connection *connection);
    void answer(Connection *connection, const ReceivedRequest &request, Mode modeNow);
    void writeEvent(Connection *connection, const QByteArray &json);
    void streamNext(Connection *connection);
    void finishStream(Connection *connection);

    void listen();

    std::unique_ptr<QTcpServer> m_server;
    bool m_tls = false;
    QList<ReceivedRequest> m_requests;
    // Every connection's state lives as long as the fake: a socket can vanish inside any
    // callback (a reset, a cut), and timers may still name its connection afterwards.
    std::vector<std::unique_ptr<Connection>> m_connections;
    QList<Connection *> m_manualStreams;
    int m_openConnections = 0;
    int m_closedConnections = 0;
    int m_answersCompleted = 0;
};

// A file of the test CA and its loopback server certificate, under tests/data/tls/:
// "ca.pem", "server.pem", "server.key" (regenerate.sh there says how they were made).
QString tlsTestFile(const QString &name);
FakeUpstream::TlsFiles loopbackTlsFiles();

// An OpenAI chat completion body for tests.
QByteArray chatBody(const QByteArray &model, bool stream, const QByteArray &content = "hello");

} // namespace switchyard::testing
