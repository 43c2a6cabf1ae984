#pragma once

#include "config/config_store.h"
#include "config/resilience_config.h"
#include "limits/tenant_quota.h"
#include "protocol/openai_error.h"
#include "timing/clock.h"

#include <QByteArrayView>
#include <QHash>
#include <QList>
#include <QString>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

namespace switchyard::resilience {

// Whether a request may enter, and if not, the fast OpenAI-shaped refusal it gets.
struct AdmissionVerdict {
    enum class Kind { Admitted, LoopDetected, Overloaded, OverBudget, TenantRateLimited };
    Kind kind = Kind::Admitted;
    protocol::ApiError error; // meaningful unless admitted; carries Retry-After where it helps

    bool admitted() const { return kind == Kind::Admitted; }
};

// Admission control (docs/resilience.md, "Admission"): the loop guard, the global
// in-flight gate and per-tenant rates before routing; during execution, how many failed-over
// calls an endpoint may take (the health registry counts them) and the share of a degraded
// tier's traffic let through to its fallbacks. The rules are the config store's current
// `admission` section, read at each question, so a new snapshot applies at once and the
// tenants' buckets survive it. Engine thread only.
class AdmissionController {
public:
    // The store and the clock (the health registry's seam for time) must outlive the controller.
    explicit AdmissionController(const config::ConfigStore &store,
                                 const timing::Clock &clock = timing::SteadyClock::instance(),
                                 std::unique_ptr<limits::TenantQuota> quota = nullptr);
    ~AdmissionController();

    const config::AdmissionConfig &rules() const { return m_store.config().resilience.admission; }

    // The budgets' verdict on a tenant and a client key (usage::BudgetTracker::refusal): a
    // refusal to answer with, or nothing when they may spend. The engine sets it; none: no
    // budgets.
    using SpendCheck = std::function<std::optional<protocol::ApiError>(const QString &tenant,
                                                                       const QString &keyId)>;
    void setSpendCheck(SpendCheck check) { m_spendCheck = std::move(check); }

    // Checked in this order: depth (a loop), the global gate, the budgets, the tenant's rate. A
    // refused request takes nothing from its tenant's allowance.
    AdmissionVerdict admit(const QString &tenant, int depth, int requestsInFlight,
                           const QString &keyId = {});

    // Failed-over calls an endpoint of this capacity may have in flight at once.
    int failoverLimit(int capacity) const;

    // Whether this request is among the share of a degraded tier's traffic let through to its
    // fallbacks. Decided by a hash of the request id, so the same request (and a client retrying
    // with its id) gets the same answer.
    bool admitsToDegradedFallback(QByteArrayView requestId) const;

private:
    std::optional<config::TenantLimit> limitFor(const QString &tenant) const;

    const config::ConfigStore &m_store;
    const timing::Clock &m_clock;
    std::unique_ptr<limits::TenantQuota> m_quota;
    SpendCheck m_spendCheck;
};

} // namespace switchyard::resilience
