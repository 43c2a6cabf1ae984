#include "ingress/responses_ingress.h"

#include "config/config.h"
#include "upstream/adapters/provider_adapter.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QSet>

namespace switchyard::ingress {

// The provider side's shapes (usage, chunks, the unusable-answer error) are shared.
using namespace upstream::adapters;

using namespace Qt::StringLiterals;

namespace {

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

bool absent(const QJsonValue &value)
{
    return value.isUndefined() || value.isNull();
}

protocol::ApiError invalidValue(const QString &param, const QString &got, const QString &expected)
{
    return protocol::ApiError::invalidRequest(
        u"Invalid value for '%1': `%2`. Supported values are: %3."_s.arg(param, got, expected),
        param);
}

// What cannot pass when /v1/responses is served through chat completions (the gateway only gets
// here when no provider of the model speaks the Responses API itself): state
// kept between requests and tools the provider itself runs.
protocol::ApiError nativeOnly(const QString &what, const QString &param)
{
    return protocol::ApiError::invalidRequest(
        u"%1 is supported only by providers that speak the Responses API natively "
        u"(`responses_api: true`); none of this model's providers does, so it is served through "
        u"chat completions."_s.arg(what),
        param);
}

protocol::ApiError unsupported(const QString &what, const QString &param)
{
    return protocol::ApiError::invalidRequest(
        u"%1 in '%2' is not supported on /v1/responses by this gateway."_s.arg(what, param), param);
}

// Every top-level field a Responses request may carry. The others are refused by name, as the
// Responses API itself refuses them, so a typo never passes silently.
const QSet<QString> &knownFields()
{
    static const QSet<QString> fields{
        u"background"_s,
        u"context_management"_s,
        u"conversation"_s,
        u"include"_s,
        u"input"_s,
        u"instructions"_s,
        u"max_output_tokens"_s,
        u"metadata"_s,
        u"model"_s,
        u"moderation"_s,
        u"parallel_tool_calls"_s,
        u"previous_response_id"_s,
        u"prompt"_s,
        u"prompt_cache_key"_s,
        u"prompt_cache_options"_s,
        u"prompt_cache_retention"_s,
        u"reasoning"_s,
        u"safety_identifier"_s,
        u"service_tier"_s,
        u"store"_s,
        u"stream"_s,
        u"stream_options"_s,
        u"switchyard"_s,
        u"temperature"_s,
        u"text"_s,
        u"tool_choice"_s,
        u"tools"_s,
        u"top_logprobs"_s,
        u"top_p"_s,
        u"truncation"_s,
        u"user"_s,
    };
    return fields;
}

QJsonObject textPart(const QJsonValue &text)
{
    return {{u"type"_s, u"text"_s}, {u"text"_s, text}};
}

// A list of chat text parts as the shortest content: a string for one part.
QJsonValue contentOf(const QJsonArray &parts)
{
    if (parts.size() == 1 && parts.first().toObject().value(u"type"_s).toString() == u"text"_s)
        return parts.first().toObject().value(u"text"_s);
    return parts;
}

class ChatRequestBuilder {
public:
    explicit ChatRequestBuilder(const QJsonObject &request) : m_request(request) {}

    std::optional<protocol::ApiError> error;
    QJsonObject chat;
    QJsonObject echo;
    QStringList ignored;

    void build()
    {
        for (const QString &key : m_request.keys()) {
            if (!knownFields().contains(key)) {
                fail(protocol::ApiError::invalidRequest(u"Unknown parameter: '%1'."_s.arg(key),
                                                        key));
                return;
            }
        }
        const QJsonValue model = m_request.value(u"model"_s);
        if (model.isUndefined())
            return fail(protocol::missingParameter(u"model"_s));
        if (!model.isString())
            return fail(protocol::wrongJsonType(u"model"_s, u"a string"_s, model));
        chat.insert(u"model"_s, model);
        echo.insert(u"model"_s, model);

        refuseStatefulFields();
        if (error)
            return;
        convertInput();
        convertTools();
        convertToolChoice();
        convertSampling();
        convertText();
        convertReasoning();
        convertStreaming();
        convertIgnorable();
        convertPassedThrough();
        // The Responses API takes these without tools; OpenAI's chat endpoint refuses them.
        if (!chat.contains(u"tools"_s)) {
            chat.remove(u"tool_choice"_s);
            chat.remove(u"parallel_tool_calls"_s);
        }
    }

private:
    void fail(protocol::ApiError problem)
    {
        if (!error)
            error = std::move(problem);
    }

    // The conversation must be in the request: nothing is stored here to continue from.
    void refuseStatefulFields()
    {
        if (!absent(m_request.value(u"previous_response_id"_s)))
            return fail(nativeOnly(u"previous_response_id"_s, u"previous_response_id"_s));
        if (!absent(m_request.value(u"conversation"_s)))
            return fail(nativeOnly(u"conversation"_s, u"conversation"_s));
        if (!absent(m_request.value(u"prompt"_s)))
            return fail(nativeOnly(u"A stored prompt (`prompt`)"_s, u"prompt"_s));
        if (m_request.value(u"background"_s).toBool())
            return fail(nativeOnly(u"background"_s, u"background"_s));
        const QJsonValue management = m_request.value(u"context_management"_s);
        if (!absent(management) && !(management.isArray() && management.toArray().isEmpty()))
            return fail(nativeOnly(u"context_management"_s, u"context_management"_s));
        if (!absent(m_request.value(u"moderation"_s)))
            return fail(nativeOnly(u"moderation"_s, u"moderation"_s));
        echo.insert(u"previous_response_id"_s, QJsonValue::Null);
        // Nothing is kept, whatever `store` says: the echo tells the client so.
        echo.insert(u"store"_s, false);
        if (m_request.value(u"store"_s).toBool())
            ignored.append(u"store"_s);
        else if (!absent(m_request.value(u"store"_s)) && !m_request.value(u"store"_s).isBool())
            fail(protocol::wrongJsonType(u"store"_s, u"a boolean"_s, m_request.value(u"store"_s)));
    }

