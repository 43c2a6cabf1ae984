#pragma once

#include "config/config.h"
#include "control/engine_snapshot.h"
#include "control/routes_state.h"
#include "http/response_caching.h"
#include "telemetry/trace_feed.h"
#include "timing/loop_health.h"

#include <QObject>
#include <QTimer>
#include <chrono>
#include <functional>
#include <memory>

namespace switchyard::config {
class ConfigStore;
}
namespace switchyard::answers {
class AnswerStore;
class LocalAnswerStore;
class RedisAnswerStore;
class LocalResponseCache;
class RedisResponseCache;
} // namespace switchyard::answers
namespace switchyard::control {
class OperatorCommands;
}
namespace switchyard::timing {
class DeadlineScheduler;
}
namespace switchyard::health {
class HealthRegistry;
}
namespace switchyard::telemetry {
class TraceRing;
class RequestRecorder;
} // namespace switchyard::telemetry
namespace switchyard::upstream {
class GatewayTransport;
}
namespace switchyard::otlp {
class SpanExporter;
}
namespace switchyard::alerts {
class AlertEvaluator;
class WebhookNotifier;
} // namespace switchyard::alerts
namespace switchyard::http {
class GatewayServer;
class ResponsesService;
} // namespace switchyard::http
namespace switchyard::responses {
class ResponseStore;
class FleetResponses;
} // namespace switchyard::responses
namespace switchyard::resilience {
class AdmissionController;
class HealthProber;
class RetryBudget;
} // namespace switchyard::resilience
namespace switchyard::routing {
class ContextSample;
class Router;
} // namespace switchyard::routing
namespace switchyard::auth {
class ApiKeyStore;
class ClientAuthenticator;
} // namespace switchyard::auth
namespace switchyard::usage {
class BudgetTracker;
class UsageLedger;
} // namespace switchyard::usage
namespace switchyard::lifecycle {
class ConfigLifecycle;
struct ConfigSource;
} // namespace switchyard::lifecycle
namespace switchyard::fleet {
class FleetNode;
class SharedConfig;
class SharedHealth;
class SharedKeys;
class SharedUsage;
struct FleetStatus;
} // namespace switchyard::fleet
namespace switchyard::metrics {
class GatewayMetrics;
class LoopLagMonitor;
} // namespace switchyard::metrics

namespace switchyard {

// The router engine and its composition root: it creates every part, hands each the parts it
// borrows, and owns them all. The config store owns the running snapshot; the health registry
// owns per-endpoint state; the operator commands are the one surface the console and the admin
// API steer it through. Everything lives on the thread the engine lives on (the engine thread in
// the app, the test's thread in integration tests), driven by its event loop, with no locks.
class Engine final : public QObject {
    Q_OBJECT
public:
    explicit Engine(config::Config config, QObject *parent = nullptr);
    ~Engine() override;

    // Binds the configured listen address. Returns false and fills errorMessage on failure.
    bool listen(QString *errorMessage);
    quint16 port() const { return m_port; }
    QString listenAddress() const;

    // Follows the config's file from now on: versions, reload, write-back, the overlay, and
    // /admin/v1/config/ (lifecycle/config_lifecycle.h). On the engine's thread, after listen().
    // Without it the engine runs the config it was given and keeps no versions.
    void startConfigLifecycle(lifecycle::ConfigSource source);
    // nullptr until startConfigLifecycle.
    lifecycle::ConfigLifecycle *configLifecycle() { return m_lifecycle; }

