#include "execution/opening_events.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::execution {

using namespace Qt::StringLiterals;

namespace {

bool emptyText(const QJsonValue &value)
{
    return value.isUndefined() || value.isNull() ||
           (value.isString() && value.toString().isEmpty());
}

// By the event's type, from its `event:` line or the `type` field of its data.
bool openingByType(QByteArrayView type, const QJsonObject &data)
{
    if (type == "ping" || type == "message_start" || type == "response.created" ||
        type == "response.in_progress" || type == "response.queued")
        return true;
    if (type == "content_block_start") {
        const QJsonObject block = data.value(u"content_block"_s).toObject();
        return block.value(u"type"_s).toString() == u"text"_s && emptyText(block.value(u"text"_s));
    }
    if (type == "response.output_item.added") {
        const QJsonObject item = data.value(u"item"_s).toObject();
        return item.value(u"type"_s).toString() == u"message"_s &&
               item.value(u"content"_s).toArray().isEmpty();
    }
    if (type == "response.content_part.added") {
        const QJsonObject part = data.value(u"part"_s).toObject();
        return part.value(u"type"_s).toString() == u"output_text"_s &&
               emptyText(part.value(u"text"_s));
    }
    return false;
}

// A chat chunk that says who speaks and nothing else: no content, tool call, refusal or
// reasoning, no finish reason, no usage. Azure's first chunk, with no choices and only the
// prompt's filter results, opens the answer as well.
bool roleOnlyChunk(const QJsonObject &chunk)
{
    if (!chunk.value(u"usage"_s).isNull() && !chunk.value(u"usage"_s).isUndefined())
        return false;
    const QJsonArray choices = chunk.value(u"choices"_s).toArray();
    if (choices.isEmpty())
        return chunk.contains(u"prompt_filter_results"_s);
    for (const QJsonValue &choice : choices) {
        const QJsonObject object = choice.toObject();
        if (!emptyText(object.value(u"finish_reason"_s)))
            return false;
        const QJsonObject delta = object.value(u"delta"_s).toObject();
        for (auto field = delta.begin(); field != delta.end(); ++field) {
            if (field.key() == u"role"_s)
                continue;
            if (!emptyText(field.value()))
                return false; // content, tool_calls, refusal, reasoning...: the answer itself
        }
    }
    return true;
}

} // namespace

bool isOpeningEvent(const upstream::SseEvent &event)
{
    if (event.isDone())
        return false;
    // Read only while an attempt waits for its first content: a few events per stream.
    const QJsonObject data = QJsonDocument::fromJson(event.data).object();
    if (!event.event.isEmpty())
        return openingByType(event.event, data);
    if (const QJsonValue type = data.value(u"type"_s); type.isString())
        return openingByType(type.toString().toUtf8(), data);
    return roleOnlyChunk(data);
}

} // namespace switchyard::execution
