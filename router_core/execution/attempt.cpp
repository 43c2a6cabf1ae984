#include "execution/attempt.h"

#include "execution/final_error.h"
#include "execution/opening_events.h"
#include "protocol/byte_search.h"
#include "protocol/decimal_text.h"
#include "resilience/error_fallback.h"
#include "resilience/retry_policy.h"
#include "upstream/adapters/provider_endpoint.h"

#include <QDateTime>
#include <QStringBuilder>
#include <algorithm>

namespace switchyard::execution {

using namespace Qt::StringLiterals;
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
// Opening events held before the first content; a provider sending more (pings, say) has the
// stream begun anyway, so the hold never grows without bound.
constexpr qsizetype kMaxHeldOpeningEvents = 32;

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

// Whether the events, the first to reach the client, end the answer as the content filter
// stopped it, with no content: opening events, then a filter's finish, then at most the end.
// Read only while an attempt waits for its first content; a content chunk ends the search.
bool endsFilteredWithoutContent(const QList<upstream::SseEvent> &events)
{
    // Most first batches carry content and no filter's word: they are not parsed at all.
    const bool mentionsFilter =
        std::any_of(events.cbegin(), events.cend(), [](const upstream::SseEvent &event) {
            return resilience::mentionsContentFilter(event.data);
        });
    if (!mentionsFilter)
        return false;
    bool filtered = false;
    for (const upstream::SseEvent &event : events) {
        const resilience::FilterEventRole role = resilience::filterEventRole(event);
        if (role == resilience::FilterEventRole::FilteredEnd)
            filtered = true;
        else if (role == resilience::FilterEventRole::Other && !isOpeningEvent(event))
            return false;
    }
    return filtered;
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
    case routing::CandidateRole::OtherBranch:
        return QStringLiteral("other split branch");
    }
    return {};
}

} // namespace

void traceStreamedEvents(telemetry::TraceBuilder &trace, const QList<upstream::SseEvent> &events)
{
    telemetry::Trace &record = trace.trace();
    if (record.timeToFirstByteMicros < 0)
        record.timeToFirstByteMicros = trace.elapsedMicros();
    for (const upstream::SseEvent &event : events) {
        trace.chunk(event.data.size());
        if (trace.watched())
            trace.appendLiveData(event.data);
        if (trace.keepsMoreResponseBody())
            trace.appendResponseBody("data: " + event.data + "\n\n");
    }
}

Attempt::Attempt(AttemptScope scope, int candidateIndex, const routing::RouteCandidate &candidate,
                 int number, bool holdsFailoverSlot)
    : m_scope(scope), m_candidateIndex(candidateIndex), m_candidate(candidate), m_number(number),
      m_holdsFailoverSlot(holdsFailoverSlot),
      m_watchDeadline(m_scope.scheduler, [this] { onWatchDue(); })
{
    // The request's own snapshot defines a configured provider (an Apply since changes nothing
    // for it, and the execution keeps the snapshot alive); an agent registered at runtime is
    // defined by the registry alone, whose list may grow while the attempt runs, so the attempt
    // keeps a copy of an agent's definition. The adapter refers to it until the attempt ends.
    m_provider = m_scope.config.provider(candidate.providerId);
    if (!m_provider) {
        m_agentDefinition = std::make_unique<config::ProviderConfig>(
            m_scope.health.providerConfig(candidate.endpoint));
        m_provider = m_agentDefinition.get();
    }
}

double Attempt::msSince(TimePoint start) const
{
    return std::chrono::duration<double, std::milli>(now() - start).count();
}

// ---- the start ----------------------------------------------------------------------------------

std::variant<upstream::adapters::PreparedRequest, protocol::ApiError>
Attempt::prepare(const upstream::adapters::AdapterRequest &request, Dialect dialect)
{
    m_adapter = upstream::adapters::adapterFor(*m_provider);
    m_operation = request.operation;
    m_dialect = dialect;
    return m_adapter->buildRequest(request);
}