    void convertInput()
    {
        QJsonArray messages;
        const QJsonValue instructions = m_request.value(u"instructions"_s);
        if (instructions.isString()) {
            if (!instructions.toString().isEmpty())
                messages.append(
                    QJsonObject{{u"role"_s, u"system"_s}, {u"content"_s, instructions}});
        } else if (!absent(instructions)) {
            return fail(protocol::wrongJsonType(u"instructions"_s, u"a string"_s, instructions));
        }
        echo.insert(u"instructions"_s, instructions.isString() ? instructions : QJsonValue());

        const QJsonValue input = m_request.value(u"input"_s);
        if (input.isUndefined())
            return fail(protocol::missingParameter(u"input"_s));
        if (input.isString()) {
            messages.append(QJsonObject{{u"role"_s, u"user"_s}, {u"content"_s, input}});
        } else if (input.isArray()) {
            const QJsonArray items = input.toArray();
            for (qsizetype index = 0; index < items.size() && !error; ++index)
                convertItem(items.at(index), u"input[%1]"_s.arg(index), messages);
        } else {
            return fail(protocol::wrongJsonType(u"input"_s,
                                                u"a string or an array of input items"_s, input));
        }
        chat.insert(u"messages"_s, messages);
    }

    void convertItem(const QJsonValue &value, const QString &param, QJsonArray &messages)
    {
        if (!value.isObject())
            return fail(protocol::wrongJsonType(param, u"an object"_s, value));
        const QJsonObject item = value.toObject();
        const QString type = item.value(u"type"_s).toString(u"message"_s);
        if (type == u"message"_s)
            return convertMessage(item, param, messages);
        if (type == u"function_call"_s)
            return convertFunctionCall(item, param, messages);
        if (type == u"function_call_output"_s)
            return convertFunctionCallOutput(item, param, messages);
        if (type == u"reasoning"_s) {
            // The model's own earlier reasoning: no chat provider takes it back.
            if (!ignored.contains(u"input[type=reasoning]"_s))
                ignored.append(u"input[type=reasoning]"_s);
            return;
        }
        if (type == u"item_reference"_s)
            return fail(nativeOnly(u"An `item_reference` to a stored item"_s, param));
        // web_search_call, computer_call, mcp_call, ...: items of tools only the provider runs.
        fail(nativeOnly(u"An input item of type `%1`"_s.arg(type), param + u".type"_s));
    }

    void convertMessage(const QJsonObject &item, const QString &param, QJsonArray &messages)
    {
        const QString role = item.value(u"role"_s).toString();
        const QJsonValue content = item.value(u"content"_s);
        if (!item.value(u"role"_s).isString())
            return fail(protocol::missingParameter(param + u".role"_s));
        if (role != u"user"_s && role != u"assistant"_s && role != u"system"_s &&
            role != u"developer"_s) {
            return fail(invalidValue(param + u".role"_s, role,
                                     u"'user', 'assistant', 'system' and 'developer'"_s));
        }
        // `developer` is OpenAI's newer name for the system role; most other providers know
        // only `system`.
        const QString chatRole = role == u"developer"_s ? u"system"_s : role;
        if (content.isString()) {
            messages.append(QJsonObject{{u"role"_s, chatRole}, {u"content"_s, content}});
            return;
        }
        if (!content.isArray()) {
            return fail(protocol::wrongJsonType(
                param + u".content"_s, u"a string or an array of content parts"_s, content));
        }
        if (role == u"assistant"_s)
            return convertAssistantParts(content.toArray(), param, messages);
        QJsonArray parts;
        const QJsonArray list = content.toArray();
        for (qsizetype index = 0; index < list.size() && !error; ++index) {
            const QString partParam = u"%1.content[%2]"_s.arg(param).arg(index);
            const QJsonObject part = list.at(index).toObject();
            const QString type = part.value(u"type"_s).toString();
            if (type == u"input_text"_s) {
                parts.append(textPart(part.value(u"text"_s)));
            } else if (chatRole == u"system"_s) {
                fail(protocol::ApiError::invalidRequest(
                    u"Content of type `%1` in '%2' cannot be given in a `%3` message: chat "
                    u"completions take only text there."_s.arg(type, partParam, role),
                    partParam));
            } else if (type == u"input_image"_s) {
                convertImage(part, partParam, parts);
            } else if (type == u"input_file"_s) {
                convertFile(part, partParam, parts);
            } else {
                fail(unsupported(u"A content part of type `%1`"_s.arg(type), partParam));
            }
        }
        messages.append(QJsonObject{{u"role"_s, chatRole}, {u"content"_s, contentOf(parts)}});
    }

    void convertImage(const QJsonObject &part, const QString &param, QJsonArray &parts)
    {
        if (!absent(part.value(u"file_id"_s)))
            return fail(nativeOnly(u"An image given by `file_id`"_s, param + u".file_id"_s));
        const QJsonValue url = part.value(u"image_url"_s);
        if (!url.isString())
            return fail(protocol::missingParameter(param + u".image_url"_s));
        QJsonObject image{{u"url"_s, url}};
        if (part.value(u"detail"_s).isString())
            image.insert(u"detail"_s, part.value(u"detail"_s));
        parts.append(QJsonObject{{u"type"_s, u"image_url"_s}, {u"image_url"_s, image}});
    }

