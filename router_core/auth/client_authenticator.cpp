#include "auth/client_authenticator.h"

#include "protocol/gateway_headers.h"
#include "telemetry/trace.h"

#include <QRandomGenerator>
#include <QRegularExpression>
#include <limits>

namespace switchyard::auth {

using namespace Qt::StringLiterals;
using std::chrono::milliseconds;

namespace {

using protocol::headerValue;

ClientKey fileKey(const config::ClientKeyConfig &entry)
{
    return {entry.id, entry.tenant, entry.secret.sha256, entry.limits, {}, KeySource::File};
}

protocol::ApiError unauthenticated(const QString &message, const QString &code)
{
    // OpenAI answers a missing or wrong key with 401 and type invalid_request_error; Anthropic's
    // shape (on /v1/messages) turns 401 into authentication_error.
    return {401, message, u"invalid_request_error"_s, {}, code, {}};
}

protocol::ApiError rateLimited(const QString &message, const QString &code, milliseconds wait)
{
    const qint64 seconds = protocol::ApiError::retryAfterSeconds(wait);
    return {429,
            message + u"; retry in %1 s."_s.arg(seconds),
            u"rate_limit_error"_s,
            {},
            code,
            QByteArray::number(seconds)};
}

// 503 while the API's keys cannot be read: a request without a file key may hold one of them
// (so not 401), and must not pass unchecked (so not 200).
std::optional<protocol::ApiError> keysUnavailable(const ApiKeyStore &apiKeys)
{
    const QString reason = apiKeys.unavailableReason();
    if (reason.isEmpty())
        return std::nullopt;
    return protocol::ApiError{503,
                              u"Switchyard cannot read its store of API keys (%1); until an "
                              u"operator repairs it, only keys from the config file are "
                              u"accepted."_s.arg(reason),
                              u"server_error"_s,
                              {},
                              u"keys_unavailable"_s,
                              {}};
}

QString rpmBucket(const QString &id)
{
    return u"requests:"_s + id;
}
QString tpmBucket(const QString &id)
{
    return u"tokens:"_s + id;
}

bool isKeyId(const QString &id)
{
    static const QRegularExpression pattern(u"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"_s);
    return pattern.match(id).hasMatch();
}

// A tenant lands in logs, traces and metrics: the same bound as the config file's.
constexpr qsizetype kLongestTenantBytes = 256;

protocol::ApiError keyNotFound(const QString &id)
{
    return {404,
            u"No API key has id `%1`."_s.arg(id),
            u"invalid_request_error"_s,
            {},
            u"key_not_found"_s,
            {}};
}

// 409 for a command on a key the config file defines: `whatToDo` says how, in the file.
protocol::ApiError keyDefinedInFile(const QString &id, const QString &sourceName,
                                    const QString &whatToDo)
{
    return {409,
            u"Key `%1` is defined in the config file (%2); %3"_s.arg(id, sourceName, whatToDo),
            u"invalid_request_error"_s,
            {},
            u"key_defined_in_file"_s,
            {}};
}

} // namespace

protocol::ApiError perMinuteLimitError(const QString &field)
{
    return protocol::invalidAdminRequest(
        u"`%1` must be a whole number of at least 0 (0: no limit)."_s.arg(field), field);
}

protocol::ApiError modelsLimitError()
{
    return protocol::invalidAdminRequest(
        u"`models` must be a list of model names or patterns (`*` and `?`)."_s, u"models"_s);
}

std::optional<protocol::ApiError> limitsProblem(const config::ClientKeyLimits &limits)
{
    if (limits.requestsPerMinute < 0)
        return perMinuteLimitError(u"requests_per_minute"_s);
    // The token bucket counts in int (admit()).
    if (limits.tokensPerMinute < 0 || limits.tokensPerMinute > std::numeric_limits<int>::max())
        return perMinuteLimitError(u"tokens_per_minute"_s);
    for (const QString &model : limits.models) {
        if (model.trimmed().isEmpty())
            return modelsLimitError();
    }
    return std::nullopt;
}

ClientAuthenticator::ClientAuthenticator(const config::ConfigStore &store, ApiKeyStore &apiKeys,
                                         const timing::Clock &clock,
                                         std::unique_ptr<limits::TenantQuota> quota)
    : m_store(store), m_apiKeys(apiKeys), m_clock(clock),
      m_quota(quota ? std::move(quota) : std::make_unique<limits::InMemoryTenantQuota>())
{}

ClientAuthenticator::~ClientAuthenticator() = default;

bool ClientAuthenticator::keysRequired(const config::Config &config) const
{
    // A key store that cannot be read may hold keys: answering everyone would open a gateway
    // whose keys were all created through the API.
    return config.auth.required || !config.auth.keys.isEmpty() || !m_apiKeys.keys().isEmpty() ||
           !m_apiKeys.unavailableReason().isEmpty();
}

ClientAuthenticator::Verdict ClientAuthenticator::authenticate(const config::Config &config,
                                                               const HeaderList &headers) const
{
    if (!keysRequired(config))
        return {};
    const QByteArray presented = presentedKey(headers);
    if (presented.isEmpty()) {
        if (auto refusal = keysUnavailable(m_apiKeys))
            return {std::nullopt, std::move(refusal)};
        return {std::nullopt,
                unauthenticated(u"You didn't provide an API key. Send it as `Authorization: "
                                u"Bearer <key>` or `x-api-key: <key>`."_s,
                                u"missing_api_key"_s)};
    }
    const QByteArray digest = sha256(presented);
    // Every key is compared, whichever matches: the time taken says nothing of which did.
    std::optional<ClientKey> found;
    for (const config::ClientKeyConfig &entry : config.auth.keys) {
        if (digestsEqual(entry.secret.sha256, digest) && !found)
            found = fileKey(entry);
    }
    for (const ClientKey &key : m_apiKeys.keys()) {
        if (digestsEqual(key.sha256, digest) && !found)
            found = key;
    }
    if (!found) {
        if (auto refusal = keysUnavailable(m_apiKeys))
            return {std::nullopt, std::move(refusal)};
        return {std::nullopt,
                unauthenticated(u"Incorrect API key provided. Ask the operator of this "
                                u"Switchyard for a valid key."_s,
                                u"invalid_api_key"_s)};
    }
    return {std::move(found), std::nullopt};
}

std::optional<protocol::ApiError> ClientAuthenticator::tenantRefusal(const ClientKey &key,
                                                                     const HeaderList &headers)
{
    const QString claimed =
        QString::fromUtf8(headerValue(headers, "x-switchyard-tenant").trimmed());
    if (claimed.isEmpty() || claimed == key.tenant)
        return std::nullopt;
    return protocol::ApiError{403,
                              u"This API key belongs to tenant `%1`, but x-switchyard-tenant names "
                              u"another tenant. Leave the header out (the key says the tenant) "
                              u"or send `%1`."_s.arg(key.tenant),
                              u"permission_error"_s,
                              u"x-switchyard-tenant"_s,
                              u"tenant_mismatch"_s,
                              {}};
}

std::optional<protocol::ApiError> ClientAuthenticator::admit(const ClientKey &key,
                                                             const QString &model)
{
    if (!key.limits.allowsModel(model)) {
        return protocol::ApiError{403,
                                  u"API key `%1` may not use model `%2`; it may use: %3."_s.arg(
                                      key.id, model, key.limits.models.join(u", "_s)),
                                  u"permission_error"_s,
                                  u"model"_s,
                                  u"model_not_allowed"_s,
                                  {}};
    }
    const timing::Clock::TimePoint now = m_clock.now();
    if (key.limits.tokensPerMinute > 0) {
        const config::TenantLimit perMinute{int(key.limits.tokensPerMinute), 0};
        if (const auto wait = m_quota->waitFor(tpmBucket(key.id), perMinute, now)) {
            return rateLimited(u"API key `%1` has used its %2 tokens per minute "
                               u"(`tokens_per_minute`)"_s.arg(key.id)
                                   .arg(key.limits.tokensPerMinute),
                               u"key_tokens_per_minute_exceeded"_s, *wait);
        }
    }
    if (key.limits.requestsPerMinute > 0) {
        const config::TenantLimit perMinute{key.limits.requestsPerMinute, 0};
        if (const auto wait = m_quota->waitFor(rpmBucket(key.id), perMinute, now)) {
            return rateLimited(u"API key `%1` has sent its %2 requests per minute "
                               u"(`requests_per_minute`)"_s.arg(key.id)
                                   .arg(key.limits.requestsPerMinute),
                               u"key_requests_per_minute_exceeded"_s, *wait);
        }
    }
    return std::nullopt;
}

std::optional<protocol::ApiError> ClientAuthenticator::stillAllows(const config::Config &config,
                                                                   const QString &keyId,
                                                                   const QString &model) const
{
    if (keyId.isEmpty())
        return std::nullopt;
    const std::optional<ClientKey> key = findById(config, keyId);
    if (!key) {
        if (!m_apiKeys.unavailableReason().isEmpty())
            return std::nullopt;
        return unauthenticated(u"API key `%1`, which queued this task, has been revoked; the "
                               u"task did not run."_s.arg(keyId),
                               u"key_revoked"_s);
    }
    if (!key->limits.allowsModel(model)) {
        return protocol::ApiError{403,
                                  u"API key `%1`, which queued this task, may no longer use model "
                                  u"`%2`; the task did not run."_s.arg(key->id, model),
                                  u"permission_error"_s,
                                  u"model"_s,
                                  u"model_not_allowed"_s,
                                  {}};
    }
    return std::nullopt;
}

void ClientAuthenticator::takeRequest(const ClientKey &key)
{
    if (key.limits.requestsPerMinute <= 0)
        return;
    // admit() saw a whole request in the bucket, and a bucket only refills in between.
    (void)m_quota->take(rpmBucket(key.id), config::TenantLimit{key.limits.requestsPerMinute, 0},
                        m_clock.now());
}

void ClientAuthenticator::traceFinished(const telemetry::Trace &trace)
{
    // A shadow call's tokens are the operator's experiment: the key's allowance never pays.
    if (trace.keyId.isEmpty() || trace.isShadow())
        return;
    const qint64 tokens =
        std::max<qint64>(trace.inputTokens, 0) + std::max<qint64>(trace.outputTokens, 0);
    if (tokens == 0)
        return;
    const std::optional<ClientKey> key = findById(m_store.config(), trace.keyId);
    if (!key || key->limits.tokensPerMinute <= 0)
        return;
    m_quota->spend(tpmBucket(key->id), config::TenantLimit{int(key->limits.tokensPerMinute), 0},
                   tokens, m_clock.now());
}

QList<ClientKey> ClientAuthenticator::keys(const config::Config &config) const
{
    QList<ClientKey> all;
    for (const config::ClientKeyConfig &entry : config.auth.keys)
        all.append(fileKey(entry));
    all.append(m_apiKeys.keys());
    return all;
}

std::optional<ClientKey> ClientAuthenticator::findById(const config::Config &config,
                                                       const QString &id) const
{
    // Read for every finished request with a key: no list of all keys is built for it.
    for (const config::ClientKeyConfig &entry : config.auth.keys) {
        if (entry.id == id)
            return fileKey(entry);
    }
    for (const ClientKey &key : m_apiKeys.keys()) {
        if (key.id == id)
            return key;
    }
    return std::nullopt;
}

std::variant<ClientAuthenticator::Created, protocol::ApiError>
ClientAuthenticator::create(const config::Config &config, const QString &tenantText, QString id,
                            const config::ClientKeyLimits &limits)
{
    const QString tenant = tenantText.trimmed();
    if (tenant.isEmpty() || tenant.toUtf8().size() > kLongestTenantBytes)
        return protocol::invalidAdminRequest(
            u"`tenant` is required: the tenant every request with this key belongs to (1 to "
            u"%1 bytes)."_s.arg(kLongestTenantBytes),
            u"tenant"_s);
    if (id.isEmpty()) {
        do {
            id = u"key-%1"_s.arg(QRandomGenerator::system()->generate(), 8, 16, QLatin1Char('0'));
        } while (findById(config, id));
    } else if (!isKeyId(id)) {
        return protocol::ApiError::invalidRequest(
            u"`id` must be 1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or "
            u"digit."_s,
            u"id"_s);
    } else if (const std::optional<ClientKey> taken = findById(config, id)) {
        return protocol::ApiError{
            409,
            u"A key with id `%1` already exists (%2); choose another id."_s.arg(
                id, taken->source == KeySource::File ? u"in the config file"_s
                                                     : u"created through the API"_s),
            u"invalid_request_error"_s,
            u"id"_s,
            u"key_exists"_s,
            {}};
    }
    if (auto problem = limitsProblem(limits))
        return *std::move(problem);
    Created created;
    created.text = newKeyText();
    created.key = {
        id, tenant, sha256(created.text), limits, QDateTime::currentDateTimeUtc(), KeySource::Api};
    if (const std::optional<QString> error = m_apiKeys.insert(created.key)) {
        return protocol::ApiError::serviceUnavailable(
            u"The key could not be stored in the state database: %1"_s.arg(*error));
    }
    return created;
}

std::variant<ClientKey, protocol::ApiError>
ClientAuthenticator::editLimits(const config::Config &config, const QString &id,
                                const config::ClientKeyLimitsEdit &edit)
{
    std::optional<ClientKey> key = findById(config, id);
    if (!key)
        return keyNotFound(id);
    if (key->source == KeySource::File)
        return keyDefinedInFile(id, config.sourceName,
                                u"change its limits under `auth.keys` there and reload."_s);
    if (edit.isEmpty())
        return protocol::invalidAdminRequest(
            u"Nothing to change: send at least one of requests_per_minute, tokens_per_minute, "
            u"models."_s);
    key->limits = edit.appliedTo(key->limits);
    if (auto problem = limitsProblem(key->limits))
        return *std::move(problem);
    // The token buckets need nothing: admit() reads the key's limits at each request, and a
    // bucket holding more than a lowered limit allows is cut to it at its next refill.
    if (const std::optional<QString> error = m_apiKeys.updateLimits(*key)) {
        return protocol::ApiError::serviceUnavailable(
            u"The key's limits could not be stored in the state database: %1"_s.arg(*error));
    }
    return *std::move(key);
}

std::optional<protocol::ApiError> ClientAuthenticator::revoke(const config::Config &config,
                                                              const QString &id)
{
    const std::optional<ClientKey> key = findById(config, id);
    if (!key)
        return keyNotFound(id);
    if (key->source == KeySource::File)
        return keyDefinedInFile(
            id, config.sourceName,
            u"revoke it by removing it from `auth.keys` there and reloading."_s);
    const std::variant<bool, QString> removed = m_apiKeys.remove(id);
    if (const QString *error = std::get_if<QString>(&removed)) {
        return protocol::ApiError::serviceUnavailable(
            u"The key could not be removed from the state database: %1"_s.arg(*error));
    }
    return std::nullopt;
}

std::optional<protocol::ApiError> adminRefusal(const config::AuthConfig &auth,
                                               const QHostAddress &client,
                                               const HeaderList &headers, AdminSurface surface)
{
    const QString what = surface == AdminSurface::Metrics ? u"GET /metrics"_s : u"The admin API"_s;
    if (!auth.adminToken.isSet()) {
        if (client.isLoopback())
            return std::nullopt;
        // Only reachable if a listener off loopback started without a token, which start-up
        // refuses; kept so the rule holds whatever happens.
        return protocol::ApiError{403,
                                  u"%1 answers only clients on this machine unless "
                                  u"`auth.admin_token` is configured."_s.arg(what),
                                  u"permission_error"_s,
                                  {},
                                  surface == AdminSurface::Metrics ? u"metrics_loopback_only"_s
                                                                   : u"admin_loopback_only"_s,
                                  {}};
    }
    const QByteArray token = bearerToken(headers);
    if (token.isEmpty()) {
        return protocol::ApiError{401,
                                  u"%1 needs the admin token: send `Authorization: Bearer "
                                  u"<token>`."_s.arg(what),
                                  u"invalid_request_error"_s,
                                  {},
                                  u"admin_token_required"_s,
                                  {}};
    }
    if (!digestsEqual(sha256(token), auth.adminToken.sha256)) {
        return protocol::ApiError{
            401, u"The admin token is not valid."_s, u"invalid_request_error"_s,
            {},  u"invalid_admin_token"_s,           {}};
    }
    return std::nullopt;
}

QString exposureProblem(const config::Config &config)
{
    const config::ServerConfig &server = config.server;
    if (config::isLoopbackHost(server.listenHost) || config.auth.adminToken.isSet())
        return {};
    return u"refusing to listen on %1: it is reachable from other machines, and without "
           u"`auth.admin_token` the admin API and /metrics would be open to them. Set "
           u"`auth.admin_token` (docs/operations.md, \"Keys, tenants and the admin token\") or "
           u"listen on 127.0.0.1."_s.arg(
               config::formatListenAddress(server.listenHost, server.listenPort));
}

bool exposedWithoutTls(const config::Config &config)
{
    return !config::isLoopbackHost(config.server.listenHost) && !config.tls.enabled();
}

} // namespace switchyard::auth
