#include "protocol/gateway_headers.h"

namespace switchyard::protocol {

using namespace Qt::StringLiterals;

HeaderList identityHeaders(const QByteArray &requestId, const QByteArray &traceId,
                           const QByteArray &provider)
{
    HeaderList headers;
    headers.reserve(8); // room for the routing headers an answer adds to these
    // Names as literals: a QByteArray made from one points at it and allocates nothing.
    headers.emplaceBack("x-switchyard-request-id"_ba, requestId);
    headers.emplaceBack("x-switchyard-trace-id"_ba, traceId);
    headers.emplaceBack("x-switchyard-provider"_ba, provider);
    return headers;
}

} // namespace switchyard::protocol
