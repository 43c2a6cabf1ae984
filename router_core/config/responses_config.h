#pragma once

#include <QtGlobal>
#include <chrono>

namespace switchyard::config {

// The `responses` section (docs/configuration.md): what the gateway keeps of Responses API
// requests (`store`, `previous_response_id`) and how it runs background ones (`background`).
// docs/responses.md says what each client field does with it.
struct ResponsesConfig {
    // `store` when a request does not say: off. OpenAI's default is on, which would keep every
    // prompt and answer of every SDK call on this gateway's disk without anyone having chosen
    // it; here a client asks for storage (`store: true`) or background mode (which needs it).
    bool storeByDefault = false;
    // How long a stored response is kept after it is made; the oldest go first.
    std::chrono::milliseconds retention{std::chrono::hours(24 * 30)};
    // Stored responses (requests, outputs, event logs) are held in memory and in the state
    // database: beyond this the oldest finished ones are dropped first.
    qint64 maxStoredBytes = 256LL * 1024 * 1024;

    // The background queue.
    int workers = 4; // background tasks run at once on this node
    // Tasks waiting or running per tenant; beyond it a new one is refused with 429 `queue_full`.
    int maxQueuedPerTenant = 100;
    // A task running longer is stopped and fails with `task_timed_out`.
    std::chrono::milliseconds taskTimeout{std::chrono::minutes(30)};

    // The fleet's queue on Redis Streams (docs/fleet.md, "The queue"); a single node ignores them.
    // A task whose node stopped renewing it for this long is taken by another node.
    std::chrono::milliseconds visibilityTimeout{std::chrono::seconds(30)};
    // Runs a task may have (failed, or ended with its node) before it goes to the dead letters.
    int deliveryLimit = 5;
    // The wait before a failed run is tried again, doubled for each run after (at most 5 min).
    std::chrono::milliseconds retryBackoff{std::chrono::seconds(2)};

    friend bool operator==(const ResponsesConfig &, const ResponsesConfig &) = default;
};

} // namespace switchyard::config
