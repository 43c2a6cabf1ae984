#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <cstring>
#include <initializer_list>

namespace switchyard::protocol {

// Appends the pieces to `out` with one size change and one copy each.
//
// QByteArray::append checks sharing, may grow and keeps the terminating zero once per piece:
// about a hundred instructions each. The relay frames every event, and the answer's head every
// header line, from four to six pieces, so the appends were a good part of relaying an event.
// `out` grows geometrically, as append grows it.
inline QByteArray &appendPieces(QByteArray &out, std::initializer_list<QByteArrayView> pieces)
{
    qsizetype added = 0;
    for (const QByteArrayView piece : pieces)
        added += piece.size();
    const qsizetype at = out.size();
    if (out.capacity() - at < added)
        out.reserve(qMax(at + added, 2 * out.capacity()));
    out.resize(at + added);
    char *to = out.data() + at;
    for (const QByteArrayView piece : pieces) {
        if (!piece.isEmpty()) // an empty view's data may be null, which memcpy may not take
            std::memcpy(to, piece.data(), std::size_t(piece.size()));
        to += piece.size();
    }
    return out;
}

} // namespace switchyard::protocol
