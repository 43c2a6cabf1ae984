#pragma once

#include "config/config.h"
#include "execution/client_channel.h"
#include "execution/final_error.h"
#include "health/health_registry.h"
#include "protocol/chat_request.h"
#include "protocol/token_estimate.h"
#include "resilience/attempt_plan.h"
#include "resilience/error_class.h"
#include "resilience/retry_policy.h"
#include "routing/request_context.h"
#include "routing/route_decision.h"
#include "telemetry/trace.h"
#include "timing/deadline_scheduler.h"
#include "timing/loop_health.h"
#include "upstream/adapters/provider_adapter.h"
#include "upstream/sse_parser.h"
#include "upstream/upstream_transport.h"

#include <QCoro/QCoroTask>
#include <QObject>
#include <chrono>
#include <coroutine>
#include <functional>
#include <memory>
#include <optional>

namespace switchyard::telemetry {
class RequestRecorder;
}
namespace switchyard::resilience {
class AdmissionController;
}

namespace switchyard::execution {

class ChatExecution;

// What an execution borrows from the engine that owns it; all of it lives on the engine thread.
struct ExecutionServices {
    upstream::UpstreamTransport &transport;
    health::HealthRegistry &health;
    telemetry::RequestRecorder &recorder;
    resilience::RetryBudget &retryBudget;
    resilience::AdmissionController &admission;
    timing::DeadlineScheduler &scheduler; // every timeout and wait of the request
    const timing::LoopHealth &loop;       // the engine loop's lag, for blaming timeouts
    resilience::UniformRandom random;     // backoff jitter
    // Called once, when the client has its answer or is gone. The execution may still be inside
    // its own callbacks: delete it later. A callback, not a signal: a connection per request
    // cost each held stream about 270 bytes.
    std::function<void(ChatExecution *)> finished;
};

// The run of one chat completion, from the moment it was routed until the client has its answer
// (or its error). run() is the attempt loop as a coroutine: take the next candidate that admits
// the request, try it, classify the failure, maybe wait, go on; down the degradation ladder when
// nothing answered. One attempt is an observer of its upstream call: a streamed answer is
// relayed event by event as it arrives, never buffered whole, and once its first byte has
// reached the client the provider is never switched. Every timeout and wait is a Deadline of the
// engine's one scheduler, so tests run it in simulated time. The client is reached only through
// its ClientChannel: no client protocol is known here.
class ChatExecution final : public QObject,
                            private upstream::UpstreamObserver,
                            private ClientListener {
    Q_OBJECT
public:
    ChatExecution(ExecutionServices services, std::shared_ptr<const config::Config> config,
                  protocol::ChatRequest request, QByteArray body, routing::RequestContext context,
                  routing::RouteDecision decision, telemetry::TraceBuilder trace,
                  std::unique_ptr<ClientChannel> client, QObject *parent = nullptr);
    // An execution deleted while it runs (the engine shutting down) aborts its upstream call
    // and records nothing more.
    ~ChatExecution() override;

    // Before start(), for an operation other than chat: `request` and `body` given to the
    // constructor are then what a provider that does not speak the operation is sent (the
    // Responses API translated to chat), and `operationBody` what one that does is sent as it
    // is. Embeddings and legacy completions have no chat form: `body` is their own too.
    // `nativeOnly`: the request has no chat form (a Responses request translation refused), so
    // only providers that speak the operation are tried.
    void setOperation(protocol::Operation operation, QByteArray operationBody,
                      bool nativeOnly = false);
    void start();
    const QByteArray &requestId() const { return m_trace.trace().requestId; }
    bool isDone() const { return m_phase == Phase::Done; }

private:
    enum class Phase { WaitingForAnswer, Streaming, Done };
    // What the attempt's watch deadline watches at the moment.
    enum class Watch { Nothing, Answer, FirstToken, Idle, ClientStall, EndAfterDone };
    using TimePoint = timing::Clock::TimePoint;

    // Why an attempt ended without an answer, while another provider may still answer instead.
    struct AttemptFailure {
        AttemptFailure(resilience::ErrorClass errorClass, protocol::ApiError error,
                       QString description, bool cutByBudget = false,
                       std::optional<std::chrono::milliseconds> retryAfter = std::nullopt)
            : errorClass(errorClass), error(std::move(error)), description(std::move(description)),
              cutByBudget(cutByBudget), retryAfter(retryAfter)
        {}
        resilience::ErrorClass errorClass = resilience::ErrorClass::None;
        protocol::ApiError error;
        QString description;
        bool cutByBudget = false;
        std::optional<std::chrono::milliseconds> retryAfter; // a 429's, when it named one
        // The engine loop was too late to tell a slow provider from its own backlog.
        bool blamedOnGateway = false;
    };

    // One call to one endpoint. Reset for every attempt.
    struct Attempt {
        int candidate = -1;
        int number = 0; // 1-based, as x-switchyard-attempts counts
        int span = -1;
        bool open = false;              // counted in flight by the health registry
        bool holdsFailoverSlot = false; // counted as failed-over traffic on its endpoint
        // Whether the request's remaining time budget, not the configured timeout, bounded the
        // connect: a timeout then is not the provider's fault.
        bool connectCutByBudget = false;
        std::chrono::milliseconds answerLimit{0};
        TimePoint startedAt{};
        upstream::UpstreamResponseHead head;
        upstream::SseParser sse;
        QByteArray answer;
        bool relayingEvents = false;
        double timeToFirstTokenMs = -1.0;
        double answerCompleteMs = -1.0; // when [DONE] arrived, for the call's latency
        // The engine loop ran later than admission.overload_lag when the first event was read:
        // the time to it is partly the gateway's own backlog, not the provider's speed.
        bool firstTokenWhileLate = false;
        double lagAtFirstTokenMs = 0.0;
        // The provider's definition the adapter refers to: the request's snapshot's for a
        // configured provider, `agentDefinition` (a copy: the registry's list may grow while the
        // attempt runs) for a registered agent.
        const config::ProviderConfig *provider = nullptr;
        std::unique_ptr<config::ProviderConfig> agentDefinition;
        std::unique_ptr<upstream::adapters::ProviderAdapter> adapter;
        upstream::adapters::AnswerShape shape;
        qint64 bytesReceived = 0;
        resilience::ErrorClass errorClass = resilience::ErrorClass::None; // how it failed
        std::unique_ptr<upstream::adapters::StreamTranslator> stream;
        // The provider answers in the operation's own shapes, not as chat (setOperation).
        Dialect dialect = Dialect::Chat;
    };

    // The coroutine's one way to wait: for the attempt to end, or for m_wait. Whatever ends the
    // wait resumes it through resumeRun(); it then looks at m_phase and m_failure.
    struct Suspend {
        ChatExecution *execution;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> waiting) noexcept
        {
            execution->m_suspended = waiting;
        }
        void await_resume() const noexcept {}
    };
    Suspend suspend() { return Suspend{this}; }
    void resumeRun();

