#pragma once

#include "http/admin_endpoints.h"
#include "timing/clock.h"
#include "usage/budget_tracker.h"

#include <QJsonObject>
#include <functional>

namespace switchyard::usage {
class UsageLedger;
}

namespace switchyard::admin {

// GET /admin/v1/usage (a usage report, grouped and filtered by time) and
// GET /admin/v1/usage/budgets (each budget's spend in its windows). A report runs on the
// ledger's own thread and is answered when it is ready, on the thread of `context` (the engine's);
// the engine thread never waits for the database. docs/operations.md describes both. `clock` (its
// UTC wall time places "today" and "this month") must outlive the endpoints.
//
// `widen`, when given, turns the ledger's report (this node's) into the fleet's before it is
// answered (fleet/shared_usage.h); it answers through its callback on the same thread.
using UsageWidening =
    std::function<void(usage::UsageReport, std::function<void(usage::UsageReport)>)>;
void registerUsageAdmin(http::AdminEndpoints &admin, usage::UsageLedger &ledger,
                        usage::BudgetTracker &budgets, QObject *context,
                        const timing::Clock &clock = timing::SteadyClock::instance(),
                        UsageWidening widen = {});

// A report as the admin API writes it; the console's tests compare against the same words.
QJsonObject usageReportJson(const usage::UsageReport &report,
                            const usage::UsageLedgerState &ledger);
QJsonObject budgetStatusJson(const usage::BudgetStatus &status);

} // namespace switchyard::admin
