#include "usage/usage_ledger.h"

#include "storage/state_database.h"
#include "usage/usage_query.h"

#include <QLoggingCategory>
#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>
#include <QStringEncoder>
#include <QTimer>
#include <atomic>
#include <mutex>
#include <sqlite3.h>

Q_LOGGING_CATEGORY(lcUsage, "switchyard.usage")

namespace switchyard::usage {

using namespace Qt::StringLiterals;

namespace {

const QStringList kSchema{
    u"CREATE TABLE IF NOT EXISTS usage_ledger ("
    u" id INTEGER PRIMARY KEY,"
    u" finished_at_ms INTEGER NOT NULL,"
    u" request_id TEXT NOT NULL,"
    u" tenant TEXT NOT NULL,"
    u" key_id TEXT NOT NULL,"
    u" model TEXT NOT NULL,"
    u" provider TEXT NOT NULL,"
    u" route TEXT NOT NULL,"
    u" tier TEXT NOT NULL,"
    u" input_tokens INTEGER NOT NULL,"
    u" output_tokens INTEGER NOT NULL,"
    u" tokens_estimated INTEGER NOT NULL,"
    u" cost_usd REAL NOT NULL,"
    u" priced INTEGER NOT NULL,"
    u" status INTEGER NOT NULL,"
    u" latency_ms INTEGER NOT NULL,"
    u" cache_read_tokens INTEGER NOT NULL DEFAULT 0,"
    u" cache_write_tokens INTEGER NOT NULL DEFAULT 0,"
    u" cache_saved_usd REAL NOT NULL DEFAULT 0,"
    u" shadow_of TEXT NOT NULL DEFAULT '',"
    u" response_cache TEXT NOT NULL DEFAULT '',"
    u" response_cache_saved_usd REAL NOT NULL DEFAULT 0)"_s,
    // Every report and the budgets' seed read a time range, grouped: the time index is the one
    // they use. Releases before this one also kept indexes by tenant, model and key, which no
    // query filters by; each cost every row three more B-tree inserts (more than half of the
    // ledger thread's CPU per row), so they are dropped from files that have them.
    u"CREATE INDEX IF NOT EXISTS usage_ledger_time ON usage_ledger(finished_at_ms)"_s,
    u"DROP INDEX IF EXISTS usage_ledger_tenant"_s,
    u"DROP INDEX IF EXISTS usage_ledger_model"_s,
    u"DROP INDEX IF EXISTS usage_ledger_key"_s,
};

// Columns the table gained since its first release. A file an older release wrote gets them on
// open; its rows read as no cache used and nothing saved, which is what those releases counted.
const QList<storage::AddedColumn> kAddedColumns{
    {u"cache_read_tokens"_s, u"INTEGER NOT NULL DEFAULT 0"_s},
    {u"cache_write_tokens"_s, u"INTEGER NOT NULL DEFAULT 0"_s},
    {u"cache_saved_usd"_s, u"REAL NOT NULL DEFAULT 0"_s},
    // Shadow traffic (docs/routing.md): the live request a shadow call mirrored. Older rows are
    // all live requests.
    {u"shadow_of"_s, u"TEXT NOT NULL DEFAULT ''"_s},
    // The response cache (docs/operations.md): older rows were never answered from it.
    {u"response_cache"_s, u"TEXT NOT NULL DEFAULT ''"_s},
    {u"response_cache_saved_usd"_s, u"REAL NOT NULL DEFAULT 0"_s},
};

QString sqlExpression(UsageDimension dimension)
{
    switch (dimension) {
    case UsageDimension::Tenant:
        return u"tenant"_s;
    case UsageDimension::Key:
        return u"key_id"_s;
    case UsageDimension::Model:
        return u"model"_s;
    case UsageDimension::Provider:
        return u"provider"_s;
    case UsageDimension::Day:
        return u"strftime('%Y-%m-%d', finished_at_ms / 1000, 'unixepoch')"_s;
    case UsageDimension::Hour:
        return u"strftime('%Y-%m-%dT%H:00:00Z', finished_at_ms / 1000, 'unixepoch')"_s;
    }
    return {};
}

} // namespace

// Carries a finished report from the writer's thread to the asker's context object.
class ReportCourier final : public QObject {
    Q_OBJECT
Q_SIGNALS:
    void ready();
};

// The ledger's own thread: the only user of its database connection. Rows arrive through
// append() from the engine thread under m_mutex; everything else runs here.
class LedgerWriter final : public QObject {
    static constexpr int kColumns = 21;       // of an inserted row
    static constexpr int kRowsPerInsert = 32; // 672 parameters, under SQLite's 32,766

public:
    LedgerWriter(LedgerOptions options, const timing::Clock &clock)
        : m_options(std::move(options)), m_clock(clock),
          m_connectionName(u"switchyard-usage-ledger-%1"_s.arg(quintptr(this), 0, 16))
    {
        m_flushTimer.setInterval(m_options.flushInterval);
        QObject::connect(&m_flushTimer, &QTimer::timeout, this, [this] { flush(); });
        // A database that failed is tried again on its own, rows or not: the rows waiting in
        // memory land as soon as it can take them.
        m_retryTimer.setSingleShot(true);
        m_retryTimer.setInterval(m_options.retryInterval);
        QObject::connect(&m_retryTimer, &QTimer::timeout, this, [this] { flush(); });
    }

