#include "http/gateway_listener.h"

#include "http/chunked_encoding.h"
#include "protocol/openai_error.h"
#include "telemetry/trace.h"

#include <QTcpSocket>

namespace switchyard::http {

namespace {

// Follows request boundaries on one connection by peeking at what Qt is about to read.
class ClientConnection final : public QObject {
public:
    ClientConnection(QTcpSocket *socket, qint64 maxBodyBytes)
        : QObject(socket), m_socket(socket), m_maxBodyBytes(maxBodyBytes)
    {
        // Connected before Qt's HTTP server connects its own handler, so this runs first.
        connect(socket, &QIODevice::readyRead, this, &ClientConnection::inspect);
    }

private:
    enum class State { Headers, Body, ChunkedBody, Unframed };

    // Where a header block ends: the block is bytes [0, blockBytes) and the request's body
    // starts at `consumedBytes`. Qt's parser also accepts bare LF line ends, so a guard that
    // looked only for CR LF CR LF could be walked around.
    struct HeaderEnd {
        qsizetype blockBytes = -1;
        qsizetype consumedBytes = 0;
        bool found() const { return blockBytes >= 0; }
    };
    static HeaderEnd findHeaderEnd(QByteArrayView bytes)
    {
        for (qsizetype newline = bytes.indexOf('\n'); newline >= 0;
             newline = bytes.indexOf('\n', newline + 1)) {
            const QByteArrayView rest = bytes.sliced(newline + 1);
            if (rest.startsWith('\n'))
                return {newline, newline + 2};
            if (rest.startsWith("\r\n"))
                return {newline, newline + 3};
        }
        return {};
    }
    // A header block larger than this is refused with 431 (Qt itself would allow about 80 KiB).
    static constexpr qsizetype kMaxHeaderBytes = 64 * 1024;

    void inspect()
    {
        // Qt consumes everything available on each readyRead, so the next call sees new bytes.
        const qint64 available = m_socket->bytesAvailable();
        if (m_state == State::Unframed)
            return;
        if (m_state == State::Body && m_bodyRemaining >= available) {
            m_bodyRemaining -= available; // all body: nothing to look at
            if (m_bodyRemaining == 0)
                m_state = State::Headers;
            return;
        }
        // Reused between calls: peeking allocates nothing once the buffer has grown.
        m_peekBuffer.resize(available);
        m_peekBuffer.resize(std::max<qint64>(0, m_socket->peek(m_peekBuffer.data(), available)));
        const QByteArrayView data(m_peekBuffer);
        qsizetype position = 0;
        while (position < data.size() && m_state != State::Unframed) {
            if (m_state == State::Body) {
                const qint64 take = std::min<qint64>(m_bodyRemaining, data.size() - position);
                m_bodyRemaining -= take;
                position += take;
                if (m_bodyRemaining == 0)
                    m_state = State::Headers;
                continue;
            }
            if (m_state == State::ChunkedBody) {
                // A chunked body declares no size up front: count it as it arrives.
                QByteArray decoded;
                qsizetype consumed = 0;
                const auto status = m_chunkedBody.feed(data.sliced(position), decoded, &consumed);
                m_chunkedBodyBytes += decoded.size();
                position += consumed;
                if (m_chunkedBodyBytes > m_maxBodyBytes) {
                    refuse(protocol::ApiError::payloadTooLarge(m_maxBodyBytes));
                    return;
                }
                if (status == ChunkedDecoder::Status::Malformed)
                    m_state = State::Unframed; // Qt's parser refuses it
                else if (status == ChunkedDecoder::Status::Finished)
                    m_state = State::Headers;
                continue;
            }
            if (m_headerBlock.isEmpty()) {
                // The usual case: a whole header block in this read, parsed in place.
                const HeaderEnd end = findHeaderEnd(data.sliced(position));
                if (end.found() && end.blockBytes <= kMaxHeaderBytes) {
                    const QByteArrayView block = data.sliced(position, end.blockBytes);
                    position += end.consumedBytes;
                    if (!beginRequest(block))
                        return;
                    continue;
                }
            }
            const qsizetype before = m_headerBlock.size();
            m_headerBlock.append(data.sliced(position));
            const HeaderEnd end = findHeaderEnd(m_headerBlock);
            if ((end.found() ? end.blockBytes : m_headerBlock.size()) > kMaxHeaderBytes) {
                // Refused rather than left to Qt: a guard that stopped following here would
                // let the body after these headers through unmeasured.
                refuse(protocol::ApiError{
                    431,
                    QStringLiteral("Request headers are larger than the limit of %1 "
                                   "bytes.")
                        .arg(kMaxHeaderBytes),
                    QStringLiteral("invalid_request_error"),
                    {},
                    QStringLiteral("headers_too_large"),
                    {}});
                return;
            }
            if (!end.found())
                return;
            position += end.consumedBytes - before;
            const QByteArray block = m_headerBlock.left(end.blockBytes);
            m_headerBlock.clear();
            if (!beginRequest(block))
                return;
        }
    }