    QCoro::Task<> run();
    // The next candidate that admits the request, or -1; passes over the others with a reason.
    // `tookFailoverSlot` says whether the call counts as failed-over traffic on its endpoint.
    int takeNextCandidate(bool *tookFailoverSlot);
    // When nothing can take the request now: the candidate whose cool-down ends first, if any.
    int soonestCoolingCandidate() const;
    bool tierIsDegraded() const;
    // Why `next` cannot take this request's operation, if it cannot: its model does not serve
    // it there (an agent, or a model listed for another endpoint at that provider).
    std::optional<resilience::SkipReason> operationMismatch(const routing::RouteCandidate &next);
    // Whether the degradation ladder's own answers (canned, fail-safe) fit the operation.
    bool operationHasTextAnswer() const
    {
        return m_operation == protocol::Operation::Chat ||
               m_operation == protocol::Operation::Responses ||
               m_operation == protocol::Operation::Messages;
    }
    // Where the attempt's answer says why it ended: Anthropic's own answer, passed through,
    // says stop_reason; everything the executor relays in OpenAI's shapes, finish_reason.
    QByteArrayView finishReasonKey() const
    {
        return m_operation == protocol::Operation::Messages && m_attempt.dialect == Dialect::Native
                   ? QByteArrayView("\"stop_reason\":")
                   : QByteArrayView("\"finish_reason\":");
    }
    // Starts the attempt; false when it ended before any call (the adapter refused).
    bool startAttempt(int candidateIndex, bool failover);
    void refuseForProvider(const protocol::ApiError &refusal);

    void onResponseHead(const upstream::UpstreamResponseHead &head) override;
    void onResponseBody(QByteArrayView bytes) override;
    void onFinished(const upstream::UpstreamResult &result) override;
    void onClientGone() override;
    void onClientDrained() override;
    void onWatchDue();

    TimePoint now() const { return m_services.scheduler.now(); }
    double msSince(TimePoint start) const;
    std::optional<std::chrono::milliseconds> remainingBudget() const;
    void watch(Watch what, std::chrono::milliseconds limit);
    void watchUntil(Watch what, TimePoint end);
    void noteUpstreamActivity();
    // The watch ends with the request's deadline, and that deadline is the client's own budget.
    bool watchCutByBudget() const { return m_watchEndsAtDeadline && m_deadlineIsClientBudget; }
    void stopWatching();

