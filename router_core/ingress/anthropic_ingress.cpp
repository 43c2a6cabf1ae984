#include "ingress/anthropic_ingress.h"

#include "upstream/adapters/openai_shapes.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>

namespace switchyard::ingress {

// The provider side's shapes (usage, chunks, the unusable-answer error) are shared.
using namespace upstream::adapters;

using namespace Qt::StringLiterals;

namespace {

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// Usage in Anthropic's words: its input_tokens leave out what the prompt cache served, which it
// counts apart (OpenAI's prompt_tokens include its cached_tokens). Nothing is counted twice.
QJsonObject anthropicUsage(const Usage &usage)
{
    const qint64 cached = std::max<qint64>(usage.cachedPromptTokens, 0);
    const qint64 written = std::max<qint64>(usage.cacheWritePromptTokens, 0);
    QJsonObject counts{
        {u"input_tokens"_s, std::max<qint64>(usage.promptTokens - cached - written, 0)},
        {u"output_tokens"_s, std::max<qint64>(usage.completionTokens, 0)}};
    if (usage.cachedPromptTokens >= 0)
        counts.insert(u"cache_read_input_tokens"_s, usage.cachedPromptTokens);
    if (usage.cacheWritePromptTokens >= 0)
        counts.insert(u"cache_creation_input_tokens"_s, usage.cacheWritePromptTokens);
    return counts;
}

protocol::ApiError unsupported(const QString &what, const QString &param)
{
    return protocol::ApiError::invalidRequest(
        u"%1 in '%2' can only be passed to an anthropic provider, and none of this model's "
        u"providers is one."_s.arg(what, param),
        param);
}

// Text of a tool result or system prompt given as a string or as text blocks.
QString blocksText(const QJsonValue &content)
{
    if (content.isString())
        return content.toString();
    QStringList parts;
    for (const QJsonValue &block : content.toArray()) {
        const QJsonObject object = block.toObject();
        if (object.value(u"type"_s).toString() == u"text"_s)
            parts.append(object.value(u"text"_s).toString());
    }
    return parts.join(u'\n');
}

class ChatRequestBuilder {
public:
    std::optional<protocol::ApiError> error;
    // Fields accepted but not applied, once each, for x-switchyard-ignored-fields.
    QStringList ignored;

    // What a chat provider cannot be given (a server tool, a document block...): the request
    // can still go to an anthropic provider as it is, so the rest is built for routing.
    std::optional<protocol::ApiError> untranslatableReason;
    void untranslatable(protocol::ApiError problem)
    {
        if (!untranslatableReason)
            untranslatableReason = std::move(problem);
    }

    void ignore(const QString &field)
    {
        if (!ignored.contains(field))
            ignored.append(field);
    }

    // Prompt-cache markers mean nothing to a chat provider: listed once, wherever they are.
    void noteCacheControl(const QJsonObject &block)
    {
        if (block.contains(u"cache_control"_s))
            ignore(u"cache_control"_s);
    }

    QJsonArray convertMessages(const QJsonObject &request)
    {
        QJsonArray chat;
        const QJsonValue system = request.value(u"system"_s);
        if (system.isString() || system.isArray()) {
            for (const QJsonValue &block : system.toArray())
                noteCacheControl(block.toObject());
            const QString text = blocksText(system);
            if (!text.isEmpty())
                chat.append(QJsonObject{{u"role"_s, u"system"_s}, {u"content"_s, text}});
        } else if (!system.isUndefined() && !system.isNull()) {
            fail(protocol::wrongJsonType(u"system"_s, u"a string or an array of text blocks"_s,
                                         system));
        }
        const QJsonArray messages = request.value(u"messages"_s).toArray();
        for (qsizetype index = 0; index < messages.size() && !error; ++index) {
            const QString param = u"messages[%1]"_s.arg(index);
            if (!messages.at(index).isObject()) {
                fail(protocol::wrongJsonType(param, u"an object"_s, messages.at(index)));
                break;
            }
            const QJsonObject message = messages.at(index).toObject();
            const QString role = message.value(u"role"_s).toString();
            const QJsonValue content = message.value(u"content"_s);
            if (role != u"user"_s && role != u"assistant"_s) {
                fail(protocol::ApiError::invalidRequest(
                    u"Invalid value for '%1.role': expected `user` or `assistant`%2."_s.arg(
                        param, role == u"system"_s
                                   ? u"; a system prompt goes in the top-level `system` field"_s
                                   : QString()),
                    param + u".role"_s));
                break;
            }
            if (content.isString()) {
                chat.append(QJsonObject{{u"role"_s, role}, {u"content"_s, content}});
                continue;
            }
            if (!content.isArray()) {
                fail(protocol::wrongJsonType(param + u".content"_s,
                                             u"a string or an array of content blocks"_s, content));
                break;
            }
            if (role == u"user"_s)
                convertUserBlocks(content.toArray(), param, chat);
            else
                convertAssistantBlocks(content.toArray(), param, chat);
        }
        return chat;
    }

