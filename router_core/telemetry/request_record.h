#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QMetaType>
#include <QString>

namespace switchyard::telemetry {

// The outcome of a shadow call let go so that live requests had room (docs/routing.md, "Shadow
// traffic"): it says nothing of the shadow's provider.
inline constexpr char kShadowLetGoOutcome[] = "shadow_let_go";

// The one "request finished" record: everything said about a request once it is over. Traces,
// logs, metrics, the OpenTelemetry export and the console's request list all read this one
// record, filled once by the execution (or by the refusal that ended the request before it);
// nothing recomputes it. A Trace is this record plus its spans.
struct RequestRecord {
    quint64 sequence = 0; // 1 for the engine's first finished request, +1 for each after
    QByteArray requestId;
    QByteArray traceId;      // W3C, from the client's traceparent when it sent a valid one
    QByteArray spanId;       // the request's own span, 16 hex digits
    QByteArray parentSpanId; // the client's span from its traceparent; empty otherwise
    // Shadow traffic (docs/routing.md, "Shadow traffic"), the two ends of one link. On a shadow
    // call: the live request it mirrors, whose trace it shares (parentSpanId is the live
    // request's span); a shadow's cost is recorded but counts against no budget or limit. On a
    // live request: its shadow call's request id, when one was sent. Empty otherwise.
    QByteArray shadowOf;
    QByteArray shadowRequestId;
    QDateTime startedAtUtc;

    // gen_ai.operation.name: "chat", "embeddings", "text_completion"; the Responses API is
    // "chat" too, with `endpoint` telling them apart.
    QString operation = QStringLiteral("chat");
    QString endpoint; // the path the client called: "/v1/chat/completions"
    QString tenant;   // empty: none given
    QString keyId;    // the client API key's id that authenticated the request; empty without keys
    QString model;    // as the client asked for it
    QString route;    // the rule that decided; empty: the default route
    QString tier;     // empty: none
    QString provider; // the last provider tried; empty when none was
    QString upstreamModel;
    bool streamed = false;

    int status = 0;
    QString outcome;    // "ok", or the error code the client saw
    QString errorClass; // the last failed attempt's class (a closed set); empty when none failed
    int attempts = 0;
    int degradedLevel = 0; // the ladder's rung that answered: 0 is the chosen model itself

    qint64 totalMicros = 0;
    qint64 timeToFirstByteMicros = -1; // a stream's first event to the client; -1 for none
    // A background response's wait for a worker, inside totalMicros and timeToFirstByteMicros
    // (both count from when the task was accepted). Latency figures leave it out: they measure
    // the run, and a full queue is not a slow provider.
    qint64 queuedMicros = 0;
    // From the provider's usage when it reported one; otherwise estimated from the prompt's and
    // the relayed answer's text (tokensEstimated set). 0 when no provider answered; -1 for a
    // request refused before it ran.
    qint64 inputTokens = -1;
    qint64 outputTokens = -1;
    bool tokensEstimated = false;
    // Parts of inputTokens the provider said it read from and wrote to its prompt cache; -1 when
    // it said nothing of them (an estimate never guesses them).
    qint64 cacheReadTokens = -1;
    qint64 cacheWriteTokens = -1;
    // What the request cost by the price table in force when it finished (usage/pricing.h), set
    // as it is recorded: the trace, the usage ledger and the console read this one price.
    double costUsd = 0.0;
    double cacheSavedUsd = 0.0; // negative when cache writes cost more than the reads saved
    bool priced = false;        // the model has a price; an unpriced request costs 0
    // The response cache (docs/operations.md): "hit" for a request answered from it, "miss" for
    // one it looked up and did not have (or was told to refresh); empty when it was not asked.
    QString responseCache;
    // A hit's saving: what the answer cost when it was made. 0 otherwise.
    double responseCacheSavedUsd = 0.0;
    QString finishReason; // as the answer said it: OpenAI's word, or Anthropic's
                          // stop_reason for a Messages answer passed through

    bool isError() const { return status >= 400; }
    bool isShadow() const { return !shadowOf.isEmpty(); }
    // "2xx", "4xx", "5xx": the closed set metrics and filters use.
    QString statusClass() const
    {
        return status <= 0 ? QStringLiteral("none") : QStringLiteral("%1xx").arg(status / 100);
    }

    bool operator==(const RequestRecord &) const = default;
};

} // namespace switchyard::telemetry

Q_DECLARE_METATYPE(switchyard::telemetry::RequestRecord)
