#include "http/chat_exchange.h"

#include "health/health_registry.h"
#include "resilience/admission.h"
#include "resilience/degradation.h"
#include "telemetry/trace.h"

#include <QDateTime>
#include <QLoggingCategory>

Q_DECLARE_LOGGING_CATEGORY(lcGateway)

namespace switchyard::http {

using health::CallOutcome;
using resilience::ErrorClass;
using std::chrono::milliseconds;
using upstream::TransportError;

namespace {

// Back-pressure watermarks for a streamed answer waiting in the client socket's buffer.
constexpr qint64 kPauseUpstreamAboveBytes = 1024 * 1024;
constexpr qint64 kResumeUpstreamBelowBytes = 256 * 1024;

// After [DONE] the answer is whole; the provider's end of the response normally follows in the
// same read. If it does not, the client is not kept waiting longer than this for it.
constexpr milliseconds kEndAfterDoneGrace{500};

// An upstream answer larger than this is a fault, not something to hold in memory.
constexpr qsizetype kMaxUpstreamAnswerBytes = 64 * 1024 * 1024;

// How soon a client refused for want of an endpoint may usefully ask again.
constexpr auto kRetryAfterNoEndpoint = "1";

protocol::ApiError upstreamError(int status, const QString &code, const QString &message)
{
    return protocol::ApiError{status, message, QStringLiteral("upstream_error"), {}, code, {}};
}

QString millisecondsText(milliseconds duration)
{
    return QStringLiteral("%1 ms").arg(duration.count());
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

ChatExchange::ChatExchange(ExchangeServices services, std::shared_ptr<const config::Config> config,
                           protocol::ChatRequest request, QByteArray body,
                           routing::RequestContext context, routing::RouteDecision decision,
                           telemetry::TraceBuilder trace, ResponseWriter writer, QObject *parent)
    : QObject(parent), m_services(std::move(services)), m_config(std::move(config)),
      m_request(std::move(request)), m_body(std::move(body)), m_context(std::move(context)),
      m_decision(std::move(decision)), m_trace(std::move(trace)), m_writer(std::move(writer)),
      m_plan(m_decision.candidates, m_context.fallbackLevel,
             [config = m_config](const QString &tier) {
                 const config::TierConfig *contract = config->routing.tier(tier);
                 return contract ? contract->retries : -1;
             })
{
    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, &ChatExchange::onTimeout);
}

ChatExchange::~ChatExchange() = default;

const routing::RouteCandidate &ChatExchange::candidate() const
{
    return m_plan.candidates()[m_attempt.candidate];
}

QString ChatExchange::providerId() const
{
    return candidate().providerId;
}

HeaderList ChatExchange::responseHeaders(const QString &provider, int degradedLevel) const
{
    const telemetry::Trace &trace = m_trace.trace();
    HeaderList headers =
        identityHeaders(trace.requestId, trace.traceId,
                        provider.isEmpty() ? QByteArray("none") : provider.toUtf8());
    headers.append({"x-switchyard-route", m_decision.rule.isEmpty() ? QByteArray("default")
                                                                    : headerSafe(m_decision.rule)});
    headers.append({"x-switchyard-tier",
                    m_decision.tier.isEmpty() ? QByteArray("none") : headerSafe(m_decision.tier)});
    headers.append({"x-switchyard-attempts", QByteArray::number(m_plan.attempts())});
    headers.append({"x-switchyard-degraded", QByteArray::number(degradedLevel)});
    return headers;
}

std::optional<milliseconds> ChatExchange::remainingBudget() const
{
    if (!m_deadline)
        return std::nullopt;
    return *m_deadline - milliseconds(m_requestClock.elapsed());
}

void ChatExchange::watch(Watch what, milliseconds limit)
{
    m_watch = what;
    const std::optional<milliseconds> remaining = remainingBudget();
    // A backoff is only ever started when it fits the deadline; every other wait is cut short
    // by it. Only streams use this timer, and a stream's only deadline is the client's budget.
    const bool cut = what != Watch::Backoff && remaining && *remaining <= limit;
    m_watchCutByBudget = cut && m_deadlineIsClientBudget;
    m_timer.start(cut ? std::max(*remaining, milliseconds(0)) : limit);
}

void ChatExchange::start()
{
    QTcpSocket *socket = m_writer.socket();
    if (!socket) {
        onClientDisconnected();
        return;
    }
    // Qt deletes the socket when the client goes; the upstream call must stop at once with it.
    connect(socket, &QAbstractSocket::disconnected, this, &ChatExchange::onClientDisconnected);
    connect(socket, &QIODevice::bytesWritten, this, &ChatExchange::onClientDrained);

    m_trace.trace().model = m_request.model;
    m_trace.trace().streamed = m_request.stream;
    m_trace.pointEvent(QStringLiteral("choice"), m_decision.reason());
    m_services.retryBudget.requestStarted();
    m_countedInRetryBudget = true;

    // The whole request's deadline, across attempts and backoffs: the client's budget, and for a
    // non-streamed request the total timeout as well. A stream has no total cap of its own.
    m_requestClock.start();
    const milliseconds total = m_config->timeouts.total;
    m_deadline = m_context.timeoutBudget;
    m_deadlineIsClientBudget = m_deadline.has_value();
    if (!m_request.stream && (!m_deadline || *m_deadline > total)) {
        m_deadline = total;
        m_deadlineIsClientBudget = false;
    }

    // Shedding thins the traffic a degraded tier sends to its fallbacks; with no fallback left
    // there is nothing to protect.
    if (!m_decision.candidates.isEmpty() && tierIsDegraded() &&
        !m_services.admission.admitsToDegradedFallback(m_trace.trace().requestId)) {
        m_shed = true;
        m_trace.pointEvent(
            QStringLiteral("shed"),
            QStringLiteral("every endpoint of tier `%1` is unavailable; its fallbacks take %2 % "
                           "of its traffic and this request is not among it")
                .arg(m_decision.tier)
                .arg(m_config->resilience.admission.degradedAdmitShare * 100.0));
        finishWithoutAnswer();
        return;
    }
    tryNextCandidate();
}

bool ChatExchange::tierIsDegraded() const
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

void ChatExchange::tryNextCandidate()
{
    bool tookFailoverSlot = false;
    const resilience::AttemptPlan::Gate gate =
        [this, &tookFailoverSlot](const routing::RouteCandidate &next,
                                  bool failover) -> std::optional<resilience::SkipReason> {
        // Reversible checks first: a half-open breaker's admission is its one probe call.
        const int provider = next.endpoint;
        if (failover && !m_services.health.tryStartFailover(
                            provider, m_services.admission.failoverLimit(
                                          m_services.health.providerConfig(provider).capacity)))
            return resilience::SkipReason::FailoverCapacityFull;
        if (!m_services.health.tryAdmit(provider)) {
            if (failover)
                m_services.health.failoverFinished(provider);
            return resilience::SkipReason::BreakerOpen;
        }
        tookFailoverSlot = failover;
        return std::nullopt;
    };
    QList<resilience::CandidateSkip> skipped;
    const int next = m_plan.takeNext(gate, &skipped);
    for (const resilience::CandidateSkip &skip : skipped) {
        m_trace.pointEvent(
            QStringLiteral("skipped endpoint"),
            QStringLiteral("%1: %2").arg(m_plan.candidates()[skip.candidateIndex].providerId,
                                         resilience::skipReasonText(skip.reason)));
    }
    m_skips.append(skipped);
    if (next < 0) {
        releaseRetrySlot();
        finishWithoutAnswer();
        return;
    }
    startAttempt(next, tookFailoverSlot);
}

void ChatExchange::startAttempt(int candidateIndex, bool failover)
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
    // for it, and the exchange keeps the snapshot alive); an agent registered at runtime is
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