    void convertFile(const QJsonObject &part, const QString &param, QJsonArray &parts)
    {
        if (!absent(part.value(u"file_url"_s)))
            return fail(nativeOnly(u"A file given by `file_url`"_s, param + u".file_url"_s));
        QJsonObject file;
        for (const QString &name : {u"file_data"_s, u"file_id"_s, u"filename"_s}) {
            if (part.value(name).isString())
                file.insert(name, part.value(name));
        }
        if (!file.contains(u"file_data"_s) && !file.contains(u"file_id"_s))
            return fail(protocol::missingParameter(param + u".file_data"_s));
        parts.append(QJsonObject{{u"type"_s, u"file"_s}, {u"file"_s, file}});
    }

    void convertAssistantParts(const QJsonArray &list, const QString &param, QJsonArray &messages)
    {
        QString text;
        QString refusal;
        for (qsizetype index = 0; index < list.size(); ++index) {
            const QJsonObject part = list.at(index).toObject();
            const QString type = part.value(u"type"_s).toString();
            if (type == u"output_text"_s || type == u"input_text"_s) {
                text += part.value(u"text"_s).toString();
            } else if (type == u"refusal"_s) {
                refusal += part.value(u"refusal"_s).toString();
            } else {
                return fail(unsupported(
                    u"A content part of type `%1` in an `assistant` message"_s.arg(type),
                    u"%1.content[%2]"_s.arg(param).arg(index)));
            }
        }
        QJsonObject message{{u"role"_s, u"assistant"_s}, {u"content"_s, text}};
        if (!refusal.isEmpty())
            message.insert(u"refusal"_s, refusal);
        messages.append(message);
    }

    // Calls join the assistant message right before them: the Responses API lists one turn's
    // text and calls as separate items, chat keeps them in one message.
    void convertFunctionCall(const QJsonObject &item, const QString &param, QJsonArray &messages)
    {
        for (const QString &name : {u"call_id"_s, u"name"_s, u"arguments"_s}) {
            if (!item.value(name).isString())
                return fail(item.value(name).isUndefined()
                                ? protocol::missingParameter(u"%1.%2"_s.arg(param, name))
                                : protocol::wrongJsonType(u"%1.%2"_s.arg(param, name),
                                                          u"a string"_s, item.value(name)));
        }
        const QJsonObject call{
            {u"id"_s, item.value(u"call_id"_s)},
            {u"type"_s, u"function"_s},
            {u"function"_s, QJsonObject{{u"name"_s, item.value(u"name"_s)},
                                        {u"arguments"_s, item.value(u"arguments"_s)}}}};
        QJsonObject assistant{{u"role"_s, u"assistant"_s}, {u"content"_s, QJsonValue()}};
        const bool joinsPrevious =
            !messages.isEmpty() &&
            messages.last().toObject().value(u"role"_s).toString() == u"assistant"_s;
        if (joinsPrevious) {
            assistant = messages.last().toObject();
            messages.removeLast();
            if (assistant.value(u"content"_s).toString().isEmpty())
                assistant.insert(u"content"_s, QJsonValue());
        }
        QJsonArray calls = assistant.value(u"tool_calls"_s).toArray();
        calls.append(call);
        assistant.insert(u"tool_calls"_s, calls);
        messages.append(assistant);
    }

    void convertFunctionCallOutput(const QJsonObject &item, const QString &param,
                                   QJsonArray &messages)
    {
        if (!item.value(u"call_id"_s).isString())
            return fail(protocol::missingParameter(param + u".call_id"_s));
        const QJsonValue output = item.value(u"output"_s);
        QJsonValue content;
        if (output.isString()) {
            content = output;
        } else if (output.isArray()) {
            QJsonArray parts;
            const QJsonArray list = output.toArray();
            for (qsizetype index = 0; index < list.size(); ++index) {
                const QJsonObject part = list.at(index).toObject();
                const QString type = part.value(u"type"_s).toString();
                if (type != u"input_text"_s) {
                    // Chat's tool messages take text only.
                    return fail(unsupported(u"A tool output part of type `%1`"_s.arg(type),
                                            u"%1.output[%2]"_s.arg(param).arg(index)));
                }
                parts.append(textPart(part.value(u"text"_s)));
            }
            content = contentOf(parts);
        } else {
            return fail(output.isUndefined()
                            ? protocol::missingParameter(param + u".output"_s)
                            : protocol::wrongJsonType(param + u".output"_s,
                                                      u"a string or an array"_s, output));
        }
        messages.append(QJsonObject{{u"role"_s, u"tool"_s},
                                    {u"tool_call_id"_s, item.value(u"call_id"_s)},
                                    {u"content"_s, content}});
    }

    void convertTools()
    {
        const QJsonValue value = m_request.value(u"tools"_s);
        echo.insert(u"tools"_s, value.isArray() ? value : QJsonArray());
        if (absent(value) || error)
            return;
        if (!value.isArray())
            return fail(protocol::wrongJsonType(u"tools"_s, u"an array"_s, value));
        QJsonArray tools;
        const QJsonArray list = value.toArray();
        for (qsizetype index = 0; index < list.size(); ++index) {
            const QString param = u"tools[%1]"_s.arg(index);
            const QJsonObject tool = list.at(index).toObject();
            const QString type = tool.value(u"type"_s).toString();
            if (type != u"function"_s) {
                // web_search, file_search, code_interpreter, mcp...: the provider runs these.
                return fail(nativeOnly(u"The built-in tool `%1`"_s.arg(type), param + u".type"_s));
            }
            if (!tool.value(u"name"_s).isString())
                return fail(protocol::missingParameter(param + u".name"_s));
            QJsonObject function{{u"name"_s, tool.value(u"name"_s)}};
            for (const QString &name : {u"description"_s, u"parameters"_s, u"strict"_s}) {
                if (!absent(tool.value(name)))
                    function.insert(name, tool.value(name));
            }
            tools.append(QJsonObject{{u"type"_s, u"function"_s}, {u"function"_s, function}});
        }
        if (!tools.isEmpty())
            chat.insert(u"tools"_s, tools);
    }

