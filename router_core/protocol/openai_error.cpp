#include "protocol/openai_error.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace switchyard::protocol {

QByteArray ApiError::toJson() const
{
    const auto nullable = [](const QString &value) {
        return value.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(value);
    };
    const QJsonObject error{{QStringLiteral("message"), message},
                            {QStringLiteral("type"), type},
                            {QStringLiteral("param"), nullable(param)},
                            {QStringLiteral("code"), nullable(code)}};
    return QJsonDocument(QJsonObject{{QStringLiteral("error"), error}})
        .toJson(QJsonDocument::Compact);
}

ApiError ApiError::invalidRequest(const QString &message, const QString &param)
{
    return {400, message, QStringLiteral("invalid_request_error"), param, {}, {}};
}

ApiError ApiError::modelNotFound(const QString &model)
{
    return {404,
            QStringLiteral("The model `%1` does not exist or is not served by any configured "
                           "provider. GET /v1/models lists the models available.")
                .arg(model),
            QStringLiteral("invalid_request_error"),
            QStringLiteral("model"),
            QStringLiteral("model_not_found"),
            {}};
}

ApiError ApiError::notFound(const QString &method, const QString &path)
{
    return {404,
            QStringLiteral("Unknown request URL: %1 %2.").arg(method, path),
            QStringLiteral("invalid_request_error"),
            {},
            QStringLiteral("unknown_url"),
            {}};
}

ApiError ApiError::methodNotAllowed(const QString &method, const QString &path)
{
    return {405,
            QStringLiteral("Method %1 is not allowed on %2.").arg(method, path),
            QStringLiteral("invalid_request_error"),
            {},
            QStringLiteral("method_not_allowed"),
            {}};
}

ApiError ApiError::payloadTooLarge(qint64 limitBytes)
{
    return {413,
            QStringLiteral("Request body is larger than the limit of %1 bytes.").arg(limitBytes),
            QStringLiteral("invalid_request_error"),
            {},
            QStringLiteral("request_too_large"),
            {}};
}

qint64 ApiError::retryAfterSeconds(std::chrono::milliseconds wait)
{
    return std::max<qint64>(1, (wait.count() + 999) / 1000);
}

ApiError ApiError::serviceUnavailable(const QString &message)
{
    return {503, message, QStringLiteral("server_error"), {}, QStringLiteral("unavailable"), {}};
}

ApiError invalidAdminRequest(const QString &message, const QString &param)
{
    ApiError error = ApiError::invalidRequest(message, param);
    error.code = QStringLiteral("invalid_admin_request");
    return error;
}

QString jsonTypeName(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Array:
        return QStringLiteral("an array");
    case QJsonValue::Object:
        return QStringLiteral("an object");
    case QJsonValue::Double:
        return QStringLiteral("a number");
    case QJsonValue::String:
        return QStringLiteral("a string");
    case QJsonValue::Bool:
        return QStringLiteral("a boolean");
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Undefined:
        break;
    }
    return QStringLiteral("nothing");
}

ApiError wrongJsonType(const QString &param, const QString &expected, const QJsonValue &got)
{
    return ApiError::invalidRequest(
        QStringLiteral("Invalid type for '%1': expected %2, but got %3 instead.")
            .arg(param, expected, jsonTypeName(got)),
        param);
}

ApiError missingParameter(const QString &param)
{
    return ApiError::invalidRequest(QStringLiteral("Missing required parameter: '%1'.").arg(param),
                                    param);
}

} // namespace switchyard::protocol