    m_attempt.adapter = upstream::adapters::adapterFor(provider);
    const upstream::adapters::AdapterRequest adapterRequest{
        m_body,
        m_request.model,
        chosen.upstreamModel,
        m_request.stream,
        m_trace.trace().requestId,
        QDateTime::currentSecsSinceEpoch(),
        {{"x-request-id", m_trace.trace().requestId},
         {"traceparent",
          "00-" + m_trace.trace().traceId + "-" + telemetry::newTraceId().left(16) + "-01"},
         // The loop guard: a Switchyard behind this one sees one hop more.
         {"x-switchyard-depth", QByteArray::number(m_context.depth + 1)}}};
    auto prepared = m_attempt.adapter->buildRequest(adapterRequest);
    if (const protocol::ApiError *refusal = std::get_if<protocol::ApiError>(&prepared)) {
        refuseForProvider(*refusal);
        return;
    }
    upstream::UpstreamRequest call =
        std::move(std::get<upstream::adapters::PreparedRequest>(prepared).request);
    m_attempt.shape = std::move(std::get<upstream::adapters::PreparedRequest>(prepared).shape);
    const bool upstreamStreams = m_attempt.shape.upstreamStreams;

    // The tier's contract sets the time to an answer (a streamed call's first token, a plain
    // one's whole answer); each further attempt in the same tier waits longer.
    const config::TierConfig *tier = m_config->routing.tier(chosen.tier);
    const milliseconds base = tier && tier->timeout.count() > 0 ? tier->timeout
                              : upstreamStreams                 ? m_config->timeouts.firstToken
                                                                : m_config->timeouts.total;
    m_attempt.answerLimit = resilience::stretchedTimeout(
        base, m_config->resilience.retries.timeoutGradient, earlierInTier);

