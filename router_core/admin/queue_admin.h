#pragma once

#include "http/admin_endpoints.h"

namespace switchyard::http {
class ResponsesService;
}

namespace switchyard::admin {

// GET /admin/v1/queue: the background queue (depth by priority and tenant, running, the oldest
// wait, outcomes, the tasks queued and running and the latest failures) and what is stored.
// POST /admin/v1/queue/{id}/cancel: cancels a queued or running task for an operator, whoever
// owns it. docs/operations.md.
void registerQueueAdmin(http::AdminEndpoints &endpoints, http::ResponsesService &responses);

} // namespace switchyard::admin
