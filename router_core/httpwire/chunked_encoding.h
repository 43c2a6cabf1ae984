#pragma once

#include <QByteArray>
#include <QByteArrayView>

namespace switchyard::httpwire {

// Qt 6.4's HTTP server does no chunked transfer encoding, so streamed answers frame their own
// chunks (RFC 9112 section 7.1).
QByteArray encodeChunk(QByteArrayView payload);
// The same chunk appended to `out`, which a caller can reuse between chunks.
void appendChunk(QByteArray &out, QByteArrayView payload);
// Readies a framing buffer for its next use: emptied with its capacity kept, or let go when a
// burst grew it past a usual event's size.
void resetFramingBuffer(QByteArray &buffer);
// Framing buffers are lent per thread: a writer holds one only while it frames and sends, so a
// held stream keeps none between its events (10,000 held streams kept 10,000 of them, two each).
// borrow returns the thread's spare (empty, possibly with capacity, possibly null); give back
// what was borrowed once its bytes are sent. Borrowing twice before giving back is fine.
QByteArray borrowFramingBuffer();
void giveBackFramingBuffer(QByteArray &&buffer);
inline constexpr QByteArrayView kLastChunk = "0\r\n\r\n";

// Incremental decoder for chunked bodies, used where Switchyard or its tests read a stream.
class ChunkedDecoder {
public:
    enum class Status { NeedMore, Finished, Malformed };

    // Appends decoded payload bytes to `out`. Any split of the input works. `consumed`, when
    // given, receives how many input bytes belonged to this body: fewer than given once the
    // last chunk ends and the next message begins.
    Status feed(QByteArrayView bytes, QByteArray &out, qsizetype *consumed = nullptr);
    Status status() const { return m_status; }

private:
    enum class State { Size, Data, DataEnd, Trailer };
    State m_state = State::Size;
    Status m_status = Status::NeedMore;
    QByteArray m_line;
    qint64 m_remaining = 0;
};

} // namespace switchyard::httpwire