    EngineSnapshot snapshot() const;
    // The snapshot in force; a later Apply replaces it (hold the store's pointer to keep one).
    const config::Config &config() const;
    config::ConfigStore &configStore() { return *m_store; }
    health::HealthRegistry &health() { return *m_health; }
    telemetry::TraceRing &traces() { return *m_traces; }
    // Where every finished request goes: the sinks (metrics, logs, export) register here.
    telemetry::RequestRecorder &recorder() { return *m_recorder; }
    routing::Router &router() { return *m_router; }
    const resilience::RetryBudget &retryBudget() const { return *m_retryBudget; }
    // Everything an operator can do: the console's bridge and the admin API both use it.
    control::OperatorCommands &commands() { return *m_commands; }
    // Client keys: who a request is, and the commands that issue, edit and revoke keys, which
    // the console's bridge and the admin API both call.
    auth::ClientAuthenticator &authenticator() { return *m_authenticator; }
    // Stored and background responses: the queue an operator cancels a task on, through the
    // console's bridge or the admin API.
    http::ResponsesService &responses() { return *m_responses; }
    int inFlight() const;
    // The Prometheus families GET /metrics renders.
    const metrics::GatewayMetrics &metrics() const { return *m_metrics; }
    QByteArray metricsText() const;
    // The usage ledger (a sink of the recorder, writing on its own thread) and the budgets it
    // feeds, which admission checks (docs/operations.md, "Usage, cost and budgets").
    usage::UsageLedger &usageLedger() { return *m_usageLedger; }
    // A usage report: the ledger's, widened to the fleet's when there is one (docs/fleet.md,
    // "Usage"). `done` runs on `context`'s thread; not at all if `context` is gone by then.
    void queryUsage(const usage::UsageQuery &query, QObject *context,
                    std::function<void(usage::UsageReport)> done);
    usage::BudgetTracker &budgets() { return *m_budgets; }

    // The Traces page's feed, taken at each publishing tick: what finished since the last take,
    // what runs, and the watched request's new text. Finished requests are collected for it
    // once collectTraceFeed() (or startPublishing()) was called: before, nobody takes them.
    void collectTraceFeed();
    telemetry::TraceFeed takeTraceFeed();
    // A running request's trace so far, else a finished one from the ring.
    std::optional<telemetry::Trace> findTrace(const QByteArray &requestId) const;
    // The response cache's counts, as /metrics shows them.
    http::ResponseCaching::Counts responseCacheCounts() const;
    // The one request whose text the feed carries as it streams; empty watches none.
    void watchTrace(const QByteArray &requestId);
    // The OpenTelemetry export's counts (trace.otlp); all zero and not enabled when off. Any
    // thread may call it.
    telemetry::SpanExportCounts spanExportCounts() const;
    // The alert rules' evaluator: a trace sink; budgets reach it through observeBudget().
    alerts::AlertEvaluator &alerts() { return *m_alerts; }
    // The alert webhook's counts (alerts.webhook); all zero and not enabled when off.
    alerts::WebhookCounts alertWebhookCounts() const;
    // This node's fleet (docs/fleet.md); nullptr without a `fleet` section.
    fleet::FleetNode *fleet() { return m_fleet; }
    // The config version the fleet's listing shows for this node: the fleet's number in a fleet
    // that follows a config file, else the node's own.
    quint64 announcedConfigVersion() const;
    // The fleet as this node sees it; not enabled without a `fleet` section.
    fleet::FleetStatus fleetStatus() const;

public Q_SLOTS:
    // Emits snapshotReady and traceFeedReady every `interval` (100 ms keeps views at the 10 Hz
    // the design allows), from the first call on; later calls change nothing. Until then
    // nothing is built for a console: a headless gateway has none. Collects the trace feed.
    void startPublishing(std::chrono::milliseconds interval = std::chrono::milliseconds(100));
    // Turns /readyz to 503 at once; after limits.drain_delay (still serving meanwhile) stops
    // accepting new requests; emits drained() once nothing is in flight or `grace` passed since.
    void beginShutdown(std::chrono::milliseconds grace);

Q_SIGNALS:
    void snapshotReady(const switchyard::EngineSnapshot &snapshot);
    void traceFeedReady(const switchyard::telemetry::TraceFeed &feed);
    void drained(int abandonedRequests);
    // Every breaker, operator or probe-health change, as the health registry publishes it.
    void breakerEvent(const switchyard::BreakerEvent &event);
    // The engine cannot go on serving as configured (another live node of its fleet holds its
    // name): the process should stop, saying why.
    void fatalError(const QString &message);

private:
    // The queue of background Responses tasks as the console shows it.
    BackgroundQueueState backgroundQueueState() const;
    // The second half of a shutdown, once the drain delay is over.
    void stopAccepting(std::chrono::milliseconds grace);
    void checkDrained();
    // Starts, replaces or stops the alert webhook to match the config in force.
    void syncAlertWebhook(const config::Config &config);

