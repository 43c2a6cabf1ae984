#include "http/client_channels.h"

#include "http/gateway_listener.h"
#include "httpwire/chunked_encoding.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTcpSocket>
#include <cctype>

namespace switchyard::http {

namespace {

// A translated answer's headers with the fields translation did not apply, when there are any.
HeaderList withIgnoredFields(const HeaderList &headers, const QStringList &ignoredFields)
{
    if (ignoredFields.isEmpty())
        return headers;
    HeaderList extended = headers;
    extended.append(
        {QByteArray("x-switchyard-ignored-fields"), ignoredFields.join(QLatin1Char(',')).toUtf8()});
    return extended;
}

} // namespace

HttpClientChannel::HttpClientChannel(ResponseWriter writer) : m_writer(std::move(writer)) {}

HttpClientChannel::~HttpClientChannel()
{
    // A finished answer's connection has already let go of its listener: every answer on a
    // listener's connection finishes through the connection queue's completion hook, which calls
    // GatewayListener::answerFinished, and one answer at a time is answered there.
    if (m_watchedThroughConnection && !m_writer.finished())
        GatewayListener::unwatchClient(m_writer.socket(), m_listener);
}

void HttpClientChannel::setListener(execution::ClientListener *listener)
{
    QTcpSocket *socket = m_writer.socket();
    if (!socket)
        return;
    m_listener = listener;
    // Qt deletes the socket when the client goes; the upstream call must stop at once with it.
    // A listener's connection forwards both signals; any other socket is connected here.
    m_watchedThroughConnection = GatewayListener::watchClient(socket, listener);
    if (m_watchedThroughConnection)
        return;
    connect(socket, &QAbstractSocket::disconnected, this, [listener] { listener->onClientGone(); });
    connect(socket, &QIODevice::bytesWritten, this, [listener] { listener->onClientDrained(); });
}

void HttpClientChannel::sendAnswer(int status, const HeaderList &headers,
                                   const QByteArray &openAiJson, execution::Dialect)
{
    m_writer.sendWhole(status, headers, "application/json", openAiJson);
}

void HttpClientChannel::sendError(const protocol::ApiError &error, const HeaderList &headers)
{
    m_writer.sendError(error, headers);
}

void HttpClientChannel::beginStream(const HeaderList &headers, execution::Dialect)
{
    // The first events follow at once (ClientChannel's contract): the head leaves with them.
    m_writer.beginEventStream(headers, false);
}

void HttpClientChannel::sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow)
{
    // Framed in the thread's lent buffer: an event costs no allocation once it has grown, and a
    // held stream keeps no buffer of its own.
    QByteArray wire = httpwire::borrowFramingBuffer();
    for (const upstream::SseEvent &event : events)
        event.appendWire(wire);
    writeStreamBytes(wire, sendNow);
    httpwire::giveBackFramingBuffer(std::move(wire));
}

void HttpClientChannel::writeStreamBytes(QByteArrayView bytes, bool sendNow)
{
    m_writer.writeStreamData(bytes, sendNow);
    if (sendNow || m_heldSendPosted)
        return;
    // The stream's end normally follows within this event-loop pass and leaves with these bytes
    // in one send. When it does not (over HTTP/2 a provider's end often comes in a read of its
    // own), they leave on the next pass, as a buffered socket write would.
    m_heldSendPosted = true;
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_heldSendPosted = false;
            m_writer.sendHeld();
        },
        Qt::QueuedConnection);
}

void HttpClientChannel::failStream(const protocol::ApiError &error)
{
    // An error event the OpenAI SDKs raise as an error; no [DONE], so it never looks complete.
    m_writer.markStreamFailed();
    upstream::SseEvent event;
    event.data = error.toJson();
    m_writer.writeStreamData(event.toWire());
    m_writer.endEventStream();
}

void HttpClientChannel::endStream()
{
    m_writer.endEventStream();
}

void HttpClientChannel::abort()
{
    if (QTcpSocket *socket = m_writer.socket())
        socket->abort();
}

MessagesChannel::MessagesChannel(ResponseWriter writer, QStringList ignoredFields)
    : HttpClientChannel(std::move(writer)), m_ignoredFields(std::move(ignoredFields))
{}

void MessagesChannel::sendAnswer(int status, const HeaderList &headers,
                                 const QByteArray &openAiJson, execution::Dialect dialect)
{
    if (dialect == execution::Dialect::Native) {
        HttpClientChannel::sendAnswer(status, headers, openAiJson, dialect);
        return;
    }
    const MessagesAnswers::WholeAnswer answer = m_messages.answer(status, openAiJson);
    m_writer.sendWhole(answer.status, withIgnoredFields(headers, m_ignoredFields),
                       "application/json", answer.body);
}

