#pragma once

#include "upstream/curl_transport.h"
#include "upstream/http1_transport.h"
#include "upstream/upstream_transport.h"

#include <QObject>

namespace switchyard::upstream {

// The engine's transport: plain http without a proxy goes over Http1Transport, whose
// request is one system call each way; https, proxies and private CAs over libcurl.
class GatewayTransport final : public QObject, public UpstreamTransport {
    Q_OBJECT
public:
    explicit GatewayTransport(QObject *parent = nullptr);

    std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request,
                                        UpstreamObserver *observer) override;

    Http1Transport &plainHttp() { return *m_plainHttp; }
    CurlTransport &curl() { return *m_curl; }

private:
    Http1Transport *m_plainHttp; // children, so moveToThread() takes them along
    CurlTransport *m_curl;
};

} // namespace switchyard::upstream
