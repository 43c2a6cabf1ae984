#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

namespace switchyard::protocol {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// Whether two header names are the same, ASCII case aside. The lengths first: nearly every name
// asked about differs in length from the header at hand, and the case-insensitive compare is a
// call into Qt that runs cold on the request's path, a dozen times a request.
inline bool sameHeaderName(QByteArrayView a, QByteArrayView b)
{
    return a.size() == b.size() && a.compare(b, Qt::CaseInsensitive) == 0;
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
