#include "config/config_sections.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QRegularExpression>
#include <algorithm>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

const QList<QLatin1StringView> callKeys{"api_key_header"_L1, "api_key_prefix"_L1, "headers"_L1,
                                        "query"_L1,          "proxy"_L1,          "ca_file"_L1,
                                        "transport"_L1};
const QList<QLatin1StringView> environmentValueKeys{"env"_L1};
const QStringList proxySchemes{u"http"_s,    u"https"_s,  u"socks4"_s,
                               u"socks4a"_s, u"socks5"_s, u"socks5h"_s};

// Header names no configured header may use, lower-cased (docs/adapters.md, "Headers Switchyard
// owns"). The first group frames the message, which libcurl writes; the second describes the
// body and the answer the adapter expects; the third carries the gateway's own tracing and loop
// guard, which a provider header must not be able to forge.
const QStringList reservedHeaders{
    u"host"_s,       u"content-length"_s,   u"transfer-encoding"_s, u"connection"_s,
    u"keep-alive"_s, u"proxy-connection"_s, u"upgrade"_s,           u"te"_s,
    u"trailer"_s,    u"expect"_s,           u"content-type"_s,      u"content-encoding"_s,
    u"accept"_s,     u"accept-encoding"_s,  u"x-request-id"_s,      u"traceparent"_s,
};
constexpr QLatin1StringView gatewayHeaderPrefix = "x-switchyard-"_L1;
// An anthropic provider's own headers come from its `anthropic:` section.
const QHash<QString, QString> anthropicHeaders{{u"anthropic-version"_s, u"anthropic.version"_s},
                                               {u"anthropic-beta"_s, u"anthropic.beta"_s}};

bool isHeaderName(const QString &name)
{
    static const QRegularExpression token(u"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$"_s);
    return token.match(name).hasMatch();
}

bool isEnvironmentName(const QString &name)
{
    static const QRegularExpression pattern(u"^[A-Za-z_][A-Za-z0-9_]*$"_s);
    return pattern.match(name).hasMatch();
}

bool isOneLine(QByteArrayView text)
{
    return !text.contains('\n') && !text.contains('\r') && !text.contains('\0');
}

class CallChecker {
public:
    CallChecker(YamlReader &reader, const EnvironmentLookup &environment,
                std::optional<ProviderKind> kind)
        : m_reader(reader), m_environment(environment), m_kind(kind)
    {}

    // `api_key_header`: a header name Switchyard does not own.
    std::optional<QByteArray> readKeyHeader(const MapEntry &entry, const QString &shownName)
    {
        const auto name = m_reader.readString(entry);
        if (!name)
            return std::nullopt;
        if (!isHeaderName(*name)) {
            m_reader.reportValue(entry, u"`%1` must be a header name, got %2"_s.arg(
                                            shownName, describe(entry.value)));
            return std::nullopt;
        }
        if (const QString owner = ownerOf(*name); !owner.isEmpty()) {
            m_reader.reportValue(entry, u"`%1` cannot be `%2`: %3"_s.arg(shownName, *name, owner));
            return std::nullopt;
        }
        return name->toLatin1();
    }

    // `api_key_prefix`: any one-line text; empty (or no value) for the key alone.
    std::optional<QByteArray> readKeyPrefix(const MapEntry &entry, const QString &shownName)
    {
        if (entry.value.IsNull())
            return QByteArray();
        const auto text = m_reader.readString(entry);
        if (!text)
            return std::nullopt;
        const QByteArray prefix = text->toUtf8();
        if (!isOneLine(prefix)) {
            m_reader.reportValue(entry, u"`%1` must fit on one line"_s.arg(shownName));
            return std::nullopt;
        }
        return prefix;
    }

