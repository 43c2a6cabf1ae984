#pragma once

#include "http/admin_endpoints.h"

namespace switchyard::auth {
class ClientAuthenticator;
}
namespace switchyard::config {
class ConfigStore;
}

namespace switchyard::admin {

// Client API keys (docs/operations.md, "Keys, tenants and the admin token"):
// - POST /admin/v1/keys {tenant, id?, requests_per_minute?, tokens_per_minute?, models?}
//   creates a key and answers its text, the one time it is ever shown (201);
// - GET /admin/v1/keys lists every key, from the file and the API, without secrets;
// - PATCH /admin/v1/keys/{id} {requests_per_minute?, tokens_per_minute?, models?} changes the
//   limits of a key created through the API (a file key: 409) and answers the key;
// - DELETE /admin/v1/keys/{id} revokes a key created through the API (a file key: 409).
// Each calls the ClientAuthenticator command the console calls too.
void registerKeyAdmin(http::AdminEndpoints &api, auth::ClientAuthenticator &keys,
                      const config::ConfigStore &store);

} // namespace switchyard::admin
