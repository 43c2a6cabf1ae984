#include "http/chat_exchange.h"

#include "health/health_registry.h"
#include "telemetry/trace.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <simdjson.h>

Q_DECLARE_LOGGING_CATEGORY(lcGateway)

namespace switchyard::http {

using health::CallOutcome;
using upstream::TransportError;

namespace {

// Back-pressure watermarks for a streamed answer waiting in the client socket's buffer.
constexpr qint64 kPauseUpstreamAboveBytes = 1024 * 1024;
constexpr qint64 kResumeUpstreamBelowBytes = 256 * 1024;

// After [DONE] the answer is whole; the provider's end of the response normally follows in the
// same read. If it does not, the client is not kept waiting longer than this for it.
constexpr std::chrono::milliseconds kEndAfterDoneGrace{500};

// An upstream answer larger than this is a fault, not something to hold in memory.
constexpr qsizetype kMaxUpstreamAnswerBytes = 64 * 1024 * 1024;

ApiError upstreamError(int status, const QString &code, const QString &message)
{
    return ApiError{status, message, QStringLiteral("upstream_error"), {}, code, {}};
}

// The message of an OpenAI-shaped error body, or a short excerpt of whatever the body was.
QString upstreamMessage(const QByteArray &body)
{
    const QJsonDocument document = QJsonDocument::fromJson(body);
    const QJsonValue error = document.object().value(QStringLiteral("error"));
    if (error.isObject()) {
        const QString message = error.toObject().value(QStringLiteral("message")).toString();
        if (!message.isEmpty())
            return message;
    }
    if (error.isString())
        return error.toString();
    const QString text = QString::fromUtf8(body.left(200)).simplified();
    return text.isEmpty() ? QStringLiteral("no details given") : text;
}

bool isJsonObject(const QByteArray &body)
{
    thread_local simdjson::dom::parser parser;
    simdjson::dom::element root;
    const simdjson::padded_string padded(body.constData(), size_t(body.size()));
    return parser.parse(padded).get(root) == simdjson::SUCCESS &&
           root.type() == simdjson::dom::element_type::OBJECT;
}

QUrl chatCompletionsUrl(const QUrl &baseUrl)
{
    QUrl url = baseUrl;
    QString path = url.path();
    if (path.endsWith(QLatin1Char('/')))
        path.chop(1);
    url.setPath(path + QStringLiteral("/chat/completions"));
    return url;
}

QString millisecondsText(std::chrono::milliseconds duration)
{
    return QStringLiteral("%1 ms").arg(duration.count());
}

} // namespace

ChatExchange::ChatExchange(ExchangeServices services, std::shared_ptr<const config::Config> config,
                           ChatRequest request, QByteArray body, routing::RouteDecision decision,
                           telemetry::TraceBuilder trace, ResponseWriter writer, QObject *parent)
    : QObject(parent), m_services(services), m_config(std::move(config)),
      m_request(std::move(request)), m_body(std::move(body)), m_decision(std::move(decision)),
      m_trace(std::move(trace)), m_writer(std::move(writer))
{
    m_deadline.setSingleShot(true);
    connect(&m_deadline, &QTimer::timeout, this, &ChatExchange::onTimeout);
}

ChatExchange::~ChatExchange() = default;

QString ChatExchange::providerId() const
{
    return m_decision.candidates.first().providerId;
}

HeaderList ChatExchange::responseHeaders() const
{
    const telemetry::Trace &trace = m_trace.trace();
    return identityHeaders(trace.requestId, trace.traceId, providerId().toUtf8());
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

    const routing::RouteCandidate &candidate = m_decision.candidates.first();
    const config::ProviderConfig &provider = m_config->providers[candidate.providerIndex];
    m_trace.trace().model = m_request.model;
    m_trace.trace().provider = provider.id;
    m_trace.trace().streamed = m_request.stream;
    m_trace.pointEvent(QStringLiteral("choice"), m_decision.reason());

    upstream::UpstreamRequest call;
    call.url = chatCompletionsUrl(provider.baseUrl);
    call.body = candidate.upstreamModel == m_request.model
                    ? m_body
                    : m_request.withModel(m_body, candidate.upstreamModel);
    call.headers = {{"Content-Type", "application/json"},
                    {"Accept", m_request.stream ? "text/event-stream" : "application/json"},
                    {"x-request-id", m_trace.trace().requestId},
                    {"traceparent", "00-" + m_trace.trace().traceId + "-" +
                                        telemetry::newTraceId().left(16) + "-01"}};
    if (!provider.apiKey.isEmpty())
        call.headers.append({"Authorization", "Bearer " + provider.apiKey});
    call.connectTimeout = m_config->timeouts.connect;
    if (!m_request.stream)
        call.totalTimeout = m_config->timeouts.total;
    else
        m_deadline.start(m_config->timeouts.firstToken);

    m_services.health.callStarted(candidate.providerIndex);
    m_attemptSpan = m_trace.openSpan(QStringLiteral("upstream attempt"),
                                     QStringLiteral("%1 %2").arg(provider.id, call.url.toString()));
    m_callClock.start();
    m_call = m_services.transport.start(call, this);
}

void ChatExchange::onResponseHead(const upstream::UpstreamResponseHead &head)
{
    m_head = head;
    m_trace.pointEvent(QStringLiteral("response head"), QStringLiteral("HTTP %1").arg(head.status));
    m_relayingEvents = m_request.stream && head.status >= 200 && head.status < 300 &&
                       head.header("content-type").startsWith("text/event-stream");
}

void ChatExchange::onResponseBody(QByteArrayView bytes)
{
    if (m_phase == Phase::Done)
        return;
    if (!m_relayingEvents) {
        m_answer.append(bytes);
        if (m_answer.size() > kMaxUpstreamAnswerBytes) {
            failCall(upstreamError(502, QStringLiteral("upstream_answer_too_large"),
                                   QStringLiteral("Provider `%1` sent an answer larger than %2 "
                                                  "bytes.")
                                       .arg(providerId())
                                       .arg(kMaxUpstreamAnswerBytes)),
                     QStringLiteral("answer too large"));
        }
        return;
    }

    QList<upstream::SseEvent> events;
    if (!m_sse.feed(bytes, events)) {
        failCall(upstreamError(502, QStringLiteral("invalid_upstream_response"),
                               QStringLiteral("Provider `%1` sent an event-stream line longer "
                                              "than %2 bytes.")
                                   .arg(providerId())
                                   .arg(upstream::SseParser::kMaxLineBytes)),
                 QStringLiteral("event-stream line too long"));
        return;
    }
    if (m_sse.takeActivity() && m_phase == Phase::Streaming && !m_upstreamPaused)
        m_deadline.start(m_config->timeouts.idle); // keep-alive comments count as activity
    if (events.isEmpty())
        return;

    if (m_phase == Phase::WaitingForAnswer) {
        m_phase = Phase::Streaming;
        m_timeToFirstTokenMs = m_callClock.nsecsElapsed() / 1e6;
        m_trace.pointEvent(
            QStringLiteral("first byte"),
            QStringLiteral("first event after %1 ms").arg(m_timeToFirstTokenMs, 0, 'f', 1));
        m_writer.beginEventStream(responseHeaders());
    }
    // All events of one upstream read go out as one chunk: one write, one syscall.
    QByteArray wire;
    for (const upstream::SseEvent &event : events) {
        if (m_sawDone)
            break; // nothing may follow [DONE]
        wire.append(event.toWire());
        m_sawDone = event.isDone();
    }
    // After [DONE] only the end of the stream follows, normally in the same upstream read.
    m_writer.writeStreamData(wire, !m_sawDone);
    if (m_phase == Phase::Done)
        return; // the write found the client gone
    if (m_sawDone) {
        m_answerCompleteMs = m_callClock.nsecsElapsed() / 1e6;
        m_deadline.start(std::min(kEndAfterDoneGrace, m_config->timeouts.idle));
    } else if (m_call && !m_upstreamPaused && m_writer.pendingBytes() > kPauseUpstreamAboveBytes) {
        // The client reads slower than the provider writes. Stop reading the provider rather
        // than hold its whole answer in memory. The deadline now watches the client: one that
        // takes nothing for an idle period is not coming back for the rest.
        m_upstreamPaused = true;
        ++m_pauseCount;
        m_deadline.start(m_config->timeouts.idle);
        m_call->pauseReceiving();
    } else if (!m_upstreamPaused) {
        m_deadline.start(m_config->timeouts.idle);
    }
}

void ChatExchange::onClientDrained()
{
    if (!m_upstreamPaused || m_phase == Phase::Done)
        return;
    if (m_writer.pendingBytes() > kResumeUpstreamBelowBytes) {
        m_deadline.start(m_config->timeouts.idle); // the client is slow, not stalled
        return;
    }
    m_upstreamPaused = false;
    m_deadline.start(m_config->timeouts.idle);
    if (m_call)
        m_call->resumeReceiving();
}

void ChatExchange::onFinished(const upstream::UpstreamResult &result)
{
    m_deadline.stop();
    if (m_phase == Phase::Done)
        return;
    const QString provider = providerId();

    if (m_relayingEvents && m_sawDone) {
        // [DONE] arrived, so the answer is whole even if the provider's connection then broke
        // before the response's own end: the client gets a clean end, and the call counts.
        m_finishing = true;
        m_writer.endEventStream();
        complete(CallOutcome::Success, 200, QStringLiteral("ok"));
        return;
    }
    if (result.error != TransportError::None) {
        const bool timedOut = result.error == TransportError::ConnectTimeout ||
                              result.error == TransportError::TotalTimeout;
        if (timedOut) {
            failCall(upstreamError(504, QStringLiteral("upstream_timeout"),
                                   QStringLiteral("Provider `%1` did not answer in time: %2.")
                                       .arg(provider, result.description)),
                     result.description);
        } else if (result.error == TransportError::ConnectFailed) {
            failCall(upstreamError(502, QStringLiteral("upstream_unavailable"),
                                   QStringLiteral("Provider `%1` could not be reached: %2.")
                                       .arg(provider, result.description)),
                     result.description);
        } else if (m_phase == Phase::Streaming) {
            // Events already reached the client, which needs to know one thing: the answer it
            // was reading is incomplete. Same code as a stream that ended without [DONE].
            failCall(upstreamError(502, QStringLiteral("upstream_stream_interrupted"),
                                   QStringLiteral("Provider `%1` broke off the stream: %2; the "
                                                  "answer is incomplete.")
                                       .arg(provider, result.description)),
                     result.description);
        } else {
            failCall(upstreamError(502, QStringLiteral("upstream_connection_lost"),
                                   QStringLiteral("Provider `%1` broke off the answer: %2.")
                                       .arg(provider, result.description)),
                     result.description);
        }
        return;
    }

    if (m_relayingEvents) {
        failCall(upstreamError(502, QStringLiteral("upstream_stream_interrupted"),
                               QStringLiteral("Provider `%1` ended the stream before `data: "
                                              "[DONE]`; the answer is incomplete.")
                                   .arg(provider)),
                 QStringLiteral("stream ended without [DONE]"));
        return;
    }
    if (m_head.status >= 200 && m_head.status < 300)
        relayWholeAnswer();
    else
        relayUpstreamError();
}

void ChatExchange::relayWholeAnswer()
{
    const QString provider = providerId();
    // An answer arrived but cannot be used: counted as quality, never as a call failure.
    const auto refuseUnusable = [this](const QString &message, const QString &traceDetail) {
        const ApiError error =
            upstreamError(502, QStringLiteral("invalid_upstream_response"), message);
        m_finishing = true;
        m_writer.sendError(error, responseHeaders());
        complete(CallOutcome::Unusable, error.status, error.code, traceDetail);
    };
    if (m_request.stream) {
        refuseUnusable(QStringLiteral("Provider `%1` answered a streamed request without an "
                                      "event stream.")
                           .arg(provider),
                       QStringLiteral("no event stream"));
        return;
    }
    if (!isJsonObject(m_answer)) {
        refuseUnusable(
            QStringLiteral("Provider `%1` sent an answer that is not valid JSON.").arg(provider),
            QStringLiteral("answer is not valid JSON"));
        return;
    }
    m_finishing = true;
    m_writer.sendWhole(m_head.status, responseHeaders(), "application/json", m_answer);
    complete(CallOutcome::Success, m_head.status, QStringLiteral("ok"));
}

void ChatExchange::relayUpstreamError()
{
    const int status = m_head.status;
    const QString provider = providerId();
    const QString detail = upstreamMessage(m_answer);
    ApiError error;
    CallOutcome outcome = CallOutcome::CallFailure;
    switch (status) {
    case 400:
    case 401:
    case 403:
    case 404:
    case 413:
    case 422:
        // The request's own fault: the client learns what the provider said; no retry helps.
        error = ApiError{status,
                         QStringLiteral("Provider `%1` rejected the request (HTTP %2): %3")
                             .arg(provider)
                             .arg(status)
                             .arg(detail),
                         status == 401 || status == 403 ? QStringLiteral("authentication_error")
                                                        : QStringLiteral("invalid_request_error"),
                         {},
                         QStringLiteral("upstream_rejected"),
                         {}};
        outcome = CallOutcome::RequestFault;
        break;
    case 429:
        error = ApiError{
            429,
            QStringLiteral("Provider `%1` is rate limiting requests: %2").arg(provider, detail),
            QStringLiteral("rate_limit_error"),
            {},
            QStringLiteral("upstream_rate_limited"),
            m_head.header("retry-after")};
        break;
    case 503:
    case 504:
        // Both mean something to a client (come back later, too slow); pass them through.
        error = upstreamError(status, QStringLiteral("upstream_error"),
                              QStringLiteral("Provider `%1` failed with HTTP %2: %3")
                                  .arg(provider)
                                  .arg(status)
                                  .arg(detail));
        error.retryAfter = m_head.header("retry-after");
        break;
    default:
        error = upstreamError(502, QStringLiteral("upstream_error"),
                              QStringLiteral("Provider `%1` failed with HTTP %2: %3")
                                  .arg(provider)
                                  .arg(status)
                                  .arg(detail));
        break;
    }
    m_finishing = true;
    m_writer.sendError(error, responseHeaders());
    complete(outcome, error.status, error.code, QStringLiteral("HTTP %1").arg(status));
}

void ChatExchange::onTimeout()
{
    if (m_phase == Phase::Done)
        return;
    if (m_sawDone) {
        // The answer is whole; only the provider's end of the response never came. Nothing may
        // follow [DONE], least of all an error about an answer that is complete.
        m_call.reset();
        m_finishing = true;
        m_writer.endEventStream();
        complete(CallOutcome::Success, 200, QStringLiteral("ok"));
        return;
    }
    if (m_upstreamPaused) {
        // The client has taken nothing for a whole idle period while its stream waits: it
        // holds a provider slot and will not free it. Let both go.
        m_call.reset();
        m_finishing = true;
        if (QTcpSocket *socket = m_writer.socket())
            socket->abort();
        complete(CallOutcome::Cancelled, 499, QStringLiteral("client_stalled"));
        return;
    }
    const bool waitingForFirst = m_phase == Phase::WaitingForAnswer;
    const auto limit = waitingForFirst ? m_config->timeouts.firstToken : m_config->timeouts.idle;
    const QString what = waitingForFirst ? QStringLiteral("no first token within %1")
                                         : QStringLiteral("no data for %1 between chunks");
    m_call.reset(); // stop the upstream request now
    failCall(upstreamError(504, QStringLiteral("upstream_timeout"),
                           QStringLiteral("Provider `%1` timed out: %2.")
                               .arg(providerId(), what.arg(millisecondsText(limit)))),
             what.arg(millisecondsText(limit)));
}

void ChatExchange::onClientDisconnected()
{
    // While an ending path writes the final answer (or drops a stalled client), a disconnect it
    // causes must not replace the outcome that path records.
    if (m_phase == Phase::Done || m_finishing)
        return;
    m_call.reset();
    complete(CallOutcome::Cancelled, 499, QStringLiteral("client_disconnected"));
}

void ChatExchange::failCall(ApiError error, const QString &traceDetail)
{
    m_call.reset();
    m_finishing = true;
    if (m_writer.headersSent())
        sendStreamError(error);
    else
        m_writer.sendError(error, responseHeaders());
    complete(CallOutcome::CallFailure, error.status, error.code, traceDetail);
}

void ChatExchange::sendStreamError(const ApiError &error)
{
    // After the first byte the status line is gone: the failure becomes an event the OpenAI SDKs
    // raise as an error, and the stream ends without [DONE] so it never looks complete.
    upstream::SseEvent event;
    event.data = error.toJson();
    m_writer.writeStreamData(event.toWire());
    m_writer.endEventStream();
}

void ChatExchange::complete(CallOutcome outcome, int status, const QString &outcomeCode,
                            const QString &failureDescription)
{
    if (m_phase == Phase::Done)
        return;
    m_phase = Phase::Done;
    m_deadline.stop();
    // A stream's latency ends at [DONE]: waiting for the provider's end of the response after
    // it is not the provider answering.
    const double latencyMs = m_answerCompleteMs >= 0 ? m_answerCompleteMs
                             : m_callClock.isValid() ? m_callClock.nsecsElapsed() / 1e6
                                                     : 0.0;
    if (m_attemptSpan >= 0) {
        m_trace.closeSpan(m_attemptSpan, failureDescription);
        m_services.health.callFinished(m_decision.candidates.first().providerIndex, outcome,
                                       latencyMs, m_timeToFirstTokenMs, failureDescription);
    }
    if (m_pauseCount > 0) {
        m_trace.pointEvent(
            QStringLiteral("client back-pressure"),
            QStringLiteral("provider paused %1 time(s) for a slow client").arg(m_pauseCount));
    }
    m_trace.pointEvent(QStringLiteral("completion"), outcomeCode);
    m_services.traces.add(m_trace.finish(status, outcomeCode));
    qCDebug(lcGateway) << "request" << requestId() << "finished" << status << outcomeCode;
    emit finished();
}

} // namespace switchyard::http
