#include "http/response_writer.h"

#include "http/chunked_encoding.h"

#include <utility>

namespace switchyard::http {

ResponseWriter::ResponseWriter(QHttpServerResponder &&responder)
    : m_responder(std::move(responder)), m_socket(m_responder.socket())
{}

ResponseWriter::ResponseWriter(ResponseWriter &&other) noexcept
    : m_responder(std::move(other.m_responder)), m_socket(std::move(other.m_socket)),
      m_headersSent(other.m_headersSent), m_finished(other.m_finished),
      m_completionHook(std::exchange(other.m_completionHook, nullptr))
{}

ResponseWriter::~ResponseWriter()
{
    if (m_completionHook)
        std::exchange(m_completionHook, nullptr)();
}

void ResponseWriter::markFinished()
{
    m_finished = true;
    if (m_completionHook)
        std::exchange(m_completionHook, nullptr)();
}

void ResponseWriter::writeHead(int status, const HeaderList &headers)
{
    m_headersSent = true;
    m_responder.writeStatusLine(static_cast<QHttpServerResponder::StatusCode>(status));
    for (const auto &[name, value] : headers)
        m_responder.writeHeader(name, value);
}

void ResponseWriter::sendWhole(int status, const HeaderList &headers, QByteArrayView contentType,
                               QByteArrayView body)
{
    if (m_headersSent || !clientConnected())
        return;
    writeHead(status, headers);
    m_responder.writeHeader("Content-Type", contentType.toByteArray());
    m_responder.writeHeader("Content-Length", QByteArray::number(body.size()));
    m_responder.writeBody(body.data(), body.size());
    flush();
    markFinished();
}

void ResponseWriter::flush()
{
    // QTcpSocket only buffers on write and sends on the next event-loop pass; the answer is
    // complete, so send it now and save the client that pass.
    if (m_socket)
        m_socket->flush();
}

void ResponseWriter::sendError(const protocol::ApiError &error, const HeaderList &headers)
{
    HeaderList all = headers;
    if (!error.retryAfter.isEmpty())
        all.append({"Retry-After", error.retryAfter});
    sendWhole(error.status, all, "application/json", error.toJson());
}

void ResponseWriter::beginEventStream(const HeaderList &headers)
{
    if (m_headersSent || !clientConnected())
        return;
    writeHead(200, headers);
    m_responder.writeHeader("Content-Type", "text/event-stream; charset=utf-8");
    m_responder.writeHeader("Cache-Control", "no-cache");
    m_responder.writeHeader("Transfer-Encoding", "chunked");
    // writeBody() ends the header block; an empty first write sends the headers now, so the
    // client sees the answer begin before the first event.
    m_responder.writeBody("", 0);
}

void ResponseWriter::writeStreamData(QByteArrayView bytes, bool sendNow)
{
    if (!m_headersSent || m_finished || !clientConnected() || bytes.isEmpty())
        return;
    const QByteArray chunk = encodeChunk(bytes);
    m_responder.writeBody(chunk.constData(), chunk.size());
    if (sendNow)
        flush(); // an event is worth sending the moment it exists
}

void ResponseWriter::endEventStream()
{
    if (!m_headersSent || m_finished)
        return;
    if (clientConnected()) {
        m_responder.writeBody(kLastChunk.data(), kLastChunk.size());
        flush();
    }
    markFinished();
}

} // namespace switchyard::http
