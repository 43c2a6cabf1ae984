#include "routing/endpoint_scoring.h"

#include "routing/stable_hash.h"

#include <algorithm>

namespace switchyard::routing {

namespace {

// Latency factor of an endpoint answering exactly at its objective; used when no endpoint of
// the pool has been measured, where any shared value ranks them the same.
constexpr double kUnmeasuredLatency = 0.5;

} // namespace

PoolRanking rankPool(std::span<const EndpointProfile> profiles,
                     std::span<const EndpointHealth> health, const config::ScoringWeights &weights,
                     PoolOrder order, quint64 sessionHash, double draw)
{
    Q_ASSERT(profiles.size() == health.size());
    const qsizetype count = qsizetype(profiles.size());
    PoolRanking ranking;
    double latencySum = 0.0;
    int latencyMeasured = 0;
    double successSum = 0.0;
    int successMeasured = 0;
    int largestWeight = 0;
    for (qsizetype i = 0; i < count; ++i) {
        if (!health[i].selectable) {
            ranking.skipped.append(int(i));
            continue;
        }
        largestWeight = std::max(largestWeight, profiles[i].weight);
        if (health[i].latencyP50Ms >= 0.0) {
            const double objective = std::max(1.0, profiles[i].latencyObjectiveMs);
            latencySum += objective / (objective + health[i].latencyP50Ms);
            ++latencyMeasured;
        }
        if (health[i].recentCalls > 0) {
            successSum += health[i].successRatio;
            ++successMeasured;
        }
    }
    const double neutralLatency =
        latencyMeasured > 0 ? latencySum / latencyMeasured : kUnmeasuredLatency;
    const double neutralSuccess = successMeasured > 0 ? successSum / successMeasured : 1.0;
    const double weightSum = weights.load + weights.latency + weights.success;

    for (qsizetype i = 0; i < count; ++i) {
        const EndpointHealth &now = health[i];
        if (!now.selectable)
            continue;
        const EndpointProfile &profile = profiles[i];
        ScoredEndpoint scored;
        scored.member = int(i);
        ScoreFactors &factors = scored.factors;
        factors.load =
            std::clamp(1.0 - double(now.inFlight) / std::max(1, profile.capacity), 0.0, 1.0);
        if (now.latencyP50Ms >= 0.0) {
            const double objective = std::max(1.0, profile.latencyObjectiveMs);
            factors.latency = objective / (objective + now.latencyP50Ms);
        } else {
            factors.latency = neutralLatency;
        }
        factors.success =
            (now.successRatio * now.recentCalls + neutralSuccess * kNeutralPriorCalls) /
            (now.recentCalls + kNeutralPriorCalls);
        factors.weight = largestWeight > 0 ? double(profile.weight) / largestWeight : 1.0;
        const double quality =
            weightSum > 0.0 ? (weights.load * factors.load + weights.latency * factors.latency +
                               weights.success * factors.success) /
                                  weightSum
                            : 1.0;
        // A full endpoint scores 0 like a weightless one: tried only after every other.
        scored.score = factors.load <= 0.0
                           ? 0.0
                           : factors.weight * quality * std::clamp(now.trafficShare, 0.0, 1.0);
        ranking.scoreTotal += scored.score;
        ranking.ranked.append(scored);
    }
    if (ranking.ranked.isEmpty() || order == PoolOrder::AsListed)
        return ranking;

    // The rest go by score; equal scores keep pool order so a ranking is reproducible.
    std::sort(ranking.ranked.begin(), ranking.ranked.end(),
              [](const ScoredEndpoint &a, const ScoredEndpoint &b) {
                  return a.score != b.score ? a.score > b.score : a.member < b.member;
              });
    if (order == PoolOrder::ByScore)
        return ranking;

    qsizetype first = -1;
    if (sessionHash != 0) {
        quint64 best = 0;
        for (qsizetype r = 0; r < ranking.ranked.size(); ++r) {
            const ScoredEndpoint &candidate = ranking.ranked[r];
            // A full endpoint or one weighted out gives up its sessions until it has room.
            if (candidate.factors.load <= 0.0 || candidate.factors.weight <= 0.0)
                continue;
            const quint64 weight = rendezvousWeight(sessionHash, profiles[candidate.member].idHash);
            if (first < 0 || weight > best) {
                best = weight;
                first = r;
            }
        }
        if (first >= 0)
            ranking.first = FirstChoice::Affinity;
    }
    if (first < 0) {
        ranking.first = FirstChoice::WeightedDraw;
        if (ranking.scoreTotal > 0.0) {
            double point = draw * ranking.scoreTotal;
            first = ranking.ranked.size() - 1;
            for (qsizetype r = 0; r < ranking.ranked.size(); ++r) {
                point -= ranking.ranked[r].score;
                if (point < 0.0) {
                    first = r;
                    break;
                }
            }
        } else {
            // Nobody scores above zero (all full, or all weighted out): share evenly.
            first = std::min<qsizetype>(qsizetype(draw * ranking.ranked.size()),
                                        ranking.ranked.size() - 1);
        }
    }
    if (first > 0)
        std::rotate(ranking.ranked.begin(), ranking.ranked.begin() + first,
                    ranking.ranked.begin() + first + 1);
    return ranking;
}

} // namespace switchyard::routing
