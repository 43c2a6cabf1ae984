#include "protocol/operation.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QLocale>
#include <array>

namespace switchyard::protocol {

using namespace Qt::StringLiterals;

namespace {

// The operations a model's `endpoints` can list; the Anthropic ones follow chat (endpointOf).
constexpr std::array kOperations = {Operation::Chat, Operation::Responses, Operation::Embeddings,
                                    Operation::Completions};

// The body as an object with a non-empty string `model`, the part every operation shares.
std::variant<QJsonObject, ApiError> readObjectWithModel(const QByteArray &body,
                                                        ChatRequest &request)
{
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError) {
        return ApiError::invalidRequest(
            u"We could not parse the JSON body of your request (%1 "
            u"at offset %2). The body must be a JSON object."_s.arg(parseError.errorString())
                .arg(parseError.offset));
    }
    if (!document.isObject())
        return ApiError::invalidRequest(u"The request body must be a JSON object."_s);
    QJsonObject object = document.object();
    const QJsonValue model = object.value("model"_L1);
    if (model.isUndefined())
        return missingParameter(u"model"_s);
    if (!model.isString())
        return wrongJsonType(u"model"_s, u"a string"_s, model);
    request.model = model.toString();
    if (request.model.isEmpty())
        return ApiError::invalidRequest(u"Invalid value for 'model': it must not be empty."_s,
                                        u"model"_s);
    return object;
}

// The `switchyard` routing object, read as parseChatRequest reads it: scalar members as text.
std::optional<ApiError> readRoutingObject(const QJsonObject &object, ChatRequest &request)
{
    const QJsonValue routing = object.value("switchyard"_L1);
    if (routing.isUndefined())
        return std::nullopt;
    if (!routing.isObject())
        return wrongJsonType(u"switchyard"_s, u"an object"_s, routing);
    request.hasRoutingObject = true;
    const QJsonObject fields = routing.toObject();
    for (auto field = fields.begin(); field != fields.end(); ++field) {
        const QJsonValue value = field.value();
        if (value.isString())
            request.routingMetadata.append({field.key(), value.toString()});
        else if (value.isDouble())
            request.routingMetadata.append(
                {field.key(),
                 QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest)});
        else if (value.isBool())
            request.routingMetadata.append({field.key(), value.toBool() ? u"true"_s : u"false"_s});
        else if (!value.isNull())
            return wrongJsonType(u"switchyard."_s + field.key(), u"a string, number or boolean"_s,
                                 value);
    }
    return std::nullopt;
}

// A text input, or token ids, as the embeddings and completions APIs take it: a string, a list of
// strings, a list of integers, or a list of lists of integers. Tallies characters and tokens.
std::optional<ApiError> readTextInput(const QJsonValue &input, const QString &param,
                                      ChatRequest &request)
{
    const auto notEmpty = [&](const QString &what) {
        return ApiError::invalidRequest(
            u"Invalid value for '%1': %2 must not be empty."_s.arg(param, what), param);
    };
    const auto isTokenList = [](const QJsonArray &list) {
        for (const QJsonValue &token : list) {
            if (!token.isDouble() || token.toDouble() < 0 ||
                token.toDouble() != double(qint64(token.toDouble())))
                return false;
        }
        return true;
    };
    if (input.isString()) {
        request.characterCount += input.toString().size();
        request.messageCount = 1;
        return std::nullopt;
    }
    const QString expected = u"a string, an array of strings, an array of token ids or an array "
                             u"of arrays of token ids"_s;
    if (!input.isArray())
        return wrongJsonType(param, expected, input);
    const QJsonArray list = input.toArray();
    if (list.isEmpty())
        return notEmpty(u"the array"_s);
    if (list.first().isDouble()) {
        if (!isTokenList(list))
            return wrongJsonType(param, expected, input);
        request.estimatedInputTokens += list.size();
        request.messageCount = 1;
        return std::nullopt;
    }
    int index = 0;
    for (const QJsonValue &entry : list) {
        const QString entryParam = u"%1[%2]"_s.arg(param).arg(index++);
        if (entry.isString()) {
            request.characterCount += entry.toString().size();
        } else if (entry.isArray() && isTokenList(entry.toArray())) {
            if (entry.toArray().isEmpty())
                return notEmpty(u"a token array"_s);
            request.estimatedInputTokens += entry.toArray().size();
        } else {
            return wrongJsonType(entryParam, u"a string or an array of token ids"_s, entry);
        }
    }
    request.messageCount = int(list.size());
    return std::nullopt;
}

