#include "routing/impact_preview.h"

#include "routing/router.h"

#include <algorithm>

namespace switchyard::routing {

RouteDestination RouteDestination::of(const RouteDecision &decision)
{
    RouteDestination destination{decision.rule, decision.tier, {}, decision.refusal};
    if (decision.refusal == RouteDecision::Refusal::None && !decision.candidates.isEmpty())
        destination.provider = decision.candidates.first().providerId;
    return destination;
}

ImpactPreview previewImpact(const Router &router, const RoutingTable &live,
                            const RoutingTable &edited, const QList<SampledRequest> &requests,
                            int examplesPerCell)
{
    ImpactPreview preview;
    preview.sampled = int(requests.size());
    if (!requests.isEmpty())
        preview.oldestMsSinceEpoch = requests.first().routedAtMsSinceEpoch;
    for (const SampledRequest &request : requests) {
        RouteDecision before = router.route(live, request.context);
        RouteDecision after = router.route(edited, request.context);
        const RouteDestination from = RouteDestination::of(before);
        const RouteDestination to = RouteDestination::of(after);
        if (!(from == to))
            ++preview.moved;
        if (from.refusal == RouteDecision::Refusal::None &&
            to.refusal != RouteDecision::Refusal::None)
            ++preview.newlyRefused;
        auto cell = std::find_if(preview.cells.begin(), preview.cells.end(),
                                 [&](const ImpactCell &c) { return c.from == from && c.to == to; });
        if (cell == preview.cells.end()) {
            preview.cells.append({from, to, 0, {}});
            cell = preview.cells.end() - 1;
        }
        ++cell->count;
        if (cell->examples.size() < examplesPerCell) {
            const RequestContext &context = request.context;
            cell->examples.append({context.requestId, context.model, context.user, context.tenant,
                                   context.session, std::move(before), std::move(after)});
        }
    }
    // Moves first, then by size: the rows an operator must read come on top.
    std::stable_sort(preview.cells.begin(), preview.cells.end(),
                     [](const ImpactCell &a, const ImpactCell &b) {
                         if (a.moves() != b.moves())
                             return a.moves();
                         return a.count > b.count;
                     });
    return preview;
}

} // namespace switchyard::routing
