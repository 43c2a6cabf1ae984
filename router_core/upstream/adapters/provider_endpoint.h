#pragma once

#include "upstream/upstream_transport.h"

#include <QString>
#include <QStringView>
#include <QUrl>

namespace switchyard::config {
struct ProviderConfig;
}

// Where and how every call to a provider goes, whatever the operation and the kind: one place
// for the URL, the key and configured headers, the query, the proxy and the CA file, so each
// adapter (and the health prober) builds only its body (docs/adapters.md, "Calling a provider").
namespace switchyard::upstream::adapters {

// The URL of `operationPath` at the provider ("chat/completions", "messages", "responses",
// "embeddings", "completions", or a mapped provider's path; empty for base_url itself): base_url
// with `{model}` replaced by `upstreamModel` (percent-encoded, so a `/` in it stays one path
// segment), the path appended, and the provider's configured query added.
QUrl providerUrl(const config::ProviderConfig &provider, QStringView operationPath,
                 const QString &upstreamModel);

// The headers every call to this provider carries: its key (when it has one) in its configured
// header after its prefix, then its configured headers, values from the environment resolved
// when the config loaded.
HeaderList providerHeaders(const config::ProviderConfig &provider);

// A body passed through as the client sent it: the same bytes (shared, not copied) unless the
// provider knows the model by another name, then only the model's JSON token is replaced.
QByteArray withUpstreamModel(const QByteArray &body, const QString &bodyModel,
                             const QString &upstreamModel);

// The provider's proxy and CA file onto the request.
void applyConnectionOptions(const config::ProviderConfig &provider, UpstreamRequest &request);

// `url` as traces and logs may show it: without user info, and with the values of query
// parameters taken from the environment replaced by `REDACTED`.
QString displayUrl(const config::ProviderConfig &provider, const QUrl &url);

// `text` from the provider (an error's message) with every secret the provider is called with
// replaced by `REDACTED`: its key and the header and query values taken from the environment, as
// sent and percent-encoded. Some providers repeat the request's headers or URL in their errors,
// and an error's message reaches the client, the trace and the log.
QString withoutSecrets(const config::ProviderConfig &provider, QString text);

} // namespace switchyard::upstream::adapters
