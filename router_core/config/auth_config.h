#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace switchyard::config {

// A secret Switchyard checks but never needs to show: only its SHA-256 is kept. Written in the
// file as `sha256:<64 hex digits>` of the secret's text, or `{env: NAME}` (the variable is read
// when the config loads and hashed at once; its text is not kept).
struct SecretDigest {
    QByteArray sha256;           // 32 raw bytes; empty: no secret
    QString environmentVariable; // where the secret came from; empty when given as a hash

    bool isSet() const { return !sha256.isEmpty(); }
    friend bool operator==(const SecretDigest &, const SecretDigest &) = default;
};

// What one client key may do, each rule with its own window; zero or empty means unlimited.
struct ClientKeyLimits {
    int requestsPerMinute = 0;
    qint64 tokensPerMinute = 0; // input plus output tokens, charged when a request finishes
    // Public model names the key may ask for: exact names, or patterns where `*` matches any
    // run of characters and `?` one character (`gpt-4o*`). Empty: every model.
    QStringList models;

    bool allowsModel(const QString &model) const;
    friend bool operator==(const ClientKeyLimits &, const ClientKeyLimits &) = default;
};

// A change to some of a key's limits (PATCH /admin/v1/keys/{id}, the console's Edit limits): each
// member that is set replaces that limit, each unset one keeps it.
struct ClientKeyLimitsEdit {
    std::optional<int> requestsPerMinute;
    std::optional<qint64> tokensPerMinute;
    std::optional<QStringList> models;

    bool isEmpty() const { return !requestsPerMinute && !tokensPerMinute && !models; }
    ClientKeyLimits appliedTo(ClientKeyLimits limits) const
    {
        limits.requestsPerMinute = requestsPerMinute.value_or(limits.requestsPerMinute);
        limits.tokensPerMinute = tokensPerMinute.value_or(limits.tokensPerMinute);
        if (models)
            limits.models = *models;
        return limits;
    }
};

// `auth.keys[]`: a client API key written in the config file.
struct ClientKeyConfig {
    QString id;
    QString tenant;
    SecretDigest secret;
    ClientKeyLimits limits;
};

// The `auth` section (docs/operations.md, "Keys, tenants and the admin token").
struct AuthConfig {
    QList<ClientKeyConfig> keys;
    // `auth.admin_token`: when set, the admin API and /metrics need `Authorization: Bearer
    // <token>` from every client, loopback included.
    SecretDigest adminToken;
    // `auth.required: true`: every client request needs a valid key, even while no key exists
    // (revoking the last one then locks the gateway instead of opening it). By default a gateway
    // asks for keys once it has any.
    bool required = false;
};

// The `tls` section: the listener speaks HTTPS with this certificate and key (PEM files, checked
// when the config loads and read again when a new config names other files).
struct TlsConfig {
    QString certificateFile; // absolute; empty: plain HTTP
    QString keyFile;

    bool enabled() const { return !certificateFile.isEmpty(); }
    friend bool operator==(const TlsConfig &, const TlsConfig &) = default;
};

// Whether `host` (the listen address's host) only takes connections from this machine.
bool isLoopbackHost(const QString &host);

} // namespace switchyard::config
