#pragma once

#include <QTcpServer>

namespace switchyard::http {

// A listening socket that watches each connection's request framing before Qt's HTTP server
// reads it. Qt 6.4 buffers a whole body before any handler runs and ignores
// `Expect: 100-continue`; this guard refuses a declared Content-Length over the limit with 413
// before the body is read, and answers "100 Continue" so clients that wait for it do not stall.
class BodyLimitServer final : public QTcpServer {
    Q_OBJECT
public:
    BodyLimitServer(qint64 maxBodyBytes, QObject *parent = nullptr);

protected:
    void incomingConnection(qintptr socketDescriptor) override;

private:
    qint64 m_maxBodyBytes;
};

} // namespace switchyard::http