    // Any thread. True when the batch just became full: the caller asks for a flush.
    bool append(LedgerRow row)
    {
        std::lock_guard lock(m_mutex);
        // The limit is on every row in memory, both lists together. The oldest are the writer's:
        // this thread cannot touch them, so it marks them and the writer drops them when it next
        // takes the incoming rows (it is asked to: see flushRows).
        const qsizetype pendingKept = m_pendingCount - m_pendingToDrop;
        if (m_incoming.size() + pendingKept >= m_options.memoryCapacityRows) {
            if (pendingKept > 0) {
                ++m_pendingToDrop;
            } else if (!m_incoming.isEmpty()) {
                m_incoming.removeFirst();
                m_dropped.fetch_add(1, std::memory_order_relaxed);
            }
        }
        m_incoming.append(std::move(row));
        // Rows a report moved aside count too; one request for a flush until it runs.
        if (m_flushRequested || m_incoming.size() + m_pendingCount < m_options.flushRows)
            return false;
        m_flushRequested = true;
        return true;
    }

    UsageLedgerState state() const
    {
        UsageLedgerState state;
        state.persistent = !m_options.databasePath.isEmpty();
        state.memoryCapacityRows = m_options.memoryCapacityRows;
        state.droppedRows = m_dropped.load(std::memory_order_relaxed);
        state.writtenRows = m_written.load(std::memory_order_relaxed);
        std::lock_guard lock(m_mutex);
        state.writable = m_problem.isEmpty();
        state.problem = m_problem;
        state.rowsInMemory = m_incoming.size() + m_pendingCount - m_pendingToDrop;
        state.droppedRows += quint64(m_pendingToDrop); // dropped, only not yet freed
        return state;
    }

    // Writer thread, from here on.
    std::optional<SpendSeed> start()
    {
        m_flushTimer.start();
        tryOpen();
        return std::exchange(m_firstSeed, std::nullopt);
    }

    void setLateSeedHandler(std::function<void(SpendSeed)> handler)
    {
        m_lateSeed = std::move(handler);
    }

    void stop()
    {
        m_stopping = true;
        m_flushTimer.stop();
        m_retryTimer.stop();
        m_nextRetry = {}; // one last try, whatever the retry interval
        flush();
        if (const qint64 left = qint64(m_pending.size()); left > 0)
            qCWarning(lcUsage).noquote()
                << u"usage ledger: %1 row(s) could not be written before stopping and are lost: "
                   u"%2"_s.arg(left)
                       .arg(currentProblem());
        finalizeInserts();
        m_database = QSqlDatabase();
        storage::closeStateDatabase(m_connectionName);
    }

