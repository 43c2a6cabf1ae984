#include "execution/chat_execution.h"

#include "health/health_registry.h"
#include "logging/log_line.h"
#include "protocol/gateway_headers.h"
#include "resilience/admission.h"
#include "resilience/degradation.h"
#include "telemetry/request_recorder.h"
#include "upstream/adapters/provider_endpoint.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QStringBuilder>

Q_LOGGING_CATEGORY(lcExecution, "switchyard.execution", QtInfoMsg)

namespace switchyard::execution {

using namespace Qt::StringLiterals;
using health::CallOutcome;
using resilience::ErrorClass;
using resilience::RetryAction;
using resilience::RetryStop;
using std::chrono::milliseconds;
using upstream::TransportError;

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

// Back-pressure watermarks for a streamed answer waiting in the client socket's buffer.
constexpr qint64 kPauseUpstreamAboveBytes = 1024 * 1024;
constexpr qint64 kResumeUpstreamBelowBytes = 256 * 1024;

// After [DONE] the answer is whole; the provider's end of the response normally follows in the
// same read. If it does not, the client is not kept waiting longer than this for it.
constexpr milliseconds kEndAfterDoneGrace{500};

// An upstream answer larger than this is a fault, not something to hold in memory.
constexpr qsizetype kMaxUpstreamAnswerBytes = 64 * 1024 * 1024;

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

// An attempt's outcome in a trace: a closed set, as exporters and filters read it.
QString callOutcomeName(CallOutcome outcome)
{
    switch (outcome) {
    case CallOutcome::Success:
        return QStringLiteral("success");
    case CallOutcome::CallFailure:
        return QStringLiteral("failure");
    case CallOutcome::Unusable:
        return QStringLiteral("unusable");
    case CallOutcome::RequestFault:
        return QStringLiteral("request_fault");
    case CallOutcome::Cancelled:
        return QStringLiteral("cancelled");
    case CallOutcome::RateLimited:
        return QStringLiteral("rate_limited");
    }
    return {};
}

// The finish reason of a chat answer or of the last chunk that carries one: a plain search, since
// this runs on every completed answer and needs only the one string.
// The last `"key":"value"` string in `json`: OpenAI's finish_reason, or the stop_reason of an
// Anthropic answer passed through (kept in Anthropic's words, as the provider gave it).
QString finishReasonIn(QByteArrayView json, QByteArrayView key = "\"finish_reason\":")
{
    const qsizetype at = json.lastIndexOf(key);
    if (at < 0)
        return {};
    qsizetype from = at + key.size();
    while (from < json.size() && json[from] == ' ')
        ++from;
    if (from >= json.size() || json[from] != '"')
        return {}; // null
    const qsizetype end = json.indexOf('"', from + 1);
    if (end < 0 || end - from - 1 > 64)
        return {};
    return QString::fromLatin1(json.sliced(from + 1, end - from - 1));
}

QString roleName(routing::CandidateRole role)
{
    switch (role) {
    case routing::CandidateRole::Primary:
        return QStringLiteral("primary");
    case routing::CandidateRole::CrossTier:
        return QStringLiteral("cross-tier");
    case routing::CandidateRole::FallbackChain:
        return QStringLiteral("fallback chain");
    case routing::CandidateRole::LighterModel:
        return QStringLiteral("lighter model");
    }
    return {};
}

} // namespace

ChatExecution::ChatExecution(ExecutionServices services,
                             std::shared_ptr<const config::Config> config,
                             protocol::ChatRequest request, QByteArray body,
                             routing::RequestContext context, routing::RouteDecision decision,
                             telemetry::TraceBuilder trace, std::unique_ptr<ClientChannel> client,
                             QObject *parent)
    : QObject(parent), m_services(std::move(services)), m_config(std::move(config)),
      m_request(std::move(request)), m_body(std::move(body)), m_bodyModel(m_request.model),
      m_context(std::move(context)), m_decision(std::move(decision)), m_trace(std::move(trace)),
      m_client(std::move(client)),
      m_plan(m_decision.candidates, m_context.fallbackLevel,
             [config = m_config](const QString &tier) {
                 const config::TierConfig *contract = config->routing.tier(tier);
                 return contract ? contract->retries : -1;
             }),
      m_wait(m_services.scheduler, [this] { resumeRun(); }),
      m_watchDeadline(m_services.scheduler, [this] { onWatchDue(); })
{}

ChatExecution::~ChatExecution()
{
    // Deleted while it runs (the engine shutting down): stop the call, give back what the
    // attempt holds, and let the coroutine reach its end so its frame is freed.
    m_call.reset();
    m_services.recorder.endLive(&m_trace);
    if (m_phase != Phase::Done) {
        m_phase = Phase::Done;
        endAttempt(CallOutcome::Cancelled, QStringLiteral("abandoned at shutdown"));
        releaseRetrySlot();
        if (m_countedInRetryBudget)
            m_services.retryBudget.requestFinished();
    }
    resumeRun();
}

const routing::RouteCandidate &ChatExecution::candidate() const
{
    return m_plan.candidates()[m_attempt.candidate];
}

QString ChatExecution::providerId() const
{
    return candidate().providerId;
}

HeaderList ChatExecution::responseHeaders(const QString &provider, int degradedLevel) const
{
    const telemetry::Trace &trace = m_trace.trace();
    HeaderList headers =
        protocol::identityHeaders(trace.requestId, trace.traceId,
                                  provider.isEmpty() ? QByteArray("none") : provider.toUtf8());
    headers.append({"x-switchyard-route", m_decision.rule.isEmpty() ? QByteArray("default")
                                                                    : headerSafe(m_decision.rule)});
    headers.append({"x-switchyard-tier",
                    m_decision.tier.isEmpty() ? QByteArray("none") : headerSafe(m_decision.tier)});
    headers.append({"x-switchyard-attempts", QByteArray::number(m_plan.attempts())});
    headers.append({"x-switchyard-degraded", QByteArray::number(degradedLevel)});
    return headers;
}

