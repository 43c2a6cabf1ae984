#include "httpwire/response_writer.h"

#include "httpwire/chunked_encoding.h"
#include "httpwire/status_line.h"
#include "protocol/byte_append.h"
#include "protocol/decimal_text.h"

#include <QSslSocket>
#include <cerrno>
#include <sys/socket.h>
#include <utility>

namespace switchyard::httpwire {

namespace {

// A whole answer up to this size leaves in one send with its head; a larger body is sent from
// where it is rather than copied behind the head.
constexpr qsizetype kMostBodyBytesCopied = 64 * 1024;

// Sends what the kernel takes now, without blocking. Returns the bytes taken: 0 when the socket
// buffer is full or the connection failed, which the caller leaves to Qt to find.
qsizetype sendNow(qintptr descriptor, QByteArrayView bytes)
{
    qsizetype sent = 0;
    while (sent < bytes.size()) {
        const ssize_t taken = ::send(int(descriptor), bytes.data() + sent,
                                     size_t(bytes.size() - sent), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (taken > 0) {
            sent += taken;
            continue;
        }
        if (taken < 0 && errno == EINTR)
            continue;
        break;
    }
    return sent;
}

} // namespace

ResponseWriter::ResponseWriter(QTcpSocket *socket)
    : m_socket(socket), m_sendsDirectly(socket && !qobject_cast<QSslSocket *>(socket))
{}

ResponseWriter::ResponseWriter(ResponseWriter &&other) noexcept
    : m_socket(std::move(other.m_socket)), m_sendsDirectly(other.m_sendsDirectly),
      m_http10(other.m_http10), m_closesAfterAnswer(other.m_closesAfterAnswer),
      m_closeDelimited(other.m_closeDelimited), m_out(std::move(other.m_out)),
      m_headersSent(other.m_headersSent), m_finished(other.m_finished),
      m_streamFailed(other.m_streamFailed),
      m_completionHook(std::exchange(other.m_completionHook, nullptr)),
      m_taps(std::move(other.m_taps)), m_extraHeaders(std::move(other.m_extraHeaders))
{}

ResponseWriter::~ResponseWriter()
{
    endTap(false); // dropped without a whole answer
    if (m_completionHook)
        std::exchange(m_completionHook, nullptr)();
}

void ResponseWriter::endTap(bool complete)
{
    for (const std::unique_ptr<AnswerTap> &tap : std::exchange(m_taps, {}))
        tap->ended(complete);
}

void ResponseWriter::markFinished(bool complete)
{
    m_finished = true;
    endTap(complete);
    if (m_completionHook)
        std::exchange(m_completionHook, nullptr)();
}

void ResponseWriter::appendHead(int status, const HeaderList &headers)
{
    m_headersSent = true;
    QByteArray &out = framing();
    // Sized once for the whole head (and the few lines its callers add): grown line by line it
    // was reallocated several times, on every answer's way to its first byte.
    qsizetype headBytes = 160;
    for (const auto &[name, value] : headers)
        headBytes += name.size() + value.size() + 4;
    for (const auto &[name, value] : std::as_const(m_extraHeaders))
        headBytes += name.size() + value.size() + 4;
    if (out.capacity() - out.size() < headBytes)
        out.reserve(out.size() + headBytes);
    appendStatusLine(out, status);
    for (const auto &[name, value] : headers)
        protocol::appendPieces(out, {name, ": ", value, "\r\n"});
    for (const auto &[name, value] : std::as_const(m_extraHeaders))
        protocol::appendPieces(out, {name, ": ", value, "\r\n"});
    if (m_closesAfterAnswer)
        out.append("Connection: close\r\n");
    else if (m_http10)
        out.append("Connection: keep-alive\r\n"); // HTTP/1.0 closes unless told otherwise
}

void ResponseWriter::send(QByteArrayView bytes)
{
    if (bytes.isEmpty() || !m_socket)
        return;
    qsizetype sent = 0;
    // Only while Qt holds nothing unsent: bytes sent past its queue would arrive out of order.
    if (m_sendsDirectly && m_socket->bytesToWrite() == 0)
        sent = sendNow(m_socket->socketDescriptor(), bytes);
    if (sent < bytes.size()) {
        m_socket->write(bytes.data() + sent, bytes.size() - sent);
        // Qt would send on the next event-loop pass; the bytes are due now.
        m_socket->flush();
    }
}

void ResponseWriter::sendOut()
{
    if (m_out.isEmpty())
        return;
    // Taken out before sending: flush() emits bytesWritten() at once, and what that starts (a
    // paused provider resumed, delivering what it held) may write to this writer again, which
    // must find an empty buffer rather than send these bytes a second time.
    QByteArray out = std::exchange(m_out, QByteArray());
    send(out);
    giveBackFramingBuffer(std::move(out));
}

QByteArray &ResponseWriter::framing()
{
    if (m_out.capacity() == 0)
        m_out = borrowFramingBuffer();
    return m_out;
}

void ResponseWriter::sendWhole(int status, const HeaderList &headers, QByteArrayView contentType,
                               QByteArrayView body)
{
    if (m_headersSent || !clientConnected())
        return;
    appendHead(status, headers);
    framing().append("Content-Type: ").append(contentType).append("\r\n");
    protocol::appendDecimal(m_out.append("Content-Length: "), body.size()).append("\r\n\r\n");
    if (body.size() <= kMostBodyBytesCopied) {
        m_out.append(body);
        sendOut();
    } else {
        sendOut();
        send(body); // from where it is: a large body is not copied behind its head
    }
    for (const std::unique_ptr<AnswerTap> &tap : m_taps)
        tap->whole(status, headers, contentType, body);
    markFinished(clientConnected());
}

void ResponseWriter::sendError(const protocol::ApiError &error, const HeaderList &headers)
{
    HeaderList all = headers;
    if (!error.retryAfter.isEmpty())
        all.append({"Retry-After", error.retryAfter});
    sendWhole(error.status, all, "application/json", error.toJson());
}

void ResponseWriter::beginEventStream(const HeaderList &headers, bool sendNow)
{
    if (m_headersSent || !clientConnected())
        return;
    // HTTP/1.0 has no chunked coding (RFC 9112 6.1): there the stream ends with the connection.
    m_closeDelimited = m_http10;
    m_closesAfterAnswer = m_closesAfterAnswer || m_closeDelimited;
    appendHead(200, headers);
    framing().append("Content-Type: text/event-stream; charset=utf-8\r\n"
                     "Cache-Control: no-cache\r\n");
    framing().append(m_closeDelimited ? "\r\n" : "Transfer-Encoding: chunked\r\n\r\n");
    for (const std::unique_ptr<AnswerTap> &tap : m_taps)
        tap->streamBegun(headers);
    if (sendNow)
        sendOut(); // the client sees the answer begin before the first event
}

void ResponseWriter::writeStreamData(QByteArrayView bytes, bool sendNow)
{
    if (!m_headersSent || m_finished || !clientConnected())
        return;
    if (!bytes.isEmpty()) {
        for (const std::unique_ptr<AnswerTap> &tap : m_taps)
            tap->streamData(bytes);
        if (m_closeDelimited)
            framing().append(bytes);
        else
            appendChunk(framing(), bytes);
    }
    if (sendNow)
        sendOut(); // an event is worth sending the moment it exists, with a head held for it
}

void ResponseWriter::sendHeld()
{
    if (m_headersSent && !m_finished && clientConnected())
        sendOut();
}

void ResponseWriter::endEventStream()
{
    if (!m_headersSent || m_finished)
        return;
    const bool complete = !m_streamFailed && clientConnected();
    if (clientConnected()) {
        if (!m_closeDelimited)
            framing().append(kLastChunk);
        sendOut();
        if (m_closeDelimited)
            m_socket->disconnectFromHost(); // after what Qt still holds has been sent
    }
    m_out = QByteArray(); // the stream is over: nothing more to frame
    markFinished(complete);
}

} // namespace switchyard::httpwire
