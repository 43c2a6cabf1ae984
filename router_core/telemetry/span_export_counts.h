#pragma once

#include <QtGlobal>

namespace switchyard::telemetry {

// What the OpenTelemetry export (trace.otlp) has counted since start. Every span of a sampled
// request ends up in exactly one of exported, dropped or abandoned, or is still queued, so the
// four always add up to what the export was handed. A value, copied into the console's snapshot
// and readable by whatever publishes metrics.
struct SpanExportCounts {
    bool enabled = false;       // trace.otlp is configured; every count is 0 when not
    quint64 exportedSpans = 0;  // accepted by the collector (2xx, less any it said it rejected)
    quint64 droppedSpans = 0;   // never queued: the queue (trace.otlp.queue) was full
    quint64 abandonedSpans = 0; // queued, then given up: failed twice, refused, or left at stop
    quint64 failedExports = 0;  // export requests that failed: no answer, timeout, non-2xx
    quint64 queuedSpans = 0;    // waiting for export now, the batch being sent included
};

} // namespace switchyard::telemetry
