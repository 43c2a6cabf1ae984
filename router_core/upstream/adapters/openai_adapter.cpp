#include "upstream/adapters/openai_adapter.h"

#include "config/config.h"
#include "protocol/byte_search.h"
#include "upstream/adapters/provider_endpoint.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <simdjson.h>

namespace switchyard::upstream::adapters {

using namespace Qt::StringLiterals;
using namespace std::string_view_literals; // simdjson keys: no strlen per lookup

namespace {

qint64 integerOr(simdjson::dom::object object, std::string_view key, qint64 fallback)
{
    int64_t value = 0;
    return object[key].get_int64().get(value) == simdjson::SUCCESS ? qint64(value) : fallback;
}

// Reads `usage` from a completion or a chunk. Returns false when the text is not a JSON object.
bool readJsonObject(QByteArrayView json, Usage *usage)
{
    thread_local simdjson::dom::parser parser;
    const simdjson::padded_string padded(json.data(), size_t(json.size()));
    simdjson::dom::element root;
    if (parser.parse(padded).get(root) != simdjson::SUCCESS ||
        root.type() != simdjson::dom::element_type::OBJECT)
        return false;
    simdjson::dom::object counts;
    if (root["usage"sv].get_object().get(counts) == simdjson::SUCCESS) {
        usage->promptTokens = integerOr(counts, "prompt_tokens", -1);
        usage->completionTokens = integerOr(counts, "completion_tokens", -1);
        simdjson::dom::object details;
        if (counts["prompt_tokens_details"sv].get_object().get(details) == simdjson::SUCCESS)
            usage->cachedPromptTokens = integerOr(details, "cached_tokens", -1);
    }
    return true;
}

// The Responses API counts `input_tokens` and `output_tokens`, in a response object's `usage`.
void readResponsesUsage(simdjson::dom::object response, Usage *usage)
{
    simdjson::dom::object counts;
    if (response["usage"sv].get_object().get(counts) != simdjson::SUCCESS)
        return;
    usage->promptTokens = integerOr(counts, "input_tokens", -1);
    usage->completionTokens = integerOr(counts, "output_tokens", -1);
    simdjson::dom::object details;
    if (counts["input_tokens_details"sv].get_object().get(details) == simdjson::SUCCESS)
        usage->cachedPromptTokens = integerOr(details, "cached_tokens", -1);
}

// A whole answer of an operation passed through: a JSON object, with its usage in the
// operation's own words. Returns false when the text is not a JSON object.
bool readPassedThroughAnswer(protocol::Operation operation, QByteArrayView json, Usage *usage)
{
    if (operation != protocol::Operation::Responses)
        return readJsonObject(json, usage); // embeddings and completions count as chat does
    thread_local simdjson::dom::parser parser;
    const simdjson::padded_string padded(json.data(), size_t(json.size()));
    simdjson::dom::object root;
    if (parser.parse(padded).get_object().get(root) != simdjson::SUCCESS)
        return false;
    readResponsesUsage(root, usage);
    return true;
}

// A Responses API stream from a provider that speaks it: typed events relayed as they are. It is
// whole at its terminal event (response.completed, .incomplete or .failed: the last two are the
// provider's own answer, in the client's protocol, and pass as they are); an `error` event before
// it is the provider's failure.
class ResponsesStreamPassThrough final : public StreamTranslator {
public:
    explicit ResponsesStreamPassThrough(QString providerId) : m_providerId(std::move(providerId)) {}

    StreamOutput feed(const SseEvent &event) override
    {
        StreamOutput output;
        if (m_ended || event.data.isEmpty())
            return output;
        if (event.isDone()) { // not part of the API, but some compatible servers end with it
            m_ended = true;
            m_completed = m_sawTerminal;
            output.completed = m_completed;
            return output;
        }
        thread_local simdjson::dom::parser parser;
        const simdjson::padded_string padded(event.data.constData(), size_t(event.data.size()));
        simdjson::dom::object root;
        std::string_view type;
        if (parser.parse(padded).get_object().get(root) != simdjson::SUCCESS ||
            root["type"sv].get_string().get(type) != simdjson::SUCCESS) {
            m_ended = true;
            output.failure = StreamFailure{
                StreamFailure::Kind::Unusable,
                unusableAnswer(u"Provider `%1` sent a Responses API event that is not a JSON "
                               u"object with a `type`."_s.arg(m_providerId))};
            return output;
        }
        if (type == "error") {
            m_ended = true;
            output.failure =
                StreamFailure{StreamFailure::Kind::ProviderError,
                              providerStreamError(m_providerId, 502, eventErrorMessage(root))};
            return output;
        }
        output.events.append(event);
        if (type == "response.completed" || type == "response.incomplete" ||
            type == "response.failed") {
            simdjson::dom::object response;
            if (root["response"sv].get_object().get(response) == simdjson::SUCCESS)
                readResponsesUsage(response, &m_usage);
            m_sawTerminal = true;
            m_ended = true;
            m_completed = true;
            output.completed = true;
        }
        return output;
    }

    StreamOutput finish() override
    {
        StreamOutput output;
        output.completed = m_completed;
        m_ended = true;
        return output;
    }

    Usage usage() const override { return m_usage; }

private:
    static QString eventErrorMessage(simdjson::dom::object event)
    {
        std::string_view message;
        if (event["message"sv].get_string().get(message) == simdjson::SUCCESS ||
            event["error"sv]["message"sv].get_string().get(message) == simdjson::SUCCESS)
            return QString::fromUtf8(message.data(), qsizetype(message.size()));
        return u"no details given"_s;
    }

