#pragma once

#include "logging/log_line.h"
#include "telemetry/request_recorder.h"

#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcRequests)

namespace switchyard::telemetry {

// One info line per finished request in the `switchyard.requests` category, read from the
// request's one record (docs/logging.md lists the fields). Nothing is computed here that the
// record does not already hold, and with the category below info nothing is built at all.
class RequestLog final : public TraceSink {
public:
    void traceFinished(const Trace &trace) override;
};

// The one request log; it keeps no state, so every engine in the process may share it.
RequestLog &requestLog();

// The fields of a finished request's log line, in the order they are written.
logging::LogFields requestLogFields(const RequestRecord &record);

} // namespace switchyard::telemetry
