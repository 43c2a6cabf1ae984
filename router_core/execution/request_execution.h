#pragma once

#include "config/config.h"
#include "execution/attempt.h"
#include "execution/client_channel.h"
#include "execution/final_error.h"
#include "execution/stream_continuation.h"
#include "health/health_registry.h"
#include "protocol/chat_request.h"
#include "protocol/token_estimate.h"
#include "resilience/attempt_plan.h"
#include "resilience/retry_policy.h"
#include "routing/request_context.h"
#include "routing/route_decision.h"
#include "routing/router.h"
#include "telemetry/trace.h"
#include "timing/deadline_scheduler.h"
#include "timing/loop_health.h"
#include "upstream/adapters/provider_adapter.h"
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

class RequestExecution;

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
    std::function<void(RequestExecution *)> finished;
};

// The run of one request that providers answer, whatever its endpoint (chat, legacy completions,
// embeddings, the Responses API, Anthropic's Messages and their token count), from the moment it
// was routed until the client has its answer (or its error). run() is the attempt loop as a
// coroutine: take the next candidate that admits the request, try it, classify the failure, maybe
// wait, go on; down the degradation ladder when nothing answered. Each try is an Attempt, an
// observer of its upstream call that relays the answer to the client; once its first byte has
// reached the client the provider is never switched. Every timeout and wait is a Deadline of the
// engine's one scheduler, so tests run it in simulated time. The client is reached only through its
// ClientChannel: no client protocol is known here. When nothing answered, FinalErrorWording words
// the client's error.
class RequestExecution final : public QObject, private ClientListener, private AttemptListener {
    Q_OBJECT
public:
    RequestExecution(ExecutionServices services, std::shared_ptr<const config::Config> config,
                     protocol::ChatRequest request, QByteArray body,
                     routing::RequestContext context, routing::RouteDecision decision,
                     telemetry::TraceBuilder trace, std::unique_ptr<ClientChannel> client,
                     QObject *parent = nullptr);
    // An execution deleted while it runs (the engine shutting down) aborts its upstream call
    // and records nothing more.
    ~RequestExecution() override;

    // Before start(), for an operation other than chat: `request` and `body` given to the
    // constructor are then what a provider that does not speak the operation is sent (the
    // Responses API translated to chat), and `operationBody` what one that does is sent as it
    // is. Embeddings and legacy completions have no chat form: `body` is their own too.
    // `nativeOnly`: the request has no chat form (a Responses request translation refused), so
    // only providers that speak the operation are tried.
    void setOperation(protocol::Operation operation, QByteArray operationBody,
                      bool nativeOnly = false);
    // Before start(): the router and the request's own routing table, which route the fallback
    // models of a fallback by error (docs/resilience.md, "Fallbacks by error") as any request
    // for them is routed. Without them an error is never moved to another model.
    void setFallbackRouting(const routing::Router &router,
                            std::shared_ptr<const routing::RoutingTable> table);
    void start();
    // Ends the request now, as a client that went away would (status 499), with `outcomeCode`
    // and `reason` in its trace: shadow traffic lets a shadow call go when live requests need
    // the room. Nothing when it has already ended or is writing its last answer.
    void cancel(const QString &outcomeCode, const QString &reason);
    const QByteArray &requestId() const { return m_trace.trace().requestId; }
    bool isDone() const { return m_done; }

private:
    using TimePoint = timing::Clock::TimePoint;

    // The coroutine's one way to wait: for the attempt to end, or for m_wait. Whatever ends the
    // wait resumes it through resumeRun(); it then looks at m_done and m_failure.
    struct Suspend {
        RequestExecution *execution;
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
    // Starts the attempt; false when it ended before any call (the adapter refused).
    bool startAttempt(int candidateIndex, bool failover);
    // What this request asks `provider` for on an attempt: the client's body as it is
    // (`passThrough`) or as chat, and the headers every attempt carries.
    upstream::adapters::AdapterRequest providerRequest(const routing::RouteCandidate &chosen,
                                                       const config::ProviderConfig &provider,
                                                       bool passThrough,
                                                       const QByteArray &attemptSpanId) const;
    AttemptScope attemptScope();
    void refuseForProvider(const protocol::ApiError &refusal);

    void onClientGone() override;
    void onClientDrained() override;

