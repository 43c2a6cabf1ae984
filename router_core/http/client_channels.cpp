#include "http/client_channels.h"

#include <QTcpSocket>

namespace switchyard::http {

OpenAiChannel::OpenAiChannel(ResponseWriter writer) : m_writer(std::move(writer)) {}

void OpenAiChannel::setListener(execution::ClientListener *listener)
{
    QTcpSocket *socket = m_writer.socket();
    if (!socket)
        return;
    // Qt deletes the socket when the client goes; the upstream call must stop at once with it.
    connect(socket, &QAbstractSocket::disconnected, this, [listener] { listener->onClientGone(); });
    connect(socket, &QIODevice::bytesWritten, this, [listener] { listener->onClientDrained(); });
}

void OpenAiChannel::sendAnswer(int status, const HeaderList &headers, const QByteArray &openAiJson,
                               execution::Dialect)
{
    m_writer.sendWhole(status, headers, "application/json", openAiJson);
}

void OpenAiChannel::sendError(const protocol::ApiError &error, const HeaderList &headers)
{
    m_writer.sendError(error, headers);
}

void OpenAiChannel::beginStream(const HeaderList &headers, execution::Dialect)
{
    m_writer.beginEventStream(headers);
}

void OpenAiChannel::sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow)
{
    if (events.size() == 1) {
        m_writer.writeStreamData(events.front().toWire(), sendNow);
        return;
    }
    QByteArray wire;
    for (const upstream::SseEvent &event : events)
        wire.append(event.toWire());
    m_writer.writeStreamData(wire, sendNow);
}

void OpenAiChannel::failStream(const protocol::ApiError &error)
{
    // An error event the OpenAI SDKs raise as an error; no [DONE], so it never looks complete.
    upstream::SseEvent event;
    event.data = error.toJson();
    m_writer.writeStreamData(event.toWire());
    m_writer.endEventStream();
}

void OpenAiChannel::endStream()
{
    m_writer.endEventStream();
}

void OpenAiChannel::abort()
{
    if (QTcpSocket *socket = m_writer.socket())
        socket->abort();
}

void MessagesChannel::sendAnswer(int status, const HeaderList &headers,
                                 const QByteArray &openAiJson, execution::Dialect)
{
    const MessagesIngress::WholeAnswer answer = m_messages.answer(status, openAiJson);
    m_writer.sendWhole(answer.status, headers, "application/json", answer.body);
}

void MessagesChannel::sendError(const protocol::ApiError &error, const HeaderList &headers)
{
    MessagesIngress::sendError(m_writer, error, headers);
}

void MessagesChannel::sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow)
{
    m_writer.writeStreamData(m_messages.streamEvents(events), sendNow);
}

void MessagesChannel::failStream(const protocol::ApiError &error)
{
    m_writer.writeStreamData(m_messages.streamError(error));
    m_writer.endEventStream();
}

} // namespace switchyard::http
