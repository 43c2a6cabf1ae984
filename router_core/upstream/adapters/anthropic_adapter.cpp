#include "upstream/adapters/anthropic_adapter.h"

#include "config/config.h"
#include "upstream/adapters/openai_shapes.h"
#include "upstream/adapters/provider_endpoint.h"

#include "json/json_template.h"
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QStringList>
#include <simdjson.h>

namespace switchyard::upstream::adapters {

using namespace Qt::StringLiterals;

namespace {

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QByteArray headerValue(const HeaderList &headers, QByteArrayView name)
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

// A request this kind of provider cannot serve, said the way OpenAI words parameter errors.
struct Refusal {
    QString message;
    QString param;
};

// Builds a Messages request from an OpenAI chat request. Throws nothing: the first refusal is
// kept and the caller returns it as a 400.
class MessagesRequestBuilder {
public:
    MessagesRequestBuilder(const config::ProviderConfig &provider, const QJsonObject &chat)
        : m_provider(provider), m_chat(chat)
    {}

    std::optional<Refusal> refusal;
    bool legacyFunctions = false;

    QJsonObject build(const QString &upstreamModel, bool stream)
    {
        QJsonObject messages{{u"model"_s, upstreamModel}};
        checkUnsupported();
        convertMessages(messages);
        const QJsonValue limit = m_chat.contains(u"max_completion_tokens"_s)
                                     ? m_chat.value(u"max_completion_tokens"_s)
                                     : m_chat.value(u"max_tokens"_s);
        messages.insert(u"max_tokens"_s, limit.isDouble()
                                             ? limit.toInteger()
                                             : qint64(m_provider.adapter.anthropic.maxTokens));
        const QJsonValue stop = m_chat.value(u"stop"_s);
        if (stop.isString())
            messages.insert(u"stop_sequences"_s, QJsonArray{stop});
        else if (stop.isArray() && !stop.toArray().isEmpty())
            messages.insert(u"stop_sequences"_s, stop);
        for (const QString &name : {u"temperature"_s, u"top_p"_s}) {
            if (m_chat.value(name).isDouble())
                messages.insert(name, m_chat.value(name));
        }
        convertTools(messages);
        if (m_chat.value(u"user"_s).isString())
            messages.insert(u"metadata"_s, QJsonObject{{u"user_id"_s, m_chat.value(u"user"_s)}});
        if (stream)
            messages.insert(u"stream"_s, true);
        return messages;
    }

private:
    void refuse(const QString &message, const QString &param)
    {
        if (!refusal)
            refusal = Refusal{message, param};
    }

    QString unsupported(const QString &what) const
    {
        return u"%1 is not supported by provider `%2` (kind anthropic)."_s.arg(what, m_provider.id);
    }

    void checkUnsupported()
    {
        const QJsonValue n = m_chat.value(u"n"_s);
        if (n.isDouble() && n.toInteger() != 1)
            refuse(unsupported(u"More than one choice (`n` = %1)"_s.arg(n.toInteger())), u"n"_s);
        const QString format =
            m_chat.value(u"response_format"_s).toObject().value(u"type"_s).toString();
        if (!format.isEmpty() && format != u"text"_s)
            refuse(unsupported(u"`response_format` of type `%1`"_s.arg(format)),
                   u"response_format"_s);
        if (m_chat.value(u"logprobs"_s).toBool())
            refuse(unsupported(u"`logprobs`"_s), u"logprobs"_s);
        if (m_chat.value(u"modalities"_s).toArray().contains(u"audio"_s))
            refuse(unsupported(u"Audio output"_s), u"modalities"_s);
    }

