#pragma once

#include "ingress/chat_chunk_reader.h"
#include "protocol/openai_error.h"

#include <QByteArray>
#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>
#include <variant>

namespace switchyard::config {
struct Config;
}

namespace switchyard::ingress {

// For clients that speak OpenAI's Responses API to POST /v1/responses: their request becomes an
// OpenAI chat request that any provider kind can serve, and the chat answer, stream and errors go
// back in the Responses shapes. Nothing is stored: a request must carry its whole conversation.
// docs/responses.md has the rule for every request field.

struct ResponsesChatRequest {
    QByteArray chatBody;       // the OpenAI chat request to route and execute
    QStringList ignoredFields; // Responses fields accepted but not applied, for the
                               // x-switchyard-ignored-fields response header
    QJsonObject echo; // what the response object repeats back, as applied: model, instructions,
                      // tools, tool_choice, temperature, top_p, max_output_tokens, metadata,
                      // text, reasoning, parallel_tool_calls, previous_response_id (null),
                      // store (false), truncation, service_tier, user
};

// A Responses request as an OpenAI chat request. A streamed request asks for
// stream_options.include_usage, so response.completed can carry the token counts. Fields only a
// provider that speaks the Responses API natively can honour (previous_response_id,
// conversation, stored prompts, background, built-in tools...) are refused with a 400 naming the
// field; unknown fields are refused as the API itself does. Errors render with ApiError::toJson,
// the same {"error":{message,type,param,code}} envelope the Responses API uses.
std::variant<ResponsesChatRequest, protocol::ApiError>
chatRequestFromResponses(QByteArrayView responsesBody);

// For a Responses request chatRequestFromResponses refused, when a provider of its model speaks
// the Responses API itself and may still serve it (previous_response_id, built-in tools...): a
// chat body with what routing reads (model, stream, the `switchyard` routing object), never sent
// to anyone, since only such providers may then be tried. nullopt when none could take it.
std::optional<QByteArray> chatBodyForNativeProviders(const config::Config &config,
                                                     QByteArrayView responsesBody);

// The response id for a request id: `resp_` + requestId, unless it already has that prefix.
QString responseIdFor(QByteArrayView requestId);

// An OpenAI chat.completion as a Responses `response` object: status completed, or incomplete
// for finish_reason length (max_output_tokens) and content_filter; output items for the text, a
// refusal and each tool call; usage with input/output/total tokens and their details; the echo
// fields. `responseId` is the request id (see responseIdFor). A completion that cannot be read
// is the provider's fault: 502.
std::variant<QByteArray, protocol::ApiError> responseFromCompletion(QByteArrayView completionJson,
                                                                    const QJsonObject &echo,
                                                                    QByteArrayView responseId);

// The Responses API's `error` event for a stream that failed after it began, numbered
// `sequenceNumber`: the fields flat as the published event schema has them, and nested under
// `error` as the API sends them (the SDKs raise on a top-level `error` member).
SseEvent responsesErrorEvent(const protocol::ApiError &error, qint64 sequenceNumber);

// OpenAI chat.completion.chunk events in, typed Responses events out, each with `event:` equal to
// its `type` and a `sequence_number` counting from 0: response.created, response.in_progress,
// then per output item output_item.added, (messages) content_part.added, output_text.delta...,
// output_text.done, content_part.done, (function calls) function_call_arguments.delta...,
// function_call_arguments.done, then output_item.done; last response.completed or
// response.incomplete with the whole response object. Nothing is emitted before the first chunk
// arrives, so the executor may still fail over until then. One per streamed answer; the chat side
// is read by ChatChunkReader.
class ResponsesStreamWriter final : private ChatChunkHandler {
public:
    // `responseId` is the request id, as for responseFromCompletion.
    ResponsesStreamWriter(QJsonObject echo, QByteArray responseId);

    // One OpenAI chunk event; the last one is [DONE]. A provider that interleaves the pieces of
    // parallel tool calls gets the stream failed here (see fail()), since a function_call item
    // cannot take arguments after it is done.
    QList<SseEvent> feed(const SseEvent &openAiChunkEvent)
    {
        return m_reader.feed(openAiChunkEvent, *this);
    }
    // The stream failed after it began: an `error` event (which every OpenAI SDK raises), then
    // response.failed with the output so far, so a client that reads raw events still ends on a
    // terminal lifecycle event. Nothing may follow.
    QList<SseEvent> fail(const protocol::ApiError &error) { return m_reader.fail(error, *this); }
    bool completed() const { return m_reader.completed(); }
    // What the response object repeats back (ResponsesChatRequest::echo).
    const QJsonObject &echo() const { return m_echo; }

private:
    enum class Part { None, Text, Refusal };
    struct OpenMessage {
        int outputIndex = -1;
        QString itemId;
        QJsonArray parts; // the finished content parts
        Part openPart = Part::None;
        QString openPartText;
    };
    struct OpenCall {
        int outputIndex = -1;
        int chatIndex = -1; // the tool call's `index` in the chat chunks
        QString itemId;
        QString callId;
        QString name;
        QString arguments;
    };

    void startAnswer(const QJsonObject &firstChunk, QList<SseEvent> &events) override;
    void appendText(const QString &text, QList<SseEvent> &events) override;
    void appendRefusal(const QString &refusal, QList<SseEvent> &events) override;
    std::optional<protocol::ApiError> appendToolCallPiece(const ToolCallPiece &piece,
                                                          QList<SseEvent> &events) override;
    void finishAnswer(QList<SseEvent> &events) override;
    void failAnswer(const protocol::ApiError &error, QList<SseEvent> &events) override;

    void append(QList<SseEvent> &events, const QString &type, QJsonObject data);
    void openMessage(QList<SseEvent> &events);
    void openPart(Part kind, QList<SseEvent> &events);
    void closePart(QList<SseEvent> &events);
    void closeMessage(const QString &status, QList<SseEvent> &events);
    // The open call this piece belongs to, a new one, or null for a piece of a call already done.
    OpenCall *openCall(const ToolCallPiece &piece, QList<SseEvent> &events);
    void closeCall(const QString &status, QList<SseEvent> &events);
    QJsonObject response(const QString &status, const QJsonArray &output) const;

    ChatChunkReader m_reader;
    QJsonObject m_echo;
    QString m_responseId;
    qint64 m_nextSequenceNumber = 0;
    qint64 m_createdAtSecs = 0;
    QString m_model;
    QJsonArray m_output; // every item opened so far, by output_index, as last announced
    std::optional<OpenMessage> m_message; // at most one item is open: this message...
    std::optional<OpenCall> m_call;       // ...or this function call
    QHash<int, QString> m_closedCallIds;  // chat tool call index -> id, of calls already done
};

} // namespace switchyard::ingress