    void convertTools(const QJsonObject &request, QJsonObject &chat)
    {
        const QJsonValue toolsValue = request.value(u"tools"_s);
        if (toolsValue.isArray()) {
            QJsonArray tools;
            const QJsonArray list = toolsValue.toArray();
            for (qsizetype index = 0; index < list.size(); ++index) {
                const QJsonObject tool = list.at(index).toObject();
                const QString type = tool.value(u"type"_s).toString();
                if (!type.isEmpty() && type != u"custom"_s) {
                    untranslatable(unsupported(u"A server tool of type `%1`"_s.arg(type),
                                               u"tools[%1]"_s.arg(index)));
                    return;
                }
                noteCacheControl(tool);
                for (auto field = tool.constBegin(); field != tool.constEnd(); ++field) {
                    static const QStringList translated{u"type"_s, u"name"_s, u"description"_s,
                                                        u"input_schema"_s, u"cache_control"_s};
                    if (!translated.contains(field.key()))
                        ignore(u"tools."_s + field.key());
                }
                QJsonObject function{{u"name"_s, tool.value(u"name"_s)}};
                if (tool.contains(u"description"_s))
                    function.insert(u"description"_s, tool.value(u"description"_s));
                function.insert(u"parameters"_s, tool.value(u"input_schema"_s));
                tools.append(QJsonObject{{u"type"_s, u"function"_s}, {u"function"_s, function}});
            }
            if (!tools.isEmpty())
                chat.insert(u"tools"_s, tools);
        }
        const QJsonObject choice = request.value(u"tool_choice"_s).toObject();
        const QString type = choice.value(u"type"_s).toString();
        if (type == u"auto"_s)
            chat.insert(u"tool_choice"_s, u"auto"_s);
        else if (type == u"any"_s)
            chat.insert(u"tool_choice"_s, u"required"_s);
        else if (type == u"none"_s)
            chat.insert(u"tool_choice"_s, u"none"_s);
        else if (type == u"tool"_s)
            chat.insert(
                u"tool_choice"_s,
                QJsonObject{{u"type"_s, u"function"_s},
                            {u"function"_s, QJsonObject{{u"name"_s, choice.value(u"name"_s)}}}});
        if (choice.value(u"disable_parallel_tool_use"_s).toBool())
            chat.insert(u"parallel_tool_calls"_s, false);
    }

private:
    void fail(protocol::ApiError problem)
    {
        if (!error)
            error = std::move(problem);
    }