void MessagesChannel::sendError(const protocol::ApiError &error, const HeaderList &headers)
{
    MessagesAnswers::sendError(m_writer, error, headers);
}

void MessagesChannel::beginStream(const HeaderList &headers, execution::Dialect dialect)
{
    m_streamDialect = dialect;
    m_writer.beginEventStream(
        dialect == execution::Dialect::Chat ? withIgnoredFields(headers, m_ignoredFields) : headers,
        false);
}

void MessagesChannel::sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow)
{
    if (m_streamDialect == execution::Dialect::Native) {
        HttpClientChannel::sendStreamEvents(events, sendNow);
        return;
    }
    writeStreamBytes(m_messages.streamEvents(events), sendNow);
}

void MessagesChannel::failStream(const protocol::ApiError &error)
{
    m_writer.markStreamFailed();
    m_writer.writeStreamData(m_streamDialect == execution::Dialect::Native
                                 ? MessagesAnswers::passedThroughStreamError(error)
                                 : m_messages.streamError(error));
    m_writer.endEventStream();
}

ResponsesChannel::ResponsesChannel(ResponseWriter writer, ingress::ResponsesChatRequest request,
                                   QByteArray responseId)
    : HttpClientChannel(std::move(writer)), m_ignoredFields(std::move(request.ignoredFields)),
      m_responseId(responseId), m_stream(std::move(request.echo), std::move(responseId))
{}

void ResponsesChannel::sendAnswer(int status, const HeaderList &headers,
                                  const QByteArray &openAiJson, execution::Dialect dialect)
{
    if (dialect == execution::Dialect::Native) {
        HttpClientChannel::sendAnswer(status, headers, openAiJson, dialect);
        return;
    }
    auto translated = ingress::responseFromCompletion(openAiJson, m_stream.echo(), m_responseId);
    if (const auto *error = std::get_if<protocol::ApiError>(&translated)) {
        m_writer.sendError(*error, headers);
        return;
    }
    m_writer.sendWhole(status, withIgnoredFields(headers, m_ignoredFields), "application/json",
                       std::get<QByteArray>(translated));
    if (m_answerHook)
        std::exchange(m_answerHook, {})(std::get<QByteArray>(translated));
}

void ResponsesChannel::beginStream(const HeaderList &headers, execution::Dialect dialect)
{
    m_streamDialect = dialect;
    m_writer.beginEventStream(
        dialect == execution::Dialect::Chat ? withIgnoredFields(headers, m_ignoredFields) : headers,
        false);
}

void ResponsesChannel::sendStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow)
{
    if (m_streamDialect == execution::Dialect::Native) {
        // Only the last sequence number is kept, read without parsing the event.
        const QByteArray &data = events.constLast().data;
        static constexpr QByteArrayView kKey = "\"sequence_number\":";
        if (const qsizetype at = data.lastIndexOf(kKey); at >= 0) {
            qsizetype end = at + kKey.size();
            while (end < data.size() && (data[end] == ' ' || std::isdigit(uchar(data[end]))))
                ++end;
            bool ok = false;
            const qint64 number =
                data.sliced(at + kKey.size(), end - at - kKey.size()).trimmed().toLongLong(&ok);
            if (ok)
                m_lastNativeSequenceNumber = number;
        }
        HttpClientChannel::sendStreamEvents(events, sendNow);
        return;
    }
    QByteArray wire;
    for (const upstream::SseEvent &event : events) {
        for (const upstream::SseEvent &translated : m_stream.feed(event)) {
            wire.append(translated.toWire());
            // The last event of an answer carries the whole response object.
            if (m_answerHook && (translated.event == "response.completed" ||
                                 translated.event == "response.incomplete")) {
                const QJsonObject data = QJsonDocument::fromJson(translated.data).object();
                std::exchange(m_answerHook, {})(QJsonDocument(data.value(u"response").toObject())
                                                    .toJson(QJsonDocument::Compact));
            }
        }
    }
    writeStreamBytes(wire, sendNow);
}

void ResponsesChannel::failStream(const protocol::ApiError &error)
{
    m_writer.markStreamFailed();
    QByteArray wire;
    if (m_streamDialect == execution::Dialect::Native) {
        // The provider's own events went out as they came; the failure is the Responses API's
        // `error` event, which the SDKs raise. Its sequence numbers are the provider's to count.
        wire = ingress::responsesErrorEvent(error, m_lastNativeSequenceNumber + 1).toWire();
    } else {
        for (const upstream::SseEvent &event : m_stream.fail(error))
            wire.append(event.toWire());
    }
    m_writer.writeStreamData(wire);
    m_writer.endEventStream();
}

} // namespace switchyard::http
