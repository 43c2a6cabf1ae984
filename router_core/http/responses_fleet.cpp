// The Responses service's fleet half (docs/fleet.md, "The queue"): with `fleet.redis`, stored
// responses and background tasks are the fleet's, in Redis (responses::FleetResponses), and this
// node's ResponseStore holds in memory only the copies it works with. Any node takes any task,
// answers for any response, and takes over the tasks of a node that stopped renewing them.
#include "config/config_store.h"
#include "http/responses_json.h"
#include "http/responses_service.h"

#include <QLoggingCategory>
#include <QPointer>

Q_DECLARE_LOGGING_CATEGORY(lcBackground)

namespace switchyard::http {

using namespace Qt::StringLiterals;
using namespace responses_json;
using responses::FleetResponses;
using responses::FleetTask;
using responses::LoggedEvent;
using responses::Status;
using responses::StoredResponse;

namespace {

// A run's lock is renewed once a second, or three times within the visibility timeout when that
// is shorter (and at each sync at most: keep `fleet.sync_interval` well below it).
qint64 renewEveryMs(std::chrono::milliseconds visibility)
{
    return std::min<qint64>(1000, visibility.count() / 3);
}

// The wait before run `runs + 1`: the backoff, doubled for each run after the first, at most
// five minutes (and, in effect, at most the visibility timeout, after which any node claims it).
std::chrono::milliseconds retryWait(std::chrono::milliseconds backoff, int runs)
{
    const qint64 doubled = backoff.count() << std::clamp(runs - 1, 0, 20);
    return std::chrono::milliseconds(std::min<qint64>(doubled, 5 * 60 * 1000));
}

protocol::ApiError storeUnavailable(const QString &problem)
{
    protocol::ApiError error = protocol::ApiError::serviceUnavailable(
        u"The fleet's Redis, which keeps this response, cannot be reached (%1): nothing was "
        u"changed. Retry shortly."_s.arg(problem));
    error.code = u"queue_unavailable"_s;
    error.retryAfter = "5";
    return error;
}

protocol::ApiError notADeadLetter(const QByteArray &id)
{
    protocol::ApiError error;
    error.status = 404;
    error.type = u"invalid_request_error"_s;
    error.code = u"dead_letter_not_found"_s;
    error.message = u"No dead-lettered task has the id '%1'."_s.arg(QString::fromLatin1(id));
    return error;
}

} // namespace

void ResponsesService::setFleet(FleetResponses *fleet)
{
    m_fleet = fleet;
}

quint64 ResponsesService::tasksTakenOver() const
{
    return m_fleet ? m_fleet->takenOver() : 0;
}

quint64 ResponsesService::tasksDeadLettered() const
{
    return m_fleet ? m_fleet->deadLettered() : 0;
}

void ResponsesService::fleetTick()
{
    if (!m_fleet)
        return;
    // This node's runs first: what they could not write while Redis was away, and their locks
    // (lapsed, if it was away long), go before a take (ownRunsFirst).
    if (m_fleet->reachable()) {
        QList<QByteArray> writing;
        for (const auto &entry : m_fleetWrites)
            writing.append(entry.first);
        for (const QByteArray &id : writing)
            flushFleetWrites(id);
    }
    const qint64 now = m_clock.msSinceEpoch();
    if (now - m_lastRenewMs >= renewEveryMs(m_config.config().responses.visibilityTimeout)) {
        m_lastRenewMs = now;
        renewFleet();
    }
    pumpFleet();
    QList<QByteArray> followed;
    for (const auto &entry : m_fleetFollowers)
        followed.append(entry.first);
    for (const QByteArray &id : followed)
        pollFollowers(id);
}

// ---- accepting and taking tasks -----------------------------------------------------------------

void ResponsesService::acceptInFleet(StoredResponse task, ResponseWriter writer, HeaderList headers,
                                     telemetry::TraceBuilder trace, bool stream)
{
    const int limit = m_config.config().responses.maxQueuedPerTenant;
    const QString tenant = task.tenant;
    auto pending = std::make_shared<ResponseWriter>(std::move(writer));
    auto waiting = std::make_shared<telemetry::TraceBuilder>(std::move(trace));
    auto kept = std::make_shared<StoredResponse>(std::move(task));
    m_fleet->enqueue(
        *kept, limit,
        [self = QPointer<ResponsesService>(this), pending, waiting, kept,
         headers = std::move(headers), stream, limit,
         tenant](FleetResponses::Answer answer) mutable {
            if (!self)
                return;
            if (answer.outcome != FleetResponses::Outcome::Done) {
                protocol::ApiError error;
                if (answer.outcome == FleetResponses::Outcome::Refused) {
                    error.status = 429;
                    error.type = u"rate_limit_error"_s;
                    error.code = u"queue_full"_s;
                    error.message = u"Tenant '%1' already has %2 background task(s) queued or "
                                    u"running in the fleet, the most "
                                    u"`responses.queue.max_queued_per_tenant` allows; retry when "
                                    u"some finish."_s.arg(tenant)
                                        .arg(limit);
                    error.retryAfter = "5";
                } else {
                    error = queueUnavailable(answer.problem);
                }
                pending->sendError(error, headers);
                if (self->m_finishUnrun)
                    self->m_finishUnrun(std::move(*waiting), error.status, error.code);
                return;
            }
            const QByteArray id = kept->id;
            // This node's trace waits with the task: the node that runs it continues
            // it when that is this one, else starts its own (fleetTick drops it).
            const int span = waiting->openSpan(u"queued"_s, responses::priorityName(kept->priority),
                                               telemetry::SpanKind::Wait);
            self->m_waitingTraces.insert_or_assign(id, std::make_pair(std::move(*waiting), span));
            self->m_store.put(std::move(*kept));
            const StoredResponse *record = self->m_store.peek(id);
            if (stream)
                self->followFleet(id, std::move(*pending), std::move(headers), -1);
            else if (record)
                pending->sendWhole(200, headers, "application/json", record->response);
            self->pumpFleet();
            emit self->queueChanged();
        });
}

bool ResponsesService::ownRunsFirst() const
{
    bool holdsTasks = false;
    for (const auto &[id, writes] : m_fleetWrites) {
        if (writes.resend)
            return true;
        holdsTasks = true;
    }
    // While Redis was away no tick ran and no renewal was sent: one is overdue now. The next tick
    // sends it, before its take.
    return holdsTasks && m_clock.msSinceEpoch() - m_lastRenewMs >=
                             renewEveryMs(m_config.config().responses.visibilityTimeout);
}

void ResponsesService::pumpFleet()
{
    const config::ResponsesConfig &config = m_config.config().responses;
    const int free = config.workers - int(m_running.size());
    if (!m_starting || !m_runner || m_taking || free <= 0 || !m_fleet->reachable() ||
        ownRunsFirst())
        return;
    m_taking = true;
    m_fleet->take(free, config.visibilityTimeout,
                  [self = QPointer<ResponsesService>(this)](QList<FleetTask> tasks) {
                      // A service gone meanwhile leaves its tasks locked until their visibility
                      // timeout: then another node, or this one after a restart, takes them.
                      if (!self)
                          return;
                      self->m_taking = false;
                      const bool took = !tasks.isEmpty();
                      for (FleetTask &task : tasks)
                          self->startFleet(std::move(task));
                      if (took)
                          self->pumpFleet(); // more may be waiting
                  });
}

void ResponsesService::startFleet(FleetTask task)
{
    const config::ResponsesConfig &config = m_config.config().responses;
    const QByteArray id = task.record.id;
    // Finished tasks of this node's copy are replaced by the fleet's, as are the events.
    m_store.put(task.record);
    StoredResponse *record = m_store.find(id);
    if (!record)
        return;
    if (!m_starting) {
        // Shutting down: the task goes back at once, not counted as a run.
        m_fleet->requeue(task, *record, {}, std::chrono::milliseconds(0), config.visibilityTimeout,
                         false, u"its node was stopping"_s, {});
        return;
    }
    if (record->runs > config.deliveryLimit) {
        // Its earlier runs ended with their nodes, or failed: it is not run again.
        const QString cause =
            task.lastError.isEmpty()
                ? u"the node running it (%1) stopped before it finished"_s.arg(task.lastNode)
                : task.lastError;
        const QString message =
            u"The task was delivered %1 times without finishing (`responses.queue."
            u"delivery_limit` is %2); the last time: %3"_s.arg(record->runs - 1)
                .arg(config.deliveryLimit)
                .arg(cause);
        QJsonObject response = withStatus(record->response, Status::Failed);
        response.insert(u"error"_s, QJsonObject{{u"code"_s, u"delivery_limit_reached"_s},
                                                {u"message"_s, message}});
        record->status = Status::Failed;
        record->finishedAtMs = m_clock.msSinceEpoch();
        record->response = compact(response);
        const QList<LoggedEvent> events{loggedEvent(
            u"response.failed"_s, {{u"response"_s, response}}, record->nextSequenceNumber())};
        m_fleet->deadLetter(task, *record, events, u"delivery_limit_reached"_s, message,
                            config.maxStoredBytes, {});
        m_store.appendEvents(*record, events);
        m_store.update(*record);
        ++m_outcomes[int(Status::Failed)];
        qCWarning(lcBackground).noquote() << u"background: %1 moved to the dead letters: %2"_s.arg(
            QString::fromLatin1(id), message);
        emit queueChanged();
        return;
    }
    // A run of this task still here lost its hold (this node stalled past the visibility
    // timeout): it stops before the new run starts.
    if (m_running.contains(id))
        dropRun(id, {}, u"this node took the task again after its hold lapsed"_s);
    // Readers on every node see it running. An earlier run's writes still waiting here are not
    // this run's: the task was taken again, with a new token.
    m_fleetWrites.erase(id);
    writeToFleet(id, task, {}, compact(withStatus(record->response, Status::InProgress)));
    if (task.takenOver)
        qCInfo(lcBackground).noquote()
            << u"background: took over %1 (run %2) from node %3, which stopped renewing it"_s
                   .arg(QString::fromLatin1(id))
                   .arg(record->runs)
                   .arg(task.lastNode);
    start(id, std::move(task));
}

bool ResponsesService::settleFleet(Running &running, StoredResponse &record,
                                   QList<LoggedEvent> &lastEvents, int errorStatus)
{
    if (!running.fleet)
        return false;
    const FleetTask &task = *running.fleet;
    const config::ResponsesConfig &config = m_config.config().responses;
    const QByteArray id = record.id;
    // The end goes after the run's events still waiting, if any (flushFleetWrites).
    FleetWrites &writes = m_fleetWrites[id];
    writes.task = task;
    const auto endWith = [this, &writes, id](auto send) {
        writes.end = std::move(send);
        flushFleetWrites(id);
    };
    const bool worthAnotherRun =
        record.status == Status::Failed && (errorStatus == 429 || errorStatus >= 500);
    if (!worthAnotherRun) {
        endWith([fleet = m_fleet, task, record, lastEvents, retention = config.retention.count(),
                 maxBytes = config.maxStoredBytes](FleetResponses::Held done) {
            fleet->finish(task, record, lastEvents, retention, maxBytes, std::move(done));
        });
        return true;
    }
    const QJsonObject error = objectOf(record.response).value(u"error"_s).toObject();
    const QString code = error.value(u"code"_s).toString();
    const QString message = error.value(u"message"_s).toString();
    if (record.runs >= config.deliveryLimit) {
        const QString dead =
            u"failed on each of its %1 runs (`responses.queue.delivery_limit`); the last: %2"_s
                .arg(record.runs)
                .arg(message);
        endWith([fleet = m_fleet, task, record, lastEvents, code, dead,
                 maxBytes = config.maxStoredBytes](FleetResponses::Held done) {
            fleet->deadLetter(task, record, lastEvents, code, dead, maxBytes, std::move(done));
        });
        qCWarning(lcBackground).noquote()
            << u"background: %1 moved to the dead letters: %2"_s.arg(QString::fromLatin1(id), dead);
        return true;
    }
    // Another run later, on any node: the failure's terminal event is not logged (the task did
    // not end); a `response.queued` event says it waits again.
    while (!lastEvents.isEmpty() && (lastEvents.constLast().type == "response.failed" ||
                                     lastEvents.constLast().type == "error"))
        lastEvents.removeLast();
    const qint64 sequence = lastEvents.isEmpty() ? record.nextSequenceNumber()
                                                 : lastEvents.constLast().sequenceNumber + 1;
    QJsonObject queued = withStatus(record.response, Status::Queued);
    queued.insert(u"error"_s, QJsonValue());
    record.status = Status::Queued;
    record.finishedAtMs = 0;
    record.response = compact(queued);
    lastEvents.append(loggedEvent(u"response.queued"_s, {{u"response"_s, queued}}, sequence));
    const std::chrono::milliseconds wait = retryWait(config.retryBackoff, record.runs);
    endWith([fleet = m_fleet, task, record, lastEvents, wait, visibility = config.visibilityTimeout,
             lastError = u"%1: %2"_s.arg(code, message)](FleetResponses::Held done) {
        fleet->requeue(task, record, lastEvents, wait, visibility, true, lastError,
                       std::move(done));
    });
    qCInfo(lcBackground).noquote()
        << u"background: %1 failed on run %2 of %3 and runs again in %4 ms: %5"_s
               .arg(QString::fromLatin1(id))
               .arg(record.runs)
               .arg(config.deliveryLimit)
               .arg(wait.count())
               .arg(message);
    return true;
}

void ResponsesService::renewFleet()
{
    // Traces waiting for tasks another node ran: nobody here will continue them.
    const qint64 visibility = m_config.config().responses.visibilityTimeout.count();
    for (auto it = m_waitingTraces.begin(); it != m_waitingTraces.end();) {
        if (!m_running.contains(it->first) && it->second.first.elapsedMicros() / 1000 > visibility)
            it = m_waitingTraces.erase(it);
        else
            ++it;
    }
    if (!m_fleet->reachable())
        return;
    m_fleet->report(50,
                    [self = QPointer<ResponsesService>(this)](responses::FleetQueueReport report) {
                        if (!self || !report.problem.isEmpty())
                            return;
                        self->m_fleetReport = std::move(report);
                        emit self->queueChanged();
                    });
    QList<FleetTask> held;
    QHash<QByteArray, QByteArray> tokens; // the runs asked about: a newer run is not dropped
    for (auto it = m_running.cbegin(); it != m_running.cend(); ++it) {
        if (it.value()->fleet) {
            held.append(*it.value()->fleet);
            tokens.insert(it.key(), it.value()->fleet->token);
        }
    }
    // A run that ended while its end could not be written keeps its task until it is.
    for (const auto &[id, writes] : m_fleetWrites) {
        if (writes.end && !tokens.contains(id)) {
            held.append(writes.task);
            tokens.insert(id, writes.task.token);
        }
    }
    if (held.isEmpty() || m_renewing)
        return;
    m_renewing = true;
    m_fleet->renew(held, m_config.config().responses.visibilityTimeout,
                   [self = QPointer<ResponsesService>(this),
                    tokens](QHash<QByteArray, FleetResponses::RunState> states) {
                       if (!self)
                           return;
                       self->m_renewing = false;
                       using State = FleetResponses::RunState;
                       for (auto it = states.cbegin(); it != states.cend(); ++it) {
                           const QByteArray &id = it.key();
                           if (it.value() == State::Held)
                               continue;
                           const QByteArray token = tokens.value(id);
                           if (const auto writes = self->m_fleetWrites.find(id);
                               writes != self->m_fleetWrites.end() &&
                               writes->second.task.token == token && !writes->second.onTheWire)
                               self->m_fleetWrites.erase(writes); // nothing more to write
                           if (it.value() == State::Cancelled) {
                               self->dropRun(id, token, u"cancelled on another node"_s);
                               if (StoredResponse *record = self->m_store.peek(id)) {
                                   record->status = Status::Cancelled;
                                   record->response =
                                       compact(withStatus(record->response, Status::Cancelled));
                               }
                           } else if (it.value() == State::Gone) {
                               self->dropRun(id, token, u"deleted on another node"_s);
                               self->m_store.remove(id);
                           } else {
                               self->dropRun(id, token, u"taken over by another node"_s);
                           }
                       }
                   });
}

void ResponsesService::dropRun(const QByteArray &id, const QByteArray &token, const QString &why)
{
    const std::shared_ptr<Running> current = m_running.value(id);
    // A reply about an earlier run of the same task must not stop the run that replaced it.
    if (!current || (!token.isEmpty() && (!current->fleet || current->fleet->token != token)))
        return;
    const std::shared_ptr<Running> running = m_running.take(id);
    if (const auto writes = m_fleetWrites.find(id);
        writes != m_fleetWrites.end() && current->fleet &&
        writes->second.task.token == current->fleet->token)
        m_fleetWrites.erase(writes); // it no longer writes anything
    qCInfo(lcBackground).noquote()
        << u"background: the run of %1 stops: %2"_s.arg(QString::fromLatin1(id), why);
    stopRun(*running);
    emit queueChanged();
    QMetaObject::invokeMethod(
        this, [this] { pump(); }, Qt::QueuedConnection);
}

void ResponsesService::writeToFleet(const QByteArray &id, const FleetTask &task,
                                    QList<LoggedEvent> events, QByteArray response)
{
    FleetWrites &writes = m_fleetWrites[id];
    writes.task = task;
    writes.events.append(std::move(events));
    if (!response.isEmpty())
        writes.response = std::move(response);
    flushFleetWrites(id);
}

void ResponsesService::flushFleetWrites(const QByteArray &id)
{
    const auto found = m_fleetWrites.find(id);
    if (found == m_fleetWrites.end())
        return;
    FleetWrites &writes = found->second;
    if (writes.onTheWire || !m_fleet->reachable())
        return; // sent when the one on the wire answers, or at a tick once the link is back
    const QByteArray token = writes.task.token;
    using Write = FleetResponses::Write;
    // The entry an answer is about, marked answered; none when the service, the entry or its run
    // is gone by then (another run's entry is not this one).
    const auto answered = [self = QPointer<ResponsesService>(this), id,
                           token](Write outcome) -> FleetWrites * {
        if (!self)
            return nullptr;
        const auto entry = self->m_fleetWrites.find(id);
        if (entry == self->m_fleetWrites.end() || entry->second.task.token != token)
            return nullptr;
        entry->second.onTheWire = false;
        entry->second.resend = outcome == Write::Unreachable;
        return &entry->second;
    };
    if (!writes.events.isEmpty() || !writes.response.isEmpty()) {
        QList<LoggedEvent> events = std::exchange(writes.events, {});
        QByteArray response = std::exchange(writes.response, {});
        writes.onTheWire = true;
        m_fleet->append(
            writes.task, events,
            [this, answered, id, token, events, response](Write outcome) mutable {
                FleetWrites *writes = answered(outcome);
                if (!writes)
                    return;
                if (outcome == Write::Unreachable) {
                    // Back in front of what arrived since; sent again when the link is back.
                    writes->events = std::move(events) + writes->events;
                    if (writes->response.isEmpty())
                        writes->response = std::move(response);
                    return;
                }
                if (outcome == Write::NotHeld) {
                    m_fleetWrites.erase(id);
                    dropRun(id, token, u"its task is no longer its own"_s);
                    return;
                }
                pollFollowers(id);
                flushFleetWrites(id);
            },
            response);
        return;
    }
    if (!writes.end)
        return;
    writes.onTheWire = true;
    writes.end([this, answered, id](Write outcome) {
        if (!answered(outcome) || outcome == Write::Unreachable)
            return; // unreachable: sent again at a tick once the link is back
        if (outcome == Write::NotHeld)
            qCInfo(lcBackground).noquote()
                << u"background: the end of %1's run was not written: the task is no longer "
                   u"this run's (cancelled, deleted or taken over)"_s.arg(QString::fromLatin1(id));
        m_fleetWrites.erase(id);
        pollFollowers(id);
    });
}

// ---- reading, following, cancelling and deleting -----------------------------------------------

void ResponsesService::prefetch(const QByteArray &id, std::function<void()> done)
{
    if (!m_fleet || id.isEmpty() || !m_fleet->reachable()) {
        QMetaObject::invokeMethod(this, std::move(done), Qt::QueuedConnection);
        return;
    }
    m_fleet->fetch(id, [self = QPointer<ResponsesService>(this), id,
                        done = std::move(done)](FleetResponses::Fetched fetched) {
        if (!self)
            return;
        self->absorb(id, std::move(fetched));
        done();
    });
}

void ResponsesService::absorb(const QByteArray &id, FleetResponses::Fetched fetched)
{
    // A run of this node ended and its end is not written yet: this node's copy is the newer.
    if (!m_running.contains(id) && m_fleetWrites.count(id))
        return;
    if (m_running.contains(id)) {
        // This node's run writes the record, so its copy is the newest, unless the task was
        // cancelled or deleted elsewhere since (the run learns it at its next renewal).
        const bool endedElsewhere = fetched.outcome == FleetResponses::Outcome::Refused ||
                                    (fetched.outcome == FleetResponses::Outcome::Done &&
                                     responses::isFinished(fetched.record.status));
        if (!endedElsewhere)
            return;
        dropRun(id, {}, u"cancelled or deleted on another node"_s);
    }
    if (fetched.outcome == FleetResponses::Outcome::Done)
        m_store.put(std::move(fetched.record));
    else if (fetched.outcome == FleetResponses::Outcome::Refused && m_store.peek(id) &&
             !m_localOnly.contains(id))
        m_store.remove(id); // deleted, or expired, in the fleet
    // Unreachable: this node answers from the copy it has, if any.
}

void ResponsesService::followFleet(const QByteArray &id, ResponseWriter writer, HeaderList headers,
                                   qint64 after)
{
    writer.beginEventStream(headers);
    auto follower = std::make_unique<Follower>(std::move(writer));
    follower->lastSent = after;
    m_fleetFollowers[id].push_back(std::move(follower));
    pollFollowers(id);
}

void ResponsesService::pollFollowers(const QByteArray &id)
{
    const auto found = m_fleetFollowers.find(id);
    if (found == m_fleetFollowers.end())
        return;
    if (m_polling.count(id)) {
        m_pollAgain.insert(id);
        return;
    }
    std::vector<std::unique_ptr<Follower>> &followers = found->second;
    std::erase_if(followers, [](const std::unique_ptr<Follower> &follower) {
        return !follower->writer.clientConnected();
    });
    if (followers.empty()) {
        m_fleetFollowers.erase(found);
        return;
    }
    qint64 after = std::numeric_limits<qint64>::max();
    for (const std::unique_ptr<Follower> &follower : followers)
        after = std::min(after, follower->lastSent);
    m_polling.insert(id);
    // Only what Redis holds is shown: an event no node has written there can never be lost to
    // a client, and a run after a takeover numbers its events after it.
    m_fleet->readEvents(
        id, after, [self = QPointer<ResponsesService>(this), id](FleetResponses::EventsRead read) {
            if (!self)
                return;
            self->m_polling.erase(id);
            const auto found = self->m_fleetFollowers.find(id);
            if (found != self->m_fleetFollowers.end() && read.answered) {
                std::vector<std::unique_ptr<Follower>> &followers = found->second;
                const bool over = read.missing || responses::isFinished(read.status);
                for (auto it = followers.begin(); it != followers.end();) {
                    Follower &follower = **it;
                    QByteArray wire;
                    for (const LoggedEvent &event : read.events) {
                        if (event.sequenceNumber > follower.lastSent) {
                            wire += wireOf(event);
                            follower.lastSent = event.sequenceNumber;
                        }
                    }
                    if (!wire.isEmpty())
                        follower.writer.writeStreamData(wire);
                    // Finished: the log read with the status is the whole log.
                    if (over || !follower.writer.clientConnected()) {
                        if (over)
                            follower.writer.endEventStream();
                        it = followers.erase(it);
                        continue;
                    }
                    ++it;
                }
                if (followers.empty())
                    self->m_fleetFollowers.erase(found);
            }
            if (self->m_pollAgain.erase(id))
                self->pollFollowers(id);
        });
}

void ResponsesService::cancelInFleet(const QByteArray &id, ResponseWriter writer,
                                     const HeaderList &identity)
{
    auto pending = std::make_shared<ResponseWriter>(std::move(writer));
    cancelTask(id, [self = QPointer<ResponsesService>(this), id, pending,
                    identity](std::optional<protocol::ApiError> error) {
        if (!self)
            return;
        if (error && error->status != 404)
            return pending->sendError(*error, identity);
        // Cancelled, or finished meanwhile on another node: the fleet's record says which.
        self->m_fleet->fetch(id, [self, id, pending, identity](FleetResponses::Fetched fetched) {
            if (!self)
                return;
            if (fetched.outcome != FleetResponses::Outcome::Done)
                return pending->sendError(fetched.outcome == FleetResponses::Outcome::Refused
                                              ? responseNotFound(id)
                                              : storeUnavailable(fetched.problem),
                                          identity);
            const StoredResponse &record = fetched.record;
            if (record.status != Status::Cancelled) {
                return pending->sendError(protocol::ApiError::invalidRequest(
                                              u"Cannot cancel a response that is already %1."_s.arg(
                                                  responses::statusName(record.status)),
                                              u"response_id"_s),
                                          identity);
            }
            pending->sendWhole(200, identity, "application/json", record.response);
            self->absorb(id, std::move(fetched));
        });
    });
}

void ResponsesService::removeInFleet(const QByteArray &id, ResponseWriter writer,
                                     const HeaderList &identity)
{
    auto pending = std::make_shared<ResponseWriter>(std::move(writer));
    m_fleet->remove(id, [self = QPointer<ResponsesService>(this), id, pending,
                         identity](FleetResponses::Answer answer) {
        if (!self)
            return;
        if (answer.outcome == FleetResponses::Outcome::Unreachable)
            return pending->sendError(storeUnavailable(answer.problem), identity);
        self->dropRun(id, {}, u"deleted"_s);
        if (self->m_store.peek(id))
            self->m_store.remove(id);
        if (answer.outcome == FleetResponses::Outcome::Refused)
            return pending->sendError(responseNotFound(id), identity);
        pending->sendWhole(200, identity, "application/json",
                           compact(QJsonObject{{u"id"_s, QString::fromUtf8(id)},
                                               {u"object"_s, u"response"_s},
                                               {u"deleted"_s, true}}));
        emit self->queueChanged();
    });
}

// ---- operators ----------------------------------------------------------------------------------

QJsonObject ResponsesService::fleetReportJson(const responses::FleetQueueReport &report) const
{
    const config::ResponsesConfig &config = m_config.config().responses;
    QJsonObject byNode;
    QJsonArray running;
    for (const auto &[id, node] : report.running) {
        byNode.insert(node, byNode.value(node).toInt() + 1);
        running.append(QJsonObject{{u"id"_s, QString::fromLatin1(id)}, {u"node"_s, node}});
    }
    QJsonObject byTenant;
    for (auto it = report.activeByTenant.cbegin(); it != report.activeByTenant.cend(); ++it)
        byTenant.insert(it.key(), QJsonObject{{u"queued_or_running"_s, it.value()}});
    QJsonArray dead;
    for (const responses::DeadLetter &letter : report.deadLetters) {
        dead.append(QJsonObject{
            {u"id"_s, QString::fromLatin1(letter.id)},
            {u"tenant"_s, letter.tenant},
            {u"model"_s, letter.model},
            {u"priority"_s, letter.priority},
            {u"runs"_s, letter.runs},
            {u"node"_s, letter.node},
            {u"dead_lettered_at_ms"_s, letter.atMs},
            {u"error"_s,
             QJsonObject{{u"code"_s, letter.errorCode}, {u"message"_s, letter.errorMessage}}},
        });
    }
    const QueueCounts here = counts();
    return {
        {u"fleet"_s, true},
        {u"node"_s, QString::fromUtf8(m_fleet->node())},
        {u"workers"_s, config.workers},
        {u"queued"_s, QJsonObject{{u"high"_s, report.queued[0]},
                                  {u"normal"_s, report.queued[1]},
                                  {u"low"_s, report.queued[2]}}},
        {u"oldest_queued_age_ms"_s, report.oldestQueuedAgeMs},
        {u"running"_s, int(report.running.size())},
        {u"running_by_node"_s, byNode},
        {u"running_tasks"_s, running},
        {u"max_queued_per_tenant"_s, config.maxQueuedPerTenant},
        {u"by_tenant"_s, byTenant},
        {u"visibility_timeout_ms"_s, qint64(config.visibilityTimeout.count())},
        {u"delivery_limit"_s, config.deliveryLimit},
        {u"dead_lettered"_s, report.deadLettered},
        {u"dead_letters"_s, dead},
        {u"this_node"_s,
         QJsonObject{{u"running"_s, here.running},
                     {u"taken_over"_s, qint64(m_fleet->takenOver())},
                     {u"dead_lettered"_s, qint64(m_fleet->deadLettered())},
                     {u"outcomes"_s, QJsonObject{{u"completed"_s, qint64(here.completed)},
                                                 {u"incomplete"_s, qint64(here.incomplete)},
                                                 {u"failed"_s, qint64(here.failed)},
                                                 {u"cancelled"_s, qint64(here.cancelled)},
                                                 {u"timed_out"_s, qint64(here.timedOut)}}}}},
    };
}

void ResponsesService::queueReport(std::function<void(QJsonObject)> done)
{
    if (!m_fleet)
        return done(queueReport());
    m_fleet->report(50, [self = QPointer<ResponsesService>(this),
                         done = std::move(done)](responses::FleetQueueReport report) {
        if (!self)
            return;
        if (!report.problem.isEmpty()) {
            // As last read, and said to be so.
            QJsonObject stale = self->fleetReportJson(self->m_fleetReport);
            stale.insert(u"problem"_s, u"the fleet's Redis cannot be reached (%1): the queue as "
                                       u"last read"_s.arg(report.problem));
            return done(stale);
        }
        self->m_fleetReport = report;
        QJsonObject json = self->fleetReportJson(report);
        json.insert(u"problem"_s, QJsonValue());
        done(json);
    });
}

void ResponsesService::retryDeadLetter(const QByteArray &id,
                                       std::function<void(std::optional<protocol::ApiError>)> done)
{
    if (!m_fleet)
        return done(notADeadLetter(id));
    m_fleet->retryDeadLetter(id, [self = QPointer<ResponsesService>(this), id,
                                  done = std::move(done)](FleetResponses::Answer answer) {
        if (!self)
            return;
        if (answer.outcome == FleetResponses::Outcome::Unreachable)
            return done(storeUnavailable(answer.problem));
        if (answer.outcome == FleetResponses::Outcome::Refused)
            return done(notADeadLetter(id));
        qCInfo(lcBackground).noquote()
            << u"background: %1 taken from the dead letters and queued again"_s.arg(
                   QString::fromLatin1(id));
        self->pumpFleet();
        done(std::nullopt);
    });
}

void ResponsesService::discardDeadLetter(
    const QByteArray &id, std::function<void(std::optional<protocol::ApiError>)> done)
{
    if (!m_fleet)
        return done(notADeadLetter(id));
    m_fleet->discardDeadLetter(id, [self = QPointer<ResponsesService>(this), id,
                                    done = std::move(done)](FleetResponses::Answer answer) {
        if (!self)
            return;
        if (answer.outcome == FleetResponses::Outcome::Unreachable)
            return done(storeUnavailable(answer.problem));
        if (answer.outcome == FleetResponses::Outcome::Refused)
            return done(notADeadLetter(id));
        done(std::nullopt);
    });
}

} // namespace switchyard::http
