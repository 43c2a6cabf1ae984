#pragma once

#include "config/responses_config.h"
#include "execution/client_channel.h"
#include "http/request_head.h"
#include "httpwire/response_writer.h"
#include "ingress/responses_ingress.h"
#include "protocol/openai_error.h"
#include "responses/fleet_responses.h"
#include "responses/response_store.h"
#include "telemetry/trace.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QPointer>
#include <QSet>
#include <QTimer>
#include <QUrlQuery>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <variant>
#include <vector>

namespace switchyard::config {
class ConfigStore;
}

namespace switchyard::http {

using httpwire::ResponseWriter;
using protocol::HeaderList;

class BackgroundChannel;

// Who may read, continue, cancel or delete a stored response: the client key that stored it, or
// without keys the tenant it named (which is not isolation: anyone may name any tenant).
QString responseOwner(const QString &keyId, const QString &tenant);

// What a Responses request asks the gateway to keep, read from its body before it is translated.
struct KeepRequest {
    bool store = false;      // keep the request and its answer (`store`, else the default)
    bool background = false; // run it on the queue (`background`)
    bool stream = false;
    QByteArray previousResponseId;
    QByteArray body; // the request without `store`, `background` and `previous_response_id`
};
// Reads `store`, `background` and `previous_response_id`: a background request without storage
// (`store: false`) is refused, as OpenAI refuses it.
std::variant<KeepRequest, protocol::ApiError>
readKeepRequest(const QByteArray &body, const config::ResponsesConfig &config);

// The Responses API's resources on this gateway: stored responses, background tasks on the
// durable queue that runs them, and the paths under /v1/responses/{id}. Engine thread only.
//
// A background task is stored first (on disk before the client hears `queued`), then a worker
// runs it: the server reads its stored request again, routes and executes it like any other,
// answering through a BackgroundChannel that translates the stream to Responses events, numbers
// them after every event the response ever logged, and keeps each (on disk before any client
// sees it). Clients that follow its stream read the log and then the live events. A task left
// queued or running by a process that ended runs again after the restart, under the same id.
class ResponsesService final : public QObject {
    Q_OBJECT
public:
    // Runs a stored request: `task.request` read as a POST /v1/responses with `task.headers`,
    // for `task.tenant` and `task.keyId`, routed and executed with `trace`, answering through
    // `channel`. It may refuse before any attempt (the model is gone after an Apply): then it
    // sends the error to the channel like the executor would.
    using Runner =
        std::function<void(const responses::StoredResponse &task, telemetry::TraceBuilder trace,
                           std::unique_ptr<execution::ClientChannel> channel)>;
    using TraceFactory = std::function<telemetry::TraceBuilder(const responses::StoredResponse &)>;
    // Records the trace of a task that ends without a run (cancelled while queued).
    using TraceFinisher =
        std::function<void(telemetry::TraceBuilder trace, int status, const QString &outcome)>;

    ResponsesService(responses::ResponseStore &store, const config::ConfigStore &config,
                     const timing::Clock &clock, QObject *parent = nullptr);
    ~ResponsesService() override;

    void setRunner(Runner runner, TraceFactory traceForRestart, TraceFinisher finishUnrun);
    // In a fleet (docs/fleet.md, "The queue"): the records and the queue are the fleet's, in
    // Redis; this node's store holds in memory the copies it works with. Set once, before
    // recover().
    void setFleet(responses::FleetResponses *fleet);
    bool inFleet() const { return m_fleet != nullptr; }
    // Each sync of the fleet (`fleet.sync_interval`): takes waiting tasks for free workers, feeds
    // the followers of tasks running anywhere, and about once a second renews this node's runs
    // (so no other node takes them over) and reads the fleet's queue for the console.
    void fleetTick();
    // At start: tasks an earlier process left queued or running go back on the queue.
    void recover();
    // After an Apply: more workers take waiting tasks at once.
    void configChanged() { pump(); }
    // The node is shutting down: no waiting task starts any more (the next start runs them).
    // Running ones finish within the shutdown grace like any request, or run again after it.
    void stopStarting() { m_starting = false; }

