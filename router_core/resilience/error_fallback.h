#pragma once

#include "config/config.h"
#include "upstream/sse_parser.h"

#include <QByteArrayView>
#include <optional>

namespace switchyard::resilience {

// Recognises the errors a client cannot fix by retrying but another model may not have
// (docs/resilience.md, "Fallbacks by error"), in each provider kind's own words. Pure functions of
// what the provider sent: the executor decides whether a fallback applies.

// Which FallbackError a provider's error answer (`status` 4xx, `body` as the provider sent it)
// is, if any. openai (and every server speaking its protocol: vLLM, Ollama, llama.cpp, Azure,
// simulated) by `error.code`, `error.type`, Azure's `error.innererror.code` and the message;
// anthropic by `error.type` invalid_request_error and its message; mapped agents by the words of
// the whole body. Rate limits, authentication and unknown paths are never one of them.
std::optional<config::FallbackError> recognizeErrorAnswer(config::ProviderKind kind, int status,
                                                          QByteArrayView body);

// A whole 2xx answer that the provider's content filter stopped before any content: a chat
// completion whose choices all end with finish_reason `content_filter` with no text, tool call
// or refusal; an Anthropic message with stop_reason `refusal` and no text or tool use; a
// Responses answer `incomplete` for `content_filter` with no output text.
bool isFilteredWithoutContent(QByteArrayView answer);

// Whether an answer or event names the content filter as its end, read without parsing it: the
// word `content_filter`, or Anthropic's stop_reason `refusal` (the value after `:`, never a key
// such as a chat delta's `"refusal":null`). Every answer isFilteredWithoutContent takes and every
// event filterEventRole calls FilteredEnd mentions it; the rest, nearly every answer, are not
// parsed at all.
bool mentionsContentFilter(QByteArrayView json);

// What one streamed event says while no content has reached the client.
enum class FilterEventRole {
    Other,       // content, or anything else: the answer is not an empty filtered one
    Neutral,     // says nothing of the answer: [DONE], a usage-only chunk, a block's or
                 // message's stop, a ping
    FilteredEnd, // the answer ends here, stopped by the content filter, with no content
};
FilterEventRole filterEventRole(const upstream::SseEvent &event);

} // namespace switchyard::resilience
