#pragma once

#include "config/config.h"
#include "protocol/operation.h"

#include <QList>
#include <QObject>
#include <QRandomGenerator>
#include <QString>
#include <QTimer>
#include <QUrl>
#include <memory>
#include <unordered_map>

namespace switchyard::upstream {
class GatewayTransport;
class UpstreamCall;
class UpstreamObserver;
} // namespace switchyard::upstream

namespace switchyard::sim {

// A model demo traffic asks for, and the endpoint it asks at.
struct DemoModel {
    QString name;
    protocol::Operation operation = protocol::Operation::Chat; // Chat or Embeddings

    friend bool operator==(const DemoModel &, const DemoModel &) = default;
};

// Every model the providers serve, in the order the config first names them, each at an endpoint
// a provider serves it at: chat when one does, else embeddings. A model served at neither (legacy
// completions or the Responses API alone) is left out. Demo traffic sends nothing the gateway
// must refuse, so a healthy demo shows no client errors.
QList<DemoModel> demoModelsOf(const QList<config::ProviderConfig> &providers);

// Sends real requests to the gateway's own port, as an outside client would: mixed models, chat
// completions (about half of them streamed) and embeddings. Drives the console's demo; lives on
// the simulator thread.
class DemoTraffic final : public QObject {
    Q_OBJECT
public:
    // More requests than this outstanding means the gateway is not keeping up: skip a tick
    // rather than pile up sockets.
    static constexpr int kMaxOutstanding = 256;

    DemoTraffic(QUrl gatewayBaseUrl, QList<DemoModel> models, QObject *parent = nullptr);
    ~DemoTraffic() override;

public Q_SLOTS:
    void setRate(bool enabled, double requestsPerSecond);

private:
    class DemoCall;
    void sendOne();
    void finishCall(DemoCall *call);
    QByteArray chatBody(const QString &model);
    QByteArray embeddingsBody(const QString &model);

    QUrl m_gatewayBaseUrl;
    QList<DemoModel> m_models;
    QRandomGenerator m_random;
    QTimer m_tick{this};
    upstream::GatewayTransport *m_transport = nullptr; // created on first use, on this thread
    std::unordered_map<DemoCall *, std::unique_ptr<DemoCall>> m_calls;
};

} // namespace switchyard::sim