    // Tool results come first, each as an OpenAI `tool` message, since OpenAI wants them right
    // after the assistant's tool calls; the rest of the turn follows as one user message.
    void convertUserBlocks(const QJsonArray &blocks, const QString &param, QJsonArray &chat)
    {
        QJsonArray parts;
        for (qsizetype index = 0; index < blocks.size(); ++index) {
            const QJsonObject block = blocks.at(index).toObject();
            const QString type = block.value(u"type"_s).toString();
            const QString blockParam = u"%1.content[%2]"_s.arg(param).arg(index);
            noteCacheControl(block);
            if (block.contains(u"citations"_s))
                ignore(u"messages.content.citations"_s);
            if (type == u"text"_s) {
                parts.append(
                    QJsonObject{{u"type"_s, u"text"_s}, {u"text"_s, block.value(u"text"_s)}});
            } else if (type == u"image"_s) {
                const QJsonObject source = block.value(u"source"_s).toObject();
                const QString sourceType = source.value(u"type"_s).toString();
                QString url;
                if (sourceType == u"base64"_s) {
                    url = u"data:%1;base64,%2"_s.arg(source.value(u"media_type"_s).toString(),
                                                     source.value(u"data"_s).toString());
                } else if (sourceType == u"url"_s) {
                    url = source.value(u"url"_s).toString();
                } else {
                    untranslatable(
                        unsupported(u"An image source of type `%1`"_s.arg(sourceType), blockParam));
                    return;
                }
                parts.append(QJsonObject{{u"type"_s, u"image_url"_s},
                                         {u"image_url"_s, QJsonObject{{u"url"_s, url}}}});
            } else if (type == u"tool_result"_s) {
                // A chat tool message carries text only, and has no error flag.
                if (block.value(u"is_error"_s).toBool())
                    ignore(u"messages.content.is_error"_s);
                for (const QJsonValue &inner : block.value(u"content"_s).toArray()) {
                    const QJsonObject innerBlock = inner.toObject();
                    noteCacheControl(innerBlock);
                    const QString innerType = innerBlock.value(u"type"_s).toString();
                    if (innerType != u"text"_s)
                        ignore(u"tool_result.content[type=%1]"_s.arg(innerType));
                }
                chat.append(QJsonObject{{u"role"_s, u"tool"_s},
                                        {u"tool_call_id"_s, block.value(u"tool_use_id"_s)},
                                        {u"content"_s, blocksText(block.value(u"content"_s))}});
            } else {
                untranslatable(
                    unsupported(u"A content block of type `%1`"_s.arg(type), blockParam));
                return;
            }
        }
        if (parts.isEmpty())
            return;
        const bool oneText = parts.size() == 1;
        chat.append(QJsonObject{{u"role"_s, u"user"_s},
                                {u"content"_s, oneText ? parts.first().toObject().value(u"text"_s)
                                                       : QJsonValue(parts)}});
    }

