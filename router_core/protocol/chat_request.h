#pragma once

#include "protocol/openai_error.h"

#include <QByteArray>
#include <QList>
#include <QPair>
#include <QString>
#include <variant>

namespace switchyard::protocol {

// What the gateway needs from a chat completion body, read with simdjson without building a DOM
// of Qt objects. The original bytes are forwarded untouched unless something must be rewritten.
struct ChatRequest {
    QString model;
    bool stream = false;
    int messageCount = 0;

    // Cheap features for routing, gathered in the same pass over the message text.
    int toolCount = 0;               // entries of `tools` (and the older `functions`)
    int codeBlockCount = 0;          // fenced ``` blocks in message text
    qint64 characterCount = 0;       // Unicode characters of message text
    qint64 estimatedInputTokens = 0; // see estimateTokens() in chat_request.cpp

    // The top-level `switchyard` object: routing metadata for the gateway, never for the
    // provider. Its scalar members as text, in body order; the object is stripped before
    // forwarding (withoutRoutingObject).
    bool hasRoutingObject = false;
    QList<QPair<QString, QString>> routingMetadata;

    // Returns the body with the model replaced by `upstreamModel` (a JSON string is written).
    QByteArray withModel(const QByteArray &body, const QString &upstreamModel) const;
    // Returns the body without its top-level `switchyard` member; every other byte is kept.
    QByteArray withoutRoutingObject(const QByteArray &body) const;
};

// Validates an OpenAI chat completion body. Errors name the offending field the way OpenAI does:
// "Invalid type for 'messages[1].content': expected ...".
std::variant<ChatRequest, ApiError> parseChatRequest(const QByteArray &body);

} // namespace switchyard::protocol