    void flush()
    {
        takeIncoming();
        const bool retryDue = m_clock.now() >= m_nextRetry;
        if (!m_open) {
            if (!retryDue || !tryOpen()) {
                keepWithinCapacity();
                return;
            }
        }
        if (m_pending.isEmpty())
            return;
        const QString error = writeBatch();
        if (!error.isEmpty()) {
            failed(error);
            // A write that failed may have met a damaged file or a lost folder: the next try
            // opens afresh. A private in-memory database is kept, or its rows would be gone.
            if (!m_options.databasePath.isEmpty())
                closeDatabase();
            keepWithinCapacity();
            return;
        }
        m_written.fetch_add(quint64(m_pending.size()), std::memory_order_relaxed);
        // Cleared, the list keeps its buffer for the next trade with the incoming one; a
        // buffer grown by a backlog (rows kept while the database could not take them) is let
        // go instead of being held for good.
        if (m_pending.capacity() > 4 * qsizetype(m_options.flushRows))
            m_pending = {};
        else
            m_pending.clear();
        setPendingCount();
        recovered();
    }

    UsageReport report(const UsageQuery &query)
    {
        takeIncoming();
        UsageReport report;
        report.query = query;
        UsageAggregate aggregate(query.groupBy);
        const qint64 fromMs = query.from.toMSecsSinceEpoch();
        const qint64 toMs = query.to.toMSecsSinceEpoch();
        if (m_open) {
            QStringList columns;
            for (UsageDimension dimension : query.groupBy)
                columns.append(sqlExpression(dimension));
            const QString grouping = columns.join(u", "_s);
            QSqlQuery sql(m_database);
            sql.setForwardOnly(true);
            sql.prepare(u"SELECT %1, COUNT(*), SUM(input_tokens), SUM(output_tokens), "
                        u"SUM(tokens_estimated), SUM(1 - priced), SUM(cost_usd), "
                        u"SUM(cache_read_tokens), SUM(cache_write_tokens), SUM(cache_saved_usd), "
                        u"SUM(response_cache = 'hit'), SUM(response_cache = 'miss'), "
                        u"SUM(response_cache_saved_usd) "
                        u"FROM usage_ledger WHERE finished_at_ms >= ? AND finished_at_ms < ? "
                        u"GROUP BY %1"_s.arg(grouping));
            sql.addBindValue(fromMs);
            sql.addBindValue(toMs);
            if (sql.exec()) {
                const int dimensions = int(query.groupBy.size());
                while (sql.next()) {
                    UsageGroup group;
                    for (int i = 0; i < dimensions; ++i)
                        group.keys.append(sql.value(i).toString());
                    group.requests = sql.value(dimensions).toLongLong();
                    group.inputTokens = sql.value(dimensions + 1).toLongLong();
                    group.outputTokens = sql.value(dimensions + 2).toLongLong();
                    group.estimatedRequests = sql.value(dimensions + 3).toLongLong();
                    group.unpricedRequests = sql.value(dimensions + 4).toLongLong();
                    group.costUsd = sql.value(dimensions + 5).toDouble();
                    group.cacheReadTokens = sql.value(dimensions + 6).toLongLong();
                    group.cacheWriteTokens = sql.value(dimensions + 7).toLongLong();
                    group.cacheSavedUsd = sql.value(dimensions + 8).toDouble();
                    group.responseCacheHits = sql.value(dimensions + 9).toLongLong();
                    group.responseCacheMisses = sql.value(dimensions + 10).toLongLong();
                    group.responseCacheSavedUsd = sql.value(dimensions + 11).toDouble();
                    aggregate.add(group);
                }
            } else {
                report.problem = sql.lastError().text();
            }
        } else {
            report.problem = currentProblem();
        }
        for (const LedgerRow &row : std::as_const(m_pending)) {
            if (row.finishedAtMs >= fromMs && row.finishedAtMs < toMs)
                aggregate.add(row);
        }
        report.rowsInMemory = m_pending.size();
        report.groups = aggregate.groups();
        return report;
    }

private:
    void takeIncoming()
    {
        qsizetype dropped = 0;
        {
            std::lock_guard lock(m_mutex);
            dropped = std::min(m_pendingToDrop, m_pending.size());
            m_pending.remove(0, dropped);
            m_pendingToDrop = 0;
            if (m_pending.isEmpty()) {
                // The usual case, every batch: the two lists trade buffers. Nothing is moved,
                // and the engine thread appends into the last batch's buffer, already its size,
                // instead of growing a new one from nothing (most of its CPU per row, by
                // ledger_bench's profile: reallocations and the fresh pages they touch).
                m_pending.swap(m_incoming);
            } else {
                m_pending.append(std::exchange(m_incoming, {}));
            }
            m_pendingCount = m_pending.size();
            m_flushRequested = false;
        }
        if (dropped > 0)
            droppedOldest(dropped);
    }

