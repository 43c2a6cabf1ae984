#pragma once

#include "routing/context_sample.h"
#include "routing/route_decision.h"

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>

namespace switchyard::routing {

class Router;
class RoutingTable;

// Where a decision sends a request, as the impact preview groups requests: the rule, the tier and
// the first provider, or the refusal.
struct RouteDestination {
    QString rule;
    QString tier;
    QString provider; // the first candidate; empty when refused
    RouteDecision::Refusal refusal = RouteDecision::Refusal::None;

    static RouteDestination of(const RouteDecision &decision);
    bool operator==(const RouteDestination &) const = default;
};

// One sampled request of a cell with both decisions, side by side.
struct ImpactExample {
    QByteArray requestId;
    QString model;
    QString user;
    QString tenant;
    QString session;
    RouteDecision live;
    RouteDecision edited;
};

// Every sampled request that goes from `from` (live rules) to `to` (edited rules).
struct ImpactCell {
    RouteDestination from;
    RouteDestination to;
    int count = 0;
    QList<ImpactExample> examples; // the first few, as many as the caller asked for
    bool moves() const { return !(from == to); }
};

// What an edit of the rules would do to recent traffic (docs/routing.md, "Impact preview").
struct ImpactPreview {
    static constexpr int kExamplesPerCell = 5; // unless the caller asks for more
    static constexpr int kMostExamplesPerCell = 2'000;

    QString error;        // why there is no answer (the rules do not validate); empty otherwise
    int sampled = 0;      // requests replayed
    int moved = 0;        // whose destination changes
    int newlyRefused = 0; // refused under the edit, not under the live rules
    qint64 oldestMsSinceEpoch = 0; // the oldest request replayed; 0 when none
    int sampleCapacity = 0;
    int windowMinutes = 0;
    int perMinute = 0;
    int stride = 1;
    QList<ImpactCell> cells; // most requests first
};

// Routes every sampled context twice through the same Router::route live traffic uses: under
// `live` and under `edited`, the edit being their only difference. Canary buckets and affinity
// hash the request's own id, user, session and tenant, so they come out as live traffic's would.
ImpactPreview previewImpact(const Router &router, const RoutingTable &live,
                            const RoutingTable &edited, const QList<SampledRequest> &requests,
                            int examplesPerCell = ImpactPreview::kExamplesPerCell);

} // namespace switchyard::routing

Q_DECLARE_METATYPE(switchyard::routing::ImpactPreview)
