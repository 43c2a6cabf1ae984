#pragma once

#include "bridge/engine_bridge.h"
#include "config/config.h"

#include <QStringList>
#include <functional>
#include <memory>

namespace switchyard::testing {

// A console bridge with no engine behind it: the test sets what it shows and reads what the
// console asked for. Proves the console needs nothing of the engine but the bridge's interface.
class FakeEngineBridge final : public EngineBridge {
    Q_OBJECT
public:
    explicit FakeEngineBridge(config::Config config = {})
    {
        m_routes.snapshot = std::make_shared<const config::Config>(std::move(config));
        m_snapshot.listenAddress = QStringLiteral("127.0.0.1:1");
    }

    // Shows `snapshot` as the engine would: stored, then announced.
    void publish(const EngineSnapshot &snapshot)
    {
        m_snapshot = snapshot;
        emit snapshotUpdated(snapshot);
    }

    QString listenAddress() const override { return m_snapshot.listenAddress; }
    EngineSnapshot lastSnapshot() const override { return m_snapshot; }
    RoutesState routesState() const override { return m_routes; }

    void explainRoute(quint64, const std::optional<QList<config::RouteRule>> &, const HeaderList &,
                      const QByteArray &, protocol::Operation) override
    {
        ++explainRequests;
    }
    // Answers with `impactAnswer` at once, as the engine would a moment later.
    void previewImpact(quint64 ticket, const QList<config::RouteRule> &) override
    {
        ++impactRequests;
        emit impactPreviewed(ticket, impactAnswer);
    }
    void applyRoutes(const QList<config::RouteRule> &rules) override { appliedRules.append(rules); }
    void setCanaryWeights(const QString &rule, const QList<int> &) override
    {
        canaryRules.append(rule);
    }
    void resetCanaryWeights(const QString &rule) override { canaryRules.append(rule); }
    void removeAgent(const QString &agentId) override { removedAgents.append(agentId); }
    // Answers from `traces` at once, as the engine would a moment later.
    void loadTrace(quint64 ticket, const QByteArray &requestId) override
    {
        loadedTraces.append(requestId);
        const auto found = traces.constFind(requestId);
        emit traceLoaded(ticket, found != traces.cend(),
                         found != traces.cend() ? *found : telemetry::Trace{});
    }
    void watchTrace(const QByteArray &requestId) override { watched = requestId; }
    // Answers with usageReportFor(query) when set, else an empty report; usageQueries records
    // every query asked.
    void loadUsage(quint64 ticket, const usage::UsageQuery &query) override
    {
        usageQueries.append(query);
        if (holdUsage) {
            heldUsage.append({ticket, query});
            return;
        }
        answerUsage(ticket, query);
    }
    void answerUsage(quint64 ticket, const usage::UsageQuery &query)
    {
        usage::UsageReport report = usageReportFor ? usageReportFor(query) : usage::UsageReport{};
        report.query = query;
        emit usageLoaded(ticket, report);
    }
    // The config's versions: answered from `configVersions` at once, newest first.
    void loadConfigVersions(quint64 ticket) override
    {
        QList<ConfigVersionInfo> infos;
        for (auto it = configVersions.crbegin(); it != configVersions.crend(); ++it)
            infos.append(*it);
        emit configVersionsLoaded(ticket, infos);
    }
    void loadConfigVersion(quint64 ticket, quint64 number) override
    {
        for (const ConfigVersion &version : configVersions) {
            if (version.number == number) {
                emit configVersionLoaded(ticket, true, version);
                return;
            }
        }
        emit configVersionLoaded(ticket, false, {});
    }
    void rollbackConfig(quint64 ticket, quint64 number) override
    {
        rolledBackTo.append(number);
        emit configRolledBack(ticket, rollbackResult);
    }
    // Key commands: recorded, and answered at once with `keyCommandAnswer` (success unless the
    // test sets an error), the issued key's id and text made up from the request.
    void issueClientKey(quint64 ticket, const QString &tenant, const QString &id,
                        const config::ClientKeyLimits &limits) override
    {
        issuedKeys.append({tenant, id, limits});
        ClientKeyCommandResult result = keyCommandAnswer;
        result.keyId = id.isEmpty() ? QStringLiteral("key-fake") : id;
        if (result.ok())
            result.secret = "sk-sy-fake-" + result.keyId.toUtf8();
        emit clientKeyCommandDone(ticket, result);
    }
    void editClientKeyLimits(quint64 ticket, const QString &id,
                             const config::ClientKeyLimitsEdit &edit) override
    {
        editedKeys.append({id, edit});
        ClientKeyCommandResult result = keyCommandAnswer;
        result.keyId = id;
        emit clientKeyCommandDone(ticket, result);
    }
    void revokeClientKey(quint64 ticket, const QString &id) override
    {
        revokedKeys.append(id);
        ClientKeyCommandResult result = keyCommandAnswer;
        result.keyId = id;
        emit clientKeyCommandDone(ticket, result);
    }
    // Cancels: recorded, and answered at once as the queue would for a task it holds.
    void cancelBackgroundTask(quint64 ticket, const QString &id) override
    {
        cancelledTasks.append(id);
        BackgroundTaskCommandResult result;
        result.taskId = id;
        emit backgroundTaskCommandDone(ticket, result);
    }
    void settleDeadLetter(quint64 ticket, const QString &id, DeadLetterAction action) override
    {
        (action == DeadLetterAction::Retry ? retriedDeadLetters : discardedDeadLetters).append(id);
        BackgroundTaskCommandResult result;
        result.taskId = id;
        emit backgroundTaskCommandDone(ticket, result);
    }
    void publishFeed(const telemetry::TraceFeed &feed) { emit traceFeedUpdated(feed); }
    void setDemoTraffic(bool enabled, double) override { demoTraffic = enabled; }
    void shutdown(std::chrono::milliseconds) override { emit stopped(); }
    void applyProviderAction(const QString &providerId, ProviderAction) override
    {
        actedOn.append(providerId);
    }
    void setSimulatorKnobs(const QString &providerId, const SimulatorKnobs &) override
    {
        knobsFor.append(providerId);
    }

    struct IssuedKey {
        QString tenant;
        QString id;
        config::ClientKeyLimits limits;
    };
    QList<IssuedKey> issuedKeys;
    QList<QPair<QString, config::ClientKeyLimitsEdit>> editedKeys;
    QStringList revokedKeys;
    ClientKeyCommandResult keyCommandAnswer; // what every key command answers
    QStringList cancelledTasks;
    QStringList retriedDeadLetters;
    QStringList discardedDeadLetters;

    int explainRequests = 0;
    int impactRequests = 0;
    routing::ImpactPreview impactAnswer; // what previewImpact answers
    QList<QList<config::RouteRule>> appliedRules;
    QStringList canaryRules;
    QStringList removedAgents;
    QStringList actedOn;
    QStringList knobsFor;
    bool demoTraffic = false;
    QHash<QByteArray, telemetry::Trace> traces; // what loadTrace finds
    std::function<usage::UsageReport(const usage::UsageQuery &)> usageReportFor;
    QList<usage::UsageQuery> usageQueries;
    bool holdUsage = false; // keep queries unanswered in heldUsage, to answer out of order
    QList<QPair<quint64, usage::UsageQuery>> heldUsage;
    QByteArrayList loadedTraces;
    QByteArray watched;
    QList<ConfigVersion> configVersions; // oldest first
    QList<quint64> rolledBackTo;
    ConfigChangeResult rollbackResult;

private:
    EngineSnapshot m_snapshot;
    RoutesState m_routes;
};

} // namespace switchyard::testing
