#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>

namespace switchyard::upstream {

// One Server-Sent Event as the WHATWG event-stream format defines it.
struct SseEvent {
    QByteArray event; // empty for the default "message" type
    QByteArray data;  // data lines joined with '\n'
    QByteArray id;

    bool isDone() const { return data == "[DONE]"; } // OpenAI's end-of-stream marker
    // The event serialised again, ending with the blank line that dispatches it.
    QByteArray toWire() const;
    // The same bytes appended to `out`.
    void appendWire(QByteArray &out) const;
};

// Incremental, line-buffered event-stream parser. Upstream reads arrive per network write, not per
// event, so any byte boundary must work, including a CR LF split across two reads.
class SseParser {
public:
    // A line longer than this is an upstream fault, not something to buffer forever.
    static constexpr qsizetype kMaxLineBytes = 4 * 1024 * 1024;

    // Appends every event completed by `bytes` to `events`. Returns false once a line exceeded
    // kMaxLineBytes; the parser then ignores further input.
    bool feed(QByteArrayView bytes, QList<SseEvent> &events);

    // True when bytes were received that have not yet formed a complete event: at the end of a
    // stream this means the stream was cut mid-event.
    bool hasPartialEvent() const { return !m_line.isEmpty() || m_eventHasFields; }
    // True once any comment line (": keep-alive") or field was seen since the last call.
    bool takeActivity();

private:
    void processLine(QByteArrayView line, QList<SseEvent> &events);

    QByteArray m_line;
    SseEvent m_current;
    bool m_eventHasFields = false;
    bool m_hasData = false;
    bool m_skipLineFeed = false; // last byte was CR: a following LF belongs to the same break
    bool m_overflowed = false;
    bool m_activity = false;
};

} // namespace switchyard::upstream
