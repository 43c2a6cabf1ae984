#include "execution/stream_continuation.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace switchyard::execution {

using namespace Qt::StringLiterals;

namespace {

bool isAbsent(const QJsonValue &value)
{
    return value.isUndefined() || value.isNull() ||
           (value.isString() && value.toString().isEmpty()) ||
           (value.isArray() && value.toArray().isEmpty()) ||
           (value.isObject() && value.toObject().isEmpty());
}

QJsonObject chunkOf(const upstream::SseEvent &event)
{
    if (event.isDone())
        return {};
    return QJsonDocument::fromJson(event.data).object();
}

} // namespace

bool StreamContinuation::requestAllows(const QByteArray &chatBody)
{
    const QJsonObject request = QJsonDocument::fromJson(chatBody).object();
    // Another model cannot give the first one's token probabilities, nor continue n answers
    // that the client reads as one stream each.
    if (request.value(u"n"_s).toInt(1) > 1)
        return false;
    if (request.value(u"logprobs"_s).toBool(false) || !isAbsent(request.value(u"top_logprobs"_s)))
        return false;
    return true;
}

void StreamContinuation::observe(const QList<upstream::SseEvent> &events)
{
    if (!m_continuable)
        return;
    for (const upstream::SseEvent &event : events) {
        const QJsonObject chunk = chunkOf(event);
        if (!chunk.isEmpty())
            observeChunk(chunk);
    }
}

void StreamContinuation::observeChunk(const QJsonObject &chunk)
{
    if (m_chunkId.isEmpty())
        m_chunkId = chunk.value(u"id"_s).toString().toUtf8();
    const QJsonArray choices = chunk.value(u"choices"_s).toArray();
    if (choices.size() > 1) {
        m_continuable = false;
        m_refusal = u"the stream carries more than one choice"_s;
        return;
    }
    if (choices.isEmpty())
        return; // a usage chunk
    const QJsonObject choice = choices.first().toObject();
    if (choice.value(u"index"_s).toInt(0) != 0) {
        m_continuable = false;
        m_refusal = u"the stream carries more than one choice"_s;
        return;
    }
    if (!isAbsent(choice.value(u"logprobs"_s))) {
        m_continuable = false;
        m_refusal = u"the stream carries logprobs"_s;
        return;
    }
    if (!isAbsent(choice.value(u"finish_reason"_s))) {
        m_continuable = false;
        m_refusal = u"the answer had already finished"_s;
        return;
    }
    const QJsonObject delta = choice.value(u"delta"_s).toObject();
    for (auto member = delta.begin(); member != delta.end(); ++member) {
        if (member.key() == u"role"_s)
            continue;
        if (member.key() == u"content"_s) {
            m_text += member.value().toString();
            continue;
        }
        if (isAbsent(member.value()))
            continue; // `"tool_calls": null` and the like say nothing
        m_continuable = false;
        m_refusal = member.key() == u"tool_calls"_s || member.key() == u"function_call"_s
                        ? u"the stream carries tool calls"_s
                        : u"the stream carries `%1`, not only text"_s.arg(member.key());
        return;
    }
}

QString StreamContinuation::refusal() const
{
    if (!m_continuable)
        return m_refusal;
    if (m_text.isEmpty())
        return u"no text reached the client yet"_s;
    return {};
}

void StreamContinuation::beginContinuation(const QString &from, const QString &to,
                                           const QString &reason, int attempt, bool trimmedTail)
{
    ++m_continuations;
    m_awaitingContinuedText = true;
    m_dropLeadingSpace = trimmedTail;
    m_marker = QJsonObject{{u"continued_from"_s, from},
                           {u"continued_on"_s, to},
                           {u"reason"_s, reason},
                           {u"attempt"_s, attempt},
                           {u"characters_before"_s, int(m_text.size())}};
}

void StreamContinuation::rewriteContinued(QList<upstream::SseEvent> &events)
{
    for (auto event = events.begin(); event != events.end();) {
        QJsonObject chunk = chunkOf(*event);
        if (chunk.isEmpty()) {
            ++event; // [DONE], or something the client's channel judges
            continue;
        }
        if (m_awaitingContinuedText) {
            const QJsonArray choices = chunk.value(u"choices"_s).toArray();
            QJsonObject choice = choices.first().toObject();
            QJsonObject delta = choice.value(u"delta"_s).toObject();
            QString text = delta.value(u"content"_s).toString();
            if (m_dropLeadingSpace) {
                qsizetype spaces = 0;
                while (spaces < text.size() && text.at(spaces).isSpace())
                    ++spaces;
                text.remove(0, spaces);
            }
            const bool ends = !isAbsent(choice.value(u"finish_reason"_s));
            if (text.isEmpty() && !ends && choices.size() <= 1 &&
                isAbsent(chunk.value(u"usage"_s))) {
                event = events.erase(event); // an opening of its own: the client has one
                continue;
            }
            if (!text.isEmpty() || ends) {
                if (!text.isEmpty()) {
                    delta.insert(u"content"_s, text);
                    choice.insert(u"delta"_s, delta);
                    chunk.insert(u"choices"_s, QJsonArray{choice});
                }
                // The first chunk the client reads from the continuing provider says so.
                chunk.insert(u"switchyard"_s, m_marker);
                m_awaitingContinuedText = false;
            }
        }
        if (!m_chunkId.isEmpty())
            chunk.insert(u"id"_s, QString::fromUtf8(m_chunkId));
        if (m_continuable)
            observeChunk(chunk);
        event->data = QJsonDocument(chunk).toJson(QJsonDocument::Compact);
        ++event;
    }
}

} // namespace switchyard::execution
