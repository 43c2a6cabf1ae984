#pragma once

#include "http/admin_endpoints.h"

namespace switchyard::telemetry {
class RequestRecorder;
}

namespace switchyard::admin {

// GET /admin/v1/traces (filtered, paged, newest first) and GET /admin/v1/traces/{request id}
// (running or finished). The live stream, GET /admin/v1/traces/stream, is the gateway's own
// (http::TraceStream): it holds its connection open.
void registerTraceAdmin(http::AdminEndpoints &api, const telemetry::RequestRecorder &recorder);

} // namespace switchyard::admin
