#pragma once

#include "redis/redis_link.h"
#include "responses/response_store.h"

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>

// The fleet's stored responses and its queue of background tasks, in Redis (docs/fleet.md, "The
// queue"). A node of a fleet keeps no response of its own on disk: every record and its events
// live here, so that any node can read, continue, cancel or delete one, and run or take over any
// task. Tasks travel on Redis Streams, one per priority, each with the consumer group `workers`:
//
//   resp:ID               hash: the record (JSON), status, response, runs, node, last_error
//   resp:ID:events        list: the events, the sequence number being the index
//   queue:PRIORITY        stream of task ids; an entry is acknowledged and deleted only once its
//                         task's result is stored
//   queue:lock:ID         the run's token, expiring after the visibility timeout unless renewed:
//                         every write of a run checks it, so a run that lost its task (its node
//                         too slow, the task cancelled or deleted) writes nothing more
//   queue:waiting:PRIO    sorted set of the queued ids by when they were queued (depth, age)
//   queue:running         hash: running id to node
//   queue:active          hash: tenant to its queued and running tasks (the per-tenant bound)
//   queue:dead            stream of dead-lettered tasks, with their last error; queue:dead:index
//                         maps a task id to its entry
//   responses:finished, responses:sizes, responses:bytes
//                         finished records by age, and their bytes: the bounds of the store
//
// Each call is one script, one round trip. Engine thread only.
namespace switchyard::responses {

// A task this node took: its record as Redis held it (runs already counted), and what proves the
// run is still the task's.
struct FleetTask {
    StoredResponse record;
    QByteArray token;  // the lock's value
    QByteArray stream; // the stream and entry it came on, acknowledged when it ends
    QByteArray entry;
    bool takenOver = false;  // claimed after another node stopped renewing it
    QString lastNode;        // the node that ran it before, if any
    QString lastError;       // why its last run did not finish it, if it did not
    qint64 visibilityMs = 0; // each write of the run renews its lock for this long
};

// One dead-lettered task as an operator sees it.
struct DeadLetter {
    QByteArray id;
    QByteArray entry;
    QString tenant;
    QString model;
    QString priority;
    QString errorCode;
    QString errorMessage;
    int runs = 0;
    QString node;    // the node that gave it up
    qint64 atMs = 0; // when, UTC
    qint64 createdAtMs = 0;
};

// The fleet's queue as GET /admin/v1/queue reports it.
struct FleetQueueReport {
    QString problem; // empty when Redis answered
    int queued[3] = {0, 0, 0};
    qint64 oldestQueuedAgeMs = 0;
    QList<QPair<QByteArray, QString>> running; // task id, node
    QHash<QString, int> activeByTenant;
    int deadLettered = 0;
    QList<DeadLetter> deadLetters; // newest first
};

class FleetResponses final : public QObject {
    Q_OBJECT
public:
    FleetResponses(redis::Link &link, QByteArray keyPrefix, QByteArray node,
                   QObject *parent = nullptr);
    ~FleetResponses() override;

    bool reachable() const { return m_link.isUp(); }
    QString problem() const { return m_link.problem(); }
    const QByteArray &node() const { return m_node; }

    // ---- records ------------------------------------------------------------------------------

    enum class Outcome { Done, Refused, Unreachable };
    struct Answer {
        Outcome outcome = Outcome::Unreachable;
        QString problem;
        int count = 0; // enqueue: the tenant's tasks, refused beyond the bound
    };
    // A new background task with its first events, queued at its priority: refused when its
    // tenant already has `maxPerTenant` queued or running.
    void enqueue(const StoredResponse &task, int maxPerTenant, std::function<void(Answer)> done);
    // A finished foreground response kept for `previous_response_id`; `done` may be empty.
    void keep(const StoredResponse &record, qint64 retentionMs, qint64 maxBytes,
              std::function<void(Answer)> done);

    struct Fetched {
        Outcome outcome = Outcome::Unreachable; // Refused: there is no such record
        QString problem;
        StoredResponse record; // with its events
    };
    void fetch(const QByteArray &id, std::function<void(Fetched)> done);

    struct EventsRead {
        bool answered = false;
        bool missing = false;
        Status status = Status::Queued;
        QList<LoggedEvent> events; // after the number asked for
    };
    void readEvents(const QByteArray &id, qint64 after, std::function<void(EventsRead)> done);

