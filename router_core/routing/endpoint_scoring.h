#pragma once

#include "config/routing_config.h"
#include "routing/route_decision.h"

#include <QVarLengthArray>
#include <QtGlobal>
#include <span>

namespace switchyard::routing {

// What the config says about an endpoint; fixed for a config snapshot.
struct EndpointProfile {
    int endpoint = -1;
    int weight = 1;
    int capacity = 64;
    double latencyObjectiveMs = 2500.0;
    quint64 idHash = 0; // stableHash of the provider id, for session affinity
};

// What the health registry says about an endpoint now (its public read methods, one call each).
struct EndpointHealth {
    bool selectable = true;
    int inFlight = 0;
    double latencyP50Ms = -1.0; // negative: nothing measured yet
    double successRatio = 1.0;
    int recentCalls = 0;
    double trafficShare = 1.0; // below 1 while ramping up after recovering
};

struct ScoredEndpoint {
    int member = -1; // position in the pool given to rankPool
    double score = 0.0;
    ScoreFactors factors;
};

// How the first endpoint of a ranking was chosen.
enum class FirstChoice { None, Affinity, WeightedDraw };

// How rankPool orders what it scored.
enum class PoolOrder {
    ChooseFirst, // the first by session affinity or a weighted draw, the rest by score
    ByScore,     // all by score, highest first (failover pools)
    AsListed,    // as given (the configured fallback chain)
};

struct PoolRanking {
    QVarLengthArray<ScoredEndpoint, 64> ranked; // selectable endpoints, in the order to try them
    QVarLengthArray<int, 16> skipped;           // members that are not selectable
    FirstChoice first = FirstChoice::None;
    double scoreTotal = 0.0;
};

// Successes an endpoint is assumed to have had at the pool's usual rate before its first real
// call, so one early failure or success does not swing its score (the "neutral start").
constexpr int kNeutralPriorCalls = 5;

// Scores the selectable members of a pool (docs/routing.md, "Choosing an endpoint"):
//   load    = 1 - in-flight / capacity, clamped to [0, 1]
//   latency = objective / (objective + p50); the pool's mean of measured endpoints when
//             nothing is measured yet
//   success = recent success ratio, smoothed towards the pool's mean by kNeutralPriorCalls
//   weight  = configured weight / the pool's largest weight
//   score   = weight * (load, latency, success averaged with the scoring weights) * traffic share,
//             and 0 for an endpoint at or over its capacity
// Then orders them. `profiles` and `health` are the same members, in the same order. ChooseFirst:
// with a session (sessionHash != 0) the session's endpoint by rendezvous hashing goes first unless
// it is full; otherwise `draw`, a number in [0, 1), picks the first with probability proportional
// to its score. The rest follow by score, highest first.
PoolRanking rankPool(std::span<const EndpointProfile> profiles,
                     std::span<const EndpointHealth> health, const config::ScoringWeights &weights,
                     PoolOrder order, quint64 sessionHash = 0, double draw = 0.0);

} // namespace switchyard::routing