    // A map of header names to values, appended to `headers`.
    void readHeaders(const MapEntry &entry, QList<ConfiguredValue> &headers)
    {
        if (!entry.value.IsMap()) {
            m_reader.reportValue(entry, u"`headers` must be a map of header names to values, "
                                        u"got %1"_s.arg(describe(entry.value)));
            return;
        }
        QHash<QString, int> firstLines;
        for (auto it = entry.value.begin(); it != entry.value.end(); ++it) {
            const YAML::Node key = it->first;
            const QString name = key.IsScalar() ? fromYaml(key.Scalar()) : QString();
            if (!isHeaderName(name)) {
                m_reader.report(key.Mark(), u"`%1` is not a header name"_s.arg(describe(key)));
                continue;
            }
            if (const QString owner = ownerOf(name); !owner.isEmpty()) {
                m_reader.report(key.Mark(),
                                u"header `%1` cannot be set here: %2"_s.arg(name, owner));
                continue;
            }
            const QString lower = name.toLower();
            if (const auto first = firstLines.constFind(lower); first != firstLines.cend()) {
                m_reader.report(key.Mark(), u"duplicate header `%1` (first at line %2)"_s.arg(
                                                name, QString::number(first.value())));
                continue;
            }
            firstLines.insert(lower, m_reader.locate(key.Mark()).line);
            if (auto value = readValue(key, it->second, u"header `%1`"_s.arg(name))) {
                value->name = name.toLatin1();
                headers.append(std::move(*value));
            }
        }
    }

    void readQuery(const MapEntry &entry, QList<ConfiguredValue> &query)
    {
        if (!entry.value.IsMap()) {
            m_reader.reportValue(entry, u"`query` must be a map of parameter names to values, "
                                        u"got %1"_s.arg(describe(entry.value)));
            return;
        }
        QHash<QString, int> firstLines;
        for (auto it = entry.value.begin(); it != entry.value.end(); ++it) {
            const YAML::Node key = it->first;
            const QString name = key.IsScalar() ? fromYaml(key.Scalar()) : QString();
            if (name.isEmpty()) {
                m_reader.report(key.Mark(),
                                u"`%1` is not a query parameter name"_s.arg(describe(key)));
                continue;
            }
            if (const auto first = firstLines.constFind(name); first != firstLines.cend()) {
                m_reader.report(key.Mark(),
                                u"duplicate query parameter `%1` (first at line %2)"_s.arg(
                                    name, QString::number(first.value())));
                continue;
            }
            firstLines.insert(name, m_reader.locate(key.Mark()).line);
            if (auto value = readValue(key, it->second, u"query parameter `%1`"_s.arg(name))) {
                value->name = name.toUtf8();
                query.append(std::move(*value));
            }
        }
    }

    void readProxy(const MapEntry &entry, QUrl &proxy)
    {
        const auto text = m_reader.readString(entry);
        if (!text)
            return;
        const QUrl url(*text, QUrl::StrictMode);
        if (!url.isValid() || !proxySchemes.contains(url.scheme()) || url.host().isEmpty() ||
            !(url.path().isEmpty() || url.path() == u"/"_s) || url.hasQuery()) {
            m_reader.reportValue(entry, u"`proxy` must be a proxy URL such as "
                                        u"`http://proxy.example:3128` (schemes: %1), got %2"_s.arg(
                                            proxySchemes.join(u", "_s), describe(entry.value)));
            return;
        }
        proxy = url;
    }

    // `auto` or `libcurl`: an operator's way back to libcurl for a provider whose plain-http
    // server the gateway's own client does not get along with.
    void readTransport(const MapEntry &entry, bool &callsOverLibcurl)
    {
        const auto text = m_reader.readString(entry);
        if (!text)
            return;
        if (*text != u"auto"_s && *text != u"libcurl"_s) {
            m_reader.reportValue(
                entry, u"`transport` must be `auto` (plain http without a proxy "
                       u"over the gateway's own HTTP/1.1 client, the rest over "
                       u"libcurl) or `libcurl` (every call), got %1"_s.arg(describe(entry.value)));
            return;
        }
        callsOverLibcurl = *text == u"libcurl"_s;
    }

