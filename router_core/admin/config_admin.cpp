#include "admin/config_admin.h"

#include "lifecycle/config_lifecycle.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonObject>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {

QString isoTime(qint64 msSinceEpoch)
{
    return QDateTime::fromMSecsSinceEpoch(msSinceEpoch, Qt::UTC).toString(Qt::ISODateWithMs);
}

QJsonArray errorsJson(const QList<config::ConfigError> &errors)
{
    QJsonArray list;
    for (const config::ConfigError &error : errors) {
        list.append(QJsonObject{{u"file"_s, error.where.file},
                                {u"line"_s, error.where.line},
                                {u"column"_s, error.where.column},
                                {u"message"_s, error.message}});
    }
    return list;
}

QJsonObject versionInfoJson(const ConfigVersionInfo &version)
{
    return {{u"number"_s, qint64(version.number)},
            {u"time"_s, isoTime(version.createdMsSinceEpoch)},
            {u"source"_s, configChangeSourceName(version.source)},
            {u"author"_s, version.author},
            {u"note"_s, version.note}};
}

// A header's value, else the query parameter's; empty when neither is given.
QString parameter(const http::AdminRequest &request, QByteArrayView header, const QString &query)
{
    for (const auto &[name, value] : request.headers) {
        if (name.compare(header, Qt::CaseInsensitive) == 0)
            return QString::fromUtf8(value).trimmed();
    }
    return request.query.queryItemValue(query, QUrl::FullyDecoded);
}

ConfigChangeOrigin originOf(const http::AdminRequest &request)
{
    return {ConfigChangeSource::Api, parameter(request, "x-switchyard-author", u"author"_s),
            parameter(request, "x-switchyard-note", u"note"_s)};
}

protocol::ApiError configError(int status, const QString &message, const QString &code)
{
    return {status, message, u"invalid_request_error"_s, {}, code, {}};
}

// An OpenAI-shaped error, with the config's errors beside it when there are any.
http::AdminReply errorReply(const protocol::ApiError &error,
                            const QList<config::ConfigError> &errors = {})
{
    http::AdminReply reply = http::AdminReply::error(error);
    if (!errors.isEmpty()) {
        QJsonObject body = reply.body.object();
        body.insert(u"errors"_s, errorsJson(errors));
        reply.body = QJsonDocument(body);
    }
    return reply;
}

http::AdminReply changeReply(const ConfigChangeResult &result)
{
    using Outcome = ConfigChangeResult::Outcome;
    switch (result.outcome) {
    case Outcome::Applied:
    case Outcome::Unchanged:
        return http::AdminReply::json(
            QJsonDocument(QJsonObject{{u"version"_s, qint64(result.version)},
                                      {u"applied"_s, result.outcome == Outcome::Applied},
                                      {u"message"_s, result.message}}));
    case Outcome::Conflict:
        return errorReply(configError(409, result.message, u"config_conflict"_s));
    case Outcome::NotFound:
        return errorReply(configError(404, result.message, u"config_version_not_found"_s));
    case Outcome::Invalid:
        return errorReply(configError(422, result.message, u"invalid_config"_s), result.errors);
    }
    return errorReply(configError(500, result.message, u"config_error"_s));
}

std::optional<quint64> versionNumber(const QString &text)
{
    bool ok = false;
    const quint64 number = text.toULongLong(&ok);
    if (!ok || number == 0)
        return std::nullopt;
    return number;
}

http::AdminReply badVersion(const QString &text, const QString &param)
{
    return errorReply(http::invalidAdminRequest(
        u"'%1' is not a config version number (1, 2, 3...)."_s.arg(text), param));
}

} // namespace

void registerConfigAdmin(http::AdminEndpoints &api, lifecycle::ConfigLifecycle &lifecycle)
{
    lifecycle::ConfigLifecycle *target = &lifecycle;
    api.add(
        Method::Post, u"config/validate"_s,
        [target](const http::AdminRequest &request, const QStringList &) {
            const QList<config::ConfigError> errors = target->validate(request.body);
            if (errors.isEmpty())
                return http::AdminReply::json(QJsonDocument(QJsonObject{{u"valid"_s, true}}));
            return http::AdminReply::json(
                QJsonDocument(QJsonObject{{u"valid"_s, false}, {u"errors"_s, errorsJson(errors)}}),
                422);
        });
    api.add(Method::Post, u"config/apply"_s,
            [target](const http::AdminRequest &request, const QStringList &) {
                std::optional<quint64> base;
                const QString baseText =
                    parameter(request, "x-switchyard-base-version", u"base_version"_s);
                if (!baseText.isEmpty()) {
                    base = versionNumber(baseText);
                    if (!base)
                        return badVersion(baseText, u"base_version"_s);
                }
                if (request.body.trimmed().isEmpty())
                    return errorReply(http::invalidAdminRequest(
                        u"The request body must be the whole config as YAML text."_s));
                return changeReply(target->apply(request.body, originOf(request), base));
            });
    api.add(Method::Get, u"config/versions"_s,
            [target](const http::AdminRequest &, const QStringList &) {
                QJsonArray versions;
                for (const ConfigVersionInfo &version : target->versions())
                    versions.append(versionInfoJson(version));
                return http::AdminReply::json(QJsonDocument(QJsonObject{
                    {u"running"_s, qint64(target->runningVersion())}, {u"versions"_s, versions}}));
            });
    api.add(Method::Get, u"config/versions/{}"_s,
            [target](const http::AdminRequest &, const QStringList &captures) {
                const std::optional<quint64> number = versionNumber(captures[0]);
                if (!number)
                    return badVersion(captures[0], {});
                const std::optional<ConfigVersion> version = target->version(*number);
                if (!version)
                    return errorReply(configError(404,
                                                  u"There is no config version %1."_s.arg(*number),
                                                  u"config_version_not_found"_s));
                QJsonObject body = versionInfoJson(*version);
                body.insert(u"text"_s, version->text);
                body.insert(u"diff"_s, version->diff);
                return http::AdminReply::json(QJsonDocument(body));
            });
    api.add(Method::Post, u"config/rollback/{}"_s,
            [target](const http::AdminRequest &request, const QStringList &captures) {
                const std::optional<quint64> number = versionNumber(captures[0]);
                if (!number)
                    return badVersion(captures[0], {});
                return changeReply(target->rollback(*number, originOf(request)));
            });
    api.add(
        Method::Get, u"config/status"_s, [target](const http::AdminRequest &, const QStringList &) {
            const ConfigStatus status = target->status();
            QJsonObject body{
                {u"running_version"_s, qint64(status.runningVersion)},
                {u"file"_s, status.filePath},
                {u"file_matches"_s, status.fileMatches},
                {u"overlay"_s, status.overlayPath.isEmpty() ? QJsonValue(QJsonValue::Null)
                                                            : QJsonValue(status.overlayPath)},
                {u"overlay_keys"_s, QJsonArray::fromStringList(status.overlayKeys)},
                {u"difference"_s, status.difference},
                {u"history_problem"_s, status.historyProblem},
                {u"write_problem"_s, status.writeProblem},
                {u"overlay_note"_s, status.overlayNote},
            };
            if (status.lastReloadErrors.isEmpty()) {
                body.insert(u"last_reload_error"_s, QJsonValue(QJsonValue::Null));
            } else {
                body.insert(u"last_reload_error"_s,
                            QJsonObject{{u"time"_s, isoTime(status.lastReloadErrorMsSinceEpoch)},
                                        {u"errors"_s, errorsJson(status.lastReloadErrors)}});
            }
            return http::AdminReply::json(QJsonDocument(body));
        });
}

} // namespace switchyard::admin
