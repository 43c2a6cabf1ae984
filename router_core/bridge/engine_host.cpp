#include "bridge/engine_host.h"

#include "auth/client_authenticator.h"
#include "bridge/thread_hop.h"
#include "control/operator_commands.h"
#include "engine/engine.h"
#include "eventloop/epoll_event_dispatcher.h"
#include "http/responses_service.h"
#include "lifecycle/config_lifecycle.h"
#include "lifecycle/config_overlay.h"
#include "routing/request_context.h"
#include "sim/demo_traffic.h"
#include "sim/simulator_host.h"
#include "usage/usage_ledger.h"

#include <QCoro/QCoroTask>
#include <QLoggingCategory>
#include <QMetaMethod>
#include <QPointer>
#include <QThread>

namespace switchyard {

namespace {

// The canary key a console dry run draws with when its sample has no x-request-id: fixed, so the
// live and the edited side draw the same side and a comparison shows only what the edit changed.
constexpr QByteArrayView kDryRunRequestId{"console-dry-run"};

// Runs `work` on `object`'s thread and waits for its result.
template <typename Result, typename Work>
Result runOn(QObject *object, Work work)
{
    Result result{};
    QMetaObject::invokeMethod(
        object, [&] { result = work(); }, Qt::BlockingQueuedConnection);
    return result;
}

RouteExplanation explanationOf(const std::variant<routing::Explanation, protocol::ApiError> &result)
{
    RouteExplanation explanation;
    if (const auto *error = std::get_if<protocol::ApiError>(&result)) {
        explanation.error = error->message;
        return explanation;
    }
    const auto &answer = std::get<routing::Explanation>(result);
    explanation.decision = answer.decision;
    explanation.requestId = QString::fromLatin1(answer.context.requestId);
    return explanation;
}

// The console's commands that wait for the engine's answer: ask on the engine's thread, answer
// on the bridge's. Their tasks are not kept: each coroutine ends by itself, or is dropped with
// the bridge or the engine (ThreadHop).
QCoro::Task<> explainOnEngine(EngineHost *host, Engine *engine, quint64 ticket,
                              std::optional<QList<config::RouteRule>> rules,
                              EngineBridge::HeaderList sample, QByteArray body,
                              protocol::Operation operation)
{
    ThreadHop<RouteExplanation> hop(engine, host, [engine, rules, sample, body, operation] {
        return explanationOf(engine->commands().explain(sample, body, rules, operation));
    });
    const RouteExplanation explanation = co_await hop;
    emit host->routeExplained(ticket, explanation);
}

QCoro::Task<> previewImpactOnEngine(EngineHost *host, Engine *engine, quint64 ticket,
                                    QList<config::RouteRule> rules)
{
    ThreadHop<routing::ImpactPreview> hop(engine, host, [engine, rules] {
        auto previewed = engine->commands().previewImpact(rules);
        routing::ImpactPreview preview;
        if (const auto *error = std::get_if<protocol::ApiError>(&previewed))
            preview.error = error->message;
        else
            preview = std::get<routing::ImpactPreview>(std::move(previewed));
        return preview;
    });
    const routing::ImpactPreview preview = co_await hop;
    emit host->impactPreviewed(ticket, preview);
}

QCoro::Task<> loadTraceOnEngine(EngineHost *host, Engine *engine, quint64 ticket,
                                QByteArray requestId)
{
    ThreadHop<std::optional<telemetry::Trace>> hop(
        engine, host, [engine, requestId] { return engine->findTrace(requestId); });
    const std::optional<telemetry::Trace> trace = co_await hop;
    emit host->traceLoaded(ticket, trace.has_value(), trace.value_or(telemetry::Trace{}));
}

QCoro::Task<> loadConfigVersionsOnEngine(EngineHost *host, Engine *engine, quint64 ticket)
{
    ThreadHop<QList<ConfigVersionInfo>> hop(engine, host, [engine] {
        lifecycle::ConfigLifecycle *lifecycle = engine->configLifecycle();
        return lifecycle ? lifecycle->versions() : QList<ConfigVersionInfo>();
    });
    const QList<ConfigVersionInfo> versions = co_await hop;
    emit host->configVersionsLoaded(ticket, versions);
}

QCoro::Task<> loadConfigVersionOnEngine(EngineHost *host, Engine *engine, quint64 ticket,
                                        quint64 number)
{
    ThreadHop<std::optional<ConfigVersion>> hop(engine, host, [engine, number] {
        lifecycle::ConfigLifecycle *lifecycle = engine->configLifecycle();
        return lifecycle ? lifecycle->version(number) : std::nullopt;
    });
    const std::optional<ConfigVersion> version = co_await hop;
    emit host->configVersionLoaded(ticket, version.has_value(), version.value_or(ConfigVersion{}));
}

QCoro::Task<> rollbackOnEngine(EngineHost *host, Engine *engine, quint64 ticket, quint64 number)
{
    ThreadHop<ConfigChangeResult> hop(engine, host, [engine, number] {
        lifecycle::ConfigLifecycle *lifecycle = engine->configLifecycle();
        if (!lifecycle) {
            ConfigChangeResult result;
            result.outcome = ConfigChangeResult::Outcome::NotFound;
            result.message = QStringLiteral("the engine follows no config file");
            return result;
        }
        return lifecycle->rollback(number, {ConfigChangeSource::Console, {}, {}});
    });
    const ConfigChangeResult result = co_await hop;
    emit host->configRolledBack(ticket, result);
}

QCoro::Task<> applyOnEngine(EngineHost *host, Engine *engine, QList<config::RouteRule> rules)
{
    ThreadHop<QStringList> hop(engine, host, [engine, rules] {
        return engine->commands().applyRoutes(rules, {ConfigChangeSource::Console, {}, {}});
    });
    const QStringList problems = co_await hop;
    emit host->routesApplied(problems.isEmpty(), problems);
}

// A key command's refusal as the console receives it: the admin API's error, field for field.
ClientKeyCommandResult keyCommandRefused(const QString &keyId, const protocol::ApiError &error)
{
    ClientKeyCommandResult result;
    result.keyId = keyId;
    result.error = error.message;
    result.status = error.status;
    result.errorCode = error.code;
    result.errorField = error.param;
    return result;
}

// What a command is answered without an engine (stopped, or failed to start): the console must
// not wait for an answer that never comes.
protocol::ApiError engineNotRunning()
{
    return protocol::ApiError::serviceUnavailable(
        QStringLiteral("The gateway engine is not running; start it and try again."));
}

ClientKeyCommandResult noEngine(const QString &keyId)
{
    return keyCommandRefused(keyId, engineNotRunning());
}

// A cancel's refusal as the console receives it: the admin API's error.
BackgroundTaskCommandResult taskCommandRefused(const QString &id, const protocol::ApiError &error)
{
    BackgroundTaskCommandResult result;
    result.taskId = id;
    result.error = error.message;
    result.status = error.status;
    result.errorCode = error.code;
    return result;
}

// Runs one of the authenticator's key commands (the admin API's own) on the engine's thread
// against the config in force, and answers on the bridge's.
QCoro::Task<> keyCommandOnEngine(EngineHost *host, Engine *engine, quint64 ticket,
                                 std::function<ClientKeyCommandResult(Engine &)> command)
{
    ThreadHop<ClientKeyCommandResult> hop(engine, host,
                                          [engine, command] { return command(*engine); });
    const ClientKeyCommandResult result = co_await hop;
    emit host->clientKeyCommandDone(ticket, result);
}

// The cancel of a background task, on the engine's thread, answered on the bridge's: the
// queue's own command, the one POST /admin/v1/queue/{id}/cancel runs.
// Runs one of the queue's commands on the engine's thread, where it may wait for the fleet's
// Redis, and answers on the bridge's.
using QueueCommand = std::function<void(http::ResponsesService &,
                                        std::function<void(std::optional<protocol::ApiError>)>)>;
void queueCommandOnEngine(EngineHost *host, Engine *engine, quint64 ticket, const QString &id,
                          QueueCommand command)
{
    QMetaObject::invokeMethod(engine, [engine, bridge = QPointer<EngineHost>(host), ticket, id,
                                       command = std::move(command)] {
        command(engine->responses(), [bridge, ticket, id](std::optional<protocol::ApiError> error) {
            BackgroundTaskCommandResult result;
            result.taskId = id;
            if (error)
                result = taskCommandRefused(id, *error);
            QMetaObject::invokeMethod(bridge.data(), [bridge, ticket, result] {
                if (bridge)
                    emit bridge->backgroundTaskCommandDone(ticket, result);
            });
        });
    });
}

} // namespace

EngineHost::EngineHost(config::Config config, QObject *parent)
    : EngineBridge(parent), m_startConfig(std::move(config))
{
    qRegisterMetaType<switchyard::EngineSnapshot>();
    qRegisterMetaType<switchyard::RoutesState>();
    qRegisterMetaType<switchyard::RouteExplanation>();
    qRegisterMetaType<switchyard::routing::ImpactPreview>();
    qRegisterMetaType<switchyard::usage::UsageQuery>();
    qRegisterMetaType<switchyard::usage::UsageReport>();
    qRegisterMetaType<switchyard::AgentState>();
    qRegisterMetaType<switchyard::telemetry::TraceFeed>();
    qRegisterMetaType<switchyard::telemetry::Trace>();
    qRegisterMetaType<switchyard::ConfigVersionInfo>();
    qRegisterMetaType<QList<switchyard::ConfigVersionInfo>>();
    qRegisterMetaType<switchyard::ConfigVersion>();
    qRegisterMetaType<switchyard::ConfigChangeResult>();
    qRegisterMetaType<switchyard::ClientKeyCommandResult>();
    qRegisterMetaType<switchyard::BackgroundTaskCommandResult>();
}

EngineHost::~EngineHost()
{
    stopThreads();
}

bool EngineHost::start(QString *errorMessage)
{
    if (!m_startConfig) {
        *errorMessage = QStringLiteral("the engine has already been started");
        return false;
    }
    config::Config config = std::move(*m_startConfig);
    m_startConfig.reset();

    m_simulatorThread = new QThread(this);
    m_simulatorThread->setObjectName(QStringLiteral("switchyard-simulator"));
    m_simulatorThread->start();
    m_engineThread = new QThread(this);
    m_engineThread->setObjectName(QStringLiteral("switchyard-engine"));
    // The engine thread holds every client and upstream connection: its dispatcher must cost
    // per ready descriptor, not per open one (docs/architecture.md). The simulator's and the
    // console's threads keep Qt's own.
    if (QAbstractEventDispatcher *dispatcher = eventloop::createEngineEventDispatcher())
        m_engineThread->setEventDispatcher(dispatcher);
    m_engineThread->start();

    // Simulated providers first: their ports become the base URLs the engine calls.
    m_simulator = new sim::SimulatorHost;
    m_simulator->moveToThread(m_simulatorThread);
    QString simulatorError;
    const auto urls = runOn<QHash<QString, QUrl>>(
        m_simulator, [&] { return m_simulator->start(config.providers, &simulatorError); });
    if (!simulatorError.isEmpty()) {
        *errorMessage = simulatorError;
        return false;
    }
    sim::applySimulatorUrls(config, urls);

    // What the demo traffic needs, read before the engine's store takes the config over.
    QList<sim::DemoModel> models = sim::demoModelsOf(config.providers);
    const QString listenHost = config.server.listenHost;

    m_engine = new Engine(std::move(config));
    // Knobs travel engine thread -> simulator thread as queued calls; the simulator outlives
    // the engine (stopThreads deletes the engine first), so the pointer stays valid.
    m_engine->commands().setSimulatorControl(
        [simulator = m_simulator](const QString &providerId, const SimulatorKnobs &knobs) {
            QMetaObject::invokeMethod(simulator, [simulator, providerId, knobs] {
                simulator->setKnobs(providerId, knobs);
            });
        });
    m_engine->moveToThread(m_engineThread);
    QString listenError;
    if (!runOn<bool>(m_engine, [&] { return m_engine->listen(&listenError); })) {
        *errorMessage = listenError;
        return false;
    }
    m_port = m_engine->port();
    if (m_followedFile) {
        // Simulated providers a reload adds start on the simulator thread, as at start; those
        // it keeps keep their port.
        auto knownUrls = std::make_shared<QHash<QString, QUrl>>(urls);
        sim::SimulatorHost *simulator = m_simulator;
        lifecycle::ConfigSource source{m_followedFile->path,
                                       m_followedFile->texts.fileText,
                                       m_followedFile->texts.runningText,
                                       m_followedFile->texts.overlayPath,
                                       config::processEnvironment(),
                                       {}};
        source.finish = [overrides = m_followedFile->overrides, knownUrls,
                         simulator](config::Config &next) {
            if (overrides)
                overrides(next);
            QList<config::ProviderConfig> added;
            for (const config::ProviderConfig &provider : next.providers) {
                if (provider.kind == config::ProviderKind::Simulated &&
                    !knownUrls->contains(provider.id))
                    added.append(provider);
            }
            QList<config::ConfigError> errors;
            if (!added.isEmpty()) {
                QString error;
                QHash<QString, QUrl> started;
                QMetaObject::invokeMethod(
                    simulator, [&] { started = simulator->start(added, &error); },
                    Qt::BlockingQueuedConnection);
                if (!error.isEmpty())
                    errors.append({added.constFirst().where, error});
                knownUrls->insert(started);
            }
            sim::applySimulatorUrls(next, *knownUrls);
            return errors;
        };
        runOn<bool>(m_engine, [&] {
            m_engine->startConfigLifecycle(std::move(source));
            return true;
        });
    }
    m_listenAddress = config::formatListenAddress(listenHost, m_port);
    m_routesState =
        runOn<RoutesState>(m_engine, [&] { return m_engine->commands().routesState(); });
    connect(&m_engine->commands(), &control::OperatorCommands::routesChanged, this,
            [this](const RoutesState &state) {
                m_routesState = state;
                emit routesChanged(state);
            });
    m_lastSnapshot.listenAddress = listenAddress();

    const QString host = listenHost == QLatin1String("0.0.0.0") || listenHost == QLatin1String("::")
                             ? QStringLiteral("127.0.0.1")
                             : listenHost;
    QUrl gateway;
    gateway.setScheme(QStringLiteral("http"));
    gateway.setHost(host);
    gateway.setPort(m_port);
    gateway.setPath(QStringLiteral("/"));
    m_demoTraffic = new sim::DemoTraffic(gateway, std::move(models));
    m_demoTraffic->moveToThread(m_simulatorThread);

    connect(m_engine, &Engine::snapshotReady, this, [this](const EngineSnapshot &snapshot) {
        m_lastSnapshot = snapshot;
        m_lastSnapshot.demoTrafficRunning = m_demoRunning;
        m_lastSnapshot.demoRequestsPerSecond = m_demoRate;
        emit snapshotUpdated(m_lastSnapshot);
    });
    connect(m_engine, &Engine::traceFeedReady, this, &EngineBridge::traceFeedUpdated);
    connect(m_engine, &Engine::drained, this, [this] { emit stopped(); });
    connect(m_engine, &Engine::fatalError, this, &EngineHost::fatalError);
    if (isSignalConnected(QMetaMethod::fromSignal(&EngineBridge::snapshotUpdated)) ||
        isSignalConnected(QMetaMethod::fromSignal(&EngineBridge::traceFeedUpdated)))
        startPublishing();
    return true;
}

void EngineHost::connectNotify(const QMetaMethod &signal)
{
    if (signal == QMetaMethod::fromSignal(&EngineBridge::snapshotUpdated) ||
        signal == QMetaMethod::fromSignal(&EngineBridge::traceFeedUpdated))
        startPublishing();
}

void EngineHost::startPublishing()
{
    if (m_publishing || !m_engine)
        return; // already on, or not started: start() looks at the connections again
    m_publishing = true;
    QMetaObject::invokeMethod(m_engine, [engine = m_engine] { engine->startPublishing(); });
}

EngineHost::StartConfigTexts EngineHost::readStartConfig(const QString &path,
                                                         const QString &stateDirectory)
{
    StartConfigTexts texts;
    texts.overlayPath = lifecycle::overlayPathIn(stateDirectory);
    const lifecycle::StartTexts read = lifecycle::readStartTexts(path, texts.overlayPath);
    texts.fileText = read.fileText;
    texts.runningText = read.runningText;
    texts.error = read.error;
    texts.overlayError = read.overlayError;
    return texts;
}

void EngineHost::followConfigFile(const QString &path, const StartConfigTexts &texts,
                                  std::function<void(config::Config &)> overrides)
{
    m_followedFile = FollowedFile{path, texts, std::move(overrides)};
}

void EngineHost::reloadConfig(const QString &trigger)
{
    if (!m_engine)
        return;
    QMetaObject::invokeMethod(m_engine, [engine = m_engine, trigger] {
        if (lifecycle::ConfigLifecycle *lifecycle = engine->configLifecycle())
            lifecycle->reload(trigger);
    });
}

void EngineHost::setDemoTraffic(bool enabled, double requestsPerSecond)
{
    if (!m_demoTraffic)
        return;
    m_demoRunning = enabled && requestsPerSecond > 0;
    m_demoRate = requestsPerSecond;
    QMetaObject::invokeMethod(m_demoTraffic, [demo = m_demoTraffic, enabled, requestsPerSecond] {
        demo->setRate(enabled, requestsPerSecond);
    });
}

void EngineHost::applyProviderAction(const QString &providerId, ProviderAction action)
{
    if (!m_engine)
        return;
    QMetaObject::invokeMethod(m_engine, [engine = m_engine, providerId, action] {
        engine->commands().applyProviderAction(providerId, action);
    });
}

void EngineHost::setSimulatorKnobs(const QString &providerId, const SimulatorKnobs &knobs)
{
    if (!m_engine)
        return;
    QMetaObject::invokeMethod(m_engine, [engine = m_engine, providerId, knobs] {
        engine->commands().setSimulatorKnobs(providerId, knobs);
    });
}

void EngineHost::explainRoute(quint64 ticket, const std::optional<QList<config::RouteRule>> &rules,
                              const HeaderList &headers, const QByteArray &body,
                              protocol::Operation operation)
{
    if (!m_engine)
        return;
    // An id the gateway would not take (empty, too long, not a token) is replaced too: live
    // traffic would draw a fresh one, and the two sides of the comparison must draw the same.
    HeaderList sample = headers;
    if (routing::acceptedRequestId(sample).isEmpty()) {
        sample.removeIf([](const auto &header) {
            return header.first.compare("x-request-id", Qt::CaseInsensitive) == 0;
        });
        sample.append({"x-request-id", kDryRunRequestId.toByteArray()});
    }
    explainOnEngine(this, m_engine, ticket, rules, sample, body, operation);
}

void EngineHost::previewImpact(quint64 ticket, const QList<config::RouteRule> &rules)
{
    if (!m_engine)
        return;
    previewImpactOnEngine(this, m_engine, ticket, rules);
}

void EngineHost::applyRoutes(const QList<config::RouteRule> &rules)
{
    if (!m_engine)
        return;
    applyOnEngine(this, m_engine, rules);
}

void EngineHost::setCanaryWeights(const QString &rule, const QList<int> &weights)
{
    if (!m_engine)
        return;
    QMetaObject::invokeMethod(m_engine, [engine = m_engine, rule, weights] {
        engine->commands().setCanaryWeights(rule, weights);
    });
}

void EngineHost::resetCanaryWeights(const QString &rule)
{
    if (!m_engine)
        return;
    QMetaObject::invokeMethod(
        m_engine, [engine = m_engine, rule] { engine->commands().resetCanaryWeights(rule); });
}

void EngineHost::removeAgent(const QString &agentId)
{
    if (!m_engine)
        return;
    QMetaObject::invokeMethod(
        m_engine, [engine = m_engine, agentId] { engine->commands().removeAgent(agentId); });
}

void EngineHost::loadTrace(quint64 ticket, const QByteArray &requestId)
{
    if (!m_engine)
        return;
    loadTraceOnEngine(this, m_engine, ticket, requestId);
}

void EngineHost::loadUsage(quint64 ticket, const usage::UsageQuery &query)
{
    if (!m_engine)
        return;
    // The ledger answers from its own thread, straight back to this one; in a fleet the engine
    // thread adds the other nodes' usage first.
    m_engine->queryUsage(query, this, [this, ticket](const usage::UsageReport &report) {
        emit usageLoaded(ticket, report);
    });
}

void EngineHost::watchTrace(const QByteArray &requestId)
{
    if (!m_engine)
        return;
    QMetaObject::invokeMethod(m_engine,
                              [engine = m_engine, requestId] { engine->watchTrace(requestId); });
}

void EngineHost::loadConfigVersions(quint64 ticket)
{
    if (!m_engine)
        return;
    loadConfigVersionsOnEngine(this, m_engine, ticket);
}

void EngineHost::loadConfigVersion(quint64 ticket, quint64 number)
{
    if (!m_engine)
        return;
    loadConfigVersionOnEngine(this, m_engine, ticket, number);
}

void EngineHost::rollbackConfig(quint64 ticket, quint64 number)
{
    if (!m_engine)
        return;
    rollbackOnEngine(this, m_engine, ticket, number);
}

void EngineHost::issueClientKey(quint64 ticket, const QString &tenant, const QString &id,
                                const config::ClientKeyLimits &limits)
{
    if (!m_engine) {
        Q_EMIT clientKeyCommandDone(ticket, noEngine(id));
        return;
    }
    keyCommandOnEngine(this, m_engine, ticket, [tenant, id, limits](Engine &engine) {
        auto created = engine.authenticator().create(engine.config(), tenant, id, limits);
        if (const auto *error = std::get_if<protocol::ApiError>(&created))
            return keyCommandRefused(id, *error);
        const auto &made = std::get<auth::ClientAuthenticator::Created>(created);
        ClientKeyCommandResult result;
        result.keyId = made.key.id;
        result.secret = made.text;
        return result;
    });
}

void EngineHost::editClientKeyLimits(quint64 ticket, const QString &id,
                                     const config::ClientKeyLimitsEdit &edit)
{
    if (!m_engine) {
        Q_EMIT clientKeyCommandDone(ticket, noEngine(id));
        return;
    }
    keyCommandOnEngine(this, m_engine, ticket, [id, edit](Engine &engine) {
        auto edited = engine.authenticator().editLimits(engine.config(), id, edit);
        if (const auto *error = std::get_if<protocol::ApiError>(&edited))
            return keyCommandRefused(id, *error);
        ClientKeyCommandResult result;
        result.keyId = id;
        return result;
    });
}

void EngineHost::revokeClientKey(quint64 ticket, const QString &id)
{
    if (!m_engine) {
        Q_EMIT clientKeyCommandDone(ticket, noEngine(id));
        return;
    }
    keyCommandOnEngine(this, m_engine, ticket, [id](Engine &engine) {
        if (const auto refusal = engine.authenticator().revoke(engine.config(), id))
            return keyCommandRefused(id, *refusal);
        ClientKeyCommandResult result;
        result.keyId = id;
        return result;
    });
}

void EngineHost::cancelBackgroundTask(quint64 ticket, const QString &id)
{
    if (!m_engine) {
        Q_EMIT backgroundTaskCommandDone(ticket, taskCommandRefused(id, engineNotRunning()));
        return;
    }
    queueCommandOnEngine(this, m_engine, ticket, id,
                         [id](http::ResponsesService &responses, auto done) {
                             responses.cancelTask(id.toUtf8(), std::move(done));
                         });
}

void EngineHost::settleDeadLetter(quint64 ticket, const QString &id, DeadLetterAction action)
{
    if (!m_engine) {
        Q_EMIT backgroundTaskCommandDone(ticket, taskCommandRefused(id, engineNotRunning()));
        return;
    }
    queueCommandOnEngine(this, m_engine, ticket, id,
                         [id, action](http::ResponsesService &responses, auto done) {
                             if (action == DeadLetterAction::Retry)
                                 responses.retryDeadLetter(id.toUtf8(), std::move(done));
                             else
                                 responses.discardDeadLetter(id.toUtf8(), std::move(done));
                         });
}

void EngineHost::shutdown(std::chrono::milliseconds grace)
{
    if (m_shuttingDown)
        return;
    m_shuttingDown = true;
    if (!m_engine) {
        emit stopped();
        return;
    }
    setDemoTraffic(false, 0);
    QMetaObject::invokeMethod(m_engine,
                              [engine = m_engine, grace] { engine->beginShutdown(grace); });
}

void EngineHost::stopThreads()
{
    // Each object is deleted on its own thread, then the thread ends: nothing is left running.
    const auto deleteOn = [](QObject *&object) {
        if (!object)
            return;
        QObject *doomed = object;
        QMetaObject::invokeMethod(
            doomed, [doomed] { delete doomed; }, Qt::BlockingQueuedConnection);
        object = nullptr;
    };
    QObject *demo = m_demoTraffic;
    QObject *engine = m_engine;
    QObject *simulator = m_simulator;
    deleteOn(demo);
    deleteOn(engine);
    deleteOn(simulator);
    m_demoTraffic = nullptr;
    m_engine = nullptr;
    m_simulator = nullptr;
    for (QThread *thread : {m_engineThread, m_simulatorThread}) {
        if (thread) {
            thread->quit();
            thread->wait();
        }
    }
}

} // namespace switchyard