    void setPendingCount()
    {
        std::lock_guard lock(m_mutex);
        m_pendingCount = m_pending.size();
        // Rows marked to drop that were written meanwhile are gone anyway.
        m_pendingToDrop = std::min(m_pendingToDrop, m_pendingCount);
    }

    QString currentProblem() const
    {
        std::lock_guard lock(m_mutex);
        return m_problem;
    }

    bool tryOpen()
    {
        storage::OpenedDatabase opened = storage::openStateDatabase(
            m_options.databasePath, m_connectionName, m_options.busyTimeoutMs);
        if (!opened.ok()) {
            failed(opened.error);
            opened.database = QSqlDatabase(); // the last handle, before the connection goes
            closeDatabase();
            return false;
        }
        m_database = std::exchange(opened.database, QSqlDatabase());
        QString error = storage::ensureSchema(m_database, kSchema);
        if (error.isEmpty())
            error = storage::addMissingColumns(m_database, u"usage_ledger"_s, kAddedColumns);
        if (!error.isEmpty()) {
            failed(u"cannot prepare the usage ledger's table: %1"_s.arg(error));
            closeDatabase();
            return false;
        }
        // Before this run's first write: what the file holds is what earlier runs spent.
        if (!m_seeded) {
            std::optional<SpendSeed> seed = readSeed();
            if (!seed) {
                closeDatabase();
                return false;
            }
            m_seeded = true;
            if (m_lateSeed)
                m_lateSeed(std::move(*seed));
            else
                m_firstSeed = std::move(*seed);
        }
        m_open = true;
        return true;
    }

    void closeDatabase()
    {
        m_open = false;
        finalizeInserts();
        m_database = QSqlDatabase();
        storage::closeStateDatabase(m_connectionName);
    }

    std::optional<SpendSeed> readSeed()
    {
        const QDateTime now = m_clock.utcNow();
        SpendSeed seed;
        seed.dayStart = startOfUtcDay(now);
        seed.monthStart = startOfUtcMonth(now);
        QSqlQuery sql(m_database);
        sql.setForwardOnly(true);
        sql.prepare(u"SELECT tenant, key_id, "
                    u"SUM(CASE WHEN finished_at_ms >= ? THEN cost_usd ELSE 0 END), SUM(cost_usd) "
                    u"FROM usage_ledger WHERE finished_at_ms >= ? AND finished_at_ms < ? "
                    u"AND shadow_of = '' GROUP BY tenant, key_id"_s);
        sql.addBindValue(seed.dayStart.toMSecsSinceEpoch());
        sql.addBindValue(seed.monthStart.toMSecsSinceEpoch());
        sql.addBindValue(seed.monthStart.addMonths(1).toMSecsSinceEpoch());
        if (!sql.exec()) {
            failed(u"cannot read the usage ledger: %1"_s.arg(sql.lastError().text()));
            return std::nullopt;
        }
        while (sql.next()) {
            const QString tenant = sql.value(0).toString();
            const QString key = sql.value(1).toString();
            const double day = sql.value(2).toDouble();
            const double month = sql.value(3).toDouble();
            seed.tenantDayUsd[tenant] += day;
            seed.tenantMonthUsd[tenant] += month;
            if (!key.isEmpty()) {
                seed.keyDayUsd[key] += day;
                seed.keyMonthUsd[key] += month;
            }
        }
        return seed;
    }