    // One content part of a user message as a Messages content block.
    std::optional<QJsonObject> userBlock(const QJsonObject &part, const QString &param)
    {
        const QString type = part.value(u"type"_s).toString();
        if (type == u"text"_s)
            return QJsonObject{{u"type"_s, u"text"_s}, {u"text"_s, part.value(u"text"_s)}};
        if (type == u"image_url"_s) {
            const QJsonValue image = part.value(u"image_url"_s);
            const QString url =
                image.isString() ? image.toString() : image.toObject().value(u"url"_s).toString();
            if (url.startsWith(u"data:"_s)) {
                // data:image/png;base64,AAAA
                const qsizetype comma = url.indexOf(u',');
                const QString header = url.mid(5, comma - 5);
                if (comma < 0 || !header.endsWith(u";base64"_s)) {
                    refuse(u"Invalid image in '%1': a data URL must be base64, as in "
                           u"`data:image/png;base64,...`."_s.arg(param),
                           param);
                    return std::nullopt;
                }
                return QJsonObject{{u"type"_s, u"image"_s},
                                   {u"source"_s, QJsonObject{{u"type"_s, u"base64"_s},
                                                             {u"media_type"_s, header.chopped(7)},
                                                             {u"data"_s, url.mid(comma + 1)}}}};
            }
            if (url.startsWith(u"http://"_s) || url.startsWith(u"https://"_s)) {
                return QJsonObject{
                    {u"type"_s, u"image"_s},
                    {u"source"_s, QJsonObject{{u"type"_s, u"url"_s}, {u"url"_s, url}}}};
            }
            refuse(u"Invalid image in '%1': expected an http(s) or base64 data URL."_s.arg(param),
                   param);
            return std::nullopt;
        }
        refuse(unsupported(u"Content of type `%1` in '%2'"_s.arg(type, param)), param);
        return std::nullopt;
    }

    // Text blocks of assistant content; parts other than text and refusal carry nothing to send.
    QJsonArray assistantText(const QJsonValue &content)
    {
        QJsonArray blocks;
        const auto add = [&blocks](const QString &text) {
            if (!text.isEmpty())
                blocks.append(QJsonObject{{u"type"_s, u"text"_s}, {u"text"_s, text}});
        };
        if (content.isString()) {
            add(content.toString());
        } else {
            for (const QJsonValue &part : content.toArray()) {
                const QJsonObject object = part.toObject();
                add(object.value(object.contains(u"refusal"_s) ? u"refusal"_s : u"text"_s)
                        .toString());
            }
        }
        return blocks;
    }

    std::optional<QJsonObject> toolUse(const QString &id, const QJsonObject &function,
                                       const QString &param)
    {
        const QString arguments = function.value(u"arguments"_s).toString();
        QJsonObject input;
        if (!arguments.trimmed().isEmpty()) {
            const QJsonDocument parsed = QJsonDocument::fromJson(arguments.toUtf8());
            if (!parsed.isObject()) {
                refuse(u"Invalid value for '%1': the arguments must be a JSON object to send "
                       u"them to provider `%2` (kind anthropic)."_s.arg(param, m_provider.id),
                       param);
                return std::nullopt;
            }
            input = parsed.object();
        }
        return QJsonObject{{u"type"_s, u"tool_use"_s},
                           {u"id"_s, id},
                           {u"name"_s, function.value(u"name"_s)},
                           {u"input"_s, input}};
    }

    // Messages must alternate; consecutive turns of one role (tool results are user turns)
    // become one turn with all their blocks.
    void appendTurn(QJsonArray &turns, const QString &role, const QJsonArray &blocks)
    {
        if (blocks.isEmpty())
            return;
        if (!turns.isEmpty() && turns.last().toObject().value(u"role"_s).toString() == role) {
            QJsonObject last = turns.last().toObject();
            QJsonArray content = last.value(u"content"_s).toArray();
            for (const QJsonValue &block : blocks)
                content.append(block);
            last.insert(u"content"_s, content);
            turns.replace(turns.size() - 1, last);
            return;
        }
        turns.append(QJsonObject{{u"role"_s, role}, {u"content"_s, blocks}});
    }

