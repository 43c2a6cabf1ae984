#include "upstream/adapters/mapped_adapter.h"

#include "config/config.h"
#include "upstream/adapters/openai_adapter.h"
#include "upstream/adapters/openai_shapes.h"
#include "upstream/adapters/provider_endpoint.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::upstream::adapters {

using namespace Qt::StringLiterals;

namespace {

using config::MappedUsagePaths;

// A JSON document of any kind (an agent may answer with a bare string), or nullopt.
std::optional<QJsonValue> parseJson(QByteArrayView text)
{
    // Wrapping in a list lets QJsonDocument, which wants an object or a list, read any value.
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson("[" + text.toByteArray() + "]", &error);
    if (error.error != QJsonParseError::NoError || document.array().size() != 1)
        return std::nullopt;
    return document.array().at(0);
}

QString describeJson(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Null:
        return u"null"_s;
    case QJsonValue::Bool:
        return u"a boolean"_s;
    case QJsonValue::Double:
        return u"a number"_s;
    case QJsonValue::Array:
        return u"a list"_s;
    case QJsonValue::Object:
        return u"an object"_s;
    case QJsonValue::String:
        return u"a string"_s;
    case QJsonValue::Undefined:
        break;
    }
    return u"nothing"_s;
}

// An error message found at `path`: text as is, anything else as compact JSON.
QString messageAt(const std::optional<json::JsonPath> &path, const QJsonValue &document)
{
    if (!path)
        return {};
    const std::optional<QJsonValue> found = path->find(document);
    if (!found || found->isNull())
        return {};
    if (found->isString())
        return found->toString();
    if (found->isObject() && found->toObject().value(u"message"_s).isString())
        return found->toObject().value(u"message"_s).toString();
    const QJsonDocument wrapped =
        found->isObject() ? QJsonDocument(found->toObject()) : QJsonDocument(QJsonArray{*found});
    return QString::fromUtf8(wrapped.toJson(QJsonDocument::Compact));
}

// Counts at the usage paths, kept over `known` where the document has none.
Usage usageAt(const MappedUsagePaths &paths, const QJsonValue &document, Usage known)
{
    const auto count = [&document](const std::optional<json::JsonPath> &path) -> qint64 {
        if (!path)
            return -1;
        const std::optional<QJsonValue> found = path->find(document);
        return found && found->isDouble() ? found->toInteger() : -1;
    };
    if (const qint64 prompt = count(paths.promptTokens); prompt >= 0)
        known.promptTokens = prompt;
    if (const qint64 completion = count(paths.completionTokens); completion >= 0)
        known.completionTokens = completion;
    return known;
}

bool isTruthy(const QJsonValue &value)
{
    switch (value.type()) {
    case QJsonValue::Bool:
        return value.toBool();
    case QJsonValue::Double:
        return value.toDouble() != 0.0;
    case QJsonValue::String:
        return !value.toString().isEmpty();
    case QJsonValue::Array:
    case QJsonValue::Object:
        return true;
    case QJsonValue::Null:
    case QJsonValue::Undefined:
        break;
    }
    return false;
}

bool namesWholeDocument(const json::JsonPath &path)
{
    return path.root() == json::JsonPath::Root::Document && path.steps().isEmpty();
}

class MappedStreamTranslator final : public StreamTranslator {
public:
    MappedStreamTranslator(const config::ProviderConfig &provider, const AnswerShape &shape)
        : m_provider(provider), m_stream(provider.adapter.mapping.stream), m_shape(shape),
          m_writer(shape)
    {}

