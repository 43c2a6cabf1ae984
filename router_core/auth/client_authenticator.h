#pragma once

#include "auth/api_key_store.h"
#include "auth/credentials.h"
#include "config/config_store.h"
#include "limits/tenant_quota.h"
#include "protocol/openai_error.h"
#include "telemetry/request_recorder.h"
#include "timing/clock.h"

#include <QHostAddress>
#include <optional>
#include <variant>

namespace switchyard::auth {

// Client API keys (docs/operations.md, "Keys, tenants and the admin token"): who a request is,
// which tenant it belongs to, and what its key allows. Keys come from the config file (the
// store's current snapshot, read at each question) and from the admin API (the state database).
// Without a key in either, the gateway is open and nothing here refuses anything. Per-key limits
// reuse the tenant quota's token buckets: one per key for requests, one for tokens, which are
// charged when the request's record arrives. Engine thread only.
class ClientAuthenticator final : public telemetry::TraceSink {
public:
    // Everything borrowed must outlive the authenticator.
    ClientAuthenticator(const config::ConfigStore &store, ApiKeyStore &apiKeys,
                        const timing::Clock &clock = timing::SteadyClock::instance(),
                        std::unique_ptr<limits::TenantQuota> quota = nullptr);
    ~ClientAuthenticator() override;

    // Whether requests need a key under `config`: a key is in its file or was created through
    // the API, or the API's keys cannot be read (then nobody can tell that there are none).
    bool keysRequired(const config::Config &config) const;

    // The key a request presents, checked against every key. Neither member is set when no key
    // is required (an open gateway).
    struct Verdict {
        std::optional<ClientKey> key;
        // 401; 503 `keys_unavailable` for any key but a file key while the API's keys cannot
        // be read.
        std::optional<protocol::ApiError> refusal;
    };
    Verdict authenticate(const config::Config &config, const HeaderList &headers) const;

    // 403 when the client's x-switchyard-tenant names a tenant other than its key's.
    static std::optional<protocol::ApiError> tenantRefusal(const ClientKey &key,
                                                           const HeaderList &headers);

    // The key's rules for a request of `model`: the model list (403), tokens per minute, then
    // requests per minute (429 with Retry-After, saying which). Takes nothing: a check after this
    // one may still refuse the request.
    std::optional<protocol::ApiError> admit(const ClientKey &key, const QString &model);
    // Takes one request from the key's requests per minute: call once the request has passed
    // admit() and every later check, so that a refused request costs the key nothing.
    void takeRequest(const ClientKey &key);
    // Whether work accepted earlier with key `keyId` (a background task, run later) may still
    // run for `model`: 401 `key_revoked` when no key has the id any more, 403
    // `model_not_allowed` when the key's models no longer include `model`. Nothing for an empty
    // id (accepted by an open gateway), and nothing while the API's keys cannot be read: the
    // task was checked when it was accepted, and what cannot be read cannot revoke it.
    std::optional<protocol::ApiError> stillAllows(const config::Config &config,
                                                  const QString &keyId, const QString &model) const;

    // Charges a finished request's tokens to its key's tokens-per-minute allowance.
    void traceFinished(const telemetry::Trace &trace) override;

    // ---- the admin API ---------------------------------------------------------------------
    // Every key, file keys first; never a secret.
    QList<ClientKey> keys(const config::Config &config) const;
    struct Created {
        ClientKey key;
        QByteArray text; // shown once, to the caller that created it
    };
    // Each command below is the one the admin API and the console both call, so both refuse
    // the same things in the same words.
    //
    // `tenant` is trimmed; `id` empty: one is made up. Refused with 400 for a tenant that is
    // empty or too long, an id not in the form of one, or limits out of range (limitsProblem()),
    // 409 when the id is taken, 503 when the database cannot store it.
    std::variant<Created, protocol::ApiError> create(const config::Config &config,
                                                     const QString &tenant, QString id,
                                                     const config::ClientKeyLimits &limits);
    // Gives key `id` the limits `edit` sets, in force from the key's next request (here at
    // once, on the other nodes of a fleet at their next sync); answers the key as it is now.
    // 404 when no key has the id, 409 for a file key (its limits are in the file), 400 for a
    // limit out of range or an edit that sets nothing, 503 when the database cannot store it.
    std::variant<ClientKey, protocol::ApiError> editLimits(const config::Config &config,
                                                           const QString &id,
                                                           const config::ClientKeyLimitsEdit &edit);
    // 404 when no key has the id, 409 for a file key (it is revoked by editing the file).
    std::optional<protocol::ApiError> revoke(const config::Config &config, const QString &id);

private:
    std::optional<ClientKey> findById(const config::Config &config, const QString &id) const;

    const config::ConfigStore &m_store;
    ApiKeyStore &m_apiKeys;
    const timing::Clock &m_clock;
    std::unique_ptr<limits::TenantQuota> m_quota;
};

// The words of a limit out of range, for the admin API's checks of its JSON and for the commands
// above: `field` (`requests_per_minute`, `tokens_per_minute`) is not a whole number from 0 to
// 2,147,483,647; `models` is not a list of names or patterns.
protocol::ApiError perMinuteLimitError(const QString &field);
protocol::ApiError modelsLimitError();
// The first limit of `limits` out of range, in those words.
std::optional<protocol::ApiError> limitsProblem(const config::ClientKeyLimits &limits);

// What the admin token guards.
enum class AdminSurface { AdminApi, Metrics };

// The admin API and /metrics (docs/operations.md): with `auth.admin_token` set, every client must
// send `Authorization: Bearer <token>` (401 otherwise); without one, only clients on this machine
// are answered (403 `admin_loopback_only` or `metrics_loopback_only` otherwise).
std::optional<protocol::ApiError> adminRefusal(const config::AuthConfig &auth,
                                               const QHostAddress &client,
                                               const HeaderList &headers, AdminSurface surface);

// Why Switchyard must not start with `config`: a listener reachable from other machines with no
// admin token would hand the admin API to the network. Empty when it may start.
QString exposureProblem(const config::Config &config);

// A listener reachable from other machines that speaks plain HTTP: keys and prompts travel in
// clear. Switchyard starts, but says so in the log and the console.
bool exposedWithoutTls(const config::Config &config);

} // namespace switchyard::auth