    void convertAssistantBlocks(const QJsonArray &blocks, const QString &param, QJsonArray &chat)
    {
        QString text;
        QJsonArray calls;
        for (qsizetype index = 0; index < blocks.size(); ++index) {
            const QJsonObject block = blocks.at(index).toObject();
            const QString type = block.value(u"type"_s).toString();
            noteCacheControl(block);
            if (block.contains(u"citations"_s))
                ignore(u"messages.content.citations"_s);
            if (type == u"text"_s) {
                text += block.value(u"text"_s).toString();
            } else if (type == u"thinking"_s || type == u"redacted_thinking"_s) {
                // The model's own earlier reasoning: no chat provider takes it back.
                ignore(u"messages.content[type=%1]"_s.arg(type));
            } else if (type == u"tool_use"_s) {
                calls.append(QJsonObject{
                    {u"id"_s, block.value(u"id"_s)},
                    {u"type"_s, u"function"_s},
                    {u"function"_s,
                     QJsonObject{{u"name"_s, block.value(u"name"_s)},
                                 {u"arguments"_s, QString::fromUtf8(compact(
                                                      block.value(u"input"_s).toObject()))}}}});
            } else {
                untranslatable(unsupported(u"A content block of type `%1`"_s.arg(type),
                                           u"%1.content[%2]"_s.arg(param).arg(index)));
                return;
            }
        }
        QJsonObject message{
            {u"role"_s, u"assistant"_s},
            {u"content"_s, text.isEmpty() && !calls.isEmpty() ? QJsonValue() : QJsonValue(text)}};
        if (!calls.isEmpty())
            message.insert(u"tool_calls"_s, calls);
        chat.append(message);
    }
};

} // namespace

std::variant<MessagesChatRequest, protocol::ApiError>
chatRequestFromMessages(QByteArrayView messagesBody)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(messagesBody.toByteArray(), &parseError);
    if (!document.isObject()) {
        return protocol::ApiError::invalidRequest(
            u"We could not parse the JSON body of your request (%1). The body must be a JSON "
            u"object."_s.arg(parseError.error == QJsonParseError::NoError
                                 ? u"not an object"_s
                                 : parseError.errorString()));
    }
    const QJsonObject request = document.object();
    const QJsonValue model = request.value(u"model"_s);
    if (model.isUndefined())
        return protocol::missingParameter(u"model"_s);
    if (!model.isString())
        return protocol::wrongJsonType(u"model"_s, u"a string"_s, model);
    const QJsonValue messages = request.value(u"messages"_s);
    if (messages.isUndefined())
        return protocol::missingParameter(u"messages"_s);
    if (!messages.isArray())
        return protocol::wrongJsonType(u"messages"_s, u"an array"_s, messages);
    // Fields that make Anthropic itself run something (its MCP connector, its code container):
    // without them the model would answer a different question, so they are refused, not
    // dropped.
    ChatRequestBuilder builder;
    for (const QString &name : {u"mcp_servers"_s, u"container"_s}) {
        if (request.contains(name) && !request.value(name).isNull())
            builder.untranslatable(protocol::ApiError::invalidRequest(
                u"'%1' is run by Anthropic's own API only: it can only be passed to an anthropic "
                u"provider, and none of this model's providers is one."_s.arg(name),
                name));
    }
    QJsonObject chat{{u"model"_s, model}};
    chat.insert(u"messages"_s, builder.convertMessages(request));
    const QJsonValue maxTokens = request.value(u"max_tokens"_s);
    if (maxTokens.isDouble())
        chat.insert(u"max_tokens"_s, maxTokens);
    else if (!maxTokens.isUndefined())
        return protocol::wrongJsonType(u"max_tokens"_s, u"an integer"_s, maxTokens);
    if (request.value(u"stop_sequences"_s).isArray())
        chat.insert(u"stop"_s, request.value(u"stop_sequences"_s));
    for (const QString &name : {u"temperature"_s, u"top_p"_s}) {
        if (request.value(name).isDouble())
            chat.insert(name, request.value(name));
    }
    if (request.value(u"stream"_s).toBool()) {
        chat.insert(u"stream"_s, true);
        chat.insert(u"stream_options"_s, QJsonObject{{u"include_usage"_s, true}});
    }
    builder.convertTools(request, chat);
    const QJsonObject metadata = request.value(u"metadata"_s).toObject();
    for (auto field = metadata.constBegin(); field != metadata.constEnd(); ++field) {
        if (field.key() == u"user_id"_s && field.value().isString())
            chat.insert(u"user"_s, field.value());
        else
            builder.ignore(u"metadata."_s + field.key());
    }
    // The routing object is the gateway's own, in either protocol.
    if (request.contains(u"switchyard"_s))
        chat.insert(u"switchyard"_s, request.value(u"switchyard"_s));
    // Everything else has no chat counterpart: accepted and named, never dropped unsaid. That
    // includes `thinking` (a chat provider's `reasoning_effort` is not sent in its place: many
    // chat models refuse the parameter), `top_k`, `service_tier` (other values, other meaning),
    // `context_management` and fields newer than this gateway.
    static const QStringList translated{
        u"model"_s,       u"messages"_s,   u"system"_s,      u"max_tokens"_s, u"stop_sequences"_s,
        u"temperature"_s, u"top_p"_s,      u"stream"_s,      u"tools"_s,      u"tool_choice"_s,
        u"metadata"_s,    u"switchyard"_s, u"mcp_servers"_s, u"container"_s};
    for (auto field = request.constBegin(); field != request.constEnd(); ++field) {
        if (!translated.contains(field.key()) && !field.value().isNull())
            builder.ignore(field.key());
    }
    if (builder.error)
        return *builder.error;
    builder.ignored.sort();
    return MessagesChatRequest{compact(chat), std::move(builder.ignored),
                               std::move(builder.untranslatableReason)};
}

