#include "execution/request_execution.h"

#include "health/health_registry.h"
#include "logging/log_line.h"
#include "protocol/gateway_headers.h"
#include "resilience/admission.h"
#include "resilience/degradation.h"
#include "telemetry/request_recorder.h"
#include "upstream/adapters/provider_adapter.h"

#include <QDateTime>
#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcExecution, "switchyard.execution", QtInfoMsg)

namespace switchyard::execution {

using namespace Qt::StringLiterals;
using health::CallOutcome;
using resilience::ErrorClass;
using resilience::RetryAction;
using resilience::RetryStop;
using std::chrono::milliseconds;

namespace {

// A provider with `forward_client_authorization` gets the client's own credential headers, for
// deployments where each client holds its own provider key. Nothing else ever sends them on.
// The provider's configured key, when it has one, keeps its header. The header that carried the
// client's Switchyard key is Switchyard's secret, never the provider's: it is not forwarded.
upstream::HeaderList clientCredentials(const config::ProviderConfig &provider,
                                       const routing::RequestContext &context)
{
    upstream::HeaderList forwarded;
    for (const QByteArrayView name :
         {QByteArrayView("Authorization"), QByteArrayView("x-api-key")}) {
        const QByteArray value = context.header(name);
        if (value.isEmpty() || context.switchyardKeyHeader.compare(name, Qt::CaseInsensitive) == 0)
            continue;
        if (!provider.apiKey.isEmpty() &&
            provider.keyHeaderName().compare(name, Qt::CaseInsensitive) == 0)
            continue;
        forwarded.append({name.toByteArray(), value});
    }
    return forwarded;
}

// The client's own protocol headers, which an operation passed through carries to a provider of
// the same protocol (its adapter merges them with the provider's configured ones): Anthropic's
// version and beta features. Nothing else of the client's reaches a provider this way.
upstream::HeaderList clientProtocolHeaders(const routing::RequestContext &context)
{
    upstream::HeaderList forwarded;
    for (const auto &[name, value] : context.headers) {
        if (name.compare("anthropic-version", Qt::CaseInsensitive) == 0 ||
            name.compare("anthropic-beta", Qt::CaseInsensitive) == 0)
            forwarded.append({name.toLower(), value});
    }
    return forwarded;
}

// Config text (a rule name) made safe for a response header: visible ASCII only.
QByteArray headerSafe(const QString &text)
{
    QByteArray value = text.toUtf8();
    for (char &c : value) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x21 || byte > 0x7e)
            c = '_';
    }
    return value;
}

// A count for a header: 0 to 9, the usual attempts, degradation level and depth, point at
// static text (each followed by its NUL) instead of allocating.
QByteArray smallNumber(int value)
{
    static constexpr char kDigits[10][2] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
    if (value >= 0 && value <= 9)
        return QByteArray::fromRawData(kDigits[value], 1);
    return QByteArray::number(value);
}

} // namespace

RequestExecution::RequestExecution(ExecutionServices services,
                                   std::shared_ptr<const config::Config> config,
                                   protocol::ChatRequest request, QByteArray body,
                                   routing::RequestContext context, routing::RouteDecision decision,
                                   telemetry::TraceBuilder trace,
                                   std::unique_ptr<ClientChannel> client, QObject *parent)
    : QObject(parent), m_services(std::move(services)), m_config(std::move(config)),
      m_request(std::move(request)), m_body(std::move(body)), m_bodyModel(m_request.model),
      m_context(std::move(context)), m_decision(std::move(decision)), m_trace(std::move(trace)),
      m_client(std::move(client)),
      m_plan(m_decision.candidates, m_context.fallbackLevel,
             [config = m_config](const QString &tier) {
                 const config::TierConfig *contract = config->routing.tier(tier);
                 return contract ? contract->retries : -1;
             }),
      m_wait(m_services.scheduler, [this] { resumeRun(); })
{}

RequestExecution::~RequestExecution()
{
    // Deleted while it runs (the engine shutting down): stop the call, give back what the
    // attempt holds, and let the coroutine reach its end so its frame is freed.
    if (m_attempt)
        m_attempt->stop();
    m_services.recorder.endLive(&m_trace);
    if (!m_done) {
        m_done = true;
        endAttempt(CallOutcome::Cancelled, QStringLiteral("abandoned at shutdown"));
        releaseRetrySlot();
        if (m_countedInRetryBudget)
            m_services.retryBudget.requestFinished();
    }
    resumeRun();
}

HeaderList RequestExecution::responseHeaders(const QString &provider, int degradedLevel) const
{
    const telemetry::Trace &trace = m_trace.trace();
    HeaderList headers = protocol::identityHeaders(
        trace.requestId, trace.traceId, provider.isEmpty() ? "none"_ba : provider.toUtf8());
    headers.append({"x-switchyard-route"_ba,
                    m_decision.rule.isEmpty() ? "default"_ba : headerSafe(m_decision.rule)});
    headers.append({"x-switchyard-tier"_ba,
                    m_decision.tier.isEmpty() ? "none"_ba : headerSafe(m_decision.tier)});
    headers.append({"x-switchyard-attempts"_ba, smallNumber(m_plan.attempts())});
    headers.append({"x-switchyard-degraded"_ba, smallNumber(degradedLevel)});
    return headers;
}

// ---- the run ------------------------------------------------------------------------------------

