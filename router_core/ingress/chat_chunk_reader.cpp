#include "ingress/chat_chunk_reader.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <utility>

namespace switchyard::ingress {

using namespace Qt::StringLiterals;

namespace {

ToolCallPiece toolCallPiece(const QJsonObject &toolCall)
{
    const QJsonObject function = toolCall.value(u"function"_s).toObject();
    ToolCallPiece piece;
    piece.index = toolCall.value(u"index"_s).toInt();
    if (toolCall.contains(u"id"_s))
        piece.id = toolCall.value(u"id"_s).toString();
    piece.name = function.value(u"name"_s).toString();
    piece.arguments = function.value(u"arguments"_s).toString();
    return piece;
}

} // namespace

void ChatChunkReader::start(const QJsonObject &firstChunk, ChatChunkHandler &handler,
                            QList<SseEvent> &events)
{
    if (m_started)
        return;
    m_started = true;
    handler.startAnswer(firstChunk, events);
}

QList<SseEvent> ChatChunkReader::feed(const SseEvent &chunkEvent, ChatChunkHandler &handler)
{
    QList<SseEvent> events;
    if (m_completed || m_failed)
        return events;
    if (chunkEvent.isDone()) {
        start({}, handler, events);
        handler.finishAnswer(events);
        m_completed = true;
        attachPendingNote(events);
        return events;
    }
    const QJsonObject chunk = QJsonDocument::fromJson(chunkEvent.data).object();
    if (chunk.isEmpty())
        return events;
    start(chunk, handler, events);
    // Read before the deltas: a stream failed by one of them reports this chunk's usage too.
    if (chunk.value(u"usage"_s).isObject())
        m_chatUsage = chunk.value(u"usage"_s);
    const QJsonObject choice = chunk.value(u"choices"_s).toArray().at(0).toObject();
    const QJsonObject delta = choice.value(u"delta"_s).toObject();

    const QString text = delta.value(u"content"_s).toString();
    if (!text.isEmpty())
        handler.appendText(text, events);
    const QString refusal = delta.value(u"refusal"_s).toString();
    if (!refusal.isEmpty())
        handler.appendRefusal(refusal, events);
    for (const QJsonValue &toolCall : delta.value(u"tool_calls"_s).toArray()) {
        const std::optional<protocol::ApiError> failure =
            handler.appendToolCallPiece(toolCallPiece(toolCall.toObject()), events);
        if (failure) {
            events.append(fail(*failure, handler));
            return events;
        }
    }
    if (choice.value(u"finish_reason"_s).isString())
        m_finishReason = choice.value(u"finish_reason"_s).toString();
    // A stream continued on another provider says so on its first continued chunk; the client's
    // protocol carries the note on the event that chunk became, or, when it became none (a
    // finish reason alone), on the next event sent (docs/resilience.md).
    if (const QJsonValue note = chunk.value(u"switchyard"_s); note.isObject())
        m_pendingNote = note.toObject();
    attachPendingNote(events);
    return events;
}

void ChatChunkReader::attachPendingNote(QList<SseEvent> &events)
{
    if (m_pendingNote.isEmpty() || events.isEmpty())
        return;
    QJsonObject last = QJsonDocument::fromJson(events.last().data).object();
    last.insert(u"switchyard"_s, std::exchange(m_pendingNote, {}));
    events.last().data = QJsonDocument(last).toJson(QJsonDocument::Compact);
}

QList<SseEvent> ChatChunkReader::fail(const protocol::ApiError &error, ChatChunkHandler &handler)
{
    QList<SseEvent> events;
    if (m_completed || m_failed)
        return events;
    m_failed = true;
    handler.failAnswer(error, events);
    return events;
}

} // namespace switchyard::ingress
