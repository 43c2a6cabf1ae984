#pragma once

#include "config/config.h"
#include "execution/client_channel.h"
#include "health/health_registry.h"
#include "protocol/openai_error.h"
#include "resilience/error_class.h"
#include "routing/route_decision.h"
#include "telemetry/trace.h"
#include "timing/deadline_scheduler.h"
#include "timing/loop_health.h"
#include "upstream/adapters/provider_adapter.h"
#include "upstream/sse_parser.h"
#include "upstream/upstream_transport.h"

#include <QByteArrayView>
#include <QString>
#include <chrono>
#include <memory>
#include <optional>
#include <variant>

namespace switchyard::execution {

// Why an attempt ended without an answer, while another provider may still answer instead.
struct AttemptFailure {
    AttemptFailure(resilience::ErrorClass errorClass, protocol::ApiError error, QString description,
                   bool cutByBudget = false,
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
    // The provider answered an error another model may not have (resilience/error_fallback.h):
    // the request's fallback models for it may answer instead.
    std::optional<config::FallbackError> fallbackError{};
};

// The whole request's deadline, across attempts and waits: the client's budget, and for a
// non-streamed request the total timeout as well. A stream has no total cap of its own.
struct RequestDeadline {
    std::optional<timing::Clock::TimePoint> at;
    bool isClientBudget = false; // x-switchyard-timeout-budget-ms set the deadline

    std::optional<std::chrono::milliseconds> remaining(timing::Clock::TimePoint now) const
    {
        if (!at)
            return std::nullopt;
        return std::chrono::floor<std::chrono::milliseconds>(*at - now);
    }
};

// What an attempt tells the execution that runs it: when its answer reaches the client, and how
// it ended. The execution decides what comes next.
class AttemptListener {
public:
    virtual ~AttemptListener() = default;
    // The first streamed event goes to the client now: from here on this provider's answer is
    // the answer, and no other attempt can follow.
    virtual void streamCommitted() = 0;
    // The headers the attempt's answer leaves with.
    virtual HeaderList answerHeaders() const = 0;
    // Streamed events are about to reach the client: the listener may read them, and rewrite
    // those of an attempt that continues another's stream (StreamContinuation).
    virtual void streamEventsRelaying(QList<upstream::SseEvent> &events) = 0;
    // A provider's answer, or one event of it, reached the client: the request used tokens
    // someone pays for. `text` counts for the estimate when the provider reports no usage.
    virtual void providerAnswerRelayed(QByteArrayView text) = 0;
    // The attempt is about to write the client's last bytes: a disconnect they cause does not
    // replace the outcome.
    virtual void answerFinishing() = 0;
    // The client has the whole answer, sent with `status`.
    virtual void answered(int status) = 0;
    // The client's time budget ran out while its answer streamed.
    virtual void budgetRanOutMidStream() = 0;
    // The client took nothing for a whole idle period while its stream waited.
    virtual void clientStalled() = 0;
    // Whether a fallback model is left to try for `error`. An answer the content filter stopped
    // before any content is relayed as it is unless one is: then the attempt fails instead.
    virtual bool fallsBackOn(config::FallbackError error) const = 0;
    // The attempt failed, its call stopped: after the first byte that ends the request; before
    // it another provider may still answer instead.
    virtual void attemptFailed(AttemptFailure failure) = 0;
};

// What an attempt borrows from the execution that runs it, which outlives it.
struct AttemptScope {
    upstream::UpstreamTransport &transport;
    health::HealthRegistry &health;
    timing::DeadlineScheduler &scheduler; // the watch, and the time read for the attempt
    const timing::LoopHealth &loop;       // the engine loop's lag, for blaming timeouts
    const config::Config &config;         // the snapshot the request started with
    telemetry::TraceBuilder &trace;
    ClientChannel &client;
    AttemptListener &listener;
    RequestDeadline deadline;
};

// Marks events about to go to the client in the trace: first byte, chunk arrivals, the watched
// request's live text, the kept body.
void traceStreamedEvents(telemetry::TraceBuilder &trace, const QList<upstream::SseEvent> &events);

// One call to one endpoint: the request its adapter builds, the transport call, the watch on it,
// and the relay of its answer to the client. An observer of its upstream call: a streamed answer
// is relayed event by event as it arrives, through the SSE parser and the adapter's translator,
// never buffered whole; a slow client pauses the provider. The watch is one Deadline of the
// engine's scheduler for whatever the attempt waits for at the moment (the answer, the first
// token, the next chunk, a stalled client, the end after [DONE]). How the attempt ends goes to
// its AttemptListener.
class Attempt final : private upstream::UpstreamObserver {
public:
    // `number` is 1-based, as x-switchyard-attempts counts; `holdsFailoverSlot`: the call counts
    // as failed-over traffic on its endpoint.
    Attempt(AttemptScope scope, int candidateIndex, const routing::RouteCandidate &candidate,
            int number, bool holdsFailoverSlot);
    Attempt(const Attempt &) = delete;
    Attempt &operator=(const Attempt &) = delete;

