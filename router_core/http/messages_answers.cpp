#include "http/messages_answers.h"

namespace switchyard::http {

QByteArray MessagesAnswers::errorBody(const protocol::ApiError &error)
{
    return ingress::anthropicErrorJson(error);
}

void MessagesAnswers::sendError(ResponseWriter &writer, const protocol::ApiError &error,
                                HeaderList headers)
{
    if (!error.retryAfter.isEmpty())
        headers.append({"Retry-After", error.retryAfter});
    writer.sendWhole(error.status, headers, "application/json", errorBody(error));
}

MessagesAnswers::WholeAnswer MessagesAnswers::answer(int status,
                                                     const QByteArray &completionJson) const
{
    auto converted = ingress::messageFromCompletion(completionJson);
    if (const protocol::ApiError *error = std::get_if<protocol::ApiError>(&converted))
        return {error->status, errorBody(*error)};
    return {status, std::get<QByteArray>(std::move(converted))};
}

QByteArray MessagesAnswers::streamEvents(const QList<upstream::SseEvent> &openAiEvents)
{
    QByteArray wire;
    for (const upstream::SseEvent &event : openAiEvents) {
        for (const upstream::SseEvent &translated : m_stream.feed(event))
            wire.append(translated.toWire());
    }
    return wire;
}

QByteArray MessagesAnswers::passedThroughStreamError(const protocol::ApiError &error)
{
    upstream::SseEvent event;
    event.event = "error";
    event.data = errorBody(error);
    return event.toWire();
}

QByteArray MessagesAnswers::streamError(const protocol::ApiError &error)
{
    QByteArray wire;
    for (const upstream::SseEvent &event : m_stream.fail(error))
        wire.append(event.toWire());
    return wire;
}

} // namespace switchyard::http