    // A PEM file that exists and can be read now: a typo shows at load, not as a TLS error on
    // the first call. A relative path is taken from the config file's folder.
    void readCaFile(const MapEntry &entry, QString &caFile)
    {
        const auto text = m_reader.readString(entry);
        if (!text)
            return;
        if (text->isEmpty()) {
            m_reader.reportValue(entry, u"`ca_file` must name a PEM file; leave it out to trust "
                                        u"the system's CAs"_s);
            return;
        }
        QString path = *text;
        if (QFileInfo(path).isRelative() && !m_reader.sourceName().startsWith(u':'))
            path = QFileInfo(m_reader.sourceName()).absoluteDir().filePath(path);
        path = QDir::cleanPath(path);
        const QFileInfo info(path);
        if (!info.exists()) {
            m_reader.reportValue(entry, u"`ca_file` %1 does not exist"_s.arg(path));
            return;
        }
        if (!info.isFile()) {
            m_reader.reportValue(entry, u"`ca_file` %1 is not a file"_s.arg(path));
            return;
        }
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly)) {
            m_reader.reportValue(
                entry, u"`ca_file` %1 cannot be read: %2"_s.arg(path, file.errorString()));
            return;
        }
        if (!file.readAll().contains("-----BEGIN CERTIFICATE-----")) {
            m_reader.reportValue(entry, u"`ca_file` %1 holds no PEM certificate (a `-----BEGIN "
                                        u"CERTIFICATE-----` block)"_s.arg(path));
            return;
        }
        caFile = path;
    }

private:
    // Why a header name is not the config's to set, or an empty string when it is.
    QString ownerOf(const QString &name) const
    {
        const QString lower = name.toLower();
        if (reservedHeaders.contains(lower) || lower.startsWith(gatewayHeaderPrefix))
            return u"Switchyard writes it itself"_s;
        if (m_kind == ProviderKind::Anthropic && anthropicHeaders.contains(lower))
            return u"an anthropic provider sets it with `%1`"_s.arg(anthropicHeaders.value(lower));
        return {};
    }

    // Text written in the file, or `{env: NAME}`: the value of an environment variable, read
    // now and never shown, like the key of `api_key_env`.
    std::optional<ConfiguredValue> readValue(const YAML::Node &key, const YAML::Node &value,
                                             const QString &what)
    {
        ConfiguredValue configured;
        if (value.IsScalar()) {
            configured.value = fromYaml(value.Scalar()).toUtf8();
            if (!isOneLine(configured.value)) {
                m_reader.report(value.Mark(), u"%1 must fit on one line"_s.arg(what));
                return std::nullopt;
            }
            return configured;
        }
        if (!value.IsMap()) {
            m_reader.report(
                value.IsNull() ? key.Mark() : value.Mark(),
                u"%1 must have a text value or `{env: NAME}`, got %2"_s.arg(what, describe(value)));
            return std::nullopt;
        }
        const KeyedMap keys = m_reader.readKeys(value, environmentValueKeys);
        const MapEntry *env = keys.find("env"_L1);
        if (!env) {
            m_reader.reportMissing(value, what, "env"_L1);
            return std::nullopt;
        }
        const auto name = m_reader.readString(*env);
        if (!name)
            return std::nullopt;
        if (!isEnvironmentName(*name)) {
            // As with api_key_env, the value is left out: it may be the secret itself.
            m_reader.reportValue(*env, u"`env` must name an environment variable (letters, "
                                       u"digits and `_`), not hold the value itself"_s);
            return std::nullopt;
        }
        configured.environmentVariable = *name;
        if (!m_kind)
            return configured; // the entry is broken anyway: no follow-on errors
        const std::optional<QByteArray> resolved = m_environment(*name);
        if (!resolved) {
            m_reader.reportValue(*env, u"environment variable %1 is not set"_s.arg(*name));
            return std::nullopt;
        }
        if (!isOneLine(*resolved)) {
            m_reader.reportValue(*env, u"environment variable %1 holds a line break; %2 must fit "
                                       u"on one line"_s.arg(*name, what));
            return std::nullopt;
        }
        configured.value = *resolved;
        return configured;
    }

    YamlReader &m_reader;
    const EnvironmentLookup &m_environment;
    std::optional<ProviderKind> m_kind;
};

// The entries of a mapped provider's `mapping:` that older files use for what now lives on the
// provider. Unknown and repeated keys there are reported by the mapping's own check.
QList<MapEntry> olderMappingEntries(const KeyedMap &keys)
{
    QList<MapEntry> entries;
    const MapEntry *mapping = keys.find("mapping"_L1);
    if (!mapping || !mapping->value.IsMap())
        return entries;
    for (auto it = mapping->value.begin(); it != mapping->value.end(); ++it) {
        if (!it->first.IsScalar())
            continue;
        const QString name = fromYaml(it->first.Scalar());
        if (name == u"headers"_s || name == u"api_key_header"_s || name == u"api_key_prefix"_s) {
            const bool seen =
                std::any_of(entries.cbegin(), entries.cend(),
                            [&](const MapEntry &entry) { return entry.name == name; });
            if (!seen)
                entries.append({name, it->first, it->second});
        }
    }
    return entries;
}

} // namespace

