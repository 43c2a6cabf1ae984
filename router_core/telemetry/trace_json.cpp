#include "telemetry/trace_json.h"

#include <QJsonArray>

namespace switchyard::telemetry {

namespace {

QString spanKindName(SpanKind kind)
{
    switch (kind) {
    case SpanKind::Step:
        return QStringLiteral("step");
    case SpanKind::Attempt:
        return QStringLiteral("attempt");
    case SpanKind::Wait:
        return QStringLiteral("wait");
    case SpanKind::Event:
        return QStringLiteral("event");
    }
    return {};
}

QJsonValue millisOrNull(qint64 micros)
{
    return micros < 0 ? QJsonValue() : QJsonValue(double(micros) / 1000.0);
}

QJsonValue countOrNull(qint64 count)
{
    return count < 0 ? QJsonValue() : QJsonValue(count);
}

QJsonValue textOrNull(const QString &text)
{
    return text.isEmpty() ? QJsonValue() : QJsonValue(text);
}

} // namespace

bool TraceFilter::matches(const RequestRecord &record) const
{
    if (!statusClass.isEmpty() && record.statusClass() != statusClass)
        return false;
    if (!provider.isEmpty() && record.provider != provider)
        return false;
    if (!route.isEmpty() &&
        (record.route.isEmpty() ? route != QLatin1String("default") : record.route != route))
        return false;
    if (!tenant.isEmpty() && record.tenant != tenant)
        return false;
    if (errorsOnly && !record.isError())
        return false;
    if (slowerThanMs >= 0 && record.totalMicros <= slowerThanMs * 1000)
        return false;
    if (!idContains.isEmpty() &&
        !QLatin1StringView(record.requestId).contains(idContains, Qt::CaseInsensitive))
        return false;
    return true;
}

std::optional<TraceFilter> TraceFilter::fromQuery(const QUrlQuery &query, QString *error)
{
    TraceFilter filter;
    const auto value = [&](const char *name) {
        return query.queryItemValue(QLatin1String(name), QUrl::FullyDecoded);
    };
    filter.statusClass = value("status");
    if (!filter.statusClass.isEmpty() &&
        !QStringList{QStringLiteral("2xx"), QStringLiteral("4xx"), QStringLiteral("5xx")}.contains(
            filter.statusClass)) {
        *error =
            QStringLiteral("`status` must be 2xx, 4xx or 5xx, got `%1`.").arg(filter.statusClass);
        return std::nullopt;
    }
    filter.provider = value("provider");
    filter.route = value("route");
    filter.tenant = value("tenant");
    filter.idContains = value("q");
    const QString errorsOnly = value("errors_only");
    if (!errorsOnly.isEmpty()) {
        if (errorsOnly != QLatin1String("true") && errorsOnly != QLatin1String("false")) {
            *error =
                QStringLiteral("`errors_only` must be true or false, got `%1`.").arg(errorsOnly);
            return std::nullopt;
        }
        filter.errorsOnly = errorsOnly == QLatin1String("true");
    }
    const QString slower = value("slower_than_ms");
    if (!slower.isEmpty()) {
        bool ok = false;
        filter.slowerThanMs = slower.toLongLong(&ok);
        if (!ok || filter.slowerThanMs < 0) {
            *error = QStringLiteral("`slower_than_ms` must be a whole number of milliseconds, got "
                                    "`%1`.")
                         .arg(slower);
            return std::nullopt;
        }
    }
    return filter;
}

QJsonObject recordJson(const RequestRecord &record)
{
    QJsonObject json{
        {QStringLiteral("request_id"), QString::fromLatin1(record.requestId)},
        {QStringLiteral("sequence"), double(record.sequence)},
        {QStringLiteral("trace_id"), QString::fromLatin1(record.traceId)},
        {QStringLiteral("span_id"), QString::fromLatin1(record.spanId)},
        {QStringLiteral("parent_span_id"),
         record.parentSpanId.isEmpty() ? QJsonValue()
                                       : QJsonValue(QString::fromLatin1(record.parentSpanId))},
        {QStringLiteral("started_at"), record.startedAtUtc.toString(Qt::ISODateWithMs)},
        {QStringLiteral("operation"), record.operation},
        {QStringLiteral("endpoint"), record.endpoint},
        {QStringLiteral("tenant"), textOrNull(record.tenant)},
        {QStringLiteral("key_id"), textOrNull(record.keyId)},
        {QStringLiteral("model"), record.model},
        {QStringLiteral("route"),
         record.route.isEmpty() ? QStringLiteral("default") : record.route},
        {QStringLiteral("tier"), textOrNull(record.tier)},
        {QStringLiteral("provider"), textOrNull(record.provider)},
        {QStringLiteral("upstream_model"), textOrNull(record.upstreamModel)},
        {QStringLiteral("stream"), record.streamed},
        {QStringLiteral("status"), record.status},
        {QStringLiteral("outcome"), record.outcome},
        {QStringLiteral("error_class"), textOrNull(record.errorClass)},
        {QStringLiteral("attempts"), record.attempts},
        {QStringLiteral("degraded"), record.degradedLevel},
        {QStringLiteral("latency_ms"), double(record.totalMicros) / 1000.0},
        {QStringLiteral("ttft_ms"), millisOrNull(record.timeToFirstByteMicros)},
        {QStringLiteral("queued_ms"), double(record.queuedMicros) / 1000.0},
        {QStringLiteral("input_tokens"), countOrNull(record.inputTokens)},
        {QStringLiteral("output_tokens"), countOrNull(record.outputTokens)},
        // The provider reported no usage: the counts are estimated from the text
        // (docs/operations.md).
        {QStringLiteral("tokens_estimated"), record.tokensEstimated},
        // Parts of input_tokens; null when the provider did not say.
        {QStringLiteral("cache_read_tokens"), countOrNull(record.cacheReadTokens)},
        {QStringLiteral("cache_write_tokens"), countOrNull(record.cacheWriteTokens)},
        // By `pricing` as the request finished; null for a model without a price.
        {QStringLiteral("cost_usd"), record.priced ? QJsonValue(record.costUsd) : QJsonValue()},
        {QStringLiteral("cache_saved_usd"),
         record.priced ? QJsonValue(record.cacheSavedUsd) : QJsonValue()},
        {QStringLiteral("finish_reason"), textOrNull(record.finishReason)},
    };
    // Shadow traffic (docs/routing.md): a shadow call names the live request it mirrored, and a
    // mirrored live request its shadow call. Other records have neither key.
    if (record.isShadow())
        json.insert(QStringLiteral("shadow_of"), QString::fromLatin1(record.shadowOf));
    // Only requests the response cache was asked about: "hit" (with what it saved) or "miss".
    if (!record.responseCache.isEmpty()) {
        json.insert(QStringLiteral("response_cache"), record.responseCache);
        json.insert(QStringLiteral("response_cache_saved_usd"), record.responseCacheSavedUsd);
    }
    if (!record.shadowRequestId.isEmpty())
        json.insert(QStringLiteral("shadow_request_id"),
                    QString::fromLatin1(record.shadowRequestId));
    return json;
}

QJsonObject traceJson(const Trace &trace, bool running)
{
    QJsonObject json = recordJson(trace);
    json.insert(QStringLiteral("state"),
                running ? QStringLiteral("in_progress") : QStringLiteral("finished"));
    QJsonArray spans;
    for (const Span &span : trace.spans) {
        QJsonObject item{{QStringLiteral("name"), span.name},
                         {QStringLiteral("kind"), spanKindName(span.kind)},
                         {QStringLiteral("start_ms"), double(span.startMicros) / 1000.0},
                         {QStringLiteral("duration_ms"), millisOrNull(span.durationMicros)},
                         {QStringLiteral("detail"), span.detail}};
        if (span.kind == SpanKind::Attempt) {
            item.insert(QStringLiteral("span_id"), QString::fromLatin1(span.spanId));
            item.insert(QStringLiteral("attempt"), span.attempt);
            item.insert(QStringLiteral("provider"), span.provider);
            item.insert(QStringLiteral("upstream_model"), span.upstreamModel);
            item.insert(QStringLiteral("outcome"), textOrNull(span.outcome));
            item.insert(QStringLiteral("error_class"), textOrNull(span.errorClass));
            item.insert(QStringLiteral("http_status"),
                        span.httpStatus > 0 ? QJsonValue(span.httpStatus) : QJsonValue());
            item.insert(QStringLiteral("bytes"), double(span.bytes));
        }
        spans.append(item);
    }
    json.insert(QStringLiteral("spans"), spans);
    json.insert(QStringLiteral("explain"), QJsonArray::fromStringList(trace.explainSteps));
    QJsonArray chunks;
    for (const ChunkMark &mark : trace.chunks)
        chunks.append(QJsonArray{double(mark.atMicros) / 1000.0, mark.bytes});
    json.insert(QStringLiteral("chunks"),
                QJsonObject{{QStringLiteral("count"), double(trace.chunkCount)},
                            {QStringLiteral("bytes"), double(trace.chunkBytes)},
                            {QStringLiteral("kept"), int(trace.chunks.size())},
                            {QStringLiteral("arrivals"), chunks}});
    QJsonObject headers;
    for (const auto &[name, value] : trace.requestHeaders)
        headers.insert(QString::fromLatin1(name).toLower(), QString::fromUtf8(value));
    QJsonObject request{{QStringLiteral("method"), QString::fromLatin1(trace.method)},
                        {QStringLiteral("path"), QString::fromUtf8(trace.path)},
                        {QStringLiteral("headers"), headers}};
    if (trace.bodiesKept) {
        request.insert(QStringLiteral("body"), QString::fromUtf8(trace.requestBody));
        request.insert(QStringLiteral("body_truncated"), trace.requestBodyCut);
    }
    json.insert(QStringLiteral("request"), request);
    if (trace.bodiesKept) {
        json.insert(QStringLiteral("response"),
                    QJsonObject{{QStringLiteral("body"), QString::fromUtf8(trace.responseBody)},
                                {QStringLiteral("body_truncated"), trace.responseBodyCut}});
    }
    return json;
}

} // namespace switchyard::telemetry
