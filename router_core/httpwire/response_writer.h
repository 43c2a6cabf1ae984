#pragma once

#include "protocol/gateway_headers.h"
#include "protocol/openai_error.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QPointer>
#include <QTcpSocket>
#include <functional>
#include <memory>
#include <vector>

namespace switchyard::httpwire {

using protocol::HeaderList;

// Sees an answer as the client gets it, before the wire's framing: for whoever keeps answers to
// give them again (the duplicate guard on Idempotency-Key, the response cache). The writer owns
// it and tells it the end once.
class AnswerTap {
public:
    virtual ~AnswerTap() = default;
    virtual void whole(int status, const HeaderList &headers, QByteArrayView contentType,
                       QByteArrayView body) = 0;
    virtual void streamBegun(const HeaderList &headers) = 0;
    virtual void streamData(QByteArrayView bytes) = 0;
    // The answer is over. `complete` is false for an event stream that ended with an error event
    // (markStreamFailed), for a client gone before the end, and for a writer dropped without an
    // answer.
    virtual void ended(bool complete) = 0;
};

// Writes one answer to the client's socket, framing the bytes itself: Qt 6.4's
// QHttpServerResponder has no chunked encoding, writes a status line and each header as several
// small socket writes, and Qt 6.8 replaced those calls. So the answer's bytes are built here and
// nowhere else.
//
// On a plain TCP connection an answer goes straight to the kernel while nothing of it is queued:
// a QTcpSocket copies every write into a write buffer that keeps a 32 KiB block per connection
// for as long as the connection lives, which is most of a held stream's memory at 10,000
// streams (docs/benchmarks.md). Whatever the kernel does not take at once goes to Qt's buffer,
// which sends it as the client reads and reports it drained with bytesWritten(), as before. A
// TLS connection always writes through Qt, which encrypts.
//
// The client socket is watched through a QPointer: Qt deletes it when the client disconnects.
class ResponseWriter {
public:
    explicit ResponseWriter(QTcpSocket *socket);
    ResponseWriter(ResponseWriter &&other) noexcept;
    ~ResponseWriter();

    // How the client's connection goes on (IncomingRequest): an answer to a connection that
    // closes after it says `Connection: close`, one to an HTTP/1.0 client that keeps its
    // connection says `keep-alive`; and an event stream to an HTTP/1.0 client, which knows no
    // chunked coding, is ended by closing the connection.
    void setClientConnection(bool http10, bool closesAfterAnswer)
    {
        m_http10 = http10;
        m_closesAfterAnswer = closesAfterAnswer;
    }

    // Called once when the answer is complete, or when the writer is dropped without one.
    void setCompletionHook(std::function<void()> hook) { m_completionHook = std::move(hook); }
    // Shows the answer to `tap` as it is written (see AnswerTap), beside any tap added before.
    void addAnswerTap(std::unique_ptr<AnswerTap> tap) { m_taps.push_back(std::move(tap)); }
    // A header every answer of this writer carries after its own (`x-switchyard-cache`), which
    // no tap sees: a kept answer given again says its own.
    void addHeader(QByteArray name, QByteArray value)
    {
        m_extraHeaders.append({std::move(name), std::move(value)});
    }

    bool clientConnected() const { return !m_socket.isNull() && m_socket->isOpen(); }
    QTcpSocket *socket() const { return m_socket.data(); }
    bool headersSent() const { return m_headersSent; }
    bool finished() const { return m_finished; }
    // Bytes written but not yet taken by the client's socket.
    qint64 pendingBytes() const { return m_out.size() + (m_socket ? m_socket->bytesToWrite() : 0); }

    // A complete answer with a Content-Length.
    void sendWhole(int status, const HeaderList &headers, QByteArrayView contentType,
                   QByteArrayView body);
    void sendError(const protocol::ApiError &error, const HeaderList &headers);

    // A chunked text/event-stream answer, written event by event as it arrives. `sendNow` false
    // holds the head for the first events, which the caller writes at once: the client then gets
    // both in one segment.
    void beginEventStream(const HeaderList &headers, bool sendNow = true);
    // `sendNow` false holds the bytes for the next write that sends (the stream's end comes
    // right after [DONE]: one send instead of two), or for sendHeld().
    void writeStreamData(QByteArrayView bytes, bool sendNow = true);
    // Sends what writeStreamData held, if the stream has not ended since.
    void sendHeld();
    void endEventStream();
    // The stream is ending in a failure (its error event follows): the answer is not whole.
    void markStreamFailed() { m_streamFailed = true; }

private:
    // Appends the status line and `headers` to m_out.
    void appendHead(int status, const HeaderList &headers);
    // Sends `bytes`: straight to the kernel while Qt holds nothing unsent, the rest through Qt.
    void send(QByteArrayView bytes);
    // Sends m_out and gives its buffer back to the thread (borrowFramingBuffer).
    void sendOut();
    // m_out, with a buffer borrowed from the thread if it has none.
    QByteArray &framing();
    void markFinished(bool complete);
    void endTap(bool complete);

    QPointer<QTcpSocket> m_socket;
    bool m_sendsDirectly = false; // plain TCP: see the class comment
    bool m_http10 = false;
    bool m_closesAfterAnswer = false;
    bool m_closeDelimited = false; // an event stream the connection's close ends
    QByteArray m_out;              // bytes framed and not yet sent
    bool m_headersSent = false;
    bool m_finished = false;
    bool m_streamFailed = false;
    std::function<void()> m_completionHook;
    std::vector<std::unique_ptr<AnswerTap>> m_taps;
    HeaderList m_extraHeaders;
};

} // namespace switchyard::httpwire