    void convertMessages(QJsonObject &messages)
    {
        QStringList system;
        QJsonArray turns;
        // The legacy functions API has no call ids: a function result answers the latest call
        // of that name, so ids are made up in pairs.
        QHash<QString, QString> legacyCallIds;
        const QJsonArray chatMessages = m_chat.value(u"messages"_s).toArray();
        for (qsizetype index = 0; index < chatMessages.size(); ++index) {
            const QJsonObject message = chatMessages.at(index).toObject();
            const QString role = message.value(u"role"_s).toString();
            const QString param = u"messages[%1]"_s.arg(index);
            const QJsonValue content = message.value(u"content"_s);
            if (role == u"system"_s || role == u"developer"_s) {
                system.append(json::contentText(content));
            } else if (role == u"user"_s) {
                QJsonArray blocks;
                if (content.isString()) {
                    blocks.append(QJsonObject{{u"type"_s, u"text"_s}, {u"text"_s, content}});
                } else {
                    const QJsonArray parts = content.toArray();
                    for (qsizetype part = 0; part < parts.size(); ++part) {
                        if (auto block = userBlock(parts.at(part).toObject(),
                                                   u"%1.content[%2]"_s.arg(param).arg(part)))
                            blocks.append(*block);
                    }
                }
                appendTurn(turns, u"user"_s, blocks);
            } else if (role == u"assistant"_s) {
                QJsonArray blocks = assistantText(content);
                const QJsonArray calls = message.value(u"tool_calls"_s).toArray();
                for (qsizetype call = 0; call < calls.size(); ++call) {
                    const QJsonObject object = calls.at(call).toObject();
                    if (auto block =
                            toolUse(object.value(u"id"_s).toString(),
                                    object.value(u"function"_s).toObject(),
                                    u"%1.tool_calls[%2].function.arguments"_s.arg(param).arg(call)))
                        blocks.append(*block);
                }
                if (message.value(u"function_call"_s).isObject()) {
                    const QJsonObject function = message.value(u"function_call"_s).toObject();
                    const QString id = u"call_legacy_%1"_s.arg(index);
                    legacyCallIds.insert(function.value(u"name"_s).toString(), id);
                    if (auto block = toolUse(id, function, param + u".function_call.arguments"_s))
                        blocks.append(*block);
                }
                appendTurn(turns, u"assistant"_s, blocks);
            } else if (role == u"tool"_s || role == u"function"_s) {
                const QString id = role == u"tool"_s
                                       ? message.value(u"tool_call_id"_s).toString()
                                       : legacyCallIds.value(message.value(u"name"_s).toString());
                if (id.isEmpty()) {
                    refuse(role == u"tool"_s
                               ? u"Missing required parameter: '%1.tool_call_id'."_s.arg(param)
                               : u"'%1' answers no earlier `function_call` named `%2`."_s.arg(
                                     param, message.value(u"name"_s).toString()),
                           param);
                    continue;
                }
                appendTurn(turns, u"user"_s,
                           QJsonArray{QJsonObject{{u"type"_s, u"tool_result"_s},
                                                  {u"tool_use_id"_s, id},
                                                  {u"content"_s, json::contentText(content)}}});
            } else {
                refuse(u"Invalid value for '%1.role': `%2` is not one of system, developer, "
                       u"user, assistant, tool."_s.arg(param, role),
                       param + u".role"_s);
            }
        }
        // A turn of one text block is sent as plain text, as people write these requests.
        for (qsizetype index = 0; index < turns.size(); ++index) {
            QJsonObject turn = turns.at(index).toObject();
            const QJsonArray blocks = turn.value(u"content"_s).toArray();
            if (blocks.size() == 1 &&
                blocks.first().toObject().value(u"type"_s).toString() == u"text"_s) {
                turn.insert(u"content"_s, blocks.first().toObject().value(u"text"_s));
                turns.replace(index, turn);
            }
        }
        if (!system.isEmpty())
            messages.insert(u"system"_s, system.join(u"\n\n"_s));
        messages.insert(u"messages"_s, turns);
    }

    static QJsonObject toolOf(const QJsonObject &function)
    {
        QJsonObject tool{{u"name"_s, function.value(u"name"_s)}};
        if (function.contains(u"description"_s))
            tool.insert(u"description"_s, function.value(u"description"_s));
        const QJsonValue parameters = function.value(u"parameters"_s);
        tool.insert(u"input_schema"_s,
                    parameters.isObject()
                        ? parameters
                        : QJsonObject{{u"type"_s, u"object"_s}, {u"properties"_s, QJsonObject()}});
        return tool;
    }

