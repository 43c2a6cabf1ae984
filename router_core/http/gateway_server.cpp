#include "http/gateway_server.h"

#include "auth/client_authenticator.h"
#include "execution/request_execution.h"
#include "health/health_registry.h"
#include "http/client_channels.h"
#include "http/gateway_listener.h"
#include "http/messages_answers.h"
#include "http/trace_stream.h"
#include "ingress/client_request.h"
#include "protocol/chat_request.h"
#include "protocol/gateway_headers.h"
#include "telemetry/request_recorder.h"

#include <QDateTime>
#include <QHttpServerRequest>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QStringBuilder>
#include <QTcpSocket>
#include <algorithm>
#include <list>

Q_LOGGING_CATEGORY(lcGateway, "switchyard.gateway")

using namespace Qt::StringLiterals;

namespace switchyard::http {

namespace {

QString methodName(QHttpServerRequest::Method method)
{
    switch (method) {
    case QHttpServerRequest::Method::Get:
        return QStringLiteral("GET");
    case QHttpServerRequest::Method::Put:
        return QStringLiteral("PUT");
    case QHttpServerRequest::Method::Delete:
        return QStringLiteral("DELETE");
    case QHttpServerRequest::Method::Post:
        return QStringLiteral("POST");
    case QHttpServerRequest::Method::Head:
        return QStringLiteral("HEAD");
    case QHttpServerRequest::Method::Options:
        return QStringLiteral("OPTIONS");
    case QHttpServerRequest::Method::Patch:
        return QStringLiteral("PATCH");
    case QHttpServerRequest::Method::Connect:
        return QStringLiteral("CONNECT");
    case QHttpServerRequest::Method::Trace:
        return QStringLiteral("TRACE");
    default:
        return QStringLiteral("UNKNOWN");
    }
}

QByteArray headerValue(const IncomingRequest &request, QByteArrayView name)
{
    return protocol::headerValue(request.headers, name);
}

// A client's x-request-id is kept when it is a sane token; anything else gets a fresh id, so a
// hostile header can never break the response headers it is echoed into. Explain applies the
// same rule, so a request and its explanation draw the same endpoint.
QByteArray requestIdFrom(const IncomingRequest &request)
{
    const QByteArray accepted = routing::acceptedRequestId(request.headers);
    return accepted.isEmpty() ? telemetry::newRequestId() : accepted;
}

HeaderList identityHeaders(const telemetry::Trace &trace)
{
    return protocol::identityHeaders(trace.requestId, trace.traceId, "none");
}

QByteArray compactJson(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

// The headers of an answer given before any routing or attempt: the same names every answer
// carries, saying that nothing was routed or tried.
HeaderList notRoutedHeaders(const telemetry::Trace &trace)
{
    HeaderList headers = identityHeaders(trace);
    headers.append({QByteArray("x-switchyard-route"), QByteArray("none")});
    headers.append({QByteArray("x-switchyard-tier"), QByteArray("none")});
    headers.append({QByteArray("x-switchyard-attempts"), QByteArray("0")});
    headers.append({QByteArray("x-switchyard-degraded"), QByteArray("0")});
    return headers;
}

// What one turn of the engine loop may spend on starting requests (GatewayServer::startWaiting):
// at most this many, and none after this part of the turn has passed. A request's start (its
// body parsed, authenticated, admitted, routed, its provider call set up) costs the engine a few
// hundred microseconds when a burst arrives, its caches cold: measured, 9,900 started in one go
// held the loop for up to 1.9 s, so that the first-token and idle timers of the streams already
// running fired late. 32 a turn, or 5 ms, keeps a turn short and starts thousands a second.
// Fewer starts a turn also pace the provider connections libcurl opens for them.
constexpr int kStartsPerTurn = 32;
constexpr std::chrono::milliseconds kStartTimePerTurn{5};
// 503 `gateway_overloaded` with Retry-After 1: the gateway, not a provider, is out of room.
protocol::ApiError gatewayOverloaded(const QString &message)
{
    return {503,
            message,
            QStringLiteral("server_error"),
            {},
            QStringLiteral("gateway_overloaded"),
            QByteArray("1")};
}

protocol::ApiError shuttingDown()
{
    return protocol::ApiError::serviceUnavailable(
        QStringLiteral("Switchyard is shutting down and takes no new requests."));
}

} // namespace

qint64 RequestRateMeter::secondsSinceStart() const
{
    return std::chrono::duration_cast<std::chrono::seconds>(m_clock.now() - m_startedAt).count();
}

void RequestRateMeter::record()
{
    const qint64 second = secondsSinceStart();
    const auto slot = std::size_t(second % m_second.size());
    if (m_second[slot] != second) {
        m_second[slot] = second;
        m_count[slot] = 0;
    }
    ++m_count[slot];
}

double RequestRateMeter::perSecond() const
{
    // The current second is still filling up; average the whole seconds before it.
    const qint64 now = secondsSinceStart();
    const qint64 seconds = std::min<qint64>(now, kWindowSeconds);
    if (seconds == 0)
        return 0.0;
    int total = 0;
    for (std::size_t slot = 0; slot < m_second.size(); ++slot) {
        if (m_second[slot] < now && m_second[slot] >= now - seconds)
            total += m_count[slot];
    }
    return double(total) / double(seconds);
}

GatewayServer::GatewayServer(GatewayServices services, QObject *parent)
    : QObject(parent), m_services(services),
      m_traceStream(new TraceStream(services.recorder, this)),
      m_startedAtSecs(QDateTime::currentSecsSinceEpoch()),
      m_startsThisTurn(m_loopTurn, kStartsPerTurn, kStartTimePerTurn)
{
    m_shadows = std::make_unique<execution::ShadowTraffic>(
        services.config,
        execution::ExecutionServices{services.transport,
                                     services.health,
                                     services.recorder,
                                     services.retryBudget,
                                     services.admission,
                                     services.scheduler,
                                     services.loop,
                                     [] { return QRandomGenerator::global()->generateDouble(); },
                                     {}});
    m_admin.add(QHttpServerRequest::Method::Get, QStringLiteral("connections"),
                [this](const AdminRequest &, const QStringList &) {
                    return AdminReply::json(QJsonDocument(connectionsJson()));
                });
}

telemetry::ConnectionCounts GatewayServer::connectionCounts() const
{
    return m_listener ? m_listener->counts() : telemetry::ConnectionCounts{};
}

QJsonObject GatewayServer::connectionsJson() const
{
    const telemetry::ConnectionCounts counts = connectionCounts();
    const config::ServerConfig &limits = m_services.config.config().server;
    return {
        {QStringLiteral("open"), counts.open},
        {QStringLiteral("accepted"), qint64(counts.accepted)},
        {QStringLiteral("refused"),
         QJsonObject{
             {QStringLiteral("max_connections"), qint64(counts.refusedOverTotal)},
             {QStringLiteral("max_connections_per_address"), qint64(counts.refusedOverAddress)}}},
        {QStringLiteral("timed_out"),
         QJsonObject{{QStringLiteral("headers"), qint64(counts.headerTimeouts)},
                     {QStringLiteral("body"), qint64(counts.bodyTimeouts)}}},
        {QStringLiteral("idle_closed"), qint64(counts.idleClosed)},
        {QStringLiteral("accept_errors"), qint64(counts.acceptErrors)},
        {QStringLiteral("refusals_draining"), counts.refusalsDraining},
        {QStringLiteral("refusals_cut_off"), qint64(counts.refusalsCutOff)},
        {QStringLiteral("accept_pauses"), qint64(counts.acceptPauses)},
        // The limits new connections get, so a reader sees how near the counts are to them.
        {QStringLiteral("limits"),
         QJsonObject{
             {QStringLiteral("max_connections"), limits.maxConnections},
             {QStringLiteral("max_connections_per_address"), limits.maxConnectionsPerAddress},
             {QStringLiteral("max_refusals_draining"), limits.maxRefusalsDraining},
             {QStringLiteral("header_timeout_ms"), qint64(limits.headerTimeout.count())},
             {QStringLiteral("body_timeout_ms"), qint64(limits.bodyTimeout.count())},
             {QStringLiteral("keep_alive_idle_ms"), qint64(limits.keepAliveIdle.count())}}},
    };
}

GatewayServer::~GatewayServer()
{
    // Executions still open are deleted here, while the services they borrow still exist: left
    // to QObject's child cleanup they could outlive them, and a client socket closing in that
    // cleanup would call into a destroyed retry budget. Their destructors abort the upstream
    // calls.
    const QList<execution::RequestExecution *> open = m_executions.keys();
    m_executions.clear();
    for (execution::RequestExecution *execution : open)
        delete execution;
    m_shadows.reset(); // as the live ones, while what they borrow exists
}

// One client connection's answers must leave in the order its requests came. The listener hands
// a pipelined request on while the previous answer may still be streaming, so later requests
// wait here, each with its writer, until the one before has been answered.
class ConnectionQueue final : public QObject {
    // For findChild on its socket, without the allocated name and extra data a name costs.
    Q_OBJECT
public:
    explicit ConnectionQueue(QTcpSocket *socket) : QObject(socket) {}
    static ConnectionQueue *of(QTcpSocket *socket)
    {
        auto *queue = socket->findChild<ConnectionQueue *>(QString(), Qt::FindDirectChildrenOnly);
        return queue ? queue : new ConnectionQueue(socket);
    }

