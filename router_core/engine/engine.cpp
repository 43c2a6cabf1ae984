#include "engine/engine.h"

#include "admin/alerts_admin.h"
#include "admin/config_admin.h"
#include "admin/fleet_admin.h"
#include "admin/key_admin.h"
#include "admin/provider_admin.h"
#include "admin/queue_admin.h"
#include "admin/routing_admin.h"
#include "admin/trace_admin.h"
#include "admin/usage_admin.h"
#include "alerts/alert_evaluator.h"
#include "alerts/webhook_notifier.h"
#include "answers/local_answer_store.h"
#include "answers/redis_answer_store.h"
#include "answers/redis_response_cache.h"
#include "auth/client_authenticator.h"
#include "config/config_store.h"
#include "control/operator_commands.h"
#include "fleet/fleet_node.h"
#include "fleet/shared_agents.h"
#include "fleet/shared_config.h"
#include "fleet/shared_health.h"
#include "fleet/shared_keys.h"
#include "fleet/shared_spend.h"
#include "fleet/shared_usage.h"
#include "health/health_registry.h"
#include "http/gateway_server.h"
#include "http/responses_service.h"
#include "lifecycle/config_lifecycle.h"
#include "limits/fleet_quota.h"
#include "metrics/gateway_metrics.h"
#include "metrics/loop_lag_monitor.h"
#include "otlp/span_exporter.h"
#include "resilience/admission.h"
#include "resilience/degradation.h"
#include "resilience/health_prober.h"
#include "resilience/retry_policy.h"
#include "responses/response_store.h"
#include "routing/context_sample.h"
#include "routing/router.h"
#include "routing/tier_watch.h"
#include "storage/state_database.h"
#include "telemetry/request_log.h"
#include "telemetry/request_recorder.h"
#include "timing/deadline_scheduler.h"
#include "upstream/gateway_transport.h"
#include "usage/budget_tracker.h"
#include "usage/pricing.h"
#include "usage/usage_ledger.h"

#include <QJsonObject>
#include <QLoggingCategory>
#include <QThreadPool>
#include <algorithm>

Q_LOGGING_CATEGORY(lcEngine, "switchyard.engine")

