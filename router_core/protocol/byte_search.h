#pragma once

#include <QByteArrayView>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace switchyard::protocol {

// Where `needle` first occurs in `text` at or after `from`, or -1.
//
// Neither QByteArrayView::indexOf nor glibc's memmem: for a needle of more than one byte, Qt 6.4
// runs a rolling hash over a text of up to 500 bytes (about 2,500 instructions for a 200-byte
// stream event, twelve a byte) and builds a Boyer-Moore table for a longer one, on every call;
// memmem (glibc 2.36) factorizes the needle on every call, about 500 instructions for a stream
// event, 5 % of the engine's instructions when every event is searched for two or three keys.
// These searches run on every event of every stream and on every answer, over texts of a few
// hundred bytes: sixteen positions at a time are kept only where both the needle's first and
// last bytes match, and only those are compared whole (SSE2, which every x86-64 processor has).
inline qsizetype findBytes(QByteArrayView text, QByteArrayView needle, qsizetype from = 0)
{
    if (from < 0 || text.size() - from < needle.size())
        return -1;
    if (needle.isEmpty())
        return from;
    const char *data = text.data() + from;
    const qsizetype size = text.size() - from;
    const qsizetype length = needle.size();
    if (length == 1) {
        const void *at = std::memchr(data, needle.front(), std::size_t(size));
        return at ? static_cast<const char *>(at) - text.data() : -1;
    }
#if defined(__SSE2__)
    const __m128i first = _mm_set1_epi8(needle.front());
    const __m128i last = _mm_set1_epi8(needle.back());
    qsizetype at = 0;
    for (; at + length - 1 + 16 <= size; at += 16) {
        const __m128i starts = _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + at));
        const __m128i ends =
            _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + at + length - 1));
        auto candidates = unsigned(_mm_movemask_epi8(
            _mm_and_si128(_mm_cmpeq_epi8(starts, first), _mm_cmpeq_epi8(ends, last))));
        while (candidates != 0) {
            const qsizetype start = at + __builtin_ctz(candidates);
            if (std::memcmp(data + start + 1, needle.data() + 1, std::size_t(length - 2)) == 0)
                return from + start;
            candidates &= candidates - 1;
        }
    }
    for (; at + length <= size; ++at) { // the last few positions, fewer than sixteen
        if (data[at] == needle.front() && data[at + length - 1] == needle.back() &&
            std::memcmp(data + at + 1, needle.data() + 1, std::size_t(length - 2)) == 0)
            return from + at;
    }
    return -1;
#else
    const void *found = memmem(data, std::size_t(size), needle.data(), std::size_t(length));
    return found ? static_cast<const char *>(found) - text.data() : -1;
#endif
}

inline bool containsBytes(QByteArrayView text, QByteArrayView needle)
{
    return findBytes(text, needle) >= 0;
}

} // namespace switchyard::protocol
