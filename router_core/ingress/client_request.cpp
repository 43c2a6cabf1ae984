#include "ingress/client_request.h"

#include "config/config.h"
#include "routing/router.h"

#include <algorithm>

namespace switchyard::ingress {

using namespace Qt::StringLiterals;

namespace {

// A model asked for on an endpoint none of its providers serves it at: the client's mistake,
// named with what would work (OpenAI says much the same for a chat model on /v1/completions).
protocol::ApiError endpointNotServed(const QString &model, protocol::Operation operation,
                                     protocol::Operations served)
{
    protocol::ApiError error = protocol::ApiError::invalidRequest(
        u"The model `%1` is not served on %2; it is served on %3."_s.arg(
            model, protocol::operationPath(operation),
            protocol::operationPaths(served).join(u", "_s)),
        u"model"_s);
    error.code = u"model_not_supported_on_endpoint"_s;
    return error;
}

// The first reading, by protocol: the body to parse and route, and for a protocol providers
// may not speak, the client's own body beside it. `untranslatable` says what of a Messages
// request no chat provider can be given.
std::optional<protocol::ApiError> translate(const config::Config &config, ClientRequest &request,
                                            const QByteArray &body,
                                            std::optional<protocol::ApiError> &untranslatable)
{
    switch (request.operation) {
    case protocol::Operation::Responses: {
        auto converted = chatRequestFromResponses(body);
        if (const auto *error = std::get_if<protocol::ApiError>(&converted)) {
            // What translation cannot carry (previous_response_id, built-in tools...) a provider
            // that speaks the Responses API may still serve: only those are tried.
            std::optional<QByteArray> routable = chatBodyForNativeProviders(config, body);
            if (!routable)
                return *error;
            request.nativeOnly = true;
            request.nativeOnlyReason =
                u"only providers that speak the Responses API can serve this request: "_s +
                error->message;
            converted = ResponsesChatRequest{std::move(*routable), {}, {}};
        }
        request.responses = std::get<ResponsesChatRequest>(std::move(converted));
        request.chatBody = request.responses->chatBody;
        request.operationBody = body;
        return std::nullopt;
    }
    case protocol::Operation::Messages:
    case protocol::Operation::CountTokens: {
        auto converted = chatRequestFromMessages(body);
        if (const auto *error = std::get_if<protocol::ApiError>(&converted))
            return *error;
        // Taken out of the variant in place: a moved copy of the whole struct makes GCC's -O3
        // see its optional error as maybe uninitialized (a false positive that -Werror stops).
        auto &messages = std::get<MessagesChatRequest>(converted);
        request.chatBody = std::move(messages.chatBody);
        request.messagesIgnoredFields = std::move(messages.ignoredFields);
        request.operationBody = body;
        if (messages.untranslatable) // settled once the model is known
            untranslatable.emplace(std::move(*messages.untranslatable));
        return std::nullopt;
    }
    case protocol::Operation::Chat:
    case protocol::Operation::Embeddings:
    case protocol::Operation::Completions:
        request.chatBody = body;
        return std::nullopt;
    }
    return std::nullopt;
}

std::variant<protocol::ChatRequest, protocol::ApiError> parse(protocol::Operation operation,
                                                              const QByteArray &body)
{
    switch (operation) {
    case protocol::Operation::Embeddings:
        return protocol::parseEmbeddingsRequest(body);
    case protocol::Operation::Completions:
        return protocol::parseCompletionsRequest(body);
    default:
        return protocol::parseChatRequest(body);
    }
}

// What only an anthropic provider can serve (a token count, a server tool, a document block) is
// tried on those alone; a model without one refuses it, or for a token count, the gateway's own
// estimate answers.
std::optional<protocol::ApiError>
settleAnthropicOnly(const config::Config &config, ClientRequest &request,
                    const std::optional<protocol::ApiError> &untranslatable)
{
    if (request.operation != protocol::Operation::CountTokens && !untranslatable)
        return std::nullopt;
    if (anthropicProviderServes(config, request.chat.model)) {
        request.nativeOnly = true;
        if (untranslatable)
            request.nativeOnlyReason =
                u"only anthropic providers can serve this request: "_s + untranslatable->message;
        return std::nullopt;
    }
    if (untranslatable)
        return *untranslatable;
    request.answeredByEstimate = true;
    return std::nullopt;
}

} // namespace

bool anthropicProviderServes(const config::Config &config, const QString &model)
{
    return std::any_of(config.providers.cbegin(), config.providers.cend(),
                       [&model](const config::ProviderConfig &provider) {
                           const QString upstream = provider.upstreamModelFor(model);
                           return provider.kind == config::ProviderKind::Anthropic &&
                                  !upstream.isEmpty() &&
                                  provider.serves(upstream, protocol::Operation::Messages);
                       });
}

std::optional<protocol::ApiError>
readClientRequest(ClientRequest &request, protocol::Operation operation,
                  const QList<QPair<QByteArray, QByteArray>> &headers, const QByteArray &body,
                  const routing::RoutingTable &table)
{
    const config::Config &config = table.config();
    request.operation = operation;
    std::optional<protocol::ApiError> untranslatable;
    if (std::optional<protocol::ApiError> error = translate(config, request, body, untranslatable))
        return error;
    auto parsed = parse(operation, request.chatBody);
    if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
        return *error;
    request.chat = std::get<protocol::ChatRequest>(std::move(parsed));
    const std::optional<protocol::Operations> served =
        routing::Router::modelEndpoints(table, request.chat.model);
    if (served && !(*served & protocol::operationBit(protocol::endpointOf(operation))))
        return endpointNotServed(request.chat.model, operation, *served);
    // What only an anthropic provider can take needs a model the config knows; for any other
    // model (a typo, or one only a registered agent serves) routing would answer 404 anyway.
    if (!served && (operation == protocol::Operation::CountTokens || untranslatable))
        return protocol::ApiError::modelNotFound(request.chat.model);
    if (std::optional<protocol::ApiError> error =
            settleAnthropicOnly(config, request, untranslatable))
        return error;

    auto built = routing::buildRequestContext(headers, request.chat);
    if (const auto *error = std::get_if<protocol::ApiError>(&built))
        return *error;
    request.context = std::get<routing::RequestContext>(std::move(built));
    request.context.operation = operation;
    // The routing object is the gateway's: no provider sees it, in either protocol.
    request.chatBody = routing::forwardedBody(request.chat, request.chatBody);
    if (!request.operationBody.isEmpty())
        request.operationBody = routing::forwardedBody(request.chat, request.operationBody);
    else if (operation != protocol::Operation::Chat)
        request.operationBody = request.chatBody; // embeddings and completions have no chat form
    return std::nullopt;
}

} // namespace switchyard::ingress