    const std::optional<milliseconds> remaining = remainingBudget();
    // libcurl reads a zero timeout as "its default": the smallest real limit is 1 ms.
    const auto atLeastOne = [](milliseconds value) { return std::max(value, milliseconds(1)); };
    call.connectTimeout = m_config->timeouts.connect;
    // Cut short by the deadline: by the client's budget that is no fault of the provider's; by
    // the total timeout of a non-streamed request it is the configured limit, and counts.
    if (remaining && *remaining < call.connectTimeout) {
        call.connectTimeout = atLeastOne(*remaining);
        m_attempt.connectCutByBudget = m_deadlineIsClientBudget;
    }
    if (!upstreamStreams) {
        call.totalTimeout = m_attempt.answerLimit;
        if (remaining && *remaining <= call.totalTimeout) {
            call.totalTimeout = atLeastOne(*remaining);
            m_attempt.answerCutByBudget = m_deadlineIsClientBudget;
        }
    } else {
        watch(Watch::FirstToken, m_attempt.answerLimit);
        m_attempt.answerCutByBudget = m_watchCutByBudget;
    }

    m_services.health.callStarted(chosen.endpoint);
    m_attempt.open = true;
    m_attempt.span = m_trace.openSpan(
        QStringLiteral("upstream attempt"),
        QStringLiteral("%1, attempt %2 (%3%4): %5")
            .arg(provider.id)
            .arg(m_attempt.number)
            .arg(roleName(chosen.role),
                 chosen.tier.isEmpty() ? QString() : QStringLiteral(", tier ") + chosen.tier,
                 call.url.toString()));
    m_attempt.clock.start();
    m_call = m_services.transport.start(call, this);
}

void ChatExchange::refuseForProvider(const protocol::ApiError &refusal)
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
    if (!m_lastError) {
        m_lastError = refusal;
        m_lastErrorProvider = chosen.providerId;
        m_lastErrorClass = ErrorClass::RequestRejected;
    }
    finishWithoutAnswer();
}

void ChatExchange::onResponseHead(const upstream::UpstreamResponseHead &head)
{
    m_attempt.head = head;
    m_trace.pointEvent(QStringLiteral("response head"), QStringLiteral("HTTP %1").arg(head.status));
    m_attempt.relayingEvents = m_attempt.shape.upstreamStreams && head.status >= 200 &&
                               head.status < 300 &&
                               head.header("content-type").startsWith("text/event-stream");
    if (m_attempt.relayingEvents)
        m_attempt.stream = m_attempt.adapter->startStream(m_attempt.shape);
}

