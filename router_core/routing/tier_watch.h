#pragma once

#include "config/config_store.h"
#include "health/health_registry.h"

#include <QHash>
#include <QString>

namespace switchyard::routing {

// Logs a tier becoming unavailable (none of its pool's endpoints can be chosen: the tier is
// degraded, docs/routing.md, "The gearbox (tiers)") and available again, one info line each in
// `switchyard.tiers`. There is no tier state machine to hook: the router and the execution ask per
// request whether a tier's endpoints are selectable. So the watch asks the same question whenever
// an endpoint's state changes, which the health registry always announces with a BreakerEvent. A
// 429's cool-down is not such an event: a tier out only because its endpoints are cooling down is
// not logged (its requests still say so in their traces). Engine thread only.
class TierWatch {
public:
    TierWatch(const config::ConfigStore &store, const health::HealthRegistry &health);

    // Re-reads every tier of the running config; logs those whose availability changed.
    void endpointStateChanged();

private:
    bool available(const config::TierConfig &tier, QStringList *reasons) const;

    const config::ConfigStore &m_store;
    const health::HealthRegistry &m_health;
    QHash<QString, bool> m_available; // tier name → available when last read
};

} // namespace switchyard::routing