QString stopReasonFromFinishReason(const QString &finishReason)
{
    if (finishReason == u"length"_s)
        return u"max_tokens"_s;
    if (finishReason == u"tool_calls"_s || finishReason == u"function_call"_s)
        return u"tool_use"_s;
    if (finishReason == u"content_filter"_s)
        return u"refusal"_s;
    return u"end_turn"_s;
}

std::variant<QByteArray, protocol::ApiError> messageFromCompletion(QByteArrayView completionJson)
{
    const QJsonObject completion = QJsonDocument::fromJson(completionJson.toByteArray()).object();
    const QJsonObject choice = completion.value(u"choices"_s).toArray().at(0).toObject();
    const QJsonObject message = choice.value(u"message"_s).toObject();
    QJsonArray content;
    const QString text = message.value(u"content"_s).toString();
    if (!text.isEmpty())
        content.append(QJsonObject{{u"type"_s, u"text"_s}, {u"text"_s, text}});
    for (const QJsonValue &call : message.value(u"tool_calls"_s).toArray()) {
        const QJsonObject function = call.toObject().value(u"function"_s).toObject();
        const QString arguments = function.value(u"arguments"_s).toString();
        const QJsonDocument input =
            QJsonDocument::fromJson(arguments.trimmed().isEmpty() ? "{}" : arguments.toUtf8());
        if (!input.isObject()) {
            return unusableAnswer(u"The provider sent tool call arguments that are not a JSON "
                                  u"object; they cannot be given as Anthropic tool input."_s);
        }
        content.append(QJsonObject{{u"type"_s, u"tool_use"_s},
                                   {u"id"_s, call.toObject().value(u"id"_s)},
                                   {u"name"_s, function.value(u"name"_s)},
                                   {u"input"_s, input.object()}});
    }
    const Usage usage = usageFromOpenAi(completion.value(u"usage"_s).toObject());
    const QJsonValue finish = choice.value(u"finish_reason"_s);
    return compact(
        QJsonObject{{u"id"_s, completion.value(u"id"_s)},
                    {u"type"_s, u"message"_s},
                    {u"role"_s, u"assistant"_s},
                    {u"model"_s, completion.value(u"model"_s)},
                    {u"content"_s, content},
                    {u"stop_reason"_s,
                     finish.isString() ? QJsonValue(stopReasonFromFinishReason(finish.toString()))
                                       : QJsonValue()},
                    {u"stop_sequence"_s, QJsonValue::Null},
                    {u"usage"_s, anthropicUsage(usage)}});
}

QString anthropicErrorType(int status)
{
    switch (status) {
    case 400:
    case 422:
        return u"invalid_request_error"_s;
    case 401:
        return u"authentication_error"_s;
    case 403:
        return u"permission_error"_s;
    case 404:
    case 405:
        return u"not_found_error"_s;
    case 413:
        return u"request_too_large"_s;
    case 429:
        return u"rate_limit_error"_s;
    case 503:
    case 529:
        return u"overloaded_error"_s;
    default:
        break;
    }
    return status >= 400 && status < 500 ? u"invalid_request_error"_s : u"api_error"_s;
}

QByteArray anthropicErrorJson(const protocol::ApiError &error)
{
    return compact(
        QJsonObject{{u"type"_s, u"error"_s},
                    {u"error"_s, QJsonObject{{u"type"_s, anthropicErrorType(error.status)},
                                             {u"message"_s, error.message}}}});
}

namespace {

SseEvent anthropicEvent(const QString &type, QJsonObject data)
{
    data.insert(u"type"_s, type);
    SseEvent event;
    event.event = type.toUtf8();
    event.data = compact(data);
    return event;
}

} // namespace