    void convertToolChoice()
    {
        const QJsonValue choice = m_request.value(u"tool_choice"_s);
        echo.insert(u"tool_choice"_s, absent(choice) ? QJsonValue(u"auto"_s) : choice);
        if (absent(choice) || error)
            return;
        if (choice.isString()) {
            const QString mode = choice.toString();
            if (mode != u"auto"_s && mode != u"none"_s && mode != u"required"_s)
                return fail(invalidValue(u"tool_choice"_s, mode, u"'auto', 'none', 'required'"_s));
            chat.insert(u"tool_choice"_s, mode);
            return;
        }
        const QString type = choice.toObject().value(u"type"_s).toString();
        if (type != u"function"_s)
            return fail(
                nativeOnly(u"A `tool_choice` of type `%1`"_s.arg(type), u"tool_choice.type"_s));
        const QJsonValue name = choice.toObject().value(u"name"_s);
        if (!name.isString())
            return fail(protocol::missingParameter(u"tool_choice.name"_s));
        chat.insert(u"tool_choice"_s, QJsonObject{{u"type"_s, u"function"_s},
                                                  {u"function"_s, QJsonObject{{u"name"_s, name}}}});
    }

    // Numbers and flags with the same meaning in both APIs; only the limit's name differs.
    void convertSampling()
    {
        const struct {
            QString responsesName;
            QString chatName;
            QString expected;
            QJsonValue::Type type;
        } fields[] = {
            {u"max_output_tokens"_s, u"max_completion_tokens"_s, u"an integer"_s,
             QJsonValue::Double},
            {u"temperature"_s, u"temperature"_s, u"a number"_s, QJsonValue::Double},
            {u"top_p"_s, u"top_p"_s, u"a number"_s, QJsonValue::Double},
            {u"parallel_tool_calls"_s, u"parallel_tool_calls"_s, u"a boolean"_s, QJsonValue::Bool},
        };
        for (const auto &field : fields) {
            const QJsonValue value = m_request.value(field.responsesName);
            if (value.type() == field.type)
                chat.insert(field.chatName, value);
            else if (!absent(value))
                return fail(protocol::wrongJsonType(field.responsesName, field.expected, value));
        }
        for (const QString &name : {u"max_output_tokens"_s, u"temperature"_s, u"top_p"_s})
            echo.insert(name,
                        m_request.value(name).isDouble() ? m_request.value(name) : QJsonValue());
        echo.insert(u"parallel_tool_calls"_s,
                    m_request.value(u"parallel_tool_calls"_s).toBool(true));
        const QJsonValue metadata = m_request.value(u"metadata"_s);
        if (!absent(metadata) && !metadata.isObject())
            return fail(protocol::wrongJsonType(u"metadata"_s, u"an object"_s, metadata));
        // Kept for the echo only: chat's `metadata` means "store with this", which needs
        // store:true at OpenAI and is refused by other providers.
        echo.insert(u"metadata"_s, metadata.isObject() ? metadata : QJsonObject());
    }

    void convertText()
    {
        const QJsonValue text = m_request.value(u"text"_s);
        echo.insert(u"text"_s,
                    text.isObject()
                        ? text
                        : QJsonObject{{u"format"_s, QJsonObject{{u"type"_s, u"text"_s}}}});
        if (absent(text) || error)
            return;
        if (!text.isObject())
            return fail(protocol::wrongJsonType(u"text"_s, u"an object"_s, text));
        const QJsonValue verbosity = text.toObject().value(u"verbosity"_s);
        if (verbosity.isString())
            chat.insert(u"verbosity"_s, verbosity);
        const QJsonValue formatValue = text.toObject().value(u"format"_s);
        if (absent(formatValue))
            return;
        const QJsonObject format = formatValue.toObject();
        const QString type = format.value(u"type"_s).toString();
        if (type == u"text"_s)
            return;
        if (type == u"json_object"_s) {
            chat.insert(u"response_format"_s, QJsonObject{{u"type"_s, u"json_object"_s}});
            return;
        }
        if (type != u"json_schema"_s) {
            return fail(invalidValue(u"text.format.type"_s, type,
                                     u"'text', 'json_object', 'json_schema'"_s));
        }
        if (!format.value(u"name"_s).isString())
            return fail(protocol::missingParameter(u"text.format.name"_s));
        if (!format.value(u"schema"_s).isObject())
            return fail(protocol::missingParameter(u"text.format.schema"_s));
        QJsonObject schema{{u"name"_s, format.value(u"name"_s)},
                           {u"schema"_s, format.value(u"schema"_s)}};
        for (const QString &name : {u"description"_s, u"strict"_s}) {
            if (!absent(format.value(name)))
                schema.insert(name, format.value(name));
        }
        chat.insert(u"response_format"_s,
                    QJsonObject{{u"type"_s, u"json_schema"_s}, {u"json_schema"_s, schema}});
    }

