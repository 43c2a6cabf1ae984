#pragma once

#include <QList>
#include <QString>

namespace switchyard::routing {

// One provider that may serve the request, with the model name it must be sent.
struct RouteCandidate {
    int providerIndex = -1; // index into Config::providers and the health registry
    QString providerId;
    QString upstreamModel;
};

// What the router decided and why. The executor walks `candidates` in order. The routing-engine
// work adds the matched rule, tier, canary side and per-candidate scores to this same value.
struct RouteDecision {
    QString model;
    QList<RouteCandidate> candidates;
    QString reason;
};

} // namespace switchyard::routing
