#include "resilience/error_fallback.h"

#include "protocol/byte_search.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::resilience {

using namespace Qt::StringLiterals;
using config::FallbackError;

namespace {

// Error codes and types that say it outright. OpenAI and Azure: `context_length_exceeded`;
// llama.cpp's server: `exceed_context_size_error`. Azure's filter: `content_filter` with
// `innererror.code` ResponsibleAIPolicyViolation; OpenAI's safety system:
// `content_policy_violation`.
const QLatin1StringView kContextCodes[] = {"context_length_exceeded"_L1,
                                           "exceed_context_size_error"_L1};
const QLatin1StringView kFilterCodes[] = {"content_filter"_L1, "content_filtered"_L1,
                                          "content_policy_violation"_L1,
                                          "responsibleaipolicyviolation"_L1};

// What the messages say, lower-cased, from the providers' own answers:
//  - OpenAI, vLLM, Mistral: "This model's maximum context length is 8192 tokens. However, your
//    messages resulted in 9000 tokens..."; "... too large for model with 32768 maximum context
//    length"
//  - OpenAI's Responses API: "Your input exceeds the context window of this model."
//  - Anthropic: "prompt is too long: 210000 tokens > 200000 maximum"
//  - llama.cpp: "the request exceeds the available context size, try increasing it"
//  - Ollama: "input length exceeds the context length"
//  - Gemini's OpenAI endpoint: "The input token count (1200000) exceeds the maximum number of
//    tokens allowed (1048576)."
//  - Bedrock: "Input is too long for requested model."
const QLatin1StringView kContextWords[] = {
    "maximum context length"_L1,     "context length exceeded"_L1,
    "context_length_exceeded"_L1,    "exceeds the context window"_L1,
    "prompt is too long"_L1,         "exceeds the available context size"_L1,
    "exceeds the context length"_L1, "exceeds the maximum number of tokens"_L1,
    "input is too long"_L1,
};
//  - Azure: "The response was filtered due to the prompt triggering Azure OpenAI's content
//    management policy."
//  - Anthropic: "Output blocked by content filtering policy"
//  - OpenAI: "Your request was rejected as a result of our safety system."
const QLatin1StringView kFilterWords[] = {
    "content management policy"_L1,
    "content filtering policy"_L1,
    "rejected as a result of our safety system"_L1,
    "content_policy_violation"_L1,
};

template <std::size_t N>
bool containsAny(const QString &text, const QLatin1StringView (&words)[N])
{
    for (QLatin1StringView word : words) {
        if (text.contains(word, Qt::CaseInsensitive))
            return true;
    }
    return false;
}

template <std::size_t N>
bool isOneOf(const QString &code, const QLatin1StringView (&codes)[N])
{
    for (QLatin1StringView known : codes) {
        if (code.compare(known, Qt::CaseInsensitive) == 0)
            return true;
    }
    return false;
}

// Which error the codes and messages say; codes first, as they are the providers' contract.
std::optional<FallbackError> byWords(const QStringList &codes, const QStringList &messages)
{
    for (const QString &code : codes) {
        if (isOneOf(code, kContextCodes))
            return FallbackError::ContextLengthExceeded;
        if (isOneOf(code, kFilterCodes))
            return FallbackError::ContentFiltered;
    }
    for (const QString &message : messages) {
        if (containsAny(message, kContextWords))
            return FallbackError::ContextLengthExceeded;
        if (containsAny(message, kFilterWords))
            return FallbackError::ContentFiltered;
    }
    return std::nullopt;
}

QString text(const QJsonValue &value)
{
    return value.isString() ? value.toString() : QString();
}

bool emptyText(const QJsonValue &value)
{
    return value.isUndefined() || value.isNull() ||
           (value.isString() && value.toString().isEmpty());
}

bool chatChoicesFilteredWithoutContent(const QJsonArray &choices, const QString &part)
{
    if (choices.isEmpty())
        return false;
    for (const QJsonValue &value : choices) {
        const QJsonObject choice = value.toObject();
        if (text(choice.value(u"finish_reason"_s)) != u"content_filter"_s)
            return false;
        const QJsonObject message = choice.value(part).toObject();
        for (auto field = message.begin(); field != message.end(); ++field) {
            if (field.key() == u"role"_s)
                continue;
            if (field.value().isArray() ? !field.value().toArray().isEmpty()
                                        : !emptyText(field.value()))
                return false; // content, tool_calls, function_call, refusal...
        }
    }
    return true;
}

bool anthropicContentEmpty(const QJsonArray &content)
{
    for (const QJsonValue &value : content) {
        const QJsonObject block = value.toObject();
        if (block.value(u"type"_s).toString() != u"text"_s || !emptyText(block.value(u"text"_s)))
            return false;
    }
    return true;
}

bool responsesOutputEmpty(const QJsonArray &output)
{
    for (const QJsonValue &item : output) {
        for (const QJsonValue &part : item.toObject().value(u"content"_s).toArray()) {
            if (!emptyText(part.toObject().value(u"text"_s)))
                return false;
        }
        if (item.toObject().value(u"type"_s).toString() != u"message"_s)
            return false; // a function call
    }
    return true;
}

} // namespace