namespace switchyard {

using namespace Qt::StringLiterals;

// Collects the records of finished requests between two publishing ticks, bounded: at thousands
// of requests a second the console's list needs the newest, not all.
class Engine::FinishedFeed final : public telemetry::TraceSink {
public:
    void traceFinished(const telemetry::Trace &trace) override
    {
        if (m_records.size() == telemetry::TraceFeed::kMaxFinished) {
            m_records.removeFirst();
            ++m_leftOut;
        }
        m_records.append(trace); // the record only: spans stay in the ring
    }
    void takeInto(telemetry::TraceFeed &feed)
    {
        feed.finished = std::exchange(m_records, {});
        feed.finishedLeftOut = std::exchange(m_leftOut, 0);
    }

private:
    QList<telemetry::RequestRecord> m_records;
    quint64 m_leftOut = 0;
};

namespace {
// This node's membership of its fleet, or nullptr without a `fleet` section. Its facts are read
// at each heartbeat, once the engine is whole.
fleet::FleetNode *makeFleetNode(const config::Config &config, Engine &engine,
                                std::function<double()> requestsPerSecond)
{
    if (!config.fleet)
        return nullptr;
    return new fleet::FleetNode(
        *config.fleet, QStringLiteral(SWITCHYARD_VERSION),
        [&engine, requestsPerSecond = std::move(requestsPerSecond)] {
            fleet::NodeFacts facts;
            facts.address = engine.listenAddress();
            facts.inFlight = engine.inFlight();
            facts.requestsPerSecond = requestsPerSecond();
            facts.configVersion = engine.announcedConfigVersion();
            return facts;
        },
        &engine);
}

// Limits counted across the fleet when there is one (nullptr: the owner counts alone).
std::unique_ptr<limits::TenantQuota> quotaFor(fleet::FleetNode *fleet, const QByteArray &scope)
{
    if (!fleet)
        return nullptr;
    auto quota = std::make_unique<limits::FleetQuota>(
        fleet->link(), fleet->keyPrefix(), scope, [fleet] { return fleet->liveNodes(); },
        timing::SteadyClock::instance());
    fleet->onSync([shared = quota.get()] { shared->sync(); });
    return quota;
}

// How soon the console sees a breaker become half-open once its open period is over.
constexpr std::chrono::milliseconds kHealthTimerInterval{250};
// The alert events each console snapshot carries: the Alerts page's list.
constexpr int kAlertEventsInSnapshot = 100;
// The queue report's own number of latest failures: the console shows what the admin API does.
constexpr int kQueueFailuresInSnapshot = 50;
// The alert rules judge fail-safe answers by the record's ladder level.
static_assert(alerts::kFailSafeLevel == resilience::kFailSafeMessage);
static_assert(alerts::kCannedAnswerLevel == resilience::kCannedAnswer);
} // namespace

Engine::Engine(config::Config config, QObject *parent)
    : QObject(parent), m_store(new config::ConfigStore(std::move(config), this)),
      m_fleet(makeFleetNode(m_store->config(), *this,
                            [this] { return m_server->requestsPerSecond(); })),
      m_health(std::make_unique<health::HealthRegistry>(*m_store)),
      m_metrics(std::make_unique<metrics::GatewayMetrics>()),
      m_traces(std::make_unique<telemetry::TraceRing>(m_store->config().trace.capacity,
                                                      m_store->config().trace.maxBytes)),
      m_recorder(std::make_unique<telemetry::RequestRecorder>(*m_traces)),
      m_finishedFeed(std::make_unique<FinishedFeed>()),
      m_admission(std::make_unique<resilience::AdmissionController>(
          *m_store, timing::SteadyClock::instance(), quotaFor(m_fleet, "tenants"))),
      m_retryBudget(std::make_unique<resilience::RetryBudget>(*m_store)),
      m_apiKeys(std::make_unique<auth::ApiKeyStore>(
          storage::stateDatabasePath(m_store->config().state.directory))),
      m_authenticator(std::make_unique<auth::ClientAuthenticator>(
          *m_store, *m_apiKeys, timing::SteadyClock::instance(), quotaFor(m_fleet, "keys"))),
      m_router(new routing::Router(*m_store, *m_health, this)),
      m_contextSample(std::make_unique<routing::ContextSample>(timing::SteadyClock::instance())),
      m_commands(
          new control::OperatorCommands(*m_store, *m_health, *m_router, *m_contextSample, this)),
      m_transport(new upstream::GatewayTransport(this)),
      m_scheduler(new timing::DeadlineScheduler(timing::SteadyClock::instance(),
                                                timing::DeadlineScheduler::Drive::Timer, this)),
      m_server(new http::GatewayServer({*m_store, *m_router, *m_health, *m_recorder, *m_transport,
                                        *m_admission, *m_retryBudget, *m_scheduler, m_loopHealth,
                                        *m_authenticator, *m_contextSample},
                                       this))
{
    qRegisterMetaType<switchyard::EngineSnapshot>();
    qRegisterMetaType<switchyard::BreakerEvent>();
    qRegisterMetaType<switchyard::RoutesState>();
    qRegisterMetaType<switchyard::RouteExplanation>();
    qRegisterMetaType<switchyard::telemetry::TraceFeed>();
    qRegisterMetaType<switchyard::telemetry::Trace>();
    qRegisterMetaType<switchyard::ConfigStatus>();
    m_health->setEventSink([this](const BreakerEvent &event) {
        m_metrics->breakerChanged(event);
        emit breakerEvent(event);
    });
    m_metrics->learnNames(m_store->config());
    connect(m_store, &config::ConfigStore::replaced, this,
            [this](const std::shared_ptr<const config::Config> &snapshot) {
                m_metrics->learnNames(*snapshot);
            });
    m_recorder->addSink(m_metrics.get());
    m_loopLag = new metrics::LoopLagMonitor(
        [this](double lagSeconds) {
            const qint64 now = timing::LoopHealth::nowMs();
            m_loopHealth.recordTick(now, lagSeconds * 1000.0,
                                    now + qint64(metrics::LoopLagMonitor::kInterval.count()));
            m_metrics->loopLagObserved(lagSeconds);
        },
        this);
    m_server->setMetricsSource([this] { return metricsText(); });
    answers::LocalStoreOptions answerOptions;
    answerOptions.databasePath = storage::stateDatabasePath(m_store->config().state.directory);
    answerOptions.maxAnswers = m_store->config().idempotency.maxAnswers;
    m_localAnswers = std::make_unique<answers::LocalAnswerStore>(answerOptions);
    if (m_fleet)
        m_fleetAnswers = std::make_unique<answers::RedisAnswerStore>(
            m_fleet->link(), m_fleet->keyPrefix(), *m_localAnswers);
    responses::ResponseStore::Options responseOptions;
    // In a fleet the records are Redis's (docs/fleet.md, "The queue"): this node keeps in memory
    // the copies it works with.
    if (!m_fleet)
        responseOptions.databasePath = answerOptions.databasePath;
    responseOptions.retention = m_store->config().responses.retention;
    responseOptions.maxBytes = m_store->config().responses.maxStoredBytes;
    m_responseStore =
        new responses::ResponseStore(responseOptions, timing::SteadyClock::instance(), this);
    m_responses = new http::ResponsesService(*m_responseStore, *m_store,
                                             timing::SteadyClock::instance(), this);
    m_server->setResponses(m_responses);
    if (m_fleet) {
        m_fleetResponses = new responses::FleetResponses(m_fleet->link(), m_fleet->keyPrefix(),
                                                         m_fleet->config().node.toUtf8(), this);
        m_responses->setFleet(m_fleetResponses);
        m_fleet->onSync([responses = m_responses] { responses->fleetTick(); });
    }
    m_server->setAnswerStore(m_fleetAnswers
                                 ? static_cast<answers::AnswerStore *>(m_fleetAnswers.get())
                                 : m_localAnswers.get());
    const auto cacheBounds = [](const config::Config &config) {
        return answers::CacheBounds{config.responseCache.maxEntries, config.responseCache.maxBytes};
    };
    m_localCache = std::make_unique<answers::LocalResponseCache>(cacheBounds(m_store->config()));
    if (m_fleet)
        m_fleetCache = std::make_unique<answers::RedisResponseCache>(
            m_fleet->link(), m_fleet->keyPrefix(), *m_localCache, cacheBounds(m_store->config()));
    m_caching = std::make_unique<http::ResponseCaching>(
        m_fleetCache ? static_cast<answers::ResponseCache &>(*m_fleetCache) : *m_localCache);
    m_recorder->addSink(m_caching.get());
    m_server->setResponseCaching(m_caching.get());
    connect(m_store, &config::ConfigStore::replaced, this,
            [answers = m_localAnswers.get(), responses = m_responseStore, queue = m_responses,
             cache = &m_caching->store(),
             cacheBounds](const std::shared_ptr<const config::Config> &snapshot) {
                answers->setMaxAnswers(snapshot->idempotency.maxAnswers);
                cache->setLimits(cacheBounds(*snapshot));
                responses->setBounds(snapshot->responses.retention,
                                     snapshot->responses.maxStoredBytes);
                queue->configChanged(); // more workers take waiting tasks at once
            });
    // The logs: a line per finished request, and tiers going down and up with their endpoints.
    m_recorder->addSink(&telemetry::requestLog());
    connect(this, &Engine::breakerEvent, this,
            [tiers = std::make_shared<routing::TierWatch>(*m_store, *m_health)] {
                tiers->endpointStateChanged();
            });
    connect(&m_healthTimer, &QTimer::timeout, this, [this] { m_health->updateTimedStates(); });
    if (m_store->config().resilience.probes.enabled)
        m_prober =
            new resilience::HealthProber(*m_store, *m_health, *m_transport, *m_scheduler, this);
    admin::registerProviderAdmin(m_server->admin(), *m_commands);
    admin::registerRoutingAdmin(m_server->admin(), *m_commands);
    admin::registerTraceAdmin(m_server->admin(), *m_recorder);
    admin::registerKeyAdmin(m_server->admin(), *m_authenticator, *m_store);
    m_recorder->addSink(m_authenticator.get()); // tokens per minute are charged per request
    if (m_fleet) {
        m_sharedKeys = new fleet::SharedKeys(*m_fleet, *m_apiKeys, this);
        new fleet::SharedAgents(*m_fleet, *m_commands, *m_router, *m_health,
                                timing::SteadyClock::instance(), this);
        m_sharedHealth = new fleet::SharedHealth(*m_fleet, *m_health, this);
        connect(m_fleet, &fleet::FleetNode::nameTaken, this, &Engine::fatalError);
    }
    admin::registerFleetAdmin(m_server->admin(), [this] { return fleetStatus(); });
    admin::registerQueueAdmin(m_server->admin(), *m_responses);
    // The ledger: a row per finished request, written by its own thread; the budgets it feeds
    // are checked at admission.
    m_budgets = new usage::BudgetTracker(*m_store, timing::SteadyClock::instance(), this);
    if (m_fleet)
        new fleet::SharedSpend(*m_fleet, *m_budgets, this); // before the ledger seeds the spend
    usage::LedgerOptions ledgerOptions;
    ledgerOptions.databasePath = storage::stateDatabasePath(m_store->config().state.directory);
    m_usageLedger =
        new usage::UsageLedger(*m_budgets, ledgerOptions, timing::SteadyClock::instance(), this);
    m_recorder->addSink(m_usageLedger);
    if (m_fleet) {
        m_sharedUsage = new fleet::SharedUsage(*m_fleet, *m_usageLedger, this);
        m_recorder->addSink(m_sharedUsage); // after the ledger: it reads what the ledger holds
    }
    // Each request is priced once, by the table in force as it finishes, before any sink reads
    // it: the trace, the ledger and the budgets see the same cost.
    m_recorder->setPricer([store = m_store](telemetry::RequestRecord &record) {
        usage::priceRecord(record, store->config().usage.pricing);
    });
    m_admission->setSpendCheck([budgets = m_budgets](const QString &tenant, const QString &keyId) {
        return budgets->refusal(tenant, keyId);
    });
    admin::UsageWidening widen;
    if (m_sharedUsage) {
        widen = [shared = m_sharedUsage](usage::UsageReport report,
                                         std::function<void(usage::UsageReport)> done) {
            shared->complete(std::move(report), std::move(done));
        };
    }
    admin::registerUsageAdmin(m_server->admin(), *m_usageLedger, *m_budgets, this,
                              timing::SteadyClock::instance(), widen);
    connect(&m_publishTimer, &QTimer::timeout, this, [this] {
        emit snapshotReady(snapshot());
        emit traceFeedReady(takeTraceFeed());
    });
    m_graceTimer.setSingleShot(true);
    connect(&m_graceTimer, &QTimer::timeout, this, [this] {
        const int abandoned = inFlight();
        qCWarning(lcEngine) << "shutdown grace period over;" << abandoned
                            << "request(s) still in flight are abandoned";
        emit drained(abandoned);
    });
    connect(m_server, &http::GatewayServer::inFlightChanged, this, &Engine::checkDrained);
    // Alerts: every finished request into the evaluator's windows; raises and clears to the
    // webhook when there is one.
    m_alerts = new alerts::AlertEvaluator(*m_store, timing::SteadyClock::instance(), this);
    m_recorder->addSink(m_alerts);
    syncAlertWebhook(m_store->config());
    connect(m_store, &config::ConfigStore::replaced, this,
            [this](const std::shared_ptr<const config::Config> &snapshot) {
                syncAlertWebhook(*snapshot);
            });
    connect(m_alerts, &alerts::AlertEvaluator::alertEvent, this,
            [this](const alerts::AlertEvent &event) {
                if (m_alertWebhook)
                    m_alertWebhook->notify(event);
            });
    admin::registerAlertsAdmin(m_server->admin(), *m_alerts,
                               [this] { return alertWebhookCounts(); });
    // The budget_used rule reads each budget's spent share: at once when it crosses a 10 % step,
    // and on the health timer too, so a new day or month (spend back to zero) clears it.
    connect(m_budgets, &usage::BudgetTracker::fractionStepCrossed, m_alerts,
            [alerts = m_alerts](const usage::BudgetStatus &status, int) {
                alerts->observeBudget(u"%1 (%2)"_s.arg(status.name, status.window),
                                      status.fraction());
            });
    // The health tick's reading is the whole list: a budget a reload removed or renamed leaves
    // it, and its alert clears.
    connect(&m_healthTimer, &QTimer::timeout, m_alerts, [this] {
        QList<QPair<QString, double>> readings;
        for (const usage::BudgetStatus &status : m_budgets->budgets())
            readings.append({u"%1 (%2)"_s.arg(status.name, status.window), status.fraction()});
        m_alerts->observeBudgets(readings);
    });
    if (const auto &otlp = m_store->config().trace.otlp) {
        m_spanExporter = std::make_unique<otlp::SpanExporter>(*otlp, otlp::makeCurlPoster(*otlp));
        m_recorder->addSink(m_spanExporter.get());
        qCInfo(lcEngine).noquote()
            << "exporting spans to" << otlp->tracesUrl().toString(QUrl::RemoveUserInfo)
            << "with sampling ratio" << otlp->samplingRatio;
    }
}

Engine::~Engine()
{
    // Probes abort their calls on destruction, like the server's exchanges below.
    delete m_prober;
    m_prober = nullptr;
    // The server's open exchanges abort their upstream calls on destruction: delete it while
    // the transport, the registry and the retry budget are still alive.
    delete m_server;
    m_server = nullptr;
    // Background runs ended with the server; what the store holds is on disk once it is gone.
    delete m_responses;
    m_responses = nullptr;
    delete m_responseStore;
    m_responseStore = nullptr;
    // No request finishes any more: send what the export still holds, within its bound.
    if (m_spanExporter) {
        m_recorder->removeSink(m_spanExporter.get());
        m_spanExporter.reset();
    }
    // Every finished request is in the ledger: write what it holds, then stop its thread.
    if (m_sharedUsage)
        m_recorder->removeSink(m_sharedUsage);
    m_recorder->removeSink(m_usageLedger);
    m_recorder->removeSink(m_caching.get());
    m_admission->setSpendCheck({});
    delete m_usageLedger;
    m_usageLedger = nullptr;
    delete m_sharedConfig; // it follows the lifecycle
    m_sharedConfig = nullptr;
    delete m_lifecycle; // it is the commands' config recorder
    m_lifecycle = nullptr;
    m_recorder->removeSink(m_alerts);
    m_alertWebhook.reset();
    m_recorder->removeSink(m_authenticator.get());
    delete m_commands;
    m_commands = nullptr;
    delete m_router;
    m_router = nullptr;
}

bool Engine::listen(QString *errorMessage)
{
    const config::ServerConfig &server = config().server;
    if (const QString problem = auth::exposureProblem(config()); !problem.isEmpty()) {
        *errorMessage = problem;
        return false;
    }
    // Opened here, on the engine's own thread: a database connection belongs to its thread.
    if (const QString error = m_apiKeys->open(); !error.isEmpty()) {
        if (!m_apiKeys->unavailableReason().isEmpty())
            qCCritical(lcEngine).noquote()
                << "API keys created through the admin API are unavailable:" << error
                << "- every request without a key from the config file is refused with 503 "
                   "`keys_unavailable` until the state database is repaired";
        else
            qCWarning(lcEngine).noquote()
                << "API keys cannot be created through the admin API:" << error
                << "- none was ever stored, so requests are checked against the config "
                   "file's keys alone";
    }
    // The answers earlier runs kept for the duplicate guard; without the database the guard
    // keeps them in memory (the store logs why).
    m_localAnswers->open();
    // Stored responses and the background tasks an earlier run left queued or running.
    m_responseStore->open();
    m_port = m_server->listenOn(server.listenHost, server.listenPort, errorMessage);
    if (m_port == 0)
        return false;
    m_responses->recover();
    if (auth::exposedWithoutTls(config()))
        qCWarning(lcEngine).noquote()
            << "listening on" << listenAddress()
            << "for other machines in plain HTTP: API keys and prompts cross the network "
               "readable; configure `tls` (docs/operations.md, \"TLS\")";
    qCInfo(lcEngine).noquote() << "listening on" << listenAddress() << "with"
                               << config().providers.size() << "provider(s)";
    // Started here rather than in the constructor: listen() runs on the engine's own thread,
    // and timers belong to the thread that starts them.
    m_healthTimer.start(kHealthTimerInterval);
    m_loopLag->start();
    m_router->start();
    if (m_prober)
        m_prober->start();
    m_alerts->start();
    if (m_fleet) {
        m_fleet->start();
        m_sharedHealth->start();
    }
    return true;
}

void Engine::startConfigLifecycle(lifecycle::ConfigSource source)
{
    if (m_lifecycle)
        return;
    m_lifecycle = new lifecycle::ConfigLifecycle(std::move(source), *m_store, *m_commands, this);
    m_lifecycle->start();
    admin::registerConfigAdmin(m_server->admin(), *m_lifecycle);
    if (m_fleet)
        m_sharedConfig = new fleet::SharedConfig(*m_fleet, *m_lifecycle, this);
}

namespace {

// Carries a fleet usage report from the engine thread to whoever asked, on its own thread: made
// and connected there, so a requester deleted meanwhile only drops the queued call.
class UsageCourier final : public QObject {
    Q_OBJECT
Q_SIGNALS:
    void ready(const switchyard::usage::UsageReport &report);
};

} // namespace

void Engine::queryUsage(const usage::UsageQuery &query, QObject *context,
                        std::function<void(usage::UsageReport)> done)
{
    if (!m_sharedUsage) {
        m_usageLedger->query(query, context, std::move(done)); // straight back from the ledger
        return;
    }
    auto courier = std::make_shared<UsageCourier>();
    connect(
        courier.get(), &UsageCourier::ready, context,
        [done = std::move(done)](const usage::UsageReport &report) { done(report); },
        Qt::QueuedConnection);
    courier->moveToThread(thread());
    // The ledger's report comes to the engine thread, where the link to Redis lives.
    m_usageLedger->query(query, this, [this, courier](usage::UsageReport report) {
        m_sharedUsage->complete(
            std::move(report), [courier](usage::UsageReport whole) { emit courier->ready(whole); });
    });
}

fleet::FleetStatus Engine::fleetStatus() const
{
    if (!m_fleet)
        return {};
    fleet::FleetStatus status = m_fleet->status();
    if (m_sharedConfig) {
        status.configVersion = m_sharedConfig->fleetVersion();
        status.configProblem = m_sharedConfig->problem();
    }
    m_sharedHealth->fill(status);
    return status;
}

quint64 Engine::announcedConfigVersion() const
{
    if (m_sharedConfig)
        return m_sharedConfig->fleetVersion();
    return m_lifecycle ? m_lifecycle->runningVersion() : 0;
}

const config::Config &Engine::config() const
{
    return m_store->config();
}

QString Engine::listenAddress() const
{
    return config::formatListenAddress(config().server.listenHost, m_port);
}

int Engine::inFlight() const
{
    return m_server ? m_server->inFlight() : 0;
}

telemetry::SpanExportCounts Engine::spanExportCounts() const
{
    return m_spanExporter ? m_spanExporter->counts() : telemetry::SpanExportCounts{};
}

alerts::WebhookCounts Engine::alertWebhookCounts() const
{
    return m_alertWebhook ? m_alertWebhook->counts() : alerts::WebhookCounts{};
}

void Engine::syncAlertWebhook(const config::Config &config)
{
    const std::optional<config::AlertWebhookConfig> &wanted = config.alerts.webhook;
    if (m_alertWebhook && wanted && m_alertWebhook->config() == *wanted)
        return;
    // Stopping the old one cuts its post in flight short and drops its queue, but libcurl may
    // take up to a second to notice: that wait happens on a pool thread, not this one.
    if (m_alertWebhook) {
        QThreadPool::globalInstance()->start(
            [retired = std::shared_ptr<alerts::WebhookNotifier>(std::move(m_alertWebhook))] {});
    }
    if (!wanted)
        return;
    m_alertWebhook =
        std::make_unique<alerts::WebhookNotifier>(*wanted, alerts::makeCurlWebhookPoster(*wanted));
    qCInfo(lcEngine).noquote() << "sending alerts to the webhook at"
                               << alerts::shownUrl(wanted->url);
}

EngineSnapshot Engine::snapshot() const
{
    EngineSnapshot snapshot;
    snapshot.listenAddress = listenAddress();
    snapshot.exposedWithoutTls = auth::exposedWithoutTls(config());
    snapshot.tlsEnabled = config().tls.enabled();
    for (const auth::ClientKey &key : m_authenticator->keys(config())) {
        snapshot.clientKeys.append({key.id, key.tenant, key.source == auth::KeySource::File,
                                    key.limits.requestsPerMinute, key.limits.tokensPerMinute,
                                    key.limits.models, key.createdAtUtc});
    }
    snapshot.requestsPerSecond = m_server->requestsPerSecond();
    snapshot.totalRequests = m_server->totalRequests();
    if (m_fleet) {
        const fleet::FleetStatus fleet = fleetStatus();
        snapshot.fleet = {true,          fleet.fleet,          fleet.node,
                          fleet.redis,   fleet.linkUp,         fleet.linkDownSinceMs,
                          fleet.problem, m_fleet->liveNodes(), {}};
        for (const fleet::FleetMember &member : fleet.members) {
            snapshot.fleet.members.append(
                {member.node, member.address, member.version, member.configVersion, member.inFlight,
                 member.requestsPerSecond, member.startedMs, member.announcedMs, member.self,
                 member.agents, member.endpoints, member.endpointsPublishedMs});
        }
    }
    snapshot.inFlight = m_server->inFlight();
    snapshot.waitingToStart = m_server->waitingToStart();
    snapshot.loopLagMs = m_loopLag->lastLagMs();
    snapshot.connections = m_server->connectionCounts();
    snapshot.spanExport = spanExportCounts();
    snapshot.providers = m_health->snapshot();
    snapshot.agents = m_commands->agentStates();
    snapshot.recentBreakerEvents = m_health->recentEvents();
    snapshot.usageLedger = m_usageLedger->state();
    snapshot.budgets = m_budgets->budgets();
    if (m_lifecycle)
        snapshot.config = m_lifecycle->status();
    snapshot.alerts = m_alerts->state(kAlertEventsInSnapshot);
    snapshot.alerts.webhook = alertWebhookCounts();
    snapshot.backgroundQueue = backgroundQueueState();
    return snapshot;
}

BackgroundQueueState Engine::backgroundQueueState() const
{
    const http::ResponsesService::QueueCounts counts = m_responses->counts();
    const config::ResponsesConfig &config = this->config().responses;
    BackgroundQueueState state;
    state.workers = config.workers;
    state.running = counts.running;
    state.queuedHigh = counts.queued[int(responses::Priority::High)];
    state.queuedNormal = counts.queued[int(responses::Priority::Normal)];
    state.queuedLow = counts.queued[int(responses::Priority::Low)];
    state.oldestQueuedAgeMs = counts.oldestQueuedAgeMs;
    state.completed = counts.completed;
    state.incomplete = counts.incomplete;
    state.failed = counts.failed;
    state.cancelled = counts.cancelled;
    state.timedOut = counts.timedOut;
    state.storedResponses = counts.stored;
    state.storedBytes = counts.storedBytes;
    state.maxStoredBytes = config.maxStoredBytes;
    const auto listing = [](const http::ResponsesService::TaskView &task) {
        const QJsonObject error = task.error.toObject();
        return BackgroundTaskListing{QString::fromLatin1(task.id),
                                     task.tenant,
                                     task.keyId,
                                     task.model,
                                     responses::priorityName(task.priority),
                                     responses::statusName(task.status),
                                     task.createdAtMs,
                                     task.finishedAtMs,
                                     task.waitedMs,
                                     task.runningMs,
                                     task.runs,
                                     error.value(u"code"_s).toString(),
                                     error.value(u"message"_s).toString()};
    };
    const http::ResponsesService::TaskList list =
        m_responses->taskList(BackgroundQueueState::kMaxTasks, kQueueFailuresInSnapshot);
    state.tasksTotal = list.tasksTotal;
    for (const http::ResponsesService::TaskView &task : list.tasks)
        state.tasks.append(listing(task));
    for (const http::ResponsesService::TaskView &task : list.recentFailures)
        state.recentFailures.append(listing(task));
    if (m_responses->inFleet()) {
        // The fleet's queue as last read (each second): the dead letters and who runs what.
        const responses::FleetQueueReport &fleet = m_responses->fleetReport();
        state.fleet = true;
        QMap<QString, int> byNode;
        for (const auto &[id, node] : fleet.running)
            ++byNode[node];
        for (auto it = byNode.cbegin(); it != byNode.cend(); ++it)
            state.runningByNode.append({it.key(), it.value()});
        state.deadLettered = fleet.deadLettered;
        for (const responses::DeadLetter &letter : fleet.deadLetters)
            state.deadLetters.append({QString::fromLatin1(letter.id), letter.tenant, letter.model,
                                      letter.priority, letter.runs, letter.node, letter.atMs,
                                      letter.errorCode, letter.errorMessage});
    }
    return state;
}

http::ResponseCaching::Counts Engine::responseCacheCounts() const
{
    return m_caching->counts();
}

QByteArray Engine::metricsText() const
{
    metrics::ScrapeState state;
    state.inFlight = m_server->inFlight();
    state.waitingToStart = m_server->waitingToStart();
    state.connections = m_server->connectionCounts();
    state.providers = m_health->snapshot();
    state.spanExport = spanExportCounts();
    const QHash<QString, execution::ShadowCounts> &shadows = m_server->shadowCounts();
    for (auto it = shadows.cbegin(); it != shadows.cend(); ++it)
        state.shadows.append({it.key(), it->sent, it->failed, it->dropped});
    std::sort(state.shadows.begin(), state.shadows.end(),
              [](const metrics::ShadowScrape &a, const metrics::ShadowScrape &b) {
                  return a.route < b.route;
              });
    if (m_fleet) {
        const fleet::FleetStatus fleet = m_fleet->status();
        state.fleet = {true,
                       fleet.linkUp,
                       fleet.linkDownSinceMs,
                       m_fleet->liveNodes(),
                       fleet.commandsSent,
                       fleet.commandsFailed};
    }
    const http::ResponsesService::QueueCounts queue = m_responses->counts();
    metrics::QueueScrape &scrape = state.queue;
    scrape.enabled = true;
    std::copy(std::begin(queue.queued), std::end(queue.queued), std::begin(scrape.queued));
    scrape.running = queue.running;
    scrape.oldestQueuedAgeSeconds = double(queue.oldestQueuedAgeMs) / 1000.0;
    scrape.outcomes[0] = queue.completed;
    scrape.outcomes[1] = queue.incomplete;
    scrape.outcomes[2] = queue.failed;
    scrape.outcomes[3] = queue.cancelled;
    scrape.outcomes[4] = queue.timedOut;
    scrape.stored = queue.stored;
    scrape.storedBytes = queue.storedBytes;
    scrape.expiredByAge = queue.expiredByAge;
    scrape.expiredByBytes = queue.expiredByBytes;
    scrape.fleet = queue.fleet;
    scrape.deadLetters = queue.deadLetters;
    scrape.takenOver = queue.takenOver;
    scrape.deadLettered = queue.deadLettered;
    const http::ResponseCaching::Counts cache = responseCacheCounts();
    state.responseCache = {
        cache.hits,          cache.misses,        cache.bypassed,   cache.store.evictedByBound,
        cache.store.expired, cache.store.entries, cache.store.bytes};
    return m_metrics->render(state);
}

void Engine::startPublishing(std::chrono::milliseconds interval)
{
    if (m_publishTimer.isActive())
        return;
    collectTraceFeed();
    m_publishTimer.start(interval);
    emit snapshotReady(snapshot());
}

void Engine::beginShutdown(std::chrono::milliseconds grace)
{
    if (m_shuttingDown)
        return;
    m_shuttingDown = true;
    m_server->beginDraining();
    const std::chrono::milliseconds delay = m_store->config().server.drainDelay;
    if (delay.count() <= 0) {
        stopAccepting(grace);
        return;
    }
    // Still accepting and serving: a request a load balancer sends before its check has seen
    // /readyz fail must be answered, not refused or reset.
    qCInfo(lcEngine).noquote() << "draining: /readyz answers 503; still serving for"
                               << delay.count() << "ms (limits.drain_delay)";
    QTimer::singleShot(delay, this, [this, grace] { stopAccepting(grace); });
}

void Engine::stopAccepting(std::chrono::milliseconds grace)
{
    m_server->stopAccepting();
    qCInfo(lcEngine) << "stopped accepting;" << inFlight() << "request(s) in flight";
    m_graceTimer.start(grace);
    checkDrained();
}

void Engine::checkDrained()
{
    if (!m_shuttingDown || inFlight() > 0 || !m_graceTimer.isActive())
        return;
    m_graceTimer.stop();
    emit drained(0);
}

void Engine::collectTraceFeed()
{
    if (std::exchange(m_collectingTraceFeed, true))
        return;
    m_recorder->addSink(m_finishedFeed.get());
}

telemetry::TraceFeed Engine::takeTraceFeed()
{
    telemetry::TraceFeed feed;
    m_finishedFeed->takeInto(feed);
    feed.runningCount = m_recorder->liveCount();
    feed.watchedId = m_recorder->watched();
    for (const telemetry::TraceBuilder *builder :
         m_recorder->newestLive(telemetry::TraceFeed::kMaxRunning)) {
        // The record and spans only (shared, not copied, but for the choice's line); chunk
        // arrivals for the watched one.
        const telemetry::Trace &running = builder->trace();
        telemetry::Trace trace;
        static_cast<telemetry::RequestRecord &>(trace) = running;
        trace.spans = builder->spansSoFar();
        trace.explainSteps = running.explainSteps;
        trace.chunkCount = running.chunkCount;
        trace.chunkBytes = running.chunkBytes;
        trace.method = running.method;
        trace.path = running.path;
        if (builder->watched())
            trace.chunks = running.chunks;
        trace.totalMicros = builder->elapsedMicros(); // so far
        feed.running.append(std::move(trace));
    }
    feed.watchedData = m_recorder->takeWatchedData();
    return feed;
}

std::optional<telemetry::Trace> Engine::findTrace(const QByteArray &requestId) const
{
    return m_recorder->find(requestId);
}

void Engine::watchTrace(const QByteArray &requestId)
{
    m_recorder->watch(requestId);
}

} // namespace switchyard

#include "engine.moc"
