#include "http/messages_ingress.h"

#include <algorithm>

namespace switchyard::http {

std::variant<upstream::adapters::MessagesChatRequest, protocol::ApiError>
MessagesIngress::chatRequestFrom(const QByteArray &messagesBody)
{
    return upstream::adapters::chatRequestFromMessages(messagesBody);
}

bool MessagesIngress::anthropicProviderServes(const config::Config &config, const QString &model)
{
    return std::any_of(config.providers.cbegin(), config.providers.cend(),
                       [&model](const config::ProviderConfig &provider) {
                           const QString upstream = provider.upstreamModelFor(model);
                           return provider.kind == config::ProviderKind::Anthropic &&
                                  !upstream.isEmpty() &&
                                  provider.serves(upstream, protocol::Operation::Messages);
                       });
}

QByteArray MessagesIngress::errorBody(const protocol::ApiError &error)
{
    return upstream::adapters::anthropicErrorJson(error);
}

void MessagesIngress::sendError(ResponseWriter &writer, const protocol::ApiError &error,
                                HeaderList headers)
{
    if (!error.retryAfter.isEmpty())
        headers.append({"Retry-After", error.retryAfter});
    writer.sendWhole(error.status, headers, "application/json", errorBody(error));
}

MessagesIngress::WholeAnswer MessagesIngress::answer(int status,
                                                     const QByteArray &completionJson) const
{
    auto converted = upstream::adapters::messageFromCompletion(completionJson);
    if (const protocol::ApiError *error = std::get_if<protocol::ApiError>(&converted))
        return {error->status, errorBody(*error)};
    return {status, std::get<QByteArray>(std::move(converted))};
}

QByteArray MessagesIngress::streamEvents(const QList<upstream::SseEvent> &openAiEvents)
{
    QByteArray wire;
    for (const upstream::SseEvent &event : openAiEvents) {
        for (const upstream::SseEvent &translated : m_stream.feed(event))
            wire.append(translated.toWire());
    }
    return wire;
}

QByteArray MessagesIngress::passedThroughStreamError(const protocol::ApiError &error)
{
    upstream::SseEvent event;
    event.event = "error";
    event.data = errorBody(error);
    return event.toWire();
}

QByteArray MessagesIngress::streamError(const protocol::ApiError &error)
{
    QByteArray wire;
    for (const upstream::SseEvent &event : m_stream.fail(error))
        wire.append(event.toWire());
    return wire;
}

} // namespace switchyard::http
