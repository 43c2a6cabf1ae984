#pragma once

#include "timing/clock.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <QThread>
#include <QTimer>
#include <chrono>
#include <functional>
#include <map>
#include <set>

// What the gateway keeps of Responses API requests: stored responses (`store: true`), which a
// later request continues with `previous_response_id`, and background responses
// (`background: true`), which are also the durable queue's tasks. docs/responses.md has the
// client's side, docs/operations.md the operator's.
namespace switchyard::responses {

enum class Status { Queued, InProgress, Completed, Incomplete, Failed, Cancelled };
// The Responses API's word for a status, and back; nullopt for a word that is none.
QString statusName(Status status);
std::optional<Status> statusFromName(QStringView name);
inline bool isFinished(Status status)
{
    return status != Status::Queued && status != Status::InProgress;
}

// From the request's `x-switchyard-priority`; a queue serves High first, oldest first within one.
enum class Priority { High = 0, Normal = 1, Low = 2 };
QString priorityName(Priority priority);
std::optional<Priority> priorityFromName(QStringView name);

// One event of a response's stream as a client reads it.
struct LoggedEvent {
    qint64 sequenceNumber = 0;
    QByteArray type;
    QByteArray data; // the event's JSON, with its sequence_number
};

struct StoredResponse {
    QByteArray id; // resp_ and 32 hex digits: 128 random bits
    // Who may read, continue, cancel or delete it: "key:<id>" for a client key, else
    // "tenant:<name>" (docs/responses.md says why that is not isolation).
    QString owner;
    QString tenant;
    QString keyId;
    QString model;
    bool background = false;
    Priority priority = Priority::Normal;
    Status status = Status::Queued;
    qint64 createdAtMs = 0;
    qint64 startedAtMs = 0;  // of the last run
    qint64 finishedAtMs = 0; // 0 until finished
    qint64 expiresAtMs = 0;
    int runs = 0; // how many times a worker started it (more than one after a restart)
    // The Responses request a worker runs: the whole conversation inlined, without `background`,
    // `store` and `previous_response_id`.
    QByteArray request;
    // The request's headers routing and tracing read (a JSON object), never its credentials.
    QByteArray headers;
    QByteArray previousResponseId;
    QByteArray history;    // JSON array: the conversation's items before this request
    QByteArray inputItems; // JSON array: this request's input, as items with ids
    // The response object as last known: `queued` with no output, then the final one.
    QByteArray response;
    QList<LoggedEvent> events; // a background response's events, in sequence

    qint64 approximateBytes() const;
    // The sequence number the next event takes: after every event ever logged, including those of
    // an earlier run, so that no number a client has seen is used twice.
    qint64 nextSequenceNumber() const
    {
        return events.isEmpty() ? 0 : events.constLast().sequenceNumber + 1;
    }
};

class ResponseWriterThread;

// Stored responses: every one in memory on the engine thread (lookups never wait), each change
// written to the state database's `stored_responses` and `response_events` tables by a thread of
// its own, which commits as soon as the change reaches it. A caller that must not go on before
// a change is on disk (accepting a background task, showing a client an event) waits for
// afterWrite()'s callback. A batch that cannot be written is retried every second, and the
// callbacks wait for it: nothing is reported written that is not. open() reads everything back at
// start. Bounded by age (retention) and by bytes: the oldest finished responses go first, counted.
// Engine thread only.
class ResponseStore final : public QObject {
    Q_OBJECT
public:
    struct Options {
        QString databasePath; // empty: memory only
        std::chrono::milliseconds retention{std::chrono::hours(24 * 30)};
        qint64 maxBytes = 256LL * 1024 * 1024;
    };

    explicit ResponseStore(Options options,
                           const timing::Clock &clock = timing::SteadyClock::instance(),
                           QObject *parent = nullptr);
    ~ResponseStore() override;
    ResponseStore(const ResponseStore &) = delete;
    ResponseStore &operator=(const ResponseStore &) = delete;

    // Reads back what earlier runs stored. Returns why it could not, empty when it could (or
    // when there is no database).
    QString open();
    void setBounds(std::chrono::milliseconds retention, qint64 maxBytes);

    // A new random id: "resp_" and 32 hex digits from the system's secure generator.
    static QByteArray newId();

    // The record under `id`; one finished and past its retention is dropped instead (counted).
    StoredResponse *find(const QByteArray &id);
    // The record as it is, expired or not: for paths that must not remove anything.
    StoredResponse *peek(const QByteArray &id);
    // Adds or replaces `response` and writes it. Returns the kept record.
    StoredResponse &put(StoredResponse response);
    // Writes the record's row again after the caller changed it (not its events).
    void update(StoredResponse &response);
    // Appends events to a response's log and writes them.
    void appendEvents(StoredResponse &response, QList<LoggedEvent> events);
    void remove(const QByteArray &id);
    // Every record, for the queue's recovery at start and the admin view.
    const QHash<QByteArray, StoredResponse> &all() const { return m_responses; }

    // Runs `done` once every change made so far is committed; while the database refuses a
    // write, `done` waits with it (the writer retries every second).
    void afterWrite(std::function<void()> done);
    // Blocks until the writer has committed everything so far (tests; the end).
    void waitForWrites();

    qint64 bytes() const { return m_bytes; }
    int count() const { return int(m_responses.size()); }
    // Responses dropped since start: by age, and to stay within maxBytes.
    quint64 expiredByAge() const { return m_expiredByAge; }
    quint64 expiredByBytes() const { return m_expiredByBytes; }
    // A background response removed (expired or deleted): the queue forgets it.
    std::function<void(const QByteArray &id)> onRemoved;

private:
    void committed(quint64 ticket);
    quint64 writeChange(std::function<void(ResponseWriterThread &)> change);
    // Drops what is past its retention, then the oldest finished responses while over the
    // bytes bound; `spare` (the one just put) is never the one dropped.
    void expire(const QByteArray &spare = {});
    void erase(const QByteArray &id);

    Options m_options;
    const timing::Clock &m_clock;
    QHash<QByteArray, StoredResponse> m_responses;
    QHash<QByteArray, qint64> m_sizes;                    // id -> counted bytes
    std::set<std::pair<qint64, QByteArray>> m_byCreation; // (created, id): the oldest go first
    qint64 m_bytes = 0;
    quint64 m_expiredByAge = 0;
    quint64 m_expiredByBytes = 0;
    quint64 m_lastTicket = 0;
    quint64 m_committedTicket = 0;
    std::multimap<quint64, std::function<void()>> m_waiting;
    ResponseWriterThread *m_writer = nullptr;
    QThread m_thread;
    QTimer *m_expiryTimer = nullptr;
};

} // namespace switchyard::responses
