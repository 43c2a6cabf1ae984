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
// speaks them) or, for Responses, translated to chat.
enum class Operation : quint8 {
    Chat = 1,        // POST /v1/chat/completions (and Anthropic's /v1/messages, translated)
    Responses = 2,   // POST /v1/responses
    Embeddings = 4,  // POST /v1/embeddings
    Completions = 8, // POST /v1/completions, the legacy text completions
};

// A set of operations, as a model's `endpoints` in the config file names them.
using Operations = quint8;
constexpr Operations operationBit(Operation operation)
{
    return Operations(operation);
}
constexpr Operations kChatOperations =
    operationBit(Operation::Chat) | operationBit(Operation::Responses);

// The word the config file and /v1/models use: "chat", "responses", "embeddings", "completions".
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