    void convertReasoning()
    {
        const QJsonValue reasoning = m_request.value(u"reasoning"_s);
        QJsonObject applied{{u"effort"_s, QJsonValue()}, {u"summary"_s, QJsonValue()}};
        if (!absent(reasoning) && !reasoning.isObject())
            return fail(protocol::wrongJsonType(u"reasoning"_s, u"an object"_s, reasoning));
        const QJsonObject object = reasoning.toObject();
        for (auto it = object.constBegin(); it != object.constEnd(); ++it) {
            if (it.key() == u"effort"_s && it.value().isString()) {
                chat.insert(u"reasoning_effort"_s, it.value());
                applied.insert(u"effort"_s, it.value());
            } else if (!absent(it.value())) {
                // Summaries of reasoning are produced by the Responses API only.
                ignored.append(u"reasoning."_s + it.key());
            }
        }
        echo.insert(u"reasoning"_s, applied);
    }

    void convertStreaming()
    {
        const QJsonValue stream = m_request.value(u"stream"_s);
        if (!absent(stream) && !stream.isBool())
            return fail(protocol::wrongJsonType(u"stream"_s, u"a boolean"_s, stream));
        if (stream.toBool()) {
            chat.insert(u"stream"_s, true);
            chat.insert(u"stream_options"_s, QJsonObject{{u"include_usage"_s, true}});
        }
    }

    // Accepted so that clients which always send them work, but not applied: each one set is
    // named in the x-switchyard-ignored-fields header.
    void convertIgnorable()
    {
        const QJsonValue truncation = m_request.value(u"truncation"_s);
        if (truncation.isString() && truncation.toString() == u"auto"_s) {
            ignored.append(u"truncation"_s);
        } else if (!absent(truncation) && truncation.toString() != u"disabled"_s) {
            return fail(
                invalidValue(u"truncation"_s, truncation.toString(), u"'auto', 'disabled'"_s));
        }
        echo.insert(u"truncation"_s, u"disabled"_s);
        const QJsonValue include = m_request.value(u"include"_s);
        if (include.isArray() && !include.toArray().isEmpty())
            ignored.append(u"include"_s);
        else if (!absent(include) && !include.isArray())
            return fail(protocol::wrongJsonType(u"include"_s, u"an array"_s, include));
        for (const QString &name :
             {u"stream_options"_s, u"top_logprobs"_s, u"prompt_cache_options"_s}) {
            if (!absent(m_request.value(name)))
                ignored.append(name);
        }
    }

    // Same name and meaning in chat completions.
    void convertPassedThrough()
    {
        for (const QString &name : {u"user"_s, u"safety_identifier"_s, u"prompt_cache_key"_s,
                                    u"prompt_cache_retention"_s, u"service_tier"_s}) {
            const QJsonValue value = m_request.value(name);
            if (value.isString())
                chat.insert(name, value);
            else if (!absent(value))
                return fail(protocol::wrongJsonType(name, u"a string"_s, value));
        }
        for (const QString &name : {u"user"_s, u"service_tier"_s})
            echo.insert(name,
                        m_request.value(name).isString() ? m_request.value(name) : QJsonValue());
        // The gateway's own routing object: read and stripped before the provider sees it.
        if (m_request.contains(u"switchyard"_s))
            chat.insert(u"switchyard"_s, m_request.value(u"switchyard"_s));
    }

