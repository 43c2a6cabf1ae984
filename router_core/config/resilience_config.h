#pragma once

#include "config/breaker_config.h"

#include <QHash>
#include <QList>
#include <QString>
#include <QStringList>
#include <chrono>

namespace switchyard::config {

// How the executor retries a failed attempt (docs/resilience.md, "Errors and retries"). Root key
// `retries:`.
struct RetryConfig {
    // Wait before retry n (0-based): backoffBase * 2^n, at most backoffMax, plus a uniform
    // draw in [0, backoffJitter] so retries of many requests do not arrive in step.
    std::chrono::milliseconds backoffBase{500};
    std::chrono::milliseconds backoffJitter{200};
    std::chrono::milliseconds backoffMax{5000};
    // Retries in flight may be at most this percentage of the requests in flight...
    double budgetPercent = 20.0;
    // ...but never fewer than this many, so a quiet gateway can still retry (Envoy's default).
    int minRetriesInFlight = 3;
    // Attempts of one request in all, across pools, tiers and the fallback chain.
    int maxAttempts = 5;
    // Each further attempt within a tier waits this much longer for its answer than the last.
    double timeoutGradient = 1.5;
    // The longest cool-down after a 429 a request waits out itself (once) when no other
    // endpoint can take it; a longer one answers the client 429 with the time left.
    std::chrono::milliseconds maxRetryAfter{10000};
    // How long an endpoint cools down after a 429 that names no Retry-After.
    std::chrono::milliseconds defaultCoolDown{1000};
};

struct TenantLimit {
    int requestsPerMinute = 0;
    int burst = 0; // requests that may arrive at once; zero means requestsPerMinute
};

// What may enter at all, and how much failed-over traffic a backup takes (docs/resilience.md,
// "Admission"). Root key `admission:`.
struct AdmissionConfig {
    // Chat requests in flight in all; beyond: 503. Sized by the streams sweep
    // (docs/benchmarks.md): on the engine's epoll dispatcher 10,000 concurrent streams cost no
    // more per event than 100, and a burst of this many arriving at once is admitted within about
    // two seconds on a 2-core machine, in about 250 MB.
    int maxInFlight = 4096;
    QHash<QString, TenantLimit> tenants; // by x-switchyard-tenant; beyond the limit: 429
    int defaultTenantRpm = 0;            // for tenants not listed; zero means not limited
    double failoverCapacityShare = 0.5;  // of an endpoint's capacity that failover may take
    double degradedAdmitShare = 0.5;     // of a degraded tier's traffic let through to fallbacks
    int maxDepth = 5;                    // x-switchyard-depth above this: 508
    // With the engine loop at least this late, a provider's connect, first-token or idle
    // timeout is the gateway's overload, not the provider's failure: it does not count toward
    // the provider's breaker and the request is answered 503 gateway_overloaded.
    std::chrono::milliseconds overloadLag{250};
    // The longest a request read whole waits for a turn of the engine loop to start it (a burst
    // beyond what one turn starts, docs/resilience.md): an engine that cannot start it in this
    // time is overloaded, and the request is answered 503 gateway_overloaded. 9,900 streams
    // opened at once all start within about 12 s on a 2-core machine.
    std::chrono::milliseconds maxStartWait{20000};
};

// A fixed reply for requests that match, degradation ladder level 2.
struct CannedAnswer {
    QString modelGlob;    // `*` and `?` wildcards; empty matches every model
    QStringList contains; // any of these in the last user message, ignoring case; empty: any
    QString reply;
};

// Degradation ladder levels 2 and 3 (docs/resilience.md, "The degradation ladder"). Root key
// `degradation:`.
struct DegradationConfig {
    QList<CannedAnswer> canned; // first match wins
    QString failSafe;           // level 3's message; empty: level 3 is off
};

// Everything that keeps requests answered while providers fail.
struct ResilienceConfig {
    BreakerConfig breaker; // breaker_config.h: circuit breaker per endpoint
    ProbeConfig probes;    // breaker_config.h: active health probes
    RetryConfig retries;
    AdmissionConfig admission;
    DegradationConfig degradation;
};

} // namespace switchyard::config