    bool answering = false;
    // A list, not a deque: pipelined requests are rare, and an empty deque already holds a
    // 512-byte block, for every connection.
    std::list<std::pair<IncomingRequest, ResponseWriter>> waiting;
};

quint16 GatewayServer::listenOn(const QString &host, quint16 port, QString *errorMessage)
{
    QHostAddress address;
    if (host == QLatin1String("localhost"))
        address = QHostAddress::LocalHost;
    else if (!address.setAddress(host)) {
        *errorMessage = QStringLiteral("`%1` is not an IP address to listen on").arg(host);
        return 0;
    }
    auto *listener = new GatewayListener(m_services.config, m_services.scheduler, this);
    // Qt's default backlog of 50 makes a burst of new clients wait for SYN retries. The kernel
    // caps it at net.core.somaxconn (4,096 by default since Linux 5.4).
    listener->setListenBacklogSize(4096);
    if (!listener->listen(address, port)) {
        *errorMessage = QStringLiteral("cannot listen on %1:%2: %3")
                            .arg(host)
                            .arg(port)
                            .arg(listener->errorString());
        delete listener;
        return 0;
    }
    listener->setRequestHandler(
        [this](QTcpSocket *socket, IncomingRequest request) {
            handleRequest(socket, std::move(request));
        },
        [](QTcpSocket *socket) { ConnectionQueue::of(socket); });
    m_listener = listener;
    return listener->serverPort();
}

void GatewayServer::beginDraining()
{
    m_draining = true;
    if (m_responses)
        m_responses->stopStarting(); // queued tasks wait for the next start
}

void GatewayServer::stopAccepting()
{
    m_draining = true;
    m_accepting = false;
    if (m_listener)
        m_listener->close();
}

void GatewayServer::handleRequest(QTcpSocket *socket, IncomingRequest request)
{
    ResponseWriter writer(socket);
    writer.setClientConnection(request.http10, request.closeAfterAnswer);
    ConnectionQueue *queue = ConnectionQueue::of(socket);
    // Behind any request still waiting too: between one answer's end and the posted start of the
    // next, a new request must not overtake those queued before it.
    if (queue->answering || !queue->waiting.empty()) {
        queue->waiting.emplace_back(std::move(request), std::move(writer));
        return;
    }
    answer(queue, std::move(request), std::move(writer));
}

void GatewayServer::answer(ConnectionQueue *queue, IncomingRequest request, ResponseWriter writer)
{
    queue->answering = true;
    writer.setCompletionHook([self = QPointer<GatewayServer>(this), queue = QPointer(queue)] {
        if (!queue)
            return; // the connection is gone
        queue->answering = false;
        GatewayListener::answerFinished(qobject_cast<QTcpSocket *>(queue->parent()));
        if (queue->waiting.empty() || !self)
            return;
        // Not from inside the writer that just finished: answer the next on a fresh stack.
        QMetaObject::invokeMethod(
            queue,
            [self, queue] {
                if (!self || !queue || queue->answering || queue->waiting.empty())
                    return;
                auto [next, nextWriter] = std::move(queue->waiting.front());
                queue->waiting.pop_front();
                self->answer(queue, std::move(next), std::move(nextWriter));
            },
            Qt::QueuedConnection);
    });
    route(std::move(request), std::move(writer));
}

void GatewayServer::route(IncomingRequest request, ResponseWriter writer)
{
    const QString &path = request.path;
    const QHttpServerRequest::Method method = request.method;

    // A valid traceparent makes this request a child of the client's span; otherwise it starts
    // a trace of its own.
    std::optional<telemetry::TraceParent> parent =
        telemetry::parseTraceparent(headerValue(request, "traceparent"));
    if (!parent)
        parent = telemetry::TraceParent{telemetry::newTraceId(), {}};
    telemetry::TraceBuilder trace(m_services.scheduler.clock(), requestIdFrom(request),
                                  std::move(parent->traceId), std::move(parent->parentSpanId));
    const HeaderList identity = identityHeaders(trace.trace());

    // A wrong method gets 405 with Allow, in the shape the path's clients read: Anthropic's on
    // /v1/messages, OpenAI's everywhere else.
    const auto onlyAllows = [&](QHttpServerRequest::Method allowed, const char *allowHeader,
                                protocol::Operation shape = protocol::Operation::Chat) {
        if (method == allowed)
            return true;
        HeaderList headers = identity;
        headers.append({QByteArray("Allow"), QByteArray(allowHeader)});
        const protocol::ApiError error =
            protocol::ApiError::methodNotAllowed(methodName(method), path);
        if (speaksAnthropic(shape))
            MessagesAnswers::sendError(writer, error, headers);
        else
            writer.sendError(error, headers);
        return false;
    };

    if (path == QLatin1String("/v1/chat/completions")) {
        if (onlyAllows(QHttpServerRequest::Method::Post, "POST"))
            handleOperation(std::move(request), std::move(writer), std::move(trace),
                            protocol::Operation::Chat);
    } else if (path == QLatin1String("/v1/messages")) {
        if (onlyAllows(QHttpServerRequest::Method::Post, "POST", protocol::Operation::Messages))
            handleOperation(std::move(request), std::move(writer), std::move(trace),
                            protocol::Operation::Messages);
    } else if (path == QLatin1String("/v1/messages/count_tokens")) {
        if (onlyAllows(QHttpServerRequest::Method::Post, "POST", protocol::Operation::CountTokens))
            handleOperation(std::move(request), std::move(writer), std::move(trace),
                            protocol::Operation::CountTokens);
    } else if (path.startsWith(QLatin1String("/v1/messages/"))) {
        // Anthropic's clients read Anthropic's errors on every path of its API.
        MessagesAnswers::sendError(writer, protocol::ApiError::notFound(methodName(method), path),
                                   identity);
    } else if (path == QLatin1String("/v1/responses")) {
        if (!onlyAllows(QHttpServerRequest::Method::Post, "POST"))
            return;
        const QByteArray previous = fleetPreviousResponse(request);
        if (previous.isEmpty())
            return handleOperation(std::move(request), std::move(writer), std::move(trace),
                                   protocol::Operation::Responses);
        // The conversation it continues may have been stored by another node: its record is
        // brought here first, then the request is read as on a single node.
        struct Held {
            IncomingRequest request;
            ResponseWriter writer;
            telemetry::TraceBuilder trace;
        };
        auto held =
            std::make_shared<Held>(Held{std::move(request), std::move(writer), std::move(trace)});
        m_responses->prefetch(previous, [self = QPointer<GatewayServer>(this), held] {
            if (self)
                self->handleOperation(std::move(held->request), std::move(held->writer),
                                      std::move(held->trace), protocol::Operation::Responses);
        });
    } else if (path.startsWith(QLatin1String("/v1/responses/")) && m_responses) {
        handleStoredResponse(request, std::move(writer), identity);
    } else if (path == QLatin1String("/v1/embeddings")) {
        if (onlyAllows(QHttpServerRequest::Method::Post, "POST"))
            handleOperation(std::move(request), std::move(writer), std::move(trace),
                            protocol::Operation::Embeddings);
    } else if (path == QLatin1String("/v1/completions")) {
        if (onlyAllows(QHttpServerRequest::Method::Post, "POST"))
            handleOperation(std::move(request), std::move(writer), std::move(trace),
                            protocol::Operation::Completions);
    } else if (path == QLatin1String("/v1/models")) {
        if (onlyAllows(QHttpServerRequest::Method::Get, "GET")) {
            // The model list is part of the API a key opens: it needs one too.
            const auth::ClientAuthenticator::Verdict caller =
                m_services.authenticator.authenticate(m_services.config.config(), request.headers);
            if (caller.refusal)
                writer.sendError(*caller.refusal, identity);
            else
                handleModels(std::move(writer), identity, caller.key);
        }
    } else if (path == QLatin1String("/healthz")) {
        if (onlyAllows(QHttpServerRequest::Method::Get, "GET")) {
            writer.sendWhole(200, identity, "application/json",
                             compactJson({{QStringLiteral("status"), QStringLiteral("ok")}}));
        }
    } else if (path == QLatin1String("/readyz")) {
        if (onlyAllows(QHttpServerRequest::Method::Get, "GET"))
            handleReady(std::move(writer), identity);
    } else if (path == QLatin1String("/metrics") && m_metricsText) {
        if (onlyAllows(QHttpServerRequest::Method::Get, "GET"))
            handleMetrics(request, std::move(writer), identity);
    } else if (path.startsWith(QLatin1String("/admin/v1/"))) {
        handleAdmin(request, std::move(writer), identity);
    } else {
        writer.sendError(protocol::ApiError::notFound(methodName(method), path), identity);
    }
}

void GatewayServer::handleAdmin(const IncomingRequest &request, ResponseWriter writer,
                                const HeaderList &identity)
{
    // The admin API can take providers down: the admin token, or this machine only.
    if (const std::optional<protocol::ApiError> refusal = auth::adminRefusal(
            m_services.config.config().auth, request.remoteAddress.value_or(QHostAddress()),
            request.headers, auth::AdminSurface::AdminApi)) {
        writer.sendError(*refusal, identity);
        return;
    }
    const QString path = request.path.mid(qsizetype(sizeof("/admin/v1/") - 1));
    const QUrlQuery query(request.query);
    if (path == QLatin1String("traces/stream") &&
        request.method == QHttpServerRequest::Method::Get) {
        QString problem;
        const std::optional<telemetry::TraceFilter> filter =
            telemetry::TraceFilter::fromQuery(query, &problem);
        if (!filter) {
            writer.sendError(invalidAdminRequest(problem), identity);
            return;
        }
        m_traceStream->subscribe(std::move(writer), identity, *filter);
        return;
    }
    // An endpoint may answer later (its work runs on another thread): the writer waits with the
    // answer, and one whose client left meanwhile writes nothing.
    auto pending = std::make_shared<ResponseWriter>(std::move(writer));
    m_admin.dispatch({request.method, path, query, request.headers, request.body},
                     [pending, identity](const http::AdminReply &reply) {
                         pending->sendWhole(reply.status, identity + reply.headers,
                                            "application/json",
                                            reply.body.toJson(QJsonDocument::Compact));
                     });
}

void GatewayServer::handleMetrics(const IncomingRequest &request, ResponseWriter writer,
                                  const HeaderList &identity)
{
    // Provider names, routes and error counts tell an outsider much: guarded like the admin API.
    if (const std::optional<protocol::ApiError> refusal = auth::adminRefusal(
            m_services.config.config().auth, request.remoteAddress.value_or(QHostAddress()),
            request.headers, auth::AdminSurface::Metrics)) {
        writer.sendError(*refusal, identity);
        return;
    }
    writer.sendWhole(200, identity, "text/plain; version=0.0.4; charset=utf-8", m_metricsText());
}

void GatewayServer::handleModels(ResponseWriter writer, const HeaderList &identity,
                                 const std::optional<auth::ClientKey> &caller)
{
    QJsonArray data;
    for (const routing::Router::ModelListing &model : m_services.router.models()) {
        // A model the key may not use would only be refused with 403: it is not offered.
        if (caller && !caller->limits.allowsModel(model.id))
            continue;
        // `endpoints` is Switchyard's own: the paths a client can ask for the model on.
        data.append(
            QJsonObject{{QStringLiteral("id"), model.id},
                        {QStringLiteral("object"), QStringLiteral("model")},
                        {QStringLiteral("created"), m_startedAtSecs},
                        {QStringLiteral("owned_by"), model.ownedBy},
                        {QStringLiteral("endpoints"),
                         QJsonArray::fromStringList(protocol::operationPaths(model.endpoints))}});
    }
    writer.sendWhole(200, identity, "application/json",
                     compactJson({{QStringLiteral("object"), QStringLiteral("list")},
                                  {QStringLiteral("data"), data}}));
}

void GatewayServer::handleReady(ResponseWriter writer, const HeaderList &identity)
{
    const int up = m_services.health.providersUp();
    // Not ready from the moment a shutdown begins, while requests are still served: a load
    // balancer's check must see it before the listener closes.
    const bool ready = !m_draining && up > 0;
    writer.sendWhole(
        ready ? 200 : 503, identity, "application/json",
        compactJson({{QStringLiteral("status"),
                      ready ? QStringLiteral("ready") : QStringLiteral("not_ready")},
                     {QStringLiteral("draining"), m_draining},
                     {QStringLiteral("providers_up"), up},
                     {QStringLiteral("providers"), m_services.health.providerCount()}}));
}

void GatewayServer::answerTokenEstimate(ResponseWriter &writer, telemetry::TraceBuilder &trace,
                                        const protocol::ChatRequest &chat)
{
    // No provider of the model counts Anthropic's way: the gateway's own estimate, the one
    // routing uses, said to be one. Nothing was sent anywhere, and nothing is billed.
    HeaderList headers = notRoutedHeaders(trace.trace());
    headers.append({QByteArray("x-switchyard-tokens-estimated"), QByteArray("true")});
    const qint64 estimate = chat.estimatedInputTokens;
    writer.sendWhole(200, headers, "application/json",
                     compactJson({{QStringLiteral("input_tokens"), estimate}}));
    trace.pointEvent(QStringLiteral("token count"),
                     QStringLiteral("estimated %1 input tokens").arg(estimate));
    m_services.recorder.record(trace.finish(200, QStringLiteral("ok")));
}

void GatewayServer::refuse(ResponseWriter &writer, telemetry::TraceBuilder &trace,
                           const protocol::ApiError &error, protocol::Operation operation)
{
    // A request refused before any attempt (its body, its model, admission) carries the same
    // headers as every answer, saying that nothing was routed or tried.
    HeaderList headers = notRoutedHeaders(trace.trace());
    if (speaksAnthropic(operation))
        MessagesAnswers::sendError(writer, error, headers);
    else
        writer.sendError(error, headers);
    trace.pointEvent(QStringLiteral("completion"), error.code.isEmpty() ? error.type : error.code);
    m_services.recorder.record(
        trace.finish(error.status, error.code.isEmpty() ? error.type : error.code));
}

// ---- one API request, stage by stage ------------------------------------------------------------

// A Responses request the gateway keeps: what it asked, who owns it, the stored conversation
// it continues.
struct KeptResponse {
    KeepRequest request;
    QString owner;
    QByteArray history;
};

struct GatewayServer::ReadOperation {
    ResponseWriter writer;
    telemetry::TraceBuilder trace;
    std::shared_ptr<const routing::RoutingTable> table;
    ingress::ClientRequest client;
    auth::ClientAuthenticator::Verdict caller;
    protocol::Operation operation;
    std::optional<KeptResponse> kept;
    // The body as the client sent it: the response cache's key is its meaning. Shared with the
    // request's own bytes, and let go when the request is handed on.
    QByteArray body;
};

void GatewayServer::handleOperation(IncomingRequest request, ResponseWriter writer,
                                    telemetry::TraceBuilder trace, protocol::Operation operation)
{
    if (!m_accepting) {
        describeEndpoint(trace.trace(), request.path, operation);
        return refuse(writer, trace, shuttingDown(), operation);
    }
    // Behind those already waiting: a request must not overtake one read before it.
    if (!m_waitingToStart.empty() || !m_startsThisTurn.take())
        return waitToStart({std::move(request), std::move(writer), std::move(trace), operation,
                            m_services.scheduler.clock().now()});
    startOperation(std::move(request), std::move(writer), std::move(trace), operation);
}

void GatewayServer::waitToStart(WaitingStart waiting)
{
    const int maxInFlight = m_services.config.config().resilience.admission.maxInFlight;
    if (inFlight() >= maxInFlight) {
        describeEndpoint(waiting.trace.trace(), waiting.request.path, waiting.operation);
        return refuse(waiting.writer, waiting.trace,
                      gatewayOverloaded(
                          QStringLiteral("Switchyard already holds %1 request(s), running or "
                                         "waiting to start, its limit (`admission.max_in_flight`); "
                                         "retry shortly.")
                              .arg(inFlight())),
                      waiting.operation);
    }
    m_waitingToStart.push_back(std::move(waiting));
    emit inFlightChanged(inFlight());
    if (!std::exchange(m_startWaitingPosted, true)) {
        // Posted events are the first thing of the next turn, before its sockets and timers.
        QMetaObject::invokeMethod(this, &GatewayServer::startWaiting, Qt::QueuedConnection);
    }
}

void GatewayServer::startWaiting()
{
    m_startWaitingPosted = false;
    const timing::Clock::TimePoint now = m_services.scheduler.clock().now();
    const std::chrono::milliseconds longest =
        m_services.config.config().resilience.admission.maxStartWait;
    while (!m_waitingToStart.empty()) {
        const WaitingStart &first = m_waitingToStart.front();
        const auto waited =
            std::chrono::duration_cast<std::chrono::milliseconds>(now - first.since);
        const bool gone = !first.writer.clientConnected();
        const bool late = waited >= longest;
        // Only a request that would start waits for a later turn; the others end now.
        if (!gone && !late && m_accepting && !m_startsThisTurn.take())
            break;
        WaitingStart next = std::move(m_waitingToStart.front());
        m_waitingToStart.pop_front();
        if (!gone && !late && m_accepting) {
            next.trace.pointEvent(QStringLiteral("waited to start"),
                                  QString::number(waited.count()) +
                                      QStringLiteral(" ms: the engine had started as many "
                                                     "requests as one turn of its loop takes"));
            startOperation(std::move(next.request), std::move(next.writer), std::move(next.trace),
                           next.operation);
            continue;
        }
        describeEndpoint(next.trace.trace(), next.request.path, next.operation);
        if (gone) {
            // Nobody to answer: the trace says so, as for a client gone during its answer.
            next.trace.pointEvent(QStringLiteral("completion"),
                                  QStringLiteral("client_disconnected after waiting %1 ms to "
                                                 "start")
                                      .arg(waited.count()));
            m_services.recorder.record(next.trace.finish(499, u"client_disconnected"_s));
        } else if (late) {
            refuse(next.writer, next.trace,
                   gatewayOverloaded(
                       QStringLiteral("Switchyard is overloaded: the request waited %1 ms to be "
                                      "started, longer than `admission.max_start_wait` (%2 ms). "
                                      "Retry shortly.")
                           .arg(waited.count())
                           .arg(longest.count())),
                   next.operation);
        } else {
            // Stopped accepting while it waited: it gets what a request arriving now gets.
            refuse(next.writer, next.trace, shuttingDown(), next.operation);
        }
    }
    emit inFlightChanged(inFlight());
    if (!m_waitingToStart.empty() && !std::exchange(m_startWaitingPosted, true))
        QMetaObject::invokeMethod(this, &GatewayServer::startWaiting, Qt::QueuedConnection);
}

void GatewayServer::startOperation(IncomingRequest request, ResponseWriter writer,
                                   telemetry::TraceBuilder trace, protocol::Operation operation)
{
    const int ingressSpan = trace.openSpan(QStringLiteral("ingress"));
    describeEndpoint(trace.trace(), request.path, operation);
    ++m_totalRequests;
    m_rate.record();
    // The one moment this request takes the config: everything that serves it reads this
    // snapshot, so an Apply while it runs changes nothing for it.
    std::shared_ptr<const routing::RoutingTable> table = m_services.router.table();
    startTrace(trace, request, table->config());
    const auth::ClientAuthenticator::Verdict caller = identifyCaller(trace, request, *table);
    if (caller.refusal)
        return refuse(writer, trace, *caller.refusal, operation);
    if (const qint64 limit = table->config().server.maxBodyBytes; request.body.size() > limit)
        return refuse(writer, trace, protocol::ApiError::payloadTooLarge(limit), operation);
    // Read before the body is let go: the key's fingerprint is the body's.
    auto duplicateKey = idempotency::readKey(request, operation, table->config().idempotency);
    if (const auto *malformed = std::get_if<protocol::ApiError>(&duplicateKey))
        return refuse(writer, trace, *malformed, operation);
    // What a Responses request asks the gateway to keep is read off its body first: the rest is
    // an ordinary request. One that keeps nothing is read exactly as before.
    std::optional<KeepRequest> keep;
    QByteArray originalBody;
    if (operation == protocol::Operation::Responses && m_responses) {
        auto asked = readKeepRequest(request.body, table->config().responses);
        if (const auto *error = std::get_if<protocol::ApiError>(&asked))
            return refuse(writer, trace, *error, operation);
        if (auto &wanted = std::get<KeepRequest>(asked);
            wanted.store || !wanted.previousResponseId.isEmpty()) {
            originalBody = std::move(request.body);
            request.body = wanted.body;
            keep = std::move(wanted);
        }
    }
    ingress::ClientRequest client;
    const std::optional<protocol::ApiError> unreadable =
        ingress::readClientRequest(client, operation, request.headers, request.body, *table);
    // The client request holds what is needed of the body; the cache may still read it whole.
    QByteArray sentBody = m_caching ? std::move(request.body) : QByteArray();
    request.body = QByteArray();
    closeIngressSpan(trace, ingressSpan, client);
    if (unreadable)
        return refuse(writer, trace, *unreadable, operation);
    if (const std::optional<protocol::ApiError> refusal = bindCaller(trace, client, caller))
        return refuse(writer, trace, *refusal, operation);
    if (client.answeredByEstimate)
        return answerTokenEstimate(writer, trace, client.chat);
    ReadOperation read{
        std::move(writer), std::move(trace), std::move(table),   std::move(client), caller,
        operation,         std::nullopt,     std::move(sentBody)};
    if (keep) {
        read.kept = KeptResponse{std::move(*keep), {}, {}};
        if (const std::optional<protocol::ApiError> refusal =
                readKeptRequest(read, request, originalBody))
            return refuse(read.writer, read.trace, *refusal, operation);
    }
    // A request without a key costs the guard nothing: no lookup, no Redis round trip.
    if (auto *key = std::get_if<idempotency::Key>(&duplicateKey); key && m_answers)
        return guardDuplicates(std::move(read), std::move(*key));
    run(std::move(read));
}

void GatewayServer::run(ReadOperation &&read)
{
    if (read.kept && read.kept->request.background)
        return acceptBackground(std::move(read));
    if (const std::optional<protocol::ApiError> refusal =
            admit(read.trace, read.client.context, read.caller))
        return refuse(read.writer, read.trace, *refusal, read.operation);
    routing::RouteDecision decision = routeRequest(read.trace, *read.table, read.client.context);
    // A decision without candidates (NoCandidate) still goes to the executor: when no endpoint
    // can take the request, the degradation ladder may answer it, and otherwise the executor
    // refuses it with 503 `no_route_candidate`.
    if (decision.refusal == routing::RouteDecision::Refusal::UnknownModel)
        return refuse(read.writer, read.trace,
                      protocol::ApiError::modelNotFound(read.client.chat.model), read.operation);
    // A request that keeps or continues a stored response is the gateway's own conversation:
    // the cache answers only those that keep nothing.
    if (decision.cache && m_caching && !read.kept)
        return lookUpCache(std::move(read), std::move(decision));
    dispatch(std::move(read), std::move(decision));
}

void GatewayServer::dispatch(ReadOperation &&read, routing::RouteDecision &&decision)
{
    read.body = QByteArray();
    if (read.kept && read.kept->request.store) {
        // A stored response: the answer is kept under a random id once it has been given.
        const ingress::ClientRequest &client = read.client;
        responses::StoredResponse record = m_responses->newRecord(
            read.kept->request, read.kept->owner, client.context.tenant, read.trace.trace().keyId,
            client.chat.model, responses::Priority::Normal, read.kept->history,
            client.responses->echo, client.context.headers);
        auto channel = std::make_unique<ResponsesChannel>(std::move(read.writer),
                                                          *read.client.responses, record.id);
        channel->setAnswerHook([responses = QPointer<ResponsesService>(m_responses),
                                record = std::move(record)](const QByteArray &response) {
            if (responses)
                responses->keepAnswered(record, response);
        });
        return execute(std::move(channel), std::move(read.trace), std::move(read.table),
                       std::move(read.client), std::move(decision), true);
    }
    if (read.kept) {
        // A stored conversation continued with `store: false`: made like a kept one, not kept.
        auto channel = std::make_unique<ResponsesChannel>(
            std::move(read.writer), *read.client.responses,
            ingress::responseIdFor(read.trace.trace().requestId).toUtf8());
        return execute(std::move(channel), std::move(read.trace), std::move(read.table),
                       std::move(read.client), std::move(decision), true);
    }
    // The channel is made first: it takes what it needs of the request before the request moves.
    std::unique_ptr<HttpClientChannel> channel =
        clientChannel(std::move(read.writer), read.client, read.trace.trace().requestId);
    if (!decision.shadow || !mayMirror(read.trace, read.client, decision)) {
        execute(std::move(channel), std::move(read.trace), std::move(read.table),
                std::move(read.client), std::move(decision));
        return;
    }
    // The shadow copies what the live request is about to move, and starts once the live one
    // has: the live request is never behind its shadow.
    const telemetry::RequestRecord live = read.trace.trace();
    const protocol::ChatRequest chat = read.client.chat;
    const QByteArray chatBody = read.client.chatBody;
    const routing::RequestContext context = read.client.context;
    const routing::RouteDecision shadowed = decision;
    std::shared_ptr<const config::Config> snapshot = read.table->snapshot();
    execute(std::move(channel), std::move(read.trace), std::move(read.table),
            std::move(read.client), std::move(decision));
    m_shadows->start(std::move(snapshot), chat, chatBody, context, shadowed, live);
}

bool GatewayServer::mayMirror(telemetry::TraceBuilder &trace, const ingress::ClientRequest &client,
                              const routing::RouteDecision &decision)
{
    // A shadow is sent the chat form, which a request only a provider's own API can carry lacks.
    if (client.nativeOnly) {
        trace.pointEvent(QStringLiteral("shadow"),
                         QStringLiteral("not mirrored: ") + client.nativeOnlyReason);
        return false;
    }
    // This request is about to be one of the gate's: the shadow needs room beside it.
    if (const std::optional<QString> refusal =
            m_shadows->refusal(decision, int(m_executions.size()) + 1)) {
        trace.pointEvent(QStringLiteral("shadow"), *refusal);
        return false;
    }
    telemetry::Trace &record = trace.trace();
    record.shadowRequestId = execution::ShadowTraffic::shadowIdOf(record.requestId);
    trace.pointEvent(
        QStringLiteral("shadow"),
        QStringLiteral("mirrored to %1 as %2")
            .arg(decision.shadow->providerId, QString::fromLatin1(record.shadowRequestId)));
    return true;
}

std::optional<protocol::ApiError> GatewayServer::readKeptRequest(ReadOperation &read,
                                                                 const IncomingRequest &request,
                                                                 const QByteArray &originalBody)
{
    KeptResponse &kept = *read.kept;
    const QString &keyId = read.trace.trace().keyId;
    kept.owner = responseOwner(keyId, read.client.context.tenant);
    // The request as the client sent it, for a provider that keeps responses itself.
    const auto readAsSent = [&]() -> std::optional<protocol::ApiError> {
        read.kept.reset();
        read.client = {};
        if (auto unreadable = ingress::readClientRequest(
                read.client, read.operation, request.headers, originalBody, *read.table))
            return unreadable;
        return bindCaller(read.trace, read.client, read.caller);
    };
    if (!kept.request.previousResponseId.isEmpty()) {
        auto expanded = m_responses->withConversation(
            kept.request.body, kept.request.previousResponseId, kept.owner, &kept.history);
        if (auto *error = std::get_if<protocol::ApiError>(&expanded))
            return std::move(*error);
        if (std::holds_alternative<std::monostate>(expanded)) {
            // Not one this gateway keeps: a provider that speaks the Responses API may (its own
            // id), as before stored responses existed here.
            if (!kept.request.background &&
                ingress::chatBodyForNativeProviders(read.table->config(), originalBody))
                return readAsSent();
            protocol::ApiError missing = protocol::ApiError::invalidRequest(
                u"Previous response with id '%1' not found."_s.arg(
                    QString::fromUtf8(kept.request.previousResponseId)),
                u"previous_response_id"_s);
            missing.code = u"previous_response_not_found"_s;
            return missing;
        }
        ingress::ClientRequest continued;
        if (auto unreadable =
                ingress::readClientRequest(continued, read.operation, request.headers,
                                           std::get<QByteArray>(expanded), *read.table))
            return unreadable;
        read.client = std::move(continued);
        if (auto refusal = bindCaller(read.trace, read.client, read.caller))
            return refusal;
        read.trace.pointEvent(u"conversation"_s, u"continues %1"_s.arg(QString::fromUtf8(
                                                     kept.request.previousResponseId)));
    }
    if (read.client.nativeOnly) {
        // Built-in tools and the like: only a provider's own Responses API can run them.
        if (!kept.history.isEmpty()) {
            // The conversation is this gateway's: a provider cannot be given its id.
            return protocol::ApiError::invalidRequest(
                u"A conversation stored on this gateway is continued through the chat "
                u"translation, which cannot carry this request: "_s +
                    read.client.nativeOnlyReason,
                u"previous_response_id"_s);
        }
        if (kept.request.background) {
            return protocol::ApiError::invalidRequest(
                u"Background responses run on this gateway's queue through the chat "
                u"translation, which cannot carry this request: "_s +
                    read.client.nativeOnlyReason,
                u"background"_s);
        }
        return readAsSent(); // the provider keeps it, if it does, as before
    }
    QJsonObject &echo = read.client.responses->echo;
    echo.insert(u"store"_s, kept.request.store);
    echo.insert(u"background"_s, kept.request.background);
    echo.insert(u"previous_response_id"_s,
                kept.request.previousResponseId.isEmpty()
                    ? QJsonValue()
                    : QJsonValue(QString::fromUtf8(kept.request.previousResponseId)));
    return std::nullopt;
}

void GatewayServer::acceptBackground(ReadOperation &&read)
{
    const routing::RequestContext &context = read.client.context;
    if (auto full = m_responses->admitTask(context.tenant))
        return refuse(read.writer, read.trace, *full, read.operation);
    // A model nothing serves is refused now, as a direct request is, not when a worker takes the
    // task (the routing is asked without recording it: the run routes again, as of its time).
    if (m_services.router.route(*read.table, context).refusal ==
        routing::RouteDecision::Refusal::UnknownModel)
        return refuse(read.writer, read.trace,
                      protocol::ApiError::modelNotFound(read.client.chat.model), read.operation);
    // Quotas and the key's allowance are taken when the task is accepted: a client learns of a
    // refusal at once, not when a worker picks the task up.
    if (auto refusal = admit(read.trace, context, read.caller))
        return refuse(read.writer, read.trace, *refusal, read.operation);
    const responses::Priority priority =
        responses::priorityFromName(context.priority).value_or(responses::Priority::Normal);
    responses::StoredResponse task =
        m_responses->newRecord(read.kept->request, read.kept->owner, context.tenant,
                               read.trace.trace().keyId, read.client.chat.model, priority,
                               read.kept->history, read.client.responses->echo, context.headers);
    read.trace.pointEvent(u"background"_s, u"queued as %1"_s.arg(QString::fromLatin1(task.id)));
    const HeaderList headers = identityHeaders(read.trace.trace());
    m_responses->acceptBackground(std::move(task), std::move(read.writer), headers,
                                  std::move(read.trace), read.kept->request.stream);
}

void GatewayServer::runBackground(const responses::StoredResponse &task,
                                  telemetry::TraceBuilder trace,
                                  std::unique_ptr<execution::ClientChannel> channel)
{
    // The config of this moment, not of when the task was accepted: an Apply in between (a
    // provider removed) is what the task must live with.
    std::shared_ptr<const routing::RoutingTable> table = m_services.router.table();
    QList<QPair<QByteArray, QByteArray>> headers;
    const QJsonObject kept = QJsonDocument::fromJson(task.headers).object();
    for (auto it = kept.begin(); it != kept.end(); ++it)
        headers.append({it.key().toLatin1(), it.value().toString().toUtf8()});
    ingress::ClientRequest client;
    const auto refuseTask = [&](const protocol::ApiError &error) {
        channel->sendError(error, {});
        trace.pointEvent(u"completion"_s, error.code.isEmpty() ? error.type : error.code);
        m_services.recorder.record(
            trace.finish(error.status, error.code.isEmpty() ? error.type : error.code));
    };
    if (auto unreadable = ingress::readClientRequest(client, protocol::Operation::Responses,
                                                     headers, task.request, *table))
        return refuseTask(*unreadable);
    client.context.requestId = trace.trace().requestId;
    client.context.tenant = task.tenant;
    telemetry::Trace &record = trace.trace();
    record.tenant = task.tenant;
    record.keyId = task.keyId;
    record.model = client.chat.model;
    record.streamed = true;
    // A key revoked, or its models narrowed, while the task waited: the task was accepted on the
    // key's word, which no longer holds.
    if (auto revoked =
            m_services.authenticator.stillAllows(table->config(), task.keyId, client.chat.model))
        return refuseTask(*revoked);
    routing::RouteDecision decision = routeRequest(trace, *table, client.context);
    if (decision.refusal == routing::RouteDecision::Refusal::UnknownModel)
        return refuseTask(protocol::ApiError::modelNotFound(client.chat.model));
    if (!client.context.intent.isEmpty() &&
        decision.refusal == routing::RouteDecision::Refusal::NoCandidate) {
        // No agent offers the intent now (none registered, all busy or gone): the task waits
        // for one instead of failing, until its time limit.
        return m_responses->awaitAgent(QByteArray(task.id),
                                       decision.steps.isEmpty()
                                           ? u"no agent offers `%1`"_s.arg(client.context.intent)
                                           : decision.steps.constLast().detail);
    }
    execute(std::move(channel), std::move(trace), std::move(table), std::move(client),
            std::move(decision), true);
}

QByteArray GatewayServer::fleetPreviousResponse(const IncomingRequest &request) const
{
    // A request that names no previous response costs a substring search, and only in a fleet.
    if (!m_responses || !m_responses->inFleet() ||
        !request.body.contains(QByteArrayView("previous_response_id")))
        return {};
    const QJsonValue previous =
        QJsonDocument::fromJson(request.body).object().value(u"previous_response_id"_s);
    return previous.isString() ? previous.toString().toUtf8() : QByteArray();
}

void GatewayServer::handleStoredResponse(const IncomingRequest &request, ResponseWriter writer,
                                         const HeaderList &identity)
{
    const std::shared_ptr<const routing::RoutingTable> table = m_services.router.table();
    const auth::ClientAuthenticator::Verdict caller =
        m_services.authenticator.authenticate(table->config(), request.headers);
    if (caller.refusal)
        return writer.sendError(*caller.refusal, identity);
    if (caller.key) {
        if (auto refusal = auth::ClientAuthenticator::tenantRefusal(*caller.key, request.headers))
            return writer.sendError(*refusal, identity);
    }
    // Without keys the tenant header names the owner, as it named it when the response was made.
    const QString owner =
        caller.key
            ? responseOwner(caller.key->id, caller.key->tenant)
            : responseOwner({}, QString::fromUtf8(headerValue(request, "x-switchyard-tenant")));
    const QString rest = request.path.mid(qsizetype(sizeof("/v1/responses/") - 1));
    m_responses->handle(request, rest, std::move(writer), identity, owner);
}

void GatewayServer::setResponses(ResponsesService *responses)
{
    m_responses = responses;
    if (!m_responses)
        return;
    m_responses->setRunner(
        [this](const responses::StoredResponse &task, telemetry::TraceBuilder trace,
               std::unique_ptr<execution::ClientChannel> channel) {
            runBackground(task, std::move(trace), std::move(channel));
        },
        [this](const responses::StoredResponse &task) {
            // A task run again after a restart: its first trace ended with the process.
            telemetry::TraceBuilder trace(m_services.scheduler.clock(), task.id,
                                          telemetry::newTraceId());
            const config::Config &config = m_services.config.config();
            trace.setLimits(
                {config.trace.chunkEvents, config.trace.keepBodies, config.trace.bodyMaxBytes});
            describeEndpoint(trace.trace(), u"/v1/responses"_s, protocol::Operation::Responses);
            return trace;
        },
        [this](telemetry::TraceBuilder trace, int status, const QString &outcome) {
            trace.pointEvent(u"completion"_s, outcome);
            m_services.recorder.record(trace.finish(status, outcome));
        });
}

void GatewayServer::guardDuplicates(ReadOperation &&read, idempotency::Key key)
{
    // Scoped by who asks, so that no tenant can read another's answer with a guessed key.
    idempotency::forScope(key, read.trace.trace().keyId, read.client.context.tenant);
    const int span = read.trace.openSpan(QStringLiteral("idempotency"));
    const QByteArray storeKey = key.storeKey;
    const QByteArray fingerprint = key.fingerprint;
    const QByteArray requestId = read.trace.trace().requestId;
    const std::chrono::milliseconds window = read.table->config().idempotency.window;
    // The claim may answer later (Redis): the request waits in a shared holder, which a server
    // gone by then drops with its writer (the client's connection goes with the server).
    auto waiting = std::make_shared<ReadOperation>(std::move(read));
    m_answers->claim(storeKey, fingerprint, requestId, window,
                     [self = QPointer<GatewayServer>(this), waiting, key = std::move(key),
                      span](answers::ClaimResult result) mutable {
                         if (self)
                             self->claimed(std::move(*waiting), std::move(key), span,
                                           std::move(result));
                     });
}

void GatewayServer::claimed(ReadOperation &&read, idempotency::Key key, int span,
                            answers::ClaimResult result)
{
    using Outcome = answers::ClaimResult::Outcome;
    const QString where = QString::fromLatin1(result.where);
    switch (result.outcome) {
    case Outcome::Claimed: {
        read.trace.closeSpan(span, QStringLiteral("claimed (%1)").arg(where));
        const config::IdempotencyConfig &config = read.table->config().idempotency;
        read.writer.addAnswerTap(idempotency::keeper(*m_answers, std::move(key),
                                                     std::move(result.token),
                                                     read.trace.trace().requestId, config));
        return run(std::move(read));
    }
    case Outcome::Running:
        read.trace.closeSpan(span, QStringLiteral("in use by %1 (%2)")
                                       .arg(QString::fromLatin1(result.holderRequestId), where));
        return refuse(read.writer, read.trace, idempotency::inUse(key), read.operation);
    case Outcome::Mismatch:
        read.trace.closeSpan(span, QStringLiteral("used by %1 for another request (%2)")
                                       .arg(QString::fromLatin1(result.holderRequestId), where));
        return refuse(read.writer, read.trace, idempotency::reused(key), read.operation);
    case Outcome::Answered:
        read.trace.closeSpan(span, QStringLiteral("answered by %1 (%2)")
                                       .arg(QString::fromLatin1(result.answer->requestId), where));
        return replayAnswer(read.writer, read.trace, *result.answer);
    }
}

void GatewayServer::lookUpCache(ReadOperation &&read, routing::RouteDecision &&decision)
{
    const config::ResponseCacheConfig cache = *decision.cache;
    const int span = read.trace.openSpan(u"response cache"_s);
    auto asked = ResponseCaching::keyFor(read.operation, read.body, read.client.context.headers,
                                         cache, ResponseCaching::targetOf(decision),
                                         read.trace.trace().keyId, read.client.context.tenant);
    if (const QString *bypass = std::get_if<QString>(&asked)) {
        // Not the cache's to answer: the request runs as it would without one.
        read.trace.closeSpan(span, u"bypassed: "_s + *bypass);
        read.writer.addHeader("x-switchyard-cache", "bypass");
        m_caching->countBypass();
        return dispatch(std::move(read), std::move(decision));
    }
    ResponseCaching::Key key = std::get<ResponseCaching::Key>(std::move(asked));
    const auto runMissed = [this, cache](ReadOperation &read, routing::RouteDecision &decision,
                                         ResponseCaching::Key &key) {
        m_caching->countMiss();
        read.trace.trace().responseCache = u"miss"_s;
        read.writer.addHeader("x-switchyard-cache", "miss");
        if (key.keep) {
            if (auto keeper =
                    m_caching->keeper(std::move(key), read.trace.trace().requestId, cache))
                read.writer.addAnswerTap(std::move(keeper));
        }
        dispatch(std::move(read), std::move(decision));
    };
    if (key.refresh) {
        read.trace.closeSpan(span, u"not looked up: the client asked for no-cache"_s);
        return runMissed(read, decision, key);
    }
    // The lookup may answer later (Redis): the request waits in a shared holder, which a server
    // gone by then drops with its writer, as the duplicate guard's claim does.
    auto waiting = std::make_shared<std::pair<ReadOperation, routing::RouteDecision>>(
        std::move(read), std::move(decision));
    const QByteArray storeKey = key.storeKey;
    m_caching->store().lookup(
        storeKey,
        [self = QPointer<GatewayServer>(this), waiting, key = std::move(key), span,
         runMissed](std::optional<answers::StoredAnswer> answer, const QByteArray &where) mutable {
            if (!self)
                return;
            auto &[read, decision] = *waiting;
            if (answer) {
                read.trace.closeSpan(span, u"hit (%1)"_s.arg(QString::fromLatin1(where)));
                return self->serveFromCache(read, *answer, where);
            }
            read.trace.closeSpan(span, u"miss (%1)"_s.arg(QString::fromLatin1(where)));
            runMissed(read, decision, key);
        });
}

void GatewayServer::serveFromCache(ReadOperation &read, const answers::StoredAnswer &answer,
                                   const QByteArray &where)
{
    m_caching->countHit();
    // No provider is called and nothing is charged: no tokens, no cost, no attempt. Admission
    // ran: a hit is a request the key's and tenant's request rates count, but no budget does.
    sendStoredAnswer(read.writer, answer, identityHeaders(read.trace.trace()),
                     {{QByteArray("x-switchyard-cache"), QByteArray("hit")},
                      {QByteArray("x-switchyard-replay-of"), answer.requestId}});
    telemetry::Trace &record = read.trace.trace();
    record.inputTokens = 0;
    record.outputTokens = 0;
    record.streamed = answer.streamed;
    record.responseCache = u"hit"_s;
    record.responseCacheSavedUsd = answer.priced ? answer.costUsd : 0.0;
    read.trace.pointEvent(
        u"response cache"_s,
        u"answer of request %1 (%2; it used %3 input and %4 output tokens at %5)"_s
            .arg(QString::fromLatin1(answer.requestId), QString::fromLatin1(where))
            .arg(answer.inputTokens)
            .arg(answer.outputTokens)
            .arg(answer.provider.isEmpty() ? u"an unknown provider"_s : answer.provider));
    m_services.recorder.record(read.trace.finish(answer.status, u"response_cache_hit"_s));
}

void GatewayServer::replayAnswer(ResponseWriter &writer, telemetry::TraceBuilder &trace,
                                 const answers::StoredAnswer &answer)
{
    // No provider is called and nothing is charged: the record says no tokens, so the ledger's
    // row costs nothing and the budgets and the key's token allowance are not touched. Admission
    // did not run either: a replay takes no request from the key's or tenant's allowance.
    idempotency::replay(writer, answer, identityHeaders(trace.trace()));
    trace.pointEvent(
        QStringLiteral("idempotent replay"),
        QStringLiteral("answer of request %1").arg(QString::fromLatin1(answer.requestId)));
    telemetry::Trace &record = trace.trace();
    record.inputTokens = 0;
    record.outputTokens = 0;
    m_services.recorder.record(trace.finish(answer.status, QStringLiteral("idempotent_replay")));
}

void GatewayServer::describeEndpoint(telemetry::Trace &record, const QString &path,
                                     protocol::Operation operation)
{
    record.endpoint = path;
    record.operation =
        operation == protocol::Operation::Embeddings    ? QStringLiteral("embeddings")
        : operation == protocol::Operation::Completions ? QStringLiteral("text_completion")
        : operation == protocol::Operation::CountTokens ? QStringLiteral("count_tokens")
                                                        : QStringLiteral("chat");
}

void GatewayServer::startTrace(telemetry::TraceBuilder &trace, const IncomingRequest &request,
                               const config::Config &config)
{
    trace.setLimits({config.trace.chunkEvents, config.trace.keepBodies, config.trace.bodyMaxBytes});
    trace.setRequest(methodName(request.method).toLatin1(), request.path.toUtf8(), request.headers,
                     request.body);
}

auth::ClientAuthenticator::Verdict GatewayServer::identifyCaller(telemetry::TraceBuilder &trace,
                                                                 const IncomingRequest &request,
                                                                 const routing::RoutingTable &table)
{
    // Who is asking comes before what is asked: a client without a valid key learns nothing
    // about models or body rules.
    auth::ClientAuthenticator::Verdict caller =
        m_services.authenticator.authenticate(table.config(), request.headers);
    if (caller.refusal || !caller.key)
        return caller;
    telemetry::Trace &record = trace.trace();
    record.keyId = caller.key->id;
    record.tenant = caller.key->tenant;
    caller.refusal = auth::ClientAuthenticator::tenantRefusal(*caller.key, request.headers);
    return caller;
}

void GatewayServer::closeIngressSpan(telemetry::TraceBuilder &trace, int span,
                                     const ingress::ClientRequest &client)
{
    const protocol::ChatRequest &chat = client.chat;
    if (chat.model.isEmpty())
        return; // refused before it could be parsed: nothing to say of it yet
    telemetry::Trace &record = trace.trace();
    record.model = chat.model;
    record.streamed = chat.stream;
    // Concatenated rather than QString::arg, which parses its pattern on every call.
    const QLatin1StringView streamed = chat.stream ? ", streamed"_L1 : ""_L1;
    if (client.operation == protocol::Operation::Chat ||
        client.operation == protocol::Operation::Messages)
        trace.closeSpan(span, chat.model % ", "_L1 % QString::number(chat.messageCount) %
                                  " message(s)"_L1 % streamed);
    else
        trace.closeSpan(span, protocol::operationPath(client.operation) % u' ' % chat.model %
                                  ", "_L1 % QString::number(chat.messageCount) % " input(s)"_L1 %
                                  streamed);
    if (!client.nativeOnlyReason.isEmpty())
        trace.pointEvent(QStringLiteral("native only"), client.nativeOnlyReason);
}

std::optional<protocol::ApiError>
GatewayServer::bindCaller(telemetry::TraceBuilder &trace, ingress::ClientRequest &client,
                          const auth::ClientAuthenticator::Verdict &caller)
{
    routing::RequestContext &context = client.context;
    context.requestId = trace.trace().requestId;
    if (caller.key) {
        // The key says the tenant: routing rules, quotas, logs and metrics all see its tenant.
        context.tenant = caller.key->tenant;
        context.switchyardKeyHeader = auth::presentedKeyHeader(context.headers);
    }
    trace.trace().tenant = context.tenant;
    if (caller.key)
        return m_services.authenticator.admit(*caller.key, client.chat.model);
    return std::nullopt;
}

std::optional<protocol::ApiError>
GatewayServer::admit(telemetry::TraceBuilder &trace, const routing::RequestContext &context,
                     const auth::ClientAuthenticator::Verdict &caller)
{
    // Admission before routing: a refusal is fast and costs no provider anything.
    const int admissionSpan = trace.openSpan(QStringLiteral("admission"));
    const resilience::AdmissionVerdict admission = m_services.admission.admit(
        context.tenant, context.depth, int(m_executions.size()), trace.trace().keyId);
    trace.closeSpan(admissionSpan,
                    admission.admitted() ? QStringLiteral("admitted") : admission.error.code);
    if (!admission.admitted())
        return admission.error;
    // Only a request every check let through is charged to its key.
    if (caller.key)
        m_services.authenticator.takeRequest(*caller.key);
    return std::nullopt;
}

routing::RouteDecision GatewayServer::routeRequest(telemetry::TraceBuilder &trace,
                                                   const routing::RoutingTable &table,
                                                   const routing::RequestContext &context)
{
    const int routingSpan = trace.openSpan(QStringLiteral("routing"));
    routing::RouteDecision decision = m_services.router.route(table, context);
    // Concatenated, not QString::arg: this runs for every request, and arg() parses its pattern.
    trace.closeSpan(routingSpan,
                    QString::number(decision.candidates.size()) + QStringLiteral(" candidate(s)"));
    m_services.contextSample.offer(context, decision);
    return decision;
}

std::unique_ptr<HttpClientChannel> GatewayServer::clientChannel(ResponseWriter writer,
                                                                ingress::ClientRequest &client,
                                                                const QByteArray &requestId)
{
    switch (client.operation) {
    case protocol::Operation::Messages:
    case protocol::Operation::CountTokens:
        return std::make_unique<MessagesChannel>(std::move(writer),
                                                 std::move(client.messagesIgnoredFields));
    case protocol::Operation::Responses:
        // Only a Responses answer names itself; made here, not for every request.
        return std::make_unique<ResponsesChannel>(std::move(writer), std::move(*client.responses),
                                                  ingress::responseIdFor(requestId).toUtf8());
    case protocol::Operation::Chat:
    case protocol::Operation::Embeddings:
    case protocol::Operation::Completions:
        break;
    }
    return std::make_unique<HttpClientChannel>(std::move(writer));
}

void GatewayServer::execute(std::unique_ptr<execution::ClientChannel> channel,
                            telemetry::TraceBuilder trace,
                            std::shared_ptr<const routing::RoutingTable> table,
                            ingress::ClientRequest &&client, routing::RouteDecision &&decision,
                            bool kept)
{
    const auto jitter = [] { return QRandomGenerator::global()->generateDouble(); };
    const auto finished = [this](execution::RequestExecution *execution) {
        m_executions.remove(execution);
        execution->deleteLater(); // it may still be inside its own callbacks
        emit inFlightChanged(inFlight());
    };
    const execution::ExecutionServices services{m_services.transport,
                                                m_services.health,
                                                m_services.recorder,
                                                m_services.retryBudget,
                                                m_services.admission,
                                                m_services.scheduler,
                                                m_services.loop,
                                                jitter,
                                                finished};
    auto *execution = new execution::RequestExecution(
        services, table->snapshot(), std::move(client.chat), std::move(client.chatBody),
        std::move(client.context), std::move(decision), std::move(trace), std::move(channel), this);
    // A kept response is made by the gateway from the chat translation, whichever provider
    // answers: its id, storage and events are the gateway's, not a provider's.
    if (client.operation != protocol::Operation::Chat && !kept)
        execution->setOperation(client.operation, std::move(client.operationBody),
                                client.nativeOnly);
    execution->setFallbackRouting(m_services.router, std::move(table));
    m_executions.insert(execution, true);
    emit inFlightChanged(inFlight());
    // Running shadow calls give way as soon as live requests fill the gate.
    m_shadows->makeRoom(int(m_executions.size()));
    execution->start();
}

} // namespace switchyard::http

#include "gateway_server.moc"
