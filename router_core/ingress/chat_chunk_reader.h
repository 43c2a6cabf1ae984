#pragma once

#include "protocol/openai_error.h"
#include "upstream/sse_parser.h"

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <optional>

namespace switchyard::ingress {

using upstream::SseEvent;

// One piece of a tool call in a chat chunk's delta. A call arrives in pieces that share its
// `index`: the first names it, the others add to its arguments.
struct ToolCallPiece {
    int index = 0;             // the call's `index` among the stream's tool calls
    std::optional<QString> id; // set when the piece has an `id`: a call's first piece, and
                               // every piece from the providers that repeat it
    QString name;              // the function's name, on a call's first piece
    QString arguments;         // this piece of the arguments' JSON text; may be empty
};

// What a client-side stream translator makes of a chat stream in its own protocol. The reader
// calls it in the stream's order; each call appends to `events` what the client is to be sent.
class ChatChunkHandler {
public:
    // The answer begins, with its first chunk (id, model, created...), or with an empty object
    // when the stream ended before any chunk.
    virtual void startAnswer(const QJsonObject &firstChunk, QList<SseEvent> &events) = 0;
    virtual void appendText(const QString &text, QList<SseEvent> &events) = 0;
    virtual void appendRefusal(const QString &refusal, QList<SseEvent> &events) = 0;
    // The error that fails the stream when the client's protocol cannot carry this piece;
    // nullopt when it was carried.
    virtual std::optional<protocol::ApiError> appendToolCallPiece(const ToolCallPiece &piece,
                                                                  QList<SseEvent> &events) = 0;
    // [DONE]: the answer is whole; the reader's usage and finish reason are final.
    virtual void finishAnswer(QList<SseEvent> &events) = 0;
    // The stream failed, before or after the answer started; nothing may follow.
    virtual void failAnswer(const protocol::ApiError &error, QList<SseEvent> &events) = 0;

protected:
    ~ChatChunkHandler() = default;
};

// The front every client-side stream translator shares: reads the chat.completion.chunk events
// the executor writes, hands the first choice's text, refusal and tool call pieces to a handler
// in order, and keeps what the end of the answer needs (the usage and finish reason reported so
// far) and whether the answer started, completed or failed. After completion or a failure,
// further events and failures give nothing. The handler is passed on each call rather than kept,
// so a translator holding its reader stays copyable and movable.
class ChatChunkReader {
public:
    // One chunk event; the last one is [DONE].
    QList<SseEvent> feed(const SseEvent &chunkEvent, ChatChunkHandler &handler);
    // The stream failed after the executor began it.
    QList<SseEvent> fail(const protocol::ApiError &error, ChatChunkHandler &handler);

    bool started() const { return m_started; }
    bool completed() const { return m_completed; }
    // The chat `usage` object of the last chunk that had one; null until then.
    const QJsonValue &chatUsage() const { return m_chatUsage; }
    // The last finish_reason a chunk gave; empty until then.
    const QString &finishReason() const { return m_finishReason; }

private:
    void start(const QJsonObject &firstChunk, ChatChunkHandler &handler, QList<SseEvent> &events);
    // Puts a continued stream's note (the chunk's `switchyard` member) on the last of `events`.
    void attachPendingNote(QList<SseEvent> &events);

    bool m_started = false;
    bool m_completed = false;
    bool m_failed = false;
    QJsonValue m_chatUsage = QJsonValue::Null;
    QString m_finishReason;
    QJsonObject m_pendingNote; // a continuation's note not yet carried by an event
};

} // namespace switchyard::ingress