    // One transaction a batch; rows bound to statements prepared once per connection, 32 rows
    // a statement while the batch has that many. Through Qt SQL each row cost about 80
    // allocations (a QVariant and a copy per bound value) and 11 µs of this thread's CPU
    // (tests/bench/ledger_bench); SQLite's own binding reads the row's values where they are,
    // and a statement of many rows pays SQLite's per-statement work (start, halt, reset) once.
    QString writeBatch()
    {
        sqlite3 *const connection = sqliteHandle();
        if (connection == nullptr)
            return u"Qt's SQLite driver gave no SQLite connection"_s;
        if (m_insertOne == nullptr || m_insertMany == nullptr) {
            if (!prepareInsert(connection, 1, &m_insertOne) ||
                !prepareInsert(connection, kRowsPerInsert, &m_insertMany)) {
                const QString error = QString::fromUtf8(sqlite3_errmsg(connection));
                finalizeInserts();
                return error;
            }
        }
        if (!m_database.transaction())
            return m_database.lastError().text();
        QString error;
        for (qsizetype first = 0; first < m_pending.size() && error.isEmpty();) {
            const qsizetype rows = m_pending.size() - first >= kRowsPerInsert ? kRowsPerInsert : 1;
            sqlite3_stmt *const insert = rows == 1 ? m_insertOne : m_insertMany;
            bindRows(insert, first, rows);
            if (sqlite3_step(insert) != SQLITE_DONE)
                error = QString::fromUtf8(sqlite3_errmsg(connection));
            sqlite3_reset(insert);
            first += rows;
        }
        // The texts bound are the rows' and the scratch buffer's: not kept past the batch.
        sqlite3_clear_bindings(m_insertOne);
        sqlite3_clear_bindings(m_insertMany);
        if (!error.isEmpty()) {
            m_database.rollback();
            return error;
        }
        if (!m_database.commit()) {
            error = m_database.lastError().text();
            m_database.rollback();
            return error;
        }
        return {};
    }

    // INSERT of `rows` rows, every column a parameter.
    static bool prepareInsert(sqlite3 *connection, int rows, sqlite3_stmt **statement)
    {
        QByteArray values = "(?";
        for (int column = 1; column < kColumns; ++column)
            values += ", ?";
        values += ')';
        QByteArray sql = "INSERT INTO usage_ledger (finished_at_ms, request_id, tenant, key_id, "
                         "model, provider, route, tier, input_tokens, output_tokens, "
                         "tokens_estimated, cost_usd, priced, status, latency_ms, "
                         "cache_read_tokens, cache_write_tokens, cache_saved_usd, shadow_of, "
                         "response_cache, response_cache_saved_usd) VALUES ";
        for (int row = 0; row < rows; ++row)
            sql += row == 0 ? values : ", " + values;
        return sqlite3_prepare_v3(connection, sql.constData(), int(sql.size()),
                                  SQLITE_PREPARE_PERSISTENT, statement, nullptr) == SQLITE_OK;
    }

