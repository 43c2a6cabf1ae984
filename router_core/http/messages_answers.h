#pragma once

#include "httpwire/response_writer.h"
#include "ingress/anthropic_ingress.h"
#include "protocol/openai_error.h"
#include "upstream/sse_parser.h"

#include <QByteArray>
#include <QList>
#include <variant>

namespace switchyard::http {

using httpwire::ResponseWriter;
using protocol::HeaderList;

// The answers of POST /v1/messages and its count_tokens, in Anthropic's shapes. The request was
// read by ingress/ (passed through to an anthropic provider, translated to chat for the others);
// what the executor writes for a translated attempt passes through here on the way out: the
// whole answer, the event stream and every error. One per request; it keeps the state of a
// streamed answer being translated.
class MessagesAnswers {
public:
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
    ingress::MessagesStreamWriter m_stream;
};

} // namespace switchyard::http
