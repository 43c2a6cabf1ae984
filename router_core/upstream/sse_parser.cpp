#include "upstream/sse_parser.h"

#include "protocol/byte_append.h"

#include <cstring>

namespace switchyard::upstream {

QByteArray SseEvent::toWire() const
{
    QByteArray wire;
    appendWire(wire);
    return wire;
}

void SseEvent::appendWire(QByteArray &wire) const
{
    // Only a fresh buffer is sized up front: reserving for each appended event would grow an
    // accumulating buffer by exactly one event at a time.
    if (wire.isEmpty())
        wire.reserve(data.size() + event.size() + id.size() + 16);
    if (!event.isEmpty())
        protocol::appendPieces(wire, {"event: ", event, "\n"});
    if (!id.isEmpty())
        protocol::appendPieces(wire, {"id: ", id, "\n"});
    const QByteArrayView text(data);
    qsizetype start = 0;
    while (true) {
        const qsizetype newline = text.indexOf('\n', start);
        if (newline < 0)
            break;
        protocol::appendPieces(wire, {"data: ", text.sliced(start, newline - start), "\n"});
        start = newline + 1;
    }
    protocol::appendPieces(wire, {"data: ", text.sliced(start), "\n\n"});
}

namespace {

// Where the next line ends at or after `from` (its '\n' or '\r'), or -1. Found with memchr: an
// event's line is a few hundred bytes, which a loop read one at a time on every event.
qsizetype nextLineEnd(QByteArrayView bytes, qsizetype from)
{
    if (from >= bytes.size())
        return -1;
    const char *const begin = bytes.data() + from;
    const size_t left = size_t(bytes.size() - from);
    const auto *feed = static_cast<const char *>(std::memchr(begin, '\n', left));
    const size_t feedAt = feed ? size_t(feed - begin) : left;
    // A carriage return ends a line too; only one before the line feed can end this one.
    const auto *carriage = static_cast<const char *>(std::memchr(begin, '\r', feedAt));
    const size_t at = carriage ? size_t(carriage - begin) : feedAt;
    return at == left ? -1 : from + qsizetype(at);
}

} // namespace

bool SseParser::feed(QByteArrayView bytes, QList<SseEvent> &events)
{
    if (m_overflowed)
        return false;
    qsizetype lineStart = 0;
    for (qsizetype i = nextLineEnd(bytes, 0); i >= 0; i = nextLineEnd(bytes, lineStart)) {
        const char c = bytes[i];
        if (c == '\n' && m_skipLineFeed && i == lineStart && m_line.isEmpty()) {
            // The LF of a CR LF whose CR ended the previous read or line.
            m_skipLineFeed = false;
            lineStart = i + 1;
            continue;
        }
        m_skipLineFeed = (c == '\r');
        if (m_line.isEmpty()) {
            processLine(bytes.sliced(lineStart, i - lineStart), events);
        } else {
            m_line.append(bytes.sliced(lineStart, i - lineStart));
            processLine(m_line, events);
            m_line.clear();
        }
        lineStart = i + 1;
    }
    if (lineStart < bytes.size()) {
        m_skipLineFeed = false;
        m_line.append(bytes.sliced(lineStart));
        if (m_line.size() > kMaxLineBytes) {
            m_overflowed = true;
            m_line.clear();
            return false;
        }
    }
    return true;
}

bool SseParser::takeActivity()
{
    const bool seen = m_activity;
    m_activity = false;
    return seen;
}

void SseParser::processLine(QByteArrayView line, QList<SseEvent> &events)
{
    if (line.isEmpty()) {
        if (m_hasData)
            events.append(std::move(m_current));
        m_current = SseEvent();
        m_eventHasFields = false;
        m_hasData = false;
        return;
    }
    m_activity = true;
    if (line.front() == ':')
        return; // a comment, typically a keep-alive
    m_eventHasFields = true;
    const qsizetype colon = line.indexOf(':');
    const QByteArrayView field = colon < 0 ? line : line.first(colon);
    QByteArrayView value = colon < 0 ? QByteArrayView() : line.sliced(colon + 1);
    if (value.startsWith(' '))
        value = value.sliced(1);
    if (field == "data") {
        if (m_hasData) {
            m_current.data.append('\n');
            m_current.data.append(value);
        } else {
            // An event's one data line, nearly always: copied once at its size, not appended.
            m_current.data = value.toByteArray();
        }
        m_hasData = true;
    } else if (field == "event") {
        m_current.event = value.toByteArray();
    } else if (field == "id") {
        m_current.id = value.toByteArray();
    }
    // "retry" and unknown fields are ignored, as the format requires.
}

} // namespace switchyard::upstream