    StreamOutput feed(const SseEvent &event) override
    {
        StreamOutput output;
        if (m_ended)
            return output;
        if (!m_stream.doneData.isEmpty() && event.data == m_stream.doneData) {
            end(output);
            return output;
        }
        // `delta: $` takes each event's data as plain text, JSON or not.
        const bool plainText = namesWholeDocument(m_stream.delta);
        const std::optional<QJsonValue> parsed = parseJson(event.data);
        QJsonValue document;
        if (parsed) {
            document = *parsed;
        } else if (plainText) {
            document = QString::fromUtf8(event.data);
        } else {
            m_ended = true;
            output.failure = StreamFailure{
                StreamFailure::Kind::Unusable,
                unusableAnswer(u"Provider `%1` sent a stream event that is not valid JSON."_s.arg(
                    m_provider.id))};
            return output;
        }
        if (const QString error = messageAt(m_stream.error, document); !error.isEmpty()) {
            m_ended = true;
            output.failure = StreamFailure{StreamFailure::Kind::ProviderError,
                                           providerStreamError(m_provider.id, 502, error)};
            return output;
        }
        // An event without a delta (a status or metadata event) is not an error: agents
        // send such events between pieces of text.
        const std::optional<QJsonValue> delta =
            plainText ? QJsonValue(QString::fromUtf8(event.data)) : m_stream.delta.find(document);
        if (delta && delta->isString() && !delta->toString().isEmpty()) {
            start(output);
            output.events.append(m_writer.content(delta->toString()));
        }
        m_usage = usageAt(m_stream.usage, document, m_usage);
        if (m_stream.finishReason) {
            if (const auto reason = m_stream.finishReason->find(document);
                reason && reason->isString())
                m_finishReason = finishReasonFromAgent(reason->toString());
        }
        if (m_stream.done) {
            if (const auto done = m_stream.done->find(document); done && isTruthy(*done))
                end(output);
        }
        return output;
    }

    StreamOutput finish() override
    {
        StreamOutput output;
        if (!m_ended && !m_stream.hasDoneSignal())
            end(output); // the end of the response is the end of the answer
        m_ended = true;
        output.completed = m_completed;
        return output;
    }

    Usage usage() const override { return m_usage; }

private:
    void start(StreamOutput &output)
    {
        if (m_started)
            return;
        m_started = true;
        output.events.append(m_writer.role());
    }

    void end(StreamOutput &output)
    {
        start(output);
        output.events.append(m_writer.finish(m_finishReason));
        if (m_shape.includeUsage && m_usage.isKnown())
            output.events.append(m_writer.usage(m_usage));
        output.events.append(ChunkWriter::done());
        output.completed = true;
        m_completed = true;
        m_ended = true;
    }

    const config::ProviderConfig &m_provider;
    const config::MappedStreamConfig &m_stream;
    AnswerShape m_shape;
    ChunkWriter m_writer;
    Usage m_usage;
    QString m_finishReason = u"stop"_s;
    bool m_started = false;
    bool m_ended = false;
    bool m_completed = false;
};

} // namespace

QString finishReasonFromAgent(const QString &reason)
{
    if (reason == u"stop"_s || reason == u"length"_s || reason == u"tool_calls"_s ||
        reason == u"content_filter"_s)
        return reason;
    if (reason == u"max_tokens"_s || reason == u"max_new_tokens"_s)
        return u"length"_s;
    return u"stop"_s;
}

bool MappedAdapter::canStream() const
{
    return m_provider.adapter.mapping.stream.enabled;
}

QString MappedAdapter::streamEnd(const AnswerShape &) const
{
    const config::MappedStreamConfig &stream = m_provider.adapter.mapping.stream;
    if (!stream.doneData.isEmpty())
        return u"`data: %1`"_s.arg(QString::fromUtf8(stream.doneData));
    return u"the end event its mapping declares"_s;
}

