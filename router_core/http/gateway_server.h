#pragma once

#include "answers/answer_store.h"
#include "auth/api_key_store.h"
#include "auth/client_authenticator.h"
#include "config/config_store.h"
#include "execution/shadow_traffic.h"
#include "http/admin_endpoints.h"
#include "http/idempotency_guard.h"
#include "http/request_head.h"
#include "http/response_caching.h"
#include "http/responses_service.h"
#include "httpwire/response_writer.h"
#include "protocol/openai_error.h"
#include "resilience/admission.h"
#include "resilience/retry_policy.h"
#include "routing/context_sample.h"
#include "routing/router.h"
#include "telemetry/connection_counts.h"
#include "telemetry/trace.h"
#include "timing/clock.h"
#include "timing/deadline_scheduler.h"
#include "timing/loop_health.h"
#include "timing/loop_turn.h"

#include <QHash>
#include <QHostAddress>
#include <QHttpServerRequest>
#include <QJsonObject>
#include <QPointer>
#include <QRandomGenerator>
#include <array>
#include <deque>
#include <functional>
#include <memory>

namespace switchyard::health {
class HealthRegistry;
}
namespace switchyard::telemetry {
class RequestRecorder;
}
namespace switchyard::upstream {
class UpstreamTransport;
}

namespace switchyard::auth {
class ClientAuthenticator;
}

namespace switchyard::ingress {
struct ClientRequest;
}

namespace switchyard::execution {
class RequestExecution;
}

namespace switchyard::http {

using httpwire::ResponseWriter;
using protocol::HeaderList;

class HttpClientChannel;

// What the server borrows from the engine that composes it; all of it lives on the engine thread
// and outlives the server.
struct GatewayServices {
    const config::ConfigStore &config;
    routing::Router &router;
    health::HealthRegistry &health;
    telemetry::RequestRecorder &recorder;
    upstream::UpstreamTransport &transport;
    resilience::AdmissionController &admission;
    resilience::RetryBudget &retryBudget;
    timing::DeadlineScheduler &scheduler;
    const timing::LoopHealth &loop;
    auth::ClientAuthenticator &authenticator; // client keys; the admin token
    routing::ContextSample &contextSample;    // what the impact preview replays
};

class ConnectionQueue;
class TraceStream;
class GatewayListener;

// Client requests per second over the last few whole seconds, for the console's status bar.
class RequestRateMeter {
public:
    explicit RequestRateMeter(const timing::Clock &clock) : m_clock(clock), m_startedAt(clock.now())
    {}
    void record();
    double perSecond() const;

private:
    static constexpr int kWindowSeconds = 5;
    qint64 secondsSinceStart() const;

    const timing::Clock &m_clock;
    const timing::Clock::TimePoint m_startedAt;
    std::array<qint64, kWindowSeconds + 1> m_second{};
    std::array<int, kWindowSeconds + 1> m_count{};
};

// The public OpenAI-compatible API: answers the requests its GatewayListener reads, every path
// itself, so unknown paths and wrong methods get OpenAI-shaped errors too.
class GatewayServer final : public QObject {
    Q_OBJECT
public:
    explicit GatewayServer(GatewayServices services, QObject *parent = nullptr);
    ~GatewayServer() override;

    // Listens on the configured address (port 0 picks a free one). Returns the port, or 0 and an
    // error message.
    quint16 listenOn(const QString &host, quint16 port, QString *errorMessage);