    void streamCommitted() override;
    void streamEventsRelaying(QList<upstream::SseEvent> &events) override;
    HeaderList answerHeaders() const override;
    void providerAnswerRelayed(QByteArrayView text) override;
    void answerFinishing() override;
    void answered(int status) override;
    void budgetRanOutMidStream() override;
    void clientStalled() override;
    bool fallsBackOn(config::FallbackError error) const override;
    // After the first byte the failure ends the request; before it, it is handed to run(), which
    // decides what comes next.
    void attemptFailed(AttemptFailure failure) override;

    TimePoint now() const { return m_services.scheduler.now(); }
    std::optional<std::chrono::milliseconds> remainingBudget() const
    {
        return m_deadline.remaining(now());
    }

    // Fills the record's token counts the provider did not report (see RequestRecord), and adds
    // those of attempts whose stream another continued.
    void countTokens(telemetry::RequestRecord &record) const;
    void fillUnreportedTokens(telemetry::RequestRecord &record) const;

    // ---- streams that survive a cut (continue_streams) ----
    // Whether `next` can continue this request's cut stream: a provider (not an agent) that
    // continues answers, reached as chat.
    bool canContinueOn(const routing::RouteCandidate &next) const;
    // After a cut: whether another candidate may take the stream over. Says why not in the
    // trace when the stream may never be continued.
    bool mayContinueAfter(const AttemptFailure &failure);
    // Takes over the cut attempt's tokens (reported, else estimated) before the next one runs.
    void carryCutAttemptTokens();
    // The stream already begun ends with `error` as its last event.
    void failStartedStream(const protocol::ApiError &error);
    void endAttempt(health::CallOutcome outcome, const QString &detail);
    // The next model to try for `error`: the first not yet tried of the lists of the request's
    // decision, then of each fallback's, in order. Empty when none is left.
    QString nextFallbackModel(config::FallbackError error) const;
    // Routes the fallback models for `error` through the router until one has candidates: its
    // decision, or nothing when no fallback model is left to take the request. Each model is
    // routed at most once, so a chain of fallbacks that leads back ends.
    std::optional<routing::RouteDecision> routeErrorFallback(config::FallbackError error);
    bool takeRetrySlot();
    void releaseRetrySlot();
    void finishWithoutAnswer();
    void answerDegraded(int level, const QString &content, const QString &reason);
    void complete(int status, const QString &outcomeCode);

    FinalErrorWording errorWording() const;
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

    std::optional<Attempt> m_attempt; // the one running, or the last
    RequestDeadline m_deadline;
    bool m_done = false; // the client has its answer, or is gone

    bool m_countedInRetryBudget = false;
    bool m_holdsRetrySlot = false;
    bool m_waitedForCoolDown = false;
    FailureHistory m_failures;

    // What providers relayed to the client, for the token estimate when none reported usage;
    // canned and fail-safe answers are not counted: no provider billed them.
    protocol::AnswerTextTally m_answerText;
    bool m_providerAnswered = false;
    bool m_finishing = false; // an ending path records the outcome: ignore its disconnects
    int m_degradedLevel = -1; // the ladder's canned or fail-safe rung answered; -1: it did not

    // Set for a streamed request whose route or tier has `continue_streams` and whose request
    // allows it; dropped once its stream turns out not to be chat chunks.
    std::unique_ptr<StreamContinuation> m_continuation;
    bool m_continuing = false; // the client's stream is open: the next attempt continues it
    // What ends the stream when no candidate can continue it: the last cut's error.
    std::unique_ptr<protocol::ApiError> m_cutError;
    QString m_cutProvider; // the provider the stream was last cut on
    // Tokens of the attempts that were cut and continued, added to the record at the end.
    qint64 m_carriedInputTokens = 0;
    qint64 m_carriedOutputTokens = 0;
    bool m_carriedTokensEstimated = false;
    // Fallbacks by error. The lists and the tried models are kept only once an error asked for
    // them: most requests never do.
    struct ErrorFallbackRun {
        QList<config::ErrorFallbacks> lists; // the request's decision's, then each fallback's
        QStringList routedModels;            // the requested model, then each fallback routed
        QString answeringModel;              // the fallback whose candidates the plan walks now
        config::FallbackError reason = config::FallbackError::ContextLengthExceeded;
    };
    const routing::Router *m_router = nullptr;
    std::shared_ptr<const routing::RoutingTable> m_table;
    std::unique_ptr<ErrorFallbackRun> m_errorFallbacks;
};

} // namespace switchyard::execution
