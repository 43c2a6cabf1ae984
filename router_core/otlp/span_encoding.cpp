#include "otlp/span_encoding.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSysInfo>

namespace switchyard::otlp {

using namespace Qt::StringLiterals;
using telemetry::Span;
using telemetry::SpanKind;

namespace {

// opentelemetry.proto.trace.v1.Span.SpanKind and Status.StatusCode.
enum OtlpSpanKind { Internal = 1, Server = 2, Client = 3 };
enum OtlpStatus { Unset = 0, Ok = 1, Error = 2 };

// An attribute list, in the order attributes are added; empty values are left out, as the
// conventions ask (an attribute that is not known is absent, not "").
class Attributes {
public:
    Attributes &text(const QString &key, const QString &value)
    {
        if (!value.isEmpty())
            add(key, QJsonObject{{u"stringValue"_s, value}});
        return *this;
    }
    Attributes &integer(const QString &key, qint64 value)
    {
        add(key, QJsonObject{{u"intValue"_s, QString::number(value)}});
        return *this;
    }
    Attributes &boolean(const QString &key, bool value)
    {
        add(key, QJsonObject{{u"boolValue"_s, value}});
        return *this;
    }
    Attributes &texts(const QString &key, const QStringList &values)
    {
        QJsonArray array;
        for (const QString &value : values)
            array.append(QJsonObject{{u"stringValue"_s, value}});
        add(key, QJsonObject{{u"arrayValue"_s, QJsonObject{{u"values"_s, array}}}});
        return *this;
    }
    QJsonArray take() { return std::exchange(m_list, {}); }

private:
    void add(const QString &key, const QJsonObject &value)
    {
        m_list.append(QJsonObject{{u"key"_s, key}, {u"value"_s, value}});
    }
    QJsonArray m_list;
};

QString nanos(qint64 value)
{
    return QString::number(value);
}

QString hex(const QByteArray &id)
{
    return QString::fromLatin1(id);
}

QJsonObject status(OtlpStatus code, const QString &message = {})
{
    QJsonObject object{{u"code"_s, int(code)}};
    if (!message.isEmpty())
        object.insert(u"message"_s, message);
    return object;
}

// `{gen_ai.operation.name} {model}`: the GenAI conventions' span name, the operation alone when
// the model is not known.
QString genAiSpanName(const QString &operation, const QString &model)
{
    return model.isEmpty() ? operation : operation + u' ' + model;
}

struct SpanTimes {
    qint64 startNanos = 0;
    qint64 endNanos = 0;
};

SpanTimes timesOf(const ExportedRequest &request, const Span &span)
{
    const qint64 start = request.startUnixNanos + span.startMicros * 1000;
    return {start, start + std::max<qint64>(span.durationMicros, 0) * 1000};
}

QJsonObject event(const ExportedRequest &request, const Span &span)
{
    QJsonObject object{{u"timeUnixNano"_s, nanos(timesOf(request, span).startNanos)},
                       {u"name"_s, span.name}};
    Attributes attributes;
    attributes.text(u"switchyard.detail"_s, span.detail);
    if (QJsonArray list = attributes.take(); !list.isEmpty())
        object.insert(u"attributes"_s, list);
    return object;
}

// Which span a point event belongs to: the attempt running when it happened (a response head, a
// first byte, a usage report are that call's), otherwise the request's own span. -1 for the
// request's span.
int ownerOfEvent(const QList<Span> &spans, const Span &event)
{
    int owner = -1;
    for (int index = 0; index < spans.size(); ++index) {
        const Span &span = spans[index];
        if (span.kind != SpanKind::Attempt)
            continue;
        const qint64 end = span.startMicros + std::max<qint64>(span.durationMicros, 0);
        if (event.startMicros >= span.startMicros && event.startMicros <= end)
            owner = index;
    }
    return owner;
}

// The request's token counts, as the request span and the answering attempt both carry them. The
// cache's counts are parts of input_tokens, as the convention's gen_ai.usage.cache_* are.
void addUsage(Attributes &attributes, const telemetry::RequestRecord &record)
{
    if (record.inputTokens >= 0)
        attributes.integer(u"gen_ai.usage.input_tokens"_s, record.inputTokens);
    if (record.outputTokens >= 0)
        attributes.integer(u"gen_ai.usage.output_tokens"_s, record.outputTokens);
    if (record.cacheReadTokens >= 0)
        attributes.integer(u"gen_ai.usage.cache_read.input_tokens"_s, record.cacheReadTokens);
    if (record.cacheWriteTokens >= 0)
        attributes.integer(u"gen_ai.usage.cache_creation.input_tokens"_s, record.cacheWriteTokens);
}

QJsonObject serverSpan(const ExportedRequest &request, const QJsonArray &events)
{
    const telemetry::RequestRecord &record = request.record;
    Attributes attributes;
    attributes.text(u"gen_ai.operation.name"_s, record.operation)
        .text(u"gen_ai.provider.name"_s, record.provider)
        .text(u"gen_ai.request.model"_s, record.model)
        .text(u"gen_ai.response.model"_s, record.upstreamModel);
    addUsage(attributes, record);
    if (!record.finishReason.isEmpty())
        attributes.texts(u"gen_ai.response.finish_reasons"_s, {record.finishReason});
    if (record.isError())
        attributes.text(u"error.type"_s,
                        record.outcome.isEmpty() ? QString::number(record.status) : record.outcome);
    attributes.text(u"http.request.method"_s, QString::fromLatin1(request.method))
        .text(u"url.path"_s, record.endpoint);
    if (record.status > 0)
        attributes.integer(u"http.response.status_code"_s, record.status);
    attributes.text(u"switchyard.request_id"_s, QString::fromLatin1(record.requestId))
        .text(u"switchyard.tenant"_s, record.tenant)
        .text(u"switchyard.route"_s, record.route)
        .text(u"switchyard.tier"_s, record.tier)
        .text(u"switchyard.outcome"_s, record.outcome)
        .text(u"switchyard.error_class"_s, record.errorClass)
        .integer(u"switchyard.attempts"_s, record.attempts)
        .integer(u"switchyard.degraded_level"_s, record.degradedLevel)
        .boolean(u"switchyard.streamed"_s, record.streamed);
    if (record.timeToFirstByteMicros >= 0)
        attributes.integer(u"switchyard.time_to_first_byte_us"_s, record.timeToFirstByteMicros);
    if (record.streamed) {
        // The stream's chunks as a sum: one event per chunk would outweigh the rest of the trace.
        attributes.integer(u"switchyard.stream.chunks"_s, request.chunkCount)
            .integer(u"switchyard.stream.bytes"_s, request.chunkBytes);
    }

    QJsonObject span{{u"traceId"_s, hex(record.traceId)},
                     {u"spanId"_s, hex(record.spanId)},
                     {u"name"_s, genAiSpanName(record.operation, record.model)},
                     {u"kind"_s, int(Server)},
                     {u"startTimeUnixNano"_s, nanos(request.startUnixNanos)},
                     {u"endTimeUnixNano"_s, nanos(request.startUnixNanos +
                                                  std::max<qint64>(record.totalMicros, 0) * 1000)},
                     {u"attributes"_s, attributes.take()},
                     {u"status"_s, record.isError() ? status(Error, record.outcome) : status(Ok)}};
    if (!record.parentSpanId.isEmpty())
        span.insert(u"parentSpanId"_s, hex(record.parentSpanId));
    if (!events.isEmpty())
        span.insert(u"events"_s, events);
    return span;
}

QJsonObject attemptSpan(const ExportedRequest &request, const Span &attempt, bool answered,
                        const QJsonArray &events)
{
    const telemetry::RequestRecord &record = request.record;
    Attributes attributes;
    attributes.text(u"gen_ai.operation.name"_s, record.operation)
        .text(u"gen_ai.provider.name"_s, attempt.provider)
        .text(u"gen_ai.request.model"_s, attempt.upstreamModel);
    if (answered) {
        // The call whose answer the client got carries the answer's facts, so a view of
        // provider calls alone sees the tokens each provider was paid for.
        attributes.text(u"gen_ai.response.model"_s, attempt.upstreamModel);
        addUsage(attributes, record);
        if (!record.finishReason.isEmpty())
            attributes.texts(u"gen_ai.response.finish_reasons"_s, {record.finishReason});
    }
    attributes.text(u"error.type"_s, attempt.errorClass);
    if (attempt.httpStatus > 0)
        attributes.integer(u"http.response.status_code"_s, attempt.httpStatus);
    attributes.integer(u"switchyard.attempt"_s, attempt.attempt)
        .text(u"switchyard.attempt.outcome"_s, attempt.outcome)
        .integer(u"switchyard.response.bytes"_s, attempt.bytes)
        .text(u"switchyard.detail"_s, attempt.detail);

    // A cancelled call (the client left, a hedge lost) is neither the provider's success nor its
    // failure: its status stays unset.
    const OtlpStatus code = attempt.outcome == u"success"_s     ? Ok
                            : attempt.outcome == u"cancelled"_s ? Unset
                                                                : Error;
    const SpanTimes times = timesOf(request, attempt);
    QJsonObject span{{u"traceId"_s, hex(record.traceId)},
                     {u"spanId"_s, hex(attempt.spanId)},
                     {u"parentSpanId"_s, hex(record.spanId)},
                     {u"name"_s, genAiSpanName(record.operation, attempt.upstreamModel)},
                     {u"kind"_s, int(Client)},
                     {u"startTimeUnixNano"_s, nanos(times.startNanos)},
                     {u"endTimeUnixNano"_s, nanos(times.endNanos)},
                     {u"attributes"_s, attributes.take()}};
    if (code != Unset)
        span.insert(u"status"_s,
                    status(code, code == Error ? (attempt.errorClass.isEmpty() ? attempt.outcome
                                                                               : attempt.errorClass)
                                               : QString()));
    if (!events.isEmpty())
        span.insert(u"events"_s, events);
    return span;
}

QJsonObject internalSpan(const ExportedRequest &request, const Span &step)
{
    Attributes attributes;
    attributes.text(u"switchyard.detail"_s, step.detail)
        .text(u"switchyard.span.kind"_s, step.kind == SpanKind::Wait ? u"wait"_s : u"step"_s);
    const SpanTimes times = timesOf(request, step);
    return {{u"traceId"_s, hex(request.record.traceId)},
            {u"spanId"_s, hex(telemetry::newSpanId())},
            {u"parentSpanId"_s, hex(request.record.spanId)},
            {u"name"_s, step.name},
            {u"kind"_s, int(Internal)},
            {u"startTimeUnixNano"_s, nanos(times.startNanos)},
            {u"endTimeUnixNano"_s, nanos(times.endNanos)},
            {u"attributes"_s, attributes.take()}};
}

void appendSpans(const ExportedRequest &request, QJsonArray &spans)
{
    const QList<Span> &all = request.spans;
    // Point events first, each to the span it belongs to.
    QList<QJsonArray> eventsOf(all.size());
    QJsonArray requestEvents;
    for (const Span &span : all) {
        if (span.kind != SpanKind::Event)
            continue;
        const int owner = ownerOfEvent(all, span);
        (owner < 0 ? requestEvents : eventsOf[owner]).append(event(request, span));
    }
    spans.append(serverSpan(request, requestEvents));

    int lastAttempt = -1;
    for (int index = 0; index < all.size(); ++index) {
        if (all[index].kind == SpanKind::Attempt)
            lastAttempt = index;
    }
    for (int index = 0; index < all.size(); ++index) {
        const Span &span = all[index];
        switch (span.kind) {
        case SpanKind::Attempt: {
            const bool answered =
                index == lastAttempt && !request.record.isError() && span.outcome == u"success"_s;
            spans.append(attemptSpan(request, span, answered, eventsOf[index]));
            break;
        }
        case SpanKind::Step:
        case SpanKind::Wait:
            spans.append(internalSpan(request, span));
            break;
        case SpanKind::Event:
            break;
        }
    }
}

QJsonObject resource(const ExportSource &source)
{
    Attributes attributes;
    attributes.text(u"service.name"_s, u"switchyard"_s)
        .text(u"service.version"_s, source.serviceVersion)
        .text(u"host.name"_s, source.hostName);
    if (source.processId > 0)
        attributes.integer(u"process.pid"_s, source.processId);
    return {{u"attributes"_s, attributes.take()}};
}

} // namespace

ExportedRequest ExportedRequest::from(const telemetry::Trace &trace)
{
    ExportedRequest request;
    request.record = trace;
    request.spans = trace.spans;
    request.method = trace.method;
    request.chunkCount = trace.chunkCount;
    request.chunkBytes = trace.chunkBytes;
    request.startUnixNanos = trace.startedAtUtc.toMSecsSinceEpoch() * 1'000'000;
    request.spanCount = 1;
    for (const Span &span : trace.spans) {
        if (span.kind != SpanKind::Event)
            ++request.spanCount;
    }
    return request;
}

ExportSource ExportSource::ofThisProcess()
{
    ExportSource source;
    source.serviceVersion = QCoreApplication::applicationVersion();
    if (source.serviceVersion.isEmpty())
        source.serviceVersion = QStringLiteral(SWITCHYARD_VERSION);
    source.hostName = QSysInfo::machineHostName();
    source.processId = QCoreApplication::applicationPid();
    return source;
}

QByteArray encodeExportRequest(const QList<ExportedRequest> &requests, const ExportSource &source)
{
    QJsonArray spans;
    for (const ExportedRequest &request : requests)
        appendSpans(request, spans);
    const QJsonObject scope{{u"name"_s, u"switchyard"_s}, {u"version"_s, source.serviceVersion}};
    const QJsonObject scopeSpans{{u"scope"_s, scope}, {u"spans"_s, spans}};
    const QJsonObject resourceSpans{{u"resource"_s, resource(source)},
                                    {u"scopeSpans"_s, QJsonArray{scopeSpans}}};
    return QJsonDocument(QJsonObject{{u"resourceSpans"_s, QJsonArray{resourceSpans}}})
        .toJson(QJsonDocument::Compact);
}

bool sampledAt(double ratio, QByteArrayView traceId)
{
    if (ratio >= 1.0)
        return true;
    if (ratio <= 0.0)
        return false;
    constexpr quint64 kRandomRange = quint64(1) << 56;
    // The rightmost 14 hex digits; an id too short to have them (never one of ours) is kept.
    if (traceId.size() < 14)
        return true;
    bool parsed = false;
    const quint64 randomness = traceId.last(14).toULongLong(&parsed, 16);
    if (!parsed)
        return true;
    // Rejected below the threshold, as OpenTelemetry's consistent probability sampling does.
    const auto threshold = quint64((1.0 - ratio) * double(kRandomRange));
    return randomness >= threshold;
}

} // namespace switchyard::otlp