void RequestExecution::setOperation(protocol::Operation operation, QByteArray operationBody,
                                    bool nativeOnly)
{
    m_operation = operation;
    m_operationBody = std::move(operationBody);
    m_nativeOnly = nativeOnly;
}

void RequestExecution::setFallbackRouting(const routing::Router &router,
                                          std::shared_ptr<const routing::RoutingTable> table)
{
    m_router = &router;
    m_table = std::move(table);
}

void RequestExecution::start()
{
    m_client->setListener(this);
    if (!m_client->connected()) {
        onClientGone();
        return;
    }
    telemetry::Trace &record = m_trace.trace();
    record.model = m_request.model;
    record.streamed = m_request.stream;
    record.route = m_decision.rule;
    record.tier = m_decision.tier;
    m_services.recorder.beginLive(&m_trace);
    // The trace has the explanation now, written as lines once the answer has begun. Only a
    // decision without candidates reads its steps again, for the refusal; a held stream keeps no
    // second copy of them.
    if (m_decision.candidates.isEmpty())
        m_trace.explainChoice(m_decision.steps);
    else
        m_trace.explainChoice(std::move(m_decision.steps));
    m_services.retryBudget.requestStarted();
    m_countedInRetryBudget = true;
    if (m_request.stream && operationHasTextAnswer() && m_decision.continueStreams &&
        StreamContinuation::requestAllows(m_body))
        m_continuation = std::make_unique<StreamContinuation>();

    // The whole request's deadline, across attempts and waits: the client's budget, and for a
    // non-streamed request the total timeout as well. A stream has no total cap of its own.
    const TimePoint startedAt = now();
    const milliseconds total = m_config->timeouts.total;
    std::optional<milliseconds> budget = m_context.timeoutBudget;
    m_deadline.isClientBudget = budget.has_value();
    if (!m_request.stream && (!budget || *budget > total)) {
        budget = total;
        m_deadline.isClientBudget = false;
    }
    if (budget)
        m_deadline.at = startedAt + *budget;

    // Shedding thins the traffic a degraded tier sends to its fallbacks; with no fallback left
    // there is nothing to protect.
    if (!m_decision.candidates.isEmpty() && tierIsDegraded() &&
        !m_services.admission.admitsToDegradedFallback(m_trace.trace().requestId)) {
        m_failures.shed = true;
        m_trace.pointEvent(
            QStringLiteral("shed"),
            QStringLiteral("every endpoint of tier `%1` is unavailable; its fallbacks take %2 % "
                           "of its traffic and this request is not among it")
                .arg(m_decision.tier)
                .arg(m_config->resilience.admission.degradedAdmitShare * 100.0));
        finishWithoutAnswer();
        return;
    }
    m_run.emplace(run());
}

void RequestExecution::resumeRun()
{
    if (std::coroutine_handle<> waiting = std::exchange(m_suspended, {}))
        waiting.resume();
}