std::optional<FallbackError> recognizeErrorAnswer(config::ProviderKind kind, int status,
                                                  QByteArrayView body)
{
    // 401 asks for credentials, 404 for another path, 408 and 429 for patience: none of them is
    // the model's limit, whatever words come with it. (Azure's filter answers 400; a 403 is read
    // for its words like any other 4xx.)
    if (status < 400 || status >= 500 || status == 401 || status == 404 || status == 408 ||
        status == 429)
        return std::nullopt;
    const QJsonDocument document = QJsonDocument::fromJson(body.toByteArray());
    const QJsonObject root = document.object();
    switch (kind) {
    case config::ProviderKind::Anthropic: {
        // {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too
        // long: 210000 tokens > 200000 maximum"}}
        const QJsonObject error = root.value(u"error"_s).toObject();
        if (text(error.value(u"type"_s)) != u"invalid_request_error"_s)
            return std::nullopt;
        return byWords({}, {text(error.value(u"message"_s))});
    }
    case config::ProviderKind::Mapped:
        // An agent's own JSON, in its own shape: its words are all there is.
        return byWords({}, {QString::fromUtf8(body.first(std::min<qsizetype>(body.size(), 4096)))});
    case config::ProviderKind::OpenAi:
    case config::ProviderKind::Simulated:
        break;
    }
    // {"error":{"message","type","param","code","innererror":{"code"}}}; vLLM before 0.6 put
    // the fields at the top ({"object":"error","message",...,"code":400}); Ollama answers
    // {"error":"message"}.
    const QJsonValue errorValue = root.value(u"error"_s);
    const QJsonObject error = errorValue.isObject() ? errorValue.toObject() : root;
    QStringList codes{text(error.value(u"code"_s)), text(error.value(u"type"_s)),
                      text(error.value(u"innererror"_s).toObject().value(u"code"_s))};
    QStringList messages{text(error.value(u"message"_s))};
    if (errorValue.isString())
        messages.append(errorValue.toString());
    if (document.isNull()) // not JSON: a proxy's or a server's plain text
        messages.append(QString::fromUtf8(body.first(std::min<qsizetype>(body.size(), 4096))));
    return byWords(codes, messages);
}

bool isFilteredWithoutContent(QByteArrayView answer)
{
    const QJsonObject root = QJsonDocument::fromJson(answer.toByteArray()).object();
    if (root.contains(u"choices"_s))
        return chatChoicesFilteredWithoutContent(root.value(u"choices"_s).toArray(), u"message"_s);
    if (text(root.value(u"type"_s)) == u"message"_s)
        return text(root.value(u"stop_reason"_s)) == u"refusal"_s &&
               anthropicContentEmpty(root.value(u"content"_s).toArray());
    if (text(root.value(u"object"_s)) == u"response"_s)
        return text(root.value(u"incomplete_details"_s).toObject().value(u"reason"_s)) ==
                   u"content_filter"_s &&
               responsesOutputEmpty(root.value(u"output"_s).toArray());
    return false;
}

bool mentionsContentFilter(QByteArrayView json)
{
    // Read for every answer, so searched with memmem (protocol::findBytes): three calls of
    // QByteArrayView::contains were 2.3 % of the engine thread's time in the non-streamed
    // benchmark's profile.
    const auto find = [json](qsizetype from, QByteArrayView needle) {
        return protocol::findBytes(json, needle, from);
    };
    if (json.isEmpty())
        return false;
    if (find(0, "content_filter") >= 0)
        return true;
    for (qsizetype at = find(0, "\"refusal\""); at >= 0; at = find(at + 1, "\"refusal\"")) {
        qsizetype before = at - 1;
        if (before > 0 && json[before] == ' ')
            --before;
        if (before >= 0 && json[before] == ':')
            return true;
    }
    return false;
}

FilterEventRole filterEventRole(const upstream::SseEvent &event)
{
    if (event.isDone())
        return FilterEventRole::Neutral;
    const QJsonObject data = QJsonDocument::fromJson(event.data).object();
    const QString type =
        event.event.isEmpty() ? text(data.value(u"type"_s)) : QString::fromUtf8(event.event);
    if (type.isEmpty()) {
        // A chat chunk: with no choices it only carries usage, or (Azure's first) the prompt's
        // filter results.
        const QJsonArray choices = data.value(u"choices"_s).toArray();
        if (choices.isEmpty())
            return data.contains(u"usage"_s) || data.contains(u"prompt_filter_results"_s)
                       ? FilterEventRole::Neutral
                       : FilterEventRole::Other;
        return chatChoicesFilteredWithoutContent(choices, u"delta"_s) ? FilterEventRole::FilteredEnd
                                                                      : FilterEventRole::Other;
    }
    if (type == u"ping"_s || type == u"message_stop"_s || type == u"content_block_stop"_s)
        return FilterEventRole::Neutral;
    if (type == u"message_delta"_s)
        return text(data.value(u"delta"_s).toObject().value(u"stop_reason"_s)) == u"refusal"_s
                   ? FilterEventRole::FilteredEnd
                   : FilterEventRole::Other;
    if (type == u"response.incomplete"_s) {
        const QJsonObject response = data.value(u"response"_s).toObject();
        return text(response.value(u"incomplete_details"_s).toObject().value(u"reason"_s)) ==
                           u"content_filter"_s &&
                       responsesOutputEmpty(response.value(u"output"_s).toArray())
                   ? FilterEventRole::FilteredEnd
                   : FilterEventRole::Other;
    }
    return FilterEventRole::Other;
}

} // namespace switchyard::resilience