double ChatExecution::msSince(TimePoint start) const
{
    return std::chrono::duration<double, std::milli>(now() - start).count();
}

std::optional<milliseconds> ChatExecution::remainingBudget() const
{
    if (!m_deadline)
        return std::nullopt;
    return std::chrono::floor<milliseconds>(*m_deadline - now());
}

// ---- the run ------------------------------------------------------------------------------------

void ChatExecution::setOperation(protocol::Operation operation, QByteArray operationBody,
                                 bool nativeOnly)
{
    m_operation = operation;
    m_operationBody = std::move(operationBody);
    m_nativeOnly = nativeOnly;
}

void ChatExecution::start()
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
    m_trace.explainChoice(m_decision.explanation());
    // The trace has the explanation now. Only a decision without candidates reads its steps
    // again, for the refusal; a held stream keeps no second copy of them.
    if (!m_decision.candidates.isEmpty())
        m_decision.steps = {};
    m_services.retryBudget.requestStarted();
    m_countedInRetryBudget = true;

    // The whole request's deadline, across attempts and waits: the client's budget, and for a
    // non-streamed request the total timeout as well. A stream has no total cap of its own.
    const TimePoint startedAt = now();
    const milliseconds total = m_config->timeouts.total;
    std::optional<milliseconds> budget = m_context.timeoutBudget;
    m_deadlineIsClientBudget = budget.has_value();
    if (!m_request.stream && (!budget || *budget > total)) {
        budget = total;
        m_deadlineIsClientBudget = false;
    }
    if (budget)
        m_deadline = startedAt + *budget;

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

void ChatExecution::resumeRun()
{
    if (std::coroutine_handle<> waiting = std::exchange(m_suspended, {}))
        waiting.resume();
}

