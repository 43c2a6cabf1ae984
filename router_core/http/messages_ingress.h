#pragma once

#include "config/config.h"
#include "http/response_writer.h"
#include "protocol/openai_error.h"
#include "upstream/adapters/anthropic_ingress.h"
#include "upstream/sse_parser.h"

#include <QByteArray>
#include <QList>
#include <variant>

namespace switchyard::http {

// POST /v1/messages: clients that speak Anthropic's Messages API, served by the same router,
// executor and adapters as /v1/chat/completions. An anthropic provider gets the client's own
// request (only the model replaced) and its answer goes back as it came; for every other kind
// the request becomes an OpenAI chat body, and what the executor would write to an OpenAI
// client passes through here on the way out and leaves in Anthropic's shapes. One per request;
// it keeps the state of a streamed answer being translated.
class MessagesIngress {
public:
    // The chat request to parse and route, or the refusal to send with errorBody().
    static std::variant<upstream::adapters::MessagesChatRequest, protocol::ApiError>
    chatRequestFrom(const QByteArray &messagesBody);
    // Whether a provider of kind anthropic serves `model`: what only such a provider can take
    // (a token count, a server tool) may be tried.
    static bool anthropicProviderServes(const config::Config &config, const QString &model);

    // {"type":"error","error":{"type","message"}} with the same HTTP status as `error`; the
    // caller keeps its Retry-After header.
    static QByteArray errorBody(const protocol::ApiError &error);
    // The error answer in that shape, with Retry-After when the error carries one.
    static void sendError(ResponseWriter &writer, const protocol::ApiError &error,
                          HeaderList headers);

    struct WholeAnswer {
        int status = 200;
        QByteArray body; // application/json
    };
    // The body to send instead of a 2xx chat.completion. A completion that cannot be expressed
    // as an Anthropic message becomes a 502 error body.
    WholeAnswer answer(int status, const QByteArray &completionJson) const;

    // Event-stream bytes to send instead of these OpenAI chunk events (the last one [DONE] once
    // the answer is whole): message_start, content blocks, message_delta, message_stop.
    QByteArray streamEvents(const QList<upstream::SseEvent> &openAiEvents);
    // The bytes of Anthropic's `error` event, instead of the OpenAI error event the executor
    // sends when a stream fails after it began.
    QByteArray streamError(const protocol::ApiError &error);
    // The same event after a stream passed through as the provider wrote it.
    static QByteArray passedThroughStreamError(const protocol::ApiError &error);
    bool streamCompleted() const { return m_stream.completed(); }

private:
    upstream::adapters::MessagesStreamWriter m_stream;
};

} // namespace switchyard::http