void ChatExchange::onResponseBody(QByteArrayView bytes)
{
    if (m_phase == Phase::Done)
        return;
    if (!m_attempt.relayingEvents) {
        m_attempt.answer.append(bytes);
        if (m_attempt.answer.size() > kMaxUpstreamAnswerBytes) {
            attemptFailed(ErrorClass::UnusableAnswer,
                          upstreamError(502, QStringLiteral("upstream_answer_too_large"),
                                        QStringLiteral("Provider `%1` sent an answer larger than "
                                                       "%2 bytes.")
                                            .arg(providerId())
                                            .arg(kMaxUpstreamAnswerBytes)),
                          QStringLiteral("answer too large"), false);
        }
        return;
    }

    QList<upstream::SseEvent> events;
    if (!m_attempt.sse.feed(bytes, events)) {
        attemptFailed(ErrorClass::UnusableAnswer,
                      upstreamError(502, QStringLiteral("invalid_upstream_response"),
                                    QStringLiteral("Provider `%1` sent an event-stream line "
                                                   "longer than %2 bytes.")
                                        .arg(providerId())
                                        .arg(upstream::SseParser::kMaxLineBytes)),
                      QStringLiteral("event-stream line too long"), false);
        return;
    }
    if (m_attempt.sse.takeActivity() && m_phase == Phase::Streaming && !m_upstreamPaused)
        watch(Watch::Idle, m_config->timeouts.idle); // keep-alive comments count as activity
    if (events.isEmpty())
        return;

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
    } else if (m_call && !m_upstreamPaused && m_writer.pendingBytes() > kPauseUpstreamAboveBytes) {
        // The client reads slower than the provider writes. Stop reading the provider rather
        // than hold its whole answer in memory. The timer now watches the client: one that
        // takes nothing for an idle period is not coming back for the rest.
        m_upstreamPaused = true;
        ++m_pauseCount;
        watch(Watch::ClientStall, m_config->timeouts.idle);
        m_call->pauseReceiving();
    } else if (!m_upstreamPaused) {
        watch(Watch::Idle, m_config->timeouts.idle);
    }
}

bool ChatExchange::relayStreamOutput(upstream::adapters::StreamOutput output)
{
    if (output.completed) {
        m_sawDone = true;
        m_attempt.answerCompleteMs = m_attempt.clock.nsecsElapsed() / 1e6;
        noteUsage(m_attempt.stream->usage());
    }
    if (!output.events.isEmpty()) {
        if (m_phase == Phase::WaitingForAnswer) {
            // The first byte goes to the client now: from here on this provider's answer is
            // the answer, and a failure ends the stream with an error event.
            m_phase = Phase::Streaming;
            m_attempt.timeToFirstTokenMs = m_attempt.clock.nsecsElapsed() / 1e6;
            m_trace.pointEvent(QStringLiteral("first byte"),
                               QStringLiteral("first event after %1 ms")
                                   .arg(m_attempt.timeToFirstTokenMs, 0, 'f', 1));
            m_writer.beginEventStream(responseHeaders(providerId(), candidate().degradationLevel));
        }
        // After [DONE] only the end of the stream follows, normally in the same upstream read.
        writeStreamEvents(output.events, !m_sawDone && !output.failure);
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
    attemptFailed(errorClass, failure.error,
                  unusable ? QStringLiteral("unusable stream event")
                           : QStringLiteral("error event in the stream"),
                  false);
    return false;
}

void ChatExchange::writeStreamEvents(const QList<upstream::SseEvent> &events, bool sendNow)
{
    QByteArray wire;
    if (m_ingress) {
        wire = m_ingress->streamEvents(events);
    } else {
        for (const upstream::SseEvent &event : events)
            wire.append(event.toWire());
    }
    m_writer.writeStreamData(wire, sendNow);
}

void ChatExchange::sendErrorAnswer(const protocol::ApiError &error, const HeaderList &headers)
{
    if (m_ingress)
        MessagesIngress::sendError(m_writer, error, headers);
    else
        m_writer.sendError(error, headers);
}

void ChatExchange::onClientDrained()
{
    if (!m_upstreamPaused || m_phase == Phase::Done)
        return;
    if (m_writer.pendingBytes() > kResumeUpstreamBelowBytes) {
        watch(Watch::ClientStall, m_config->timeouts.idle); // the client is slow, not stalled
        return;
    }
    m_upstreamPaused = false;
    watch(Watch::Idle, m_config->timeouts.idle);
    if (m_call)
        m_call->resumeReceiving();
}

void ChatExchange::onFinished(const upstream::UpstreamResult &result)
{
    m_timer.stop();
    m_watch = Watch::Nothing;
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
            (result.error == TransportError::ConnectTimeout && m_attempt.connectCutByBudget) ||
            (result.error == TransportError::TotalTimeout && m_attempt.answerCutByBudget);
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
        attemptFailed(errorClass, error, result.description, cutByBudget);
        return;
    }

    if (m_attempt.relayingEvents) {
        attemptFailed(ErrorClass::ConnectionLost,
                      upstreamError(502, QStringLiteral("upstream_stream_interrupted"),
                                    QStringLiteral("Provider `%1` ended the stream before %2; the "
                                                   "answer is incomplete.")
                                        .arg(provider, m_attempt.adapter->streamEnd())),
                      QStringLiteral("stream ended before its end event"), false);
        return;
    }
    if (m_attempt.head.status >= 200 && m_attempt.head.status < 300)
        relayWholeAnswer();
    else
        relayUpstreamError();
}

