#include "config/config.h"

#include <QRegularExpression>
#include <limits>

namespace switchyard::config {

QString ConfigError::toString() const
{
    // One multi-argument arg() call, so a "%1" inside a file name or message is never substituted.
    return QStringLiteral("%1:%2:%3: %4")
        .arg(where.file, QString::number(where.line), QString::number(where.column), message);
}

QString kindName(ProviderKind kind)
{
    switch (kind) {
    case ProviderKind::OpenAi:
        return QStringLiteral("openai");
    case ProviderKind::Anthropic:
        return QStringLiteral("anthropic");
    case ProviderKind::Mapped:
        return QStringLiteral("mapped");
    case ProviderKind::Simulated:
        break;
    }
    return QStringLiteral("simulated");
}

QString fallbackErrorName(FallbackError error)
{
    switch (error) {
    case FallbackError::ContextLengthExceeded:
        return QStringLiteral("context_length_exceeded");
    case FallbackError::ContentFiltered:
        break;
    }
    return QStringLiteral("content_filtered");
}

std::optional<FallbackError> fallbackErrorFromName(QStringView name)
{
    for (const FallbackError error :
         {FallbackError::ContextLengthExceeded, FallbackError::ContentFiltered}) {
        if (name == fallbackErrorName(error))
            return error;
    }
    return std::nullopt;
}

QString ProviderConfig::upstreamModelFor(const QString &publicName) const
{
    for (const ModelRoute &route : models) {
        if (route.publicName == publicName)
            return route.upstreamName;
    }
    return {};
}

const ModelRoute *ProviderConfig::modelByUpstreamName(const QString &upstreamName) const
{
    for (const ModelRoute &route : models) {
        if (route.upstreamName == upstreamName)
            return &route;
    }
    return nullptr;
}

bool ProviderConfig::serves(const QString &upstreamName, protocol::Operation operation) const
{
    // Anthropic's token count has no chat counterpart: only an anthropic provider answers it.
    if (operation == protocol::Operation::CountTokens && kind != ProviderKind::Anthropic)
        return false;
    const ModelRoute *route = modelByUpstreamName(upstreamName);
    if (!route) // an agent registered at runtime, or a model only a rule names: chat only
        return operation == protocol::Operation::Chat ||
               operation == protocol::Operation::Messages ||
               (operation == protocol::Operation::Responses && !speaksResponses);
    if (!route->serves(protocol::endpointOf(operation)))
        return false;
    // The Responses API reaches a provider that does not speak it as chat completions.
    if (operation == protocol::Operation::Responses && !speaksResponses)
        return route->serves(protocol::Operation::Chat);
    return true;
}

bool ProviderConfig::speaksNatively(protocol::Operation operation) const
{
    switch (operation) {
    case protocol::Operation::Chat:
        return kind != ProviderKind::Anthropic && kind != ProviderKind::Mapped;
    case protocol::Operation::Responses:
        return speaksResponses;
    case protocol::Operation::Messages:
    case protocol::Operation::CountTokens:
        return kind == ProviderKind::Anthropic;
    case protocol::Operation::Embeddings:
    case protocol::Operation::Completions:
        return true;
    }
    return false;
}

bool ProviderConfig::continuesAnswers() const
{
    if (kind == ProviderKind::Mapped)
        return false;
    // Only the simulator is known to: an openai-compatible server may or may not read vLLM's
    // continue_final_message, and not every Anthropic model takes a prefilled answer (newer ones
    // refuse it with a 400). Their operator says so.
    return continuesAnswersSetting.value_or(kind == ProviderKind::Simulated);
}

QByteArray ProviderConfig::keyHeaderName() const
{
    if (apiKeyHeader)
        return *apiKeyHeader;
    return kind == ProviderKind::Anthropic ? QByteArray("x-api-key") : QByteArray("Authorization");
}

QByteArray ProviderConfig::keyPrefix() const
{
    if (apiKeyPrefix)
        return *apiKeyPrefix;
    return keyHeaderName().compare("Authorization", Qt::CaseInsensitive) == 0
               ? QByteArray("Bearer ")
               : QByteArray();
}

const ProviderConfig *Config::provider(const QString &id) const
{
    for (const ProviderConfig &candidate : providers) {
        if (candidate.id == id)
            return &candidate;
    }
    return nullptr;
}

QString formatListenAddress(const QString &host, quint16 port)
{
    return (host.contains(QLatin1Char(':')) ? QStringLiteral("[%1]:%2") : QStringLiteral("%1:%2"))
        .arg(host)
        .arg(port);
}

std::optional<ListenAddress> parseListenAddress(const QString &text, ListenAddressError *error)
{
    static const QRegularExpression pattern(
        QStringLiteral(R"(^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9][A-Za-z0-9.-]*)):(\d+)$)"));
    const auto fail = [error](ListenAddressError why) {
        if (error)
            *error = why;
        return std::nullopt;
    };
    const QRegularExpressionMatch match = pattern.match(text);
    if (!match.hasMatch())
        return fail(ListenAddressError::NotHostPort);
    bool parsed = false;
    const qint64 port = match.captured(3).toLongLong(&parsed);
    if (!parsed || port > std::numeric_limits<quint16>::max())
        return fail(ListenAddressError::PortOutOfRange);
    if (error)
        *error = ListenAddressError::None;
    return ListenAddress{match.hasCaptured(1) ? match.captured(1) : match.captured(2),
                         quint16(port)};
}

} // namespace switchyard::config