QCoro::Task<> RequestExecution::run()
{
    const config::RetryConfig &retries = m_config->resilience.retries;
    while (!m_done) {
        bool failover = false;
        int next = takeNextCandidate(&failover);
        if (next < 0) {
            // Nothing can take the request now. One endpoint cooling down after a 429 may be
            // worth waiting for, once.
            const int cooling = soonestCoolingCandidate();
            // A cut stream does not wait for a cool-down: its client is reading it now.
            if (cooling < 0 || m_continuing) {
                finishWithoutAnswer();
                co_return;
            }
            const routing::RouteCandidate &target = m_plan.candidates()[cooling];
            const resilience::RetryDecision wait = resilience::decideCoolDownWait(
                m_services.health.coolDownLeft(target.endpoint), m_waitedForCoolDown,
                m_plan.attempts(), remainingBudget(), retries);
            if (wait.action == RetryAction::GiveUp) {
                m_trace.pointEvent(QStringLiteral("no retry"), wait.reason);
                if (wait.stop == RetryStop::AttemptsExhausted)
                    m_failures.retryStop = wait.stop;
                finishWithoutAnswer();
                co_return;
            }
            if (m_plan.attempts() > 0 && !takeRetrySlot()) {
                finishWithoutAnswer();
                co_return;
            }
            m_waitedForCoolDown = true;
            m_trace.pointEvent(QStringLiteral("retry"),
                               QStringLiteral("%1: %2").arg(target.providerId, wait.reason));
            const int waitSpan = m_trace.openSpan(
                QStringLiteral("cool-down wait"),
                QStringLiteral("%1 asked for a pause (Retry-After)").arg(target.providerId),
                telemetry::SpanKind::Wait);
            m_wait.armIn(wait.delay);
            co_await suspend();
            m_trace.closeSpan(waitSpan);
            if (m_done)
                co_return;
            if (!m_services.health.tryAdmit(target.endpoint)) {
                m_trace.pointEvent(
                    QStringLiteral("skipped endpoint"),
                    QStringLiteral("%1: %2").arg(
                        target.providerId, m_services.health.unavailableReason(target.endpoint)));
                m_failures.skips.append({cooling, resilience::SkipReason::BreakerOpen});
                releaseRetrySlot();
                continue; // nothing else can take it: the next round ends the request
            }
            next = cooling;
            failover = false;
        }

        if (!startAttempt(next, failover))
            co_return; // the provider's adapter refused the request: it has its answer
        co_await suspend();
        if (m_done)
            co_return; // answered, or the client is gone
        const AttemptFailure failure = std::move(*std::exchange(m_failure, nullptr));

        // An error another model may not have goes to the request's fallback models for it,
        // before any retry: another endpoint of the same model would answer the same. Not once
        // the client's stream began: its headers named the model that answers.
        if (failure.fallbackError && !failure.blamedOnGateway && !m_continuing) {
            if (std::optional<routing::RouteDecision> fallback =
                    routeErrorFallback(*failure.fallbackError)) {
                if (!takeRetrySlot()) {
                    finishWithoutAnswer();
                    co_return;
                }
                // The next attempt never starts inside the callbacks of the one that failed.
                m_wait.armIn(milliseconds(0));
                co_await suspend();
                if (m_done)
                    co_return;
                m_attempt.reset(); // it refers to its candidate, which the switch may move
                m_failures.coolingCandidates.clear(); // the model before's: not worth a wait
                m_plan.switchToFallback(fallback->candidates);
                continue;
            }
        }

        resilience::RetryDecision decision;
        if (failure.blamedOnGateway) {
            decision.reason = QStringLiteral("the gateway itself is overloaded: another attempt "
                                             "would add to the load");
        } else if (failure.cutByBudget) {
            decision.reason = QStringLiteral("the request's time budget ran out");
            decision.stop = RetryStop::TimeBudget;
        } else {
            // A provider that refused to continue a cut stream refused the continuation, not the
            // client's request: another may continue it, within the same caps, as after an
            // answer that could not be used.
            const ErrorClass retryClass =
                m_continuing && failure.errorClass == ErrorClass::RequestRejected
                    ? ErrorClass::UnusableAnswer
                    : failure.errorClass;
            const resilience::RetryInput input{retryClass, false, m_plan.attempts(),
                                               remainingBudget(),
                                               m_services.random ? m_services.random() : 0.0};
            decision = resilience::decideRetry(input, retries);
        }
        if (decision.action == RetryAction::GiveUp) {
            m_trace.pointEvent(QStringLiteral("no retry"), decision.reason);
            m_failures.retryStop = decision.stop;
            finishWithoutAnswer();
            co_return;
        }
        if (!m_plan.anyCandidateLeft()) {
            if (soonestCoolingCandidate() < 0) {
                m_trace.pointEvent(QStringLiteral("no retry"),
                                   QStringLiteral("no other endpoint is left to try"));
                finishWithoutAnswer();
                co_return;
            }
            continue; // no backoff: the next round waits out the cool-down, or ends
        }
        if (!takeRetrySlot()) {
            finishWithoutAnswer();
            co_return;
        }
        if (m_continuing) {
            // The client's stream is open and waiting: the continuation goes to another endpoint
            // at once.
            decision.delay = milliseconds(0);
        }
        m_trace.pointEvent(QStringLiteral("retry"), decision.reason);
        const int waitSpan = decision.delay.count() > 0
                                 ? m_trace.openSpan(QStringLiteral("backoff"), decision.reason,
                                                    telemetry::SpanKind::Wait)
                                 : -1;
        // Even a zero wait goes through the scheduler: the next attempt never starts from
        // inside the callbacks of the one that failed.
        m_wait.armIn(decision.delay);
        co_await suspend();
        if (waitSpan >= 0)
            m_trace.closeSpan(waitSpan);
    }
}

int RequestExecution::takeNextCandidate(bool *tookFailoverSlot)
{
    const resilience::AttemptPlan::Gate gate =
        [this, tookFailoverSlot](const routing::RouteCandidate &next,
                                 bool failover) -> std::optional<resilience::SkipReason> {
        if (const auto mismatch = operationMismatch(next))
            return mismatch;
        if (m_continuing && !canContinueOn(next))
            return resilience::SkipReason::CannotContinue;
        // Reversible checks first: a half-open breaker's admission is its one probe call.
        const int provider = next.endpoint;
        if (m_services.health.coolDownLeft(provider).count() > 0)
            return resilience::SkipReason::CoolingDown;
        if (failover && !m_services.health.tryStartFailover(
                            provider, m_services.admission.failoverLimit(
                                          m_services.health.providerConfig(provider).capacity)))
            return resilience::SkipReason::FailoverCapacityFull;
        if (!m_services.health.tryAdmit(provider)) {
            if (failover)
                m_services.health.failoverFinished(provider);
            return resilience::SkipReason::BreakerOpen;
        }
        *tookFailoverSlot = failover;
        return std::nullopt;
    };
    QList<resilience::CandidateSkip> skipped;
    const int next = m_plan.takeNext(gate, &skipped);
    for (const resilience::CandidateSkip &skip : skipped) {
        m_trace.pointEvent(
            QStringLiteral("skipped endpoint"),
            QStringLiteral("%1: %2").arg(m_plan.candidates()[skip.candidateIndex].providerId,
                                         resilience::skipReasonText(skip.reason)));
        if (skip.reason == resilience::SkipReason::CoolingDown)
            m_failures.coolingCandidates.append(skip.candidateIndex);
    }
    m_failures.skips.append(skipped);
    return next;
}

int RequestExecution::soonestCoolingCandidate() const
{
    int soonest = -1;
    milliseconds soonestLeft = milliseconds::max();
    for (int index : m_failures.coolingCandidates) {
        const milliseconds left =
            m_services.health.coolDownLeft(m_plan.candidates()[index].endpoint);
        if (left < soonestLeft) {
            soonest = index;
            soonestLeft = left;
        }
    }
    return soonest;
}

