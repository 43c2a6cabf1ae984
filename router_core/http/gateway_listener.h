#pragma once

#include "config/config_store.h"

#include <QTcpServer>

namespace switchyard::http {

// A listening socket that watches each connection's request framing before Qt's HTTP server
// reads it. Qt 6.4 buffers a whole body before any handler runs and ignores
// `Expect: 100-continue`; this guard refuses a declared Content-Length over the limit with 413
// before the body is read, and answers "100 Continue" so clients that wait for it do not stall.
class GatewayListener final : public QTcpServer {
    Q_OBJECT
public:
    // The limit is the store's current `limits.max_body_bytes`, read for each new connection.
    GatewayListener(const config::ConfigStore &store, QObject *parent = nullptr);

protected:
    void incomingConnection(qintptr socketDescriptor) override;

private:
    const config::ConfigStore &m_store;
};

} // namespace switchyard::http