void Attempt::start(upstream::adapters::PreparedRequest prepared, const QByteArray &spanId,
                    int earlierInTier)
{
    const config::Config &config = m_scope.config;
    const config::ProviderConfig &provider = *m_provider;
    upstream::UpstreamRequest call = std::move(prepared.request);
    m_shape = std::move(prepared.shape);
    const bool upstreamStreams = m_shape.upstreamStreams;
    call.answerStreams = upstreamStreams;

    // The tier's contract sets the time to an answer (a streamed call's first token, a plain
    // one's whole answer); each further attempt in the same tier waits longer.
    const config::TierConfig *tier = config.routing.tier(m_candidate.tier);
    const milliseconds base = tier && tier->timeout.count() > 0 ? tier->timeout
                              : upstreamStreams                 ? config.timeouts.firstToken
                                                                : config.timeouts.total;
    m_answerLimit = resilience::stretchedTimeout(base, config.resilience.retries.timeoutGradient,
                                                 earlierInTier);

    // The connect timeout is the transport's: only it knows when the connection stands. Cut
    // short by the client's budget that is no fault of the provider's; by the total timeout of
    // a non-streamed request it is the configured limit, and counts. libcurl reads a zero
    // timeout as "its default": the smallest real limit is 1 ms.
    const std::optional<milliseconds> remaining = m_scope.deadline.remaining(now());
    call.connectTimeout = config.timeouts.connect;
    if (remaining && *remaining < call.connectTimeout) {
        call.connectTimeout = std::max(*remaining, milliseconds(1));
        m_connectCutByBudget = m_scope.deadline.isClientBudget;
    }
    call.totalTimeout = milliseconds(0); // the watch below is the answer's limit
    watch(upstreamStreams ? Watch::FirstToken : Watch::Answer, m_answerLimit);

    m_scope.health.callStarted(m_candidate.endpoint);
    m_open = true;
    telemetry::TraceBuilder &trace = m_scope.trace;
    m_span = trace.openSpan(
        QStringLiteral("upstream attempt"),
        // Concatenated rather than QString::arg, which parses its pattern on every call: the
        // trace details written for every request were 4 % of the engine's instructions.
        provider.id % ", attempt "_L1 % QString::number(m_number) % " ("_L1 %
            roleName(m_candidate.role) %
            (m_candidate.tier.isEmpty() ? QString() : ", tier "_L1 + m_candidate.tier) % "): "_L1 %
            upstream::adapters::displayUrl(provider, call.url),
        telemetry::SpanKind::Attempt);
    telemetry::Span &span = trace.spanAt(m_span);
    span.spanId = spanId;
    span.attempt = m_number;
    span.provider = provider.id;
    span.upstreamModel = m_candidate.upstreamModel;
    m_startedAt = now();
    m_call = m_scope.transport.start(call, this);
}

void Attempt::handBackAdmission()
{
    // A half-open breaker's probe admission is handed back by a cancelled call, which counts
    // nothing.
    m_scope.health.callStarted(m_candidate.endpoint);
    m_scope.health.callFinished(m_candidate.endpoint, CallOutcome::Cancelled, 0.0, -1.0, {});
    if (m_holdsFailoverSlot) {
        m_holdsFailoverSlot = false;
        m_scope.health.failoverFinished(m_candidate.endpoint);
    }
}

// ---- an observer of its upstream call -----------------------------------------------------------

void Attempt::onResponseHead(const upstream::UpstreamResponseHead &head)
{
    m_head = head;
    if (m_span >= 0)
        m_scope.trace.spanAt(m_span).httpStatus = head.status;
    QString status = u"HTTP "_s;
    m_scope.trace.pointEvent(QStringLiteral("response head"),
                             protocol::appendDecimal(status, head.status));
    m_relayingEvents = m_shape.upstreamStreams && head.status >= 200 && head.status < 300 &&
                       head.header("content-type").startsWith("text/event-stream");
    if (m_relayingEvents)
        m_stream = m_adapter->startStream(m_shape);
}