std::optional<resilience::SkipReason>
RequestExecution::operationMismatch(const routing::RouteCandidate &next)
{
    if (m_operation == protocol::Operation::Chat)
        return std::nullopt;
    const config::ProviderConfig *provider = m_config->provider(next.providerId);
    if (!provider) // a registered agent speaks chat only
        return (m_operation == protocol::Operation::Responses ||
                m_operation == protocol::Operation::Messages) &&
                       !m_nativeOnly
                   ? std::nullopt
                   : std::optional(resilience::SkipReason::OperationNotServed);
    if (!provider->serves(next.upstreamModel, m_operation) ||
        (m_nativeOnly && !provider->speaksNatively(m_operation)))
        return resilience::SkipReason::OperationNotServed;
    return std::nullopt;
}

bool RequestExecution::tierIsDegraded() const
{
    const config::TierConfig *tier =
        m_decision.tier.isEmpty() ? nullptr : m_config->routing.tier(m_decision.tier);
    if (!tier || tier->pool.isEmpty())
        return false;
    for (const QString &id : tier->pool) {
        const int index = m_services.health.indexOf(id);
        if (index >= 0 && m_services.health.selectable(index))
            return false;
    }
    return true;
}

// ---- starting an attempt ------------------------------------------------------------------------

bool RequestExecution::startAttempt(int candidateIndex, bool failover)
{
    const routing::RouteCandidate &chosen = m_plan.candidates()[candidateIndex];
    // A continuation starts: the cut attempt's tokens are its own, carried before it is replaced.
    // (When none starts, the cut attempt stays the last and its tokens are the record's.)
    if (m_continuing && m_attempt && m_attempt->relayedStream())
        carryCutAttemptTokens();
    const int earlierInTier = m_plan.attemptsInTier(chosen.tier);
    m_plan.recordAttempt(candidateIndex);
    m_attempt.emplace(attemptScope(), candidateIndex, chosen, m_plan.attempts(), failover);
    const config::ProviderConfig &provider = m_attempt->provider();
    m_trace.trace().provider = provider.id;
    m_trace.trace().upstreamModel = chosen.upstreamModel;
    const QByteArray attemptSpanId = telemetry::newSpanId();

    // An operation goes to a provider that speaks it as it is; the Responses API and Anthropic's
    // Messages reach one that does not as chat, and come back through the client's channel
    // translated. Each attempt decides by its own provider.
    const bool passThrough =
        m_operation != protocol::Operation::Chat && provider.speaksNatively(m_operation);
    upstream::adapters::AdapterRequest request =
        providerRequest(chosen, provider, passThrough, attemptSpanId);
    if (m_continuing) {
        // The text the client has is this provider's to continue, as the assistant's own
        // unfinished answer.
        upstream::adapters::ContinuationBody continuation =
            upstream::adapters::continuationBody(provider, m_body, m_continuation->text());
        request.openAiBody = std::move(continuation.body);
        m_continuation->beginContinuation(m_cutProvider, provider.id,
                                          m_cutError ? m_cutError->code : QString(),
                                          m_plan.attempts(), continuation.trimmedTail);
        m_attempt->continueStream();
        m_trace.pointEvent(QStringLiteral("stream continued"),
                           QStringLiteral("%1 continues the answer `%2` was cut off in, after %3 "
                                          "characters")
                               .arg(provider.id, m_cutProvider)
                               .arg(m_continuation->text().size()));
    }
    auto prepared = m_attempt->prepare(request, passThrough ? Dialect::Native : Dialect::Chat);
    if (const protocol::ApiError *refusal = std::get_if<protocol::ApiError>(&prepared)) {
        refuseForProvider(*refusal);
        return false;
    }
    upstream::adapters::PreparedRequest &built =
        std::get<upstream::adapters::PreparedRequest>(prepared);
    if (!passThrough && built.bodyIsOpenAiBodyRenamed && !m_continuing) {
        // The renamed body is kept instead of the client's: one copy of the conversation while
        // the call is in flight, not two. A later attempt renames it again (only the model
        // differs), and every other kind of provider reads it for everything but the model.
        m_body = built.request.body;
        m_bodyModel = chosen.upstreamModel;
    }
    m_attempt->start(std::move(built), attemptSpanId, earlierInTier);
    return true;
}

upstream::adapters::AdapterRequest
RequestExecution::providerRequest(const routing::RouteCandidate &chosen,
                                  const config::ProviderConfig &provider, bool passThrough,
                                  const QByteArray &attemptSpanId) const
{
    upstream::adapters::AdapterRequest request{
        passThrough ? m_operation : protocol::Operation::Chat,
        passThrough ? m_operationBody : m_body,
        passThrough ? m_request.model : m_bodyModel,
        chosen.upstreamModel,
        m_request.stream,
        m_trace.trace().requestId,
        QDateTime::currentSecsSinceEpoch(),
        {{"x-request-id"_ba, m_trace.trace().requestId},
         // The provider's spans are children of this attempt's.
         {"traceparent"_ba, telemetry::formatTraceparent(m_trace.trace().traceId, attemptSpanId)},
         // The loop guard: a Switchyard behind this one sees one hop more.
         {"x-switchyard-depth"_ba, smallNumber(m_context.depth + 1)}},
        passThrough ? clientProtocolHeaders(m_context) : upstream::HeaderList()};
    if (provider.forwardClientAuthorization)
        request.extraHeaders.append(clientCredentials(provider, m_context));
    return request;
}