void ChatExchange::relayWholeAnswer()
{
    const QString provider = providerId();
    // An answer arrived but cannot be used: counted as quality, never as a call failure.
    if (m_attempt.shape.upstreamStreams) {
        attemptFailed(ErrorClass::UnusableAnswer,
                      upstreamError(502, QStringLiteral("invalid_upstream_response"),
                                    QStringLiteral("Provider `%1` answered a streamed request "
                                                   "without an event stream.")
                                        .arg(provider)),
                      QStringLiteral("no event stream"), false);
        return;
    }
    upstream::adapters::AnswerTranslation translated =
        m_attempt.adapter->translateAnswer(m_attempt.shape, m_attempt.answer);
    if (translated.kind == upstream::adapters::AnswerTranslation::Kind::Unusable) {
        const QString description = translated.error.message;
        attemptFailed(ErrorClass::UnusableAnswer, std::move(translated.error), description, false);
        return;
    }
    noteUsage(translated.usage);
    m_finishing = true;
    const HeaderList headers = responseHeaders(provider, candidate().degradationLevel);
    if (m_attempt.shape.clientStreams) {
        // The provider cannot stream: its whole answer is replayed as the stream asked for.
        m_writer.beginEventStream(headers);
        writeStreamEvents(
            upstream::adapters::completionAsChunks(m_attempt.shape, translated.openAiJson), false);
        m_writer.endEventStream();
    } else if (m_ingress) {
        const MessagesIngress::WholeAnswer answer =
            m_ingress->answer(m_attempt.head.status, translated.openAiJson);
        m_writer.sendWhole(answer.status, headers, "application/json", answer.body);
    } else {
        m_writer.sendWhole(m_attempt.head.status, headers, "application/json",
                           translated.openAiJson);
    }
    endAttempt(CallOutcome::Success, QStringLiteral("ok"));
    complete(m_attempt.head.status, QStringLiteral("ok"));
}

void ChatExchange::noteUsage(const upstream::adapters::Usage &usage)
{
    if (!usage.isKnown())
        return;
    m_trace.pointEvent(QStringLiteral("usage"),
                       QStringLiteral("%1 prompt + %2 completion tokens")
                           .arg(std::max<qint64>(usage.promptTokens, 0))
                           .arg(std::max<qint64>(usage.completionTokens, 0)));
}

void ChatExchange::relayUpstreamError()
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
    attemptFailed(errorClass, std::move(error), QStringLiteral("HTTP %1").arg(status), false,
                  retryAfter);
}

