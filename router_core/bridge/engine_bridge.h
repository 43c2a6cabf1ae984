#pragma once

#include "config/auth_config.h"
#include "config/routing_config.h"
#include "control/background_queue_state.h"
#include "control/client_key_commands.h"
#include "control/config_versions.h"
#include "control/engine_snapshot.h"
#include "control/routes_state.h"
#include "protocol/operation.h"
#include "routing/impact_preview.h"
#include "telemetry/trace_feed.h"
#include "usage/usage_types.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QStringList>
#include <chrono>
#include <optional>

namespace switchyard {

// The one door between the console and the engine: value snapshots in, commands out. Qt Core
// only, so the console links nothing of the engine but this and the value types it carries.
// EngineHost is the real one (it runs the engine on its own thread); console tests may put a
// fake in its place. Every command is answered asynchronously: the caller's thread never blocks
// on engine work. Commands map one to one onto control::OperatorCommands, which the admin API
// uses too.
class EngineBridge : public QObject {
    Q_OBJECT
public:
    using HeaderList = QList<QPair<QByteArray, QByteArray>>;

    using QObject::QObject;
    ~EngineBridge() override = default;

    virtual QString listenAddress() const = 0; // "127.0.0.1:8080"
    // The last snapshot delivered by snapshotUpdated.
    virtual EngineSnapshot lastSnapshot() const = 0;
    // The rules in force and the canary splits, as routesChanged last delivered them.
    virtual RoutesState routesState() const = 0;

    // A dry run: the decision for a sample request to `operation`'s endpoint under `rules`, or
    // under the live rules and weights when `rules` is nullopt. Nothing is applied;
    // routeExplained(ticket, ...) answers. A sample without x-request-id draws with a fixed one,
    // so the live and the edited side of a comparison draw the same canary side.
    virtual void explainRoute(quint64 ticket, const std::optional<QList<config::RouteRule>> &rules,
                              const HeaderList &headers, const QByteArray &body,
                              protocol::Operation operation) = 0;
    // Where the sampled live requests of the last hour would go under `rules` (the impact
    // preview); nothing is applied. impactPreviewed(ticket, ...) answers, with `error` set when
    // the rules do not validate.
    virtual void previewImpact(quint64 ticket, const QList<config::RouteRule> &rules) = 0;
    // Validates and, when valid, swaps the live rules at once; routesApplied answers.
    virtual void applyRoutes(const QList<config::RouteRule> &rules) = 0;
    // Live canary weights in the order of the rule's branches; routesChanged shows them.
    virtual void setCanaryWeights(const QString &rule, const QList<int> &weights) = 0;
    virtual void resetCanaryWeights(const QString &rule) = 0;
    // Deregisters an agent; the next snapshot no longer lists it.
    virtual void removeAgent(const QString &agentId) = 0;

    // One request's whole trace, running or finished; traceLoaded(ticket, ...) answers, with
    // found false when the ring no longer holds it.
    virtual void loadTrace(quint64 ticket, const QByteArray &requestId) = 0;
    // The request whose text traceFeedUpdated carries as it streams; an empty id watches none.
    // Only one is watched, so ten thousand streams do not all keep their text.
    virtual void watchTrace(const QByteArray &requestId) = 0;
    // A usage report from the ledger (GET /admin/v1/usage's), run on the ledger's own thread;
    // usageLoaded(ticket, ...) answers. Rows not yet written are included.
    virtual void loadUsage(quint64 ticket, const switchyard::usage::UsageQuery &query) = 0;

    // ---- the config's versions (lastSnapshot().config says where the running config stands) ----
    // Every version, newest first, without texts; configVersionsLoaded(ticket, ...) answers
    // (an empty list when the engine follows no config file).
    virtual void loadConfigVersions(quint64 ticket) = 0;
    // One version with its text and diff; configVersionLoaded(ticket, found, ...) answers.
    virtual void loadConfigVersion(quint64 ticket, quint64 number) = 0;
    // Applies version `number`'s text again, as a new version with source rollback;
    // configRolledBack(ticket, result) says how it ended (refused: why).
    virtual void rollbackConfig(quint64 ticket, quint64 number) = 0;

    // ---- client keys: the admin API's key commands (docs/operations.md) ----
    // Each is answered by clientKeyCommandDone(ticket, ...), refused in the admin API's words;
    // the next snapshot lists the keys as the command left them.
    // `id` empty: the engine makes one up. The result carries the key's text, shown once.
    virtual void issueClientKey(quint64 ticket, const QString &tenant, const QString &id,
                                const config::ClientKeyLimits &limits) = 0;
    virtual void editClientKeyLimits(quint64 ticket, const QString &id,
                                     const config::ClientKeyLimitsEdit &edit) = 0;
    virtual void revokeClientKey(quint64 ticket, const QString &id) = 0;

    // ---- the background queue (lastSnapshot().backgroundQueue lists it) ----
    // Cancels a queued or running task, whoever owns it, as POST /admin/v1/queue/{id}/cancel
    // does; backgroundTaskCommandDone(ticket, ...) answers, refused in the admin API's words.
    virtual void cancelBackgroundTask(quint64 ticket, const QString &id) = 0;
    // A fleet's dead letter queued again or discarded, as POST /admin/v1/queue/{id}/retry and
    // /discard do; answered by backgroundTaskCommandDone(ticket, ...) too.
    virtual void settleDeadLetter(quint64 ticket, const QString &id,
                                  switchyard::DeadLetterAction action) = 0;

public Q_SLOTS:
    // Sends real requests to the gateway's own port, mixed streamed and not, mixed models.
    virtual void setDemoTraffic(bool enabled, double requestsPerSecond) = 0;
    // Stops accepting, lets in-flight requests finish for at most `grace`, then emits stopped().
    virtual void shutdown(std::chrono::milliseconds grace) = 0;
    // Operator actions on an endpoint; the next snapshot shows the result. Unknown ids are
    // ignored (the endpoint may have been retired since the console showed it).
    virtual void applyProviderAction(const QString &providerId,
                                     switchyard::ProviderAction action) = 0;
    // Live knobs of a simulated provider, for drills.
    virtual void setSimulatorKnobs(const QString &providerId,
                                   const switchyard::SimulatorKnobs &knobs) = 0;

Q_SIGNALS:
    void snapshotUpdated(const switchyard::EngineSnapshot &snapshot); // at most 10 per second
    // With each snapshot: requests finished since the last feed, running ones, watched text.
    void traceFeedUpdated(const switchyard::telemetry::TraceFeed &feed);
    void traceLoaded(quint64 ticket, bool found, const switchyard::telemetry::Trace &trace);
    void usageLoaded(quint64 ticket, const switchyard::usage::UsageReport &report);
    void stopped();
    void routeExplained(quint64 ticket, const switchyard::RouteExplanation &explanation);
    void impactPreviewed(quint64 ticket, const switchyard::routing::ImpactPreview &preview);
    void routesApplied(bool ok, const QStringList &problems);
    void routesChanged(const switchyard::RoutesState &state);
    void configVersionsLoaded(quint64 ticket, const QList<switchyard::ConfigVersionInfo> &versions);
    void configVersionLoaded(quint64 ticket, bool found, const switchyard::ConfigVersion &version);
    void configRolledBack(quint64 ticket, const switchyard::ConfigChangeResult &result);
    void clientKeyCommandDone(quint64 ticket, const switchyard::ClientKeyCommandResult &result);
    void backgroundTaskCommandDone(quint64 ticket,
                                   const switchyard::BackgroundTaskCommandResult &result);
};

} // namespace switchyard
