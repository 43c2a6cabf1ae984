#include "config/config_sections.h"
#include "config/glob_pattern.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QHostAddress>
#include <QRegularExpression>
#include <QSslCertificate>
#include <QSslKey>
#include <limits>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

const QList<QLatin1StringView> authKeys{"keys"_L1, "admin_token"_L1, "required"_L1};
const QList<QLatin1StringView> clientKeyKeys{
    "id"_L1, "tenant"_L1, "key"_L1, "requests_per_minute"_L1, "tokens_per_minute"_L1, "models"_L1};
const QList<QLatin1StringView> secretKeys{"env"_L1};
const QList<QLatin1StringView> tlsKeys{"certificate_file"_L1, "key_file"_L1};
constexpr QLatin1StringView kDigestPrefix = "sha256:"_L1;
// A tenant lands in logs, traces and metrics like the x-switchyard-tenant header it replaces:
// the same bound.
constexpr qsizetype kLongestTenant = 256;

bool isKeyId(const QString &id)
{
    static const QRegularExpression pattern(u"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"_s);
    return pattern.match(id).hasMatch();
}

bool isEnvironmentName(const QString &name)
{
    static const QRegularExpression pattern(u"^[A-Za-z_][A-Za-z0-9_]*$"_s);
    return pattern.match(name).hasMatch();
}

bool isPrintable(const QString &text)
{
    return std::none_of(text.begin(), text.end(),
                        [](QChar c) { return c.unicode() < 0x20 || c.unicode() == 0x7f; });
}

// `sha256:<hex>` or `{env: NAME}`; `what` names the value in messages. The secret's text never
// appears in a message: an error about it names the variable only.
std::optional<SecretDigest> readSecret(YamlReader &reader, const EnvironmentLookup &environment,
                                       const MapEntry &entry, const QString &what)
{
    const YAML::Node &value = entry.value;
    const QString howToWrite =
        u"write %1 as `sha256:<64 hex digits>` (the SHA-256 of its text, e.g. from "
        u"`printf %s \"$KEY\" | sha256sum`) or as `{env: NAME}`"_s.arg(what);
    if (value.IsScalar()) {
        const QString text = fromYaml(value.Scalar());
        if (!text.startsWith(kDigestPrefix)) {
            // Not quoted back: a key pasted here in clear is a secret too.
            reader.reportValue(entry, u"%1 is not a hash; its text must never be written in the "
                                      u"file: %2"_s.arg(what, howToWrite));
            return std::nullopt;
        }
        const QByteArray hex = text.mid(kDigestPrefix.size()).toLatin1().toLower();
        static const QRegularExpression hexDigits(u"^[0-9a-f]{64}$"_s);
        if (!hexDigits.match(QString::fromLatin1(hex)).hasMatch()) {
            reader.reportValue(entry, u"%1 has %2 after `sha256:`; %3"_s.arg(
                                          what, u"%1 character(s)"_s.arg(hex.size()), howToWrite));
            return std::nullopt;
        }
        return SecretDigest{QByteArray::fromHex(hex), {}};
    }
    if (!value.IsMap()) {
        reader.reportValue(entry, u"%1 must be text or a map, got %2: %3"_s.arg(
                                      what, describe(value), howToWrite));
        return std::nullopt;
    }
    const KeyedMap keys = reader.readKeys(value, secretKeys);
    const MapEntry *env = keys.find("env"_L1);
    if (!env) {
        reader.reportMissing(value, what, "env"_L1);
        return std::nullopt;
    }
    const auto name = reader.readString(*env);
    if (!name)
        return std::nullopt;
    if (!isEnvironmentName(*name)) {
        reader.reportValue(*env, u"`env` must name an environment variable (letters, digits and "
                                 u"`_`), not hold the value itself"_s);
        return std::nullopt;
    }
    const std::optional<QByteArray> resolved = environment(*name);
    if (!resolved) {
        reader.reportValue(*env, u"environment variable %1 is not set"_s.arg(*name));
        return std::nullopt;
    }
    if (resolved->trimmed().isEmpty()) {
        reader.reportValue(*env,
                           u"environment variable %1 is empty; %2 must not be"_s.arg(*name, what));
        return std::nullopt;
    }
    // Presented keys are trimmed (a header's spaces, a file's newline): so is the secret, or a
    // variable read from a file with its trailing newline would never match.
    return SecretDigest{QCryptographicHash::hash(resolved->trimmed(), QCryptographicHash::Sha256),
                        *name};
}

