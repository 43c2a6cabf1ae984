#pragma once

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace switchyard {

// Coarse health of one provider, derived by the health registry from its own windows.
// The resilience work replaces this with breaker states; the console shows whatever is here.
enum class ProviderState { Up, Degraded, Down };

// A copy of one provider's health, made on the engine thread and handed to the console by value.
struct ProviderHealth {
    QString id;
    QString kind; // "openai", "simulated"
    QStringList models;
    ProviderState state = ProviderState::Up;
    // Why it is in that state, as facts the console puts into words (and translates).
    int consecutiveFailures = 0;
    int recentCalls = 0; // calls in the recent window that errorRatePercent covers
    QString lastFailure; // technical detail of the last call failure, e.g. "HTTP 500"
    int inFlight = 0;
    quint64 requests = 0;          // finished calls since start
    quint64 errors = 0;            // finished calls that failed
    double errorRatePercent = 0.0; // over the recent-calls window
    // Latencies over the recent window in milliseconds; negative when there is no sample yet.
    double p50LatencyMs = -1.0;
    double p95LatencyMs = -1.0;
    double p50TimeToFirstTokenMs = -1.0;
};

struct EngineSnapshot {
    QString listenAddress;          // "127.0.0.1:8080"
    double requestsPerSecond = 0.0; // client requests accepted, over the last few seconds
    quint64 totalRequests = 0;
    int inFlight = 0;
    bool demoTrafficRunning = false;
    double demoRequestsPerSecond = 0.0;
    QList<ProviderHealth> providers;
};

} // namespace switchyard

Q_DECLARE_METATYPE(switchyard::ProviderHealth)
Q_DECLARE_METATYPE(switchyard::EngineSnapshot)
