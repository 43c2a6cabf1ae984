#pragma once

#include <QByteArray>
#include <QJsonValue>
#include <QString>
#include <chrono>

namespace switchyard::protocol {

// An error as OpenAI clients expect it: {"error":{"message","type","param","code"}} with an HTTP
// status. Every error Switchyard produces, on any path, goes through this one type.
struct ApiError {
    int status = 500;
    QString message;
    QString type;          // "invalid_request_error", "upstream_error", "rate_limit_error", ...
    QString param;         // the offending field or header, empty when none
    QString code;          // machine-readable detail, e.g. "model_not_found"
    QByteArray retryAfter; // Retry-After header value to keep, when the cause carried one

    QByteArray toJson() const;

    // A wait as Retry-After counts it: whole seconds, rounded up and at least one, so a client
    // told to wait never comes back too early.
    static qint64 retryAfterSeconds(std::chrono::milliseconds wait);

    static ApiError invalidRequest(const QString &message, const QString &param = {});
    static ApiError modelNotFound(const QString &model);
    static ApiError notFound(const QString &method, const QString &path);
    static ApiError methodNotAllowed(const QString &method, const QString &path);
    static ApiError payloadTooLarge(qint64 limitBytes);
    static ApiError serviceUnavailable(const QString &message);
};

// The admin API's one error for a request it cannot read: 400 `invalid_admin_request` naming the
// parameter (`param`) when there is one. Every admin command uses it, so a client tells a
// malformed request from the other kinds (`invalid_config`, `invalid_routes`, `*_not_found`) by
// one code. Here rather than in the admin layer because commands below it (the client keys')
// answer the console in the same words.
ApiError invalidAdminRequest(const QString &message, const QString &param = {});

// The words OpenAI's errors use for a request field of the wrong JSON type or one that is
// missing, shared by every ingress that reads a body with Qt's JSON classes:
// "an array", "a string"... (and "nothing" for an absent value).
QString jsonTypeName(const QJsonValue &value);
// "Invalid type for 'param': expected EXPECTED, but got TYPE instead."
ApiError wrongJsonType(const QString &param, const QString &expected, const QJsonValue &got);
// "Missing required parameter: 'param'."
ApiError missingParameter(const QString &param);

} // namespace switchyard::protocol
