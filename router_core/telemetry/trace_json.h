#pragma once

#include "telemetry/trace.h"

#include <QJsonObject>
#include <QUrlQuery>
#include <optional>

namespace switchyard::telemetry {

// Which finished requests a list shows: the admin API's query parameters and the console's
// filters are the same set. Every empty field matches everything.
struct TraceFilter {
    QString statusClass; // "2xx", "4xx", "5xx"
    QString provider;
    QString route; // "default" matches the default route
    QString tenant;
    bool errorsOnly = false;
    qint64 slowerThanMs = -1;
    QString idContains; // a part of the request id, case-insensitive

    bool matches(const RequestRecord &record) const;

    // From `status`, `provider`, `route`, `tenant`, `errors_only`, `slower_than_ms` and `q`;
    // nullopt with `error` set when a value is not one the filter takes.
    static std::optional<TraceFilter> fromQuery(const QUrlQuery &query, QString *error);
};

// The record alone, for lists and the live stream.
QJsonObject recordJson(const RequestRecord &record);
// Everything a trace holds: the record, spans, explain steps, chunk arrivals, the request as
// sent and, when kept, the bodies. `running` marks a request still in progress.
QJsonObject traceJson(const Trace &trace, bool running = false);

} // namespace switchyard::telemetry
