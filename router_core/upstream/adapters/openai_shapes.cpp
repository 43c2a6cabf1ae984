#include "upstream/adapters/openai_shapes.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace switchyard::upstream::adapters {

using namespace Qt::StringLiterals;

namespace {

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// The legacy functions API has no ids and one call per answer, and names its reason apart.
QJsonValue finishValue(const QString &reason, bool legacyFunctions)
{
    if (reason.isEmpty())
        return QJsonValue::Null;
    if (legacyFunctions && reason == u"tool_calls"_s)
        return u"function_call"_s;
    return reason;
}

} // namespace

QJsonObject usageJson(const Usage &usage)
{
    const qint64 prompt = std::max<qint64>(usage.promptTokens, 0);
    const qint64 completion = std::max<qint64>(usage.completionTokens, 0);
    QJsonObject object{{u"prompt_tokens"_s, prompt},
                       {u"completion_tokens"_s, completion},
                       {u"total_tokens"_s, prompt + completion}};
    if (usage.cachedPromptTokens >= 0) {
        object.insert(u"prompt_tokens_details"_s,
                      QJsonObject{{u"cached_tokens"_s, usage.cachedPromptTokens}});
    }
    return object;
}

Usage usageFromOpenAi(const QJsonObject &usage)
{
    Usage counted;
    if (usage.value(u"prompt_tokens"_s).isDouble())
        counted.promptTokens = usage.value(u"prompt_tokens"_s).toInteger();
    if (usage.value(u"completion_tokens"_s).isDouble())
        counted.completionTokens = usage.value(u"completion_tokens"_s).toInteger();
    const QJsonValue cached =
        usage.value(u"prompt_tokens_details"_s).toObject().value(u"cached_tokens"_s);
    if (cached.isDouble())
        counted.cachedPromptTokens = cached.toInteger();
    return counted;
}

QByteArray completionJson(const CompletionDraft &draft, const AnswerShape &shape)
{
    QJsonObject message{{u"role"_s, u"assistant"_s},
                        {u"content"_s, draft.text ? QJsonValue(*draft.text) : QJsonValue()}};
    if (!draft.toolCalls.isEmpty()) {
        if (shape.legacyFunctions) {
            const ToolCallDraft &call = draft.toolCalls.first();
            message.insert(u"function_call"_s,
                           QJsonObject{{u"name"_s, call.name}, {u"arguments"_s, call.arguments}});
        } else {
            QJsonArray calls;
            for (const ToolCallDraft &call : draft.toolCalls) {
                calls.append(
                    QJsonObject{{u"id"_s, call.id},
                                {u"type"_s, u"function"_s},
                                {u"function"_s, QJsonObject{{u"name"_s, call.name},
                                                            {u"arguments"_s, call.arguments}}}});
            }
            message.insert(u"tool_calls"_s, calls);
        }
    }
    QJsonObject completion{
        {u"id"_s, draft.id},
        {u"object"_s, u"chat.completion"_s},
        {u"created"_s, draft.createdSecs},
        {u"model"_s, draft.model},
        {u"choices"_s,
         QJsonArray{QJsonObject{
             {u"index"_s, 0},
             {u"message"_s, message},
             {u"logprobs"_s, QJsonValue::Null},
             {u"finish_reason"_s, finishValue(draft.finishReason, shape.legacyFunctions)}}}}};
    if (draft.usage.isKnown())
        completion.insert(u"usage"_s, usageJson(draft.usage));
    return compact(completion);
}

ChunkWriter::ChunkWriter(const AnswerShape &shape)
    : m_shape(shape), m_id(QString::fromUtf8(shape.answerId)), m_model(shape.upstreamModel)
{}

void ChunkWriter::setIdentity(const QString &id, const QString &model)
{
    if (!id.isEmpty())
        m_id = id;
    if (!model.isEmpty())
        m_model = model;
}

SseEvent ChunkWriter::chunk(const QJsonObject &delta, const QJsonValue &finishReason) const
{
    const QJsonObject object{
        {u"id"_s, m_id},
        {u"object"_s, u"chat.completion.chunk"_s},
        {u"created"_s, m_shape.createdSecs},
        {u"model"_s, m_model},
        {u"choices"_s, QJsonArray{QJsonObject{{u"index"_s, 0},
                                              {u"delta"_s, delta},
                                              {u"logprobs"_s, QJsonValue::Null},
                                              {u"finish_reason"_s, finishReason}}}}};
    SseEvent event;
    event.data = compact(object);
    return event;
}

SseEvent ChunkWriter::role() const
{
    return chunk({{u"role"_s, u"assistant"_s}, {u"content"_s, u""_s}}, QJsonValue::Null);
}

SseEvent ChunkWriter::content(const QString &text) const
{
    return chunk({{u"content"_s, text}}, QJsonValue::Null);
}

SseEvent ChunkWriter::toolCallStart(int index, const QString &id, const QString &name) const
{
    if (m_shape.legacyFunctions) {
        return chunk(
            {{u"function_call"_s, QJsonObject{{u"name"_s, name}, {u"arguments"_s, u""_s}}}},
            QJsonValue::Null);
    }
    const QJsonObject call{
        {u"index"_s, index},
        {u"id"_s, id},
        {u"type"_s, u"function"_s},
        {u"function"_s, QJsonObject{{u"name"_s, name}, {u"arguments"_s, u""_s}}}};
    return chunk({{u"tool_calls"_s, QJsonArray{call}}}, QJsonValue::Null);
}

SseEvent ChunkWriter::toolCallArguments(int index, const QString &piece) const
{
    if (m_shape.legacyFunctions)
        return chunk({{u"function_call"_s, QJsonObject{{u"arguments"_s, piece}}}},
                     QJsonValue::Null);
    const QJsonObject call{{u"index"_s, index},
                           {u"function"_s, QJsonObject{{u"arguments"_s, piece}}}};
    return chunk({{u"tool_calls"_s, QJsonArray{call}}}, QJsonValue::Null);
}

SseEvent ChunkWriter::finish(const QString &finishReason) const
{
    return chunk({}, finishValue(finishReason, m_shape.legacyFunctions));
}

SseEvent ChunkWriter::usage(const Usage &usage) const
{
    const QJsonObject object{{u"id"_s, m_id},
                             {u"object"_s, u"chat.completion.chunk"_s},
                             {u"created"_s, m_shape.createdSecs},
                             {u"model"_s, m_model},
                             {u"choices"_s, QJsonArray()},
                             {u"usage"_s, usageJson(usage)}};
    SseEvent event;
    event.data = compact(object);
    return event;
}

SseEvent ChunkWriter::done()
{
    SseEvent event;
    event.data = "[DONE]";
    return event;
}

} // namespace switchyard::upstream::adapters