std::variant<PreparedRequest, protocol::ApiError>
MappedAdapter::buildRequest(const AdapterRequest &request) const
{
    const config::MappingConfig &mapping = m_provider.adapter.mapping;
    const bool upstreamStreams = request.stream && mapping.stream.enabled;
    QJsonObject chat = QJsonDocument::fromJson(request.openAiBody).object();
    // The template sees the request as this provider gets it: its own model name, and
    // `stream` as the call is really made.
    chat.insert(u"model"_s, request.upstreamModel);
    chat.insert(u"stream"_s, upstreamStreams);

    PreparedRequest prepared;
    UpstreamRequest &call = prepared.request;
    call.url = providerUrl(m_provider,
                           upstreamStreams && !mapping.stream.path.isEmpty() ? mapping.stream.path
                                                                             : mapping.path,
                           request.upstreamModel);
    const QJsonValue body = mapping.request.render(chat);
    call.body = QJsonDocument(body.toObject()).toJson(QJsonDocument::Compact);
    call.headers = {{"Content-Type", "application/json"},
                    {"Accept", upstreamStreams ? "text/event-stream" : "application/json"}};
    call.headers.append(request.extraHeaders);
    call.headers.append(providerHeaders(m_provider));
    applyConnectionOptions(m_provider, call);

    AnswerShape &shape = prepared.shape;
    shape.upstreamModel = request.upstreamModel;
    shape.answerId = "chatcmpl-" + request.requestId;
    shape.createdSecs = request.createdSecs;
    shape.clientStreams = request.stream;
    shape.upstreamStreams = upstreamStreams;
    shape.includeUsage =
        chat.value(u"stream_options"_s).toObject().value(u"include_usage"_s).toBool();
    return prepared;
}

AnswerTranslation MappedAdapter::translateAnswer(const AnswerShape &shape,
                                                 const QByteArray &body) const
{
    const config::MappingConfig &mapping = m_provider.adapter.mapping;
    AnswerTranslation translation;
    const auto refuse = [&](const QString &message) {
        translation.kind = AnswerTranslation::Kind::Unusable;
        translation.error = unusableAnswer(message);
        return translation;
    };
    std::optional<QJsonValue> document = parseJson(body);
    // `answer: $` takes a body that is not JSON as the reply text itself.
    if (!document && namesWholeDocument(mapping.answer))
        document = QString::fromUtf8(body);
    if (!document)
        return refuse(u"Provider `%1` sent an answer that is not valid JSON."_s.arg(m_provider.id));
    const std::optional<QJsonValue> reply = mapping.answer.find(*document);
    if (!reply || reply->isNull()) {
        if (const QString error = messageAt(mapping.error, *document); !error.isEmpty()) {
            return refuse(u"Provider `%1` answered with an error instead of a reply: %2"_s.arg(
                m_provider.id, error));
        }
    }
    if (!reply) {
        return refuse(u"Provider `%1` sent an answer without `%2`, where its mapping expects the "
                      u"reply text."_s.arg(m_provider.id, mapping.answer.text()));
    }
    if (!reply->isString()) {
        return refuse(u"Provider `%1` sent %2 at `%3`, where its mapping expects the reply "
                      u"text."_s.arg(m_provider.id, describeJson(*reply), mapping.answer.text()));
    }

    CompletionDraft draft;
    draft.id = QString::fromUtf8(shape.answerId);
    draft.model = shape.upstreamModel;
    draft.createdSecs = shape.createdSecs;
    draft.text = reply->toString();
    draft.finishReason = u"stop"_s;
    if (mapping.finishReason) {
        if (const auto reason = mapping.finishReason->find(*document); reason && reason->isString())
            draft.finishReason = finishReasonFromAgent(reason->toString());
    }
    draft.usage = usageAt(mapping.usage, *document, {});
    translation.usage = draft.usage;
    translation.openAiJson = completionJson(draft, shape);
    return translation;
}

std::unique_ptr<StreamTranslator> MappedAdapter::startStream(const AnswerShape &shape) const
{
    return std::make_unique<MappedStreamTranslator>(m_provider, shape);
}

protocol::ApiError MappedAdapter::translateError(int status, const HeaderList &headers,
                                                 QByteArrayView body) const
{
    QString detail;
    if (const std::optional<QJsonValue> document = parseJson(body))
        detail = messageAt(m_provider.adapter.mapping.error, *document);
    if (detail.isEmpty())
        detail = openAiErrorMessage(body); // the common shapes, else an excerpt of the body
    QByteArray retryAfter;
    for (const auto &[name, value] : headers) {
        if (name.compare("retry-after", Qt::CaseInsensitive) == 0)
            retryAfter = value;
    }
    return providerHttpError(m_provider.id, status, detail, retryAfter);
}

} // namespace switchyard::upstream::adapters
