#pragma once

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QtGlobal>

// The usage ledger's values: what crosses from the engine to the ledger's writer thread, to the
// admin API and to the console. Plain values, copied across threads.
namespace switchyard::usage {

// One finished request as the ledger keeps it.
struct LedgerRow {
    qint64 finishedAtMs = 0; // milliseconds since the epoch, UTC
    QByteArray requestId;
    QString tenant; // empty: none given
    QString keyId;  // the client key's id; empty without keys
    QString model;  // the public name the client asked for
    QString provider;
    QString route;
    QString tier;
    qint64 inputTokens = 0;
    qint64 outputTokens = 0;
    bool tokensEstimated = false; // no provider count: estimated from the text (RequestRecord)
    qint64 cacheReadTokens = 0;   // parts of inputTokens read from the provider's prompt cache
    qint64 cacheWriteTokens = 0;  // and written to it
    double costUsd = 0.0;
    double cacheSavedUsd = 0.0; // what the cache saved at the input price; negative: it cost more
    bool priced = false;        // the model has a price in `pricing`; unpriced rows cost 0
    int status = 0;
    qint64 latencyMs = 0;
    // The response cache (docs/operations.md): "hit" for a request answered from it (no tokens,
    // no cost), "miss" for one it looked up and did not have; empty when it was not asked.
    QString responseCache;
    double responseCacheSavedUsd = 0.0; // a hit's: what its answer cost when it was made
    // A shadow call's row (docs/routing.md, "Shadow traffic"): the live request it mirrored.
    // Its cost is kept, but no budget counts it.
    QByteArray shadowOf;

    bool isShadow() const { return !shadowOf.isEmpty(); }
};

// What a usage report may be grouped by. Day and Hour are UTC.
enum class UsageDimension { Tenant, Key, Model, Provider, Day, Hour };

// The word a dimension has in the admin API's `group_by` and in reports.
QString dimensionName(UsageDimension dimension);

// Which rows, grouped how: those that finished in [from, to).
struct UsageQuery {
    QList<UsageDimension> groupBy{UsageDimension::Tenant};
    QDateTime from; // UTC
    QDateTime to;   // UTC, excluded
};

// One group of a report: the dimensions' values in the query's order, and its sums.
struct UsageGroup {
    QStringList keys; // a Day is "2026-12-01", an Hour "2026-12-01T14:00:00Z"
    qint64 requests = 0;
    qint64 inputTokens = 0;
    qint64 outputTokens = 0;
    qint64 estimatedRequests = 0; // requests whose tokens were estimated
    qint64 unpricedRequests = 0;  // requests of a model without a price
    qint64 cacheReadTokens = 0;   // of inputTokens, read from prompt caches
    qint64 cacheWriteTokens = 0;  // of inputTokens, written to them
    double costUsd = 0.0;
    double cacheSavedUsd = 0.0;
    // The response cache: requests answered from it, those it looked up and missed, and what
    // the hits saved (apart from the prompt caches' cacheSavedUsd).
    qint64 responseCacheHits = 0;
    qint64 responseCacheMisses = 0;
    double responseCacheSavedUsd = 0.0;

    double estimatedShare() const { return requests ? double(estimatedRequests) / requests : 0.0; }
    // Hits among the requests the response cache looked up; 0 when it looked none up.
    double responseCacheHitRatio() const
    {
        const qint64 looked = responseCacheHits + responseCacheMisses;
        return looked ? double(responseCacheHits) / double(looked) : 0.0;
    }
    // Adds `other`'s sums (not its keys) to this group's.
    void addSums(const UsageGroup &other);
};

// A query's answer: groups ordered by time when the first dimension is a time, else by cost,
// highest first. Rows still waiting in memory are included, so it is never behind.
struct UsageReport {
    UsageQuery query;
    QList<UsageGroup> groups;
    qint64 rowsInMemory = 0; // of them, not yet written to the database
    QString problem;         // the database could not be read: the groups are memory's only
    // In a fleet: the other nodes whose usage the groups include (docs/fleet.md, "Usage"), and
    // why they could not be added when they could not; both empty on a single node.
    QStringList fleetNodes;
    QString fleetProblem;
};

// The ledger's health, for the console and the admin API: whether rows reach the database.
struct UsageLedgerState {
    bool persistent = false; // a state directory is configured: rows go to a file
    bool writable = true;    // the last write (or open) succeeded
    QString problem;         // why not, when not
    qint64 rowsInMemory = 0; // waiting for the next batch, or for the database to come back
    int memoryCapacityRows = 0;
    quint64 droppedRows = 0; // lost beyond memoryCapacityRows while the database was away
    quint64 writtenRows = 0; // since start
};

// One budget in one window, as the console, the admin API and alert rules read it.
struct BudgetStatus {
    QString name;    // the budget's name: `name` in config, else "tenant X" / "key X"
    QString scope;   // "tenant" or "key"
    QString subject; // the tenant's name or the key's id
    QString window;  // "day" or "month" (UTC)
    double limitUsd = 0.0;
    double spentUsd = 0.0;
    QDateTime resetsAt; // UTC: the window's end

    double fraction() const { return limitUsd > 0.0 ? spentUsd / limitUsd : 0.0; }
    bool exhausted() const { return spentUsd >= limitUsd; }
};

} // namespace switchyard::usage

Q_DECLARE_METATYPE(switchyard::usage::UsageQuery)
Q_DECLARE_METATYPE(switchyard::usage::UsageReport)
Q_DECLARE_METATYPE(switchyard::usage::UsageLedgerState)
Q_DECLARE_METATYPE(switchyard::usage::BudgetStatus)
