#include "telemetry/request_log.h"

Q_LOGGING_CATEGORY(lcRequests, "switchyard.requests")

namespace switchyard::telemetry {

using namespace Qt::StringLiterals;

logging::LogFields requestLogFields(const RequestRecord &record)
{
    logging::LogFields fields;
    fields.add("request_id"_L1, QByteArrayView(record.requestId))
        .add("trace_id"_L1, QByteArrayView(record.traceId))
        .add("endpoint"_L1, record.endpoint)
        .add("tenant"_L1, record.tenant)
        .add("model"_L1, record.model)
        .add("route"_L1, record.route)
        .add("tier"_L1, record.tier)
        .add("provider"_L1, record.provider)
        .add("attempts"_L1, record.attempts)
        .add("status"_L1, record.status)
        .add("outcome"_L1, record.outcome)
        .add("error_class"_L1, record.errorClass)
        .addMillis("latency_ms"_L1, record.totalMicros)
        .addMillis("ttft_ms"_L1, record.timeToFirstByteMicros)
        .addCount("tokens_in"_L1, record.inputTokens)
        .addCount("tokens_out"_L1, record.outputTokens)
        .add("degraded"_L1, record.degradedLevel)
        .add("streamed"_L1, record.streamed);
    // Only gateways with client keys have one to name; lines of open gateways stay as they were.
    if (!record.keyId.isEmpty())
        fields.add("key_id"_L1, record.keyId);
    return fields;
}

RequestLog &requestLog()
{
    static RequestLog log;
    return log;
}

void RequestLog::traceFinished(const Trace &trace)
{
    if (!lcRequests().isInfoEnabled())
        return;
    logging::write(lcRequests(), QtInfoMsg, u"request finished"_s, requestLogFields(trace));
}

} // namespace switchyard::telemetry