std::optional<ClientKeyConfig>
readClientKey(YamlReader &reader, const EnvironmentLookup &environment, const YAML::Node &node)
{
    if (!node.IsMap()) {
        reader.report(
            node.Mark(),
            u"each entry of `keys` must be a map with `id`, `tenant` and `key`, got %1"_s.arg(
                describe(node)));
        return std::nullopt;
    }
    const qsizetype errorsBefore = reader.errorCount();
    const KeyedMap keys = reader.readKeys(node, clientKeyKeys);
    ClientKeyConfig key;
    if (const MapEntry *id = keys.find("id"_L1)) {
        if (const auto text = reader.readString(*id)) {
            if (isKeyId(*text))
                key.id = *text;
            else
                reader.reportValue(*id, u"key `id` must be 1 to 64 letters, digits, `.`, `_` or "
                                        u"`-`, starting with a letter or digit; got %1"_s.arg(
                                            describe(id->value)));
        }
    } else {
        reader.reportMissing(node, u"key"_s, "id"_L1);
    }
    if (const MapEntry *tenant = keys.find("tenant"_L1)) {
        if (const auto text = reader.readString(*tenant)) {
            if (text->isEmpty() || text->toUtf8().size() > kLongestTenant || !isPrintable(*text))
                reader.reportValue(
                    *tenant,
                    u"`tenant` must be 1 to %1 bytes of printable text"_s.arg(kLongestTenant));
            else
                key.tenant = *text;
        }
    } else {
        reader.reportMissing(node, u"key"_s, "tenant"_L1);
    }
    if (const MapEntry *secret = keys.find("key"_L1)) {
        if (auto digest = readSecret(reader, environment, *secret, u"`key`"_s))
            key.secret = std::move(*digest);
    } else {
        reader.reportMissing(node, u"key"_s, "key"_L1);
    }
    if (const MapEntry *rpm = keys.find("requests_per_minute"_L1)) {
        if (const auto value = reader.readInteger(*rpm, 0, 10'000'000))
            key.limits.requestsPerMinute = int(*value);
    }
    if (const MapEntry *tpm = keys.find("tokens_per_minute"_L1)) {
        if (const auto value = reader.readInteger(*tpm, 0, std::numeric_limits<int>::max()))
            key.limits.tokensPerMinute = *value;
    }
    if (const MapEntry *models = keys.find("models"_L1)) {
        if (const auto names = reader.readStringList(*models)) {
            for (const QString &name : *names) {
                if (name.trimmed().isEmpty()) {
                    reader.reportValue(*models, u"`models` holds an empty name"_s);
                    break;
                }
            }
            key.limits.models = *names;
        }
    }
    if (reader.errorCount() != errorsBefore)
        return std::nullopt;
    return key;
}

void checkAuth(YamlReader &reader, const EnvironmentLookup &environment, const MapEntry &entry,
               AuthConfig &auth)
{
    const std::optional<KeyedMap> section = reader.readSection(entry, authKeys);
    if (!section)
        return;
    if (const MapEntry *token = section->find("admin_token"_L1)) {
        if (auto digest = readSecret(reader, environment, *token, u"`admin_token`"_s))
            auth.adminToken = std::move(*digest);
    }
    if (const MapEntry *required = section->find("required"_L1)) {
        if (const auto value = reader.readBool(*required))
            auth.required = *value;
    }
    const MapEntry *keys = section->find("keys"_L1);
    if (!keys)
        return;
    if (!keys->value.IsSequence()) {
        reader.reportValue(*keys,
                           u"`keys` must be a list of keys, got %1"_s.arg(describe(keys->value)));
        return;
    }
    QHash<QString, int> idLines;
    QHash<QByteArray, QString> digestOwners;
    for (const YAML::Node &node : keys->value) {
        std::optional<ClientKeyConfig> key = readClientKey(reader, environment, node);
        if (!key)
            continue;
        const int line = node.Mark().line + 1;
        if (const auto seen = idLines.constFind(key->id); seen != idLines.cend()) {
            reader.report(
                node["id"].Mark(),
                u"key id `%1` is used twice; the first is on line %2"_s.arg(key->id).arg(*seen));
            continue;
        }
        if (const auto owner = digestOwners.constFind(key->secret.sha256);
            owner != digestOwners.cend()) {
            reader.report(node["key"].Mark(),
                          u"key `%1` has the same secret as key `%2`; each key needs its own"_s.arg(
                              key->id, *owner));
            continue;
        }
        idLines.insert(key->id, line);
        digestOwners.insert(key->secret.sha256, key->id);
        auth.keys.append(std::move(*key));
    }
}

