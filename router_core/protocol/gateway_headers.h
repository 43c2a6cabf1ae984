#pragma once

#include <QByteArray>
#include <QList>
#include <QPair>

namespace switchyard::protocol {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

// The headers every answer carries, so a client can quote a request and find its trace.
// `provider` is "none" when no provider was called.
HeaderList identityHeaders(const QByteArray &requestId, const QByteArray &traceId,
                           const QByteArray &provider);

} // namespace switchyard::protocol