    QString m_providerId;
    Usage m_usage;
    bool m_ended = false;
    bool m_sawTerminal = false;
    bool m_completed = false;
};

bool startsWithErrorMember(QByteArrayView data)
{
    qsizetype at = 0;
    while (at < data.size() && (data[at] == ' ' || data[at] == '\t' || data[at] == '\n'))
        ++at;
    if (at >= data.size() || data[at] != '{')
        return false;
    ++at;
    while (at < data.size() && (data[at] == ' ' || data[at] == '\t' || data[at] == '\n'))
        ++at;
    return data.sliced(at).startsWith("\"error\"");
}

// Events go out as the provider wrote them; only [DONE], a provider's error event and usage are
// looked at.
class OpenAiStreamTranslator final : public StreamTranslator {
public:
    explicit OpenAiStreamTranslator(QString providerId) : m_providerId(std::move(providerId)) {}

    StreamOutput feed(const SseEvent &event) override
    {
        StreamOutput output;
        if (m_ended)
            return output;
        if (event.isDone()) {
            m_ended = true;
            m_completed = true;
            output.events.append(event);
            output.completed = true;
            return output;
        }
        if (startsWithErrorMember(event.data)) {
            // OpenAI-compatible servers report a failure mid-stream as an event; the client
            // gets it once, from the executor, in the gateway's own words.
            m_ended = true;
            output.failure = StreamFailure{
                StreamFailure::Kind::ProviderError,
                providerStreamError(m_providerId, 502, openAiErrorMessage(event.data))};
            return output;
        }
        // Only the chunk that carries usage is parsed; every other one is relayed untouched.
        if (protocol::containsBytes(event.data, "\"usage\"")) {
            Usage reported;
            if (readJsonObject(event.data, &reported) && reported.isKnown())
                m_usage = reported;
        }
        output.events.append(event);
        return output;
    }

    StreamOutput finish() override
    {
        StreamOutput output;
        output.completed = m_completed;
        m_ended = true;
        return output;
    }

    Usage usage() const override { return m_usage; }

private:
    QString m_providerId;
    Usage m_usage;
    bool m_ended = false; // [DONE] or a failure: nothing more is relayed
    bool m_completed = false;
};

} // namespace

QString openAiErrorMessage(QByteArrayView body)
{
    const QJsonDocument document = QJsonDocument::fromJson(body.toByteArray());
    const QJsonValue error = document.object().value(u"error"_s);
    if (error.isObject()) {
        const QString message = error.toObject().value(u"message"_s).toString();
        if (!message.isEmpty())
            return message;
    }
    if (error.isString() && !error.toString().isEmpty())
        return error.toString();
    const QString text =
        QString::fromUtf8(body.first(std::min<qsizetype>(body.size(), 200))).simplified();
    return text.isEmpty() ? u"no details given"_s : text;
}

std::variant<PreparedRequest, protocol::ApiError>
OpenAiAdapter::buildRequest(const AdapterRequest &request) const
{
    PreparedRequest prepared;
    UpstreamRequest &call = prepared.request;
    call.url =
        providerUrl(m_provider, protocol::upstreamPath(request.operation), request.upstreamModel);
    call.body = withUpstreamModel(request.openAiBody, request.bodyModel, request.upstreamModel);
    prepared.bodyIsOpenAiBodyRenamed = true;
    call.headers.reserve(2 + request.extraHeaders.size() + m_provider.headers.size() + 1);
    call.headers.emplaceBack("Content-Type"_ba, "application/json"_ba);
    call.headers.emplaceBack("Accept"_ba,
                             request.stream ? "text/event-stream"_ba : "application/json"_ba);
    call.headers.append(request.extraHeaders);
    call.headers.append(providerHeaders(m_provider));
    applyConnectionOptions(m_provider, call);

    AnswerShape &shape = prepared.shape;
    shape.operation = request.operation;
    shape.upstreamModel = request.upstreamModel;
    shape.answerId = "chatcmpl-" + request.requestId;
    shape.createdSecs = request.createdSecs;
    shape.clientStreams = request.stream;
    shape.upstreamStreams = request.stream;
    // The provider itself honours stream_options and functions: nothing to reshape.
    return prepared;
}

AnswerTranslation OpenAiAdapter::translateAnswer(const AnswerShape &shape,
                                                 const QByteArray &body) const
{
    AnswerTranslation translation;
    if (!readPassedThroughAnswer(shape.operation, body, &translation.usage)) {
        translation.kind = AnswerTranslation::Kind::Unusable;
        translation.error = unusableAnswer(
            u"Provider `%1` sent an answer that is not valid JSON."_s.arg(m_provider.id));
        return translation;
    }
    translation.openAiJson = body; // shared, not copied
    return translation;
}

std::unique_ptr<StreamTranslator> OpenAiAdapter::startStream(const AnswerShape &shape) const
{
    if (shape.operation == protocol::Operation::Responses)
        return std::make_unique<ResponsesStreamPassThrough>(m_provider.id);
    // Legacy completions stream as chat does: text_completion chunks ending with [DONE].
    return std::make_unique<OpenAiStreamTranslator>(m_provider.id);
}

QString OpenAiAdapter::streamEnd(const AnswerShape &shape) const
{
    return shape.operation == protocol::Operation::Responses ? u"`response.completed`"_s
                                                             : ProviderAdapter::streamEnd(shape);
}

protocol::ApiError OpenAiAdapter::translateError(int status, const HeaderList &headers,
                                                 QByteArrayView body) const
{
    QByteArray retryAfter;
    for (const auto &[name, value] : headers) {
        if (name == "retry-after")
            retryAfter = value;
    }
    return providerHttpError(m_provider.id, status, openAiErrorMessage(body), retryAfter);
}

} // namespace switchyard::upstream::adapters