    // Binds m_pending[first, first + rows) to `insert`'s parameters, row after row.
    void bindRows(sqlite3_stmt *insert, qsizetype first, qsizetype rows)
    {
        // The texts are bound as UTF-8, the file's encoding, encoded into one buffer kept from
        // batch to batch: bound as UTF-16, SQLite converted each one itself, in memory it
        // allocated. Sized before any is written, so the pointers bound stay valid until the
        // step.
        qsizetype space = 0;
        for (qsizetype row = first; row < first + rows; ++row) {
            const LedgerRow &pending = m_pending.at(row);
            for (const QString *text :
                 {&pending.tenant, &pending.keyId, &pending.model, &pending.provider,
                  &pending.route, &pending.tier, &pending.responseCache})
                space += m_utf8Encoder.requiredSpace(text->size());
        }
        if (m_utf8Scratch.size() < space)
            m_utf8Scratch.resize(space);
        char *next = m_utf8Scratch.data();
        // Every text column is NOT NULL: an empty text binds as '' (a zero length with a
        // non-null pointer), never as NULL. SQLITE_STATIC: the rows and the buffer outlive the
        // step that reads them.
        int column = 0;
        const auto bindText = [&](const QString &text) {
            char *const start = next;
            // A text ending in half a surrogate pair must not leave it to the next one.
            m_utf8Encoder.resetState();
            next = m_utf8Encoder.appendToBuffer(start, text);
            sqlite3_bind_text(insert, ++column, start, int(next - start), SQLITE_STATIC);
        };
        const auto bindBytes = [&](const QByteArray &text) {
            sqlite3_bind_text(insert, ++column, text.isNull() ? "" : text.constData(),
                              int(text.size()), SQLITE_STATIC);
        };
        for (qsizetype at = first; at < first + rows; ++at) {
            const LedgerRow &row = m_pending.at(at);
            sqlite3_bind_int64(insert, ++column, row.finishedAtMs);
            bindBytes(row.requestId);
            bindText(row.tenant);
            bindText(row.keyId);
            bindText(row.model);
            bindText(row.provider);
            bindText(row.route);
            bindText(row.tier);
            sqlite3_bind_int64(insert, ++column, row.inputTokens);
            sqlite3_bind_int64(insert, ++column, row.outputTokens);
            sqlite3_bind_int(insert, ++column, row.tokensEstimated ? 1 : 0);
            sqlite3_bind_double(insert, ++column, row.costUsd);
            sqlite3_bind_int(insert, ++column, row.priced ? 1 : 0);
            sqlite3_bind_int(insert, ++column, row.status);
            sqlite3_bind_int64(insert, ++column, row.latencyMs);
            sqlite3_bind_int64(insert, ++column, row.cacheReadTokens);
            sqlite3_bind_int64(insert, ++column, row.cacheWriteTokens);
            sqlite3_bind_double(insert, ++column, row.cacheSavedUsd);
            bindBytes(row.shadowOf);
            bindText(row.responseCache);
            sqlite3_bind_double(insert, ++column, row.responseCacheSavedUsd);
        }
        Q_ASSERT(column == rows * kColumns);
    }

    // The connection Qt SQL opened, for the prepared insert; null if the driver is not SQLite.
    sqlite3 *sqliteHandle() const
    {
        const QVariant handle = m_database.driver()->handle();
        if (!handle.isValid() || qstrcmp(handle.typeName(), "sqlite3*") != 0)
            return nullptr;
        return *static_cast<sqlite3 *const *>(handle.constData());
    }

    // Before the connection closes: SQLite cannot close one with a statement still prepared.
    void finalizeInserts()
    {
        sqlite3_finalize(m_insertOne);
        sqlite3_finalize(m_insertMany);
        m_insertOne = nullptr;
        m_insertMany = nullptr;
    }

    void failed(const QString &error)
    {
        const QString where =
            m_options.databasePath.isEmpty() ? u"memory"_s : m_options.databasePath;
        {
            std::lock_guard lock(m_mutex);
            m_problem = u"cannot write the usage ledger to %1: %2"_s.arg(where, error);
        }
        m_nextRetry = m_clock.now() + m_options.retryInterval;
        if (!m_stopping)
            m_retryTimer.start();
        if (m_warned)
            return;
        m_warned = true;
        qCWarning(lcUsage).noquote()
            << u"usage ledger: cannot write to %1: %2. Switchyard goes on serving; up to %3 "
               u"usage row(s) wait in memory (more are dropped and counted) and writing is tried "
               u"again every %4 s."_s.arg(where, error)
                   .arg(m_options.memoryCapacityRows)
                   .arg(double(m_options.retryInterval.count()) / 1000.0);
    }