    // Built in this order. QObjects are children, so moveToThread() takes them along; the
    // destructor deletes those that borrow others first, and the store goes last of all.
    config::ConfigStore *m_store = nullptr; // child
    // Before the limits and keys it shares; null without a `fleet` section.
    fleet::FleetNode *m_fleet = nullptr; // child
    std::unique_ptr<health::HealthRegistry> m_health;
    // Before the recorder, which borrows it as a sink, so it is destroyed after it.
    std::unique_ptr<metrics::GatewayMetrics> m_metrics;
    std::unique_ptr<telemetry::TraceRing> m_traces;
    std::unique_ptr<telemetry::RequestRecorder> m_recorder;
    class FinishedFeed;
    std::unique_ptr<FinishedFeed> m_finishedFeed;       // finished records for the next trace feed
    bool m_collectingTraceFeed = false;                 // m_finishedFeed is a recorder sink
    std::unique_ptr<otlp::SpanExporter> m_spanExporter; // a sink of m_recorder; null when off
    alerts::AlertEvaluator *m_alerts = nullptr;         // child; a sink of m_recorder
    std::unique_ptr<alerts::WebhookNotifier> m_alertWebhook; // null without alerts.webhook
    std::unique_ptr<resilience::AdmissionController> m_admission;
    std::unique_ptr<resilience::RetryBudget> m_retryBudget;
    // Client keys: those created through the admin API live in the state database.
    std::unique_ptr<auth::ApiKeyStore> m_apiKeys;
    std::unique_ptr<auth::ClientAuthenticator> m_authenticator; // a sink of m_recorder
    // The duplicate guard's answers: this node's (memory, written behind to the state database),
    // and the fleet's Redis in front of it with a `fleet` section. The server borrows one; the
    // destructor deletes the server first.
    std::unique_ptr<answers::LocalAnswerStore> m_localAnswers;
    std::unique_ptr<answers::RedisAnswerStore> m_fleetAnswers;
    // The response cache (docs/operations.md): this node's, the fleet's Redis in front of it
    // with a `fleet` section, and its stage of the request path (a sink of m_recorder, which
    // the server borrows).
    std::unique_ptr<answers::LocalResponseCache> m_localCache;
    std::unique_ptr<answers::RedisResponseCache> m_fleetCache;
    std::unique_ptr<http::ResponseCaching> m_caching;
    responses::FleetResponses *m_fleetResponses = nullptr; // child; in a fleet only
    // Stored and background responses, and the queue that runs them (docs/responses.md):
    // children, so that they move to the engine's thread; deleted after the server, the
    // service before its store.
    responses::ResponseStore *m_responseStore = nullptr;
    http::ResponsesService *m_responses = nullptr;
    fleet::SharedKeys *m_sharedKeys = nullptr;     // child; with m_fleet
    fleet::SharedUsage *m_sharedUsage = nullptr;   // child; with m_fleet, a sink of m_recorder
    fleet::SharedConfig *m_sharedConfig = nullptr; // child; with m_fleet and m_lifecycle
    fleet::SharedHealth *m_sharedHealth = nullptr; // child; with m_fleet
    routing::Router *m_router = nullptr;           // child
    // Live requests' routing contexts for the impact preview; the server fills it, the commands
    // replay it.
    std::unique_ptr<routing::ContextSample> m_contextSample;
    control::OperatorCommands *m_commands = nullptr;   // child
    upstream::GatewayTransport *m_transport = nullptr; // child; declared before the server using it
    timing::DeadlineScheduler *m_scheduler = nullptr;  // child; every request's deadlines
    timing::LoopHealth m_loopHealth; // the lag monitor writes it; executions blame timeouts by it
    http::GatewayServer *m_server = nullptr;      // child
    resilience::HealthProber *m_prober = nullptr; // child; created when probes are enabled
    QTimer m_publishTimer{this};                  // parented so moveToThread() takes it along
    QTimer m_graceTimer{this};
    // Moves breakers whose open period is over to half-open, without waiting for traffic.
    QTimer m_healthTimer{this};
    metrics::LoopLagMonitor *m_loopLag = nullptr;      // child; started with the other timers
    usage::BudgetTracker *m_budgets = nullptr;         // child
    usage::UsageLedger *m_usageLedger = nullptr;       // child; a sink of m_recorder
    lifecycle::ConfigLifecycle *m_lifecycle = nullptr; // child; deleted before the commands
    quint16 m_port = 0;
    bool m_shuttingDown = false;
};

} // namespace switchyard
