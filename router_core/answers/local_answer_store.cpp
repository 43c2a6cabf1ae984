#include "answers/local_answer_store.h"

#include "storage/state_database.h"

#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QSqlError>
#include <QSqlQuery>
#include <QTimer>
#include <mutex>

Q_LOGGING_CATEGORY(lcAnswers, "switchyard.answers")

namespace switchyard::answers {

using namespace Qt::StringLiterals;

namespace {

const QStringList kSchema{
    u"CREATE TABLE IF NOT EXISTS stored_answers ("
    u" key BLOB PRIMARY KEY,"
    u" fingerprint BLOB NOT NULL,"
    u" expires_at_ms INTEGER NOT NULL,"
    u" answer BLOB NOT NULL)"_s,
    // Expired rows are deleted by time on every write and at start.
    u"CREATE INDEX IF NOT EXISTS stored_answers_expiry ON stored_answers(expires_at_ms)"_s,
};

struct LoadedAnswer {
    QByteArray key;
    QByteArray fingerprint;
    qint64 expiresAtMs = 0;
    StoredAnswer answer;
};

} // namespace

// The store's own thread: the only user of its database connection. Changes arrive from the
// engine thread under m_mutex and are written in one transaction per writeInterval.
class StoredAnswerWriter final : public QObject {
public:
    using Change = StoredAnswerWriterChange;

    StoredAnswerWriter(QString path, std::chrono::milliseconds interval, const timing::Clock &clock)
        : m_path(std::move(path)), m_clock(clock),
          m_connectionName(u"switchyard-stored-answers-%1"_s.arg(quintptr(this), 0, 16))
    {
        m_timer.setSingleShot(true);
        m_timer.setInterval(interval);
        QObject::connect(&m_timer, &QTimer::timeout, this, [this] { write(); });
    }

    // Writer thread.
    QString open(QList<LoadedAnswer> &loaded)
    {
        storage::OpenedDatabase opened = storage::openStateDatabase(m_path, m_connectionName);
        if (!opened.ok())
            return opened.error;
        m_database = opened.database;
        if (QString error = storage::ensureSchema(m_database, kSchema); !error.isEmpty()) {
            close();
            return error;
        }
        QSqlQuery purge(m_database);
        purge.prepare(u"DELETE FROM stored_answers WHERE expires_at_ms <= ?"_s);
        purge.addBindValue(m_clock.msSinceEpoch());
        purge.exec();
        QSqlQuery query(m_database);
        if (!query.exec(u"SELECT key, fingerprint, expires_at_ms, answer FROM stored_answers "
                        u"ORDER BY expires_at_ms"_s)) {
            const QString error = query.lastError().text();
            close();
            return error;
        }
        while (query.next()) {
            std::optional<StoredAnswer> answer = decodeAnswer(query.value(3).toByteArray());
            if (!answer)
                continue; // a row no release could read: it expires like any other
            loaded.append({query.value(0).toByteArray(), query.value(1).toByteArray(),
                           query.value(2).toLongLong(), std::move(*answer)});
        }
        return {};
    }

    // Any thread.
    void add(Change change)
    {
        std::lock_guard lock(m_mutex);
        m_changes.append(std::move(change));
        if (m_writeRequested)
            return;
        m_writeRequested = true;
        QMetaObject::invokeMethod(this, [this] { m_timer.start(); });
    }

    // Writer thread.
    void write()
    {
        QList<Change> changes;
        {
            std::lock_guard lock(m_mutex);
            changes = std::exchange(m_changes, {});
            m_writeRequested = false;
        }
        if (!m_database.isOpen())
            return; // memory only: the log said so at open
        m_database.transaction();
        QSqlQuery upsert(m_database);
        upsert.prepare(u"INSERT OR REPLACE INTO stored_answers (key, fingerprint, expires_at_ms, "
                       u"answer) VALUES (?, ?, ?, ?)"_s);
        QSqlQuery remove(m_database);
        remove.prepare(u"DELETE FROM stored_answers WHERE key = ?"_s);
        QString error;
        for (const Change &change : changes) {
            QSqlQuery &query = change.fingerprint.isEmpty() ? remove : upsert;
            query.addBindValue(change.key);
            if (!change.fingerprint.isEmpty()) {
                query.addBindValue(change.fingerprint);
                query.addBindValue(change.expiresAtMs);
                query.addBindValue(change.answer);
            }
            if (!query.exec() && error.isEmpty())
                error = query.lastError().text();
        }
        QSqlQuery purge(m_database);
        purge.prepare(u"DELETE FROM stored_answers WHERE expires_at_ms <= ?"_s);
        purge.addBindValue(m_clock.msSinceEpoch());
        purge.exec();
        if (error.isEmpty() && !m_database.commit())
            error = m_database.lastError().text();
        if (!error.isEmpty()) {
            m_database.rollback();
            // Kept in memory all the same: only a restart loses them. Said once per problem.
            if (error != m_lastError)
                qCWarning(lcAnswers).noquote()
                    << u"stored answers: %1 change(s) could not be written to the state database "
                       u"(they stay in memory until a restart): %2"_s.arg(changes.size())
                           .arg(error);
            m_lastError = error;
            return;
        }
        m_lastError.clear();
    }