    void recovered()
    {
        if (!m_warned)
            return;
        m_warned = false;
        m_droppedWarned = false;
        {
            std::lock_guard lock(m_mutex);
            m_problem.clear();
        }
        qCInfo(lcUsage).noquote() << u"usage ledger: writing to %1 again"_s.arg(
            m_options.databasePath.isEmpty() ? u"memory"_s : m_options.databasePath);
    }

    void keepWithinCapacity()
    {
        const qsizetype excess = m_pending.size() - m_options.memoryCapacityRows;
        if (excess > 0) {
            m_pending.remove(0, excess);
            droppedOldest(excess);
        }
        setPendingCount();
    }

    void droppedOldest(qsizetype rows)
    {
        m_dropped.fetch_add(quint64(rows), std::memory_order_relaxed);
        if (!m_droppedWarned) {
            m_droppedWarned = true;
            qCWarning(lcUsage).noquote()
                << u"usage ledger: %1 row(s) in memory, its limit: the oldest are dropped "
                   u"until the database can be written"_s.arg(m_options.memoryCapacityRows);
        }
    }

    const LedgerOptions m_options;
    const timing::Clock &m_clock;
    const QString m_connectionName;

    mutable std::mutex m_mutex;
    QList<LedgerRow> m_incoming;   // guarded by m_mutex
    QString m_problem;             // guarded by m_mutex; empty while writes succeed
    qsizetype m_pendingCount = 0;  // guarded by m_mutex: m_pending's size, for state()
    qsizetype m_pendingToDrop = 0; // guarded by m_mutex: m_pending's oldest over the limit
    bool m_flushRequested = false; // guarded by m_mutex
    std::atomic<quint64> m_dropped{0};
    std::atomic<quint64> m_written{0};

