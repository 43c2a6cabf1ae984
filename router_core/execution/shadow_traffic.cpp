#include "execution/shadow_traffic.h"

#include "config/config_store.h"
#include "resilience/degradation.h"
#include "telemetry/trace.h"

namespace switchyard::execution {

using namespace Qt::StringLiterals;

namespace {

// Where a shadow's answer goes: nowhere. It only notes whether one came, for the counts; the
// record of what came is the shadow's trace.
class DiscardingChannel final : public ClientChannel {
public:
    explicit DiscardingChannel(std::shared_ptr<bool> answered) : m_answered(std::move(answered)) {}

    void setListener(ClientListener *) override {}
    bool connected() const override { return true; }
    bool answerStarted() const override { return m_started; }
    qint64 pendingBytes() const override { return 0; }

    void sendAnswer(int status, const HeaderList &, const QByteArray &, Dialect) override
    {
        m_started = true;
        *m_answered = status < 400;
    }
    void sendError(const protocol::ApiError &, const HeaderList &) override { m_started = true; }
    void beginStream(const HeaderList &, Dialect) override { m_started = true; }
    void sendStreamEvents(const QList<upstream::SseEvent> &, bool) override {}
    void failStream(const protocol::ApiError &) override { *m_answered = false; }
    void endStream() override { *m_answered = true; }
    void abort() override {}

private:
    std::shared_ptr<bool> m_answered;
    bool m_started = false;
};

} // namespace

ShadowTraffic::ShadowTraffic(const config::ConfigStore &store, ExecutionServices services,
                             QObject *parent)
    : QObject(parent), m_store(store),
      m_retryBudget(store), m_services{services.transport, services.health,    services.recorder,
                                       m_retryBudget,      services.admission, services.scheduler,
                                       services.loop,      services.random,    {}}
{}

ShadowTraffic::~ShadowTraffic()
{
    // Running and finished executions alike, now: they borrow m_retryBudget, which is gone
    // before QObject would delete its children. Deleting one records nothing more.
    m_running.clear();
    qDeleteAll(findChildren<RequestExecution *>(Qt::FindDirectChildrenOnly));
}

int ShadowTraffic::gateSize() const
{
    return m_store.config().resilience.admission.maxInFlight;
}

std::optional<QString> ShadowTraffic::refusal(const routing::RouteDecision &decision,
                                              int liveInFlight)
{
    if (!decision.shadow)
        return u"no shadow drawn"_s;
    // The route's series exist from its first drawn shadow on, at zero until counted.
    ShadowCounts &counts = m_counts[decision.rule];
    const auto drop = [&](const QString &reason) {
        ++counts.dropped;
        return reason;
    };
    // Only the gate's spare room, and a bounded part of it: when live traffic fills the gate
    // the shadows are the first thing let go.
    const int gate = gateSize();
    if (liveInFlight + inFlight() >= gate)
        return drop(
            u"dropped: %1 of %2 requests in flight leave no room"_s.arg(liveInFlight).arg(gate));
    if (inFlight() >= limitFor(gate))
        return drop(
            u"dropped: %1 shadow calls already run, the most for a gate of %2"_s.arg(inFlight())
                .arg(gate));
    // A half-open breaker admits one trial call, which decides whether live traffic comes
    // back: a shadow must not be it. Nor is a provider asking for a pause sent more.
    const health::HealthRegistry &health = m_services.health;
    const int endpoint = decision.shadow->endpoint;
    if (endpoint < 0 || endpoint >= health.providerCount() || !health.selectable(endpoint) ||
        health.breakerState(endpoint) != BreakerState::Closed ||
        health.coolDownLeft(endpoint).count() > 0)
        return drop(u"dropped: %1 takes no shadow calls now (its breaker is not closed)"_s.arg(
            decision.shadow->providerId));
    return std::nullopt;
}

void ShadowTraffic::start(std::shared_ptr<const config::Config> config,
                          const protocol::ChatRequest &chat, const QByteArray &chatBody,
                          const routing::RequestContext &context,
                          const routing::RouteDecision &decision,
                          const telemetry::RequestRecord &live)
{
    if (!decision.shadow)
        return;
    routing::RouteDecision shadowDecision;
    shadowDecision.model = decision.model;
    shadowDecision.operation = decision.operation;
    shadowDecision.rule = decision.rule;
    shadowDecision.candidates = {*decision.shadow};
    shadowDecision.steps = {
        {u"shadow"_s,
         u"of request %1: %2"_s.arg(QString::fromLatin1(live.requestId), decision.shadow->reason)}};

    // The live request's trace, one span below the live request's own.
    telemetry::TraceBuilder trace(m_services.scheduler.clock(), shadowIdOf(live.requestId),
                                  live.traceId, live.spanId);
    telemetry::Trace &record = trace.trace();
    record.shadowOf = live.requestId;
    record.tenant = live.tenant;
    record.keyId = live.keyId;
    record.endpoint = live.endpoint;
    record.operation = live.operation;

    routing::RequestContext shadowContext = context;
    shadowContext.requestId = record.requestId;
    // No canned or fail-safe answer: what is compared is the provider's answer or its failure.
    shadowContext.fallbackLevel = resilience::kPlannedTarget;

    auto answered = std::make_shared<bool>(false);
    ExecutionServices services = m_services;
    services.finished = [this](RequestExecution *execution) { finished(execution); };
    auto *execution =
        new RequestExecution(std::move(services), std::move(config), chat, chatBody,
                             std::move(shadowContext), std::move(shadowDecision), std::move(trace),
                             std::make_unique<DiscardingChannel>(answered), this);
    m_running.append({execution, decision.rule, std::move(answered), false});
    execution->start();
}

void ShadowTraffic::makeRoom(int liveInFlight)
{
    const int gate = gateSize();
    while (!m_running.isEmpty() && liveInFlight + inFlight() > gate) {
        Running &newest = m_running.last();
        // One already let go is ending on its own (it was writing its last answer).
        if (newest.letGo)
            return;
        newest.letGo = true;
        // Ends it at once; finished() takes it off the list and counts it dropped.
        newest.execution->cancel(
            QString::fromLatin1(telemetry::kShadowLetGoOutcome),
            u"%1 live requests filled the gate of %2"_s.arg(liveInFlight).arg(gate));
    }
}

void ShadowTraffic::finished(RequestExecution *execution)
{
    const auto found = std::find_if(m_running.begin(), m_running.end(), [&](const Running &shadow) {
        return shadow.execution == execution;
    });
    if (found == m_running.end())
        return;
    ShadowCounts &counts = m_counts[found->route];
    if (found->letGo)
        ++counts.dropped;
    else if (*found->answered)
        ++counts.sent;
    else
        ++counts.failed;
    m_running.erase(found);
    execution->deleteLater(); // it may still be inside its own callbacks
}

} // namespace switchyard::execution