AttemptScope RequestExecution::attemptScope()
{
    return AttemptScope{m_services.transport,
                        m_services.health,
                        m_services.scheduler,
                        m_services.loop,
                        *m_config,
                        m_trace,
                        *m_client,
                        *this,
                        m_deadline};
}

void RequestExecution::refuseForProvider(const protocol::ApiError &refusal)
{
    // The request asks for something this provider's protocol cannot express: the client's
    // fault, so nothing is sent and the endpoint's health is untouched.
    m_attempt->handBackAdmission();
    const routing::RouteCandidate &chosen = m_attempt->candidate();
    m_trace.pointEvent(QStringLiteral("refused by adapter"),
                       QStringLiteral("%1: %2").arg(chosen.providerId, refusal.message));
    // On a failover the request was fine for the provider that failed first: its error is what
    // ended the request, and a 400 blaming the client would hide it.
    if (!m_failures.lastError) {
        m_failures.lastError = std::make_unique<protocol::ApiError>(refusal);
        m_failures.lastErrorProvider = chosen.providerId;
        m_failures.lastErrorClass = ErrorClass::RequestRejected;
    }
    releaseRetrySlot();
    finishWithoutAnswer();
}

// ---- what the client and the attempt report ----------------------------------------------------

void RequestExecution::onClientGone()
{
    // While an ending path writes the final answer (or drops a stalled client), a disconnect it
    // causes must not replace the outcome that path records.
    if (m_done || m_finishing)
        return;
    if (m_attempt)
        m_attempt->stop();
    endAttempt(CallOutcome::Cancelled, QStringLiteral("client disconnected"));
    complete(499, QStringLiteral("client_disconnected"));
}

void RequestExecution::cancel(const QString &outcomeCode, const QString &reason)
{
    if (m_done || m_finishing)
        return;
    if (m_attempt)
        m_attempt->stop();
    endAttempt(CallOutcome::Cancelled, reason);
    m_trace.pointEvent(QStringLiteral("cancelled"), reason);
    complete(499, outcomeCode);
}

void RequestExecution::onClientDrained()
{
    if (m_done || !m_attempt)
        return;
    m_attempt->clientDrained();
}

void RequestExecution::streamCommitted()
{
    // The answer has begun: the trace's copy of the request and its routing lines, which its
    // first event did not wait for, are made now, while the request's headers are still held.
    m_trace.writeHeld();
    // A stream that may be continued needs the request again, for the provider that continues.
    if (m_continuation)
        return;
    // No other attempt can follow, so the client's request is not needed again. An agent's
    // request carries its whole conversation; held streams would otherwise keep it, besides the
    // provider's copy, for as long as they run.
    m_body = QByteArray();
    m_operationBody = QByteArray();
    // Nor are its headers (read for credentials at each attempt).
    m_context.headers = {};
}

void RequestExecution::streamEventsRelaying(QList<upstream::SseEvent> &events)
{
    if (!m_continuation)
        return;
    if (m_attempt->dialect() != Dialect::Chat) {
        // A stream in a provider's own protocol: nothing can splice another provider's into it.
        m_continuation.reset();
        return;
    }
    if (m_continuing)
        m_continuation->rewriteContinued(events);
    else
        m_continuation->observe(events);
}

// ---- streams that survive a cut ----------------------------------------------------------------

bool RequestExecution::canContinueOn(const routing::RouteCandidate &next) const
{
    const config::ProviderConfig *provider = m_config->provider(next.providerId);
    if (!provider || !provider->continuesAnswers())
        return false; // a registered agent's JSON has no partial answer to continue
    // Reached in its own protocol, its answer would not be chat chunks to splice in.
    return m_operation == protocol::Operation::Chat || !provider->speaksNatively(m_operation);
}

bool RequestExecution::mayContinueAfter(const AttemptFailure &failure)
{
    if (!m_continuation)
        return false;
    // The gateway's own overload, or the client's budget, would cut the next provider as well.
    if (failure.blamedOnGateway || failure.cutByBudget)
        return false;
    // The client's request is not at fault once its stream began: a continuing provider that
    // refuses the continuation (a model that takes no prefill) cannot continue, and the next
    // candidate may. A refusal of the first attempt's own stream is final.
    if (failure.errorClass == ErrorClass::RequestRejected &&
        (!m_continuing || m_attempt->relayedStream()))
        return false;
    if (!m_continuation->continuable()) {
        m_trace.pointEvent(QStringLiteral("not continued"), m_continuation->refusal());
        return false;
    }
    m_continuing = true;
    m_trace.pointEvent(QStringLiteral("stream cut"),
                       QStringLiteral("`%1` was cut off after %2 characters (%3): another "
                                      "candidate continues the answer")
                           .arg(m_cutProvider)
                           .arg(m_continuation->text().size())
                           .arg(m_cutError->code));
    return true;
}

void RequestExecution::carryCutAttemptTokens()
{
    // Each attempt is billed for what it did: the cut one's counts, when it sent none, are
    // estimated from the prompt and the text it relayed.
    telemetry::RequestRecord &record = m_trace.trace();
    const bool inputReported = record.inputTokens >= 0;
    const bool outputReported = record.outputTokens >= 0;
    m_carriedInputTokens += inputReported ? record.inputTokens : m_request.estimatedInputTokens;
    m_carriedOutputTokens += outputReported ? record.outputTokens : m_answerText.estimatedTokens();
    m_carriedTokensEstimated = m_carriedTokensEstimated || !inputReported || !outputReported;
    record.inputTokens = -1;
    record.outputTokens = -1;
    record.cacheReadTokens = -1;
    record.cacheWriteTokens = -1;
    m_answerText = {};
}