    const QJsonObject &m_request;
};

QString idBase(const QString &responseId)
{
    return responseId.startsWith(u"resp_"_s) ? responseId.sliced(5) : responseId;
}

QString messageItemId(const QString &responseId, int outputIndex)
{
    return u"msg_%1_%2"_s.arg(idBase(responseId)).arg(outputIndex);
}

QString callItemId(const QString &responseId, int outputIndex)
{
    return u"fc_%1_%2"_s.arg(idBase(responseId)).arg(outputIndex);
}

// Responses usage for a chat `usage` object; null when the provider reported none.
QJsonValue responsesUsage(const QJsonValue &chatUsage)
{
    if (!chatUsage.isObject())
        return QJsonValue::Null;
    const QJsonObject usage = chatUsage.toObject();
    const qint64 input = usage.value(u"prompt_tokens"_s).toInteger();
    const qint64 output = usage.value(u"completion_tokens"_s).toInteger();
    const qint64 total = usage.value(u"total_tokens"_s).toInteger(input + output);
    return QJsonObject{
        {u"input_tokens"_s, input},
        {u"input_tokens_details"_s,
         QJsonObject{{u"cached_tokens"_s, usage.value(u"prompt_tokens_details"_s)
                                              .toObject()
                                              .value(u"cached_tokens"_s)
                                              .toInteger()}}},
        {u"output_tokens"_s, output},
        {u"output_tokens_details"_s,
         QJsonObject{{u"reasoning_tokens"_s, usage.value(u"completion_tokens_details"_s)
                                                 .toObject()
                                                 .value(u"reasoning_tokens"_s)
                                                 .toInteger()}}},
        {u"total_tokens"_s, total}};
}

// incomplete_details for a chat finish_reason; null when the answer is whole.
QJsonValue incompleteDetails(const QString &finishReason)
{
    if (finishReason == u"length"_s)
        return QJsonObject{{u"reason"_s, u"max_output_tokens"_s}};
    if (finishReason == u"content_filter"_s)
        return QJsonObject{{u"reason"_s, u"content_filter"_s}};
    return QJsonValue::Null;
}

QJsonObject responseObject(const QJsonObject &echo, const QString &id, qint64 createdAtSecs,
                           const QString &model, const QString &status, const QJsonArray &output,
                           const QJsonValue &usage, const QJsonValue &incomplete)
{
    QJsonObject response = echo;
    response.insert(u"id"_s, id);
    response.insert(u"object"_s, u"response"_s);
    response.insert(u"created_at"_s, createdAtSecs);
    response.insert(u"status"_s, status);
    response.insert(u"model"_s, model.isEmpty() ? echo.value(u"model"_s) : QJsonValue(model));
    response.insert(u"output"_s, output);
    response.insert(u"usage"_s, usage);
    response.insert(u"incomplete_details"_s, incomplete);
    response.insert(u"error"_s, QJsonValue::Null);
    return response;
}

QJsonObject outputTextPart(const QString &text)
{
    return {{u"type"_s, u"output_text"_s}, {u"text"_s, text}, {u"annotations"_s, QJsonArray()}};
}

QJsonObject refusalPart(const QString &refusal)
{
    return {{u"type"_s, u"refusal"_s}, {u"refusal"_s, refusal}};
}

QJsonObject messageItem(const QString &id, const QString &status, const QJsonArray &content)
{
    return {{u"type"_s, u"message"_s},
            {u"id"_s, id},
            {u"status"_s, status},
            {u"role"_s, u"assistant"_s},
            {u"content"_s, content}};
}

QJsonObject functionCallItem(const QString &id, const QString &status, const QString &callId,
                             const QString &name, const QString &arguments)
{
    return {{u"type"_s, u"function_call"_s}, {u"id"_s, id},     {u"status"_s, status},
            {u"call_id"_s, callId},          {u"name"_s, name}, {u"arguments"_s, arguments}};
}

qint64 createdAtOf(const QJsonObject &completion)
{
    const QJsonValue created = completion.value(u"created"_s);
    return created.isDouble() ? created.toInteger() : QDateTime::currentSecsSinceEpoch();
}

} // namespace

std::variant<ResponsesChatRequest, protocol::ApiError>
chatRequestFromResponses(QByteArrayView responsesBody)
{
    QJsonParseError parseError;
    const QJsonDocument document =
        QJsonDocument::fromJson(responsesBody.toByteArray(), &parseError);
    if (!document.isObject()) {
        return protocol::ApiError::invalidRequest(
            u"We could not parse the JSON body of your request (%1). The body must be a JSON "
            u"object."_s.arg(parseError.error == QJsonParseError::NoError
                                 ? u"not an object"_s
                                 : parseError.errorString()));
    }
    const QJsonObject request = document.object();
    ChatRequestBuilder builder(request);
    builder.build();
    if (builder.error)
        return *builder.error;
    return ResponsesChatRequest{compact(builder.chat), builder.ignored, builder.echo};
}

std::optional<QByteArray> chatBodyForNativeProviders(const config::Config &config,
                                                     QByteArrayView responsesBody)
{
    const QJsonObject request = QJsonDocument::fromJson(responsesBody.toByteArray()).object();
    const QString model = request.value(u"model"_s).toString();
    if (model.isEmpty())
        return std::nullopt;
    const bool served = std::any_of(config.providers.cbegin(), config.providers.cend(),
                                    [&model](const config::ProviderConfig &provider) {
                                        return provider.speaksResponses &&
                                               provider.serves(provider.upstreamModelFor(model),
                                                               protocol::Operation::Responses);
                                    });
    if (!served)
        return std::nullopt;
    QJsonObject chat{{u"model"_s, model},
                     {u"stream"_s, request.value(u"stream"_s).toBool()},
                     {u"messages"_s,
                      QJsonArray{QJsonObject{{u"role"_s, u"user"_s}, {u"content"_s, QString()}}}}};
    if (request.contains(u"switchyard"_s))
        chat.insert(u"switchyard"_s, request.value(u"switchyard"_s));
    return QJsonDocument(chat).toJson(QJsonDocument::Compact);
}

QString responseIdFor(QByteArrayView requestId)
{
    const QString id = QString::fromUtf8(requestId);
    return id.startsWith(u"resp_"_s) ? id : u"resp_"_s + id;
}

std::variant<QByteArray, protocol::ApiError> responseFromCompletion(QByteArrayView completionJson,
                                                                    const QJsonObject &echo,
                                                                    QByteArrayView responseId)
{
    const QJsonObject completion = QJsonDocument::fromJson(completionJson.toByteArray()).object();
    const QJsonArray choices = completion.value(u"choices"_s).toArray();
    if (choices.isEmpty() || !choices.first().isObject()) {
        return unusableAnswer(
            u"The provider sent a chat completion without choices; it cannot be given as a "
            u"Responses `response`."_s);
    }
    const QString id = responseIdFor(responseId);
    const QJsonObject choice = choices.first().toObject();
    const QJsonObject message = choice.value(u"message"_s).toObject();
    const QString finishReason = choice.value(u"finish_reason"_s).toString();
    const QJsonValue incomplete = incompleteDetails(finishReason);

    QJsonArray output;
    QJsonArray content;
    const QString text = message.value(u"content"_s).toString();
    if (!text.isEmpty())
        content.append(outputTextPart(text));
    const QString refusal = message.value(u"refusal"_s).toString();
    if (!refusal.isEmpty())
        content.append(refusalPart(refusal));
    if (!content.isEmpty()) {
        output.append(messageItem(messageItemId(id, int(output.size())), u"completed"_s, content));
    }
    for (const QJsonValue &value : message.value(u"tool_calls"_s).toArray()) {
        const QJsonObject call = value.toObject();
        const QJsonObject function = call.value(u"function"_s).toObject();
        output.append(functionCallItem(
            callItemId(id, int(output.size())), u"completed"_s, call.value(u"id"_s).toString(),
            function.value(u"name"_s).toString(), function.value(u"arguments"_s).toString()));
    }
    // Only the last item can have been cut short.
    if (!incomplete.isNull() && !output.isEmpty()) {
        QJsonObject last = output.last().toObject();
        last.insert(u"status"_s, u"incomplete"_s);
        output.replace(output.size() - 1, last);
    }
    QJsonObject applied = echo;
    if (completion.value(u"service_tier"_s).isString())
        applied.insert(u"service_tier"_s, completion.value(u"service_tier"_s));
    return compact(responseObject(applied, id, createdAtOf(completion),
                                  completion.value(u"model"_s).toString(),
                                  incomplete.isNull() ? u"completed"_s : u"incomplete"_s, output,
                                  responsesUsage(completion.value(u"usage"_s)), incomplete));
}

ResponsesStreamWriter::ResponsesStreamWriter(QJsonObject echo, QByteArray responseId)
    : m_echo(std::move(echo)), m_responseId(responseIdFor(responseId))
{}

void ResponsesStreamWriter::append(QList<SseEvent> &events, const QString &type, QJsonObject data)
{
    data.insert(u"type"_s, type);
    data.insert(u"sequence_number"_s, m_nextSequenceNumber++);
    SseEvent event;
    event.event = type.toUtf8();
    event.data = compact(data);
    events.append(event);
}

QJsonObject ResponsesStreamWriter::response(const QString &status, const QJsonArray &output) const
{
    return responseObject(m_echo, m_responseId, m_createdAtSecs, m_model, status, output,
                          responsesUsage(m_reader.chatUsage()),
                          incompleteDetails(m_reader.finishReason()));
}

void ResponsesStreamWriter::startAnswer(const QJsonObject &firstChunk, QList<SseEvent> &events)
{
    m_createdAtSecs = createdAtOf(firstChunk);
    m_model = firstChunk.value(u"model"_s).toString();
    if (firstChunk.value(u"service_tier"_s).isString())
        m_echo.insert(u"service_tier"_s, firstChunk.value(u"service_tier"_s));
    const QJsonObject snapshot = response(u"in_progress"_s, {});
    append(events, u"response.created"_s, {{u"response"_s, snapshot}});
    append(events, u"response.in_progress"_s, {{u"response"_s, snapshot}});
}

void ResponsesStreamWriter::openMessage(QList<SseEvent> &events)
{
    if (m_message)
        return;
    closeCall(u"completed"_s, events);
    OpenMessage message;
    message.outputIndex = int(m_output.size());
    message.itemId = messageItemId(m_responseId, message.outputIndex);
    const QJsonObject item = messageItem(message.itemId, u"in_progress"_s, {});
    m_output.append(item);
    append(events, u"response.output_item.added"_s,
           {{u"output_index"_s, message.outputIndex}, {u"item"_s, item}});
    m_message = message;
}

void ResponsesStreamWriter::openPart(Part kind, QList<SseEvent> &events)
{
    openMessage(events);
    if (m_message->openPart == kind)
        return;
    closePart(events);
    m_message->openPart = kind;
    m_message->openPartText.clear();
    append(events, u"response.content_part.added"_s,
           {{u"item_id"_s, m_message->itemId},
            {u"output_index"_s, m_message->outputIndex},
            {u"content_index"_s, int(m_message->parts.size())},
            {u"part"_s, kind == Part::Text ? outputTextPart({}) : refusalPart({})}});
}

void ResponsesStreamWriter::closePart(QList<SseEvent> &events)
{
    if (!m_message || m_message->openPart == Part::None)
        return;
    const QString &text = m_message->openPartText;
    QJsonObject where{{u"item_id"_s, m_message->itemId},
                      {u"output_index"_s, m_message->outputIndex},
                      {u"content_index"_s, int(m_message->parts.size())}};
    QJsonObject done = where;
    QJsonObject part;
    if (m_message->openPart == Part::Text) {
        done.insert(u"text"_s, text);
        done.insert(u"logprobs"_s, QJsonArray());
        append(events, u"response.output_text.done"_s, done);
        part = outputTextPart(text);
    } else {
        done.insert(u"refusal"_s, text);
        append(events, u"response.refusal.done"_s, done);
        part = refusalPart(text);
    }
    where.insert(u"part"_s, part);
    append(events, u"response.content_part.done"_s, where);
    m_message->parts.append(part);
    m_message->openPart = Part::None;
}

void ResponsesStreamWriter::closeMessage(const QString &status, QList<SseEvent> &events)
{
    if (!m_message)
        return;
    closePart(events);
    const QJsonObject item = messageItem(m_message->itemId, status, m_message->parts);
    m_output.replace(m_message->outputIndex, item);
    append(events, u"response.output_item.done"_s,
           {{u"output_index"_s, m_message->outputIndex}, {u"item"_s, item}});
    m_message.reset();
}

ResponsesStreamWriter::OpenCall *ResponsesStreamWriter::openCall(const ToolCallPiece &piece,
                                                                 QList<SseEvent> &events)
{
    const int chatIndex = piece.index;
    const QString callId = piece.id.value_or(QString());
    // Some providers repeat the id on every piece; a different id is a new call.
    if (m_call && m_call->chatIndex == chatIndex && (callId.isEmpty() || callId == m_call->callId))
        return &*m_call;
    const auto closed = m_closedCallIds.constFind(chatIndex);
    if (closed != m_closedCallIds.cend() && (callId.isEmpty() || callId == *closed))
        return nullptr;
    // Calls arrive one after another, as the Responses API streams them: the previous one is
    // whole once the next begins.
    closeMessage(u"completed"_s, events);
    closeCall(u"completed"_s, events);
    OpenCall call;
    call.outputIndex = int(m_output.size());
    call.chatIndex = chatIndex;
    call.itemId = callItemId(m_responseId, call.outputIndex);
    call.callId = callId;
    call.name = piece.name;
    const QJsonObject item =
        functionCallItem(call.itemId, u"in_progress"_s, call.callId, call.name, {});
    m_output.append(item);
    append(events, u"response.output_item.added"_s,
           {{u"output_index"_s, call.outputIndex}, {u"item"_s, item}});
    m_call = call;
    return &*m_call;
}

void ResponsesStreamWriter::closeCall(const QString &status, QList<SseEvent> &events)
{
    if (!m_call)
        return;
    append(events, u"response.function_call_arguments.done"_s,
           {{u"item_id"_s, m_call->itemId},
            {u"output_index"_s, m_call->outputIndex},
            {u"name"_s, m_call->name},
            {u"arguments"_s, m_call->arguments}});
    const QJsonObject item =
        functionCallItem(m_call->itemId, status, m_call->callId, m_call->name, m_call->arguments);
    m_output.replace(m_call->outputIndex, item);
    append(events, u"response.output_item.done"_s,
           {{u"output_index"_s, m_call->outputIndex}, {u"item"_s, item}});
    m_closedCallIds.insert(m_call->chatIndex, m_call->callId);
    m_call.reset();
}

void ResponsesStreamWriter::appendText(const QString &text, QList<SseEvent> &events)
{
    openPart(Part::Text, events);
    m_message->openPartText += text;
    append(events, u"response.output_text.delta"_s,
           {{u"item_id"_s, m_message->itemId},
            {u"output_index"_s, m_message->outputIndex},
            {u"content_index"_s, int(m_message->parts.size())},
            {u"delta"_s, text},
            {u"logprobs"_s, QJsonArray()}});
}

void ResponsesStreamWriter::appendRefusal(const QString &refusal, QList<SseEvent> &events)
{
    openPart(Part::Refusal, events);
    m_message->openPartText += refusal;
    append(events, u"response.refusal.delta"_s,
           {{u"item_id"_s, m_message->itemId},
            {u"output_index"_s, m_message->outputIndex},
            {u"content_index"_s, int(m_message->parts.size())},
            {u"delta"_s, refusal}});
}

std::optional<protocol::ApiError>
ResponsesStreamWriter::appendToolCallPiece(const ToolCallPiece &piece, QList<SseEvent> &events)
{
    OpenCall *call = openCall(piece, events);
    if (!call) {
        // Its function_call item is already done: the arguments can no longer be told.
        return unusableAnswer(
            u"The provider interleaved the arguments of parallel tool calls, which cannot be "
            u"streamed as Responses function_call items one after another."_s);
    }
    if (piece.arguments.isEmpty())
        return std::nullopt;
    call->arguments += piece.arguments;
    append(events, u"response.function_call_arguments.delta"_s,
           {{u"item_id"_s, call->itemId},
            {u"output_index"_s, call->outputIndex},
            {u"delta"_s, piece.arguments}});
    return std::nullopt;
}

void ResponsesStreamWriter::finishAnswer(QList<SseEvent> &events)
{
    const bool incomplete = !incompleteDetails(m_reader.finishReason()).isNull();
    const QString status = incomplete ? u"incomplete"_s : u"completed"_s;
    // The item still open is the last one: the only one a limit can have cut short.
    closeMessage(status, events);
    closeCall(status, events);
    append(events, incomplete ? u"response.incomplete"_s : u"response.completed"_s,
           {{u"response"_s, response(status, m_output)}});
}

SseEvent responsesErrorEvent(const protocol::ApiError &error, qint64 sequenceNumber)
{
    const auto nullable = [](const QString &value) {
        return value.isEmpty() ? QJsonValue() : QJsonValue(value);
    };
    const QJsonObject data{
        {u"type"_s, u"error"_s},
        {u"code"_s, nullable(error.code)},
        {u"message"_s, error.message},
        {u"param"_s, nullable(error.param)},
        {u"error"_s, QJsonObject{{u"type"_s, error.type.isEmpty() ? u"server_error"_s : error.type},
                                 {u"code"_s, nullable(error.code)},
                                 {u"message"_s, error.message},
                                 {u"param"_s, nullable(error.param)}}},
        {u"sequence_number"_s, sequenceNumber}};
    SseEvent event;
    event.event = "error";
    event.data = compact(data);
    return event;
}

void ResponsesStreamWriter::failAnswer(const protocol::ApiError &error, QList<SseEvent> &events)
{
    events.append(responsesErrorEvent(error, m_nextSequenceNumber++));
    if (!m_reader.started())
        return; // no response was announced, so none can fail
    QJsonArray output = m_output;
    if (m_message) {
        QJsonArray parts = m_message->parts;
        if (m_message->openPart == Part::Text)
            parts.append(outputTextPart(m_message->openPartText));
        else if (m_message->openPart == Part::Refusal)
            parts.append(refusalPart(m_message->openPartText));
        output.replace(m_message->outputIndex,
                       messageItem(m_message->itemId, u"incomplete"_s, parts));
    }
    if (m_call) {
        output.replace(m_call->outputIndex,
                       functionCallItem(m_call->itemId, u"incomplete"_s, m_call->callId,
                                        m_call->name, m_call->arguments));
    }
    QJsonObject failed = response(u"failed"_s, output);
    failed.insert(u"incomplete_details"_s, QJsonValue::Null);
    // The Responses API's own codes for a response that failed while it ran.
    failed.insert(u"error"_s, QJsonObject{{u"code"_s, error.status == 429 ? u"rate_limit_exceeded"_s
                                                                          : u"server_error"_s},
                                          {u"message"_s, error.message}});
    append(events, u"response.failed"_s, {{u"response"_s, failed}});
}

} // namespace switchyard::ingress
