#pragma once

#include "health/endpoint_state.h"
#include "metrics/label_dictionary.h"
#include "metrics/metric_families.h"
#include "telemetry/connection_counts.h"
#include "telemetry/request_recorder.h"
#include "telemetry/span_export_counts.h"

#include <QByteArray>
#include <QList>

namespace switchyard::config {
struct Config;
}

namespace switchyard::metrics {

// What a scrape reads from the parts that own it at that moment, rather than a second copy kept
// here: breakers from the health registry, in-flight from the server, connections from the
// listener, the loop's lateness from its monitor.
// The fleet link as /metrics shows it (docs/fleet.md); rendered only in a fleet.
struct FleetScrape {
    bool enabled = false;
    bool linkUp = false;
    qint64 linkDownSinceMs = 0; // UTC; 0 while up
    int liveNodes = 0;
    quint64 commandsSent = 0;
    quint64 commandsFailed = 0;
};

// Background responses and stored responses (docs/responses.md), read from the queue at a scrape.
struct QueueScrape {
    bool enabled = false;
    int queued[3] = {0, 0, 0}; // high, normal, low
    int running = 0;
    double oldestQueuedAgeSeconds = 0;
    // Finished tasks since start by outcome: completed, incomplete, failed, cancelled, timed_out.
    quint64 outcomes[5] = {0, 0, 0, 0, 0};
    int stored = 0;
    qint64 storedBytes = 0;
    quint64 expiredByAge = 0;
    quint64 expiredByBytes = 0;
    // In a fleet: the depth and age above are the fleet's (the same on every node); these are
    // the fleet's dead letters now, and this node's takeovers and dead-letterings since start.
    bool fleet = false;
    int deadLetters = 0;
    quint64 takenOver = 0;
    quint64 deadLettered = 0;
};

// Shadow calls of one route since start (docs/routing.md, "Shadow traffic"), read from the
// gateway at a scrape.
struct ShadowScrape {
    QString route;
    quint64 sent = 0;
    quint64 failed = 0;
    quint64 dropped = 0;
};

// The response cache (docs/operations.md), read from its stage at a scrape. In a fleet the
// entries and bytes are the fleet's cache in Redis as of this node's last keep.
struct ResponseCacheScrape {
    quint64 hits = 0;
    quint64 misses = 0;
    quint64 bypassed = 0;
    quint64 evictedByBound = 0;
    quint64 expired = 0;
    qint64 entries = 0;
    qint64 bytes = 0;
};

struct ScrapeState {
    int inFlight = 0;
    int waitingToStart = 0; // of inFlight
    telemetry::ConnectionCounts connections;
    QList<ProviderHealth> providers;
    telemetry::SpanExportCounts spanExport; // rendered only when trace.otlp is configured
    FleetScrape fleet;
    QueueScrape queue;
    QList<ShadowScrape> shadows; // by route name, sorted
    ResponseCacheScrape responseCache;
};

// The gateway's Prometheus metrics (docs/observability.md lists every family). It reads every
// finished request as a trace sink and every breaker change as it is published, on the engine
// thread, so recording takes no lock; label values are config names and closed sets resolved to
// small ids, so a request seen before allocates nothing.
class GatewayMetrics final : public telemetry::TraceSink {
public:
    GatewayMetrics();
    ~GatewayMetrics() override;

    // The names a config snapshot declares become label values: provider ids, the public names
    // of their models, route names and tier names. Names learnt before stay, so a series keeps
    // counting across an Apply that drops and restores a name.
    void learnNames(const config::Config &config);

    void traceFinished(const telemetry::Trace &trace) override;
    void breakerChanged(const BreakerEvent &event);
    // How late the engine loop ran a due timer.
    void loopLagObserved(double seconds);

    // The text exposition of every family.
    QByteArray render(const ScrapeState &state) const;

    // The label value a name counts as: the name when configured, else the fallback.
    QString providerLabel(const QString &providerId) const;
    QString modelLabel(const QString &model) const;

private:
    // Label dictionaries: config names, learnt at apply time.
    LabelDictionary m_providers{QStringLiteral("agent")}; // unconfigured: a registered agent
    LabelDictionary m_models{QStringLiteral("unknown")};
    LabelDictionary m_routes{QStringLiteral("other")};
    LabelDictionary m_tiers{QStringLiteral("other")};
    // Closed sets, filled once.
    LabelDictionary m_statusClasses{QStringLiteral("none")};
    LabelDictionary m_operations{QStringLiteral("other")};
    LabelDictionary m_streamed{QStringLiteral("false")};
    LabelDictionary m_errorClasses{QStringLiteral("other")};
    LabelDictionary m_errorTypes{QStringLiteral("_OTHER")};
    LabelDictionary m_admissionCodes{QString()};
    LabelDictionary m_degradationLevels{QStringLiteral("0")};
    LabelDictionary m_tokenTypes{QString()};
    LabelDictionary m_breakerStates{QString()};
    LabelDictionary m_breakerCauses{QString()};
    LabelDictionary m_idempotencyOutcomes{QString()};
    LabelDictionary m_none{QString()};
    LabelDictionary m_fallbackErrors{QStringLiteral("other")};

    int m_noErrorType = 0;
    int m_inputTokens = 0;
    int m_outputTokens = 0;
    int m_cacheReadTokens = 0;
    int m_cacheWriteTokens = 0;

    CounterFamily m_requests;
    HistogramFamily m_requestDuration;
    HistogramFamily m_timeToFirstByte;
    CounterFamily m_answers;
    CounterFamily m_admissionRefusals;
    CounterFamily m_upstreamErrors;
    CounterFamily m_retries;
    CounterFamily m_failovers;
    CounterFamily m_streamContinuations;
    CounterFamily m_idempotency;
    CounterFamily m_errorFallbacks;
    CounterFamily m_tokens;
    HistogramFamily m_addedLatency;
    CounterFamily m_breakerTransitions;
    HistogramFamily m_loopLag;
    HistogramFamily m_genAiDuration;
    HistogramFamily m_genAiFirstToken;
    HistogramFamily m_genAiTokenUsage;
};

} // namespace switchyard::metrics