    // The writer thread's own.
    QTimer m_flushTimer{this}; // children, so moveToThread takes them along
    QTimer m_retryTimer{this};
    QSqlDatabase m_database;
    // Prepared on m_database's connection on the first write: one row, and kRowsPerInsert rows.
    sqlite3_stmt *m_insertOne = nullptr;
    sqlite3_stmt *m_insertMany = nullptr;
    QStringEncoder m_utf8Encoder{QStringEncoder::Utf8};
    QByteArray m_utf8Scratch; // the texts of the row being bound, as UTF-8
    bool m_open = false;
    bool m_stopping = false;
    bool m_seeded = false;
    bool m_warned = false;
    bool m_droppedWarned = false;
    QList<LedgerRow> m_pending; // taken from m_incoming, not yet written
    timing::Clock::TimePoint m_nextRetry{};
    std::optional<SpendSeed> m_firstSeed;
    std::function<void(SpendSeed)> m_lateSeed;
};

UsageLedger::UsageLedger(BudgetTracker &budgets, LedgerOptions options, const timing::Clock &clock,
                         QObject *parent)
    : QObject(parent), m_budgets(budgets), m_writer(new LedgerWriter(std::move(options), clock))
{
    qRegisterMetaType<switchyard::usage::UsageReport>();
    qRegisterMetaType<switchyard::usage::UsageLedgerState>();
    m_thread.setObjectName(u"usage-ledger"_s);
    m_writer->moveToThread(&m_thread);
    m_thread.start();
    std::optional<SpendSeed> seed;
    LedgerWriter *writer = m_writer;
    QMetaObject::invokeMethod(
        m_writer, [writer, &seed] { seed = writer->start(); }, Qt::BlockingQueuedConnection);
    if (seed)
        m_budgets.addSeed(*seed);
    // A database that opens later seeds the budgets then, on the engine thread.
    QMetaObject::invokeMethod(
        m_writer,
        [writer, this] {
            writer->setLateSeedHandler([this](SpendSeed late) {
                QMetaObject::invokeMethod(this, [this, late] { m_budgets.addSeed(late); });
            });
        },
        Qt::BlockingQueuedConnection);
}

UsageLedger::~UsageLedger()
{
    LedgerWriter *writer = m_writer;
    QMetaObject::invokeMethod(
        m_writer, [writer] { writer->stop(); }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
    delete m_writer;
}

LedgerRow UsageLedger::rowFor(const telemetry::RequestRecord &record)
{
    LedgerRow row;
    row.finishedAtMs = record.startedAtUtc.toMSecsSinceEpoch() + record.totalMicros / 1000;
    row.requestId = record.requestId;
    row.tenant = record.tenant;
    row.keyId = record.keyId;
    row.model = record.model;
    row.provider = record.provider;
    row.route = record.route;
    row.tier = record.tier;
    // A request refused before it ran has no counts (-1): it used nothing.
    row.inputTokens = std::max<qint64>(record.inputTokens, 0);
    row.outputTokens = std::max<qint64>(record.outputTokens, 0);
    row.tokensEstimated = record.tokensEstimated;
    row.cacheReadTokens = std::max<qint64>(record.cacheReadTokens, 0);
    row.cacheWriteTokens = std::max<qint64>(record.cacheWriteTokens, 0);
    row.costUsd = record.costUsd;
    row.cacheSavedUsd = record.cacheSavedUsd;
    row.priced = record.priced;
    row.status = record.status;
    row.latencyMs = record.totalMicros / 1000;
    row.shadowOf = record.shadowOf;
    row.responseCache = record.responseCache;
    row.responseCacheSavedUsd = record.responseCacheSavedUsd;
    return row;
}

namespace {

// A request the key check refused: nobody known sent it and it used nothing. Recording it would
// let anyone without a key grow the database by a row per request.
bool refusedAtAuthentication(const telemetry::RequestRecord &record)
{
    if (!record.keyId.isEmpty() || !record.provider.isEmpty())
        return false;
    return (record.status == 401 &&
            (record.outcome == u"missing_api_key" || record.outcome == u"invalid_api_key")) ||
           (record.status == 503 && record.outcome == u"keys_unavailable");
}

} // namespace

void UsageLedger::traceFinished(const telemetry::Trace &trace)
{
    // Counting a prompt's tokens is free at every provider and uses none: no usage to record.
    if (refusedAtAuthentication(trace) || trace.operation == QLatin1String("count_tokens"))
        return;
    LedgerRow row = rowFor(trace);
    // A shadow call's cost is recorded, but it is the operator's experiment, not the tenant's
    // spending: no budget sees it.
    if (!row.isShadow())
        m_budgets.addSpend(row.tenant, row.keyId, row.costUsd);
    if (m_writer->append(std::move(row)))
        flushSoon();
}

UsageLedgerState UsageLedger::state() const
{
    return m_writer->state();
}

void UsageLedger::flushSoon()
{
    LedgerWriter *writer = m_writer;
    QMetaObject::invokeMethod(m_writer, [writer] { writer->flush(); });
}

void UsageLedger::query(const UsageQuery &query, QObject *context,
                        std::function<void(UsageReport)> done)
{
    // The report goes back through a queued connection to `context`, made here on its own
    // thread: if `context` is deleted before the report is ready, Qt drops the connection (or
    // the posted call) on that thread, so the writer never touches a pointer that may dangle.
    auto result = std::make_shared<UsageReport>();
    auto courier = std::make_shared<ReportCourier>();
    QObject::connect(
        courier.get(), &ReportCourier::ready, context,
        [result, done = std::move(done)] { done(std::move(*result)); }, Qt::QueuedConnection);
    courier->moveToThread(&m_thread);
    LedgerWriter *writer = m_writer;
    // The call owns the courier, so it is deleted on the writer's thread, where it now lives.
    QMetaObject::invokeMethod(m_writer, [writer, query, result, courier = std::move(courier)] {
        *result = writer->report(query);
        emit courier->ready();
    });
}

} // namespace switchyard::usage

#include "usage_ledger.moc"