    void relayWholeAnswer();
    // Marks events about to go to the client in the trace: first byte, chunk arrivals, the
    // watched request's live text, the kept body.
    void traceStreamedEvents(const QList<upstream::SseEvent> &events);
    // Writes translated stream events (beginning the client's stream if they are the first) and
    // acts on a failure among them. Returns false when the request ended or its attempt failed.
    bool relayStreamOutput(upstream::adapters::StreamOutput output);
    void relayUpstreamError();
    void noteUsage(const upstream::adapters::Usage &usage);
    // Fills the record's token counts the provider did not report (see RequestRecord).
    void countTokens(telemetry::RequestRecord &record) const;
    // The attempt failed: after the first byte that ends the request; before it, the failure
    // is handed to run(), which decides what comes next.
    void attemptFailed(AttemptFailure failure);
    // A timeout while the engine loop lags past admission.overload_lag: the gateway's fault. The
    // failure becomes 503 gateway_overloaded, counts nothing against the provider, and is not
    // retried (more attempts would add to the load that caused it).
    AttemptFailure blameTimeout(AttemptFailure failure);
    // The transport could not open a socket: this process is out of descriptors or memory.
    // Handled as blameTimeout's overload: every provider would fail the same way.
    AttemptFailure blameLocalResources(AttemptFailure failure);
    // Makes `failure` the gateway's: 503 gateway_overloaded with Retry-After and `message` for
    // the client, `traceDetail` in the trace, nothing held against the provider, no retry.
    AttemptFailure blameGateway(AttemptFailure failure, const QString &traceDetail,
                                const QString &message);
    // The engine loop runs later than admission.overload_lag: its own backlog, not providers.
    bool loopIsLate() const;
    void endAttempt(health::CallOutcome outcome, const QString &detail);
    bool takeRetrySlot();
    void releaseRetrySlot();
    void finishWithoutAnswer();
    void answerDegraded(int level, const QString &content, const QString &reason);
    void streamAnswerComplete();
    void complete(int status, const QString &outcomeCode);

    protocol::ApiError budgetCutError() const; // the attempt the budget cut short
    FinalErrorWording errorWording() const;

    const routing::RouteCandidate &candidate() const;
    QString providerId() const;
    HeaderList responseHeaders(const QString &provider, int degradedLevel) const;

    ExecutionServices m_services;
    std::shared_ptr<const config::Config> m_config; // the snapshot this request started with
    protocol::ChatRequest m_request;
    QByteArray m_body;
    // The model m_body names: the client's, until an attempt's renamed body replaced it.
    QString m_bodyModel;
    protocol::Operation m_operation = protocol::Operation::Chat;
    QByteArray m_operationBody;
    bool m_nativeOnly = false;
    routing::RequestContext m_context;
    routing::RouteDecision m_decision;
    telemetry::TraceBuilder m_trace;
    std::unique_ptr<ClientChannel> m_client;
    resilience::AttemptPlan m_plan;

    std::optional<QCoro::Task<>> m_run;
    std::coroutine_handle<> m_suspended;
    // The attempt that just ended, for run(). Held apart, as FailureHistory::lastError: a held
    // stream has neither, and inline they were a tenth of the object.
    std::unique_ptr<AttemptFailure> m_failure;
    timing::Deadline m_wait; // a backoff or a cool-down being waited out

    std::unique_ptr<upstream::UpstreamCall> m_call;
    Attempt m_attempt;
    timing::Deadline m_watchDeadline;
    Watch m_watch = Watch::Nothing;
    bool m_watchEndsAtDeadline = false; // the request's deadline comes before the watch's limit
    TimePoint m_idleFrom{};             // the last upstream activity, for the idle watch
    std::optional<TimePoint> m_deadline;
    bool m_deadlineIsClientBudget = false; // x-switchyard-timeout-budget-ms set the deadline
    Phase m_phase = Phase::WaitingForAnswer;

    bool m_countedInRetryBudget = false;
    bool m_holdsRetrySlot = false;
    bool m_waitedForCoolDown = false;
    FailureHistory m_failures;

    bool m_sawDone = false;
    // What providers relayed to the client, for the token estimate when none reported usage;
    // canned and fail-safe answers are not counted: no provider billed them.
    protocol::AnswerTextTally m_answerText;
    bool m_providerAnswered = false;
    bool m_upstreamPaused = false;
    bool m_finishing = false; // an ending path records the outcome: ignore its disconnects
    int m_pauseCount = 0;
    int m_degradedLevel = -1; // the ladder's canned or fail-safe rung answered; -1: it did not
};

} // namespace switchyard::execution