    // ---- POST /v1/responses --------------------------------------------------------------------

    // In a fleet, brings the stored response `id` from Redis before a request continues it; runs
    // `done` at once on a single node (later, always, in a fleet).
    void prefetch(const QByteArray &id, std::function<void()> done);
    // The task `id` being run found no agent offering its intent: it waits and is tried again
    // every second, until its time limit (`task_timeout`, from when it was queued) fails it with
    // `no_agent_available`. Its run is not counted as one.
    void awaitAgent(const QByteArray &id, const QString &reason);

    // `previous` continued: its conversation (history, input and output) before `input`. A
    // response this owner may not read, or one not finished, is refused; nullopt with no error
    // when there is no such response here (a provider may know it).
    std::variant<QByteArray, protocol::ApiError, std::monostate>
    withConversation(const QByteArray &body, const QByteArray &previousId, const QString &owner,
                     QByteArray *history);
    // A task this owner's tenant may still queue; the 429 `queue_full` otherwise.
    std::optional<protocol::ApiError> admitTask(const QString &tenant) const;
    // A new record for a request the gateway keeps.
    responses::StoredResponse newRecord(const KeepRequest &keep, const QString &owner,
                                        const QString &tenant, const QString &keyId,
                                        const QString &model, responses::Priority priority,
                                        const QByteArray &history, const QJsonObject &echo,
                                        const HeaderList &requestHeaders) const;
    // Keeps a background task (on disk first), then answers the client: the queued response
    // object, or (stream) the task's events as they come. The trace waits with the task.
    void acceptBackground(responses::StoredResponse task, ResponseWriter writer, HeaderList headers,
                          telemetry::TraceBuilder trace, bool stream);
    // Keeps a stored foreground request's answer, a Responses `response` object.
    void keepAnswered(responses::StoredResponse record, const QByteArray &responseJson);

    // ---- /v1/responses/{id}[/cancel|/input_items] ---------------------------------------------

    void handle(const IncomingRequest &request, const QString &rest, ResponseWriter writer,
                const HeaderList &identity, const QString &owner);

    // ---- operators ----------------------------------------------------------------------------