    void convertTools(QJsonObject &messages)
    {
        QJsonArray tools;
        const QJsonArray chatTools = m_chat.value(u"tools"_s).toArray();
        for (qsizetype index = 0; index < chatTools.size(); ++index) {
            const QJsonObject tool = chatTools.at(index).toObject();
            const QString type = tool.value(u"type"_s).toString();
            if (type != u"function"_s) {
                refuse(unsupported(u"A tool of type `%1`"_s.arg(type)),
                       u"tools[%1].type"_s.arg(index));
                continue;
            }
            tools.append(toolOf(tool.value(u"function"_s).toObject()));
        }
        for (const QJsonValue &function : m_chat.value(u"functions"_s).toArray()) {
            legacyFunctions = true;
            tools.append(toolOf(function.toObject()));
        }
        if (!tools.isEmpty())
            messages.insert(u"tools"_s, tools);

        const QJsonValue choice = m_chat.contains(u"tool_choice"_s)
                                      ? m_chat.value(u"tool_choice"_s)
                                      : m_chat.value(u"function_call"_s);
        QJsonObject toolChoice;
        if (choice.isString()) {
            const QString word = choice.toString();
            if (word == u"auto"_s)
                toolChoice = {{u"type"_s, u"auto"_s}};
            else if (word == u"required"_s)
                toolChoice = {{u"type"_s, u"any"_s}};
            else if (word == u"none"_s)
                toolChoice = {{u"type"_s, u"none"_s}};
        } else if (choice.isObject()) {
            const QJsonObject object = choice.toObject();
            // {"type":"function","function":{"name":...}} or, legacy, {"name":...}
            const QJsonValue name = object.contains(u"function"_s)
                                        ? object.value(u"function"_s).toObject().value(u"name"_s)
                                        : object.value(u"name"_s);
            toolChoice = {{u"type"_s, u"tool"_s}, {u"name"_s, name}};
        }
        if (m_chat.value(u"parallel_tool_calls"_s) == QJsonValue(false) && !tools.isEmpty()) {
            if (toolChoice.isEmpty())
                toolChoice = {{u"type"_s, u"auto"_s}};
            if (toolChoice.value(u"type"_s).toString() != u"none"_s)
                toolChoice.insert(u"disable_parallel_tool_use"_s, true);
        }
        if (!toolChoice.isEmpty() && !tools.isEmpty())
            messages.insert(u"tool_choice"_s, toolChoice);
    }

    const config::ProviderConfig &m_provider;
    const QJsonObject &m_chat;
};

// An `error` event of Anthropic's stream, `{"type":"error","error":{"type","message"}}`, as the
// provider's failure: classified by its type as the HTTP status it stands for would be.
StreamFailure streamErrorEvent(const QString &providerId, const QJsonObject &event)
{
    const QJsonObject error = event.value(u"error"_s).toObject();
    const QString errorType = error.value(u"type"_s).toString();
    return StreamFailure{
        StreamFailure::Kind::ProviderError,
        providerStreamError(providerId, statusOfAnthropicErrorType(errorType),
                            u"%1 (%2)"_s.arg(error.value(u"message"_s).toString(), errorType))};
}

// Anthropic's event stream as OpenAI chunks. The message id from message_start names every chunk.
class AnthropicStreamTranslator final : public StreamTranslator {
public:
    AnthropicStreamTranslator(QString providerId, const AnswerShape &shape)
        : m_providerId(std::move(providerId)), m_shape(shape), m_writer(shape)
    {}