void MessagesStreamWriter::startAnswer(const QJsonObject &firstChunk, QList<SseEvent> &events)
{
    events.append(anthropicEvent(
        u"message_start"_s,
        {{u"message"_s,
          QJsonObject{
              {u"id"_s, firstChunk.value(u"id"_s).toString()},
              {u"type"_s, u"message"_s},
              {u"role"_s, u"assistant"_s},
              {u"model"_s, firstChunk.value(u"model"_s).toString()},
              {u"content"_s, QJsonArray()},
              {u"stop_reason"_s, QJsonValue::Null},
              {u"stop_sequence"_s, QJsonValue::Null},
              // OpenAI streams count tokens only at the end: message_delta has them.
              {u"usage"_s, QJsonObject{{u"input_tokens"_s, 0}, {u"output_tokens"_s, 0}}}}}}));
}

void MessagesStreamWriter::closeBlock(QList<SseEvent> &events)
{
    if (m_openBlock == Block::None)
        return;
    events.append(anthropicEvent(u"content_block_stop"_s, {{u"index"_s, m_openIndex}}));
    m_openBlock = Block::None;
}

void MessagesStreamWriter::openBlock(Block kind, const QJsonObject &contentBlock,
                                     QList<SseEvent> &events)
{
    closeBlock(events);
    m_openBlock = kind;
    m_openIndex = m_nextIndex++;
    events.append(anthropicEvent(u"content_block_start"_s,
                                 {{u"index"_s, m_openIndex}, {u"content_block"_s, contentBlock}}));
}

void MessagesStreamWriter::appendText(const QString &text, QList<SseEvent> &events)
{
    if (m_openBlock != Block::Text)
        openBlock(Block::Text, {{u"type"_s, u"text"_s}, {u"text"_s, u""_s}}, events);
    events.append(anthropicEvent(
        u"content_block_delta"_s,
        {{u"index"_s, m_openIndex},
         {u"delta"_s, QJsonObject{{u"type"_s, u"text_delta"_s}, {u"text"_s, text}}}}));
}

void MessagesStreamWriter::appendRefusal(const QString &, QList<SseEvent> &)
{
    // A Messages answer has no content block for the text of a chat refusal: it is left out.
}

std::optional<protocol::ApiError>
MessagesStreamWriter::appendToolCallPiece(const ToolCallPiece &piece, QList<SseEvent> &events)
{
    if (piece.id || !m_blockOfToolCall.contains(piece.index)) {
        openBlock(Block::Tool,
                  {{u"type"_s, u"tool_use"_s},
                   {u"id"_s, piece.id.value_or(QString())},
                   {u"name"_s, piece.name},
                   {u"input"_s, QJsonObject()}},
                  events);
        m_blockOfToolCall.insert(piece.index, m_openIndex);
    }
    if (!piece.arguments.isEmpty()) {
        events.append(
            anthropicEvent(u"content_block_delta"_s,
                           {{u"index"_s, m_blockOfToolCall.value(piece.index)},
                            {u"delta"_s, QJsonObject{{u"type"_s, u"input_json_delta"_s},
                                                     {u"partial_json"_s, piece.arguments}}}}));
    }
    return std::nullopt;
}

void MessagesStreamWriter::finishAnswer(QList<SseEvent> &events)
{
    closeBlock(events);
    const Usage reported = usageFromOpenAi(m_reader.chatUsage().toObject());
    QJsonObject usage = anthropicUsage(reported);
    if (reported.promptTokens < 0)
        usage.remove(u"input_tokens"_s);
    // A stream that gave no finish_reason ends as a whole answer would: end_turn.
    events.append(anthropicEvent(
        u"message_delta"_s,
        {{u"delta"_s,
          QJsonObject{{u"stop_reason"_s, stopReasonFromFinishReason(m_reader.finishReason())},
                      {u"stop_sequence"_s, QJsonValue::Null}}},
         {u"usage"_s, usage}}));
    events.append(anthropicEvent(u"message_stop"_s, {}));
}

void MessagesStreamWriter::failAnswer(const protocol::ApiError &error, QList<SseEvent> &events)
{
    SseEvent event;
    event.event = "error";
    event.data = anthropicErrorJson(error);
    events.append(event);
}

} // namespace switchyard::ingress