    void close()
    {
        m_database = QSqlDatabase();
        storage::closeStateDatabase(m_connectionName);
    }

private:
    QString m_path;
    const timing::Clock &m_clock;
    QString m_connectionName;
    QSqlDatabase m_database;
    QTimer m_timer{this}; // a child, so that it moves to the writer's thread with it
    std::mutex m_mutex;
    QList<Change> m_changes;
    bool m_writeRequested = false;
    QString m_lastError;
};

LocalAnswerStore::LocalAnswerStore(LocalStoreOptions options, const timing::Clock &clock)
    : m_options(std::move(options)), m_clock(clock)
{
    m_thread.setObjectName(u"stored-answers"_s);
    m_writer = new StoredAnswerWriter(m_options.databasePath, m_options.writeInterval, m_clock);
    m_writer->moveToThread(&m_thread);
    QObject::connect(&m_thread, &QThread::finished, m_writer, &QObject::deleteLater);
    m_thread.start();
}

LocalAnswerStore::~LocalAnswerStore()
{
    waitForWrites();
    StoredAnswerWriter *writer = m_writer;
    QMetaObject::invokeMethod(
        writer, [writer] { writer->close(); }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

QString LocalAnswerStore::open()
{
    if (m_options.databasePath.isEmpty())
        return {};
    QList<LoadedAnswer> loaded;
    QString error;
    StoredAnswerWriter *writer = m_writer;
    QMetaObject::invokeMethod(
        writer, [&] { error = writer->open(loaded); }, Qt::BlockingQueuedConnection);
    if (!error.isEmpty()) {
        qCWarning(lcAnswers).noquote()
            << u"stored answers: the state database cannot be opened, answers are kept in memory "
               u"only: %1"_s.arg(error);
        return error;
    }
    // Oldest first, so that past the bound the newest are the ones kept.
    for (LoadedAnswer &row : loaded) {
        Entry entry;
        entry.fingerprint = row.fingerprint;
        entry.requestId = row.answer.requestId;
        entry.answer = std::move(row.answer);
        if (m_entries.contains(row.key))
            erase(row.key);
        Entry &kept = m_entries.insert(row.key, std::move(entry)).value();
        ++m_answerCount;
        setExpiry(row.key, kept, row.expiresAtMs);
    }
    keepWithinBound();
    return {};
}

void LocalAnswerStore::write(StoredAnswerWriterChange change)
{
    if (!m_options.databasePath.isEmpty())
        m_writer->add(std::move(change));
}

QByteArray LocalAnswerStore::newToken()
{
    // Random rather than counted: a Redis claim's token must not repeat across nodes or restarts.
    quint64 words[2];
    QRandomGenerator::global()->fillRange(words);
    return QByteArray::number(words[0], 16) + QByteArray::number(words[1], 16) +
           QByteArray::number(m_nextToken++, 16);
}

LocalAnswerStore::Entry *LocalAnswerStore::live(const QByteArray &key)
{
    const auto found = m_entries.find(key);
    if (found == m_entries.end())
        return nullptr;
    if (found->expiresAtMs > m_clock.msSinceEpoch())
        return &found.value();
    erase(key);
    return nullptr;
}

void LocalAnswerStore::setExpiry(const QByteArray &key, Entry &entry, qint64 expiresAtMs)
{
    if (entry.expiresAtMs != 0)
        m_byExpiry.erase({entry.expiresAtMs, key});
    entry.expiresAtMs = expiresAtMs;
    m_byExpiry.insert({expiresAtMs, key});
}

void LocalAnswerStore::erase(const QByteArray &key)
{
    const auto found = m_entries.find(key);
    if (found == m_entries.end())
        return;
    m_byExpiry.erase({found->expiresAtMs, key});
    if (found->answer) {
        --m_answerCount;
        write({key, {}, 0, {}});
    }
    m_entries.erase(found);
}

void LocalAnswerStore::dropExpired()
{
    const qint64 now = m_clock.msSinceEpoch();
    while (!m_byExpiry.empty() && m_byExpiry.begin()->first <= now) {
        const QByteArray key = m_byExpiry.begin()->second;
        erase(key);
    }
}

void LocalAnswerStore::keepWithinBound()
{
    // The answer nearest its end goes first: it has the least of its window left to serve.
    // Claims are not answers and never count: requests in flight are bounded by admission.
    auto next = m_byExpiry.begin();
    while (m_answerCount > m_options.maxAnswers && next != m_byExpiry.end()) {
        const QByteArray key = next->second;
        ++next;
        if (m_entries.value(key).answer) {
            erase(key);
            ++m_evicted;
        }
    }
}

ClaimResult LocalAnswerStore::claimNow(const QByteArray &key, const QByteArray &fingerprint,
                                       const QByteArray &requestId,
                                       std::chrono::milliseconds window)
{
    dropExpired();
    ClaimResult result;
    result.where = "local";
    if (Entry *entry = live(key)) {
        if (entry->fingerprint != fingerprint) {
            result.outcome = ClaimResult::Outcome::Mismatch;
        } else if (entry->answer) {
            result.outcome = ClaimResult::Outcome::Answered;
            result.answer = entry->answer;
        } else {
            result.outcome = ClaimResult::Outcome::Running;
        }
        result.holderRequestId = entry->requestId;
        return result;
    }
    Entry entry;
    entry.fingerprint = fingerprint;
    entry.token = newToken();
    entry.requestId = requestId;
    result.token = entry.token;
    Entry &claimed = m_entries.insert(key, std::move(entry)).value();
    setExpiry(key, claimed, m_clock.msSinceEpoch() + window.count());
    return result;
}

void LocalAnswerStore::claim(const QByteArray &key, const QByteArray &fingerprint,
                             const QByteArray &requestId, std::chrono::milliseconds window,
                             std::function<void(ClaimResult)> done)
{
    done(claimNow(key, fingerprint, requestId, window));
}

void LocalAnswerStore::store(const QByteArray &key, Entry &entry, StoredAnswer answer,
                             std::chrono::milliseconds window)
{
    if (!entry.answer)
        ++m_answerCount;
    entry.token.clear();
    entry.requestId = answer.requestId;
    const qint64 expiresAtMs = m_clock.msSinceEpoch() + window.count();
    write({key, entry.fingerprint, expiresAtMs, encodeAnswer(answer)});
    entry.answer = std::move(answer);
    setExpiry(key, entry, expiresAtMs);
    keepWithinBound();
}

void LocalAnswerStore::put(const QByteArray &key, const QByteArray &token, StoredAnswer answer,
                           std::chrono::milliseconds window)
{
    Entry *entry = live(key);
    if (!entry || entry->answer || entry->token != token)
        return; // the claim ran out and the key moved on: the newer holder's is kept
    store(key, *entry, std::move(answer), window);
}

void LocalAnswerStore::keep(const QByteArray &key, const QByteArray &fingerprint,
                            StoredAnswer answer, std::chrono::milliseconds window)
{
    dropExpired();
    Entry *entry = live(key);
    if (entry && entry->fingerprint != fingerprint)
        return;
    if (!entry) {
        Entry fresh;
        fresh.fingerprint = fingerprint;
        entry = &m_entries.insert(key, std::move(fresh)).value();
    }
    store(key, *entry, std::move(answer), window);
}

void LocalAnswerStore::release(const QByteArray &key, const QByteArray &token)
{
    const auto found = m_entries.find(key);
    if (found == m_entries.end() || found->answer || found->token != token)
        return;
    erase(key);
}

void LocalAnswerStore::setMaxAnswers(int maxAnswers)
{
    m_options.maxAnswers = maxAnswers;
    keepWithinBound();
}

void LocalAnswerStore::waitForWrites()
{
    StoredAnswerWriter *writer = m_writer;
    QMetaObject::invokeMethod(
        writer, [writer] { writer->write(); }, Qt::BlockingQueuedConnection);
}

} // namespace switchyard::answers
