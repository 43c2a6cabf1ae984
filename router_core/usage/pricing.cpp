#include "usage/pricing.h"

#include <algorithm>

namespace switchyard::usage {

Cost costOf(const config::PricingConfig &pricing, const QString &model, qint64 inputTokens,
            qint64 outputTokens)
{
    const auto price = pricing.models.constFind(model);
    if (price == pricing.models.cend())
        return {};
    constexpr double kTokensPerPrice = 1'000'000.0;
    const double usd =
        double(std::max<qint64>(inputTokens, 0)) * price->inputPerMillionUsd / kTokensPerPrice +
        double(std::max<qint64>(outputTokens, 0)) * price->outputPerMillionUsd / kTokensPerPrice;
    return {usd, true};
}

} // namespace switchyard::usage