void RequestExecution::failStartedStream(const protocol::ApiError &error)
{
    m_finishing = true;
    // The inspector's live text ends as the client's stream did: with this error.
    if (m_trace.watched() || m_trace.limits().keepBodies) {
        const QByteArray errorJson = error.toJson();
        m_trace.appendLiveData(errorJson);
        m_trace.appendResponseBody("data: " + errorJson + "\n\n");
    }
    m_client->failStream(error);
    complete(error.status, error.code);
}

HeaderList RequestExecution::answerHeaders() const
{
    HeaderList headers =
        responseHeaders(m_attempt->providerId(), m_attempt->candidate().degradationLevel);
    if (m_errorFallbacks && !m_errorFallbacks->answeringModel.isEmpty()) {
        // A fallback by error answered: which model, and why it was not the one asked for.
        headers.append(
            {"x-switchyard-fallback-model", headerSafe(m_errorFallbacks->answeringModel)});
        headers.append({"x-switchyard-fallback-reason",
                        config::fallbackErrorName(m_errorFallbacks->reason).toLatin1()});
    }
    return headers;
}

void RequestExecution::providerAnswerRelayed(QByteArrayView text)
{
    m_providerAnswered = true;
    m_answerText.add(text);
}

void RequestExecution::answerFinishing()
{
    m_finishing = true;
}

void RequestExecution::answered(int status)
{
    endAttempt(CallOutcome::Success, QStringLiteral("ok"));
    complete(status, QStringLiteral("ok"));
}

void RequestExecution::budgetRanOutMidStream()
{
    m_failures.budgetRanOut = true;
    const protocol::ApiError error = errorWording().budgetError();
    endAttempt(CallOutcome::Cancelled, QStringLiteral("time budget ran out mid-stream"));
    m_finishing = true;
    m_client->failStream(error);
    complete(error.status, error.code);
}

void RequestExecution::clientStalled()
{
    m_finishing = true;
    m_client->abort();
    endAttempt(CallOutcome::Cancelled, QStringLiteral("client stalled"));
    complete(499, QStringLiteral("client_stalled"));
}

bool RequestExecution::fallsBackOn(config::FallbackError error) const
{
    return m_router && !m_continuing && !nextFallbackModel(error).isEmpty();
}

QString RequestExecution::nextFallbackModel(config::FallbackError error) const
{
    if (!m_errorFallbacks) {
        for (const QString &model : m_decision.errorFallbacks.models(error)) {
            if (model != m_request.model)
                return model;
        }
        return {};
    }
    for (const config::ErrorFallbacks &list : m_errorFallbacks->lists) {
        for (const QString &model : list.models(error)) {
            if (!m_errorFallbacks->routedModels.contains(model))
                return model;
        }
    }
    return {};
}

std::optional<routing::RouteDecision>
RequestExecution::routeErrorFallback(config::FallbackError error)
{
    if (!m_table || !fallsBackOn(error)) {
        // Said only when the request has moved before: without fallbacks an error is just one.
        if (m_errorFallbacks)
            m_trace.pointEvent(QStringLiteral("no fallback"),
                               QStringLiteral("%1: every fallback model was tried")
                                   .arg(config::fallbackErrorName(error)));
        return std::nullopt;
    }
    if (!m_errorFallbacks) {
        m_errorFallbacks = std::make_unique<ErrorFallbackRun>();
        m_errorFallbacks->lists.append(m_decision.errorFallbacks);
        m_errorFallbacks->routedModels.append(m_request.model);
    }
    ErrorFallbackRun &run = *m_errorFallbacks;
    const QString errorName = config::fallbackErrorName(error);
    const QString from = run.answeringModel.isEmpty() ? m_request.model : run.answeringModel;
    for (QString model = nextFallbackModel(error); !model.isEmpty();
         model = nextFallbackModel(error)) {
        run.routedModels.append(model);
        // Routed as a request for that model is: its rule, tier, health, breakers; by model,
        // not by the intent the client named.
        routing::RequestContext context = m_context;
        context.model = model;
        context.intent.clear();
        routing::RouteDecision decision = m_router->route(*m_table, context);
        run.lists.append(decision.errorFallbacks);
        if (decision.candidates.isEmpty()) {
            m_trace.pointEvent(QStringLiteral("fallback by error"),
                               QStringLiteral("%1: model `%2` cannot take the request: %3")
                                   .arg(errorName, model, decision.reason()));
            continue;
        }
        m_trace.pointEvent(QStringLiteral("fallback by error"),
                           QStringLiteral("%1: from model `%2` to model `%3`; %4")
                               .arg(errorName, from, model, decision.reason()));
        // The event's error names the fallback's reason: /metrics counts them by it.
        m_trace.trace().spans.last().errorClass = errorName;
        run.answeringModel = model;
        run.reason = error;
        return decision;
    }
    m_trace.pointEvent(QStringLiteral("no fallback"),
                       QStringLiteral("%1: every fallback model was tried or cannot take the "
                                      "request")
                           .arg(errorName));
    return std::nullopt;
}