    // Builds the provider's request with its adapter, or returns the adapter's refusal: this
    // kind of provider cannot express the request. `dialect`: what the answer comes back in.
    std::variant<upstream::adapters::PreparedRequest, protocol::ApiError>
    prepare(const upstream::adapters::AdapterRequest &request, Dialect dialect);
    // Starts the call prepare() built. `earlierInTier`: the attempts before it in its tier.
    void start(upstream::adapters::PreparedRequest prepared, const QByteArray &spanId,
               int earlierInTier);
    // The attempt continues a stream another attempt began (its client's stream is open): its
    // first content is not a first byte, and its stream is not begun again. Before start().
    void continueStream() { m_continuesStream = true; }
    // The adapter refused: hands back what the attempt took without a call.
    void handBackAdmission();
    // Closes the attempt's span and reports its call to the health registry; false when it had
    // no call open.
    bool end(health::CallOutcome outcome, const QString &detail);
    // The request ended: stops the call and the watch; nothing more of it reaches the client.
    void stop();
    // The client took bytes from its send buffer: a paused provider may go on.
    void clientDrained();

    int candidateIndex() const { return m_candidateIndex; }
    int number() const { return m_number; }
    const routing::RouteCandidate &candidate() const { return m_candidate; }
    const QString &providerId() const { return m_candidate.providerId; }
    const config::ProviderConfig &provider() const { return *m_provider; }
    int pauseCount() const { return m_pauseCount; }
    // What its answer is written in (prepare()).
    Dialect dialect() const { return m_dialect; }
    // Whether any of its stream reached the client.
    bool relayedStream() const { return m_timeToFirstTokenMs >= 0; }

private:
    // Streaming from the first event relayed; Stopped once the request ended (stop()).
    enum class Phase { WaitingForAnswer, Streaming, Stopped };
    // What the attempt's watch deadline watches at the moment.
    enum class Watch { Nothing, Answer, FirstToken, Idle, ClientStall, EndAfterDone };
    using TimePoint = timing::Clock::TimePoint;

    void onResponseHead(const upstream::UpstreamResponseHead &head) override;
    void onResponseBody(QByteArrayView bytes) override;
    void onFinished(const upstream::UpstreamResult &result) override;
    void onWatchDue();

    TimePoint now() const { return m_scope.scheduler.now(); }
    double msSince(TimePoint start) const;
    void watch(Watch what, std::chrono::milliseconds limit);
    void watchUntil(Watch what, TimePoint end);
    void noteUpstreamActivity();
    // The watch ends with the request's deadline, and that deadline is the client's own budget.
    bool watchCutByBudget() const
    {
        return m_watchEndsAtDeadline && m_scope.deadline.isClientBudget;
    }
    void stopWatching();