QCoro::Task<> ChatExecution::run()
{
    const config::RetryConfig &retries = m_config->resilience.retries;
    while (m_phase != Phase::Done) {
        bool failover = false;
        int next = takeNextCandidate(&failover);
        if (next < 0) {
            // Nothing can take the request now. One endpoint cooling down after a 429 may be
            // worth waiting for, once.
            const int cooling = soonestCoolingCandidate();
            if (cooling < 0) {
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
            if (m_phase == Phase::Done)
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
        if (m_phase == Phase::Done)
            co_return; // answered, or the client is gone
        const AttemptFailure failure = std::move(*std::exchange(m_failure, nullptr));

        resilience::RetryDecision decision;
        if (failure.blamedOnGateway) {
            decision.reason = QStringLiteral("the gateway itself is overloaded: another attempt "
                                             "would add to the load");
        } else if (failure.cutByBudget) {
            decision.reason = QStringLiteral("the request's time budget ran out");
            decision.stop = RetryStop::TimeBudget;
        } else {
            const resilience::RetryInput input{failure.errorClass, false, m_plan.attempts(),
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

int ChatExecution::takeNextCandidate(bool *tookFailoverSlot)
{
    const resilience::AttemptPlan::Gate gate =
        [this, tookFailoverSlot](const routing::RouteCandidate &next,
                                 bool failover) -> std::optional<resilience::SkipReason> {
        if (const auto mismatch = operationMismatch(next))
            return mismatch;
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

int ChatExecution::soonestCoolingCandidate() const
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
ChatExecution::operationMismatch(const routing::RouteCandidate &next)
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

bool ChatExecution::tierIsDegraded() const
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

bool ChatExecution::startAttempt(int candidateIndex, bool failover)
{
    const routing::RouteCandidate &chosen = m_plan.candidates()[candidateIndex];
    const int earlierInTier = m_plan.attemptsInTier(chosen.tier);
    m_plan.recordAttempt(candidateIndex);
    m_attempt = Attempt{};
    m_attempt.candidate = candidateIndex;
    m_attempt.number = m_plan.attempts();
    m_attempt.holdsFailoverSlot = failover;
    m_phase = Phase::WaitingForAnswer;
    m_sawDone = false;

    // The request's own snapshot defines a configured provider (an Apply since changes nothing
    // for it, and the execution keeps the snapshot alive); an agent registered at runtime is
    // defined by the registry alone, whose list may grow while the attempt runs, so the attempt
    // keeps a copy of an agent's definition. The adapter refers to it until the attempt ends.
    m_attempt.provider = m_config->provider(chosen.providerId);
    if (!m_attempt.provider) {
        m_attempt.agentDefinition = std::make_unique<config::ProviderConfig>(
            m_services.health.providerConfig(chosen.endpoint));
        m_attempt.provider = m_attempt.agentDefinition.get();
    }
    const config::ProviderConfig &provider = *m_attempt.provider;
    m_trace.trace().provider = provider.id;
    m_trace.trace().upstreamModel = chosen.upstreamModel;
    const QByteArray attemptSpanId = telemetry::newSpanId();

    m_attempt.adapter = upstream::adapters::adapterFor(provider);
    // An operation goes to a provider that speaks it as it is; the Responses API and Anthropic's
    // Messages reach one that does not as chat, and come back through the client's channel
    // translated. Each attempt decides by its own provider.
    const bool passThrough =
        m_operation != protocol::Operation::Chat && provider.speaksNatively(m_operation);
    m_attempt.dialect = passThrough ? Dialect::Native : Dialect::Chat;
    upstream::adapters::AdapterRequest adapterRequest{
        passThrough ? m_operation : protocol::Operation::Chat,
        passThrough ? m_operationBody : m_body,
        passThrough ? m_request.model : m_bodyModel,
        chosen.upstreamModel,
        m_request.stream,
        m_trace.trace().requestId,
        QDateTime::currentSecsSinceEpoch(),
        {{"x-request-id", m_trace.trace().requestId},
         // The provider's spans are children of this attempt's.
         {"traceparent", telemetry::formatTraceparent(m_trace.trace().traceId, attemptSpanId)},
         // The loop guard: a Switchyard behind this one sees one hop more.
         {"x-switchyard-depth", QByteArray::number(m_context.depth + 1)}},
        passThrough ? clientProtocolHeaders(m_context) : upstream::HeaderList()};
    if (provider.forwardClientAuthorization)
        adapterRequest.extraHeaders.append(clientCredentials(provider, m_context));
    auto prepared = m_attempt.adapter->buildRequest(adapterRequest);
    if (const protocol::ApiError *refusal = std::get_if<protocol::ApiError>(&prepared)) {
        refuseForProvider(*refusal);
        return false;
    }
    upstream::adapters::PreparedRequest &built =
        std::get<upstream::adapters::PreparedRequest>(prepared);
    if (!passThrough && built.bodyIsOpenAiBodyRenamed) {
        // The renamed body is kept instead of the client's: one copy of the conversation while
        // the call is in flight, not two. A later attempt renames it again (only the model
        // differs), and every other kind of provider reads it for everything but the model.
        m_body = built.request.body;
        m_bodyModel = chosen.upstreamModel;
    }
    upstream::UpstreamRequest call = std::move(built.request);
    m_attempt.shape = std::move(built.shape);
    const bool upstreamStreams = m_attempt.shape.upstreamStreams;
    call.answerStreams = upstreamStreams;

    // The tier's contract sets the time to an answer (a streamed call's first token, a plain
    // one's whole answer); each further attempt in the same tier waits longer.
    const config::TierConfig *tier = m_config->routing.tier(chosen.tier);
    const milliseconds base = tier && tier->timeout.count() > 0 ? tier->timeout
                              : upstreamStreams                 ? m_config->timeouts.firstToken
                                                                : m_config->timeouts.total;
    m_attempt.answerLimit = resilience::stretchedTimeout(
        base, m_config->resilience.retries.timeoutGradient, earlierInTier);

    // The connect timeout is the transport's: only it knows when the connection stands. Cut
    // short by the client's budget that is no fault of the provider's; by the total timeout of
    // a non-streamed request it is the configured limit, and counts. libcurl reads a zero
    // timeout as "its default": the smallest real limit is 1 ms.
    const std::optional<milliseconds> remaining = remainingBudget();
    call.connectTimeout = m_config->timeouts.connect;
    if (remaining && *remaining < call.connectTimeout) {
        call.connectTimeout = std::max(*remaining, milliseconds(1));
        m_attempt.connectCutByBudget = m_deadlineIsClientBudget;
    }
    call.totalTimeout = milliseconds(0); // the watch below is the answer's limit
    watch(upstreamStreams ? Watch::FirstToken : Watch::Answer, m_attempt.answerLimit);

    m_services.health.callStarted(chosen.endpoint);
    m_attempt.open = true;
    m_attempt.span = m_trace.openSpan(
        QStringLiteral("upstream attempt"),
        // Concatenated rather than QString::arg, which parses its pattern on every call: the
        // trace details written for every request were 4 % of the engine's instructions.
        provider.id % ", attempt "_L1 % QString::number(m_attempt.number) % " ("_L1 %
            roleName(chosen.role) %
            (chosen.tier.isEmpty() ? QString() : ", tier "_L1 + chosen.tier) % "): "_L1 %
            upstream::adapters::displayUrl(provider, call.url),
        telemetry::SpanKind::Attempt);
    telemetry::Span &span = m_trace.spanAt(m_attempt.span);
    span.spanId = attemptSpanId;
    span.attempt = m_attempt.number;
    span.provider = provider.id;
    span.upstreamModel = chosen.upstreamModel;
    m_attempt.startedAt = now();
    m_call = m_services.transport.start(call, this);
    return true;
}

void ChatExecution::refuseForProvider(const protocol::ApiError &refusal)
{
    // The request asks for something this provider's protocol cannot express: the client's
    // fault, so nothing is sent and the endpoint's health is untouched. A half-open breaker's
    // probe admission is handed back by a cancelled call, which counts nothing.
    const routing::RouteCandidate &chosen = candidate();
    m_services.health.callStarted(chosen.endpoint);
    m_services.health.callFinished(chosen.endpoint, CallOutcome::Cancelled, 0.0, -1.0, {});
    if (m_attempt.holdsFailoverSlot) {
        m_attempt.holdsFailoverSlot = false;
        m_services.health.failoverFinished(chosen.endpoint);
    }
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

// ---- the attempt: an observer of its upstream call ---------------------------------------------

void ChatExecution::onResponseHead(const upstream::UpstreamResponseHead &head)
{
    m_attempt.head = head;
    if (m_attempt.span >= 0)
        m_trace.spanAt(m_attempt.span).httpStatus = head.status;
    m_trace.pointEvent(QStringLiteral("response head"), u"HTTP "_s + QString::number(head.status));
    m_attempt.relayingEvents = m_attempt.shape.upstreamStreams && head.status >= 200 &&
                               head.status < 300 &&
                               head.header("content-type").startsWith("text/event-stream");
    if (m_attempt.relayingEvents)
        m_attempt.stream = m_attempt.adapter->startStream(m_attempt.shape);
}

void ChatExecution::onResponseBody(QByteArrayView bytes)
{
    if (m_phase == Phase::Done)
        return;
    m_attempt.bytesReceived += bytes.size();
    if (!m_attempt.relayingEvents) {
        m_attempt.answer.append(bytes);
        if (m_attempt.answer.size() > kMaxUpstreamAnswerBytes) {
            attemptFailed({ErrorClass::UnusableAnswer,
                           upstreamError(502, QStringLiteral("upstream_answer_too_large"),
                                         QStringLiteral("Provider `%1` sent an answer larger "
                                                        "than %2 bytes.")
                                             .arg(providerId())
                                             .arg(kMaxUpstreamAnswerBytes)),
                           QStringLiteral("answer too large")});
        }
        return;
    }

    QList<upstream::SseEvent> events;
    if (!m_attempt.sse.feed(bytes, events)) {
        attemptFailed({ErrorClass::UnusableAnswer,
                       upstreamError(502, QStringLiteral("invalid_upstream_response"),
                                     QStringLiteral("Provider `%1` sent an event-stream line "
                                                    "longer than %2 bytes.")
                                         .arg(providerId())
                                         .arg(upstream::SseParser::kMaxLineBytes)),
                       QStringLiteral("event-stream line too long")});
        return;
    }
    const bool active = m_attempt.sse.takeActivity();
    if (events.isEmpty()) {
        if (active && m_phase == Phase::Streaming && !m_upstreamPaused)
            noteUpstreamActivity(); // keep-alive comments count as activity
        return;
    }

    // All events of one upstream read go out as one chunk: one write, one syscall.
    upstream::adapters::StreamOutput output;
    for (const upstream::SseEvent &event : events) {
        upstream::adapters::StreamOutput piece = m_attempt.stream->feed(event);
        output.events.append(std::move(piece.events));
        output.completed = piece.completed;
        if (piece.failure) {
            output.failure = std::move(piece.failure);
            break;
        }
        if (output.completed)
            break; // nothing may follow [DONE]
    }
    if (!relayStreamOutput(std::move(output)) || m_phase == Phase::WaitingForAnswer)
        return; // ended, or nothing for the client yet (a ping): the first-token watch goes on
    if (m_sawDone) {
        watch(Watch::EndAfterDone, std::min(kEndAfterDoneGrace, m_config->timeouts.idle));
    } else if (m_call && !m_upstreamPaused && m_client->pendingBytes() > kPauseUpstreamAboveBytes) {
        // The client reads slower than the provider writes. Stop reading the provider rather
        // than hold its whole answer in memory. The watch now is on the client: one that takes
        // nothing for an idle period is not coming back for the rest.
        m_upstreamPaused = true;
        ++m_pauseCount;
        watch(Watch::ClientStall, m_config->timeouts.idle);
        m_call->pauseReceiving();
    } else if (!m_upstreamPaused) {
        noteUpstreamActivity();
    }
}

void ChatExecution::traceStreamedEvents(const QList<upstream::SseEvent> &events)
{
    telemetry::Trace &record = m_trace.trace();
    if (record.timeToFirstByteMicros < 0)
        record.timeToFirstByteMicros = m_trace.elapsedMicros();
    for (const upstream::SseEvent &event : events) {
        m_trace.chunk(event.data.size());
        if (m_trace.watched())
            m_trace.appendLiveData(event.data);
        if (m_trace.keepsMoreResponseBody())
            m_trace.appendResponseBody("data: " + event.data + "\n\n");
    }
}

bool ChatExecution::relayStreamOutput(upstream::adapters::StreamOutput output)
{
    if (output.completed) {
        m_sawDone = true;
        m_attempt.answerCompleteMs = msSince(m_attempt.startedAt);
        noteUsage(m_attempt.stream->usage());
    }
    // The finish reason comes near the end, often a read before the end marker and sometimes
    // followed by a usage chunk with no choices: the batch is searched from its end for the
    // last event that has the key at all.
    const QByteArrayView reasonKey = finishReasonKey();
    for (auto event = output.events.crbegin(); event != output.events.crend(); ++event) {
        if (!event->data.contains(reasonKey))
            continue;
        if (QString reason = finishReasonIn(event->data, reasonKey); !reason.isEmpty())
            m_trace.trace().finishReason = std::move(reason);
        break;
    }
    if (!output.events.isEmpty()) {
        if (m_phase == Phase::WaitingForAnswer) {
            // The first byte goes to the client now: from here on this provider's answer is
            // the answer, and a failure ends the stream with an error event.
            m_phase = Phase::Streaming;
            // No other attempt can follow, so the client's request is not needed again. An
            // agent's request carries its whole conversation; held streams would otherwise
            // keep it, besides the provider's copy, for as long as they run.
            m_body = QByteArray();
            m_operationBody = QByteArray();
            // Nor are its headers (read for credentials at each attempt), or the provider's
            // (read for an error answer or a non-streamed one).
            m_context.headers = {};
            m_attempt.head.headers = {};
            m_attempt.timeToFirstTokenMs = msSince(m_attempt.startedAt);
            m_attempt.firstTokenWhileLate = loopIsLate();
            m_attempt.lagAtFirstTokenMs = m_services.loop.lagMs;
            m_trace.pointEvent(QStringLiteral("first byte"),
                               "first event after "_L1 %
                                   QString::number(m_attempt.timeToFirstTokenMs, 'f', 1) %
                                   " ms"_L1);
            m_client->beginStream(responseHeaders(providerId(), candidate().degradationLevel),
                                  m_attempt.dialect);
        }
        traceStreamedEvents(output.events);
        m_providerAnswered = true;
        for (const upstream::SseEvent &event : output.events)
            m_answerText.add(event.data);
        // After [DONE] only the end of the stream follows, normally in the same upstream read.
        m_client->sendStreamEvents(output.events, !m_sawDone && !output.failure);
        if (m_phase == Phase::Done)
            return false; // the write found the client gone
    }
    if (!output.failure)
        return true;
    // Before the first byte reached the client another provider may still answer instead.
    const upstream::adapters::StreamFailure &failure = *output.failure;
    const bool unusable = failure.kind == upstream::adapters::StreamFailure::Kind::Unusable;
    const ErrorClass errorClass =
        unusable ? ErrorClass::UnusableAnswer
                 : resilience::classify(TransportError::None, failure.error.status,
                                        resilience::TimeoutKind::None);
    attemptFailed({errorClass, failure.error,
                   unusable ? QStringLiteral("unusable stream event")
                            : QStringLiteral("error event in the stream")});
    return false;
}

void ChatExecution::onClientDrained()
{
    if (!m_upstreamPaused || m_phase == Phase::Done)
        return;
    if (m_client->pendingBytes() > kResumeUpstreamBelowBytes) {
        watch(Watch::ClientStall, m_config->timeouts.idle); // the client is slow, not stalled
        return;
    }
    m_upstreamPaused = false;
    watch(Watch::Idle, m_config->timeouts.idle);
    if (m_call)
        m_call->resumeReceiving();
}

void ChatExecution::onFinished(const upstream::UpstreamResult &result)
{
    stopWatching();
    if (m_phase == Phase::Done)
        return;
    m_call.reset(); // finished: nothing more arrives from it
    const QString provider = providerId();

    if (m_attempt.relayingEvents && !m_sawDone && result.error == TransportError::None) {
        // A clean end: a provider whose protocol has no end marker finishes its answer here.
        if (!relayStreamOutput(m_attempt.stream->finish()))
            return;
    }
    if (m_attempt.relayingEvents && m_sawDone) {
        // [DONE] arrived, so the answer is whole even if the provider's connection then broke
        // before the response's own end: the client gets a clean end, and the call counts.
        streamAnswerComplete();
        return;
    }
    if (result.error != TransportError::None) {
        const ErrorClass errorClass =
            resilience::classify(result.error, 0, resilience::TimeoutKind::None);
        const bool cutByBudget =
            result.error == TransportError::ConnectTimeout && m_attempt.connectCutByBudget;
        protocol::ApiError error;
        if (cutByBudget) {
            error = budgetCutError();
        } else if (m_phase == Phase::Streaming) {
            // Events already reached the client, which needs to know one thing: the answer it
            // was reading is incomplete. Same code as a stream that ended without [DONE].
            error = upstreamError(502, QStringLiteral("upstream_stream_interrupted"),
                                  QStringLiteral("Provider `%1` broke off the stream: %2; the "
                                                 "answer is incomplete.")
                                      .arg(provider, result.description));
        } else if (errorClass == ErrorClass::Timeout) {
            error = upstreamError(504, QStringLiteral("upstream_timeout"),
                                  QStringLiteral("Provider `%1` did not answer in time: %2.")
                                      .arg(provider, result.description));
        } else if (errorClass == ErrorClass::ConnectFailed) {
            error = upstreamError(502, QStringLiteral("upstream_unavailable"),
                                  QStringLiteral("Provider `%1` could not be reached: %2.")
                                      .arg(provider, result.description));
        } else {
            error = upstreamError(502, QStringLiteral("upstream_connection_lost"),
                                  QStringLiteral("Provider `%1` broke off the answer: %2.")
                                      .arg(provider, result.description));
        }
        AttemptFailure failure(errorClass, error, result.description, cutByBudget);
        if (result.error == TransportError::ConnectTimeout && !cutByBudget)
            failure = blameTimeout(std::move(failure));
        else if (result.error == TransportError::LocalResources)
            failure = blameLocalResources(std::move(failure));
        attemptFailed(std::move(failure));
        return;
    }

    if (m_attempt.relayingEvents) {
        attemptFailed(
            {ErrorClass::ConnectionLost,
             upstreamError(502, QStringLiteral("upstream_stream_interrupted"),
                           QStringLiteral("Provider `%1` ended the stream before %2; "
                                          "the answer is incomplete.")
                               .arg(provider, m_attempt.adapter->streamEnd(m_attempt.shape))),
             QStringLiteral("stream ended before its end event")});
        return;
    }
    if (m_attempt.head.status >= 200 && m_attempt.head.status < 300)
        relayWholeAnswer();
    else
        relayUpstreamError();
}

void ChatExecution::relayWholeAnswer()
{
    const QString provider = providerId();
    // An answer arrived but cannot be used: counted as quality, never as a call failure.
    if (m_attempt.shape.upstreamStreams) {
        attemptFailed({ErrorClass::UnusableAnswer,
                       upstreamError(502, QStringLiteral("invalid_upstream_response"),
                                     QStringLiteral("Provider `%1` answered a streamed request "
                                                    "without an event stream.")
                                         .arg(provider)),
                       QStringLiteral("no event stream")});
        return;
    }
    upstream::adapters::AnswerTranslation translated =
        m_attempt.adapter->translateAnswer(m_attempt.shape, m_attempt.answer);
    if (translated.kind == upstream::adapters::AnswerTranslation::Kind::Unusable) {
        const QString description = translated.error.message;
        attemptFailed({ErrorClass::UnusableAnswer, std::move(translated.error), description});
        return;
    }
    noteUsage(translated.usage);
    m_providerAnswered = true;
    if (translated.usage.completionTokens < 0)
        m_answerText.add(translated.openAiJson); // only an estimate needs the answer's text
    m_trace.trace().finishReason = finishReasonIn(translated.openAiJson, finishReasonKey());
    m_trace.appendResponseBody(translated.openAiJson);
    m_finishing = true;
    const HeaderList headers = responseHeaders(provider, candidate().degradationLevel);
    if (m_attempt.shape.clientStreams) {
        // The provider cannot stream: its whole answer is replayed as the stream asked for.
        m_client->beginStream(headers, Dialect::Chat);
        const QList<upstream::SseEvent> events =
            upstream::adapters::completionAsChunks(m_attempt.shape, translated.openAiJson);
        traceStreamedEvents(events);
        m_client->sendStreamEvents(events, false);
        m_client->endStream();
    } else {
        m_client->sendAnswer(m_attempt.head.status, headers, translated.openAiJson,
                             m_attempt.dialect);
    }
    endAttempt(CallOutcome::Success, QStringLiteral("ok"));
    complete(m_attempt.head.status, QStringLiteral("ok"));
}

void ChatExecution::noteUsage(const upstream::adapters::Usage &usage)
{
    if (!usage.isKnown())
        return;
    telemetry::RequestRecord &record = m_trace.trace();
    record.inputTokens = usage.promptTokens;
    record.outputTokens = usage.completionTokens;
    // The cache's counts are parts of the prompt: a provider that says it cached more than the
    // prompt held is held to the prompt, and without a prompt count (which countTokens then
    // estimates) they stay unknown rather than guessed.
    const qint64 prompt = usage.promptTokens;
    record.cacheReadTokens = prompt < 0 ? -1 : std::min(usage.cachedPromptTokens, prompt);
    record.cacheWriteTokens = prompt < 0
                                  ? -1
                                  : std::min(usage.cacheWritePromptTokens,
                                             prompt - std::max<qint64>(record.cacheReadTokens, 0));
    QString detail = QString::number(std::max<qint64>(prompt, 0)) + u" prompt + "_s +
                     QString::number(std::max<qint64>(usage.completionTokens, 0)) +
                     u" completion tokens"_s;
    if (record.cacheReadTokens > 0 || record.cacheWriteTokens > 0)
        detail += u" (prompt cache: %1 read, %2 written)"_s
                      .arg(std::max<qint64>(record.cacheReadTokens, 0))
                      .arg(std::max<qint64>(record.cacheWriteTokens, 0));
    m_trace.pointEvent(QStringLiteral("usage"), detail);
}

void ChatExecution::countTokens(telemetry::RequestRecord &record) const
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

void ChatExecution::relayUpstreamError()
{
    const int status = m_attempt.head.status;
    // Classified on the provider's own status (Anthropic's 529 is a server error), whatever
    // status the client is shown.
    const ErrorClass errorClass =
        resilience::classify(TransportError::None, status, resilience::TimeoutKind::None);
    protocol::ApiError error =
        m_attempt.adapter->translateError(status, m_attempt.head.headers, m_attempt.answer);
    std::optional<milliseconds> retryAfter;
    if (errorClass == ErrorClass::RateLimited) {
        retryAfter = resilience::retryAfterDelay(m_attempt.head.header("retry-after-ms"),
                                                 m_attempt.head.header("retry-after"),
                                                 QDateTime::currentDateTimeUtc());
    }
    attemptFailed(
        {errorClass, std::move(error), QStringLiteral("HTTP %1").arg(status), false, retryAfter});
}

// ---- deadlines ----------------------------------------------------------------------------------

void ChatExecution::watch(Watch what, milliseconds limit)
{
    watchUntil(what, now() + limit);
}

void ChatExecution::watchUntil(Watch what, TimePoint end)
{
    m_watch = what;
    // Every watch is cut short by the request's deadline.
    m_watchEndsAtDeadline = m_deadline && *m_deadline <= end;
    m_watchDeadline.arm(m_watchEndsAtDeadline ? *m_deadline : end);
}

void ChatExecution::noteUpstreamActivity()
{
    // Every read of a stream would move the idle deadline; instead the time of the last one is
    // kept, and the deadline, when it comes, checks whether it really is due.
    m_idleFrom = now();
    if (m_watch != Watch::Idle)
        watch(Watch::Idle, m_config->timeouts.idle);
}

void ChatExecution::stopWatching()
{
    m_watch = Watch::Nothing;
    m_watchDeadline.disarm();
}

void ChatExecution::onWatchDue()
{
    if (m_phase == Phase::Done)
        return;
    if (m_watch == Watch::Idle && !m_watchEndsAtDeadline) {
        const TimePoint idleEnd = m_idleFrom + m_config->timeouts.idle;
        if (now() < idleEnd) {
            watchUntil(Watch::Idle, idleEnd); // data arrived since the watch was set
            return;
        }
    }
    const Watch watched = std::exchange(m_watch, Watch::Nothing);
    if (m_sawDone) {
        // The answer is whole; only the provider's end of the response never came. Nothing may
        // follow [DONE], least of all an error about an answer that is complete.
        m_call.reset();
        streamAnswerComplete();
        return;
    }
    if (m_phase == Phase::Streaming && watchCutByBudget()) {
        // The client's time budget ran out while its answer streamed: it learns so in the
        // stream. The provider was not slow by its own contract: not its failure.
        m_call.reset();
        m_failures.budgetRanOut = true;
        const protocol::ApiError error = errorWording().budgetError();
        endAttempt(CallOutcome::Cancelled, QStringLiteral("time budget ran out mid-stream"));
        m_finishing = true;
        m_client->failStream(error);
        complete(error.status, error.code);
        return;
    }
    if (watched == Watch::ClientStall) {
        // The client has taken nothing for a whole idle period while its stream waits: it
        // holds a provider slot and will not free it. Let both go.
        m_call.reset();
        m_finishing = true;
        m_client->abort();
        endAttempt(CallOutcome::Cancelled, QStringLiteral("client stalled"));
        complete(499, QStringLiteral("client_stalled"));
        return;
    }
    const bool connecting = m_call && !m_call->requestSent();
    m_call.reset(); // stop the upstream request now
    if (watchCutByBudget()) {
        attemptFailed(
            {ErrorClass::Timeout, budgetCutError(), QStringLiteral("time budget ran out"), true});
        return;
    }
    if (watched == Watch::Answer) {
        // The transport owns the connect timeout but the answer's limit can come first: still
        // connecting then, it is a connect timeout all the same.
        const QString what = connecting
                                 ? QStringLiteral("connect timed out (no connection within %1)")
                                       .arg(millisecondsText(m_attempt.answerLimit))
                                 : QStringLiteral("timed out (no answer within %1)")
                                       .arg(millisecondsText(m_attempt.answerLimit));
        attemptFailed(
            blameTimeout({ErrorClass::Timeout,
                          upstreamError(504, QStringLiteral("upstream_timeout"),
                                        QStringLiteral("Provider `%1` did not answer in time: %2.")
                                            .arg(providerId(), what)),
                          what}));
        return;
    }
    const QString what = watched == Watch::FirstToken
                             ? QStringLiteral("no first token within %1")
                                   .arg(millisecondsText(m_attempt.answerLimit))
                             : QStringLiteral("no data for %1 between chunks")
                                   .arg(millisecondsText(m_config->timeouts.idle));
    attemptFailed(blameTimeout(
        {ErrorClass::Timeout,
         upstreamError(504, QStringLiteral("upstream_timeout"),
                       QStringLiteral("Provider `%1` timed out: %2.").arg(providerId(), what)),
         what}));
}

void ChatExecution::onClientGone()
{
    // While an ending path writes the final answer (or drops a stalled client), a disconnect it
    // causes must not replace the outcome that path records.
    if (m_phase == Phase::Done || m_finishing)
        return;
    m_call.reset();
    endAttempt(CallOutcome::Cancelled, QStringLiteral("client disconnected"));
    complete(499, QStringLiteral("client_disconnected"));
}

// ---- endings ------------------------------------------------------------------------------------

void ChatExecution::attemptFailed(AttemptFailure failure)
{
    m_call.reset();
    stopWatching();
    const QString provider = providerId();
    // Whatever the provider said goes on to the client, the trace and the log: never with the
    // credentials it was called with in it.
    // The definition the call was made with: an Apply since may have changed the registry's.
    failure.error.message =
        upstream::adapters::withoutSecrets(*m_attempt.provider, std::move(failure.error.message));
    m_attempt.errorClass = failure.errorClass;
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
            .add("attempt"_L1, m_attempt.number)
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
        m_services.health.coolDown(candidate().endpoint, coolDown);
        m_failures.coolingCandidates.append(m_attempt.candidate);
        m_trace.pointEvent(QStringLiteral("cool-down"),
                           QStringLiteral("%1 for %2").arg(provider, millisecondsText(coolDown)));
    }
    if (m_client->answerStarted()) {
        // The status line is gone; a second provider would repeat or contradict what the client
        // already has. The stream ends with an error event instead.
        m_finishing = true;
        // The inspector's live text ends as the client's stream did: with this error.
        if (m_trace.watched() || m_trace.limits().keepBodies) {
            const QByteArray errorJson = failure.error.toJson();
            m_trace.appendLiveData(errorJson);
            m_trace.appendResponseBody("data: " + errorJson + "\n\n");
        }
        m_client->failStream(failure.error);
        complete(failure.error.status, failure.error.code);
        return;
    }
    m_failures.lastError = std::make_unique<protocol::ApiError>(failure.error);
    m_failure = std::make_unique<AttemptFailure>(std::move(failure));
    resumeRun();
}

bool ChatExecution::loopIsLate() const
{
    return m_services.loop.lagMs >= double(m_config->resilience.admission.overloadLag.count());
}

ChatExecution::AttemptFailure ChatExecution::blameTimeout(AttemptFailure failure)
{
    const double lagMs = m_services.loop.lagMs;
    const auto threshold = m_config->resilience.admission.overloadLag;
    if (!loopIsLate())
        return failure;
    const QString traceDetail = QStringLiteral("%1 while the engine loop ran %2 ms late "
                                               "(admission.overload_lag %3): the gateway's, not "
                                               "%4's")
                                    .arg(failure.description)
                                    .arg(lagMs, 0, 'f', 0)
                                    .arg(millisecondsText(threshold), providerId());
    const QString message =
        QStringLiteral("Switchyard is overloaded: its engine ran %1 ms behind, so it could not "
                       "tell whether provider `%2` was slow (%3). Retry shortly.")
            .arg(lagMs, 0, 'f', 0)
            .arg(providerId(), failure.description);
    return blameGateway(std::move(failure), traceDetail, message);
}

ChatExecution::AttemptFailure ChatExecution::blameLocalResources(AttemptFailure failure)
{
    const QString traceDetail =
        QStringLiteral("%1 for a connection to %2: the gateway's own limit, not %2's")
            .arg(failure.description, providerId());
    const QString message =
        QStringLiteral("Switchyard is overloaded: it could not open a connection to provider "
                       "`%1` (%2). Retry shortly.")
            .arg(providerId(), failure.description);
    return blameGateway(std::move(failure), traceDetail, message);
}

ChatExecution::AttemptFailure ChatExecution::blameGateway(AttemptFailure failure,
                                                          const QString &traceDetail,
                                                          const QString &message)
{
    m_trace.pointEvent(QStringLiteral("gateway overloaded"), traceDetail);
    protocol::ApiError error = protocol::ApiError::serviceUnavailable(message);
    error.code = QStringLiteral("gateway_overloaded");
    error.retryAfter = retryAfterSeconds(kRetryAfterNoEndpoint);
    failure.error = std::move(error);
    failure.blamedOnGateway = true;
    return failure;
}

void ChatExecution::endAttempt(CallOutcome outcome, const QString &detail)
{
    if (!m_attempt.open)
        return;
    m_attempt.open = false;
    const routing::RouteCandidate &ended = candidate();
    // A stream's latency ends at [DONE]: waiting for the provider's end of the response after
    // it is not the provider answering.
    const double latencyMs =
        m_attempt.answerCompleteMs >= 0 ? m_attempt.answerCompleteMs : msSince(m_attempt.startedAt);
    m_trace.closeSpan(m_attempt.span, ended.providerId % ", attempt "_L1 %
                                          QString::number(m_attempt.number) % ": "_L1 % detail);
    telemetry::Span &span = m_trace.spanAt(m_attempt.span);
    span.outcome = callOutcomeName(outcome);
    span.bytes = m_attempt.bytesReceived;
    if (m_attempt.errorClass != ErrorClass::None)
        span.errorClass = resilience::errorClassName(m_attempt.errorClass);
    // Times read while the engine ran late measure its backlog: they must not make the provider
    // look slow (the slow rule would open its breaker for the gateway's overload).
    const bool timedWhileLate =
        outcome == CallOutcome::Success && (m_attempt.firstTokenWhileLate || loopIsLate());
    if (timedWhileLate) {
        m_trace.pointEvent(QStringLiteral("gateway late"),
                           QStringLiteral("the engine loop ran %1 ms late (admission.overload_lag "
                                          "%2): this call's times are not held against %3")
                               .arg(m_attempt.firstTokenWhileLate ? m_attempt.lagAtFirstTokenMs
                                                                  : m_services.loop.lagMs,
                                    0, 'f', 0)
                               .arg(millisecondsText(m_config->resilience.admission.overloadLag),
                                    ended.providerId));
    }
    m_services.health.callFinished(ended.endpoint, outcome, latencyMs, m_attempt.timeToFirstTokenMs,
                                   outcome == CallOutcome::Success ? QString() : detail,
                                   timedWhileLate ? health::HealthRegistry::CallTiming::GatewayLate
                                                  : health::HealthRegistry::CallTiming::Measured);
    if (m_attempt.holdsFailoverSlot) {
        m_attempt.holdsFailoverSlot = false;
        m_services.health.failoverFinished(ended.endpoint);
    }
    releaseRetrySlot();
}

bool ChatExecution::takeRetrySlot()
{
    if (m_holdsRetrySlot)
        return true;
    if (!m_services.retryBudget.tryStartRetry()) {
        m_failures.retryStop = RetryStop::RetryBudgetSpent;
        m_failures.retryStopReason =
            QStringLiteral("the retry budget is spent: %1 retries in flight, %2 "
                           "allowed")
                .arg(m_services.retryBudget.retriesInFlight())
                .arg(m_services.retryBudget.allowedRetriesInFlight());
        m_trace.pointEvent(QStringLiteral("no retry"), m_failures.retryStopReason);
        return false;
    }
    m_holdsRetrySlot = true;
    return true;
}

void ChatExecution::releaseRetrySlot()
{
    if (!m_holdsRetrySlot)
        return;
    m_holdsRetrySlot = false;
    m_services.retryBudget.retryFinished();
}

void ChatExecution::finishWithoutAnswer()
{
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

void ChatExecution::answerDegraded(int level, const QString &content, const QString &reason)
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
        traceStreamedEvents(events);
        m_client->sendStreamEvents(events, false);
        m_client->endStream();
    } else {
        m_client->sendAnswer(200, headers, answer.completion(), Dialect::Chat);
    }
    complete(200, canned ? QStringLiteral("canned_answer") : QStringLiteral("fail_safe_answer"));
}

void ChatExecution::streamAnswerComplete()
{
    m_finishing = true;
    m_client->endStream();
    endAttempt(CallOutcome::Success, QStringLiteral("ok"));
    complete(200, QStringLiteral("ok"));
}

void ChatExecution::complete(int status, const QString &outcomeCode)
{
    if (m_phase == Phase::Done)
        return;
    m_phase = Phase::Done;
    stopWatching();
    m_wait.disarm();
    m_call.reset();
    endAttempt(CallOutcome::Cancelled, QStringLiteral("ended with the request"));
    releaseRetrySlot();
    if (m_countedInRetryBudget) {
        m_countedInRetryBudget = false;
        m_services.retryBudget.requestFinished();
    }
    if (m_pauseCount > 0) {
        m_trace.pointEvent(
            QStringLiteral("client back-pressure"),
            QStringLiteral("provider paused %1 time(s) for a slow client").arg(m_pauseCount));
    }
    m_trace.pointEvent(QStringLiteral("completion"), outcomeCode);
    telemetry::Trace &record = m_trace.trace();
    record.attempts = m_plan.attempts();
    record.degradedLevel = m_degradedLevel >= 0                       ? m_degradedLevel
                           : m_attempt.candidate >= 0 && status < 400 ? candidate().degradationLevel
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

// ---- the client's error when nothing answered ---------------------------------------------------

protocol::ApiError ChatExecution::budgetCutError() const
{
    return upstreamError(504, QStringLiteral("upstream_timeout"),
                         QStringLiteral("Provider `%1` had not answered when the request's time "
                                        "budget ran out.")
                             .arg(providerId()));
}

FinalErrorWording ChatExecution::errorWording() const
{
    return FinalErrorWording(m_failures, m_plan, m_decision, m_services.health, *m_config,
                             m_context, m_request.model, m_deadlineIsClientBudget);
}

} // namespace switchyard::execution