    struct QueueCounts {
        int queued[3] = {0, 0, 0}; // by priority
        int running = 0;
        qint64 oldestQueuedAgeMs = 0;
        quint64 completed = 0, failed = 0, cancelled = 0, timedOut = 0, incomplete = 0;
        qint64 storedBytes = 0;
        int stored = 0;
        quint64 expiredByAge = 0, expiredByBytes = 0;
        // In a fleet: `queued` and the age are the fleet's as last read, `running` this node's.
        bool fleet = false;
        int deadLetters = 0;
        quint64 takenOver = 0, deadLettered = 0;
    };
    QueueCounts counts() const;
    // A background task as an operator sees it (the queue report and the console list these).
    struct TaskView {
        QByteArray id;
        QString tenant;
        QString keyId;
        QString model;
        responses::Priority priority = responses::Priority::Normal;
        responses::Status status = responses::Status::Queued;
        qint64 createdAtMs = 0;
        qint64 finishedAtMs = 0;
        qint64 waitedMs = 0;  // until its last run began, or until now while queued
        qint64 runningMs = 0; // while in progress
        int runs = 0;
        QJsonValue error; // a finished task's response `error`; null otherwise
    };
    struct TaskList {
        // Running, then queued in the order workers take them; at most maxTasks.
        QList<TaskView> tasks;
        int tasksTotal = 0;             // queued and running, all of them
        QList<TaskView> recentFailures; // newest first, at most maxFailures
    };
    TaskList taskList(int maxTasks, int maxFailures) const;
    // GET /admin/v1/queue: counts, depth by tenant, and the queued, running and recently failed
    // tasks.
    QJsonObject queueReport() const;
    // The same, for this node or, in a fleet, the fleet's queue read from Redis.
    void queueReport(std::function<void(QJsonObject)> done);
    // Cancels a queued or running task for an operator; false when there is none.
    bool cancelTask(const QByteArray &id);
    // The same, for this node's queue or the fleet's; `done` gets the error, nullopt on success.
    void cancelTask(const QByteArray &id,
                    std::function<void(std::optional<protocol::ApiError>)> done);
    // A dead-lettered task of the fleet queued again (its runs counted from zero), or dropped
    // from the dead letters (it stays failed). On a single node there are no dead letters.
    void retryDeadLetter(const QByteArray &id,
                         std::function<void(std::optional<protocol::ApiError>)> done);
    void discardDeadLetter(const QByteArray &id,
                           std::function<void(std::optional<protocol::ApiError>)> done);
    // The fleet's queue as last read (every second); empty on a single node.
    const responses::FleetQueueReport &fleetReport() const { return m_fleetReport; }
    // Tasks this node took over from a node that stopped renewing them, and moved to the dead
    // letters, since start.
    quint64 tasksTakenOver() const;
    quint64 tasksDeadLettered() const;
    // What an operator's cancel of `id` is answered when cancelTask finds no such task: the
    // admin API's 404 and the console's refusal.
    static protocol::ApiError taskNotFound(const QString &id);

Q_SIGNALS:
    void queueChanged();

private:
    friend class BackgroundChannel;
    // A client reading a background response's events as they are logged.
    struct Follower {
        explicit Follower(ResponseWriter writer) : writer(std::move(writer)) {}
        ResponseWriter writer;
        qint64 lastSent = -1;
    };
    // A task a worker of this node runs.
    struct Running {
        QPointer<BackgroundChannel> channel;
        std::unique_ptr<QTimer> timeLimit;
        // In a fleet: the task as taken from Redis, whose lock every write of the run shows.
        std::optional<responses::FleetTask> fleet;
        bool intent = false; // the request names an intent: it runs on an agent
    };
    // Tells the run's execution its client is gone: nothing it sends after counts.
    static void stopRun(Running &running);

    responses::StoredResponse *ownedBy(const QByteArray &id, const QString &owner);
    void enqueue(const responses::StoredResponse &task);
    void pump();
    void start(const QByteArray &id, std::optional<responses::FleetTask> fleetTask = {});
    // From the channel of a running task. `errorStatus`: the HTTP status of the error a failed
    // run ended with (0 for none): 429 and 5xx are worth another run.
    void taskEvents(const QByteArray &id, QList<responses::LoggedEvent> events);
    void taskFinished(const QByteArray &id, responses::Status status, QByteArray responseJson,
                      QList<responses::LoggedEvent> lastEvents, int errorStatus = 0);
    void handleHere(const IncomingRequest &request, const QString &rest, ResponseWriter writer,
                    const HeaderList &identity, const QString &owner);

