#pragma once

#include <QHash>
#include <QList>
#include <QString>
#include <optional>

namespace switchyard::config {

// What one model costs, in US dollars per million tokens, as the provider bills it.
struct ModelPrice {
    double inputPerMillionUsd = 0.0;
    double outputPerMillionUsd = 0.0;
    // Input tokens read from or written to the provider's prompt cache. Not set: they cost the
    // input price, and no saving is claimed for them.
    std::optional<double> cacheReadPerMillionUsd;
    std::optional<double> cacheWritePerMillionUsd;
};

// The `pricing` section: the price table the usage ledger costs each request with
// (docs/configuration.md). Keyed by the public model name a client asks for. A model not listed
// costs nothing and its requests are marked unpriced.
struct PricingConfig {
    QHash<QString, ModelPrice> models;
};

// One entry of `budgets`: a spending limit for a tenant or a client key, per UTC day and/or UTC
// month. At least one of the two limits is set.
struct BudgetConfig {
    enum class Scope { Tenant, Key };
    Scope scope = Scope::Tenant;
    QString subject; // the tenant's name or the key's id
    QString name;    // `name`, else "tenant X" or "key X": what the 429 and the console call it
    std::optional<double> dailyUsd;
    std::optional<double> monthlyUsd;

    friend bool operator==(const BudgetConfig &, const BudgetConfig &) = default;
};

// `pricing` and `budgets` together: what the usage ledger and the budget tracker read.
struct UsageConfig {
    PricingConfig pricing;
    QList<BudgetConfig> budgets;
};

} // namespace switchyard::config
