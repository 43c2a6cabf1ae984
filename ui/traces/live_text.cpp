#include "ui/traces/live_text.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace switchyard::ui {

namespace {

QString errorText(const QJsonObject &error)
{
    const QString code =
        error.value(QLatin1String("code")).toString(error.value(QLatin1String("type")).toString());
    const QString message = error.value(QLatin1String("message")).toString();
    if (code.isEmpty())
        return message;
    return message.isEmpty() ? code : QStringLiteral("%1: %2").arg(code, message);
}

} // namespace

void LiveText::appendEventData(QByteArrayView lines)
{
    qsizetype start = 0;
    while (start < lines.size()) {
        qsizetype end = lines.indexOf('\n', start);
        if (end < 0)
            end = lines.size();
        const QByteArrayView line = lines.sliced(start, end - start).trimmed();
        if (!line.isEmpty())
            appendEvent(line);
        start = end + 1;
    }
}

void LiveText::setResponseBody(QByteArrayView body)
{
    clear();
    const QByteArrayView trimmed = body.trimmed();
    if (trimmed.startsWith("data:") || trimmed.startsWith("event:")) {
        // An event stream as it went out: the data lines carry the events.
        qsizetype start = 0;
        while (start < trimmed.size()) {
            qsizetype end = trimmed.indexOf('\n', start);
            if (end < 0)
                end = trimmed.size();
            const QByteArrayView line = trimmed.sliced(start, end - start).trimmed();
            if (line.startsWith("data:"))
                appendEvent(line.sliced(5).trimmed());
            start = end + 1;
        }
        return;
    }
    const QJsonObject answer = QJsonDocument::fromJson(trimmed.toByteArray()).object();
    if (answer.isEmpty())
        return;
    m_events = 1;
    if (answer.contains(QLatin1String("error"))) {
        m_error = errorText(answer.value(QLatin1String("error")).toObject());
        return;
    }
    if (answer.value(QLatin1String("type")).toString() == QLatin1String("message")) {
        // An Anthropic message an anthropic provider gave: its text blocks, its stop reason.
        for (const QJsonValue &block : answer.value(QLatin1String("content")).toArray()) {
            if (block[QLatin1String("type")].toString() == QLatin1String("text"))
                m_text += block[QLatin1String("text")].toString();
        }
        m_finishReason = answer.value(QLatin1String("stop_reason")).toString();
        return;
    }
    const QJsonObject choice = answer.value(QLatin1String("choices")).toArray().at(0).toObject();
    if (!choice.isEmpty()) {
        const QJsonObject message = choice.value(QLatin1String("message")).toObject();
        m_text = message.contains(QLatin1String("content"))
                     ? message.value(QLatin1String("content")).toString()
                     : choice.value(QLatin1String("text")).toString();
        m_finishReason = choice.value(QLatin1String("finish_reason")).toString();
        return;
    }
    // A Responses API answer: the text parts of its message items.
    for (const QJsonValue &item : answer.value(QLatin1String("output")).toArray()) {
        for (const QJsonValue &part : item[QLatin1String("content")].toArray()) {
            if (part[QLatin1String("type")].toString() == QLatin1String("output_text"))
                m_text += part[QLatin1String("text")].toString();
        }
    }
    m_finishReason = answer.value(QLatin1String("status")).toString();
}

void LiveText::appendEvent(QByteArrayView data)
{
    if (data == "[DONE]")
        return;
    const QJsonDocument document = QJsonDocument::fromJson(data.toByteArray());
    if (!document.isObject())
        return;
    ++m_events;
    const QJsonObject event = document.object();
    if (event.contains(QLatin1String("error"))) {
        const QJsonValue error = event.value(QLatin1String("error"));
        m_error = error.isObject() ? errorText(error.toObject()) : error.toString();
        return;
    }

    const QString type = event.value(QLatin1String("type")).toString();
    if (!type.isEmpty()) {
        // The Responses API names each event; only the text deltas and the end matter here.
        if (type == QLatin1String("response.output_text.delta")) {
            m_text += event.value(QLatin1String("delta")).toString();
        } else if (type == QLatin1String("response.completed") ||
                   type == QLatin1String("response.incomplete")) {
            const QJsonObject response = event.value(QLatin1String("response")).toObject();
            const QString reason = response.value(QLatin1String("incomplete_details"))
                                       .toObject()
                                       .value(QLatin1String("reason"))
                                       .toString();
            m_finishReason =
                reason.isEmpty() ? response.value(QLatin1String("status")).toString() : reason;
        } else if (type == QLatin1String("response.failed")) {
            m_error = errorText(event.value(QLatin1String("response"))
                                    .toObject()
                                    .value(QLatin1String("error"))
                                    .toObject());
        } else if (type == QLatin1String("content_block_delta")) {
            // Anthropic's own stream: text deltas (thinking and tool input are not the answer).
            const QJsonObject delta = event.value(QLatin1String("delta")).toObject();
            if (delta.value(QLatin1String("type")).toString() == QLatin1String("text_delta"))
                m_text += delta.value(QLatin1String("text")).toString();
        } else if (type == QLatin1String("message_delta")) {
            const QString reason = event.value(QLatin1String("delta"))
                                       .toObject()
                                       .value(QLatin1String("stop_reason"))
                                       .toString();
            if (!reason.isEmpty())
                m_finishReason = reason;
        } else if (type == QLatin1String("error")) {
            m_error = errorText(event);
        }
        return;
    }

    const QJsonObject choice = event.value(QLatin1String("choices")).toArray().at(0).toObject();
    const QJsonValue delta = choice.value(QLatin1String("delta"));
    if (delta.isObject())
        m_text += delta.toObject().value(QLatin1String("content")).toString();
    else
        m_text += choice.value(QLatin1String("text")).toString();
    const QString finish = choice.value(QLatin1String("finish_reason")).toString();
    if (!finish.isEmpty())
        m_finishReason = finish;
}

} // namespace switchyard::ui