void ChatExchange::onTimeout()
{
    const Watch watched = std::exchange(m_watch, Watch::Nothing);
    if (m_phase == Phase::Done)
        return;
    if (watched == Watch::Backoff) {
        retryAfterWait();
        return;
    }
    if (m_sawDone) {
        // The answer is whole; only the provider's end of the response never came. Nothing may
        // follow [DONE], least of all an error about an answer that is complete.
        m_call.reset();
        streamAnswerComplete();
        return;
    }
    if (m_phase == Phase::Streaming && m_watchCutByBudget) {
        // The client's time budget ran out while its answer streamed: it learns so in the
        // stream. The provider was not slow by its own contract: not its failure.
        m_call.reset();
        m_budgetRanOut = true;
        const protocol::ApiError error = budgetError();
        endAttempt(CallOutcome::Cancelled, QStringLiteral("time budget ran out mid-stream"));
        m_finishing = true;
        sendStreamError(error);
        complete(error.status, error.code);
        return;
    }
    if (watched == Watch::ClientStall) {
        // The client has taken nothing for a whole idle period while its stream waits: it
        // holds a provider slot and will not free it. Let both go.
        m_call.reset();
        m_finishing = true;
        if (QTcpSocket *socket = m_writer.socket())
            socket->abort();
        endAttempt(CallOutcome::Cancelled, QStringLiteral("client stalled"));
        complete(499, QStringLiteral("client_stalled"));
        return;
    }
    m_call.reset(); // stop the upstream request now
    if (m_watchCutByBudget) {
        attemptFailed(ErrorClass::Timeout, budgetCutError(), QStringLiteral("time budget ran out"),
                      true);
        return;
    }
    const bool waitingForFirst = m_phase == Phase::WaitingForAnswer;
    const QString what = waitingForFirst ? QStringLiteral("no first token within %1")
                                               .arg(millisecondsText(m_attempt.answerLimit))
                                         : QStringLiteral("no data for %1 between chunks")
                                               .arg(millisecondsText(m_config->timeouts.idle));
    attemptFailed(
        ErrorClass::Timeout,
        upstreamError(504, QStringLiteral("upstream_timeout"),
                      QStringLiteral("Provider `%1` timed out: %2.").arg(providerId(), what)),
        what, false);
}

void ChatExchange::onClientDisconnected()
{
    // While an ending path writes the final answer (or drops a stalled client), a disconnect it
    // causes must not replace the outcome that path records.
    if (m_phase == Phase::Done || m_finishing)
        return;
    m_call.reset();
    endAttempt(CallOutcome::Cancelled, QStringLiteral("client disconnected"));
    complete(499, QStringLiteral("client_disconnected"));
}

void ChatExchange::attemptFailed(ErrorClass errorClass, protocol::ApiError error,
                                 const QString &description, bool cutByBudget,
                                 std::optional<milliseconds> retryAfter)
{
    m_call.reset();
    m_timer.stop();
    m_watch = Watch::Nothing;
    endAttempt(resilience::callOutcomeFor(errorClass, cutByBudget),
               QStringLiteral("%1 (%2)").arg(description, resilience::errorClassName(errorClass)));
    m_lastErrorProvider = providerId();
    m_lastErrorClass = errorClass;
    m_budgetRanOut = m_budgetRanOut || cutByBudget;
    if (m_writer.headersSent()) {
        // The status line is gone; a second provider would repeat or contradict what the client
        // already has. The stream ends with an error event instead.
        m_finishing = true;
        sendStreamError(error);
        complete(error.status, error.code);
        return;
    }
    m_lastError = std::move(error);

    resilience::RetryDecision decision;
    if (cutByBudget) {
        decision.reason = QStringLiteral("the request's time budget ran out");
    } else {
        const resilience::RetryInput input{errorClass,
                                           false,
                                           m_plan.attempts(),
                                           m_plan.mayRetryLastCandidate(),
                                           retryAfter,
                                           remainingBudget(),
                                           m_services.random ? m_services.random() : 0.0};
        decision = resilience::decideRetry(input, m_config->resilience.retries);
    }
    if (decision.action == resilience::RetryAction::NextEndpoint && !m_plan.anyCandidateLeft()) {
        decision = {resilience::RetryAction::GiveUp, milliseconds(0),
                    QStringLiteral("no other endpoint is left to try")};
    }
    if (decision.action != resilience::RetryAction::GiveUp) {
        if (!m_services.retryBudget.tryStartRetry()) {
            decision = {resilience::RetryAction::GiveUp, milliseconds(0),
                        QStringLiteral("the retry budget is spent: %1 retries in flight, %2 "
                                       "allowed")
                            .arg(m_services.retryBudget.retriesInFlight())
                            .arg(m_services.retryBudget.allowedRetriesInFlight())};
        } else {
            m_holdsRetrySlot = true;
        }
    }
    if (decision.action == resilience::RetryAction::GiveUp) {
        m_trace.pointEvent(QStringLiteral("no retry"), decision.reason);
        finishWithoutAnswer();
        return;
    }
    m_trace.pointEvent(QStringLiteral("retry"), decision.reason);
    m_retrySameEndpoint = decision.action == resilience::RetryAction::SameEndpoint;
    // Even a zero wait goes through the event loop: the next attempt never starts from inside
    // the callbacks of the one that failed.
    watch(Watch::Backoff, decision.delay);
}

