#pragma once

#include "config/config.h"
#include "health/health_registry.h"
#include "http/messages_ingress.h"
#include "http/response_writer.h"
#include "protocol/chat_request.h"
#include "resilience/attempt_plan.h"
#include "resilience/error_class.h"
#include "resilience/retry_policy.h"
#include "routing/request_context.h"
#include "routing/route_decision.h"
#include "telemetry/trace.h"
#include "upstream/adapters/provider_adapter.h"
#include "upstream/sse_parser.h"
#include "upstream/upstream_transport.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <chrono>
#include <memory>
#include <optional>

namespace switchyard::telemetry {
class TraceRing;
}
namespace switchyard::resilience {
class AdmissionController;
}

namespace switchyard::http {

// What an exchange borrows from the engine that owns it; all of it lives on the engine thread.
struct ExchangeServices {
    upstream::UpstreamTransport &transport;
    health::HealthRegistry &health;
    telemetry::TraceRing &traces;
    resilience::RetryBudget &retryBudget;
    resilience::AdmissionController &admission;
    resilience::UniformRandom random; // backoff jitter
};

// The executor of one chat completion, from the moment it was routed until the client has its
// answer (or its error). Walks the route decision's candidates: an attempt on each endpoint
// whose breaker admits it, retries by error class with backoff under a retry budget, per-attempt
// timeouts stretched along the gradient inside the request's time budget, then down the
// degradation ladder. A streamed answer is relayed event by event as it arrives, never
// buffered whole; once its first byte has reached the client the provider is never switched.
class ChatExchange final : public QObject, private upstream::UpstreamObserver {
    Q_OBJECT
public:
    ChatExchange(ExchangeServices services, std::shared_ptr<const config::Config> config,
                 protocol::ChatRequest request, QByteArray body, routing::RequestContext context,
                 routing::RouteDecision decision, telemetry::TraceBuilder trace,
                 ResponseWriter writer, QObject *parent = nullptr);
    ~ChatExchange() override;

    // A request that came in on /v1/messages: every answer, error and stream event leaves in
    // Anthropic's shapes. Set before start(); without it the client speaks OpenAI's protocol.
    void setMessagesIngress(std::unique_ptr<MessagesIngress> ingress)
    {
        m_ingress = std::move(ingress);
    }

    void start();
    const QByteArray &requestId() const { return m_trace.trace().requestId; }

Q_SIGNALS:
    void finished();

private:
    enum class Phase { WaitingForAnswer, Streaming, Done };
    // What the one timer of the exchange watches at the moment.
    enum class Watch { Nothing, FirstToken, Idle, ClientStall, EndAfterDone, Backoff };

    // One call to one endpoint. Reset for every attempt.
    struct Attempt {
        int candidate = -1;
        int number = 0; // 1-based, as x-switchyard-attempts counts
        int span = -1;
        bool open = false;              // counted in flight by the health registry
        bool holdsFailoverSlot = false; // counted as failed-over traffic on its endpoint
        // Whether the request's remaining time budget, not the configured timeout, bounded the
        // connect or the whole answer: a timeout then is not the provider's fault.
        bool connectCutByBudget = false;
        bool answerCutByBudget = false;
        std::chrono::milliseconds answerLimit{0};
        QElapsedTimer clock;
        upstream::UpstreamResponseHead head;
        upstream::SseParser sse;
        QByteArray answer;
        bool relayingEvents = false;
        double timeToFirstTokenMs = -1.0;
        double answerCompleteMs = -1.0; // when [DONE] arrived, for the call's latency
        // The provider's definition the adapter refers to: the request's snapshot's for a
        // configured provider, `agentDefinition` (a copy: the registry's list may grow while the
        // attempt runs) for a registered agent.
        const config::ProviderConfig *provider = nullptr;
        std::unique_ptr<config::ProviderConfig> agentDefinition;
        std::unique_ptr<upstream::adapters::ProviderAdapter> adapter;
        upstream::adapters::AnswerShape shape;
        std::unique_ptr<upstream::adapters::StreamTranslator> stream;
    };

    void onResponseHead(const upstream::UpstreamResponseHead &head) override;
    void onResponseBody(QByteArrayView bytes) override;
    void onFinished(const upstream::UpstreamResult &result) override;

    void onTimeout();
    void onClientDisconnected();
    void onClientDrained();

    bool tierIsDegraded() const;
    void tryNextCandidate();
    void startAttempt(int candidateIndex, bool failover);
    void retryAfterWait();
    void refuseForProvider(const protocol::ApiError &refusal);
    void watch(Watch what, std::chrono::milliseconds limit);
    std::optional<std::chrono::milliseconds> remainingBudget() const;

    void relayWholeAnswer();
    // Writes translated stream events (beginning the client's stream if they are the first) and
    // acts on a failure among them. Returns false when the exchange ended or its attempt failed.
    bool relayStreamOutput(upstream::adapters::StreamOutput output);
    void writeStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow);
    void sendErrorAnswer(const protocol::ApiError &error, const HeaderList &headers);
    void relayUpstreamError();
    void noteUsage(const upstream::adapters::Usage &usage);
    void attemptFailed(resilience::ErrorClass errorClass, protocol::ApiError error,
                       const QString &description, bool cutByBudget,
                       std::optional<std::chrono::milliseconds> retryAfter = std::nullopt);
    void endAttempt(health::CallOutcome outcome, const QString &detail);
    void releaseRetrySlot();
    void finishWithoutAnswer();
    void answerDegraded(int level, const QString &content, const QString &reason);
    protocol::ApiError finalError() const;
    protocol::ApiError budgetError() const;
    protocol::ApiError budgetCutError() const; // the attempt the budget cut short
    void sendStreamError(const protocol::ApiError &error);
    void streamAnswerComplete();
    void complete(int status, const QString &outcomeCode);

    const routing::RouteCandidate &candidate() const;
    QString providerId() const;
    HeaderList responseHeaders(const QString &provider, int degradedLevel) const;

    ExchangeServices m_services;
    std::shared_ptr<const config::Config> m_config; // the snapshot this request started with
    protocol::ChatRequest m_request;
    QByteArray m_body;
    routing::RequestContext m_context;
    routing::RouteDecision m_decision;
    telemetry::TraceBuilder m_trace;
    ResponseWriter m_writer;
    std::unique_ptr<MessagesIngress> m_ingress; // only for /v1/messages
    resilience::AttemptPlan m_plan;

    std::unique_ptr<upstream::UpstreamCall> m_call;
    Attempt m_attempt;
    QTimer m_timer;
    Watch m_watch = Watch::Nothing;
    bool m_watchCutByBudget = false; // the running timer is the request's remaining budget
    QElapsedTimer m_requestClock;
    std::optional<std::chrono::milliseconds> m_deadline; // since m_requestClock started
    bool m_deadlineIsClientBudget = false; // x-switchyard-timeout-budget-ms set the deadline
    Phase m_phase = Phase::WaitingForAnswer;

    bool m_countedInRetryBudget = false;
    bool m_holdsRetrySlot = false;
    bool m_retrySameEndpoint = false;
    bool m_shed = false; // a degraded tier's fallbacks did not admit this request
    bool m_budgetRanOut = false;
    QList<resilience::CandidateSkip> m_skips;
    std::optional<protocol::ApiError> m_lastError;
    QString m_lastErrorProvider;
    resilience::ErrorClass m_lastErrorClass = resilience::ErrorClass::None;

    bool m_sawDone = false;
    bool m_upstreamPaused = false;
    bool m_finishing = false; // an ending path records the outcome: ignore its disconnects
    int m_pauseCount = 0;
};

} // namespace switchyard::http
