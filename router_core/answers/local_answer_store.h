#pragma once

#include "answers/answer_store.h"
#include "timing/clock.h"

#include <QHash>
#include <QString>
#include <QThread>
#include <set>
#include <utility>

namespace switchyard::answers {

// How the node's store keeps answers. The defaults are what docs/configuration.md promises for
// the `idempotency` section; the engine passes the section's values.
struct LocalStoreOptions {
    QString databasePath; // the state database; empty: answers live in memory only
    // Answers kept at once; beyond it the one that would expire first is dropped.
    int maxAnswers = 1000;
    // Answers are written to the database this long after the first change not yet written,
    // all changes of that time in one transaction: a crash loses at most this much.
    std::chrono::milliseconds writeInterval{200};
};

class StoredAnswerWriter;

// One change for the database: an answer written, or (empty fingerprint) a row deleted.
struct StoredAnswerWriterChange {
    QByteArray key;
    QByteArray fingerprint;
    qint64 expiresAtMs = 0;
    QByteArray answer;
};

// This node's answers: an index in memory that every claim, put and release reads and changes
// at once on the engine thread, written behind to the state database's `stored_answers` table
// by a thread of its own (the engine thread never waits for SQLite), and read back by open() at
// start, so an answer survives a restart. Claims are not written: a restart ends the request
// that held one, and the key must then run again. Times are UTC wall time, as a restart keeps
// them. A database that cannot be opened or written leaves the store serving from memory; the
// log says so once.
class LocalAnswerStore final : public AnswerStore {
public:
    explicit LocalAnswerStore(LocalStoreOptions options,
                              const timing::Clock &clock = timing::SteadyClock::instance());
    ~LocalAnswerStore() override;
    LocalAnswerStore(const LocalAnswerStore &) = delete;
    LocalAnswerStore &operator=(const LocalAnswerStore &) = delete;

    // Opens the database on the writer's thread and loads the answers it holds that have not
    // expired (the newest maxAnswers). Returns why it could not, empty when it could.
    QString open();

    void claim(const QByteArray &key, const QByteArray &fingerprint, const QByteArray &requestId,
               std::chrono::milliseconds window, std::function<void(ClaimResult)> done) override;
    void put(const QByteArray &key, const QByteArray &token, StoredAnswer answer,
             std::chrono::milliseconds window) override;
    void release(const QByteArray &key, const QByteArray &token) override;

    // claim() answered at once, for the Redis store's fallback.
    ClaimResult claimNow(const QByteArray &key, const QByteArray &fingerprint,
                         const QByteArray &requestId, std::chrono::milliseconds window);
    // Keeps an answer made elsewhere (claimed in Redis, which could not take it), as put() would
    // keep one claimed here.
    void keep(const QByteArray &key, const QByteArray &fingerprint, StoredAnswer answer,
              std::chrono::milliseconds window);

    void setMaxAnswers(int maxAnswers);
    int answerCount() const { return m_answerCount; }
    int claimCount() const { return int(m_entries.size()) - m_answerCount; }
    // Answers dropped to stay within maxAnswers since start.
    quint64 evictedAnswers() const { return m_evicted; }
    // Waits until every change so far is in the database (tests, and the store's end).
    void waitForWrites();

private:
    struct Entry {
        QByteArray fingerprint;
        QByteArray token;     // of a claim; empty once answered
        QByteArray requestId; // the holder's
        qint64 expiresAtMs = 0;
        std::optional<StoredAnswer> answer;
    };

    // The entry under `key` if it has not expired; an expired one is dropped.
    Entry *live(const QByteArray &key);
    void setExpiry(const QByteArray &key, Entry &entry, qint64 expiresAtMs);
    void erase(const QByteArray &key);
    void dropExpired();
    void keepWithinBound();
    void store(const QByteArray &key, Entry &entry, StoredAnswer answer,
               std::chrono::milliseconds window);
    QByteArray newToken();
    // Hands the change to the writer's thread; nothing without a database.
    void write(StoredAnswerWriterChange change);

    LocalStoreOptions m_options;
    const timing::Clock &m_clock;
    QHash<QByteArray, Entry> m_entries;
    // Every entry by when it expires: expiry and the count bound take from the front.
    std::set<std::pair<qint64, QByteArray>> m_byExpiry;
    int m_answerCount = 0;
    quint64 m_evicted = 0;
    quint64 m_nextToken = 1;
    StoredAnswerWriter *m_writer = nullptr; // lives on m_thread
    QThread m_thread;
};

} // namespace switchyard::answers