void Attempt::onResponseBody(QByteArrayView bytes)
{
    if (m_phase == Phase::Stopped)
        return;
    m_bytesReceived += bytes.size();
    if (!m_relayingEvents) {
        m_answer.append(bytes);
        if (m_answer.size() > kMaxUpstreamAnswerBytes) {
            fail({ErrorClass::UnusableAnswer,
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
    if (!m_sse.feed(bytes, events)) {
        fail({ErrorClass::UnusableAnswer,
              upstreamError(502, QStringLiteral("invalid_upstream_response"),
                            QStringLiteral("Provider `%1` sent an event-stream line "
                                           "longer than %2 bytes.")
                                .arg(providerId())
                                .arg(upstream::SseParser::kMaxLineBytes)),
              QStringLiteral("event-stream line too long")});
        return;
    }
    const bool active = m_sse.takeActivity();
    if (events.isEmpty()) {
        if (active && m_phase == Phase::Streaming && !m_upstreamPaused)
            noteUpstreamActivity(); // keep-alive comments count as activity
        return;
    }

    // All events of one upstream read go out as one chunk: one write, one syscall.
    upstream::adapters::StreamOutput output;
    for (const upstream::SseEvent &event : events) {
        upstream::adapters::StreamOutput piece = m_stream->feed(event);
        if (output.events.isEmpty())
            output.events = std::move(piece.events); // the usual one event a read: no new list
        else
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
        watch(Watch::EndAfterDone, std::min(kEndAfterDoneGrace, m_scope.config.timeouts.idle));
    } else if (m_call && !m_upstreamPaused &&
               m_scope.client.pendingBytes() > kPauseUpstreamAboveBytes) {
        // The client reads slower than the provider writes. Stop reading the provider rather
        // than hold its whole answer in memory. The watch now is on the client: one that takes
        // nothing for an idle period is not coming back for the rest.
        m_upstreamPaused = true;
        ++m_pauseCount;
        watch(Watch::ClientStall, m_scope.config.timeouts.idle);
        m_call->pauseReceiving();
    } else if (!m_upstreamPaused) {
        noteUpstreamActivity();
    }
}

bool Attempt::relayStreamOutput(upstream::adapters::StreamOutput output)
{
    telemetry::TraceBuilder &trace = m_scope.trace;
    if (m_phase == Phase::WaitingForAnswer && !output.failure &&
        failIfFilteredWithoutContent(endsFilteredWithoutContent(output.events))) {
        m_heldOpening.clear(); // this attempt's; the client never sees them
        return false;
    }
    if (m_phase == Phase::WaitingForAnswer && !output.completed) {
        // What only opens the answer (a role-only chunk, message_start, ping, response.created)
        // waits for the first content: a failure before it is a failure before the first byte,
        // and the next candidate may still answer.
        const bool onlyOpening =
            std::all_of(output.events.cbegin(), output.events.cend(), isOpeningEvent);
        if (onlyOpening && output.failure) {
            m_heldOpening.clear(); // this attempt's; the client never sees them
            output.events.clear();
        } else if (onlyOpening &&
                   m_heldOpening.size() + output.events.size() <= kMaxHeldOpeningEvents) {
            m_heldOpening.append(std::move(output.events));
            return true;
        }
    }
    if (!m_heldOpening.isEmpty()) {
        output.events = std::move(m_heldOpening) + std::move(output.events);
        m_heldOpening.clear();
    }
    if (output.completed) {
        m_sawDone = true;
        m_answerCompleteMs = msSince(m_startedAt);
        noteUsage(m_stream->usage());
    }
    // The finish reason comes near the end, often a read before the end marker and sometimes
    // followed by a usage chunk with no choices: the batch is searched from its end for the
    // last event that has the key at all.
    const QByteArrayView reasonKey = finishReasonKey();
    for (auto event = output.events.crbegin(); event != output.events.crend(); ++event) {
        if (!protocol::containsBytes(event->data, reasonKey))
            continue;
        if (QString reason = finishReasonIn(event->data, reasonKey); !reason.isEmpty())
            trace.trace().finishReason = std::move(reason);
        break;
    }
    // The listener may drop events too: a continuing provider's own opening.
    if (!output.events.isEmpty())
        m_scope.listener.streamEventsRelaying(output.events);
    if (!output.events.isEmpty()) {
        const bool first = m_phase == Phase::WaitingForAnswer;
        if (first) {
            // The first byte goes to the client now: from here on this provider's answer is
            // the answer, and a failure ends the stream with an error event (or, for a stream
            // that may be continued, hands the rest to another provider).
            m_phase = Phase::Streaming;
            m_timeToFirstTokenMs = msSince(m_startedAt);
            m_firstTokenWhileLate = loopIsLate();
            m_lagAtFirstTokenMs = m_scope.loop.lagMs;
            if (trace.trace().timeToFirstByteMicros < 0)
                trace.trace().timeToFirstByteMicros = trace.elapsedMicros();
            if (!m_continuesStream)
                m_scope.client.beginStream(m_scope.listener.answerHeaders(), m_dialect);
        }
        // Later events are traced before they are written: a write may resume a paused
        // provider, whose held events are relayed (and traced) inside it.
        if (!first)
            traceStreamedEvents(trace, output.events);
        // Counted before the write: a client gone during it ends the request inside the write,
        // and its usage must include what the provider sent.
        for (const upstream::SseEvent &event : output.events)
            m_scope.listener.providerAnswerRelayed(event.data);
        // After [DONE] only the end of the stream follows, normally in the same upstream read.
        m_scope.client.sendStreamEvents(output.events, !m_sawDone && !output.failure);
        if (m_phase == Phase::Stopped)
            return false; // the write found the client gone; the request ended inside it
        if (first) {
            // The rest of the first event's bookkeeping waits for its write: the first token
            // does not wait for work this request's path would run cold.
            if (!m_continuesStream)
                m_scope.listener.streamCommitted();
            // Nor are the provider's headers needed (read for an error answer or a
            // non-streamed one).
            m_head.headers = {};
            QString detail = u"first event after "_s;
            protocol::appendOneDecimal(detail, m_timeToFirstTokenMs).append(" ms"_L1);
            trace.pointEvent(m_continuesStream ? u"continued"_s : u"first byte"_s, detail);
            traceStreamedEvents(trace, output.events);
        }
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
    fail({errorClass, failure.error,
          unusable ? QStringLiteral("unusable stream event")
                   : QStringLiteral("error event in the stream")});
    return false;
}

void Attempt::clientDrained()
{
    if (!m_upstreamPaused)
        return;
    if (m_scope.client.pendingBytes() > kResumeUpstreamBelowBytes) {
        watch(Watch::ClientStall, m_scope.config.timeouts.idle); // the client is slow, not stalled
        return;
    }
    m_upstreamPaused = false;
    watch(Watch::Idle, m_scope.config.timeouts.idle);
    if (m_call)
        m_call->resumeReceiving();
}

void Attempt::onFinished(const upstream::UpstreamResult &result)
{
    stopWatching();
    if (m_phase == Phase::Stopped)
        return;
    m_call.reset(); // finished: nothing more arrives from it
    const QString provider = providerId();

    if (m_relayingEvents && !m_sawDone && result.error == TransportError::None) {
        // A clean end: a provider whose protocol has no end marker finishes its answer here.
        if (!relayStreamOutput(m_stream->finish()))
            return;
    }
    if (m_relayingEvents && m_sawDone) {
        // [DONE] arrived, so the answer is whole even if the provider's connection then broke
        // before the response's own end: the client gets a clean end, and the call counts.
        completeStream();
        return;
    }
    if (result.error != TransportError::None) {
        const ErrorClass errorClass =
            resilience::classify(result.error, 0, resilience::TimeoutKind::None);
        const bool cutByBudget =
            result.error == TransportError::ConnectTimeout && m_connectCutByBudget;
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
            failure = blameTimeout(std::move(failure),
                                   std::chrono::milliseconds(qint64(msSince(m_startedAt))));
        else if (result.error == TransportError::LocalResources)
            failure = blameLocalResources(std::move(failure));
        fail(std::move(failure));
        return;
    }

    if (m_relayingEvents) {
        fail({ErrorClass::ConnectionLost,
              upstreamError(502, QStringLiteral("upstream_stream_interrupted"),
                            QStringLiteral("Provider `%1` ended the stream before %2; "
                                           "the answer is incomplete.")
                                .arg(provider, m_adapter->streamEnd(m_shape))),
              QStringLiteral("stream ended before its end event")});
        return;
    }
    if (m_head.status >= 200 && m_head.status < 300)
        relayWholeAnswer();
    else
        relayUpstreamError();
}

void Attempt::relayWholeAnswer()
{
    const QString provider = providerId();
    // An answer arrived but cannot be used: counted as quality, never as a call failure.
    if (m_shape.upstreamStreams) {
        fail({ErrorClass::UnusableAnswer,
              upstreamError(502, QStringLiteral("invalid_upstream_response"),
                            QStringLiteral("Provider `%1` answered a streamed request "
                                           "without an event stream.")
                                .arg(provider)),
              QStringLiteral("no event stream")});
        return;
    }
    upstream::adapters::AnswerTranslation translated =
        m_adapter->translateAnswer(m_shape, m_answer);
    if (translated.kind == upstream::adapters::AnswerTranslation::Kind::Unusable) {
        const QString description = translated.error.message;
        fail({ErrorClass::UnusableAnswer, std::move(translated.error), description});
        return;
    }
    if (failIfFilteredWithoutContent(resilience::mentionsContentFilter(translated.openAiJson) &&
                                     resilience::isFilteredWithoutContent(translated.openAiJson)))
        return;
    noteUsage(translated.usage);
    // Only an estimate needs the answer's text.
    m_scope.listener.providerAnswerRelayed(translated.usage.completionTokens < 0
                                               ? QByteArrayView(translated.openAiJson)
                                               : QByteArrayView());
    telemetry::TraceBuilder &trace = m_scope.trace;
    trace.trace().finishReason = finishReasonIn(translated.openAiJson, finishReasonKey());
    trace.appendResponseBody(translated.openAiJson);
    m_scope.listener.answerFinishing();
    const HeaderList headers = m_scope.listener.answerHeaders();
    ClientChannel &client = m_scope.client;
    if (m_shape.clientStreams) {
        // The provider cannot stream: its whole answer is replayed as the stream asked for.
        client.beginStream(headers, Dialect::Chat);
        const QList<upstream::SseEvent> events =
            upstream::adapters::completionAsChunks(m_shape, translated.openAiJson);
        traceStreamedEvents(trace, events);
        client.sendStreamEvents(events, false);
        client.endStream();
    } else {
        client.sendAnswer(m_head.status, headers, translated.openAiJson, m_dialect);
    }
    m_scope.listener.answered(m_head.status);
}

void Attempt::noteUsage(const upstream::adapters::Usage &usage)
{
    if (!usage.isKnown())
        return;
    telemetry::RequestRecord &record = m_scope.trace.trace();
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
    QString detail;
    detail.reserve(64);
    protocol::appendDecimal(detail, std::max<qint64>(prompt, 0)).append(u" prompt + "_s);
    protocol::appendDecimal(detail, std::max<qint64>(usage.completionTokens, 0))
        .append(u" completion tokens"_s);
    if (record.cacheReadTokens > 0 || record.cacheWriteTokens > 0)
        detail += u" (prompt cache: %1 read, %2 written)"_s
                      .arg(std::max<qint64>(record.cacheReadTokens, 0))
                      .arg(std::max<qint64>(record.cacheWriteTokens, 0));
    m_scope.trace.pointEvent(QStringLiteral("usage"), detail);
}

void Attempt::relayUpstreamError()
{
    const int status = m_head.status;
    // Classified on the provider's own status (Anthropic's 529 is a server error), whatever
    // status the client is shown.
    const ErrorClass errorClass =
        resilience::classify(TransportError::None, status, resilience::TimeoutKind::None);
    protocol::ApiError error = m_adapter->translateError(status, m_head.headers, m_answer);
    std::optional<milliseconds> retryAfter;
    if (errorClass == ErrorClass::RateLimited) {
        retryAfter = resilience::retryAfterDelay(m_head.header("retry-after-ms"),
                                                 m_head.header("retry-after"),
                                                 QDateTime::currentDateTimeUtc());
    }
    AttemptFailure failure(errorClass, std::move(error), QStringLiteral("HTTP %1").arg(status),
                           false, retryAfter);
    failure.fallbackError = resilience::recognizeErrorAnswer(m_provider->kind, status, m_answer);
    fail(std::move(failure));
}

bool Attempt::failIfFilteredWithoutContent(bool filtered)
{
    if (!filtered || !m_scope.listener.fallsBackOn(config::FallbackError::ContentFiltered))
        return false;
    // The provider answered, and would answer the same again: the request's fault as far as
    // health goes, never a breaker's failure. The client sees this error only when no fallback
    // model answers either.
    AttemptFailure failure(
        ErrorClass::RequestRejected,
        protocol::ApiError{400,
                           QStringLiteral("Provider `%1` withheld its answer: its content filter "
                                          "stopped it before any content.")
                               .arg(providerId()),
                           QStringLiteral("invalid_request_error"),
                           {},
                           QStringLiteral("content_filter"),
                           {}},
        QStringLiteral("answer stopped by the content filter before any content"));
    failure.fallbackError = config::FallbackError::ContentFiltered;
    fail(std::move(failure));
    return true;
}

void Attempt::completeStream()
{
    m_scope.listener.answerFinishing();
    m_scope.client.endStream();
    m_scope.listener.answered(200);
}

// ---- the watch ----------------------------------------------------------------------------------

void Attempt::watch(Watch what, milliseconds limit)
{
    watchUntil(what, now() + limit);
}

void Attempt::watchUntil(Watch what, TimePoint end)
{
    m_watch = what;
    // Every watch is cut short by the request's deadline.
    const std::optional<TimePoint> &deadline = m_scope.deadline.at;
    m_watchEndsAtDeadline = deadline && *deadline <= end;
    m_watchDeadline.arm(m_watchEndsAtDeadline ? *deadline : end);
}

void Attempt::noteUpstreamActivity()
{
    // Every read of a stream would move the idle deadline; instead the time of the last one is
    // kept, and the deadline, when it comes, checks whether it really is due.
    m_idleFrom = now();
    if (m_watch != Watch::Idle)
        watch(Watch::Idle, m_scope.config.timeouts.idle);
}

void Attempt::stopWatching()
{
    m_watch = Watch::Nothing;
    m_watchDeadline.disarm();
}

void Attempt::onWatchDue()
{
    if (m_phase == Phase::Stopped)
        return;
    const milliseconds idle = m_scope.config.timeouts.idle;
    if (m_watch == Watch::Idle && !m_watchEndsAtDeadline) {
        const TimePoint idleEnd = m_idleFrom + idle;
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
        completeStream();
        return;
    }
    if (m_phase == Phase::Streaming && watchCutByBudget()) {
        // The client's time budget ran out while its answer streamed: it learns so in the
        // stream. The provider was not slow by its own contract: not its failure.
        m_call.reset();
        m_scope.listener.budgetRanOutMidStream();
        return;
    }
    if (watched == Watch::ClientStall) {
        // The client has taken nothing for a whole idle period while its stream waits: it
        // holds a provider slot and will not free it. Let both go.
        m_call.reset();
        m_scope.listener.clientStalled();
        return;
    }
    const bool connecting = m_call && !m_call->requestSent();
    m_call.reset(); // stop the upstream request now
    if (watchCutByBudget()) {
        fail({ErrorClass::Timeout, budgetCutError(), QStringLiteral("time budget ran out"), true});
        return;
    }
    if (watched == Watch::Answer) {
        // The transport owns the connect timeout but the answer's limit can come first: still
        // connecting then, it is a connect timeout all the same.
        const QString what = connecting
                                 ? QStringLiteral("connect timed out (no connection within %1)")
                                       .arg(millisecondsText(m_answerLimit))
                                 : QStringLiteral("timed out (no answer within %1)")
                                       .arg(millisecondsText(m_answerLimit));
        fail(blameTimeout({ErrorClass::Timeout,
                           upstreamError(504, QStringLiteral("upstream_timeout"),
                                         QStringLiteral("Provider `%1` did not answer in time: %2.")
                                             .arg(providerId(), what)),
                           what},
                          m_answerLimit));
        return;
    }
    const QString what =
        watched == Watch::FirstToken
            ? QStringLiteral("no first token within %1").arg(millisecondsText(m_answerLimit))
            : QStringLiteral("no data for %1 between chunks").arg(millisecondsText(idle));
    fail(blameTimeout(
        {ErrorClass::Timeout,
         upstreamError(504, QStringLiteral("upstream_timeout"),
                       QStringLiteral("Provider `%1` timed out: %2.").arg(providerId(), what)),
         what},
        watched == Watch::FirstToken ? m_answerLimit : idle));
}

// ---- endings ------------------------------------------------------------------------------------

void Attempt::fail(AttemptFailure failure)
{
    m_call.reset();
    stopWatching();
    // Whatever the provider said goes on to the client, the trace and the log: never with the
    // credentials it was called with in it.
    // The definition the call was made with: an Apply since may have changed the registry's.
    failure.error.message =
        upstream::adapters::withoutSecrets(*m_provider, std::move(failure.error.message));
    m_errorClass = failure.errorClass;
    m_scope.listener.attemptFailed(std::move(failure));
}

protocol::ApiError Attempt::budgetCutError() const
{
    return upstreamError(504, QStringLiteral("upstream_timeout"),
                         QStringLiteral("Provider `%1` had not answered when the request's time "
                                        "budget ran out.")
                             .arg(providerId()));
}

bool Attempt::loopIsLate() const
{
    return m_scope.loop.lagMs >= double(m_scope.config.resilience.admission.overloadLag.count());
}

AttemptFailure Attempt::blameTimeout(AttemptFailure failure, std::chrono::milliseconds waited)
{
    // The loop at any moment of the wait that timed out, not only at its last tick: a backlog
    // the loop is still working through, or went through while this call waited, delays the
    // reading of the provider's answer as much as the answer itself.
    const double lagMs =
        m_scope.loop.worstLagWithin(qint64(waited.count()), timing::LoopHealth::nowMs());
    const auto threshold = m_scope.config.resilience.admission.overloadLag;
    if (lagMs < double(threshold.count()))
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

AttemptFailure Attempt::blameLocalResources(AttemptFailure failure)
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

AttemptFailure Attempt::blameGateway(AttemptFailure failure, const QString &traceDetail,
                                     const QString &message)
{
    m_scope.trace.pointEvent(QStringLiteral("gateway overloaded"), traceDetail);
    protocol::ApiError error = protocol::ApiError::serviceUnavailable(message);
    error.code = QStringLiteral("gateway_overloaded");
    error.retryAfter = retryAfterSeconds(kRetryAfterNoEndpoint);
    failure.error = std::move(error);
    failure.blamedOnGateway = true;
    return failure;
}

bool Attempt::end(CallOutcome outcome, const QString &detail)
{
    if (!m_open)
        return false;
    m_open = false;
    telemetry::TraceBuilder &trace = m_scope.trace;
    // A stream's latency ends at [DONE]: waiting for the provider's end of the response after
    // it is not the provider answering.
    const double latencyMs = m_answerCompleteMs >= 0 ? m_answerCompleteMs : msSince(m_startedAt);
    trace.closeSpan(m_span, m_candidate.providerId % ", attempt "_L1 % QString::number(m_number) %
                                ": "_L1 % detail);
    telemetry::Span &span = trace.spanAt(m_span);
    span.outcome = callOutcomeName(outcome);
    span.bytes = m_bytesReceived;
    if (m_errorClass != ErrorClass::None)
        span.errorClass = resilience::errorClassName(m_errorClass);
    // Times read while the engine ran late measure its backlog: they must not make the provider
    // look slow (the slow rule would open its breaker for the gateway's overload).
    const bool timedWhileLate =
        outcome == CallOutcome::Success && (m_firstTokenWhileLate || loopIsLate());
    if (timedWhileLate) {
        trace.pointEvent(
            QStringLiteral("gateway late"),
            QStringLiteral("the engine loop ran %1 ms late (admission.overload_lag "
                           "%2): this call's times are not held against %3")
                .arg(m_firstTokenWhileLate ? m_lagAtFirstTokenMs : m_scope.loop.lagMs, 0, 'f', 0)
                .arg(millisecondsText(m_scope.config.resilience.admission.overloadLag),
                     m_candidate.providerId));
    }
    m_scope.health.callFinished(m_candidate.endpoint, outcome, latencyMs, m_timeToFirstTokenMs,
                                outcome == CallOutcome::Success ? QString() : detail,
                                timedWhileLate ? health::HealthRegistry::CallTiming::GatewayLate
                                               : health::HealthRegistry::CallTiming::Measured);
    if (m_holdsFailoverSlot) {
        m_holdsFailoverSlot = false;
        m_scope.health.failoverFinished(m_candidate.endpoint);
    }
    return true;
}

void Attempt::stop()
{
    m_phase = Phase::Stopped;
    stopWatching();
    m_call.reset();
}

} // namespace switchyard::execution