    // Where the attempt's answer says why it ended: Anthropic's own answer, passed through,
    // says stop_reason; everything the executor relays in OpenAI's shapes, finish_reason.
    QByteArrayView finishReasonKey() const
    {
        return m_operation == protocol::Operation::Messages && m_dialect == Dialect::Native
                   ? QByteArrayView("\"stop_reason\":")
                   : QByteArrayView("\"finish_reason\":");
    }
    void relayWholeAnswer();
    // Writes translated stream events (beginning the client's stream if they are the first) and
    // acts on a failure among them. Returns false when the request ended or its attempt failed.
    bool relayStreamOutput(upstream::adapters::StreamOutput output);
    void relayUpstreamError();
    // The content filter stopped the answer before any content and a fallback model is left to
    // try: fails the attempt, so that model answers instead. False: the answer is relayed.
    bool failIfFilteredWithoutContent(bool filtered);
    void completeStream();
    void noteUsage(const upstream::adapters::Usage &usage);
    // Stops the call and the watch and hands the failure to the listener.
    void fail(AttemptFailure failure);
    protocol::ApiError budgetCutError() const; // the attempt the budget cut short
    // A timeout while the engine loop lagged past admission.overload_lag at any moment of the
    // `waited` that ran out: the gateway's fault. The failure becomes 503 gateway_overloaded,
    // counts nothing against the provider, and is not retried (more attempts would add to the
    // load that caused it).
    AttemptFailure blameTimeout(AttemptFailure failure, std::chrono::milliseconds waited);
    // The transport could not open a socket: this process is out of descriptors or memory.
    // Handled as blameTimeout's overload: every provider would fail the same way.
    AttemptFailure blameLocalResources(AttemptFailure failure);
    // Makes `failure` the gateway's: 503 gateway_overloaded with Retry-After and `message` for
    // the client, `traceDetail` in the trace, nothing held against the provider, no retry.
    AttemptFailure blameGateway(AttemptFailure failure, const QString &traceDetail,
                                const QString &message);
    // The engine loop runs later than admission.overload_lag: its own backlog, not providers.
    bool loopIsLate() const;

    AttemptScope m_scope;
    const int m_candidateIndex;
    const routing::RouteCandidate &m_candidate;
    const int m_number; // 1-based, as x-switchyard-attempts counts
    int m_span = -1;
    bool m_open = false;      // counted in flight by the health registry
    bool m_holdsFailoverSlot; // counted as failed-over traffic on its endpoint
    Phase m_phase = Phase::WaitingForAnswer;
    // Whether the request's remaining time budget, not the configured timeout, bounded the
    // connect: a timeout then is not the provider's fault.
    bool m_connectCutByBudget = false;
    std::chrono::milliseconds m_answerLimit{0};
    TimePoint m_startedAt{};
    // The provider's definition the adapter refers to: the request's snapshot's for a
    // configured provider, `m_agentDefinition` (a copy: the registry's list may grow while the
    // attempt runs) for a registered agent.
    const config::ProviderConfig *m_provider = nullptr;
    std::unique_ptr<config::ProviderConfig> m_agentDefinition;
    std::unique_ptr<upstream::adapters::ProviderAdapter> m_adapter;
    upstream::adapters::AnswerShape m_shape;
    // What the provider is asked: chat, or the request's operation passed through as it is.
    protocol::Operation m_operation = protocol::Operation::Chat;
    // The provider answers in the operation's own shapes, not as chat (the operation the
    // execution was given).
    Dialect m_dialect = Dialect::Chat;

    std::unique_ptr<upstream::UpstreamCall> m_call;
    upstream::UpstreamResponseHead m_head;
    upstream::SseParser m_sse;
    QByteArray m_answer;
    bool m_relayingEvents = false;
    std::unique_ptr<upstream::adapters::StreamTranslator> m_stream;
    // Events that open the answer without any of it (isOpeningEvent), held until its first
    // content so that a failure before it can still fail over.
    QList<upstream::SseEvent> m_heldOpening;
    bool m_sawDone = false;
    bool m_continuesStream = false; // continueStream()
    double m_timeToFirstTokenMs = -1.0;
    double m_answerCompleteMs = -1.0; // when [DONE] arrived, for the call's latency
    // The engine loop ran later than admission.overload_lag when the first event was read:
    // the time to it is partly the gateway's own backlog, not the provider's speed.
    bool m_firstTokenWhileLate = false;
    double m_lagAtFirstTokenMs = 0.0;
    qint64 m_bytesReceived = 0;
    resilience::ErrorClass m_errorClass = resilience::ErrorClass::None; // how it failed

    timing::Deadline m_watchDeadline;
    Watch m_watch = Watch::Nothing;
    bool m_watchEndsAtDeadline = false; // the request's deadline comes before the watch's limit
    TimePoint m_idleFrom{};             // the last upstream activity, for the idle watch
    bool m_upstreamPaused = false;
    int m_pauseCount = 0;
};

} // namespace switchyard::execution
