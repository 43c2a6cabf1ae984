#pragma once

#include "config/config.h"
#include "routing/route_decision.h"

#include <QHash>
#include <QStringList>
#include <optional>

namespace switchyard::routing {

// The foundation's router: the requested model selects the providers that serve it, and a
// weighted draw picks which goes first. The rest follow in order of weight as fallbacks.
class ModelRouter {
public:
    explicit ModelRouter(const config::Config &config);

    // `draw` is a uniform random number in [0, 1); injected so tests are deterministic.
    std::optional<RouteDecision> route(const QString &model, double draw) const;

    // Every model any provider serves, sorted, each with the first provider that serves it.
    QList<QPair<QString, QString>> models() const;

private:
    struct Server {
        int providerIndex;
        QString providerId;
        QString upstreamModel;
        int weight;
    };
    QHash<QString, QList<Server>> m_serversByModel; // servers sorted by weight, heaviest first
};

} // namespace switchyard::routing