    enum class CancelOutcome { Cancelled, Finished, Missing, Unreachable };
    // Cancels a queued or running task wherever it is: a queued one never runs, a running one's
    // node stops it at its next renewal. `finished` is the status it already had.
    void cancel(const QByteArray &id, const QByteArray &cancelledResponse, qint64 retentionMs,
                std::function<void(CancelOutcome, Status finished)> done);
    void remove(const QByteArray &id, std::function<void(Answer)> done);

    // ---- running tasks ------------------------------------------------------------------------

    // Takes up to `free` tasks: first any whose node stopped renewing them for `visibility`,
    // then new ones, high priority first. Each comes locked for this node.
    void take(int free, std::chrono::milliseconds visibility,
              std::function<void(QList<FleetTask>)> done);
    // What became of a run's write. NotHeld: the run no longer holds its task (cancelled,
    // deleted, or taken over) and must stop without writing anything more. Unreachable: Redis did
    // not answer; nothing is known to be written, and the same write may be sent again (a run
    // keeps its task while its lock has lapsed, as long as no other run took it).
    enum class Write { Done, NotHeld, Unreachable };
    using Held = std::function<void(Write)>;
    // `response`, when given, replaces the response object (a run's `in_progress`).
    void append(const FleetTask &task, const QList<LoggedEvent> &events, Held done,
                const QByteArray &response = {});
    void finish(const FleetTask &task, const StoredResponse &record,
                const QList<LoggedEvent> &events, qint64 retentionMs, qint64 maxBytes, Held done);
    // Puts the task back for a run `after` from now, by any node. `countsAsRun` false: the run
    // found nothing to run on (no agent), and the delivery limit does not count it.
    void requeue(const FleetTask &task, const StoredResponse &record,
                 const QList<LoggedEvent> &events, std::chrono::milliseconds after,
                 std::chrono::milliseconds visibility, bool countsAsRun, const QString &lastError,
                 Held done);
    // The task failed its delivery limit: failed for its client, a dead letter for operators.
    void deadLetter(const FleetTask &task, const StoredResponse &record,
                    const QList<LoggedEvent> &events, const QString &errorCode,
                    const QString &errorMessage, qint64 maxBytes, Held done);

    enum class RunState { Held, Cancelled, Gone, Lost };
    // Keeps this node's runs from being taken over, and says which were cancelled, deleted or
    // taken meanwhile.
    void renew(const QList<FleetTask> &tasks, std::chrono::milliseconds visibility,
               std::function<void(QHash<QByteArray, RunState>)> done);

    // ---- operators ----------------------------------------------------------------------------

    void report(int maxDeadLetters, std::function<void(FleetQueueReport)> done);
    // A dead-lettered task queued again with its delivery count reset, or dropped from the dead
    // letters (its response stays failed). Refused: it is not a dead letter.
    void retryDeadLetter(const QByteArray &id, std::function<void(Answer)> done);
    void discardDeadLetter(const QByteArray &id, std::function<void(Answer)> done);

    // Since start, on this node.
    quint64 takenOver() const { return m_takenOver; }
    quint64 deadLettered() const { return m_deadLettered; }
    quint64 expiredByAge() const { return m_expiredByAge; }
    quint64 expiredByBytes() const { return m_expiredByBytes; }

    // The dead-letter stream is trimmed to about this many entries (the oldest go; their tasks
    // stay failed).
    static constexpr int kMaxDeadLetters = 10'000;

private:
    void eval(const QByteArray &script, QList<QByteArray> arguments, redis::Link::Callback done);
    void countExpired(const redis::Reply &reply, int first);

    redis::Link &m_link;
    QByteArray m_prefix;
    QByteArray m_node;
    std::shared_ptr<bool> m_alive = std::make_shared<bool>(true);
    quint64 m_takenOver = 0;
    quint64 m_deadLettered = 0;
    quint64 m_expiredByAge = 0;
    quint64 m_expiredByBytes = 0;
    quint64 m_nextToken = 0;
};

// A record as Redis keeps it (without its status, response, runs and events), and back. Public
// for the tests.
QByteArray recordToJson(const StoredResponse &record);
bool recordFromJson(const QByteArray &json, StoredResponse *record);

} // namespace switchyard::responses