    // Returns false when the request was refused and the connection is being closed.
    bool beginRequest(QByteArrayView block)
    {
        qint64 contentLength = 0;
        bool validContentLength = true;
        bool chunked = false;
        bool expectsContinue = false;
        qsizetype lineStart = block.indexOf('\n') + 1; // the request line says nothing of size
        while (lineStart > 0 && lineStart < block.size()) {
            const qsizetype lineEnd = block.indexOf('\n', lineStart);
            const QByteArrayView line =
                block.sliced(lineStart, (lineEnd < 0 ? block.size() : lineEnd) - lineStart);
            lineStart = lineEnd < 0 ? block.size() : lineEnd + 1;
            const qsizetype colon = line.indexOf(':');
            if (colon <= 0)
                continue;
            const QByteArrayView name = line.first(colon).trimmed();
            const QByteArrayView value = line.sliced(colon + 1).trimmed();
            if (name.compare("content-length", Qt::CaseInsensitive) == 0)
                contentLength = value.toLongLong(&validContentLength);
            else if (name.compare("transfer-encoding", Qt::CaseInsensitive) == 0)
                chunked = value.toByteArray().toLower().contains("chunked");
            else if (name.compare("expect", Qt::CaseInsensitive) == 0)
                expectsContinue = value.compare("100-continue", Qt::CaseInsensitive) == 0;
        }
        if (!validContentLength || contentLength < 0) {
            refuse(protocol::ApiError{400,
                                      QStringLiteral("Invalid Content-Length header: it must be a "
                                                     "non-negative number of bytes."),
                                      QStringLiteral("invalid_request_error"),
                                      {},
                                      QStringLiteral("invalid_content_length"),
                                      {}});
            return false;
        }
        if (contentLength > m_maxBodyBytes) {
            refuse(protocol::ApiError::payloadTooLarge(m_maxBodyBytes));
            return false;
        }
        if (expectsContinue)
            m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
        if (chunked) {
            m_chunkedBody = ChunkedDecoder();
            m_chunkedBodyBytes = 0;
            m_state = State::ChunkedBody;
        } else if (contentLength > 0) {
            m_bodyRemaining = contentLength;
            m_state = State::Body;
        }
        return true;
    }

    void refuse(const protocol::ApiError &error)
    {
        m_state = State::Unframed;
        // Take the connection away from Qt's parser: it must never buffer this body.
        disconnect(m_socket, &QIODevice::readyRead, nullptr, nullptr);
        connect(m_socket, &QIODevice::readyRead, m_socket,
                [socket = m_socket] { socket->skip(socket->bytesAvailable()); });
        m_socket->skip(m_socket->bytesAvailable());
        const QByteArray body = error.toJson();
        // Refused before Qt parsed the request, so no handler adds the identity headers every
        // answer carries; fresh ids still let a client quote the refusal in a report.
        QByteArray answer = "HTTP/1.1 " + QByteArray::number(error.status) +
                            (error.status == 413   ? " Payload Too Large"
                             : error.status == 431 ? " Request Header Fields Too Large"
                                                   : " Bad Request") +
                            "\r\nContent-Type: application/json\r\n";
        answer += "x-switchyard-request-id: " + telemetry::newRequestId() + "\r\n";
        answer += "x-switchyard-trace-id: " + telemetry::newTraceId() + "\r\n";
        answer += "x-switchyard-provider: none\r\nConnection: close\r\nContent-Length: " +
                  QByteArray::number(body.size()) + "\r\n\r\n" + body;
        m_socket->write(answer);
        connect(m_socket, &QIODevice::bytesWritten, m_socket, [socket = m_socket] {
            if (socket->bytesToWrite() == 0)
                socket->disconnectFromHost();
        });
    }

    QTcpSocket *m_socket;
    qint64 m_maxBodyBytes;
    State m_state = State::Headers;
    QByteArray m_headerBlock; // a header block split across reads
    QByteArray m_peekBuffer;
    qint64 m_bodyRemaining = 0;
    ChunkedDecoder m_chunkedBody;
    qint64 m_chunkedBodyBytes = 0;
};

} // namespace

GatewayListener::GatewayListener(const config::ConfigStore &store, QObject *parent)
    : QTcpServer(parent), m_store(store)
{}

void GatewayListener::incomingConnection(qintptr socketDescriptor)
{
    auto *socket = new QTcpSocket(this);
    if (!socket->setSocketDescriptor(socketDescriptor)) {
        delete socket;
        return;
    }
    // Streamed tokens are small writes that must leave at once: Nagle's algorithm would hold
    // each one back until the client acknowledged the previous (40 ms with delayed ACKs).
    socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    new ClientConnection(socket, m_store.config().server.maxBodyBytes);
    addPendingConnection(socket);
}

} // namespace switchyard::http
