#include "upstream/upstream_transport.h"

namespace switchyard::upstream {

QByteArray UpstreamResponseHead::header(QByteArrayView lowerCaseName) const
{
    for (const auto &[name, value] : headers) {
        if (name == lowerCaseName)
            return value;
    }
    return {};
}

QString describe(TransportError error)
{
    switch (error) {
    case TransportError::None:
        return QStringLiteral("no error");
    case TransportError::ConnectFailed:
        return QStringLiteral("could not connect");
    case TransportError::ConnectTimeout:
        return QStringLiteral("connect timed out");
    case TransportError::TotalTimeout:
        return QStringLiteral("timed out");
    case TransportError::ConnectionLost:
        return QStringLiteral("connection lost before the answer was complete");
    case TransportError::TlsFailed:
        return QStringLiteral("TLS handshake failed");
    case TransportError::ProtocolError:
        return QStringLiteral("not a valid HTTP answer");
    case TransportError::LocalResources:
        return QStringLiteral("Switchyard could not open a socket");
    case TransportError::Other:
        return QStringLiteral("transport error");
    }
    return {};
}

} // namespace switchyard::upstream