void ChatExchange::retryAfterWait()
{
    if (!m_retrySameEndpoint) {
        tryNextCandidate();
        return;
    }
    const int index = m_plan.lastCandidate();
    const routing::RouteCandidate &same = m_plan.candidates()[index];
    if (!m_services.health.tryAdmit(same.endpoint)) {
        m_trace.pointEvent(
            QStringLiteral("skipped endpoint"),
            QStringLiteral("%1: %2").arg(
                same.providerId, resilience::skipReasonText(resilience::SkipReason::BreakerOpen)));
        m_skips.append({index, resilience::SkipReason::BreakerOpen});
        tryNextCandidate();
        return;
    }
    startAttempt(index, false);
}

void ChatExchange::endAttempt(CallOutcome outcome, const QString &detail)
{
    if (!m_attempt.open)
        return;
    m_attempt.open = false;
    const routing::RouteCandidate &ended = candidate();
    // A stream's latency ends at [DONE]: waiting for the provider's end of the response after
    // it is not the provider answering.
    const double latencyMs = m_attempt.answerCompleteMs >= 0 ? m_attempt.answerCompleteMs
                                                             : m_attempt.clock.nsecsElapsed() / 1e6;
    m_trace.closeSpan(m_attempt.span, QStringLiteral("%1, attempt %2: %3")
                                          .arg(ended.providerId)
                                          .arg(m_attempt.number)
                                          .arg(detail));
    m_services.health.callFinished(ended.endpoint, outcome, latencyMs, m_attempt.timeToFirstTokenMs,
                                   outcome == CallOutcome::Success ? QString() : detail);
    if (m_attempt.holdsFailoverSlot) {
        m_attempt.holdsFailoverSlot = false;
        m_services.health.failoverFinished(ended.endpoint);
    }
    releaseRetrySlot();
}

void ChatExchange::releaseRetrySlot()
{
    if (!m_holdsRetrySlot)
        return;
    m_holdsRetrySlot = false;
    m_services.retryBudget.retryFinished();
}

protocol::ApiError ChatExchange::budgetCutError() const
{
    return upstreamError(504, QStringLiteral("upstream_timeout"),
                         QStringLiteral("Provider `%1` had not answered when the request's time "
                                        "budget ran out.")
                             .arg(providerId()));
}

protocol::ApiError ChatExchange::budgetError() const
{
    const QString last =
        m_lastError ? m_lastError->message : QStringLiteral("no provider answered in time.");
    return upstreamError(
        504, QStringLiteral("timeout_budget_exhausted"),
        QStringLiteral("The request's time budget of %1 "
                       "(x-switchyard-timeout-budget-ms) ran out after %2 "
                       "attempt(s); the last: %3")
            .arg(millisecondsText(m_context.timeoutBudget.value_or(milliseconds(0))))
            .arg(m_plan.attempts())
            .arg(last));
}