// Text is counted as one token per four characters, the same rough rule as chat's estimate.
void addTextTokens(ChatRequest &request)
{
    request.estimatedInputTokens += (request.characterCount + 3) / 4;
}

} // namespace

QString operationName(Operation operation)
{
    switch (operation) {
    case Operation::Chat:
        return u"chat"_s;
    case Operation::Responses:
        return u"responses"_s;
    case Operation::Embeddings:
        return u"embeddings"_s;
    case Operation::Completions:
        return u"completions"_s;
    case Operation::Messages:
        return u"messages"_s;
    case Operation::CountTokens:
        return u"count_tokens"_s;
    }
    return {};
}

std::optional<Operation> operationFromName(QStringView name)
{
    for (Operation operation : kOperations) {
        if (operationName(operation) == name)
            return operation;
    }
    return std::nullopt;
}

QString operationPath(Operation operation)
{
    return u"/v1/"_s + upstreamPath(operation);
}

std::optional<Operation> operationFromPath(QStringView path)
{
    for (Operation operation : kOperations) {
        if (operationPath(operation) == path)
            return operation;
    }
    return std::nullopt;
}

QString upstreamPath(Operation operation)
{
    switch (operation) {
    case Operation::Chat:
        return u"chat/completions"_s;
    case Operation::CountTokens:
        return u"messages/count_tokens"_s;
    default:
        return operationName(operation);
    }
}

QStringList operationNames(Operations operations)
{
    QStringList names;
    for (Operation operation : kOperations) {
        if (operations & operationBit(operation))
            names.append(operationName(operation));
    }
    return names;
}

QStringList operationPaths(Operations operations)
{
    QStringList paths;
    for (Operation operation : kOperations) {
        if (operations & operationBit(operation))
            paths.append(operationPath(operation));
    }
    return paths;
}

std::variant<ChatRequest, ApiError> parseEmbeddingsRequest(const QByteArray &body)
{
    ChatRequest request;
    auto read = readObjectWithModel(body, request);
    if (auto *error = std::get_if<ApiError>(&read))
        return *error;
    const QJsonObject object = std::get<QJsonObject>(std::move(read));

    const QJsonValue input = object.value("input"_L1);
    if (input.isUndefined())
        return missingParameter(u"input"_s);
    if (auto error = readTextInput(input, u"input"_s, request))
        return *error;
    const QJsonValue format = object.value("encoding_format"_L1);
    if (!format.isUndefined() && format != "float"_L1 && format != "base64"_L1) {
        return ApiError::invalidRequest(
            u"Invalid value for 'encoding_format': expected 'float' or 'base64'."_s,
            u"encoding_format"_s);
    }
    const QJsonValue dimensions = object.value("dimensions"_L1);
    if (!dimensions.isUndefined() &&
        (!dimensions.isDouble() || dimensions.toDouble() < 1 ||
         dimensions.toDouble() != double(qint64(dimensions.toDouble())))) {
        return ApiError::invalidRequest(
            u"Invalid value for 'dimensions': expected a positive integer."_s, u"dimensions"_s);
    }
    if (object.contains("stream"_L1) && object.value("stream"_L1).toBool())
        return ApiError::invalidRequest(u"Embeddings cannot be streamed: 'stream' must be false "
                                        u"or absent."_s,
                                        u"stream"_s);
    if (auto error = readRoutingObject(object, request))
        return *error;
    addTextTokens(request);
    return request;
}

std::variant<ChatRequest, ApiError> parseCompletionsRequest(const QByteArray &body)
{
    ChatRequest request;
    auto read = readObjectWithModel(body, request);
    if (auto *error = std::get_if<ApiError>(&read))
        return *error;
    const QJsonObject object = std::get<QJsonObject>(std::move(read));

    const QJsonValue prompt = object.value("prompt"_L1);
    if (prompt.isUndefined())
        return missingParameter(u"prompt"_s);
    if (auto error = readTextInput(prompt, u"prompt"_s, request))
        return *error;
    const QJsonValue stream = object.value("stream"_L1);
    if (!stream.isUndefined() && !stream.isNull() && !stream.isBool())
        return wrongJsonType(u"stream"_s, u"a boolean"_s, stream);
    request.stream = stream.toBool();
    if (auto error = readRoutingObject(object, request))
        return *error;
    addTextTokens(request);
    return request;
}

} // namespace switchyard::protocol
