#pragma once

#include "telemetry/request_recorder.h"
#include "timing/clock.h"
#include "usage/budget_tracker.h"
#include "usage/usage_types.h"

#include <QObject>
#include <QPointer>
#include <QThread>
#include <chrono>
#include <functional>

namespace switchyard::usage {

// How the ledger writes. The defaults are what docs/operations.md promises; tests shorten them.
struct LedgerOptions {
    QString databasePath; // the state database; empty: a private in-memory database
    // A batch is written this long after the last one, or at once when it holds flushRows
    // rows, whichever comes first. A crash loses at most the rows of one interval.
    std::chrono::milliseconds flushInterval{1000};
    int flushRows = 500;
    // While the database cannot be written, rows wait in memory, at most this many (about
    // 300 bytes each: 30 MB); beyond it the oldest are dropped and counted.
    int memoryCapacityRows = 100000;
    // How often a database that failed is tried again (reopened when it could not be opened).
    std::chrono::milliseconds retryInterval{5000};
    // How long one write waits for another connection's lock before it counts as failed.
    int busyTimeoutMs = 1000;
};

class LedgerWriter;

// The usage ledger (docs/operations.md, "Usage, cost and budgets"): a trace sink that turns each
// finished request into one row (tokens, the cost the recorder priced it at, status, latency)
// and hands it to a writer on a thread of its own, which writes batches into the state
// database's `usage_ledger` table. The engine thread only makes the row, adds it to the
// budgets' spend and pushes it into a queue under a short lock: it never touches SQLite. A
// database that is damaged, locked or gone leaves the gateway serving: the rows wait in memory
// (bounded), a warning is logged once, state() says why, and the writer tries again every
// retryInterval until the rows land.
class UsageLedger final : public QObject, public telemetry::TraceSink {
    Q_OBJECT
public:
    // Opens the database on the writer's thread and waits for that (at most the busy timeout),
    // so the budgets start seeded with what earlier runs spent this day and month.
    // `clock`'s wall time places the budgets' seed in its UTC day and month; its steady time
    // paces the retries of a database that failed. Read on the writer's thread.
    UsageLedger(BudgetTracker &budgets, LedgerOptions options,
                const timing::Clock &clock = timing::SteadyClock::instance(),
                QObject *parent = nullptr);
    // Writes what is still in memory (when the database takes it), then stops the thread.
    ~UsageLedger() override;

    // Engine thread.
    void traceFinished(const telemetry::Trace &trace) override;

    // The row a finished request makes, with the cost its record was priced at
    // (usage::priceRecord).
    static LedgerRow rowFor(const telemetry::RequestRecord &record);

    // Any thread.
    UsageLedgerState state() const;
    // Runs the query on the writer's thread (the database's groups plus the rows still in
    // memory) and calls `done` on `context`'s thread; dropped when `context` is gone by then.
    // Call it on `context`'s thread.
    void query(const UsageQuery &query, QObject *context, std::function<void(UsageReport)> done);
    // Asks the writer to write what it holds now rather than at the next interval.
    void flushSoon();

private:
    BudgetTracker &m_budgets;
    LedgerWriter *m_writer = nullptr; // lives on m_thread; deleted there
    QThread m_thread;
};

} // namespace switchyard::usage
