#pragma once

#include "ingress/chat_chunk_reader.h"
#include "protocol/openai_error.h"

#include <QByteArray>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>
#include <variant>

namespace switchyard::ingress {

// The reverse of AnthropicAdapter, for clients that speak Anthropic's Messages API to
// POST /v1/messages: their request becomes an OpenAI chat request that any provider kind can
// serve, and the OpenAI answer, stream and errors go back in Anthropic's shapes.

struct MessagesChatRequest {
    QByteArray chatBody;       // the OpenAI chat request to route, and to send any provider that
                               // does not speak the Messages API
    QStringList ignoredFields; // Messages fields accepted but not applied in that translation,
                               // sorted, for the x-switchyard-ignored-fields response header
    // Set when the request uses what no chat provider can be given (a server tool, a document
    // block, `mcp_servers`...): chatBody is then good for routing only, and the request can be
    // served by an anthropic provider alone, or refused with this 400 naming the field.
    std::optional<protocol::ApiError> untranslatable;
};

// An Anthropic Messages request as an OpenAI chat request (docs/adapters.md has the rule for
// every field). A streamed request asks for stream_options.include_usage, so the final
// message_delta can carry the token counts. Errors are 400s whose message names the field, as in
// OpenAI's errors; render them with anthropicErrorJson.
std::variant<MessagesChatRequest, protocol::ApiError>
chatRequestFromMessages(QByteArrayView messagesBody);

// An OpenAI chat.completion as an Anthropic message. An error when the completion cannot be
// expressed (a tool call whose arguments are not a JSON object): the provider's fault, 502.
std::variant<QByteArray, protocol::ApiError> messageFromCompletion(QByteArrayView completionJson);

// {"type":"error","error":{"type":"...","message":"..."}} for an error; the HTTP status stays.
QByteArray anthropicErrorJson(const protocol::ApiError &error);
// Anthropic's error type for an HTTP status: 400 invalid_request_error ... 529 overloaded_error.
QString anthropicErrorType(int status);
// Anthropic's stop_reason for OpenAI's finish_reason.
QString stopReasonFromFinishReason(const QString &finishReason);

// OpenAI chunk events in, Anthropic's event stream out: message_start, then per content block
// content_block_start / content_block_delta... / content_block_stop, then message_delta with
// the stop reason and usage, and message_stop at [DONE]. One per streamed answer; the chat side
// is read by ChatChunkReader.
class MessagesStreamWriter final : private ChatChunkHandler {
public:
    QList<SseEvent> feed(const SseEvent &openAiEvent) { return m_reader.feed(openAiEvent, *this); }
    // The stream failed after it began: Anthropic's `error` event. Nothing may follow it.
    QList<SseEvent> fail(const protocol::ApiError &error) { return m_reader.fail(error, *this); }
    bool completed() const { return m_reader.completed(); }

private:
    enum class Block { None, Text, Tool };

    void startAnswer(const QJsonObject &firstChunk, QList<SseEvent> &events) override;
    void appendText(const QString &text, QList<SseEvent> &events) override;
    void appendRefusal(const QString &refusal, QList<SseEvent> &events) override;
    std::optional<protocol::ApiError> appendToolCallPiece(const ToolCallPiece &piece,
                                                          QList<SseEvent> &events) override;
    void finishAnswer(QList<SseEvent> &events) override;
    void failAnswer(const protocol::ApiError &error, QList<SseEvent> &events) override;

    void closeBlock(QList<SseEvent> &events);
    void openBlock(Block kind, const QJsonObject &contentBlock, QList<SseEvent> &events);

    ChatChunkReader m_reader;
    Block m_openBlock = Block::None;
    int m_openIndex = -1;
    int m_nextIndex = 0;
    QHash<int, int> m_blockOfToolCall; // OpenAI tool call index -> content block index
};

} // namespace switchyard::ingress
