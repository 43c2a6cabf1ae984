#pragma once

#include <QList>
#include <QString>
#include <QStringList>
#include <chrono>

namespace switchyard::config {

// A tier is a contract, not only a pool (DESIGN.md, "Tiers"): its own timeout, retries and
// largest input it takes.
struct TierConfig {
    QString name;                         // "light" or "pro"
    QStringList pool;                     // provider ids
    std::chrono::milliseconds timeout{0}; // per attempt; zero means the global timeouts
    int retries = 0;                      // retries within this tier
    int maxInputTokens = 0;               // zero means no limit
};

// Tiers, rules, the gearbox, scoring weights and the fallback chain, as parsed from the file.
// Filled by checkRoutingSections (routing_section.cpp).
struct RoutingConfig {
    QList<TierConfig> tiers;
    QStringList fallbackChain; // provider ids, tried in order after the tiers

    const TierConfig *tier(const QString &name) const
    {
        for (const TierConfig &candidate : tiers) {
            if (candidate.name == name)
                return &candidate;
        }
        return nullptr;
    }
};

} // namespace switchyard::config