protocol::ApiError ChatExchange::finalError() const
{
    if (m_budgetRanOut && m_deadlineIsClientBudget)
        return budgetError();
    if (m_lastError)
        return *m_lastError;
    if (m_shed) {
        protocol::ApiError error = protocol::ApiError::serviceUnavailable(
            QStringLiteral("Every endpoint of tier `%1` is unavailable and its fallbacks take "
                           "only part of its traffic; this request was not admitted. Retry "
                           "shortly.")
                .arg(m_decision.tier));
        error.code = QStringLiteral("tier_degraded");
        error.retryAfter = kRetryAfterNoEndpoint;
        return error;
    }
    if (m_decision.candidates.isEmpty()) {
        // The router found no endpoint it could choose (all unavailable, or no agent idle).
        protocol::ApiError error = protocol::ApiError::serviceUnavailable(
            QStringLiteral("No endpoint can take this request now: %1.")
                .arg(m_decision.steps.isEmpty() ? QString() : m_decision.steps.last().detail));
        error.code = QStringLiteral("no_route_candidate");
        error.retryAfter = kRetryAfterNoEndpoint;
        return error;
    }
    QStringList reasons;
    for (const resilience::CandidateSkip &skip : m_skips) {
        reasons.append(QStringLiteral("`%1` (%2)")
                           .arg(m_plan.candidates()[skip.candidateIndex].providerId,
                                resilience::skipReasonText(skip.reason)));
    }
    protocol::ApiError error = protocol::ApiError::serviceUnavailable(
        QStringLiteral("No endpoint for model `%1` could take the request: %2.")
            .arg(m_request.model, reasons.join(QStringLiteral(", "))));
    error.code = QStringLiteral("no_endpoint_available");
    error.retryAfter = kRetryAfterNoEndpoint;
    return error;
}

void ChatExchange::finishWithoutAnswer()
{
    const protocol::ApiError error = finalError();
    // The ladder's lower rungs answer for providers that failed, never for a request that
    // every provider would refuse.
    if (m_lastErrorClass != ErrorClass::RequestRejected) {
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
    sendErrorAnswer(error, responseHeaders(m_lastErrorProvider, 0));
    complete(error.status, error.code.isEmpty() ? error.type : error.code);
}

void ChatExchange::answerDegraded(int level, const QString &content, const QString &reason)
{
    resilience::SyntheticAnswer answer;
    answer.id = "chatcmpl-" + m_trace.trace().requestId;
    answer.model = m_request.model;
    answer.createdSecs = QDateTime::currentSecsSinceEpoch();
    answer.content = content;
    answer.level = level;
    answer.reason = reason;
    const bool canned = level == resilience::kCannedAnswer;
    m_trace.pointEvent(QStringLiteral("degraded"),
                       QStringLiteral("level %1, %2 instead of: %3")
                           .arg(level)
                           .arg(canned ? QStringLiteral("a canned answer")
                                       : QStringLiteral("the fail-safe message"),
                                reason));
    const HeaderList headers = responseHeaders({}, level);
    m_finishing = true;
    if (m_request.stream) {
        m_writer.beginEventStream(headers);
        QList<upstream::SseEvent> events;
        for (const QByteArray &data : answer.streamEvents()) {
            upstream::SseEvent event;
            event.data = data;
            events.append(std::move(event));
        }
        writeStreamEvents(events, false);
        m_writer.endEventStream();
    } else if (m_ingress) {
        const MessagesIngress::WholeAnswer whole = m_ingress->answer(200, answer.completion());
        m_writer.sendWhole(whole.status, headers, "application/json", whole.body);
    } else {
        m_writer.sendWhole(200, headers, "application/json", answer.completion());
    }
    complete(200, canned ? QStringLiteral("canned_answer") : QStringLiteral("fail_safe_answer"));
}

void ChatExchange::sendStreamError(const protocol::ApiError &error)
{
    // After the first byte the status line is gone: the failure becomes an event the OpenAI SDKs
    // raise as an error, and the stream ends without [DONE] so it never looks complete.
    if (m_ingress) {
        m_writer.writeStreamData(m_ingress->streamError(error));
    } else {
        upstream::SseEvent event;
        event.data = error.toJson();
        m_writer.writeStreamData(event.toWire());
    }
    m_writer.endEventStream();
}

void ChatExchange::streamAnswerComplete()
{
    m_finishing = true;
    m_writer.endEventStream();
    endAttempt(CallOutcome::Success, QStringLiteral("ok"));
    complete(200, QStringLiteral("ok"));
}

void ChatExchange::complete(int status, const QString &outcomeCode)
{
    if (m_phase == Phase::Done)
        return;
    m_phase = Phase::Done;
    m_timer.stop();
    m_watch = Watch::Nothing;
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
    m_services.traces.add(m_trace.finish(status, outcomeCode));
    qCDebug(lcGateway) << "request" << requestId() << "finished" << status << outcomeCode << "after"
                       << m_plan.attempts() << "attempt(s)";
    emit finished();
}

} // namespace switchyard::http
