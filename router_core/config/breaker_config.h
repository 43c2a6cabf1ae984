#pragma once

#include <QHash>
#include <QString>
#include <chrono>

namespace switchyard::config {

// The circuit breaker of every endpoint (docs/resilience.md, "Health and the circuit breaker").
// Filled from the root key `breaker:` by checkHealthSections (breaker_section.cpp); the defaults
// are the design's numbers.
struct BreakerConfig {
    int consecutiveFailures = 5; // call failures in a row that open the breaker
    double failureRate = 0.4;    // opens when more than this share of the window failed...
    int window = 20;             // ...over the last `window` calls...
    int minCalls = 5;            // ...once at least this many were seen
    // Opens when the p95 latency over `slowWindow` is above this many times the endpoint's
    // latency objective, once `slowMinCalls` successful calls are in that window. Below 20
    // calls a nearest-rank p95 is the slowest call, so one slow answer would open it.
    // 0 turns the slow rule off.
    double slowP95Factor = 2.0;
    std::chrono::milliseconds slowWindow{60'000};
    int slowMinCalls = 20;
    std::chrono::milliseconds openFor{60'000};     // first open period; doubles on each re-trip
    std::chrono::milliseconds maxOpenFor{300'000}; // cap of the doubling
    std::chrono::milliseconds ramp{60'000};        // recovery ramp to full traffic share; 0: none
    double rampStart = 0.05;                       // traffic share at the start of the ramp
};

// Active health probes (docs/resilience.md, "Health probes"). Filled from the root key `probes:`.
struct ProbeConfig {
    bool enabled = true;
    std::chrono::milliseconds interval{10'000}; // per endpoint, between probe starts
    std::chrono::milliseconds timeout{3'000};   // a probe slower than this failed
    int unhealthyAfter = 3;                     // failed probes in a row: not selectable
    int healthyAfter = 2;                       // successful probes in a row: healthy again
    // A GET of this path (on the base URL's host, e.g. "/health") instead of a one-token
    // completion. Empty: the one-token completion.
    QString path;
    // Per-provider `probe_path`, overriding `path` for that provider, by provider id.
    QHash<QString, QString> pathByProvider;

    QString pathFor(const QString &providerId) const
    {
        return pathByProvider.value(providerId, path);
    }
};

} // namespace switchyard::config
