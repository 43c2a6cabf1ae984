#pragma once

#include "config/usage_config.h"
#include "telemetry/request_record.h"

#include <QString>

namespace switchyard::usage {

// A request's tokens as they are priced. The prompt-cache counts are parts of inputTokens, as
// the adapters count them: inputTokens − cacheReadTokens − cacheWriteTokens went in uncached.
// Negative counts (unknown) count as none.
struct TokenCounts {
    qint64 inputTokens = 0;
    qint64 outputTokens = 0;
    qint64 cacheReadTokens = 0;
    qint64 cacheWriteTokens = 0;
};

struct Cost {
    double usd = 0.0;
    // What the cached tokens would have cost at the input price minus what they cost: negative
    // when cache writes cost more than the reads saved. 0 for a model without cache prices.
    double cacheSavedUsd = 0.0;
    bool priced = false; // false: the model has no price, and costs 0
};

// What `tokens` of `model` cost by the price table: each kind of token times its price per
// million, the cache's falling back to the input price. Cache counts beyond the input tokens (a
// provider's miscount) are capped to them, so no part is negative.
Cost costOf(const config::PricingConfig &pricing, const QString &model, const TokenCounts &tokens);

// Sets the record's cost, saving and priced flag from its model and counts: what the request
// recorder does to each finished request (telemetry::RequestRecorder::setPricer).
void priceRecord(telemetry::RequestRecord &record, const config::PricingConfig &pricing);

} // namespace switchyard::usage
