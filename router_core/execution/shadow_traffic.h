#pragma once

#include "config/config.h"
#include "execution/request_execution.h"
#include "protocol/chat_request.h"
#include "resilience/retry_policy.h"
#include "routing/request_context.h"
#include "routing/route_decision.h"
#include "telemetry/request_record.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <algorithm>
#include <memory>
#include <optional>

namespace switchyard::execution {

// Shadow calls of one route, since start (switchyard_shadow_requests_total).
struct ShadowCounts {
    quint64 sent = 0;    // the shadow provider answered
    quint64 failed = 0;  // it was called and did not answer (an error, a timeout)
    quint64 dropped = 0; // never called, or let go while it ran, so that live traffic had room
    friend bool operator==(const ShadowCounts &, const ShadowCounts &) = default;
};

// Shadow traffic (docs/routing.md, "Shadow traffic"): a copy of a live chat request sent to the
// provider the matched rule's `shadow` names, whose answer is recorded and thrown away. A shadow
// is a RequestExecution like any other, so it is timed, retried and traced as live requests are,
// but it writes to no client, takes nothing live traffic needs and is the first thing let go:
//  - it is not one of the gateway's in-flight requests, so the admission gate never counts it;
//  - it starts only in the gate's spare room, at most a quarter of the gate's size run at once,
//    and a running one is let go as soon as live requests fill the gate (makeRoom);
//  - it is sent only to a provider whose breaker is closed and not cooling down: a half-open
//    breaker's one trial call is live traffic's (or a health probe's);
//  - it gets no failover, no fallback model and no degradation ladder: its answer is its
//    provider's or nothing;
//  - its retries come from a retry budget of its own, so it never spends a live request's;
//  - its record is marked (RequestRecord::shadowOf): budgets, key allowances, the request
//    metrics and alerts pass over it, and the ledger keeps its cost as a shadow's.
// Engine thread only.
class ShadowTraffic final : public QObject {
    Q_OBJECT
public:
    // `services` as a live request's, but for `retryBudget` and `finished`, which are the
    // shadows' own. The references must outlive this object.
    ShadowTraffic(const config::ConfigStore &store, ExecutionServices services,
                  QObject *parent = nullptr);
    ~ShadowTraffic() override;

    // Whether the shadow `decision` asks for may run beside its live request, with
    // `liveInFlight` live requests in the gate (that one included). When it may not, the shadow
    // is counted dropped and the reason is returned, for the live request's trace.
    std::optional<QString> refusal(const routing::RouteDecision &decision, int liveInFlight);

    // The request id a shadow of the live request `liveRequestId` has.
    static QByteArray shadowIdOf(const QByteArray &liveRequestId)
    {
        return liveRequestId + "-shadow";
    }

    // Starts the shadow of a live chat request, after refusal() let it. `live` is the live
    // request's record as it started: its ids, tenant and key.
    void start(std::shared_ptr<const config::Config> config, const protocol::ChatRequest &chat,
               const QByteArray &chatBody, const routing::RequestContext &context,
               const routing::RouteDecision &decision, const telemetry::RequestRecord &live);

    // Lets running shadows go, the newest first, until they and `liveInFlight` live requests
    // fit in the gate together. Each is counted dropped and its trace says why.
    void makeRoom(int liveInFlight);

    int inFlight() const { return int(m_running.size()); }
    // By route name.
    const QHash<QString, ShadowCounts> &counts() const { return m_counts; }

    // Shadows that may run at once for a gate of `maxInFlight` live requests.
    static int limitFor(int maxInFlight) { return std::max(1, maxInFlight / 4); }

private:
    struct Running {
        RequestExecution *execution = nullptr;
        QString route;
        std::shared_ptr<bool> answered; // set by the shadow's channel when an answer came
        bool letGo = false;             // ended by makeRoom: counted dropped, not failed
    };
    void finished(RequestExecution *execution);
    int gateSize() const;

    const config::ConfigStore &m_store;
    resilience::RetryBudget m_retryBudget; // before m_services, which refers to it
    ExecutionServices m_services;
    QList<Running> m_running; // oldest first
    QHash<QString, ShadowCounts> m_counts;
};

} // namespace switchyard::execution
