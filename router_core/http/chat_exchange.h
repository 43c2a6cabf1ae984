#pragma once

#include "config/config.h"
#include "health/health_registry.h"
#include "http/chat_request.h"
#include "http/response_writer.h"
#include "routing/route_decision.h"
#include "telemetry/trace.h"
#include "upstream/sse_parser.h"
#include "upstream/upstream_transport.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <memory>

namespace switchyard::telemetry {
class TraceRing;
}

namespace switchyard::http {

// What an exchange borrows from the engine that owns it; all of it lives on the engine thread.
struct ExchangeServices {
    upstream::UpstreamTransport &transport;
    health::HealthRegistry &health;
    telemetry::TraceRing &traces;
};

// One chat completion from the moment it was routed until the client has its answer (or its
// error). Relays a streamed answer event by event as it arrives; never buffers a whole stream.
// The resilience work grows this into the executor (attempts, retries, failover); the shape of
// its inputs (a RouteDecision) and outputs (an answer, a trace, health outcomes) stays.
class ChatExchange final : public QObject, private upstream::UpstreamObserver {
    Q_OBJECT
public:
    ChatExchange(ExchangeServices services, std::shared_ptr<const config::Config> config,
                 ChatRequest request, QByteArray body, routing::RouteDecision decision,
                 telemetry::TraceBuilder trace, ResponseWriter writer, QObject *parent = nullptr);
    ~ChatExchange() override;

    void start();
    const QByteArray &requestId() const { return m_trace.trace().requestId; }

Q_SIGNALS:
    void finished();

private:
    enum class Phase { WaitingForAnswer, Streaming, Done };

    void onResponseHead(const upstream::UpstreamResponseHead &head) override;
    void onResponseBody(QByteArrayView bytes) override;
    void onFinished(const upstream::UpstreamResult &result) override;

    void onTimeout();
    void onClientDisconnected();
    void onClientDrained();

    void relayWholeAnswer();
    void relayUpstreamError();
    void failCall(ApiError error, const QString &traceDetail);
    void sendStreamError(const ApiError &error);
    void complete(health::CallOutcome outcome, int status, const QString &outcomeCode,
                  const QString &failureDescription = {});
    HeaderList responseHeaders() const;
    QString providerId() const;

    ExchangeServices m_services;
    std::shared_ptr<const config::Config> m_config; // the snapshot this request started with
    ChatRequest m_request;
    QByteArray m_body;
    routing::RouteDecision m_decision;
    telemetry::TraceBuilder m_trace;
    ResponseWriter m_writer;

    std::unique_ptr<upstream::UpstreamCall> m_call;
    upstream::UpstreamResponseHead m_head;
    upstream::SseParser m_sse;
    QByteArray m_answer;
    QTimer m_deadline;
    QElapsedTimer m_callClock;
    Phase m_phase = Phase::WaitingForAnswer;
    bool m_relayingEvents = false;
    bool m_sawDone = false;
    double m_timeToFirstTokenMs = -1.0;
    int m_attemptSpan = -1;
    bool m_upstreamPaused = false;
    bool m_finishing = false;         // an ending path records the outcome: ignore its disconnects
    double m_answerCompleteMs = -1.0; // when [DONE] arrived, for the call's latency
    int m_pauseCount = 0;
};

} // namespace switchyard::http
