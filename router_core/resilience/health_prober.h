#pragma once

#include "config/breaker_config.h"
#include "config/config.h"
#include "config/config_store.h"
#include "timing/deadline_scheduler.h"
#include "upstream/upstream_transport.h"

#include <QCoro/QCoroTask>
#include <QObject>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace switchyard::health {
class HealthRegistry;
}

namespace switchyard::resilience {

// Active health probes (docs/resilience.md, "Health probes"): every endpoint in the health registry
// is probed every `interval`, one probe at a time, and each result goes to the registry, which
// decides what it means (unhealthy after N failures, healthy after M successes, a half-open
// breaker closing). Probes go through the same transport seam as traffic but are not traffic:
// they take no admission and count in no request statistics.
// Each endpoint's probing is one coroutine, a loop of waits (on the engine's deadline scheduler,
// so simulated time drives it too) and probe calls; one more watches for endpoints added at
// runtime. Lives on the engine thread, beside the registry and the transport.
class HealthProber final : public QObject {
    Q_OBJECT
public:
    // Probes as the store's current `probes` section says, read at each probe.
    HealthProber(const config::ConfigStore &store, health::HealthRegistry &health,
                 upstream::UpstreamTransport &transport, timing::DeadlineScheduler &scheduler,
                 QObject *parent = nullptr);
    // Ends every loop: waits are cut short, probe calls aborted.
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
    class ProbeCall;
    // One coroutine's loop and what it waits on now, so stop() can end the wait.
    struct Loop {
        std::optional<QCoro::Task<>> task;
        timing::Sleep *sleeping = nullptr;
        ProbeCall *calling = nullptr;
        void end();
    };

    QCoro::Task<> probeEndpoint(int provider, Loop &loop, std::chrono::milliseconds firstWait);
    QCoro::Task<> watchForNewEndpoints(Loop &loop);
    // Waits on the scheduler; false when the loop was ended instead.
    QCoro::Task<bool> wait(Loop &loop, std::chrono::milliseconds delay);
    void startLoop(int provider, std::chrono::milliseconds firstWait);
    void report(int provider, bool ok, const QString &detail);

    const config::ProbeConfig &rules() const { return m_store.config().resilience.probes; }

    const config::ConfigStore &m_store;
    health::HealthRegistry &m_health;
    upstream::UpstreamTransport &m_transport;
    timing::DeadlineScheduler &m_scheduler;
    bool m_running = false;
    std::vector<std::unique_ptr<Loop>> m_loops; // by provider slot; addresses stay put
    Loop m_watcher;
};

} // namespace switchyard::resilience
