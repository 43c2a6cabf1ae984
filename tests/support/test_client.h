#pragma once

#include "httpwire/chunked_encoding.h"
#include "upstream/sse_parser.h"

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QTcpSocket>

namespace switchyard::testing {

// A raw HTTP/1.1 client on one connection: it sees exactly the bytes and framing the gateway
// sends, and records each SSE event the moment it arrives.
class TestClient final : public QObject {
    Q_OBJECT
public:
    explicit TestClient(quint16 port, QObject *parent = nullptr);
    // Connects from `from`, such as 127.0.0.2, rather than from the address the kernel picks:
    // a second client address on one machine.
    TestClient(quint16 port, const QHostAddress &from, QObject *parent = nullptr);

    // Sends one request; the connection stays open for keep-alive.
    void send(const QByteArray &method, const QByteArray &path, const QByteArray &body = {},
              const QList<QPair<QByteArray, QByteArray>> &headers = {});
    void post(const QByteArray &path, const QByteArray &body,
              const QList<QPair<QByteArray, QByteArray>> &headers = {})
    {
        send("POST", path, body, headers);
    }
    // Sends bytes exactly as given, for framing the helpers above would never produce (a
    // header block whose body follows later, a declared length that is never sent).
    void sendRaw(const QByteArray &bytes);
    // Sends more bytes of the current request without resetting what was received so far.
    void sendMore(const QByteArray &bytes) { m_socket.write(bytes); }
    // Stops taking bytes off the socket, as a slow client would: the kernel buffers fill and
    // the gateway's writes back up. resumeReading() reads everything that waited.
    void pauseReading();
    void resumeReading();
    void disconnectNow() { m_socket.abort(); }

    // True once connecting failed (refused, reset before the connection was up).
    bool connectionFailed() const { return m_connectionFailed; }

    bool headReceived() const { return m_status != 0; }
    bool finished() const { return m_finished; } // the whole answer, framing included
    bool connectionClosed() const { return m_closed; }
    int status() const { return m_status; }
    // Statuses of interim answers (such as "100 Continue") received before the final one.
    const QList<int> &interimStatuses() const { return m_interimStatuses; }
    QByteArray header(QByteArrayView lowerCaseName) const;
    const QByteArray &body() const { return m_body; }
    // Every byte received on the connection, across answers: for checking their order.
    const QByteArray &rawReceived() const { return m_raw; }
    const QList<upstream::SseEvent> &events() const { return m_events; }
    bool chunked() const { return m_chunked; }
    bool framingError() const { return m_framingError; }

    // Waits (spinning the event loop) until the answer is finished; false on timeout.
    bool waitForFinished(int timeoutMs = 10000);

private:
    void resetAnswer();
    void onReadyRead();
    bool parseHead();
    void consumeBody(QByteArrayView bytes);

    QTcpSocket m_socket;
    QByteArray m_buffer;
    int m_status = 0;
    QList<int> m_interimStatuses;
    QList<QPair<QByteArray, QByteArray>> m_headers;
    bool m_headersDone = false;
    bool m_chunked = false;
    qint64 m_contentLength = -1;
    httpwire::ChunkedDecoder m_decoder;
    upstream::SseParser m_sse;
    QByteArray m_body;
    QList<upstream::SseEvent> m_events;
    bool m_finished = false;
    bool m_closed = false;
    bool m_connectionFailed = false;
    bool m_framingError = false;
    bool m_readingPaused = false;
    QByteArray m_raw;
};

// The head of a JSON chat completion POST whose body has `bodyBytes`, as raw bytes: for tests
// that write several requests at once or hold a body back. `extraHeaders` each end in CR LF.
inline QByteArray rawChatHead(qsizetype bodyBytes, const QByteArray &extraHeaders = {})
{
    return "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           "Content-Type: application/json\r\n" +
           extraHeaders + "Content-Length: " + QByteArray::number(bodyBytes) + "\r\n\r\n";
}

} // namespace switchyard::testing
