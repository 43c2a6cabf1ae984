#pragma once

#include "config/usage_config.h"

#include <QString>

namespace switchyard::usage {

struct Cost {
    double usd = 0.0;
    bool priced = false; // false: the model has no price, and costs 0
};

// What `inputTokens` and `outputTokens` of `model` cost by the price table: tokens times the
// price per million. Negative counts (unknown) count as none.
Cost costOf(const config::PricingConfig &pricing, const QString &model, qint64 inputTokens,
            qint64 outputTokens);

} // namespace switchyard::usage