    StreamOutput feed(const SseEvent &event) override
    {
        StreamOutput output;
        if (m_ended)
            return output;
        const QJsonDocument document = QJsonDocument::fromJson(event.data);
        if (!document.isObject()) {
            m_ended = true;
            output.failure = StreamFailure{
                StreamFailure::Kind::Unusable,
                unusableAnswer(u"Provider `%1` sent a stream event that is not valid JSON."_s.arg(
                    m_providerId))};
            return output;
        }
        const QJsonObject data = document.object();
        QString type = data.value(u"type"_s).toString();
        if (type.isEmpty())
            type = QString::fromUtf8(event.event);

        if (type == u"error"_s) {
            m_ended = true;
            output.failure = streamErrorEvent(m_providerId, data);
            return output;
        }
        if (type == u"message_start"_s) {
            const QJsonObject message = data.value(u"message"_s).toObject();
            m_writer.setIdentity(message.value(u"id"_s).toString(),
                                 message.value(u"model"_s).toString());
            m_usage = usageFromAnthropic(message.value(u"usage"_s).toObject(), m_usage);
            startAnswer(output);
        } else if (type == u"content_block_start"_s) {
            startAnswer(output);
            const QJsonObject block = data.value(u"content_block"_s).toObject();
            const QString blockType = block.value(u"type"_s).toString();
            if (blockType == u"tool_use"_s) {
                const int toolIndex = m_nextToolIndex++;
                m_toolIndexOfBlock.insert(data.value(u"index"_s).toInt(), toolIndex);
                output.events.append(m_writer.toolCallStart(
                    toolIndex, block.value(u"id"_s).toString(), block.value(u"name"_s).toString()));
                const QJsonObject input = block.value(u"input"_s).toObject();
                if (!input.isEmpty())
                    output.events.append(
                        m_writer.toolCallArguments(toolIndex, QString::fromUtf8(compact(input))));
            } else if (blockType == u"text"_s && !block.value(u"text"_s).toString().isEmpty()) {
                output.events.append(m_writer.content(block.value(u"text"_s).toString()));
            }
        } else if (type == u"content_block_delta"_s) {
            startAnswer(output);
            const QJsonObject delta = data.value(u"delta"_s).toObject();
            const QString deltaType = delta.value(u"type"_s).toString();
            if (deltaType == u"text_delta"_s) {
                const QString text = delta.value(u"text"_s).toString();
                if (!text.isEmpty())
                    output.events.append(m_writer.content(text));
            } else if (deltaType == u"input_json_delta"_s) {
                const QString piece = delta.value(u"partial_json"_s).toString();
                const auto tool = m_toolIndexOfBlock.constFind(data.value(u"index"_s).toInt());
                if (!piece.isEmpty() && tool != m_toolIndexOfBlock.cend())
                    output.events.append(m_writer.toolCallArguments(tool.value(), piece));
            }
            // Thinking, signature and citation deltas have no place in a chat completion.
        } else if (type == u"message_delta"_s) {
            startAnswer(output);
            const QJsonValue stopReason = data.value(u"delta"_s).toObject().value(u"stop_reason"_s);
            m_usage = usageFromAnthropic(data.value(u"usage"_s).toObject(), m_usage);
            if (stopReason.isString()) {
                output.events.append(
                    m_writer.finish(finishReasonFromStopReason(stopReason.toString())));
                m_finishSent = true;
            }
        } else if (type == u"message_stop"_s) {
            startAnswer(output);
            if (!m_finishSent)
                output.events.append(m_writer.finish(u"stop"_s));
            if (m_shape.includeUsage && m_usage.isKnown())
                output.events.append(m_writer.usage(m_usage));
            output.events.append(ChunkWriter::done());
            output.completed = true;
            m_ended = true;
            m_completed = true;
        }
        // ping, content_block_stop and event types added later carry nothing for the client.
        return output;
    }

    StreamOutput finish() override
    {
        StreamOutput output;
        output.completed = m_completed;
        m_ended = true;
        return output;
    }

    Usage usage() const override { return m_usage; }

private:
    // The role comes first, whatever event the provider opened with.
    void startAnswer(StreamOutput &output)
    {
        if (m_started)
            return;
        m_started = true;
        output.events.append(m_writer.role());
    }

    QString m_providerId;
    AnswerShape m_shape;
    ChunkWriter m_writer;
    Usage m_usage;
    QHash<int, int> m_toolIndexOfBlock; // content block index -> OpenAI tool call index
    int m_nextToolIndex = 0;
    bool m_started = false;
    bool m_finishSent = false;
    bool m_ended = false;
    bool m_completed = false;
};

// Anthropic's own event stream, passed through to a client that speaks the Messages API: every
// event goes out as the provider wrote it (ping, thinking and signature deltas included). Only the
// type of each event is read, and the usage of message_start and message_delta; the answer is
// whole at message_stop, and an `error` event is the provider's failure.
class MessagesStreamPassThrough final : public StreamTranslator {
public:
    explicit MessagesStreamPassThrough(QString providerId) : m_providerId(std::move(providerId)) {}

