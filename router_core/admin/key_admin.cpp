#include "admin/key_admin.h"

#include "auth/client_authenticator.h"
#include "config/config_store.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonParseError>
#include <cmath>
#include <limits>

namespace switchyard::admin {

using namespace Qt::StringLiterals;
using Method = QHttpServerRequest::Method;

namespace {

const QStringList kCreateFields{u"tenant"_s, u"id"_s, u"requests_per_minute"_s,
                                u"tokens_per_minute"_s, u"models"_s};
const QStringList kLimitFields{u"requests_per_minute"_s, u"tokens_per_minute"_s, u"models"_s};

QJsonObject keyJson(const auth::ClientKey &key)
{
    return {{u"id"_s, key.id},
            {u"tenant"_s, key.tenant},
            {u"source"_s, key.source == auth::KeySource::File ? u"file"_s : u"api"_s},
            {u"requests_per_minute"_s, key.limits.requestsPerMinute},
            {u"tokens_per_minute"_s, key.limits.tokensPerMinute},
            {u"models"_s, QJsonArray::fromStringList(key.limits.models)},
            {u"created_at"_s, key.createdAtUtc.isValid()
                                  ? QJsonValue(key.createdAtUtc.toString(Qt::ISODateWithMs))
                                  : QJsonValue(QJsonValue::Null)}};
}

// The body as a JSON object whose fields are all in `known`, or the error saying what is wrong:
// `example` shows what a body looks like, `takes` names what the fields are for.
std::variant<QJsonObject, protocol::ApiError> bodyObject(const http::AdminRequest &request,
                                                         const QStringList &known,
                                                         const QString &example,
                                                         const QString &takes)
{
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return http::invalidAdminRequest(
            u"The body must be a JSON object such as %1."_s.arg(example), {});
    const QJsonObject body = document.object();
    for (auto it = body.begin(); it != body.end(); ++it) {
        if (!known.contains(it.key()))
            return http::invalidAdminRequest(
                u"Unknown field `%1`; %2 %3."_s.arg(it.key(), takes, known.join(u", "_s)),
                it.key());
    }
    return body;
}

// A whole number in [0, INT_MAX] from a JSON field (null: 0, no limit), or the error naming
// the field. Absent: nothing.
std::variant<std::optional<int>, protocol::ApiError> perMinute(const QJsonObject &body,
                                                               const QString &field)
{
    const QJsonValue value = body.value(field);
    if (value.isUndefined())
        return std::nullopt;
    if (value.isNull())
        return 0;
    const double number = value.toDouble(-1);
    if (!value.isDouble() || number < 0 || number != std::floor(number) ||
        number > std::numeric_limits<int>::max())
        return auth::perMinuteLimitError(field);
    return int(number);
}

// `models` from a JSON body (null: every model), or the error. Absent: nothing.
std::variant<std::optional<QStringList>, protocol::ApiError> modelList(const QJsonObject &body)
{
    const QJsonValue models = body.value(u"models"_s);
    if (models.isUndefined())
        return std::nullopt;
    if (models.isNull())
        return QStringList();
    if (!models.isArray())
        return auth::modelsLimitError();
    QStringList list;
    for (const QJsonValue &model : models.toArray()) {
        if (!model.isString() || model.toString().trimmed().isEmpty())
            return auth::modelsLimitError();
        list.append(model.toString());
    }
    return list;
}

// The limits a body sets, checked as JSON; the commands check their range.
std::variant<config::ClientKeyLimitsEdit, protocol::ApiError> limitsEdit(const QJsonObject &body)
{
    config::ClientKeyLimitsEdit edit;
    auto requests = perMinute(body, u"requests_per_minute"_s);
    if (const auto *error = std::get_if<protocol::ApiError>(&requests))
        return *error;
    edit.requestsPerMinute = std::get<std::optional<int>>(requests);
    auto tokens = perMinute(body, u"tokens_per_minute"_s);
    if (const auto *error = std::get_if<protocol::ApiError>(&tokens))
        return *error;
    if (const std::optional<int> perMinuteTokens = std::get<std::optional<int>>(tokens))
        edit.tokensPerMinute = *perMinuteTokens;
    auto models = modelList(body);
    if (const auto *error = std::get_if<protocol::ApiError>(&models))
        return *error;
    edit.models = std::get<std::optional<QStringList>>(models);
    return edit;
}

http::AdminReply create(auth::ClientAuthenticator &keys, const config::ConfigStore &store,
                        const http::AdminRequest &request)
{
    auto parsed =
        bodyObject(request, kCreateFields, u"{\"tenant\": \"team-a\"}"_s, u"a key takes"_s);
    if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
        return http::AdminReply::error(*error);
    const QJsonObject &body = std::get<QJsonObject>(parsed);
    const QJsonValue id = body.value(u"id"_s);
    if (!id.isUndefined() && !id.isString())
        return http::AdminReply::error(http::invalidAdminRequest(u"`id` must be text."_s, u"id"_s));
    auto edit = limitsEdit(body);
    if (const auto *error = std::get_if<protocol::ApiError>(&edit))
        return http::AdminReply::error(*error);
    const config::ClientKeyLimits limits =
        std::get<config::ClientKeyLimitsEdit>(edit).appliedTo({});
    auto created =
        keys.create(store.config(), body.value(u"tenant"_s).toString(), id.toString(), limits);
    if (const auto *error = std::get_if<protocol::ApiError>(&created))
        return http::AdminReply::error(*error);
    const auto &made = std::get<auth::ClientAuthenticator::Created>(created);
    QJsonObject answer = keyJson(made.key);
    answer.insert(u"key"_s, QString::fromLatin1(made.text));
    answer.insert(u"note"_s, u"This is the only time the key is shown; Switchyard keeps only "
                             u"its SHA-256."_s);
    return http::AdminReply::json(QJsonDocument(answer), 201);
}

http::AdminReply editLimits(auth::ClientAuthenticator &keys, const config::ConfigStore &store,
                            const http::AdminRequest &request, const QString &id)
{
    auto parsed = bodyObject(request, kLimitFields, u"{\"requests_per_minute\": 60}"_s,
                             u"a key's limits are"_s);
    if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
        return http::AdminReply::error(*error);
    auto edit = limitsEdit(std::get<QJsonObject>(parsed));
    if (const auto *error = std::get_if<protocol::ApiError>(&edit))
        return http::AdminReply::error(*error);
    auto edited = keys.editLimits(store.config(), id, std::get<config::ClientKeyLimitsEdit>(edit));
    if (const auto *error = std::get_if<protocol::ApiError>(&edited))
        return http::AdminReply::error(*error);
    return http::AdminReply::json(QJsonDocument(keyJson(std::get<auth::ClientKey>(edited))));
}

} // namespace

void registerKeyAdmin(http::AdminEndpoints &api, auth::ClientAuthenticator &keys,
                      const config::ConfigStore &store)
{
    api.add(Method::Get, u"keys"_s,
            [&keys, &store](const http::AdminRequest &, const QStringList &) {
                QJsonArray data;
                for (const auth::ClientKey &key : keys.keys(store.config()))
                    data.append(keyJson(key));
                return http::AdminReply::json(
                    QJsonDocument(QJsonObject{{u"object"_s, u"list"_s}, {u"data"_s, data}}));
            });
    api.add(Method::Post, u"keys"_s,
            [&keys, &store](const http::AdminRequest &request, const QStringList &) {
                return create(keys, store, request);
            });
    api.add(Method::Patch, u"keys/{}"_s,
            [&keys, &store](const http::AdminRequest &request, const QStringList &captures) {
                return editLimits(keys, store, request, captures.at(0));
            });
    api.add(Method::Delete, u"keys/{}"_s,
            [&keys, &store](const http::AdminRequest &, const QStringList &captures) {
                const QString &id = captures.at(0);
                if (const auto refusal = keys.revoke(store.config(), id))
                    return http::AdminReply::error(*refusal);
                return http::AdminReply::json(
                    QJsonDocument(QJsonObject{{u"id"_s, id}, {u"revoked"_s, true}}));
            });
}

} // namespace switchyard::admin
