#include "execution/opening_events.h"

#include "protocol/byte_search.h"

#include <optional>
#include <simdjson.h>
#include <string>
#include <string_view>

namespace switchyard::execution {

namespace {

using simdjson::SUCCESS;
using simdjson::dom::element;
using simdjson::dom::object;

// A value that says nothing: null or an empty string.
bool emptyValue(element value)
{
    std::string_view text;
    return value.is_null() || (value.get_string().get(text) == SUCCESS && text.empty());
}

// A field that says nothing: absent, null or an empty string.
bool emptyText(simdjson::simdjson_result<element> field)
{
    element value;
    return field.get(value) != SUCCESS || emptyValue(value);
}

// The field as a string; empty when it is absent or not one.
std::string_view textOf(simdjson::simdjson_result<element> field)
{
    std::string_view text;
    return field.get_string().get(text) == SUCCESS ? text : std::string_view();
}

// By the event's type, from its `event:` line or the `type` field of its data (absent when the
// data is not a JSON object).
bool openingByType(std::string_view type, const std::optional<object> &data)
{
    if (type == "ping" || type == "message_start" || type == "response.created" ||
        type == "response.in_progress" || type == "response.queued")
        return true;
    if (!data)
        return false;
    if (type == "content_block_start") {
        object block;
        return (*data)["content_block"].get_object().get(block) == SUCCESS &&
               textOf(block["type"]) == "text" && emptyText(block["text"]);
    }
    if (type == "response.output_item.added") {
        object item;
        if ((*data)["item"].get_object().get(item) != SUCCESS || textOf(item["type"]) != "message")
            return false;
        simdjson::dom::array content;
        return item["content"].get_array().get(content) != SUCCESS || content.size() == 0;
    }
    if (type == "response.content_part.added") {
        object part;
        return (*data)["part"].get_object().get(part) == SUCCESS &&
               textOf(part["type"]) == "output_text" && emptyText(part["text"]);
    }
    return false;
}

// A chat chunk that says who speaks and nothing else: no content, tool call, refusal or
// reasoning, no finish reason, no usage. Azure's first chunk, with no choices and only the
// prompt's filter results, opens the answer as well.
bool roleOnlyChunk(const object &chunk)
{
    if (element usage; chunk["usage"].get(usage) == SUCCESS && !usage.is_null())
        return false;
    simdjson::dom::array choices;
    if (chunk["choices"].get_array().get(choices) != SUCCESS || choices.size() == 0)
        return chunk["prompt_filter_results"].error() == SUCCESS;
    for (element choice : choices) {
        object fields;
        if (choice.get_object().get(fields) != SUCCESS)
            continue; // says nothing
        if (!emptyText(fields["finish_reason"]))
            return false;
        object delta;
        if (fields["delta"].get_object().get(delta) != SUCCESS)
            continue;
        for (const simdjson::dom::key_value_pair field : delta) {
            if (field.key == "role")
                continue;
            if (!emptyValue(field.value))
                return false; // content, tool_calls, refusal, reasoning...: the answer itself
        }
    }
    return true;
}

} // namespace

bool carriesChatText(QByteArrayView data)
{
    // A key is unambiguous in JSON text: inside a string every quote is escaped, so these bytes
    // can only be a key followed by its value. A "content" text outside the choices' deltas (no
    // provider sends one) would count too: that chunk is relayed at once instead of held.
    const auto find = [data](qsizetype from, QByteArrayView needle) {
        return protocol::findBytes(data, needle, from);
    };
    if (find(0, R"("choices":[)") < 0 && find(0, R"("choices": [)") < 0)
        return false;
    for (qsizetype at = find(0, R"("content":)"); at >= 0; at = find(at + 1, R"("content":)")) {
        qsizetype value = at + qsizetype(sizeof(R"("content":)") - 1);
        if (value < data.size() && data[value] == ' ')
            ++value;
        // An opening quote followed by anything but the closing one: a non-empty string.
        if (value + 1 < data.size() && data[value] == '"' && data[value + 1] != '"')
            return true;
    }
    return false;
}

bool isOpeningEvent(const upstream::SseEvent &event)
{
    if (event.isDone())
        return false;
    // Most streams' first event is already content: it is known without a parse, which cost
    // 5 µs of the first token's relay when it ran cold.
    if (event.event.isEmpty() && carriesChatText(event.data))
        return false;
    // Read while an attempt waits for its first content: a few events per stream, with a parser
    // and a padded copy this thread keeps, so no event costs an allocation once they have grown.
    thread_local simdjson::dom::parser parser;
    thread_local std::string padded;
    padded.assign(event.data.constData(), size_t(event.data.size()));
    padded.reserve(padded.size() + simdjson::SIMDJSON_PADDING);
    std::optional<object> data;
    if (object parsed;
        parser.parse(padded.data(), padded.size(), false).get_object().get(parsed) == SUCCESS)
        data = parsed;
    if (!event.event.isEmpty())
        return openingByType(std::string_view(event.event.constData(), size_t(event.event.size())),
                             data);
    if (!data)
        return false;
    if (std::string_view type; (*data)["type"].get_string().get(type) == SUCCESS)
        return openingByType(type, data);
    return roleOnlyChunk(*data);
}

} // namespace switchyard::execution
