#include "routing/tier_watch.h"

#include "logging/log_line.h"

#include <QLoggingCategory>

Q_LOGGING_CATEGORY(lcTiers, "switchyard.tiers")

namespace switchyard::routing {

using namespace Qt::StringLiterals;

TierWatch::TierWatch(const config::ConfigStore &store, const health::HealthRegistry &health)
    : m_store(store), m_health(health)
{
    for (const config::TierConfig &tier : m_store.config().routing.tiers)
        m_available.insert(tier.name, available(tier, nullptr));
}

bool TierWatch::available(const config::TierConfig &tier, QStringList *reasons) const
{
    // A tier with an empty pool is not a tier that went down: routing skips it by design.
    if (tier.pool.isEmpty())
        return true;
    for (const QString &id : tier.pool) {
        const int index = m_health.indexOf(id);
        if (index >= 0 && m_health.selectable(index))
            return true;
        if (reasons)
            reasons->append(index < 0 ? u"%1 (not running)"_s.arg(id)
                                      : u"%1 (%2)"_s.arg(id, m_health.unavailableReason(index)));
    }
    return false;
}

void TierWatch::endpointStateChanged()
{
    for (const config::TierConfig &tier : m_store.config().routing.tiers) {
        QStringList reasons;
        const bool now = available(tier, &reasons);
        const bool before = m_available.value(tier.name, true);
        m_available.insert(tier.name, now);
        if (now == before || !lcTiers().isInfoEnabled())
            continue;
        logging::LogFields fields;
        fields.add("tier"_L1, tier.name);
        if (now) {
            logging::write(lcTiers(), QtInfoMsg, u"tier available"_s, fields);
        } else {
            fields.add("reason"_L1,
                       u"none of its endpoints can be chosen: "_s + reasons.join(u", "_s));
            logging::write(lcTiers(), QtInfoMsg, u"tier unavailable"_s, fields);
        }
    }
}

} // namespace switchyard::routing
