#pragma once

#include "upstream/adapters/provider_adapter.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace switchyard::upstream::adapters {

// Builds the OpenAI shapes every translating adapter answers with, so the client sees the same
// protocol whatever is behind: chat.completion for whole answers, chat.completion.chunk events for
// streams. Respects AnswerShape::legacyFunctions (function_call instead of tool_calls).

struct ToolCallDraft {
    QString id;
    QString name;
    QString arguments; // JSON text, as OpenAI sends it
};

struct CompletionDraft {
    QString id;
    QString model;
    qint64 createdSecs = 0;
    std::optional<QString> text; // null content when absent (an answer that only calls tools)
    QList<ToolCallDraft> toolCalls;
    QString finishReason; // OpenAI's word; empty for null
    Usage usage;
};

QByteArray completionJson(const CompletionDraft &draft, const AnswerShape &shape);
QJsonObject usageJson(const Usage &usage);
// The usage an OpenAI `usage` object reports.
Usage usageFromOpenAi(const QJsonObject &usage);

// One stream's chunks, all carrying the same id, model and created time.
class ChunkWriter {
public:
    explicit ChunkWriter(const AnswerShape &shape);

    void setIdentity(const QString &id, const QString &model);
    const QString &id() const { return m_id; }

    SseEvent role() const; // the first chunk: {"role":"assistant","content":""}
    SseEvent content(const QString &text) const;
    SseEvent toolCallStart(int index, const QString &id, const QString &name) const;
    SseEvent toolCallArguments(int index, const QString &piece) const;
    SseEvent finish(const QString &finishReason) const;
    // The last chunk before [DONE] when stream_options.include_usage was set: no choices.
    SseEvent usage(const Usage &usage) const;
    static SseEvent done();

private:
    SseEvent chunk(const QJsonObject &delta, const QJsonValue &finishReason) const;

    AnswerShape m_shape;
    QString m_id;
    QString m_model;
};

} // namespace switchyard::upstream::adapters