void RequestExecution::attemptFailed(AttemptFailure failure)
{
    const QString provider = m_attempt->providerId();
    // The gateway's own overload says nothing about the provider, whatever the error's class.
    endAttempt(failure.blamedOnGateway
                   ? CallOutcome::Cancelled
                   : resilience::callOutcomeFor(failure.errorClass, failure.cutByBudget),
               QStringLiteral("%1 (%2)").arg(failure.description,
                                             resilience::errorClassName(failure.errorClass)));
    m_failures.attemptSummaries.append(
        QStringLiteral("`%1` (%2)").arg(provider, failure.description));
    // A single failure is debug: the request's own line (info) says how it ended, and a
    // breaker that trips says so at info too.
    if (lcExecution().isDebugEnabled()) {
        logging::LogFields fields;
        fields.add("request_id"_L1, QByteArrayView(m_trace.trace().requestId))
            .add("attempt"_L1, m_attempt->number())
            .add("provider"_L1, provider)
            .add("error_class"_L1, resilience::errorClassName(failure.errorClass))
            .add("detail"_L1, failure.description);
        logging::write(lcExecution(), QtDebugMsg, QStringLiteral("attempt failed"), fields);
    }
    m_failures.lastErrorProvider = provider;
    m_failures.lastErrorClass = failure.errorClass;
    m_failures.budgetRanOut = m_failures.budgetRanOut || failure.cutByBudget;
    if (failure.errorClass == ErrorClass::RateLimited) {
        // A rate limit is a state of the endpoint, not a failure: no calls until it passes.
        const milliseconds coolDown =
            failure.retryAfter.value_or(m_config->resilience.retries.defaultCoolDown);
        m_services.health.coolDown(m_attempt->candidate().endpoint, coolDown);
        m_failures.coolingCandidates.append(m_attempt->candidateIndex());
        m_trace.pointEvent(QStringLiteral("cool-down"),
                           QStringLiteral("%1 for %2").arg(provider, millisecondsText(coolDown)));
    }
    if (m_client->answerStarted()) {
        // The status line is gone; a second provider would repeat or contradict what the client
        // already has, unless it continues the very text the client has (continue_streams).
        // Otherwise the stream ends with an error event.
        if (!m_cutError || m_attempt->relayedStream() || failure.cutByBudget) {
            m_cutError = std::make_unique<protocol::ApiError>(failure.error);
            m_cutProvider = provider;
        }
        if (mayContinueAfter(failure)) {
            m_failure = std::make_unique<AttemptFailure>(std::move(failure));
            resumeRun();
            return;
        }
        failStartedStream(*m_cutError);
        return;
    }
    m_failures.lastError = std::make_unique<protocol::ApiError>(failure.error);
    m_failure = std::make_unique<AttemptFailure>(std::move(failure));
    resumeRun();
}

// ---- endings ------------------------------------------------------------------------------------

void RequestExecution::countTokens(telemetry::RequestRecord &record) const
{
    const bool lastAttemptAnswered = !m_continuing || (m_attempt && m_attempt->relayedStream());
    if (lastAttemptAnswered) {
        fillUnreportedTokens(record);
    } else {
        // The attempt that was to continue the stream never sent any of it: nothing to bill.
        record.inputTokens = 0;
        record.outputTokens = 0;
        record.cacheReadTokens = -1;
        record.cacheWriteTokens = -1;
    }
    if (m_carriedInputTokens > 0 || m_carriedOutputTokens > 0) {
        record.inputTokens = std::max<qint64>(record.inputTokens, 0) + m_carriedInputTokens;
        record.outputTokens = std::max<qint64>(record.outputTokens, 0) + m_carriedOutputTokens;
        record.tokensEstimated = record.tokensEstimated || m_carriedTokensEstimated;
    }
}

void RequestExecution::fillUnreportedTokens(telemetry::RequestRecord &record) const
{
    // Counting tokens costs nothing at the provider, and the count it answers is its result,
    // not usage: the request has no token counts at all, reported or estimated.
    if (m_operation == protocol::Operation::CountTokens)
        return;
    if (record.inputTokens >= 0 && record.outputTokens >= 0)
        return;
    // Without a provider's answer nothing was billed: a request that failed everywhere, or one
    // the degradation ladder answered, used no tokens anyone pays for.
    if (!m_providerAnswered) {
        record.inputTokens = std::max<qint64>(record.inputTokens, 0);
        record.outputTokens = std::max<qint64>(record.outputTokens, 0);
        return;
    }
    // A provider answered without counting (a stream without stream_options.include_usage, a
    // provider that reports no usage, a stream cut short): estimated and said so, so the ledger
    // and its reports can tell estimates from the provider's own counts.
    if (record.inputTokens < 0)
        record.inputTokens = m_request.estimatedInputTokens;
    if (record.outputTokens < 0)
        record.outputTokens = m_answerText.estimatedTokens();
    record.tokensEstimated = true;
}

void RequestExecution::endAttempt(CallOutcome outcome, const QString &detail)
{
    if (m_attempt && m_attempt->end(outcome, detail))
        releaseRetrySlot();
}

bool RequestExecution::takeRetrySlot()
{
    if (m_holdsRetrySlot)
        return true;
    if (!m_services.retryBudget.tryStartRetry()) {
        m_failures.retryStop = RetryStop::RetryBudgetSpent;
        m_failures.retryStopReason =
            QStringLiteral("the retry budget is spent: %1 retries in flight, %2 allowed")
                .arg(m_services.retryBudget.retriesInFlight())
                .arg(m_services.retryBudget.allowedRetriesInFlight());
        m_trace.pointEvent(QStringLiteral("no retry"), m_failures.retryStopReason);
        return false;
    }
    m_holdsRetrySlot = true;
    return true;
}

