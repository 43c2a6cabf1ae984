#pragma once

#include "http/admin_endpoints.h"

namespace switchyard::lifecycle {
class ConfigLifecycle;
}

namespace switchyard::admin {

// The config's lifecycle under /admin/v1/config/ (docs/operations.md, "Config lifecycle"):
//   POST validate          YAML text in the body: 200 {"valid":true}, or 422 with every error
//   POST apply             YAML text; author, note and base_version from x-switchyard-author,
//                          x-switchyard-note, x-switchyard-base-version or the query: 200, 409
//                          when the running version moved on since base_version, 422 when invalid
//   GET  versions          every version, newest first, without texts
//   GET  versions/{n}      one version with its text and diff
//   POST rollback/{n}      version n's text again as a new version: 200, 404, 422 with the reason
//   GET  status            running version, whether the file matches, the overlay, the last
//                          refused reload
void registerConfigAdmin(http::AdminEndpoints &api, lifecycle::ConfigLifecycle &lifecycle);

} // namespace switchyard::admin
