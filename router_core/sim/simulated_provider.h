#pragma once

#include "config/config.h"

#include <QAbstractHttpServer>
#include <QRandomGenerator>

namespace switchyard::sim {

// A built-in fake provider that speaks the OpenAI chat API over real loopback HTTP. Its latency,
// time to first token, token pace and error rate come from config, so demo traffic and drills
// exercise the same network path, parsing and streaming as a real upstream.
class SimulatedProvider final : public QAbstractHttpServer {
    Q_OBJECT
public:
    SimulatedProvider(config::ProviderConfig provider, QObject *parent = nullptr);

    // Listens on 127.0.0.1 with a free port; returns it, or 0 on failure.
    quint16 listenOnLoopback();
    const QString &id() const { return m_provider.id; }

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    config::ProviderConfig m_provider;
    QRandomGenerator m_random;
};

} // namespace switchyard::sim
