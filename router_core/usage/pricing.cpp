#include "usage/pricing.h"

#include <algorithm>

namespace switchyard::usage {

Cost costOf(const config::PricingConfig &pricing, const QString &model, const TokenCounts &tokens)
{
    const auto price = pricing.models.constFind(model);
    if (price == pricing.models.cend())
        return {};
    const qint64 input = std::max<qint64>(tokens.inputTokens, 0);
    const qint64 cacheRead = std::clamp<qint64>(tokens.cacheReadTokens, 0, input);
    const qint64 cacheWrite = std::clamp<qint64>(tokens.cacheWriteTokens, 0, input - cacheRead);
    const qint64 uncached = input - cacheRead - cacheWrite;
    const double inputPrice = price->inputPerMillionUsd;
    const double readPrice = price->cacheReadPerMillionUsd.value_or(inputPrice);
    const double writePrice = price->cacheWritePerMillionUsd.value_or(inputPrice);
    constexpr double kTokensPerPrice = 1'000'000.0;
    Cost cost;
    cost.priced = true;
    cost.usd = (double(uncached) * inputPrice + double(cacheRead) * readPrice +
                double(cacheWrite) * writePrice +
                double(std::max<qint64>(tokens.outputTokens, 0)) * price->outputPerMillionUsd) /
               kTokensPerPrice;
    // Each part is exactly 0 when its price fell back to the input price.
    cost.cacheSavedUsd = (double(cacheRead) * (inputPrice - readPrice) +
                          double(cacheWrite) * (inputPrice - writePrice)) /
                         kTokensPerPrice;
    return cost;
}

void priceRecord(telemetry::RequestRecord &record, const config::PricingConfig &pricing)
{
    const Cost cost = costOf(
        pricing, record.model,
        {record.inputTokens, record.outputTokens, record.cacheReadTokens, record.cacheWriteTokens});
    record.costUsd = cost.usd;
    record.cacheSavedUsd = cost.cacheSavedUsd;
    record.priced = cost.priced;
}

} // namespace switchyard::usage
