#pragma once

#include "ingress/anthropic_ingress.h"
#include "ingress/responses_ingress.h"
#include "protocol/chat_request.h"
#include "protocol/openai_error.h"
#include "protocol/operation.h"
#include "routing/request_context.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>
#include <optional>
#include <variant>

namespace switchyard::routing {
class RoutingTable;
}

namespace switchyard::ingress {

// One client request as the gateway reads it, whatever protocol it came in: what routing reads
// and what the execution needs. Live traffic, the admin API's explain and the console's dry run
// all read a request through readClientRequest, so they cannot disagree about it.
struct ClientRequest {
    protocol::Operation operation = protocol::Operation::Chat;
    // Model, stream and the features routing reads: of the chat translation for the Responses
    // API and Messages, of the operation's own body for embeddings and completions.
    protocol::ChatRequest chat;
    // What a provider that does not speak the client's protocol gets (the chat translation), or
    // for chat, embeddings and completions, the client's body; without the routing object.
    QByteArray chatBody;
    // The client's own body for a provider that speaks its protocol, without the routing
    // object: for embeddings and completions, which have no chat form, chatBody itself; empty
    // for chat.
    QByteArray operationBody;
    // From the headers and the body. The caller fills the request id when the client gave none,
    // and the tenant when a key says it.
    routing::RequestContext context;
    // Only providers that speak the client's protocol can take it: it uses what translation
    // cannot carry (`nativeOnlyReason` says what, for the trace).
    bool nativeOnly = false;
    QString nativeOnlyReason;
    // count_tokens for a model no anthropic provider serves: the gateway's estimate answers.
    bool answeredByEstimate = false;
    // A Responses request's echo and ignored fields, for the channel that answers it.
    std::optional<ResponsesChatRequest> responses;
    // The Messages fields the chat translation does not apply, for x-switchyard-ignored-fields.
    QStringList messagesIgnoredFields;
};

// Reads a client's request to `operation`'s endpoint into `request` (the protocol follows from
// the operation: Messages and count_tokens are Anthropic's, the others OpenAI's): translates it
// to chat where providers may need that, parses it, checks its model serves the endpoint, and
// builds its routing context. A refusal is the error the client gets, in the words its protocol
// uses for the field; what was read before it stays in `request` (the model, once parsed, for
// the trace of a refused request).
std::optional<protocol::ApiError>
readClientRequest(ClientRequest &request, protocol::Operation operation,
                  const QList<QPair<QByteArray, QByteArray>> &headers, const QByteArray &body,
                  const routing::RoutingTable &table);

// Whether a provider of kind anthropic serves `model`: what only such a provider can take (a
// token count, a server tool) may be tried.
bool anthropicProviderServes(const config::Config &config, const QString &model);

} // namespace switchyard::ingress
