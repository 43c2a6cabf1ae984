#pragma once

#include "upstream/sse_parser.h"

namespace switchyard::execution {

// Whether a stream event, in the shape the client receives it, only opens the answer and carries
// none of it: a chat chunk with the assistant's role alone, Anthropic's `message_start` and
// `ping` and an empty text block's start, the Responses API's `response.created`,
// `response.in_progress`, `response.queued`, an empty message item added and an empty text part
// added. An attempt holds such events until its first content: a provider that fails after them
// has still sent nothing, and another provider may answer instead (docs/resilience.md).
bool isOpeningEvent(const upstream::SseEvent &event);

// Whether a chat chunk's data carries text: a `"content"` key with a non-empty string value
// beside a `"choices"` array, as written with or without a space after the colon. Read without
// parsing, for the first content event of every stream: such a chunk opens nothing.
bool carriesChatText(QByteArrayView data);

} // namespace switchyard::execution
