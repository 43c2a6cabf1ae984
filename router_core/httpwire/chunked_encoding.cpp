#include "httpwire/chunked_encoding.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace switchyard::httpwire {

QByteArray encodeChunk(QByteArrayView payload)
{
    QByteArray chunk;
    appendChunk(chunk, payload);
    return chunk;
}

void appendChunk(QByteArray &out, QByteArrayView payload)
{
    // The size in hex, written without a temporary: this runs for every streamed event.
    char size[2 * sizeof(qsizetype)];
    char *end = size + sizeof(size);
    char *digit = end;
    qsizetype remaining = payload.size();
    do {
        *--digit = "0123456789abcdef"[remaining & 0xf];
        remaining >>= 4;
    } while (remaining > 0);
    if (out.isEmpty()) // sized up front only when fresh: appends to a used buffer grow it
                       // geometrically
        out.reserve((end - digit) + payload.size() + 4);
    out.append(QByteArrayView(digit, end - digit)).append("\r\n").append(payload).append("\r\n");
}

void resetFramingBuffer(QByteArray &buffer)
{
    constexpr qsizetype kMostBytesKept = 4 * 1024;
    if (buffer.capacity() > kMostBytesKept)
        buffer = QByteArray();
    else
        buffer.resize(0);
}

namespace {
QByteArray &spareFramingBuffer()
{
    thread_local QByteArray spare;
    return spare;
}
} // namespace

QByteArray borrowFramingBuffer()
{
    return std::exchange(spareFramingBuffer(), QByteArray());
}

void giveBackFramingBuffer(QByteArray &&buffer)
{
    resetFramingBuffer(buffer);
    QByteArray &spare = spareFramingBuffer();
    if (buffer.capacity() > spare.capacity())
        spare = std::move(buffer);
}

ChunkedDecoder::Status ChunkedDecoder::feed(QByteArrayView bytes, QByteArray &out,
                                            qsizetype *consumed)
{
    // Lines of the framing (sizes, CRLFs, trailers) are tiny; anything longer is not HTTP.
    constexpr qsizetype kMaxLineBytes = 4096;
    qsizetype i = 0;
    while (i < bytes.size() && m_status == Status::NeedMore) {
        if (m_state == State::Data) {
            const qint64 take = std::min<qint64>(m_remaining, bytes.size() - i);
            out.append(bytes.sliced(i, take));
            m_remaining -= take;
            i += take;
            if (m_remaining == 0)
                m_state = State::DataEnd;
            continue;
        }
        const char c = bytes[i++];
        if (c != '\n') {
            m_line.append(c);
            if (m_line.size() > kMaxLineBytes)
                m_status = Status::Malformed;
            continue;
        }
        if (m_line.endsWith('\r'))
            m_line.chop(1);
        switch (m_state) {
        case State::Size: {
            // Hex digits only (no sign, no "0x", at most 15 of them), then perhaps spaces and an
            // extension: a proxy reading "0x5" or "+5" otherwise could end the body elsewhere.
            const qsizetype extension = m_line.indexOf(';');
            QByteArrayView digits =
                extension < 0 ? QByteArrayView(m_line) : QByteArrayView(m_line).first(extension);
            while (digits.endsWith(' ') || digits.endsWith('\t'))
                digits.chop(1);
            const bool hexOnly = !digits.isEmpty() && digits.size() <= 15 &&
                                 std::all_of(digits.begin(), digits.end(), [](char c) {
                                     return std::isxdigit(static_cast<unsigned char>(c));
                                 });
            bool ok = hexOnly;
            const qint64 size = hexOnly ? digits.toLongLong(&ok, 16) : -1;
            if (!ok || size < 0) {
                m_status = Status::Malformed;
                break;
            }
            m_remaining = size;
            m_state = size == 0 ? State::Trailer : State::Data;
            break;
        }
        case State::DataEnd:
            if (!m_line.isEmpty())
                m_status = Status::Malformed;
            m_state = State::Size;
            break;
        case State::Trailer:
            if (m_line.isEmpty())
                m_status = Status::Finished;
            break;
        case State::Data:
            break;
        }
        m_line.clear();
    }
    if (consumed)
        *consumed = i;
    return m_status;
}

} // namespace switchyard::httpwire