    // Draining: /readyz answers 503 so that load balancers stop sending here, while every
    // request is still served as before. stopAccepting() follows after limits.drain_delay.
    void beginDraining();
    // Stops accepting: listening sockets close and requests on open connections get 503.
    void stopAccepting();
    // Live requests only, those waiting to start included: shadow calls are not the gate's
    // (execution::ShadowTraffic).
    int inFlight() const { return int(m_executions.size() + m_waitingToStart.size()); }
    // Requests read whole that wait for a turn of the engine loop to start them.
    int waitingToStart() const { return int(m_waitingToStart.size()); }
    // Shadow calls by route since start (docs/routing.md, "Shadow traffic").
    const QHash<QString, execution::ShadowCounts> &shadowCounts() const
    {
        return m_shadows->counts();
    }
    quint64 totalRequests() const { return m_totalRequests; }
    // The parts of the engine register their /admin/v1/ endpoints here.
    AdminEndpoints &admin() { return m_admin; }
    double requestsPerSecond() const { return m_rate.perSecond(); }
    // Client connections as the listener counts them; also GET /admin/v1/connections.
    telemetry::ConnectionCounts connectionCounts() const;
    // What GET /metrics answers: Prometheus text the engine renders. Unset, the path is 404.
    void setMetricsSource(std::function<QByteArray()> render) { m_metricsText = std::move(render); }
    // Where the duplicate guard keeps answers (docs/resilience.md); it must outlive the server.
    // Unset, Idempotency-Key is checked for form and otherwise ignored.
    void setAnswerStore(answers::AnswerStore *store) { m_answers = store; }
    // The response cache's stage (docs/operations.md); null: no request is answered from it.
    void setResponseCaching(ResponseCaching *caching) { m_caching = caching; }
    // Where stored and background responses live (docs/responses.md); it must outlive the
    // server. Unset, `store`, `background` and `previous_response_id` are served only by
    // providers that speak the Responses API natively, as the ingress says.
    void setResponses(ResponsesService *responses);

Q_SIGNALS:
    void inFlightChanged(int inFlight);

private:
    void handleRequest(QTcpSocket *socket, IncomingRequest request);
    void answer(ConnectionQueue *queue, IncomingRequest request, ResponseWriter writer);
    void route(IncomingRequest request, ResponseWriter writer);
    // Anthropic's paths answer in Anthropic's error shape, whatever went wrong.
    static bool speaksAnthropic(protocol::Operation operation)
    {
        return operation == protocol::Operation::Messages ||
               operation == protocol::Operation::CountTokens;
    }
    // One API request, read in the protocol of its path, then authenticated, admitted, routed
    // and executed: each stage below is one call of it.
    void handleOperation(IncomingRequest request, ResponseWriter writer,
                         telemetry::TraceBuilder trace, protocol::Operation operation);
    // The engine starts at most kStartsPerTurn requests, for at most kStartTimePerTurn, in one
    // turn of its loop; one read beyond them waits here, in arrival order, and a later turn
    // starts it (startWaiting). Refused 503 when `admission.max_in_flight` requests are held
    // already, or when it waited `admission.max_start_wait`.
    struct WaitingStart {
        IncomingRequest request;
        ResponseWriter writer;
        telemetry::TraceBuilder trace;
        protocol::Operation operation;
        timing::Clock::TimePoint since;
    };
    void waitToStart(WaitingStart waiting);
    void startWaiting();
    void startOperation(IncomingRequest request, ResponseWriter writer,
                        telemetry::TraceBuilder trace, protocol::Operation operation);
    static void describeEndpoint(telemetry::Trace &record, const QString &path,
                                 protocol::Operation operation);
    static void startTrace(telemetry::TraceBuilder &trace, const IncomingRequest &request,
                           const config::Config &config);
    // The caller's key, if any, and its refusal: no valid key, or a tenant not its own.
    auth::ClientAuthenticator::Verdict identifyCaller(telemetry::TraceBuilder &trace,
                                                      const IncomingRequest &request,
                                                      const routing::RoutingTable &table);
    static void closeIngressSpan(telemetry::TraceBuilder &trace, int span,
                                 const ingress::ClientRequest &client);
    // The request's id and tenant; the refusal of a key that may not use the model.
    std::optional<protocol::ApiError> bindCaller(telemetry::TraceBuilder &trace,
                                                 ingress::ClientRequest &client,
                                                 const auth::ClientAuthenticator::Verdict &caller);
    // Admission control: the in-flight gate, tenant quotas, the loop guard.
    std::optional<protocol::ApiError> admit(telemetry::TraceBuilder &trace,
                                            const routing::RequestContext &context,
                                            const auth::ClientAuthenticator::Verdict &caller);
    routing::RouteDecision routeRequest(telemetry::TraceBuilder &trace,
                                        const routing::RoutingTable &table,
                                        const routing::RequestContext &context);
    // The channel that answers in the client's protocol (a Responses answer's id is made from
    // the request's).
    static std::unique_ptr<HttpClientChannel> clientChannel(ResponseWriter writer,
                                                            ingress::ClientRequest &client,
                                                            const QByteArray &requestId);
    // A request read, authenticated and bound to its caller: what the stages after the duplicate
    // guard need, carried across the store's claim, which may answer later (Redis). The stages
    // take it, and the decision, by rvalue reference: handed down, not moved into a new object
    // at every step (each move touched a ClientRequest's every member, cold on the way to the
    // provider).
    struct ReadOperation;
    // Admission, routing and execution.
    void run(ReadOperation &&operation);
    // The rest of run() once the request is routed: a stored response, or a call.
    void dispatch(ReadOperation &&operation, routing::RouteDecision &&decision);
    // A request on a route or model with `cache:`: answered from the cache, or run with its
    // answer kept for the next one.
    void lookUpCache(ReadOperation &&operation, routing::RouteDecision &&decision);
    void serveFromCache(ReadOperation &operation, const answers::StoredAnswer &answer,
                        const QByteArray &where);
    // Whether a live request whose decision drew a shadow is mirrored now: its trace says so
    // either way, and names the shadow call when there is one (docs/routing.md).
    bool mayMirror(telemetry::TraceBuilder &trace, const ingress::ClientRequest &client,
                   const routing::RouteDecision &decision);
    // The duplicate guard: claims the request's key, then runs it, refuses it or replays the
    // answer kept under it.
    void guardDuplicates(ReadOperation &&operation, idempotency::Key key);
    void claimed(ReadOperation &&operation, idempotency::Key key, int span,
                 answers::ClaimResult result);
    void replayAnswer(ResponseWriter &writer, telemetry::TraceBuilder &trace,
                      const answers::StoredAnswer &answer);
    // `kept`: the gateway keeps the answer (a stored or background response), so the request
    // takes the chat translation to every provider, and the channel says the kept id.
    void execute(std::unique_ptr<execution::ClientChannel> channel, telemetry::TraceBuilder trace,
                 std::shared_ptr<const routing::RoutingTable> table,
                 ingress::ClientRequest &&client, routing::RouteDecision &&decision,
                 bool kept = false);
    // POST /v1/responses with `store`, `background` or `previous_response_id`: the stored
    // conversation inlined, the request read again. A refusal is the client's answer.
    std::optional<protocol::ApiError> readKeptRequest(ReadOperation &read,
                                                      const IncomingRequest &request,
                                                      const QByteArray &originalBody);
    // POST /v1/responses with `background`: kept as a task on the queue, answered `queued`.
    void acceptBackground(ReadOperation &&read);
    // A background task's run, for the ResponsesService.
    void runBackground(const responses::StoredResponse &task, telemetry::TraceBuilder trace,
                       std::unique_ptr<execution::ClientChannel> channel);
    // GET, DELETE and POST under /v1/responses/{id}.
    // In a fleet, the `previous_response_id` a Responses request names; empty otherwise.
    QByteArray fleetPreviousResponse(const IncomingRequest &request) const;
    void handleStoredResponse(const IncomingRequest &request, ResponseWriter writer,
                              const HeaderList &identity);
    // POST /v1/messages/count_tokens for a model no anthropic provider serves.
    void answerTokenEstimate(ResponseWriter &writer, telemetry::TraceBuilder &trace,
                             const protocol::ChatRequest &chat);
    // `caller` empty on an open gateway; a key with a model list sees only the models it may use.
    void handleModels(ResponseWriter writer, const HeaderList &identity,
                      const std::optional<auth::ClientKey> &caller);
    void handleReady(ResponseWriter writer, const HeaderList &identity);
    void handleAdmin(const IncomingRequest &request, ResponseWriter writer,
                     const HeaderList &identity);
    void handleMetrics(const IncomingRequest &request, ResponseWriter writer,
                       const HeaderList &identity);
    void refuse(ResponseWriter &writer, telemetry::TraceBuilder &trace,
                const protocol::ApiError &error,
                protocol::Operation operation = protocol::Operation::Chat);
    QJsonObject connectionsJson() const;

    GatewayServices m_services;
    AdminEndpoints m_admin;
    TraceStream *m_traceStream = nullptr; // child: GET /admin/v1/traces/stream
    std::function<QByteArray()> m_metricsText;
    answers::AnswerStore *m_answers = nullptr; // the engine's; null: no guard
    ResponseCaching *m_caching = nullptr;      // the engine's; null: no response cache
    ResponsesService *m_responses = nullptr;   // the engine's; null: nothing is kept
    QPointer<GatewayListener> m_listener;
    qint64 m_startedAtSecs;
    QHash<execution::RequestExecution *, bool> m_executions;
    timing::LoopTurn m_loopTurn;
    timing::TurnBudget m_startsThisTurn;
    std::deque<WaitingStart> m_waitingToStart;
    bool m_startWaitingPosted = false;
    std::unique_ptr<execution::ShadowTraffic> m_shadows;
    bool m_accepting = true;
    bool m_draining = false;
    quint64 m_totalRequests = 0;
    RequestRateMeter m_rate{m_services.scheduler.clock()};
};

} // namespace switchyard::http
