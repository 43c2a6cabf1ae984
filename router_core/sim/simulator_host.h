#pragma once

#include "config/config.h"
#include "health/endpoint_state.h"

#include <QHash>
#include <QObject>

namespace switchyard::sim {

class SimulatedProvider;

// Owns the simulated providers on the simulator thread.
class SimulatorHost final : public QObject {
    Q_OBJECT
public:
    explicit SimulatorHost(QObject *parent = nullptr);

    // Starts one loopback server per simulated provider in `providers` (others are skipped) and
    // returns each provider's base URL by id. Empty on failure, with errorMessage filled.
    QHash<QString, QUrl> start(const QList<config::ProviderConfig> &providers,
                               QString *errorMessage);

    // Changes a simulated provider's live knobs. Call on the simulator thread (from elsewhere,
    // through a queued invocation). False when no simulated provider has this id.
    bool setKnobs(const QString &providerId, const SimulatorKnobs &knobs);
    SimulatedProvider *provider(const QString &providerId) const
    {
        return m_providers.value(providerId);
    }

private:
    QHash<QString, SimulatedProvider *> m_providers; // children
};

// Fills the base URL of every simulated provider from the URLs SimulatorHost::start returned.
void applySimulatorUrls(config::Config &config, const QHash<QString, QUrl> &urls);

} // namespace switchyard::sim
