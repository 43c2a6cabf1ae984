#include "protocol/gateway_headers.h"

namespace switchyard::protocol {

HeaderList identityHeaders(const QByteArray &requestId, const QByteArray &traceId,
                           const QByteArray &provider)
{
    HeaderList headers;
    headers.reserve(8); // room for the routing headers an answer adds to these
    headers.emplaceBack("x-switchyard-request-id", requestId);
    headers.emplaceBack("x-switchyard-trace-id", traceId);
    headers.emplaceBack("x-switchyard-provider", provider);
    return headers;
}

} // namespace switchyard::protocol
