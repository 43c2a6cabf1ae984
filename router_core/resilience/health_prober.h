#pragma once

#include "config/breaker_config.h"
#include "config/config.h"
#include "config/config_store.h"
#include "upstream/upstream_transport.h"

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace switchyard::health {
class HealthRegistry;
}

namespace switchyard::resilience {

// Active health probes (DESIGN.md, "Health probes"): every endpoint in the health registry is
// probed every `interval`, one probe at a time, and each result goes to the registry, which
// decides what it means (unhealthy after N failures, healthy after M successes, a half-open
// breaker closing). Probes go through the same transport seam as traffic but are not traffic:
// they take no admission and count in no request statistics.
// Lives on the engine thread, beside the registry and the transport.
class HealthProber final : public QObject {
    Q_OBJECT
public:
    // Probes as the store's current `probes` section says, read at each tick.
    HealthProber(const config::ConfigStore &store, health::HealthRegistry &health,
                 upstream::UpstreamTransport &transport, QObject *parent = nullptr);
    ~HealthProber() override;

    // The first probe of each endpoint goes out one interval after start, staggered over the
    // interval so endpoints are not all probed in the same instant.
    void start();
    void stop();
    int probesInFlight() const;

    // The request that probes `provider`: a GET of the probe path when one is configured,
    // else a one-token completion of its first model. None when it cannot be probed: no base
    // URL yet, or a wire format other than OpenAI's without a probe path.
    static std::optional<upstream::UpstreamRequest>
    probeRequest(const config::ProbeConfig &config, const config::ProviderConfig &provider);

private:
    class Probe;
    struct Slot {
        std::chrono::steady_clock::time_point nextAt;
        std::unique_ptr<Probe> running;
    };

    void tick();
    void startProbe(int provider);
    void finishProbe(int provider, bool ok, const QString &detail);

    const config::ProbeConfig &rules() const { return m_store.config().resilience.probes; }

    const config::ConfigStore &m_store;
    health::HealthRegistry &m_health;
    upstream::UpstreamTransport &m_transport;
    std::vector<Slot> m_slots; // by provider index; grows as the registry does
    // Finished probes are deleted on the next pass of the event loop, never inside their own
    // transport callback.
    std::vector<std::unique_ptr<Probe>> m_finished;
    QTimer m_timer{this}; // parented so moveToThread() takes it along
    QTimer m_reaper{this};
};

} // namespace switchyard::resilience
