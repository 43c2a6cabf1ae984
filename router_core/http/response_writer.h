#pragma once

#include "protocol/gateway_headers.h"
#include "protocol/openai_error.h"

#include <QByteArray>
#include <QHttpServerResponder>
#include <QList>
#include <QPair>
#include <QPointer>
#include <QTcpSocket>
#include <functional>

namespace switchyard::http {

using protocol::HeaderList;
using protocol::identityHeaders;

// The only code that talks to QHttpServerResponder. Qt 6.4 has no chunked encoding and Qt 6.8
// replaced these calls, so both facts are handled here and nowhere else.
// The client socket is watched through a QPointer: Qt deletes it when the client disconnects.
class ResponseWriter {
public:
    explicit ResponseWriter(QHttpServerResponder &&responder);
    ResponseWriter(ResponseWriter &&other) noexcept;
    ~ResponseWriter();

    // Called once when the answer is complete, or when the writer is dropped without one.
    void setCompletionHook(std::function<void()> hook) { m_completionHook = std::move(hook); }

    bool clientConnected() const { return !m_socket.isNull() && m_socket->isOpen(); }
    QTcpSocket *socket() const { return m_socket.data(); }
    bool headersSent() const { return m_headersSent; }
    bool finished() const { return m_finished; }
    // Bytes written but not yet taken by the client's socket.
    qint64 pendingBytes() const { return m_socket ? m_socket->bytesToWrite() : 0; }

    // A complete answer with a Content-Length.
    void sendWhole(int status, const HeaderList &headers, QByteArrayView contentType,
                   QByteArrayView body);
    void sendError(const protocol::ApiError &error, const HeaderList &headers);

    // A chunked text/event-stream answer, written event by event as it arrives.
    void beginEventStream(const HeaderList &headers);
    // `sendNow` false leaves the bytes queued for the next write that sends (the stream's end
    // comes right after [DONE]: one send instead of two).
    void writeStreamData(QByteArrayView bytes, bool sendNow = true);
    void endEventStream();

private:
    void writeHead(int status, const HeaderList &headers);
    void flush();
    void markFinished();

    QHttpServerResponder m_responder;
    QPointer<QTcpSocket> m_socket;
    bool m_headersSent = false;
    bool m_finished = false;
    std::function<void()> m_completionHook;
};

} // namespace switchyard::http
