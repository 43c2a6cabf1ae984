#pragma once

#include <QObject>
#include <QRandomGenerator>
#include <QStringList>
#include <QTimer>
#include <QUrl>
#include <memory>
#include <unordered_map>

namespace switchyard::upstream {
class CurlTransport;
class UpstreamCall;
class UpstreamObserver;
} // namespace switchyard::upstream

namespace switchyard::sim {

// Sends real chat requests to the gateway's own port, as an outside client would: mixed models,
// about half of them streamed. Drives the console's demo; lives on the simulator thread.
class DemoTraffic final : public QObject {
    Q_OBJECT
public:
    // More requests than this outstanding means the gateway is not keeping up: skip a tick
    // rather than pile up sockets.
    static constexpr int kMaxOutstanding = 256;

    DemoTraffic(QUrl gatewayBaseUrl, QStringList models, QObject *parent = nullptr);
    ~DemoTraffic() override;

public Q_SLOTS:
    void setRate(bool enabled, double requestsPerSecond);

private:
    class DemoCall;
    void sendOne();
    void finishCall(DemoCall *call);

    QUrl m_chatUrl;
    QStringList m_models;
    QRandomGenerator m_random;
    QTimer m_tick{this};
    upstream::CurlTransport *m_transport = nullptr; // created on first use, on this thread
    std::unordered_map<DemoCall *, std::unique_ptr<DemoCall>> m_calls;
};

} // namespace switchyard::sim