    StreamOutput feed(const SseEvent &event) override
    {
        StreamOutput output;
        if (m_ended || event.data.isEmpty())
            return output;
        thread_local simdjson::dom::parser parser;
        const simdjson::padded_string padded(event.data.constData(), size_t(event.data.size()));
        simdjson::dom::object root;
        std::string_view type;
        if (parser.parse(padded).get_object().get(root) != simdjson::SUCCESS ||
            root["type"].get_string().get(type) != simdjson::SUCCESS) {
            m_ended = true;
            output.failure =
                StreamFailure{StreamFailure::Kind::Unusable,
                              unusableAnswer(u"Provider `%1` sent a stream event that is not a "
                                             u"JSON object with a `type`."_s.arg(m_providerId))};
            return output;
        }
        if (type == "error") {
            // Like every other failure, the executor words it and sends it once.
            m_ended = true;
            output.failure =
                streamErrorEvent(m_providerId, QJsonDocument::fromJson(event.data).object());
            return output;
        }
        // Two events a stream carry usage: parsed again as objects, the rest never are.
        if (type == "message_start") {
            const QJsonObject message =
                QJsonDocument::fromJson(event.data).object().value(u"message"_s).toObject();
            m_usage = usageFromAnthropic(message.value(u"usage"_s).toObject(), m_usage);
        } else if (type == "message_delta") {
            const QJsonObject usage =
                QJsonDocument::fromJson(event.data).object().value(u"usage"_s).toObject();
            m_usage = usageFromAnthropic(usage, m_usage);
        }
        output.events.append(event);
        if (type == "message_stop") {
            m_ended = true;
            m_completed = true;
            output.completed = true;
        }
        return output;
    }

    StreamOutput finish() override
    {
        StreamOutput output;
        output.completed = m_completed;
        m_ended = true;
        return output;
    }

