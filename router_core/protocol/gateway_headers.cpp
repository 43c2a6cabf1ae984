#include "protocol/gateway_headers.h"

namespace switchyard::protocol {

HeaderList identityHeaders(const QByteArray &requestId, const QByteArray &traceId,
                           const QByteArray &provider)
{
    return {{"x-switchyard-request-id", requestId},
            {"x-switchyard-trace-id", traceId},
            {"x-switchyard-provider", provider}};
}

} // namespace switchyard::protocol
