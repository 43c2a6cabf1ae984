#pragma once

#include "telemetry/trace.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace switchyard::otlp {

// What the engine thread hands the export for one finished request: its record and spans,
// shared rather than copied (Qt's implicitly shared containers may be read on another thread),
// and none of what the export never sends: headers, bodies, chunk arrivals one by one.
struct ExportedRequest {
    telemetry::RequestRecord record;
    QList<telemetry::Span> spans;
    QByteArray method;
    quint32 chunkCount = 0;
    qint64 chunkBytes = 0;
    qint64 startUnixNanos = 0;
    int spanCount = 0; // what it becomes in OTLP: the request's span plus one per non-event span

    static ExportedRequest from(const telemetry::Trace &trace);
};

// Who sends the spans: OTLP's resource and instrumentation scope.
struct ExportSource {
    QString serviceVersion;
    QString hostName;
    qint64 processId = 0;

    static ExportSource ofThisProcess();
};

// An ExportTraceServiceRequest in OTLP's JSON encoding (opentelemetry-proto's JSON mapping:
// lowerCamelCase names, ids as lowercase hex, 64-bit integers as decimal strings, enums as
// numbers). docs/opentelemetry.md shows what each request becomes.
QByteArray encodeExportRequest(const QList<ExportedRequest> &requests, const ExportSource &source);

// Whether a trace is exported at `ratio`: decided by the trace id alone, so every span of a trace
// (and every gateway on its path using the same rule) decides alike. The rightmost 56 bits are the
// ones W3C Trace Context level 2 asks to be random; a trace is kept when they fall below
// ratio × 2^56, as OpenTelemetry's consistent probability samplers do.
bool sampledAt(double ratio, QByteArrayView traceId);

} // namespace switchyard::otlp
