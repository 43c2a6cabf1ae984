#pragma once

#include "protocol/chat_request.h"
#include "protocol/openai_error.h"

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <optional>
#include <variant>

namespace switchyard::protocol {

// What a client asks the gateway to do. Chat is the executor's own protocol; the others are
// routed and executed the same way and reach a provider either passed through (a provider that
// speaks them) or, for Responses and Messages, translated to chat.
enum class Operation : quint8 {
    Chat = 1,        // POST /v1/chat/completions
    Responses = 2,   // POST /v1/responses
    Embeddings = 4,  // POST /v1/embeddings
    Completions = 8, // POST /v1/completions, the legacy text completions
    // Anthropic's Messages API: passed through to an anthropic provider, translated to chat for
    // every other kind. Not a name the config's `endpoints` takes: a model that serves chat
    // serves Messages (endpointOf).
    Messages = 16,    // POST /v1/messages
    CountTokens = 32, // POST /v1/messages/count_tokens: anthropic providers only
};

// A set of operations, as a model's `endpoints` in the config file names them.
using Operations = quint8;
constexpr Operations operationBit(Operation operation)
{
    return Operations(operation);
}
constexpr Operations kChatOperations =
    operationBit(Operation::Chat) | operationBit(Operation::Responses);

// The operation whose entry in a model's `endpoints` says whether the model serves `operation`:
// chat for Anthropic's Messages and its token count, the operation itself for the others.
constexpr Operation endpointOf(Operation operation)
{
    return operation == Operation::Messages || operation == Operation::CountTokens ? Operation::Chat
                                                                                   : operation;
}

// The word the config file and /v1/models use: "chat", "responses", "embeddings", "completions"
// ("messages" and "count_tokens" name the Anthropic operations in traces, never in the config).
QString operationName(Operation operation);
std::optional<Operation> operationFromName(QStringView name);
// The client's path: "/v1/chat/completions", "/v1/responses"...
QString operationPath(Operation operation);
std::optional<Operation> operationFromPath(QStringView path);
// The path below a provider's base URL: "chat/completions", "responses"...
QString upstreamPath(Operation operation);
// The names of every operation in `operations`, in the enum's order.
QStringList operationNames(Operations operations);
QStringList operationPaths(Operations operations);

// An embeddings or legacy completions request, checked for what the gateway relies on: a model
// to route by, the input it must carry, and the options it reads. The body itself is passed on
// (model renamed) to a provider that speaks the operation. The result fills the same
// ChatRequest a chat request does, so routing treats all alike: model, stream, input size.
std::variant<ChatRequest, ApiError> parseEmbeddingsRequest(const QByteArray &body);
std::variant<ChatRequest, ApiError> parseCompletionsRequest(const QByteArray &body);

} // namespace switchyard::protocol