    Usage usage() const override { return m_usage; }

private:
    QString m_providerId;
    Usage m_usage;
    bool m_ended = false; // message_stop or a failure: nothing more is relayed
    bool m_completed = false;
};

// The anthropic-beta header a call passed through sends: the client's features, then the
// provider's configured ones it did not name, each once.
QByteArray mergedBetas(const HeaderList &clientHeaders, const QStringList &configured)
{
    QList<QByteArray> features;
    const auto add = [&features](QByteArrayView list) {
        for (QByteArrayView feature : QByteArrayView(list).toByteArray().split(',')) {
            const QByteArray trimmed = feature.trimmed().toByteArray();
            if (!trimmed.isEmpty() && !features.contains(trimmed))
                features.append(trimmed);
        }
    };
    for (const auto &[name, value] : clientHeaders) {
        if (name == "anthropic-beta")
            add(value);
    }
    for (const QString &feature : configured)
        add(feature.toUtf8());
    return features.join(',');
}

} // namespace

QString finishReasonFromStopReason(const QString &stopReason)
{
    if (stopReason.isEmpty())
        return {};
    if (stopReason == u"max_tokens"_s || stopReason == u"model_context_window_exceeded"_s)
        return u"length"_s;
    if (stopReason == u"tool_use"_s)
        return u"tool_calls"_s;
    if (stopReason == u"refusal"_s)
        return u"content_filter"_s;
    return u"stop"_s; // end_turn, stop_sequence, pause_turn and reasons added later
}

int statusOfAnthropicErrorType(const QString &type)
{
    static const QHash<QString, int> statuses{{u"invalid_request_error"_s, 400},
                                              {u"authentication_error"_s, 401},
                                              {u"permission_error"_s, 403},
                                              {u"not_found_error"_s, 404},
                                              {u"request_too_large"_s, 413},
                                              {u"rate_limit_error"_s, 429},
                                              {u"api_error"_s, 500},
                                              {u"overloaded_error"_s, 529}};
    return statuses.value(type, 500);
}

Usage usageFromAnthropic(const QJsonObject &usage, Usage known)
{
    const auto count = [&usage](const QString &name) {
        const QJsonValue value = usage.value(name);
        return value.isDouble() ? value.toInteger() : qint64(-1);
    };
    // A stream counts in message_start and may count again, whole, in message_delta: a count an
    // event leaves out keeps what an earlier event said, and the prompt is always the uncached
    // input plus the cache's reads and writes as they stand, so none of them is added twice.
    const qint64 knownUncached = known.promptTokens < 0
                                     ? qint64(-1)
                                     : known.promptTokens -
                                           std::max<qint64>(known.cachedPromptTokens, 0) -
                                           std::max<qint64>(known.cacheWritePromptTokens, 0);
    const qint64 reportedInput = count(u"input_tokens"_s);
    const qint64 uncached = reportedInput >= 0 ? reportedInput : knownUncached;
    if (const qint64 cacheRead = count(u"cache_read_input_tokens"_s); cacheRead >= 0)
        known.cachedPromptTokens = cacheRead;
    if (const qint64 cacheWrite = count(u"cache_creation_input_tokens"_s); cacheWrite >= 0)
        known.cacheWritePromptTokens = cacheWrite;
    if (uncached >= 0) {
        known.promptTokens = uncached + std::max<qint64>(known.cachedPromptTokens, 0) +
                             std::max<qint64>(known.cacheWritePromptTokens, 0);
    }
    if (const qint64 output = count(u"output_tokens"_s); output >= 0)
        known.completionTokens = output;
    return known;
}

std::variant<PreparedRequest, protocol::ApiError>
AnthropicAdapter::buildRequest(const AdapterRequest &request) const
{
    if (request.operation != protocol::Operation::Chat)
        return buildPassThrough(request);
    const QJsonObject chat = QJsonDocument::fromJson(request.openAiBody).object();
    MessagesRequestBuilder builder(m_provider, chat);
    const QJsonObject messages = builder.build(request.upstreamModel, request.stream);
    if (builder.refusal)
        return protocol::ApiError::invalidRequest(builder.refusal->message, builder.refusal->param);

    PreparedRequest prepared;
    UpstreamRequest &call = prepared.request;
    call.url = providerUrl(m_provider, u"messages", request.upstreamModel);
    call.body = compact(messages);
    call.headers = {{"Content-Type", "application/json"},
                    {"Accept", request.stream ? "text/event-stream" : "application/json"},
                    {"anthropic-version", m_provider.adapter.anthropic.version.toUtf8()}};
    if (!m_provider.adapter.anthropic.betas.isEmpty())
        call.headers.append(
            {"anthropic-beta", m_provider.adapter.anthropic.betas.join(u',').toUtf8()});
    call.headers.append(request.extraHeaders);
    call.headers.append(providerHeaders(m_provider));
    applyConnectionOptions(m_provider, call);

    AnswerShape &shape = prepared.shape;
    shape.upstreamModel = request.upstreamModel;
    shape.answerId = "chatcmpl-" + request.requestId;
    shape.createdSecs = request.createdSecs;
    shape.clientStreams = request.stream;
    shape.upstreamStreams = request.stream;
    shape.includeUsage =
        chat.value(u"stream_options"_s).toObject().value(u"include_usage"_s).toBool();
    shape.legacyFunctions = builder.legacyFunctions;
    return prepared;
}

PreparedRequest AnthropicAdapter::buildPassThrough(const AdapterRequest &request) const
{
    PreparedRequest prepared;
    UpstreamRequest &call = prepared.request;
    call.url =
        providerUrl(m_provider, protocol::upstreamPath(request.operation), request.upstreamModel);
    // The client's bytes: cache_control markers, thinking and its signatures, fields this
    // gateway has never heard of. Only the model is replaced, token for token.
    call.body = withUpstreamModel(request.openAiBody, request.bodyModel, request.upstreamModel);
    QByteArray version = headerValue(request.clientProtocolHeaders, "anthropic-version");
    if (version.isEmpty())
        version = m_provider.adapter.anthropic.version.toUtf8();
    // A token count is never streamed, whatever its body says.
    const bool streams = request.stream && request.operation == protocol::Operation::Messages;
    call.headers = {{"Content-Type", "application/json"},
                    {"Accept", streams ? "text/event-stream" : "application/json"},
                    {"anthropic-version", version}};
    if (const QByteArray betas =
            mergedBetas(request.clientProtocolHeaders, m_provider.adapter.anthropic.betas);
        !betas.isEmpty())
        call.headers.append({"anthropic-beta", betas});
    call.headers.append(request.extraHeaders);
    call.headers.append(providerHeaders(m_provider));
    applyConnectionOptions(m_provider, call);

    AnswerShape &shape = prepared.shape;
    shape.operation = request.operation;
    shape.upstreamModel = request.upstreamModel;
    shape.answerId = "msg_" + request.requestId;
    shape.createdSecs = request.createdSecs;
    shape.clientStreams = streams;
    shape.upstreamStreams = streams;
    return prepared;
}

AnswerTranslation AnthropicAdapter::translateAnswer(const AnswerShape &shape,
                                                    const QByteArray &body) const
{
    AnswerTranslation translation;
    if (shape.operation != protocol::Operation::Chat) {
        // Passed through: the client reads the provider's own answer. A token count's
        // `input_tokens` is its result, not usage.
        const QJsonDocument answer = QJsonDocument::fromJson(body);
        if (!answer.isObject()) {
            translation.kind = AnswerTranslation::Kind::Unusable;
            translation.error = unusableAnswer(
                u"Provider `%1` sent an answer that is not valid JSON."_s.arg(m_provider.id));
            return translation;
        }
        if (shape.operation == protocol::Operation::Messages)
            translation.usage = usageFromAnthropic(answer.object().value(u"usage"_s).toObject());
        translation.openAiJson = body; // shared, not copied
        return translation;
    }
    const QJsonDocument document = QJsonDocument::fromJson(body);
    const auto refuse = [&](const QString &message) {
        translation.kind = AnswerTranslation::Kind::Unusable;
        translation.error = unusableAnswer(message);
        return translation;
    };
    if (!document.isObject())
        return refuse(u"Provider `%1` sent an answer that is not valid JSON."_s.arg(m_provider.id));
    const QJsonObject message = document.object();
    if (!message.value(u"content"_s).isArray()) {
        return refuse(
            u"Provider `%1` sent an answer without a `content` list."_s.arg(m_provider.id));
    }

    CompletionDraft draft;
    draft.id = message.value(u"id"_s).toString(QString::fromUtf8(shape.answerId));
    draft.model = message.value(u"model"_s).toString(shape.upstreamModel);
    draft.createdSecs = shape.createdSecs;
    QString text;
    bool hasText = false;
    for (const QJsonValue &value : message.value(u"content"_s).toArray()) {
        const QJsonObject block = value.toObject();
        const QString type = block.value(u"type"_s).toString();
        if (type == u"text"_s) {
            text += block.value(u"text"_s).toString();
            hasText = true;
        } else if (type == u"tool_use"_s) {
            draft.toolCalls.append(
                {block.value(u"id"_s).toString(), block.value(u"name"_s).toString(),
                 QString::fromUtf8(compact(block.value(u"input"_s).toObject()))});
        }
    }
    // OpenAI's content is null in an answer that only calls tools.
    if (hasText || draft.toolCalls.isEmpty())
        draft.text = text;
    draft.finishReason = finishReasonFromStopReason(message.value(u"stop_reason"_s).toString());
    draft.usage = usageFromAnthropic(message.value(u"usage"_s).toObject());
    translation.usage = draft.usage;
    translation.openAiJson = completionJson(draft, shape);
    return translation;
}

std::unique_ptr<StreamTranslator> AnthropicAdapter::startStream(const AnswerShape &shape) const
{
    if (shape.operation == protocol::Operation::Messages)
        return std::make_unique<MessagesStreamPassThrough>(m_provider.id);
    return std::make_unique<AnthropicStreamTranslator>(m_provider.id, shape);
}

protocol::ApiError AnthropicAdapter::translateError(int status, const HeaderList &headers,
                                                    QByteArrayView body) const
{
    // {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}
    const QJsonObject error =
        QJsonDocument::fromJson(body.toByteArray()).object().value(u"error"_s).toObject();
    QString detail = error.value(u"message"_s).toString();
    if (detail.isEmpty()) {
        detail = QString::fromUtf8(body.first(std::min<qsizetype>(body.size(), 200))).simplified();
        if (detail.isEmpty())
            detail = u"no details given"_s;
    } else if (error.value(u"type"_s).isString()) {
        detail += u" (%1)"_s.arg(error.value(u"type"_s).toString());
    }
    return providerHttpError(m_provider.id, status, detail, headerValue(headers, "retry-after"));
}

} // namespace switchyard::upstream::adapters
