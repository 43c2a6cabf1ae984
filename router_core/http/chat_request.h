#pragma once

#include "http/openai_error.h"

#include <QByteArray>
#include <QString>
#include <variant>

namespace switchyard::http {

// What the gateway needs from a chat completion body, read with simdjson without building a DOM
// of Qt objects. The original bytes are forwarded untouched unless something must be rewritten.
struct ChatRequest {
    QString model;
    bool stream = false;
    int messageCount = 0;

    // Returns the body with the model replaced by `upstreamModel` (a JSON string is written).
    QByteArray withModel(const QByteArray &body, const QString &upstreamModel) const;
};

// Validates an OpenAI chat completion body. Errors name the offending field the way OpenAI does:
// "Invalid type for 'messages[1].content': expected ...".
std::variant<ChatRequest, ApiError> parseChatRequest(const QByteArray &body);

} // namespace switchyard::http