// A PEM file as the listener will read it: present, readable, and holding what it should. Checked
// at load so a wrong path fails the start (or the reload) with the line that named it.
QString pemProblem(const QString &path, bool isKey)
{
    QFile file(path);
    if (!QFileInfo::exists(path))
        return u"%1 does not exist"_s.arg(path);
    if (!file.open(QIODevice::ReadOnly))
        return u"cannot read %1: %2"_s.arg(path, file.errorString());
    const QByteArray pem = file.readAll();
    if (!isKey) {
        if (QSslCertificate::fromData(pem, QSsl::Pem).isEmpty())
            return u"%1 holds no PEM certificate (`-----BEGIN CERTIFICATE-----`)"_s.arg(path);
        return {};
    }
    for (const QSsl::KeyAlgorithm algorithm : {QSsl::Rsa, QSsl::Ec, QSsl::Dsa}) {
        if (!QSslKey(pem, algorithm, QSsl::Pem).isNull())
            return {};
    }
    return u"%1 holds no unencrypted PEM private key (RSA, EC or DSA)"_s.arg(path);
}

void checkTls(YamlReader &reader, const MapEntry &entry, TlsConfig &tls)
{
    const std::optional<KeyedMap> section = reader.readSection(entry, tlsKeys);
    if (!section)
        return;
    const MapEntry *certificate = section->find("certificate_file"_L1);
    const MapEntry *key = section->find("key_file"_L1);
    if (!certificate)
        reader.reportMissing(entry.value, u"tls"_s, "certificate_file"_L1);
    if (!key)
        reader.reportMissing(entry.value, u"tls"_s, "key_file"_L1);
    const auto resolve = [&](const MapEntry &file, bool isKey) -> QString {
        const auto text = reader.readString(file);
        if (!text)
            return {};
        if (text->isEmpty()) {
            reader.reportValue(file, u"`%1` must name a PEM file"_s.arg(file.name));
            return {};
        }
        QString path = *text;
        if (QFileInfo(path).isRelative() && !reader.sourceName().startsWith(u':'))
            path = QFileInfo(reader.sourceName()).absoluteDir().filePath(path);
        path = QDir::cleanPath(path);
        if (const QString problem = pemProblem(path, isKey); !problem.isEmpty()) {
            reader.reportValue(file, u"`%1`: %2"_s.arg(file.name, problem));
            return {};
        }
        return path;
    };
    const QString certificatePath = certificate ? resolve(*certificate, false) : QString();
    const QString keyPath = key ? resolve(*key, true) : QString();
    if (certificatePath.isEmpty() || keyPath.isEmpty())
        return;
    tls.certificateFile = certificatePath;
    tls.keyFile = keyPath;
}

} // namespace

bool ClientKeyLimits::allowsModel(const QString &model) const
{
    if (models.isEmpty())
        return true;
    return std::any_of(models.begin(), models.end(),
                       [&](const QString &pattern) { return globMatches(pattern, model); });
}

bool isLoopbackHost(const QString &host)
{
    if (host == "localhost"_L1)
        return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

QList<QLatin1StringView> authRootKeys()
{
    return {"auth"_L1, "tls"_L1};
}

void checkAuthSections(YamlReader &reader, const EnvironmentLookup &environment,
                       const KeyedMap &root, Config &config)
{
    if (const MapEntry *auth = root.find("auth"_L1))
        checkAuth(reader, environment, *auth, config.auth);
    if (const MapEntry *tls = root.find("tls"_L1))
        checkTls(reader, *tls, config.tls);
}

} // namespace switchyard::config
