#pragma once

#include "protocol/openai_error.h"
#include "protocol/operation.h"
#include "upstream/sse_parser.h"
#include "upstream/upstream_transport.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <algorithm>
#include <memory>
#include <optional>
#include <variant>

namespace switchyard::config {
struct ProviderConfig;
}

namespace switchyard::upstream::adapters {

// The adapter seam (docs/adapters.md): the executor speaks OpenAI's chat protocol only, and one
// adapter per provider kind translates to and from what the provider speaks. An adapter is a
// small stateless object over a provider's config; a stream's state lives in its translator.

// Token counts of one answer; -1 where the provider did not say.
struct Usage {
    qint64 promptTokens = -1;
    qint64 completionTokens = -1;
    // Prompt-cache counts, each a part of promptTokens (OpenAI's cached_tokens is inside
    // prompt_tokens; Anthropic's cache reads and writes come on top of input_tokens and are
    // added in when read, so nothing is counted twice).
    qint64 cachedPromptTokens = -1;     // read from a prompt cache
    qint64 cacheWritePromptTokens = -1; // written to a prompt cache (Anthropic's cache creation)

    bool isKnown() const { return promptTokens >= 0 || completionTokens >= 0; }
    qint64 totalTokens() const
    {
        return std::max<qint64>(promptTokens, 0) + std::max<qint64>(completionTokens, 0);
    }
};

// What the executor knows about one attempt when it builds the provider's request.
struct AdapterRequest {
    // What this attempt asks the provider: chat, or an operation passed through as it is to a
    // provider that speaks it (config::ProviderConfig::serves).
    protocol::Operation operation = protocol::Operation::Chat;
    QByteArray openAiBody;   // the client's request in the operation's shape: for chat the chat
                             // request, validated by parseChatRequest
    QString bodyModel;       // the model named in openAiBody: the client's, or one given since
    QString upstreamModel;   // RouteCandidate::upstreamModel: the name the provider is sent
    bool stream = false;     // ChatRequest::stream: the client asked for a stream
    QByteArray requestId;    // names answers that carry no id of their own
    qint64 createdSecs = 0;  // the answer's `created` where the provider gives none
    HeaderList extraHeaders; // x-request-id, traceparent...: sent to every kind as they are
    // For an operation passed through: the client's own protocol headers (anthropic-version,
    // anthropic-beta), names lower-cased, for the adapter to merge with the provider's.
    HeaderList clientProtocolHeaders;
};

// What translating the answer needs to know about the request, settled when it was built.
struct AnswerShape {
    protocol::Operation operation = protocol::Operation::Chat; // AdapterRequest::operation
    QString upstreamModel;        // the `model` of answers that name none
    QByteArray answerId;          // the `id` of answers that carry none
    qint64 createdSecs = 0;       // the `created` of answers that carry none
    bool clientStreams = false;   // the client asked for a stream
    bool upstreamStreams = false; // the provider was asked for one (see ProviderAdapter::canStream)
    bool includeUsage = false;    // stream_options.include_usage: end the stream with usage
                                  // (when the provider reported any: counts are never invented)
    bool legacyFunctions = false; // the client used `functions`: answer with `function_call`
};

struct PreparedRequest {
    UpstreamRequest request; // url, method, headers, body; the executor sets the timeouts
    AnswerShape shape;       // keep it for the attempt: every translation below takes it
    // request.body is openAiBody with only its model set to upstreamModel: the executor may keep
    // it instead of openAiBody, and give it another model for a later attempt.
    bool bodyIsOpenAiBodyRenamed = false;
};

// A provider's complete (non-streamed) answer, as the client must see it.
struct AnswerTranslation {
    enum class Kind {
        Ok,       // openAiJson is the chat.completion to send with status 200
        Unusable, // the answer arrived but cannot be used: quality, not a call failure
    };
    Kind kind = Kind::Ok;
    QByteArray openAiJson;
    protocol::ApiError error; // Unusable: 502 `invalid_upstream_response` saying what was wrong
    Usage usage;
};

// A failure found inside a stream.
struct StreamFailure {
    enum class Kind {
        ProviderError, // the provider said so (an error event); classify `error.status` as for
                       // an HTTP answer with that status
        Unusable,      // an event that cannot be read: quality, not a call failure
    };
    Kind kind = Kind::ProviderError;
    protocol::ApiError error;
};

// What one upstream event (or the end of the stream) turns into.
struct StreamOutput {
    QList<SseEvent> events; // OpenAI chunk events to send, in order; the last is [DONE] when
                            // `completed` is set
    bool completed = false; // the answer is whole: nothing more may be sent after `events`
    std::optional<StreamFailure> failure; // send events first, then the failure as an error event
};

// Turns one provider's event stream into OpenAI chat.completion.chunk events. One per attempt.
class StreamTranslator {
public:
    virtual ~StreamTranslator() = default;
    // One event as upstream::SseParser produced it. After `completed` or a failure, further
    // events give nothing.
    virtual StreamOutput feed(const SseEvent &event) = 0;
    // The provider's response ended. `completed` is false when the answer was cut short.
    virtual StreamOutput finish() = 0;
    // Tokens reported so far; whole once the stream completed.
    virtual Usage usage() const = 0;
};

class ProviderAdapter {
public:
    virtual ~ProviderAdapter() = default;

