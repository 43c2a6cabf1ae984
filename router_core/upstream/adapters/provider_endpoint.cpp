#include "upstream/adapters/provider_endpoint.h"

#include "config/config.h"
#include "protocol/chat_request.h"

#include <algorithm>
#include <array>

namespace switchyard::upstream::adapters {

using namespace Qt::StringLiterals;

namespace {

// `{` and `}` are not allowed in a URL path, so QUrl keeps a configured `{model}` encoded.
constexpr QLatin1StringView encodedModelPlaceholder = "%7Bmodel%7D"_L1;

QString encodedQueryItem(const config::ConfiguredValue &item)
{
    // Percent-encoded here rather than by QUrlQuery, which leaves `+` alone: a server reads a
    // bare `+` as a space, and base64 secrets are full of them.
    return QString::fromLatin1(QUrl::toPercentEncoding(QString::fromUtf8(item.name)) + '=' +
                               QUrl::toPercentEncoding(QString::fromUtf8(item.value)));
}

// The URLs built for providers, by what each is built from. Every attempt used to have QUrl
// parse, encode and print the same few URLs again: about 5 % of the engine's instructions for
// a plain request (callgrind). Per thread (adapters run on the engine thread, and in tests on
// any), bounded, and keyed by content: an applied config change is a new key, never a stale
// hit; the oldest entry makes way.
struct BuiltUrl {
    QUrl base;
    QList<config::ConfiguredValue> query;
    QString operationPath;
    QString upstreamModel;
    QUrl url;
    QString display; // displayUrl()'s text, made when first asked for
};

constexpr std::size_t kBuiltUrlsKept = 16;

struct BuiltUrls {
    std::array<BuiltUrl, kBuiltUrlsKept> entries;
    std::size_t next = 0;
};

thread_local BuiltUrls builtUrls;

QUrl buildProviderUrl(const config::ProviderConfig &provider, QStringView operationPath,
                      const QString &upstreamModel)
{
    QUrl url = provider.baseUrl;
    QString path = url.path(QUrl::FullyEncoded);
    if (path.contains(encodedModelPlaceholder))
        path.replace(encodedModelPlaceholder,
                     QString::fromLatin1(QUrl::toPercentEncoding(upstreamModel)));
    if (!operationPath.isEmpty()) {
        while (path.endsWith(u'/'))
            path.chop(1);
        if (!operationPath.startsWith(u'/'))
            path += u'/';
        // Characters a path may hold as they are stay so (`/v1/models/x:generate`); the rest,
        // `%` included, is encoded: configured paths are written decoded. The operations'
        // own paths ("chat/completions") need nothing, and every request takes one.
        const bool plain = std::all_of(operationPath.begin(), operationPath.end(), [](QChar c) {
            return (c >= u'a' && c <= u'z') || (c >= u'A' && c <= u'Z') ||
                   (c >= u'0' && c <= u'9') || c == u'/' || c == u'-' || c == u'_' || c == u'.';
        });
        if (plain)
            path += operationPath;
        else
            path += QString::fromLatin1(
                QUrl::toPercentEncoding(operationPath.toString(), "/:@!$&'()*+,;="));
    }
    url.setPath(path, QUrl::TolerantMode);
    if (!provider.query.isEmpty()) {
        QString query = url.query(QUrl::FullyEncoded);
        for (const config::ConfiguredValue &item : provider.query)
            query += (query.isEmpty() ? QString() : u"&"_s) + encodedQueryItem(item);
        url.setQuery(query, QUrl::TolerantMode);
    }
    return url;
}

QString buildDisplayUrl(const config::ProviderConfig &provider, const QUrl &url)
{
    QUrl shown = url.adjusted(QUrl::RemoveUserInfo);
    const bool hasSecret =
        std::any_of(provider.query.cbegin(), provider.query.cend(),
                    [](const config::ConfiguredValue &item) { return item.isSecret(); });
    if (hasSecret && shown.hasQuery()) {
        QStringList items = shown.query(QUrl::FullyEncoded).split(u'&');
        for (const config::ConfiguredValue &item : provider.query) {
            if (!item.isSecret())
                continue;
            const QString secret = encodedQueryItem(item);
            const QString name =
                QString::fromLatin1(QUrl::toPercentEncoding(QString::fromUtf8(item.name)));
            for (QString &written : items) {
                if (written == secret)
                    written = name + u"=REDACTED"_s;
            }
        }
        shown.setQuery(items.join(u'&'), QUrl::TolerantMode);
    }
    return shown.toString();
}

} // namespace

QUrl providerUrl(const config::ProviderConfig &provider, QStringView operationPath,
                 const QString &upstreamModel)
{
    for (const BuiltUrl &entry : builtUrls.entries) {
        if (!entry.url.isEmpty() && entry.operationPath == operationPath &&
            entry.upstreamModel == upstreamModel &&
            (sameUrlData(entry.base, provider.baseUrl) || entry.base == provider.baseUrl) &&
            entry.query == provider.query)
            return entry.url;
    }
    BuiltUrl &entry = builtUrls.entries[builtUrls.next];
    builtUrls.next = (builtUrls.next + 1) % kBuiltUrlsKept;
    entry = {provider.baseUrl,
             provider.query,
             operationPath.toString(),
             upstreamModel,
             buildProviderUrl(provider, operationPath, upstreamModel),
             QString()};
    return entry.url;
}

HeaderList providerHeaders(const config::ProviderConfig &provider)
{
    HeaderList headers;
    headers.reserve(provider.headers.size() + 1);
    if (!provider.apiKey.isEmpty())
        headers.append({provider.keyHeaderName(), provider.keyPrefix() + provider.apiKey});
    for (const config::ConfiguredValue &header : provider.headers)
        headers.append({header.name, header.value});
    return headers;
}

void applyConnectionOptions(const config::ProviderConfig &provider, UpstreamRequest &request)
{
    request.proxy = provider.proxy;
    request.caFile = provider.caFile;
    request.overLibcurl = provider.callsOverLibcurl;
}

QString displayUrl(const config::ProviderConfig &provider, const QUrl &url)
{
    // A URL providerUrl() built is found by its data; what it shows depends on which query
    // values are secret, so the query must be the one it was built with.
    for (BuiltUrl &entry : builtUrls.entries) {
        if (!entry.url.isEmpty() && sameUrlData(entry.url, url) && entry.query == provider.query) {
            if (entry.display.isNull())
                entry.display = buildDisplayUrl(provider, url);
            return entry.display;
        }
    }
    return buildDisplayUrl(provider, url);
}

QString withoutSecrets(const config::ProviderConfig &provider, QString text)
{
    const auto redact = [&text](const QByteArray &secret) {
        if (secret.isEmpty())
            return;
        const QString plain = QString::fromUtf8(secret);
        text.replace(plain, u"REDACTED"_s);
        // As the query sent it, and as a server that reads `+` as a space would repeat it.
        text.replace(QString::fromLatin1(QUrl::toPercentEncoding(plain)), u"REDACTED"_s);
        if (plain.contains(u'+'))
            text.replace(QString(plain).replace(u'+', u' '), u"REDACTED"_s);
    };
    redact(provider.apiKey);
    for (const config::ConfiguredValue &header : provider.headers) {
        if (header.isSecret())
            redact(header.value);
    }
    for (const config::ConfiguredValue &item : provider.query) {
        if (item.isSecret())
            redact(item.value);
    }
    return text;
}

QByteArray withUpstreamModel(const QByteArray &body, const QString &bodyModel,
                             const QString &upstreamModel)
{
    return upstreamModel == bodyModel ? body
                                      : protocol::ChatRequest().withModel(body, upstreamModel);
}

} // namespace switchyard::upstream::adapters
