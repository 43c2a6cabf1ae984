#include "routing/model_router.h"

#include <algorithm>

namespace switchyard::routing {

ModelRouter::ModelRouter(const config::Config &config)
{
    for (int index = 0; index < config.providers.size(); ++index) {
        const config::ProviderConfig &provider = config.providers[index];
        for (const config::ModelRoute &model : provider.models) {
            m_serversByModel[model.publicName].append(
                Server{index, provider.id, model.upstreamName, provider.weight});
        }
    }
    for (QList<Server> &servers : m_serversByModel) {
        std::stable_sort(servers.begin(), servers.end(),
                         [](const Server &a, const Server &b) { return a.weight > b.weight; });
    }
}

std::optional<RouteDecision> ModelRouter::route(const QString &model, double draw) const
{
    const auto found = m_serversByModel.constFind(model);
    if (found == m_serversByModel.constEnd())
        return std::nullopt;
    const QList<Server> &servers = *found;

    int totalWeight = 0;
    for (const Server &server : servers)
        totalWeight += server.weight;
    qsizetype chosen = 0;
    if (totalWeight > 0) {
        double point = draw * totalWeight;
        for (qsizetype i = 0; i < servers.size(); ++i) {
            point -= servers[i].weight;
            if (point < 0) {
                chosen = i;
                break;
            }
        }
    } else {
        // Every server has weight 0: nobody is preferred, so share evenly.
        chosen = std::min<qsizetype>(qsizetype(draw * servers.size()), servers.size() - 1);
    }

    RouteDecision decision;
    decision.model = model;
    const auto candidate = [](const Server &server) {
        RouteCandidate candidate;
        candidate.providerIndex = server.providerIndex;
        candidate.providerId = server.providerId;
        candidate.upstreamModel = server.upstreamModel;
        return candidate;
    };
    decision.candidates.append(candidate(servers[chosen]));
    for (qsizetype i = 0; i < servers.size(); ++i) {
        if (i != chosen)
            decision.candidates.append(candidate(servers[i]));
    }
    const QString reason =
        QStringLiteral("model `%1` is served by %2 provider(s); weighted draw chose "
                       "`%3` (weight %4 of %5)")
            .arg(model)
            .arg(servers.size())
            .arg(servers[chosen].providerId)
            .arg(servers[chosen].weight)
            .arg(totalWeight);
    decision.steps.append({QStringLiteral("pool"), reason});
    return decision;
}

QList<QPair<QString, QString>> ModelRouter::models() const
{
    QList<QPair<QString, QString>> models;
    for (auto it = m_serversByModel.cbegin(); it != m_serversByModel.cend(); ++it) {
        // The provider listed first in the file owns the model in /v1/models.
        const auto first = std::min_element(it->cbegin(), it->cend(), [](auto &a, auto &b) {
            return a.providerIndex < b.providerIndex;
        });
        models.append({it.key(), first->providerId});
    }
    std::sort(models.begin(), models.end());
    return models;
}

} // namespace switchyard::routing
