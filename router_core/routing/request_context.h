#pragma once

#include "protocol/chat_request.h"
#include "protocol/openai_error.h"
#include "protocol/operation.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QHash>
#include <QList>
#include <QPair>
#include <QString>
#include <chrono>
#include <optional>
#include <variant>

namespace switchyard::routing {

// Everything routing may look at, built once at ingress from the metadata headers, the optional
// `switchyard` object in the body and cheap features of the request (docs/architecture.md, "One
// request, end to end", step 1). A plain value: it is copied into the executor and into explain
// answers.
struct RequestContext {
    // Degradation ladder levels a request may allow (docs/resilience.md, "The degradation ladder").
    static constexpr int kPlannedTargetOnly = 0;
    static constexpr int kLighterModel = 1; // pro -> light failover counts as this level
    static constexpr int kRuleBasedAnswer = 2;
    static constexpr int kFailSafeMessage = 3;

    QByteArray requestId; // filled by the gateway from the trace; the canary key of last resort
    QString model;
    bool stream = false;
    // Set by the gateway from the path. Rules, tiers, the gearbox, canary splits and intents
    // choose between chat models; embeddings and legacy completions go by model alone.
    protocol::Operation operation = protocol::Operation::Chat;

    // x-switchyard-* headers; empty strings when absent.
    QString tenant;
    QString user;
    QString session;
    QString priority;    // "low", "normal" or "high"
    QString tierHint;    // "light" or "pro"
    QString task;        // e.g. "code_gen", "chat"
    QString sensitivity; // e.g. "high"
    QString intent;      // "domain/action/attribute": routes to a registered agent
    std::optional<double> maxCost;
    std::optional<std::chrono::milliseconds> timeoutBudget;
    int fallbackLevel = kFailSafeMessage; // how far down the ladder this request may go, 0..3
    int depth = 0;                        // loop guard: hops through Switchyards so far

    // The body's `switchyard` object, as meta.<key> -> value text (numbers and booleans as JSON
    // writes them). The object itself is stripped before the body is forwarded.
    QHash<QString, QString> meta;
    // The header that carried the client's Switchyard key ("Authorization" or "x-api-key") when
    // keys are required; never forwarded to a provider. Set by the gateway; empty otherwise.
    QByteArray switchyardKeyHeader;
    // Every request header as received, names as sent; `header.<name>` conditions read these.
    QList<QPair<QByteArray, QByteArray>> headers;

    // Cheap features of the request, for the gearbox.
    int estimatedInputTokens = 0;
    int messageCount = 0;
    int toolCount = 0;
    int codeBlockCount = 0;    // fenced ``` blocks in message text
    qint64 characterCount = 0; // characters of message text

    // A header's value by case-insensitive name; empty when absent.
    QByteArray header(QByteArrayView name) const;
};

// Builds the context for one chat request from its headers and its already validated body
// (parseChatRequest reads the `switchyard` object and the features in the same pass). A metadata
// header with an invalid value gives a 400 error whose `param` names the header. The request id
// is the client's x-request-id when acceptedRequestId takes it, else empty for the caller to fill.
std::variant<RequestContext, protocol::ApiError>
buildRequestContext(const QList<QPair<QByteArray, QByteArray>> &headers,
                    const protocol::ChatRequest &chat);

// The client's x-request-id when it is a sane token (at most 128 letters, digits, `-`, `_`, `.`,
// `:`), else empty: a hostile header can never break the response headers it is echoed into.
QByteArray acceptedRequestId(const QList<QPair<QByteArray, QByteArray>> &headers);

// The body to send upstream: `body` without its top-level `switchyard` object, or `body` itself
// when it has none (the common case costs nothing).
QByteArray forwardedBody(const protocol::ChatRequest &chat, const QByteArray &body);

} // namespace switchyard::routing
