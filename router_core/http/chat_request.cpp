#include "http/chat_request.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <cctype>
#include <simdjson.h>

namespace switchyard::http {

namespace {

using simdjson::dom::element_type;

QString typeName(element_type type)
{
    switch (type) {
    case element_type::ARRAY:
        return QStringLiteral("an array");
    case element_type::OBJECT:
        return QStringLiteral("an object");
    case element_type::INT64:
    case element_type::UINT64:
        return QStringLiteral("an integer");
    case element_type::DOUBLE:
        return QStringLiteral("a number");
    case element_type::STRING:
        return QStringLiteral("a string");
    case element_type::BOOL:
        return QStringLiteral("a boolean");
    case element_type::NULL_VALUE:
        return QStringLiteral("null");
    }
    return QStringLiteral("an unknown value");
}

ApiError wrongType(const QString &param, const QString &expected, element_type got)
{
    return ApiError::invalidRequest(
        QStringLiteral("Invalid type for '%1': expected %2, but got %3 instead.")
            .arg(param, expected, typeName(got)),
        param);
}

ApiError missing(const QString &param)
{
    return ApiError::invalidRequest(QStringLiteral("Missing required parameter: '%1'.").arg(param),
                                    param);
}

QString fromView(std::string_view view)
{
    return QString::fromUtf8(view.data(), qsizetype(view.size()));
}

// Each message must be an object with a string role; content may be a string, an array of parts
// or null (an assistant message that only calls tools).
std::optional<ApiError> validateMessage(simdjson::dom::element message, int index)
{
    const QString path = QStringLiteral("messages[%1]").arg(index);
    if (message.type() != element_type::OBJECT)
        return wrongType(path, QStringLiteral("an object"), message.type());
    const simdjson::dom::object object = message.get_object().value_unsafe();
    simdjson::dom::element role;
    if (object["role"].get(role) != simdjson::SUCCESS)
        return missing(path + QStringLiteral(".role"));
    if (role.type() != element_type::STRING)
        return wrongType(path + QStringLiteral(".role"), QStringLiteral("a string"), role.type());
    simdjson::dom::element content;
    if (object["content"].get(content) == simdjson::SUCCESS) {
        const element_type type = content.type();
        if (type != element_type::STRING && type != element_type::ARRAY &&
            type != element_type::NULL_VALUE) {
            return wrongType(path + QStringLiteral(".content"),
                             QStringLiteral("one of a string or an array"), type);
        }
    }
    return std::nullopt;
}

} // namespace

QByteArray ChatRequest::withModel(const QByteArray &body, const QString &upstreamModel) const
{
    // Only renamed models pay for this: an on-demand pass finds the model's JSON token so that
    // exactly those bytes are replaced and everything else is forwarded as the client sent it.
    thread_local simdjson::ondemand::parser locator;
    const simdjson::padded_string padded(body.constData(), size_t(body.size()));
    simdjson::ondemand::document document;
    simdjson::ondemand::object fields;
    if (locator.iterate(padded).get(document) != simdjson::SUCCESS ||
        document.get_object().get(fields) != simdjson::SUCCESS)
        return body;
    for (auto field : fields) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS || key != "model")
            continue;
        std::string_view token = field.value().raw_json_token();
        while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back())))
            token.remove_suffix(1);
        const QByteArray quoted = QJsonDocument(QJsonArray{upstreamModel})
                                      .toJson(QJsonDocument::Compact)
                                      .mid(1)
                                      .chopped(1); // a JSON string literal, correctly escaped
        QByteArray rewritten = body;
        rewritten.replace(token.data() - padded.data(), qsizetype(token.size()), quoted);
        return rewritten;
    }
    return body;
}

std::variant<ChatRequest, ApiError> parseChatRequest(const QByteArray &body)
{
    // One parser per thread: it keeps its buffers between requests, so parsing allocates nothing.
    thread_local simdjson::dom::parser parser;
    const simdjson::padded_string padded(body.constData(), size_t(body.size()));
    simdjson::dom::element root;
    if (const auto error = parser.parse(padded).get(root); error != simdjson::SUCCESS) {
        return ApiError::invalidRequest(
            QStringLiteral("We could not parse the JSON body of your request (%1). The body must "
                           "be a JSON object.")
                .arg(QString::fromUtf8(simdjson::error_message(error))));
    }
    if (root.type() != element_type::OBJECT) {
        return ApiError::invalidRequest(
            QStringLiteral("The request body must be a JSON object, but got %1.")
                .arg(typeName(root.type())));
    }
    const simdjson::dom::object object = root.get_object().value_unsafe();
    ChatRequest request;

    simdjson::dom::element model;
    if (object["model"].get(model) != simdjson::SUCCESS)
        return missing(QStringLiteral("model"));
    if (model.type() != element_type::STRING)
        return wrongType(QStringLiteral("model"), QStringLiteral("a string"), model.type());
    request.model = fromView(model.get_string().value_unsafe());
    if (request.model.isEmpty()) {
        return ApiError::invalidRequest(
            QStringLiteral("Invalid value for 'model': it must not be empty."),
            QStringLiteral("model"));
    }

    simdjson::dom::element messages;
    if (object["messages"].get(messages) != simdjson::SUCCESS)
        return missing(QStringLiteral("messages"));
    if (messages.type() != element_type::ARRAY)
        return wrongType(QStringLiteral("messages"), QStringLiteral("an array"), messages.type());
    simdjson::dom::array messageList;
    if (messages.get_array().get(messageList) != simdjson::SUCCESS)
        return wrongType(QStringLiteral("messages"), QStringLiteral("an array"), messages.type());
    int index = 0;
    for (simdjson::dom::element message : messageList) {
        if (auto error = validateMessage(message, index))
            return *error;
        ++index;
    }
    if (index == 0) {
        return ApiError::invalidRequest(
            QStringLiteral("Invalid 'messages': empty array. Expected an array with minimum "
                           "length 1, but got an empty array instead."),
            QStringLiteral("messages"));
    }
    request.messageCount = index;

    simdjson::dom::element stream;
    if (object["stream"].get(stream) == simdjson::SUCCESS) {
        if (stream.type() == element_type::BOOL)
            request.stream = stream.get_bool().value_unsafe();
        else if (stream.type() != element_type::NULL_VALUE)
            return wrongType(QStringLiteral("stream"), QStringLiteral("a boolean"), stream.type());
    }

    return request;
}

} // namespace switchyard::http
