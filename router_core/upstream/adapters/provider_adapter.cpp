#include "upstream/adapters/provider_adapter.h"

#include "config/config.h"
#include "upstream/adapters/anthropic_adapter.h"
#include "upstream/adapters/mapped_adapter.h"
#include "upstream/adapters/openai_adapter.h"
#include "upstream/adapters/openai_shapes.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::upstream::adapters {

using namespace Qt::StringLiterals;

std::unique_ptr<ProviderAdapter> adapterFor(const config::ProviderConfig &provider)
{
    switch (provider.kind) {
    case config::ProviderKind::Anthropic:
        return std::make_unique<AnthropicAdapter>(provider);
    case config::ProviderKind::Mapped:
        return std::make_unique<MappedAdapter>(provider);
    case config::ProviderKind::OpenAi:
    case config::ProviderKind::Simulated:
        break;
    }
    return std::make_unique<OpenAiAdapter>(provider);
}

ContinuationBody continuationBody(const config::ProviderConfig &provider,
                                  const QByteArray &chatBody, const QString &partial)
{
    QJsonObject request = QJsonDocument::fromJson(chatBody).object();
    ContinuationBody continuation;
    QString text = partial;
    if (provider.kind == config::ProviderKind::Anthropic) {
        qsizetype end = text.size();
        while (end > 0 && text.at(end - 1).isSpace())
            --end;
        continuation.trimmedTail = end < text.size();
        text.truncate(end);
    }
    QJsonArray messages = request.value(u"messages"_s).toArray();
    messages.append(QJsonObject{{u"role"_s, u"assistant"_s}, {u"content"_s, text}});
    request.insert(u"messages"_s, messages);
    if (provider.kind == config::ProviderKind::OpenAi) {
        request.insert(u"continue_final_message"_s, true);
        request.insert(u"add_generation_prompt"_s, false);
    }
    continuation.body = QJsonDocument(request).toJson(QJsonDocument::Compact);
    return continuation;
}

protocol::ApiError providerHttpError(const QString &providerId, int status, const QString &detail,
                                     const QByteArray &retryAfter)
{
    protocol::ApiError error;
    error.param = QString();
    switch (status) {
    case 400:
    case 401:
    case 403:
    case 404:
    case 413:
    case 422:
        // The request's own fault: the client learns what the provider said; no retry helps.
        error.status = status;
        error.message = u"Provider `%1` rejected the request (HTTP %2): %3"_s.arg(
            providerId, QString::number(status), detail);
        error.type =
            status == 401 || status == 403 ? u"authentication_error"_s : u"invalid_request_error"_s;
        error.code = u"upstream_rejected"_s;
        return error;
    case 429:
        error.status = 429;
        error.message = u"Provider `%1` is rate limiting requests: %2"_s.arg(providerId, detail);
        error.type = u"rate_limit_error"_s;
        error.code = u"upstream_rate_limited"_s;
        error.retryAfter = retryAfter;
        return error;
    case 503:
    case 504:
    case 529:
        // All mean something to a client (come back later, too slow); 529 is Anthropic's
        // "overloaded", which OpenAI clients know as 503.
        error.status = status == 529 ? 503 : status;
        error.retryAfter = retryAfter;
        break;
    default:
        error.status = 502;
        break;
    }
    error.message =
        u"Provider `%1` failed with HTTP %2: %3"_s.arg(providerId, QString::number(status), detail);
    error.type = u"upstream_error"_s;
    error.code = u"upstream_error"_s;
    return error;
}

protocol::ApiError providerStreamError(const QString &providerId, int status, const QString &detail)
{
    protocol::ApiError error = providerHttpError(providerId, status, detail, {});
    error.message = u"Provider `%1` reported an error in the stream: %2"_s.arg(providerId, detail);
    return error;
}

protocol::ApiError unusableAnswer(const QString &message)
{
    return protocol::ApiError{502, message, u"upstream_error"_s, {}, u"invalid_upstream_response"_s,
                              {}};
}

QList<SseEvent> completionAsChunks(const AnswerShape &shape, QByteArrayView completionJson)
{
    const QJsonObject completion = QJsonDocument::fromJson(completionJson.toByteArray()).object();
    ChunkWriter writer(shape);
    writer.setIdentity(completion.value(u"id"_s).toString(),
                       completion.value(u"model"_s).toString());
    const QJsonObject choice = completion.value(u"choices"_s).toArray().at(0).toObject();
    const QJsonObject message = choice.value(u"message"_s).toObject();

    QList<SseEvent> events{writer.role()};
    const QString text = message.value(u"content"_s).toString();
    if (!text.isEmpty())
        events.append(writer.content(text));
    QJsonArray calls = message.value(u"tool_calls"_s).toArray();
    if (calls.isEmpty() && message.value(u"function_call"_s).isObject())
        calls.append(QJsonObject{{u"function"_s, message.value(u"function_call"_s)}});
    int index = 0;
    for (const QJsonValue &call : std::as_const(calls)) {
        const QJsonObject function = call.toObject().value(u"function"_s).toObject();
        events.append(writer.toolCallStart(index, call.toObject().value(u"id"_s).toString(),
                                           function.value(u"name"_s).toString()));
        const QString arguments = function.value(u"arguments"_s).toString();
        if (!arguments.isEmpty())
            events.append(writer.toolCallArguments(index, arguments));
        ++index;
    }
    QString finishReason = choice.value(u"finish_reason"_s).toString();
    if (finishReason == u"function_call"_s)
        finishReason = u"tool_calls"_s; // the writer names it again for legacy clients
    events.append(writer.finish(finishReason));
    if (shape.includeUsage && completion.value(u"usage"_s).isObject())
        events.append(writer.usage(usageFromOpenAi(completion.value(u"usage"_s).toObject())));
    events.append(ChunkWriter::done());
    return events;
}

} // namespace switchyard::upstream::adapters
