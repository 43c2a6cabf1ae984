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
// A tenant lands in logs, traces and metrics: the same bound as the config file's.
constexpr qsizetype kLongestTenantBytes = 256;

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

// A whole number in [0, INT_MAX] from a JSON field, or the error naming the field.
std::variant<int, protocol::ApiError> perMinute(const QJsonObject &body, const QString &field)
{
    const QJsonValue value = body.value(field);
    if (value.isUndefined() || value.isNull())
        return 0;
    const double number = value.toDouble(-1);
    if (!value.isDouble() || number < 0 || number != std::floor(number) ||
        number > std::numeric_limits<int>::max())
        return http::invalidAdminRequest(
            u"`%1` must be a whole number of at least 0 (0: no limit)."_s.arg(field), field);
    return int(number);
}

http::AdminReply create(auth::ClientAuthenticator &keys, const config::ConfigStore &store,
                        const http::AdminRequest &request)
{
    QJsonParseError parseError{};
    const QJsonDocument document = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return http::AdminReply::error(http::invalidAdminRequest(
            u"The body must be a JSON object such as {\"tenant\": \"team-a\"}."_s, {}));
    const QJsonObject body = document.object();
    for (auto it = body.begin(); it != body.end(); ++it) {
        if (!kCreateFields.contains(it.key()))
            return http::AdminReply::error(http::invalidAdminRequest(
                u"Unknown field `%1`; a key takes %2."_s.arg(it.key(), kCreateFields.join(u", "_s)),
                it.key()));
    }
    const QString tenant = body.value(u"tenant"_s).toString().trimmed();
    if (tenant.isEmpty() || tenant.toUtf8().size() > kLongestTenantBytes)
        return http::AdminReply::error(http::invalidAdminRequest(
            u"`tenant` is required: the tenant every request with this key belongs to (1 to "
            u"%1 bytes)."_s.arg(kLongestTenantBytes),
            u"tenant"_s));
    const QJsonValue id = body.value(u"id"_s);
    if (!id.isUndefined() && !id.isString())
        return http::AdminReply::error(http::invalidAdminRequest(u"`id` must be text."_s, u"id"_s));
    config::ClientKeyLimits limits;
    auto requests = perMinute(body, u"requests_per_minute"_s);
    if (const auto *error = std::get_if<protocol::ApiError>(&requests))
        return http::AdminReply::error(*error);
    limits.requestsPerMinute = std::get<int>(requests);
    auto tokens = perMinute(body, u"tokens_per_minute"_s);
    if (const auto *error = std::get_if<protocol::ApiError>(&tokens))
        return http::AdminReply::error(*error);
    limits.tokensPerMinute = std::get<int>(tokens);
    const QJsonValue models = body.value(u"models"_s);
    if (!models.isUndefined() && !models.isNull()) {
        const auto notList = http::invalidAdminRequest(
            u"`models` must be a list of model names or patterns (`*` and `?`)."_s, u"models"_s);
        if (!models.isArray())
            return http::AdminReply::error(notList);
        for (const QJsonValue &model : models.toArray()) {
            if (!model.isString() || model.toString().trimmed().isEmpty())
                return http::AdminReply::error(notList);
            limits.models.append(model.toString());
        }
    }
    auto created = keys.create(store.config(), tenant, id.toString(), limits);
    if (const auto *error = std::get_if<protocol::ApiError>(&created))
        return http::AdminReply::error(*error);
    const auto &made = std::get<auth::ClientAuthenticator::Created>(created);
    QJsonObject answer = keyJson(made.key);
    answer.insert(u"key"_s, QString::fromLatin1(made.text));
    answer.insert(u"note"_s, u"This is the only time the key is shown; Switchyard keeps only "
                             u"its SHA-256."_s);
    return http::AdminReply::json(QJsonDocument(answer), 201);
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