    // The provider's request for this attempt, or a 400 for a request this kind of provider
    // cannot serve (the client's fault: nothing was sent, no health outcome).
    virtual std::variant<PreparedRequest, protocol::ApiError>
    buildRequest(const AdapterRequest &request) const = 0;

    // A 2xx answer to a request that was not streamed upstream.
    virtual AnswerTranslation translateAnswer(const AnswerShape &shape,
                                              const QByteArray &body) const = 0;

    // A 2xx event-stream answer. Only called when shape.upstreamStreams is set.
    virtual std::unique_ptr<StreamTranslator> startStream(const AnswerShape &shape) const = 0;

    // A non-2xx answer as the client's error. `headers` are the response's, names lower-cased.
    virtual protocol::ApiError translateError(int status, const HeaderList &headers,
                                              QByteArrayView body) const = 0;

    // False when the provider cannot stream: a streamed client request is then sent unstreamed
    // (shape.upstreamStreams false) and its answer replayed with completionAsChunks().
    virtual bool canStream() const { return true; }

    // How this provider's stream of the attempt's operation says it is complete, in the words
    // of the error a client gets when a stream ends without it: "`data: [DONE]`" for OpenAI's
    // chat protocol.
    virtual QString streamEnd(const AnswerShape &) const
    {
        return QStringLiteral("`data: [DONE]`");
    }
};

// The adapter for a provider's kind: openai and simulated pass through, anthropic translates to
// the Messages API, mapped follows its mapping. The adapter keeps a reference to `provider`,
// which must outlive it (the config snapshot the request holds does).
std::unique_ptr<ProviderAdapter> adapterFor(const config::ProviderConfig &provider);

// A chat request asking a provider to continue an assistant answer another provider was cut off
// in (config::ProviderConfig::continuesAnswers).
struct ContinuationBody {
    QByteArray body;
    // White space was left off the partial answer's end: Anthropic refuses a final assistant
    // message that ends in it. The continuation's own leading white space is then dropped.
    bool trimmedTail = false;
};
// `chatBody` with `partial` as its last message, the assistant's, written the way `provider`
// continues one: Anthropic (and the simulator) continue a final assistant message as it is;
// an openai provider is asked in vLLM's words, `continue_final_message` without a generation
// prompt (which would open a new turn instead).
ContinuationBody continuationBody(const config::ProviderConfig &provider,
                                  const QByteArray &chatBody, const QString &partial);

// The error a non-2xx provider answer becomes, the same for every kind: the request's own faults
// (400, 401, 403, 404, 413, 422) keep their status, 429 keeps Retry-After, 503 and 504 pass
// through, anything else is 502. `detail` is the provider's own message.
protocol::ApiError providerHttpError(const QString &providerId, int status, const QString &detail,
                                     const QByteArray &retryAfter);

// An error the provider reported inside a stream, classified as an HTTP answer with `status`
// would be (Anthropic's overloaded_error as 529, a generic one as 502).
protocol::ApiError providerStreamError(const QString &providerId, int status,
                                       const QString &detail);

// The 502 for an answer that arrived but cannot be used.
protocol::ApiError unusableAnswer(const QString &message);

// A whole chat.completion replayed as chunk events ending with [DONE], for a streamed client
// request served by a provider that answered whole.
QList<SseEvent> completionAsChunks(const AnswerShape &shape, QByteArrayView completionJson);

} // namespace switchyard::upstream::adapters
