#include "metrics/gateway_metrics.h"

#include "config/config.h"
#include "health/health_registry.h"
#include "resilience/error_class.h"

#include <algorithm>

namespace switchyard::metrics {

using namespace Qt::StringLiterals;

namespace {

constexpr double kMicrosPerSecond = 1e6;
constexpr int kHighestDegradationLevel = 3;

// The codes of a request refused before any attempt for the gateway's own protection
// (resilience/admission.cpp, and the share of a degraded tier's traffic shed by the execution).
constexpr const char *kAdmissionCodes[] = {"loop_detected", "gateway_overloaded",
                                           "tenant_rate_limited", "tier_degraded"};

constexpr BreakerState kBreakerStates[] = {BreakerState::Closed, BreakerState::Open,
                                           BreakerState::HalfOpen};

// The error classes an attempt can end with, "ok" left out.
QStringList errorClassNames()
{
    QStringList names;
    for (int error = int(resilience::ErrorClass::ConnectFailed);
         error <= int(resilience::ErrorClass::RequestRejected); ++error)
        names.append(resilience::errorClassName(resilience::ErrorClass(error)));
    return names;
}

// How much of [from, to) the span covers; an open span runs to the end.
qint64 overlapMicros(const telemetry::Span &span, qint64 from, qint64 to)
{
    const qint64 start = std::max(span.startMicros, from);
    const qint64 end =
        span.durationMicros < 0 ? to : std::min(span.startMicros + span.durationMicros, to);
    return std::max<qint64>(0, end - start);
}

// The time the gateway itself added to the answer: up to the client's first byte for a stream
// (after it the gateway only relays what the provider sends) and to the end otherwise, minus the
// time inside upstream attempts and deliberate waits (backoff, a 429's cool-down). An attempt's
// time includes the adapter reading its answer as it arrives. Negative when no provider answered.
qint64 addedMicros(const telemetry::Trace &trace)
{
    bool answered = false;
    for (const telemetry::Span &span : trace.spans) {
        if (span.kind == telemetry::SpanKind::Attempt && span.outcome == "success"_L1)
            answered = true;
    }
    if (!answered || trace.isError())
        return -1;
    const qint64 end = trace.streamed && trace.timeToFirstByteMicros >= 0
                           ? trace.timeToFirstByteMicros
                           : trace.totalMicros;
    qint64 elsewhere = 0;
    for (const telemetry::Span &span : trace.spans) {
        if (span.kind == telemetry::SpanKind::Attempt || span.kind == telemetry::SpanKind::Wait)
            elsewhere += overlapMicros(span, 0, end);
    }
    return std::max<qint64>(0, end - elsewhere);
}

// What the duplicate guard did with a request that named a key, by how the request ended: its
// refusals and its replay have their own codes (http/idempotency_guard.h); anything else ran.
QString idempotencyOutcome(const QString &requestOutcome)
{
    if (requestOutcome == u"idempotent_replay"_s)
        return u"replayed"_s;
    if (requestOutcome == u"idempotency_key_in_use"_s)
        return u"in_use"_s;
    if (requestOutcome == u"idempotency_key_reused"_s)
        return u"reused"_s;
    return u"claimed"_s;
}

} // namespace

GatewayMetrics::GatewayMetrics()
    : m_requests(
          "switchyard_requests_total",
          "Finished client requests, by the provider that answered last, the model asked for, "
          "the matched route, the tier and the status class sent to the client.",
          {{"provider", &m_providers},
           {"model", &m_models},
           {"route", &m_routes},
           {"tier", &m_tiers},
           {"status_class", &m_statusClasses}}),
      m_requestDuration("switchyard_request_duration_seconds",
                        "Time from a request's arrival to the end of its answer, streams included.",
                        {{"route", &m_routes}, {"tier", &m_tiers}, {"streamed", &m_streamed}},
                        buckets::requestSeconds),
      m_timeToFirstByte("switchyard_time_to_first_byte_seconds",
                        "Time from a streamed request's arrival to its first event to the client.",
                        {{"route", &m_routes}, {"tier", &m_tiers}}, buckets::firstTokenSeconds),
      m_answers("switchyard_answers_total",
                "Requests answered (status below 400), by the rung of the degradation ladder that "
                "answered: 0 the planned target, 1 a lighter model, 2 a canned answer, 3 the "
                "fail-safe message.",
                {{"degradation_level", &m_degradationLevels}}),
      m_admissionRefusals("switchyard_admission_refusals_total",
                          "Requests refused before any attempt to protect the gateway, by code.",
                          {{"reason", &m_admissionCodes}}),
      m_upstreamErrors("switchyard_upstream_errors_total",
                       "Failed upstream attempts, by provider and error class.",
                       {{"provider", &m_providers}, {"error_class", &m_errorClasses}}),
      m_retries("switchyard_retries_total",
                "Attempts sent to the same provider again, by the error class of the attempt "
                "before.",
                {{"reason", &m_errorClasses}}),
      m_failovers("switchyard_failovers_total",
                  "Attempts sent to another provider, by the error class of the attempt before.",
                  {{"reason", &m_errorClasses}}),
      m_streamContinuations("switchyard_stream_continuations_total",
                            "Streams cut after their first content and continued on another "
                            "provider (continue_streams), by the provider that continued.",
                            {{"provider", &m_providers}}),
      m_idempotency("switchyard_idempotency_total",
                    "Requests that named an Idempotency-Key, by what the duplicate guard did: "
                    "claimed (the request ran), replayed (a kept answer was sent again), in_use "
                    "(409: one with the key still runs), reused (422: the key was used for "
                    "another request).",
                    {{"outcome", &m_idempotencyOutcomes}}),
      m_errorFallbacks("switchyard_error_fallbacks_total",
                       "Requests moved to a fallback model because a provider answered an error "
                       "another model may not have (fallbacks by error), by that error.",
                       {{"reason", &m_fallbackErrors}}),
      m_tokens("switchyard_tokens_total",
               "Tokens the providers reported, by provider, model asked for and type: input and "
               "output, and the parts of input read from (cache_read) and written to "
               "(cache_write) a prompt cache.",
               {{"provider", &m_providers}, {"model", &m_models}, {"type", &m_tokenTypes}}),
      m_addedLatency("switchyard_added_latency_seconds",
                     "Time the gateway added to an answered request: to the first byte for a "
                     "stream, to the end otherwise, minus the time in upstream attempts and "
                     "deliberate waits.",
                     {{"streamed", &m_streamed}}, buckets::gatewaySeconds),
      m_breakerTransitions(
          "switchyard_breaker_transitions_total",
          "Circuit breaker transitions, by provider, the state entered and why.",
          {{"provider", &m_providers}, {"to", &m_breakerStates}, {"reason", &m_breakerCauses}}),
      m_loopLag("switchyard_engine_loop_lag_seconds",
                "How late the engine thread ran a timer that was due, sampled every 100 ms.", {},
                buckets::gatewaySeconds),
      m_genAiDuration("gen_ai_server_request_duration_seconds",
                      "GenAI operation duration at the gateway (OpenTelemetry "
                      "gen_ai.server.request.duration); error_type only on errors.",
                      {{"gen_ai_operation_name", &m_operations},
                       {"gen_ai_provider_name", &m_providers},
                       {"gen_ai_request_model", &m_models},
                       {"error_type", &m_errorTypes}},
                      buckets::requestSeconds),
      m_genAiFirstToken("gen_ai_server_time_to_first_token_seconds",
                        "Time to the first streamed output at the gateway (OpenTelemetry "
                        "gen_ai.server.time_to_first_token).",
                        {{"gen_ai_operation_name", &m_operations},
                         {"gen_ai_provider_name", &m_providers},
                         {"gen_ai_request_model", &m_models}},
                        buckets::firstTokenSeconds),
      m_genAiTokenUsage("gen_ai_client_token_usage",
                        "Tokens per request as the provider reported them (OpenTelemetry "
                        "gen_ai.client.token.usage).",
                        {{"gen_ai_operation_name", &m_operations},
                         {"gen_ai_provider_name", &m_providers},
                         {"gen_ai_request_model", &m_models},
                         {"gen_ai_token_type", &m_tokenTypes}},
                        buckets::tokens)
{
    // Empty names are facts too: no provider tried, no rule matched, no tier chosen.
    m_providers.add(QString(), u"none"_s);
    m_models.add(QString(), u"none"_s);
    m_routes.add(QString(), u"none"_s);
    m_tiers.add(QString(), u"none"_s);

    // Ids equal to status / 100, so recording needs no lookup.
    for (int hundreds = 1; hundreds <= 5; ++hundreds)
        m_statusClasses.add(u"%1xx"_s.arg(hundreds));
    m_streamed.add(u"true"_s);
    for (int level = 1; level <= kHighestDegradationLevel; ++level)
        m_degradationLevels.add(QString::number(level));
    // RequestRecord::operation: gen_ai.operation.name's values the gateway serves.
    for (const QString &operation :
         {u"chat"_s, u"embeddings"_s, u"text_completion"_s, u"count_tokens"_s})
        m_operations.add(operation);
    m_noErrorType = m_errorTypes.add(QString()); // renders empty: no error_type label
    for (const QString &error : errorClassNames()) {
        m_errorClasses.add(error);
        m_errorTypes.add(error);
    }
    for (const char *code : kAdmissionCodes)
        m_admissionCodes.add(QString::fromLatin1(code));
    for (const QString &outcome : {u"claimed"_s, u"replayed"_s, u"in_use"_s, u"reused"_s})
        m_idempotencyOutcomes.add(outcome);
    for (const config::FallbackError error :
         {config::FallbackError::ContextLengthExceeded, config::FallbackError::ContentFiltered})
        m_errorFallbacks.seed({m_fallbackErrors.add(config::fallbackErrorName(error))});
    m_inputTokens = m_tokenTypes.add(u"input"_s);
    m_outputTokens = m_tokenTypes.add(u"output"_s);
    // Only switchyard_tokens_total counts these: gen_ai.client.token.usage keeps to the
    // convention's input and output, its input holding the cache's tokens as well.
    m_cacheReadTokens = m_tokenTypes.add(u"cache_read"_s);
    m_cacheWriteTokens = m_tokenTypes.add(u"cache_write"_s);
    for (const BreakerState state : kBreakerStates)
        m_breakerStates.add(health::breakerStateName(state));
    // Ids equal to the cause's value + 1.
    for (int cause = 0; cause < kBreakerCauseCount; ++cause)
        m_breakerCauses.add(QString::fromLatin1(breakerCauseName(BreakerCause(cause))));

    // Closed sets a dashboard should see at 0 before the first time they happen.
    for (int level = 0; level <= kHighestDegradationLevel; ++level)
        m_answers.seed({level});
    for (int code = 1; code < m_admissionCodes.size(); ++code)
        m_admissionRefusals.seed({code});
    for (int outcome = 1; outcome < m_idempotencyOutcomes.size(); ++outcome)
        m_idempotency.seed({outcome});
    for (int error = 1; error < m_errorClasses.size(); ++error) {
        m_retries.seed({error});
        m_failovers.seed({error});
    }
}

GatewayMetrics::~GatewayMetrics() = default;

void GatewayMetrics::learnNames(const config::Config &config)
{
    for (const config::ProviderConfig &provider : config.providers) {
        m_providers.add(provider.id);
        for (const config::ModelRoute &model : provider.models)
            m_models.add(model.publicName);
    }
    for (const config::RouteRule &rule : config.routing.routes)
        m_routes.add(rule.name);
    for (const config::TierConfig &tier : config.routing.tiers)
        m_tiers.add(tier.name);
}

QString GatewayMetrics::providerLabel(const QString &providerId) const
{
    return m_providers.value(m_providers.find(providerId));
}

QString GatewayMetrics::modelLabel(const QString &model) const
{
    return m_models.value(m_models.find(model));
}

void GatewayMetrics::traceFinished(const telemetry::Trace &trace)
{
    // A shadow call is no client's request: switchyard_shadow_requests_total counts it, from
    // the gateway's own tally, and no request family does.
    if (trace.isShadow())
        return;
    const int provider = m_providers.find(trace.provider);
    const int model = m_models.find(trace.model);
    const int route = m_routes.find(trace.route);
    const int tier = m_tiers.find(trace.tier);
    const int statusClass = trace.status >= 100 && trace.status < 600 ? trace.status / 100 : 0;
    const int operation = m_operations.find(trace.operation);
    const int streamed = trace.streamed ? 1 : 0;
    const double seconds = double(trace.totalMicros - trace.queuedMicros) / kMicrosPerSecond;

    m_requests.add({provider, model, route, tier, statusClass});
    m_requestDuration.observe({route, tier, streamed}, seconds);
    const int errorType = !trace.isError()             ? m_noErrorType
                          : trace.errorClass.isEmpty() ? LabelDictionary::kFallback
                                                       : m_errorTypes.find(trace.errorClass);
    m_genAiDuration.observe({operation, provider, model, errorType}, seconds);
    if (trace.streamed && trace.timeToFirstByteMicros >= 0) {
        const double firstByte =
            double(trace.timeToFirstByteMicros - trace.queuedMicros) / kMicrosPerSecond;
        m_timeToFirstByte.observe({route, tier}, firstByte);
        m_genAiFirstToken.observe({operation, provider, model}, firstByte);
    }
    // Tokens the provider reported: an estimate (RequestRecord::tokensEstimated) is the usage
    // ledger's, not a count a dashboard should add up with the provider's own.
    if (trace.inputTokens >= 0 && !trace.tokensEstimated) {
        m_tokens.add({provider, model, m_inputTokens}, quint64(trace.inputTokens));
        m_genAiTokenUsage.observe({operation, provider, model, m_inputTokens},
                                  double(trace.inputTokens));
    }
    if (trace.outputTokens >= 0 && !trace.tokensEstimated) {
        m_tokens.add({provider, model, m_outputTokens}, quint64(trace.outputTokens));
        m_genAiTokenUsage.observe({operation, provider, model, m_outputTokens},
                                  double(trace.outputTokens));
    }
    // Parts of the input above, so left out with it when the request was estimated.
    if (trace.cacheReadTokens >= 0 && !trace.tokensEstimated)
        m_tokens.add({provider, model, m_cacheReadTokens}, quint64(trace.cacheReadTokens));
    if (trace.cacheWriteTokens >= 0 && !trace.tokensEstimated)
        m_tokens.add({provider, model, m_cacheWriteTokens}, quint64(trace.cacheWriteTokens));
    if (trace.status > 0 && !trace.isError())
        m_answers.add({std::clamp(trace.degradedLevel, 0, kHighestDegradationLevel)});
    if (trace.attempts == 0) {
        if (const int code = m_admissionCodes.find(trace.outcome);
            code != LabelDictionary::kFallback)
            m_admissionRefusals.add({code});
    }

    // Consecutive attempts tell retries from failovers: the same provider again is a retry,
    // another one a failover, and the attempt before says why.
    const telemetry::Span *previous = nullptr;
    for (const telemetry::Span &span : trace.spans) {
        if (span.kind == telemetry::SpanKind::Step && span.name == u"idempotency"_s)
            m_idempotency.add({m_idempotencyOutcomes.find(idempotencyOutcome(trace.outcome))});
        // A continuing attempt's first content is marked `continued` (not `first byte`): the
        // stream went on there, not merely was tried there.
        if (span.kind == telemetry::SpanKind::Event && span.name == u"continued"_s && previous)
            m_streamContinuations.add({m_providers.find(previous->provider)});
        // A fallback by error that found a model: its event names the error that moved it.
        if (span.kind == telemetry::SpanKind::Event && !span.errorClass.isEmpty() &&
            span.name == u"fallback by error"_s)
            m_errorFallbacks.add({m_fallbackErrors.find(span.errorClass)});
        if (span.kind != telemetry::SpanKind::Attempt)
            continue;
        if (!span.errorClass.isEmpty())
            m_upstreamErrors.add(
                {m_providers.find(span.provider), m_errorClasses.find(span.errorClass)});
        if (previous) {
            const SeriesKey reason{m_errorClasses.find(previous->errorClass)};
            if (previous->provider == span.provider)
                m_retries.add(reason);
            else
                m_failovers.add(reason);
        }
        previous = &span;
    }

    if (const qint64 added = addedMicros(trace); added >= 0)
        m_addedLatency.observe({streamed}, double(added) / kMicrosPerSecond);
}

void GatewayMetrics::breakerChanged(const BreakerEvent &event)
{
    if (event.from == event.to)
        return; // an operator action or a probe-health change that left the breaker as it was
    // Ids follow kBreakerStates and BreakerCause, each after the fallback.
    m_breakerTransitions.add(
        {m_providers.find(event.providerId), int(event.to) + 1, int(event.cause) + 1});
}

void GatewayMetrics::loopLagObserved(double seconds)
{
    m_loopLag.observe({}, seconds);
}

QByteArray GatewayMetrics::render(const ScrapeState &state) const
{
    ExpositionWriter writer;
    m_requests.render(writer);
    m_requestDuration.render(writer);
    m_timeToFirstByte.render(writer);

    writer.family("switchyard_requests_in_flight", "Client requests being served now.", "gauge");
    writer.sample("switchyard_requests_in_flight", {}, quint64(std::max(0, state.inFlight)));
    writer.family("switchyard_requests_waiting_to_start",
                  "Client requests read whole that wait for a turn of the engine loop to start "
                  "them; counted in switchyard_requests_in_flight too.",
                  "gauge");
    writer.sample("switchyard_requests_waiting_to_start", {},
                  quint64(std::max(0, state.waitingToStart)));

    m_answers.render(writer);
    m_admissionRefusals.render(writer);
    m_upstreamErrors.render(writer);
    m_retries.render(writer);
    m_failovers.render(writer);
    m_streamContinuations.render(writer);
    m_idempotency.render(writer);
    m_errorFallbacks.render(writer);
    m_tokens.render(writer);
    m_addedLatency.render(writer);

    // One series per state, 1 for the state the breaker is in: a query can sum, alert on or
    // graph any one state without knowing an encoding of states as numbers.
    writer.family("switchyard_breaker_state",
                  "Circuit breaker state per configured provider: 1 for the state it is in, 0 for "
                  "the others.",
                  "gauge");
    for (const ProviderHealth &provider : state.providers) {
        if (!m_providers.contains(provider.id))
            continue; // a registered agent: its id is not a configured name
        for (const BreakerState breakerState : kBreakerStates) {
            QByteArray labels;
            ExpositionWriter::appendLabel(labels, "provider", provider.id);
            ExpositionWriter::appendLabel(labels, "state", health::breakerStateName(breakerState));
            writer.sample("switchyard_breaker_state", labels,
                          quint64(provider.breaker == breakerState ? 1 : 0));
        }
    }
    m_breakerTransitions.render(writer);
    m_loopLag.render(writer);

    const telemetry::ConnectionCounts &connections = state.connections;
    writer.family("switchyard_client_connections", "Client connections open now.", "gauge");
    writer.sample("switchyard_client_connections", {}, quint64(std::max(0, connections.open)));
    writer.family("switchyard_client_connections_accepted_total",
                  "Client connections admitted since start.", "counter");
    writer.sample("switchyard_client_connections_accepted_total", {}, connections.accepted);
    writer.family("switchyard_client_connections_refused_total",
                  "Client connections refused at the door with 503, by the limit that was full.",
                  "counter");
    writer.sample("switchyard_client_connections_refused_total", R"(limit="max_connections")",
                  connections.refusedOverTotal);
    writer.sample("switchyard_client_connections_refused_total",
                  R"(limit="max_connections_per_address")", connections.refusedOverAddress);
    writer.family("switchyard_client_connections_closed_total",
                  "Client connections the gateway closed for want of progress, by reason.",
                  "counter");
    writer.sample("switchyard_client_connections_closed_total", R"(reason="header_timeout")",
                  connections.headerTimeouts);
    writer.sample("switchyard_client_connections_closed_total", R"(reason="body_timeout")",
                  connections.bodyTimeouts);
    writer.sample("switchyard_client_connections_closed_total", R"(reason="keep_alive_idle")",
                  connections.idleClosed);
    writer.sample("switchyard_client_connections_closed_total", R"(reason="refusal_linger")",
                  connections.refusalsCutOff);
    writer.family("switchyard_client_accept_errors_total",
                  "Times accepting a client connection failed, e.g. out of file descriptors.",
                  "counter");
    writer.sample("switchyard_client_accept_errors_total", {}, connections.acceptErrors);
    writer.family("switchyard_client_refusals_draining",
                  "Client connections refused with 503 that are still being drained, answered "
                  "or closed.",
                  "gauge");
    writer.sample("switchyard_client_refusals_draining", {},
                  quint64(std::max(0, connections.refusalsDraining)));
    writer.family("switchyard_client_accept_pauses_total",
                  "Times accepting paused because limits.max_refusals_draining refused "
                  "connections were draining; new connections waited in the listen backlog.",
                  "counter");
    writer.sample("switchyard_client_accept_pauses_total", {}, connections.acceptPauses);

    // The OpenTelemetry export: a collector that is down or slow shows here before anyone misses
    // its spans. Every span of a sampled request is in exactly one outcome, or still queued.
    if (const telemetry::SpanExportCounts &spans = state.spanExport; spans.enabled) {
        writer.family("switchyard_otlp_spans_total",
                      "Spans handed to the OpenTelemetry export, by what became of them.",
                      "counter");
        writer.sample("switchyard_otlp_spans_total", R"(outcome="exported")", spans.exportedSpans);
        writer.sample("switchyard_otlp_spans_total", R"(outcome="dropped")", spans.droppedSpans);
        writer.sample("switchyard_otlp_spans_total", R"(outcome="abandoned")",
                      spans.abandonedSpans);
        writer.family("switchyard_otlp_spans_queued", "Spans waiting for export now.", "gauge");
        writer.sample("switchyard_otlp_spans_queued", {}, spans.queuedSpans);
        writer.family("switchyard_otlp_failed_exports_total",
                      "Export requests to the collector that failed: no answer, a timeout or a "
                      "status other than 2xx.",
                      "counter");
        writer.sample("switchyard_otlp_failed_exports_total", {}, spans.failedExports);
    }

    if (const QueueScrape &queue = state.queue; queue.enabled) {
        writer.family("switchyard_background_queue_depth",
                      "Background responses waiting for a worker, by priority.", "gauge");
        static constexpr const char *kPriorities[] = {"high", "normal", "low"};
        for (int index = 0; index < 3; ++index)
            writer.sample("switchyard_background_queue_depth",
                          QByteArray("priority=\"") + kPriorities[index] + '"',
                          quint64(queue.queued[index]));
        writer.family("switchyard_background_queue_oldest_age_seconds",
                      "How long the oldest waiting background response has waited.", "gauge");
        writer.sample("switchyard_background_queue_oldest_age_seconds", {},
                      queue.oldestQueuedAgeSeconds);
        writer.family("switchyard_background_running",
                      "Background responses a worker is running now.", "gauge");
        writer.sample("switchyard_background_running", {}, quint64(queue.running));
        writer.family("switchyard_background_tasks_total",
                      "Background responses finished since start, by outcome.", "counter");
        static constexpr const char *kOutcomes[] = {"completed", "incomplete", "failed",
                                                    "cancelled", "timed_out"};
        for (int index = 0; index < 5; ++index)
            writer.sample("switchyard_background_tasks_total",
                          QByteArray("outcome=\"") + kOutcomes[index] + '"', queue.outcomes[index]);
        writer.family("switchyard_stored_responses",
                      "Responses kept for retrieval and previous_response_id, background ones "
                      "included.",
                      "gauge");
        writer.sample("switchyard_stored_responses", {}, quint64(queue.stored));
        writer.family("switchyard_stored_responses_bytes",
                      "Bytes the stored responses take, in memory and in the state database.",
                      "gauge");
        writer.sample("switchyard_stored_responses_bytes", {}, quint64(queue.storedBytes));
        writer.family("switchyard_stored_responses_expired_total",
                      "Stored responses dropped since start: past `responses.retention` (age) or "
                      "oldest first to stay within `responses.max_stored_bytes` (bytes).",
                      "counter");
        writer.sample("switchyard_stored_responses_expired_total", "reason=\"age\"",
                      queue.expiredByAge);
        writer.sample("switchyard_stored_responses_expired_total", "reason=\"bytes\"",
                      queue.expiredByBytes);
        if (queue.fleet) {
            writer.family("switchyard_queue_dead_letters",
                          "Background tasks of the fleet in the dead-letter stream now.", "gauge");
            writer.sample("switchyard_queue_dead_letters", {}, quint64(queue.deadLetters));
            writer.family("switchyard_queue_claims_total",
                          "Background tasks this node took over from a node that stopped "
                          "renewing them (after `responses.queue.visibility_timeout`).",
                          "counter");
            writer.sample("switchyard_queue_claims_total", {}, queue.takenOver);
            writer.family("switchyard_queue_dead_lettered_total",
                          "Background tasks this node moved to the dead-letter stream after "
                          "their delivery limit.",
                          "counter");
            writer.sample("switchyard_queue_dead_lettered_total", {}, queue.deadLettered);
        }
    }

    // Always rendered: a dashboard's hit ratio reads 0/0 rather than a missing series before the
    // first route with `cache:`.
    {
        const ResponseCacheScrape &cache = state.responseCache;
        writer.family("switchyard_response_cache_requests_total",
                      "Requests on a route or model with `cache:`, by what the response cache did: "
                      "hit (answered from it), miss (looked up and not found, or refreshed), "
                      "bypass (not the cache's: sampled without `sampled: true`).",
                      "counter");
        writer.sample("switchyard_response_cache_requests_total", R"(result="hit")", cache.hits);
        writer.sample("switchyard_response_cache_requests_total", R"(result="miss")", cache.misses);
        writer.sample("switchyard_response_cache_requests_total", R"(result="bypass")",
                      cache.bypassed);
        writer.family("switchyard_response_cache_evictions_total",
                      "Answers the response cache let go: bound (least recently used, to stay "
                      "within `response_cache`'s entries and bytes) or ttl (expired).",
                      "counter");
        writer.sample("switchyard_response_cache_evictions_total", R"(reason="bound")",
                      cache.evictedByBound);
        writer.sample("switchyard_response_cache_evictions_total", R"(reason="ttl")",
                      cache.expired);
        writer.family("switchyard_response_cache_entries", "Answers the response cache holds.",
                      "gauge");
        writer.sample("switchyard_response_cache_entries", {}, quint64(cache.entries));
        writer.family("switchyard_response_cache_bytes",
                      "Bytes of the answers the response cache holds.", "gauge");
        writer.sample("switchyard_response_cache_bytes", {}, quint64(cache.bytes));
    }

    if (!state.shadows.isEmpty()) {
        writer.family("switchyard_shadow_requests_total",
                      "Shadow calls by route and outcome: sent (the shadow provider answered), "
                      "failed (it was called and did not answer), dropped (never called: the "
                      "gateway was busy).",
                      "counter");
        for (const ShadowScrape &shadow : state.shadows) {
            const std::pair<QByteArrayView, quint64> outcomes[] = {
                {"sent", shadow.sent}, {"failed", shadow.failed}, {"dropped", shadow.dropped}};
            for (const auto &[outcome, count] : outcomes) {
                QByteArray labels;
                ExpositionWriter::appendLabel(labels, "route", shadow.route);
                ExpositionWriter::appendLabel(labels, "outcome", QString::fromLatin1(outcome));
                writer.sample("switchyard_shadow_requests_total", labels, count);
            }
        }
    }

    // The fleet's link to Redis: while it is down every node serves alone from what it holds.
    if (const FleetScrape &fleet = state.fleet; fleet.enabled) {
        writer.family("switchyard_fleet_link_up",
                      "1 while this node's link to the fleet's Redis is up, 0 while it is down.",
                      "gauge");
        writer.sample("switchyard_fleet_link_up", {}, quint64(fleet.linkUp ? 1 : 0));
        writer.family("switchyard_fleet_link_down_since_seconds",
                      "When the link to the fleet's Redis went down, as Unix time; 0 while up.",
                      "gauge");
        writer.sample("switchyard_fleet_link_down_since_seconds", {},
                      double(fleet.linkDownSinceMs) / 1000.0);
        writer.family("switchyard_fleet_nodes",
                      "Live nodes of the fleet as this node last listed "
                      "them, itself included.",
                      "gauge");
        writer.sample("switchyard_fleet_nodes", {}, quint64(fleet.liveNodes));
        writer.family("switchyard_fleet_redis_commands_total",
                      "Commands this node sent to the fleet's Redis, and those that failed "
                      "without an answer (down, lost, timed out).",
                      "counter");
        writer.sample("switchyard_fleet_redis_commands_total", R"(outcome="sent")",
                      fleet.commandsSent);
        writer.sample("switchyard_fleet_redis_commands_total", R"(outcome="failed")",
                      fleet.commandsFailed);
    }

    m_genAiDuration.render(writer);
    m_genAiFirstToken.render(writer);
    m_genAiTokenUsage.render(writer);
    return writer.take();
}

} // namespace switchyard::metrics