    // ---- the fleet's half (responses_fleet.cpp) ------------------------------------------------
    void pumpFleet();
    void startFleet(responses::FleetTask task);
    // Ends a fleet run in Redis; false when the run is not a fleet one (the caller ends it here).
    bool settleFleet(Running &running, responses::StoredResponse &record,
                     QList<responses::LoggedEvent> &lastEvents, int errorStatus);
    void renewFleet();
    // A fleet run's writes to Redis go one at a time, in order (fleetWrites): its events, the
    // response object it replaces, then its end. What found Redis unreachable is sent again when
    // the link is back, so a run outlives Redis being away and its end is still written.
    void writeToFleet(const QByteArray &id, const responses::FleetTask &task,
                      QList<responses::LoggedEvent> events, QByteArray response = {});
    void flushFleetWrites(const QByteArray &id);
    // The run of `id` no longer holds its task: it stops, writing nothing more. With a `token`,
    // only the run that holds that token stops (a later run of the task is not this one).
    void dropRun(const QByteArray &id, const QByteArray &token, const QString &why);
    // A copy of the fleet's record replaces this node's, unless this node runs it.
    void absorb(const QByteArray &id, responses::FleetResponses::Fetched fetched);
    void followFleet(const QByteArray &id, ResponseWriter writer, HeaderList headers, qint64 after);
    void pollFollowers(const QByteArray &id);
    void acceptInFleet(responses::StoredResponse task, ResponseWriter writer, HeaderList headers,
                       telemetry::TraceBuilder trace, bool stream);
    void cancelInFleet(const QByteArray &id, ResponseWriter writer, const HeaderList &identity);
    void removeInFleet(const QByteArray &id, ResponseWriter writer, const HeaderList &identity);
    QJsonObject fleetReportJson(const responses::FleetQueueReport &report) const;
    void deliver(QByteArray id);
    void follow(const responses::StoredResponse &record, ResponseWriter writer, HeaderList headers,
                qint64 after);
    void forget(const QByteArray &id);
    void cancel(responses::StoredResponse &record);

    void retrieve(const responses::StoredResponse &record, const QUrlQuery &query,
                  ResponseWriter writer, const HeaderList &identity);

    responses::ResponseStore &m_store;
    const config::ConfigStore &m_config;
    const timing::Clock &m_clock;
    Runner m_runner;
    TraceFactory m_traceForRestart;
    TraceFinisher m_finishUnrun;
    // Waiting tasks: (priority, created, id), served from the front.
    std::set<std::tuple<int, qint64, QByteArray>> m_queued;
    QHash<QByteArray, std::shared_ptr<Running>> m_running;
    // The traces of tasks this process accepted, with their open `queued` span: a task picked up
    // after a restart starts a new one (traceForRestart).
    std::map<QByteArray, std::pair<telemetry::TraceBuilder, int>> m_waitingTraces;
    std::map<QByteArray, std::vector<std::unique_ptr<Follower>>> m_followers;
    QHash<QByteArray, qint64> m_durableThrough; // last sequence number on disk, per response
    QHash<QString, int> m_activeByTenant;       // queued and running tasks
    quint64 m_outcomes[6] = {0, 0, 0, 0, 0, 0}; // finished tasks by status
    quint64 m_timedOut = 0;
    bool m_starting = true;

    // In a fleet.
    responses::FleetResponses *m_fleet = nullptr;
    qint64 m_lastRenewMs = 0; // steady clock
    bool m_taking = false;    // a take on the wire
    bool m_renewing = false;  // a renewal on the wire
    std::map<QByteArray, std::vector<std::unique_ptr<Follower>>> m_fleetFollowers;
    struct FleetWrites {
        responses::FleetTask task;            // of the run writing
        QList<responses::LoggedEvent> events; // not written yet, in order
        QByteArray response;                  // the response object to write with them, if any
        // The run's end (finish, requeue or dead letter), sent once the events are written.
        std::function<void(responses::FleetResponses::Held)> end;
        bool onTheWire = false;
        bool resend = false; // a write found Redis unreachable and waits to go again
    };
    // Whether this node's own runs must reach Redis before it takes tasks: a write waits to be
    // sent again, or the renewal of runs whose locks may have lapsed is due. A take would see
    // their tasks as abandoned and take them over from this node itself.
    bool ownRunsFirst() const;
    // By response id, while a run has writes waiting or on the wire; its entry outlives the run
    // until its end is written.
    std::map<QByteArray, FleetWrites> m_fleetWrites;
    std::set<QByteArray> m_polling;   // followers' reads on the wire
    std::set<QByteArray> m_pollAgain; // asked again while one was on the wire
    // Stored while Redis was unreachable: kept on this node only (docs/fleet.md).
    QSet<QByteArray> m_localOnly;
    responses::FleetQueueReport m_fleetReport;
};

} // namespace switchyard::http
