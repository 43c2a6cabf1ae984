#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

namespace switchyard::protocol {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// Whether two header names are the same, ASCII case aside. The lengths first: nearly every name
// asked about differs in length from the header at hand. Then a loop here rather than Qt's
// case-insensitive compare, a call that runs cold on the request's path a dozen times a request.
inline bool sameHeaderName(QByteArrayView a, QByteArrayView b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
        const auto x = static_cast<unsigned char>(a[i]);
        const auto y = static_cast<unsigned char>(b[i]);
        // Setting bit 0x20 lower-cases a letter; the range test keeps it to letters (it would
        // make '@' and '`', or '[' and '{', the same).
        const auto lowered = static_cast<unsigned char>(x | 0x20);
        if (x != y && (lowered != (y | 0x20) || lowered < 'a' || lowered > 'z'))
            return false;
    }
    return true;
}

// The value of the first header called `name` (any case), or an empty array.
inline QByteArray headerValue(const HeaderList &headers, QByteArrayView name)
{
    for (const auto &[key, value] : headers) {
        if (sameHeaderName(key, name))
            return value;
    }
    return {};
}

// The headers every answer carries, so a client can quote a request and find its trace.
// `provider` is "none" when no provider was called.
HeaderList identityHeaders(const QByteArray &requestId, const QByteArray &traceId,
                           const QByteArray &provider);

} // namespace switchyard::protocol
