#include "httpwire/chunked_encoding.h"

#include "protocol/byte_append.h"

#include <algorithm>
#include <cstring>
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
    protocol::appendPieces(out, {QByteArrayView(digit, end - digit), "\r\n", payload, "\r\n"});
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

namespace {

// A chunk's size: hex digits only (no sign, no "0x", at most 15 of them), then perhaps spaces and
// an extension; -1 for anything else. A proxy reading "0x5" or "+5" otherwise could end the body
// elsewhere.
qint64 chunkSize(QByteArrayView line)
{
    if (const qsizetype extension = line.indexOf(';'); extension >= 0)
        line.truncate(extension);
    while (line.endsWith(' ') || line.endsWith('\t'))
        line.chop(1);
    if (line.isEmpty() || line.size() > 15)
        return -1;
    qint64 size = 0;
    for (const char c : line) {
        const int digit = c >= '0' && c <= '9'   ? c - '0'
                          : c >= 'a' && c <= 'f' ? c - 'a' + 10
                          : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                 : -1;
        if (digit < 0)
            return -1;
        size = size * 16 + digit;
    }
    return size;
}

} // namespace

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
        // A framing line is read where it lies; only one split across reads is kept and joined.
        const auto *newline =
            static_cast<const char *>(std::memchr(bytes.data() + i, '\n', bytes.size() - i));
        if (!newline) {
            m_line.append(bytes.sliced(i));
            i = bytes.size();
            if (m_line.size() > kMaxLineBytes)
                m_status = Status::Malformed;
            continue;
        }
        QByteArrayView line = bytes.sliced(i, newline - (bytes.data() + i));
        i = newline - bytes.data() + 1;
        if (!m_line.isEmpty())
            line = m_line.append(line);
        if (line.endsWith('\r'))
            line.chop(1);
        if (line.size() > kMaxLineBytes) {
            m_status = Status::Malformed;
            break;
        }
        switch (m_state) {
        case State::Size: {
            const qint64 size = chunkSize(line);
            if (size < 0) {
                m_status = Status::Malformed;
                break;
            }
            m_remaining = size;
            m_state = size == 0 ? State::Trailer : State::Data;
            break;
        }
        case State::DataEnd:
            if (!line.isEmpty())
                m_status = Status::Malformed;
            m_state = State::Size;
            break;
        case State::Trailer:
            if (line.isEmpty())
                m_status = Status::Finished;
            break;
        case State::Data:
            break;
        }
        if (!m_line.isEmpty())
            m_line.clear();
    }
    if (consumed)
        *consumed = i;
    return m_status;
}

} // namespace switchyard::httpwire