QList<QLatin1StringView> providerCallKeys()
{
    return callKeys;
}

void readHeaderMap(YamlReader &reader, const EnvironmentLookup &environment, const MapEntry &entry,
                   QList<ConfiguredValue> &headers)
{
    // An openai provider's rules: the framing, body and tracing headers are Switchyard's own.
    CallChecker(reader, environment, ProviderKind::OpenAi).readHeaders(entry, headers);
}

void checkProviderCall(YamlReader &reader, const EnvironmentLookup &environment,
                       const KeyedMap &keys, std::optional<ProviderKind> kind,
                       ProviderConfig &provider)
{
    if (kind == ProviderKind::Simulated) {
        for (const MapEntry &entry : keys.entries) {
            if (callKeys.contains(entry.name))
                reader.report(entry.key.Mark(),
                              u"`%1` is not allowed for a simulated provider"_s.arg(entry.name));
        }
        return;
    }
    CallChecker checker(reader, environment, kind);
    if (const MapEntry *header = keys.find("api_key_header"_L1))
        provider.apiKeyHeader = checker.readKeyHeader(*header, u"api_key_header"_s);
    if (const MapEntry *prefix = keys.find("api_key_prefix"_L1))
        provider.apiKeyPrefix = checker.readKeyPrefix(*prefix, u"api_key_prefix"_s);
    if (const MapEntry *headers = keys.find("headers"_L1))
        checker.readHeaders(*headers, provider.headers);
    if (const MapEntry *query = keys.find("query"_L1))
        checker.readQuery(*query, provider.query);
    if (const MapEntry *proxy = keys.find("proxy"_L1))
        checker.readProxy(*proxy, provider.proxy);
    if (const MapEntry *caFile = keys.find("ca_file"_L1))
        checker.readCaFile(*caFile, provider.caFile);
    if (const MapEntry *transport = keys.find("transport"_L1))
        checker.readTransport(*transport, provider.callsOverLibcurl);

    if (kind == ProviderKind::Mapped) {
        // `mapping.headers`, `mapping.api_key_header` and `mapping.api_key_prefix` came first
        // and still work; with the older spelling the prefix keeps its older default, "Bearer ".
        bool olderKeyHeader = false;
        bool olderPrefix = false;
        for (const MapEntry &entry : olderMappingEntries(keys)) {
            const QString shown = u"mapping."_s + entry.name;
            const bool alsoOnProvider =
                std::any_of(keys.entries.cbegin(), keys.entries.cend(),
                            [&](const MapEntry &own) { return own.name == entry.name; });
            if (alsoOnProvider) {
                reader.report(entry.key.Mark(), u"`%1` repeats the provider's own `%2`; keep the "
                                                u"provider's"_s.arg(shown, entry.name));
                continue;
            }
            if (entry.name == u"headers"_s) {
                checker.readHeaders(entry, provider.headers);
            } else if (entry.name == u"api_key_header"_s) {
                olderKeyHeader = true;
                provider.apiKeyHeader = checker.readKeyHeader(entry, shown);
            } else {
                olderPrefix = true;
                provider.apiKeyPrefix = checker.readKeyPrefix(entry, shown);
            }
        }
        if (olderKeyHeader && !olderPrefix && !keys.find("api_key_prefix"_L1))
            provider.apiKeyPrefix = QByteArray("Bearer ");
    }

    // The key and a configured header in one header would send it twice.
    if (const MapEntry *apiKeyEnv = keys.find("api_key_env"_L1); apiKeyEnv && kind) {
        const QByteArray keyHeader = provider.keyHeaderName();
        for (const ConfiguredValue &header : std::as_const(provider.headers)) {
            if (header.name.compare(keyHeader, Qt::CaseInsensitive) == 0) {
                reader.reportValue(*apiKeyEnv,
                                   u"the key from `api_key_env` goes in header `%1`, which "
                                   u"`headers` sets too; remove one, or move the key with "
                                   u"`api_key_header`"_s.arg(QString::fromLatin1(keyHeader)));
                break;
            }
        }
    }
}

} // namespace switchyard::config