void RequestExecution::releaseRetrySlot()
{
    if (!m_holdsRetrySlot)
        return;
    m_holdsRetrySlot = false;
    m_services.retryBudget.retryFinished();
}

void RequestExecution::finishWithoutAnswer()
{
    if (m_client->answerStarted()) {
        // A cut stream no other candidate could continue ends as any cut stream does.
        m_trace.pointEvent(QStringLiteral("not continued"),
                           QStringLiteral("no candidate could continue the stream"));
        failStartedStream(*m_cutError);
        return;
    }
    const protocol::ApiError error = errorWording().finalError();
    // The ladder's lower rungs answer for providers that failed, never for a request that
    // every provider would refuse.
    if (m_failures.lastErrorClass != ErrorClass::RequestRejected && operationHasTextAnswer()) {
        const config::DegradationConfig &degradation = m_config->resilience.degradation;
        if (m_context.fallbackLevel >= resilience::kCannedAnswer && !degradation.canned.isEmpty()) {
            const config::CannedAnswer *canned = resilience::matchCannedAnswer(
                degradation, m_request.model, resilience::lastUserMessageText(m_body));
            if (canned) {
                answerDegraded(resilience::kCannedAnswer, canned->reply, error.message);
                return;
            }
        }
        if (m_context.fallbackLevel >= resilience::kFailSafeMessage &&
            !degradation.failSafe.isEmpty()) {
            answerDegraded(resilience::kFailSafeMessage, degradation.failSafe, error.message);
            return;
        }
    }
    m_finishing = true;
    m_client->sendError(error, responseHeaders(m_failures.lastErrorProvider, 0));
    complete(error.status, error.code.isEmpty() ? error.type : error.code);
}

void RequestExecution::answerDegraded(int level, const QString &content, const QString &reason)
{
    resilience::SyntheticAnswer answer;
    answer.id = "chatcmpl-" + m_trace.trace().requestId;
    answer.model = m_request.model;
    answer.createdSecs = QDateTime::currentSecsSinceEpoch();
    answer.content = content;
    answer.level = level;
    answer.reason = reason;
    const bool canned = level == resilience::kCannedAnswer;
    m_degradedLevel = level;
    // The ladder answered, not the provider tried last: no provider's name on a 200.
    m_trace.trace().provider.clear();
    m_trace.trace().upstreamModel.clear();
    m_trace.pointEvent(QStringLiteral("degraded"),
                       QStringLiteral("level %1, %2 instead of: %3")
                           .arg(level)
                           .arg(canned ? QStringLiteral("a canned answer")
                                       : QStringLiteral("the fail-safe message"),
                                reason));
    const HeaderList headers = responseHeaders({}, level);
    m_finishing = true;
    if (m_request.stream) {
        m_client->beginStream(headers, Dialect::Chat);
        QList<upstream::SseEvent> events;
        for (const QByteArray &data : answer.streamEvents()) {
            upstream::SseEvent event;
            event.data = data;
            events.append(std::move(event));
        }
        traceStreamedEvents(m_trace, events);
        m_client->sendStreamEvents(events, false);
        m_client->endStream();
    } else {
        m_client->sendAnswer(200, headers, answer.completion(), Dialect::Chat);
    }
    complete(200, canned ? QStringLiteral("canned_answer") : QStringLiteral("fail_safe_answer"));
}

void RequestExecution::complete(int status, const QString &outcomeCode)
{
    if (m_done)
        return;
    m_done = true;
    if (m_attempt)
        m_attempt->stop();
    m_wait.disarm();
    endAttempt(CallOutcome::Cancelled, QStringLiteral("ended with the request"));
    releaseRetrySlot();
    if (m_countedInRetryBudget) {
        m_countedInRetryBudget = false;
        m_services.retryBudget.requestFinished();
    }
    if (const int pauses = m_attempt ? m_attempt->pauseCount() : 0; pauses > 0) {
        m_trace.pointEvent(
            QStringLiteral("client back-pressure"),
            QStringLiteral("provider paused %1 time(s) for a slow client").arg(pauses));
    }
    m_trace.pointEvent(QStringLiteral("completion"), outcomeCode);
    telemetry::Trace &record = m_trace.trace();
    record.attempts = m_plan.attempts();
    record.degradedLevel = m_degradedLevel >= 0        ? m_degradedLevel
                           : m_attempt && status < 400 ? m_attempt->candidate().degradationLevel
                                                       : 0;
    if (m_failures.lastErrorClass != ErrorClass::None)
        record.errorClass = resilience::errorClassName(m_failures.lastErrorClass);
    countTokens(record);
    m_services.recorder.endLive(&m_trace);
    // The request's log line is written from this record by its sink (telemetry/request_log).
    m_services.recorder.record(m_trace.finish(status, outcomeCode));
    if (m_services.finished)
        m_services.finished(this);
    resumeRun(); // a run waiting for this attempt or a wait sees the request done and ends
}

FinalErrorWording RequestExecution::errorWording() const
{
    return FinalErrorWording(m_failures, m_plan, m_decision, m_services.health, *m_config,
                             m_context, m_request.model, m_deadline.isClientBudget);
}

} // namespace switchyard::execution
