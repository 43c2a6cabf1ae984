#pragma once

#include <QByteArrayView>
#include <cstring>

namespace switchyard::protocol {

// Where `needle` first occurs in `text` at or after `from`, or -1.
//
// glibc's memmem, not QByteArrayView::indexOf or contains: for a needle of more than one byte,
// Qt 6.4 runs a rolling hash over a text of up to 500 bytes (about 2,500 instructions for a
// 200-byte stream event, twelve a byte) and builds a Boyer-Moore table for a longer one, on every
// call. These searches run on every event of every stream and on every answer.
inline qsizetype findBytes(QByteArrayView text, QByteArrayView needle, qsizetype from = 0)
{
    if (from < 0 || text.size() - from < needle.size())
        return -1;
    if (needle.isEmpty())
        return from;
    const void *at = memmem(text.data() + from, size_t(text.size() - from), needle.data(),
                            size_t(needle.size()));
    return at ? static_cast<const char *>(at) - text.data() : -1;
}

inline bool containsBytes(QByteArrayView text, QByteArrayView needle)
{
    return findBytes(text, needle) >= 0;
}

} // namespace switchyard::protocol
