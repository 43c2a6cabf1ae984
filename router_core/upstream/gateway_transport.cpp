#include "upstream/gateway_transport.h"

namespace switchyard::upstream {

GatewayTransport::GatewayTransport(QObject *parent)
    : QObject(parent), m_plainHttp(new Http1Transport(this)), m_curl(new CurlTransport(this))
{}

std::unique_ptr<UpstreamCall> GatewayTransport::start(const UpstreamRequest &request,
                                                      UpstreamObserver *observer)
{
    if (Http1Transport::handles(request))
        return m_plainHttp->start(request, observer);
    return m_curl->start(request, observer);
}

} // namespace switchyard::upstream
