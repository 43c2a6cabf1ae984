#include "http/responses_service.h"

#include "config/config_store.h"
#include "http/responses_json.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QTimer>
#include <limits>

Q_LOGGING_CATEGORY(lcBackground, "switchyard.background")

namespace switchyard::http {

using namespace Qt::StringLiterals;
using responses::LoggedEvent;
using responses::Priority;
using responses::Status;
using responses::StoredResponse;
using namespace responses_json;

namespace {

// An item id like the Responses API's own: a prefix and 128 random bits.
QString newItemId(QLatin1StringView prefix)
{
    quint64 words[2];
    QRandomGenerator::global()->fillRange(words);
    return prefix + QString::number(words[0], 16).rightJustified(16, u'0') +
           QString::number(words[1], 16).rightJustified(16, u'0');
}

// A request's `input` as the items input_items lists and a later turn replays: a string is one
// user message, a message's string content one text part, and every item gets an id.
QJsonArray inputItemsOf(const QJsonValue &input)
{
    QJsonArray items;
    if (input.isString()) {
        items.append(QJsonObject{{u"id"_s, newItemId("msg_"_L1)},
                                 {u"type"_s, u"message"_s},
                                 {u"role"_s, u"user"_s},
                                 {u"status"_s, u"completed"_s},
                                 {u"content"_s, QJsonArray{QJsonObject{{u"type"_s, u"input_text"_s},
                                                                       {u"text"_s, input}}}}});
        return items;
    }
    for (const QJsonValue &value : input.toArray()) {
        QJsonObject item = value.toObject();
        if (!item.contains(u"type"_s))
            item.insert(u"type"_s, u"message"_s);
        const QString type = item.value(u"type"_s).toString();
        if (type == u"message"_s && item.value(u"content"_s).isString()) {
            const bool assistant = item.value(u"role"_s).toString() == u"assistant"_s;
            item.insert(
                u"content"_s,
                QJsonArray{QJsonObject{{u"type"_s, assistant ? u"output_text"_s : u"input_text"_s},
                                       {u"text"_s, item.value(u"content"_s)}}});
        }
        if (!item.contains(u"id"_s))
            item.insert(u"id"_s, newItemId(type == u"function_call_output"_s ? "fco_"_L1
                                           : type == u"function_call"_s      ? "fc_"_L1
                                                                             : "msg_"_L1));
        items.append(item);
    }
    return items;
}

// The headers a stored request keeps for its run: what routing, tracing and the ledger read,
// never a credential.
QByteArray keptHeaders(const HeaderList &headers)
{
    QJsonObject kept;
    for (const auto &[name, value] : headers) {
        const QByteArray lower = name.toLower();
        const bool credential = lower.contains("key") || lower.contains("authorization") ||
                                lower.contains("cookie") || lower.contains("token");
        if (credential || lower == "content-length" || lower == "host" ||
            lower == "idempotency-key" || lower == "connection")
            continue;
        kept.insert(QString::fromLatin1(lower), QString::fromUtf8(value));
    }
    return compact(kept);
}

} // namespace

QString responseOwner(const QString &keyId, const QString &tenant)
{
    return keyId.isEmpty() ? u"tenant:"_s + tenant : u"key:"_s + keyId;
}

std::variant<KeepRequest, protocol::ApiError> readKeepRequest(const QByteArray &body,
                                                              const config::ResponsesConfig &config)
{
    KeepRequest keep;
    keep.body = body;
    keep.store = config.storeByDefault;
    QJsonObject request = QJsonDocument::fromJson(body).object();
    if (request.isEmpty())
        return keep; // the ingress names what is wrong with it
    keep.stream = request.value(u"stream"_s).toBool();
    const QJsonValue store = request.value(u"store"_s);
    const QJsonValue background = request.value(u"background"_s);
    const QJsonValue previous = request.value(u"previous_response_id"_s);
    if (!store.isUndefined() && !store.isNull() && !store.isBool())
        return protocol::wrongJsonType(u"store"_s, u"a boolean"_s, store);
    if (!background.isUndefined() && !background.isNull() && !background.isBool())
        return protocol::wrongJsonType(u"background"_s, u"a boolean"_s, background);
    if (!previous.isUndefined() && !previous.isNull() && !previous.isString())
        return protocol::wrongJsonType(u"previous_response_id"_s, u"a string"_s, previous);
    if (store.isBool())
        keep.store = store.toBool();
    keep.background = background.toBool();
    if (keep.background && store.isBool() && !store.toBool()) {
        return protocol::ApiError::invalidRequest(
            u"Background mode keeps the response until it is retrieved: it needs `store` to be "
            u"true or left out."_s,
            u"store"_s);
    }
    keep.store = keep.store || keep.background;
    keep.previousResponseId = previous.toString().toUtf8();
    if (store.isUndefined() && background.isUndefined() && previous.isUndefined())
        return keep;
    request.remove(u"store"_s);
    request.remove(u"background"_s);
    request.remove(u"previous_response_id"_s);
    keep.body = compact(request);
    return keep;
}

// ---- the channel a background task answers through ----------------------------------------------

// The client side of a background run: nobody is connected; the answer becomes Responses events
// in the task's log, numbered after every event it logged before.
class BackgroundChannel final : public QObject, public execution::ClientChannel {
public:
    BackgroundChannel(ResponsesService *service, const StoredResponse &task)
        : m_service(service), m_id(task.id), m_createdAtSecs(task.createdAtMs / 1000),
          m_nextSequenceNumber(task.nextSequenceNumber()), m_writer(echoOf(task.response), task.id),
          m_echo(echoOf(task.response))
    {}

    // The run is over for the service (cancelled, timed out): the execution is told the client
    // left, and nothing it sends after counts.
    void stop()
    {
        if (m_stopped || m_finished)
            return; // an execution that reported its end is ending already
        m_stopped = true;
        if (m_listener)
            m_listener->onClientGone();
    }

    void setListener(execution::ClientListener *listener) override { m_listener = listener; }
    bool connected() const override { return !m_stopped; }
    bool answerStarted() const override { return m_begun; }
    qint64 pendingBytes() const override { return 0; }

    void sendAnswer(int status, const HeaderList &, const QByteArray &openAiJson,
                    execution::Dialect) override
    {
        Q_UNUSED(status);
        auto translated = ingress::responseFromCompletion(openAiJson, m_echo, m_id);
        if (const auto *error = std::get_if<protocol::ApiError>(&translated))
            return sendError(*error, {});
        QJsonObject response = objectOf(std::get<QByteArray>(translated));
        response.insert(u"created_at"_s, m_createdAtSecs);
        const bool incomplete = response.value(u"status"_s).toString() == u"incomplete"_s;
        finish(incomplete ? Status::Incomplete : Status::Completed, response,
               {loggedEvent(incomplete ? u"response.incomplete"_s : u"response.completed"_s,
                            {{u"response"_s, response}}, m_nextSequenceNumber++)});
    }
    void sendError(const protocol::ApiError &error, const HeaderList &) override
    {
        QJsonObject response = m_echo;
        response.insert(u"id"_s, QString::fromLatin1(m_id));
        response.insert(u"object"_s, u"response"_s);
        response.insert(u"created_at"_s, m_createdAtSecs);
        response.insert(u"status"_s, u"failed"_s);
        response.insert(u"output"_s, QJsonArray());
        response.insert(u"error"_s,
                        QJsonObject{{u"code"_s, error.code.isEmpty() ? error.type : error.code},
                                    {u"message"_s, error.message}});
        finish(Status::Failed, response,
               {loggedEvent(u"response.failed"_s, {{u"response"_s, response}},
                            m_nextSequenceNumber++)},
               error.status);
    }
    void beginStream(const HeaderList &, execution::Dialect) override { m_begun = true; }
    void sendStreamEvents(const QList<upstream::SseEvent> &events, bool) override
    {
        QList<LoggedEvent> logged;
        for (const upstream::SseEvent &event : events)
            renumber(m_writer.feed(event), logged);
        if (!m_stopped && m_service && !logged.isEmpty())
            m_service->taskEvents(m_id, std::move(logged));
    }
    void failStream(const protocol::ApiError &error) override
    {
        QList<LoggedEvent> logged;
        renumber(m_writer.fail(error), logged);
        // A stream that failed before its first event has no response object yet: the failure
        // still needs its error, for the client and for the queue deciding on another run.
        QJsonObject response = lastResponse(logged);
        if (!response.value(u"error"_s).isObject()) {
            if (response.isEmpty()) {
                response = m_echo;
                response.insert(u"id"_s, QString::fromLatin1(m_id));
                response.insert(u"object"_s, u"response"_s);
                response.insert(u"created_at"_s, m_createdAtSecs);
                response.insert(u"output"_s, QJsonArray());
            }
            response.insert(u"status"_s, u"failed"_s);
            response.insert(u"error"_s,
                            QJsonObject{{u"code"_s, error.code.isEmpty() ? error.type : error.code},
                                        {u"message"_s, error.message}});
        }
        finish(Status::Failed, response, std::move(logged), error.status);
    }
    void endStream() override
    {
        // The final response object is in the last event: response.completed or .incomplete.
        QList<LoggedEvent> none;
        // The translator may have failed the stream itself (a provider interleaving parallel
        // tool calls): its last event says so. A stream that ended without a terminal event
        // did not complete.
        const Status status = m_lastType == "response.completed"    ? Status::Completed
                              : m_lastType == "response.incomplete" ? Status::Incomplete
                                                                    : Status::Failed;
        finish(status, m_lastResponse, std::move(none));
    }
    void abort() override { stop(); }

private:
    static QJsonObject echoOf(const QByteArray &queuedResponse)
    {
        QJsonObject echo = objectOf(queuedResponse);
        for (const QString &key : {u"id"_s, u"object"_s, u"created_at"_s, u"status"_s, u"output"_s,
                                   u"usage"_s, u"error"_s, u"incomplete_details"_s})
            echo.remove(key);
        return echo;
    }

    // The writer's events, numbered in the task's log. Its response.created is left out: the
    // log began with one when the task was accepted.
    void renumber(const QList<upstream::SseEvent> &events, QList<LoggedEvent> &logged)
    {
        for (const upstream::SseEvent &event : events) {
            if (event.event == "response.created")
                continue;
            QJsonObject data = objectOf(event.data);
            if (data.contains(u"response"_s)) {
                QJsonObject response = data.value(u"response"_s).toObject();
                response.insert(u"created_at"_s, m_createdAtSecs);
                data.insert(u"response"_s, response);
                m_lastResponse = response;
            }
            m_lastType = event.event;
            logged.append(loggedEvent(QString::fromUtf8(event.event), std::move(data),
                                      m_nextSequenceNumber++));
        }
    }
    QJsonObject lastResponse(const QList<LoggedEvent> &) const { return m_lastResponse; }

    void finish(Status status, const QJsonObject &response, QList<LoggedEvent> events,
                int errorStatus = 0)
    {
        if (m_stopped || m_finished || !m_service)
            return;
        m_finished = true;
        m_service->taskFinished(m_id, status, compact(response), std::move(events), errorStatus);
    }

    QPointer<ResponsesService> m_service;
    QByteArray m_id;
    qint64 m_createdAtSecs = 0;
    qint64 m_nextSequenceNumber = 0;
    ingress::ResponsesStreamWriter m_writer;
    QJsonObject m_echo;
    QJsonObject m_lastResponse;
    QByteArray m_lastType;
    execution::ClientListener *m_listener = nullptr;
    bool m_begun = false;
    bool m_stopped = false;
    bool m_finished = false;
};

// ---- the service
// ----------------------------------------------------------------------------------

void ResponsesService::stopRun(Running &running)
{
    if (running.channel)
        running.channel->stop(); // the execution ends as if its client had left
}

ResponsesService::ResponsesService(responses::ResponseStore &store,
                                   const config::ConfigStore &config, const timing::Clock &clock,
                                   QObject *parent)
    : QObject(parent), m_store(store), m_config(config), m_clock(clock)
{
    m_store.onRemoved = [this](const QByteArray &id) { forget(id); };
}

ResponsesService::~ResponsesService()
{
    m_store.onRemoved = nullptr;
    // Running executions belong to the server, which ends them; their channels must not call
    // back into a service that is gone (QPointer).
    for (const std::shared_ptr<Running> &running : std::as_const(m_running)) {
        if (running->channel)
            running->channel->stop();
    }
}

void ResponsesService::setRunner(Runner runner, TraceFactory traceForRestart,
                                 TraceFinisher finishUnrun)
{
    m_runner = std::move(runner);
    m_traceForRestart = std::move(traceForRestart);
    m_finishUnrun = std::move(finishUnrun);
}

void ResponsesService::recover()
{
    if (m_fleet)
        return; // the fleet's tasks are in Redis: a take finds them, this node's own included
    int requeued = 0;
    QList<QByteArray> unfinished;
    for (const StoredResponse &record : m_store.all()) {
        if (record.background && !responses::isFinished(record.status))
            unfinished.append(record.id);
    }
    for (const QByteArray &id : unfinished) {
        StoredResponse &record = *m_store.find(id);
        m_durableThrough.insert(record.id, record.nextSequenceNumber() - 1);
        ++m_activeByTenant[record.tenant];
        if (record.status == Status::InProgress) {
            // Its run ended with the process: it waits for a worker again.
            record.status = Status::Queued;
            record.response = compact(withStatus(record.response, Status::Queued));
            m_store.update(record);
        }
        enqueue(record);
        ++requeued;
    }
    if (requeued > 0)
        qCInfo(lcBackground).noquote()
            << u"background: %1 task(s) left queued or running by the last run are queued again"_s
                   .arg(requeued);
    pump();
}

StoredResponse *ResponsesService::ownedBy(const QByteArray &id, const QString &owner)
{
    StoredResponse *record = m_store.find(id);
    // Another owner's response is reported as missing: its existence is not theirs to learn.
    return record && record->owner == owner ? record : nullptr;
}

std::variant<QByteArray, protocol::ApiError, std::monostate>
ResponsesService::withConversation(const QByteArray &body, const QByteArray &previousId,
                                   const QString &owner, QByteArray *history)
{
    const StoredResponse *previous = ownedBy(previousId, owner);
    if (!previous)
        return std::monostate{};
    if (previous->status != Status::Completed && previous->status != Status::Incomplete) {
        return protocol::ApiError::invalidRequest(
            u"Previous response with id '%1' is %2: only a completed or incomplete response can "
            u"be continued."_s.arg(QString::fromUtf8(previousId),
                                   responses::statusName(previous->status)),
            u"previous_response_id"_s);
    }
    QJsonArray conversation = arrayOf(previous->history);
    for (const QJsonValue &item : arrayOf(previous->inputItems))
        conversation.append(item);
    for (const QJsonValue &item : objectOf(previous->response).value(u"output"_s).toArray())
        conversation.append(item);
    *history = compact(conversation);
    QJsonObject request = objectOf(body);
    QJsonArray input = conversation;
    const QJsonValue given = request.value(u"input"_s);
    if (given.isString())
        input.append(QJsonObject{{u"role"_s, u"user"_s}, {u"content"_s, given}});
    else
        for (const QJsonValue &item : given.toArray())
            input.append(item);
    request.insert(u"input"_s, input);
    return compact(request);
}

std::optional<protocol::ApiError> ResponsesService::admitTask(const QString &tenant) const
{
    if (m_fleet) {
        // The tenant's bound is counted in Redis, when the task is queued there.
        if (m_fleet->reachable())
            return std::nullopt;
        return queueUnavailable(m_fleet->problem());
    }
    const int limit = m_config.config().responses.maxQueuedPerTenant;
    if (m_activeByTenant.value(tenant) < limit)
        return std::nullopt;
    protocol::ApiError error;
    error.status = 429;
    error.type = u"rate_limit_error"_s;
    error.code = u"queue_full"_s;
    error.message =
        u"Tenant '%1' already has %2 background task(s) queued or running, the most "
        u"`responses.queue.max_queued_per_tenant` allows; retry when some finish."_s.arg(tenant)
            .arg(limit);
    error.retryAfter = "5";
    return error;
}

StoredResponse ResponsesService::newRecord(const KeepRequest &keep, const QString &owner,
                                           const QString &tenant, const QString &keyId,
                                           const QString &model, Priority priority,
                                           const QByteArray &history, const QJsonObject &echo,
                                           const HeaderList &requestHeaders) const
{
    const config::ResponsesConfig &config = m_config.config().responses;
    StoredResponse record;
    record.id = responses::ResponseStore::newId();
    record.owner = owner;
    record.tenant = tenant;
    record.keyId = keyId;
    record.model = model;
    record.background = keep.background;
    record.priority = priority;
    record.status = keep.background ? Status::Queued : Status::Completed;
    record.createdAtMs = m_clock.msSinceEpoch();
    record.expiresAtMs = record.createdAtMs + config.retention.count();
    record.previousResponseId = keep.previousResponseId;
    record.history = history.isEmpty() ? QByteArray("[]") : history;
    record.inputItems = compact(inputItemsOf(objectOf(keep.body).value(u"input"_s)));
    record.headers = keptHeaders(requestHeaders);
    if (keep.background) {
        // What a worker runs: the whole conversation, streamed so that every event is logged.
        QJsonObject request = objectOf(keep.body);
        if (!history.isEmpty()) {
            QJsonArray input = arrayOf(history);
            for (const QJsonValue &item : arrayOf(record.inputItems))
                input.append(item);
            request.insert(u"input"_s, input);
        }
        request.insert(u"stream"_s, true);
        record.request = compact(request);
        QJsonObject queued = echo;
        queued.insert(u"id"_s, QString::fromLatin1(record.id));
        queued.insert(u"object"_s, u"response"_s);
        queued.insert(u"created_at"_s, record.createdAtMs / 1000);
        queued.insert(u"status"_s, u"queued"_s);
        queued.insert(u"background"_s, true);
        queued.insert(u"store"_s, true);
        queued.insert(u"previous_response_id"_s,
                      keep.previousResponseId.isEmpty()
                          ? QJsonValue()
                          : QJsonValue(QString::fromUtf8(keep.previousResponseId)));
        queued.insert(u"output"_s, QJsonArray());
        queued.insert(u"usage"_s, QJsonValue());
        queued.insert(u"error"_s, QJsonValue());
        queued.insert(u"incomplete_details"_s, QJsonValue());
        record.response = compact(queued);
    }
    return record;
}

void ResponsesService::acceptBackground(StoredResponse task, ResponseWriter writer,
                                        HeaderList headers, telemetry::TraceBuilder trace,
                                        bool stream)
{
    const QJsonObject queued = objectOf(task.response);
    task.events = {loggedEvent(u"response.created"_s, {{u"response"_s, queued}}, 0),
                   loggedEvent(u"response.queued"_s, {{u"response"_s, queued}}, 1)};
    if (m_fleet)
        return acceptInFleet(std::move(task), std::move(writer), std::move(headers),
                             std::move(trace), stream);
    const QByteArray id = task.id;
    m_durableThrough.insert(id, -1); // nothing a follower may read before the first commit
    // A wait, like a backoff: the time the gateway itself adds to an answer leaves it out.
    const int span = trace.openSpan(u"queued"_s, responses::priorityName(task.priority),
                                    telemetry::SpanKind::Wait);
    m_waitingTraces.insert_or_assign(id, std::make_pair(std::move(trace), span));
    ++m_activeByTenant[task.tenant];
    m_store.put(std::move(task));
    // The client hears `queued` only once the task is on disk: a crash after this loses nothing.
    auto pending = std::make_shared<ResponseWriter>(std::move(writer));
    m_store.afterWrite([this, self = QPointer<ResponsesService>(this), id, pending,
                        headers = std::move(headers), stream]() mutable {
        if (!self)
            return;
        StoredResponse *record = m_store.find(id);
        if (!record)
            return;
        m_durableThrough.insert(id, std::max(m_durableThrough.value(id, -1), qint64(1)));
        if (stream)
            follow(*record, std::move(*pending), std::move(headers), -1);
        else
            pending->sendWhole(200, headers, "application/json", record->response);
        if (record->status == Status::Queued) {
            enqueue(*record);
            pump();
        }
        emit queueChanged();
    });
}

void ResponsesService::keepAnswered(StoredResponse record, const QByteArray &responseJson)
{
    const QJsonObject response = objectOf(responseJson);
    const std::optional<Status> status =
        responses::statusFromName(response.value(u"status"_s).toString());
    // Only an answer can be continued: a failed request is not kept.
    if (!status || (*status != Status::Completed && *status != Status::Incomplete))
        return;
    record.status = *status;
    record.response = responseJson;
    record.finishedAtMs = m_clock.msSinceEpoch();
    if (m_fleet) {
        // Kept where every node can continue it; while Redis is unreachable, in this node's
        // memory only (docs/fleet.md says so).
        const config::ResponsesConfig &config = m_config.config().responses;
        m_fleet->keep(record, config.retention.count(), config.maxStoredBytes,
                      [self = QPointer<ResponsesService>(this),
                       id = record.id](responses::FleetResponses::Answer answer) {
                          // Redis never had it: the fleet's "no such response" must not remove
                          // this node's copy once the link is back.
                          if (self && answer.outcome != responses::FleetResponses::Outcome::Done)
                              self->m_localOnly.insert(id);
                      });
    }
    m_store.put(std::move(record));
}

void ResponsesService::enqueue(const StoredResponse &task)
{
    m_queued.insert({int(task.priority), task.createdAtMs, task.id});
}

void ResponsesService::pump()
{
    if (m_fleet)
        return pumpFleet();
    const int workers = m_config.config().responses.workers;
    while (m_starting && m_runner && !m_queued.empty() && m_running.size() < workers) {
        const QByteArray id = std::get<2>(*m_queued.begin());
        m_queued.erase(m_queued.begin());
        start(id);
    }
}

void ResponsesService::start(const QByteArray &id, std::optional<responses::FleetTask> fleetTask)
{
    StoredResponse *record = m_store.find(id);
    if (!record || responses::isFinished(record->status))
        return;
    record->status = Status::InProgress;
    record->startedAtMs = m_clock.msSinceEpoch();
    if (!fleetTask)
        ++record->runs; // a fleet's take counted it in Redis
    record->response = compact(withStatus(record->response, Status::InProgress));
    m_store.update(*record);

    telemetry::TraceBuilder trace = [&] {
        const auto waiting = m_waitingTraces.find(id);
        if (waiting == m_waitingTraces.end()) {
            telemetry::TraceBuilder fresh = m_traceForRestart(*record);
            fresh.pointEvent(u"background run"_s,
                             u"run %1 of %2, queued %3 ms before"_s.arg(record->runs)
                                 .arg(QString::fromLatin1(id))
                                 .arg(record->startedAtMs - record->createdAtMs));
            if (fleetTask && fleetTask->takenOver)
                fresh.pointEvent(u"background run"_s,
                                 u"taken over from node %1, which stopped renewing it"_s.arg(
                                     fleetTask->lastNode));
            return fresh;
        }
        auto [builder, span] = std::move(waiting->second);
        m_waitingTraces.erase(waiting);
        builder.closeSpan(span, u"waited %1 ms"_s.arg(record->startedAtMs - record->createdAtMs));
        builder.trace().queuedMicros = builder.elapsedMicros();
        return std::move(builder);
    }();

    auto running = std::make_shared<Running>();
    running->fleet = std::move(fleetTask);
    running->intent = objectOf(record->headers).contains(u"x-switchyard-intent"_s);
    auto channel = std::make_unique<BackgroundChannel>(this, *record);
    running->channel = channel.get();
    running->timeLimit = std::make_unique<QTimer>();
    running->timeLimit->setSingleShot(true);
    connect(running->timeLimit.get(), &QTimer::timeout, this, [this, id] {
        StoredResponse *task = m_store.find(id);
        const auto found = m_running.constFind(id);
        if (!task || found == m_running.constEnd())
            return;
        ++m_timedOut;
        const QString limit =
            QString::number(m_config.config().responses.taskTimeout.count() / 1000);
        QJsonObject response = withStatus(task->response, Status::Failed);
        response.insert(u"error"_s,
                        QJsonObject{{u"code"_s, u"task_timed_out"_s},
                                    {u"message"_s, u"The background task ran longer than its "
                                                   u"limit (`responses.queue.task_timeout`, %1 s) "
                                                   u"and was stopped."_s.arg(limit)}});
        const LoggedEvent failedEvent = loggedEvent(
            u"response.failed"_s, {{u"response"_s, response}}, task->nextSequenceNumber());
        const std::shared_ptr<Running> timedOut = *found;
        if (timedOut->channel)
            timedOut->channel->stop(); // `task` is not read after this
        taskFinished(id, Status::Failed, compact(response), {failedEvent});
    });
    running->timeLimit->start(m_config.config().responses.taskTimeout);
    m_running.insert(id, running);
    emit queueChanged();
    m_runner(*record, std::move(trace), std::move(channel));
}

void ResponsesService::taskEvents(const QByteArray &id, QList<LoggedEvent> events)
{
    StoredResponse *record = m_store.find(id);
    if (!record)
        return;
    const qint64 last = events.constLast().sequenceNumber;
    // In a fleet the log is Redis's: a follower on any node reads it there.
    if (const std::shared_ptr<Running> running = m_running.value(id); running && running->fleet)
        writeToFleet(id, *running->fleet, events);
    m_store.appendEvents(*record, std::move(events));
    // A client sees an event only once it is on disk: a run after a restart then numbers its
    // events after it, and never reuses a number a client has read.
    m_store.afterWrite([self = QPointer<ResponsesService>(this), id, last] {
        if (!self)
            return;
        self->m_durableThrough.insert(id, std::max(self->m_durableThrough.value(id, -1), last));
        self->deliver(id);
    });
}

void ResponsesService::taskFinished(const QByteArray &id, Status status, QByteArray responseJson,
                                    QList<LoggedEvent> lastEvents, int errorStatus)
{
    const bool worthAnotherRun = errorStatus == 429 || errorStatus >= 500;
    if (const std::shared_ptr<Running> running = m_running.value(id);
        running && running->intent && !running->fleet && worthAnotherRun &&
        status == Status::Failed) {
        // An agent that vanished or failed: the task waits for one (on a fleet, the queue's
        // delivery limit decides instead).
        const QJsonObject error = objectOf(responseJson).value(u"error"_s).toObject();
        return awaitAgent(id, error.value(u"message"_s).toString());
    }
    const std::shared_ptr<Running> running = m_running.take(id);
    StoredResponse *record = m_store.find(id);
    if (!record || responses::isFinished(record->status))
        return; // deleted or cancelled meanwhile: already settled
    if (running && running->channel)
        running->channel->stop();
    record->status = status;
    record->finishedAtMs = m_clock.msSinceEpoch();
    QJsonObject response = objectOf(responseJson);
    if (response.isEmpty())
        response = withStatus(record->response, status);
    response.insert(u"status"_s, responses::statusName(status));
    response.insert(u"background"_s, true);
    record->response = compact(response);
    // The retention counts from the end of the work, not from when it was queued.
    record->expiresAtMs = record->finishedAtMs + m_config.config().responses.retention.count();
    // In a fleet the run ends in Redis: finished, queued again, or dead-lettered.
    const bool inFleet = running && settleFleet(*running, *record, lastEvents, errorStatus);
    const qint64 last = lastEvents.isEmpty() ? record->nextSequenceNumber() - 1
                                             : lastEvents.constLast().sequenceNumber;
    m_store.appendEvents(*record, std::move(lastEvents));
    if (inFleet && !responses::isFinished(record->status)) {
        // Queued again for another run: not an outcome yet.
        m_store.update(*record);
        emit queueChanged();
        QMetaObject::invokeMethod(
            this, [this] { pump(); }, Qt::QueuedConnection);
        return;
    }
    m_store.update(*record);
    ++m_outcomes[int(status)];
    if (--m_activeByTenant[record->tenant] <= 0)
        m_activeByTenant.remove(record->tenant);
    m_store.afterWrite([self = QPointer<ResponsesService>(this), id, last] {
        if (!self)
            return;
        self->m_durableThrough.insert(id, std::max(self->m_durableThrough.value(id, -1), last));
        self->deliver(id);
    });
    emit queueChanged();
    // The next task starts from a fresh stack, not from inside the execution that just ended.
    QMetaObject::invokeMethod(
        this, [this] { pump(); }, Qt::QueuedConnection);
}

void ResponsesService::awaitAgent(const QByteArray &id, const QString &reason)
{
    const std::shared_ptr<Running> running = m_running.value(id);
    StoredResponse *record = m_store.find(id);
    if (!running || !record || responses::isFinished(record->status))
        return;
    const config::ResponsesConfig &config = m_config.config().responses;
    const qint64 now = m_clock.msSinceEpoch();
    if (now - record->createdAtMs >= config.taskTimeout.count()) {
        QJsonObject response = withStatus(record->response, Status::Failed);
        response.insert(
            u"error"_s,
            QJsonObject{
                {u"code"_s, u"no_agent_available"_s},
                {u"message"_s, u"No agent for the task's intent could take it within its "
                               u"time limit (`responses.queue.task_timeout`, %1 s, from "
                               u"when it was queued): %2"_s.arg(config.taskTimeout.count() / 1000)
                                   .arg(reason)}});
        const LoggedEvent failed = loggedEvent(u"response.failed"_s, {{u"response"_s, response}},
                                               record->nextSequenceNumber());
        if (running->channel)
            running->channel->stop();
        return taskFinished(id, Status::Failed, compact(response), {failed});
    }
    // Not a run: it found nothing to run on. It waits, queued, and is tried again in a second.
    m_running.remove(id);
    if (running->channel)
        running->channel->stop();
    record->status = Status::Queued;
    record->runs = std::max(0, record->runs - 1);
    record->response = compact(withStatus(record->response, Status::Queued));
    m_store.update(*record);
    constexpr std::chrono::milliseconds kAgentWait{1000};
    if (running->fleet) {
        // After the run's own writes (its `in_progress`), as the end of any fleet run.
        FleetWrites &writes = m_fleetWrites[id];
        writes.task = *running->fleet;
        writes.end = [fleet = m_fleet, task = *running->fleet, record = *record,
                      visibility = config.visibilityTimeout,
                      lastError = u"waiting for an agent: "_s +
                                  reason](responses::FleetResponses::Held done) {
            fleet->requeue(task, record, {}, kAgentWait, visibility, false, lastError,
                           std::move(done));
        };
        flushFleetWrites(id);
    } else {
        QTimer::singleShot(kAgentWait, this, [this, id] {
            if (const StoredResponse *waiting = m_store.peek(id);
                waiting && waiting->status == Status::Queued) {
                enqueue(*waiting);
                pump();
            }
        });
    }
    emit queueChanged();
    QMetaObject::invokeMethod(
        this, [this] { pump(); }, Qt::QueuedConnection);
}

void ResponsesService::deliver(QByteArray id)
{
    // Read without expiring: an expiry here would forget the followers being served.
    const StoredResponse *record = m_store.peek(id);
    const auto found = m_followers.find(id);
    if (found == m_followers.end())
        return;
    // What an earlier process left is on disk whole; a task of this process is durable as far as
    // its last committed write.
    const qint64 durable =
        m_durableThrough.value(id, record ? record->nextSequenceNumber() - 1 : -1);
    std::vector<std::unique_ptr<Follower>> &followers = found->second;
    for (auto it = followers.begin(); it != followers.end();) {
        Follower &follower = **it;
        if (!follower.writer.clientConnected()) {
            it = followers.erase(it);
            continue;
        }
        QByteArray wire;
        if (record) {
            for (const LoggedEvent &event : record->events) {
                if (event.sequenceNumber > follower.lastSent && event.sequenceNumber <= durable) {
                    wire += wireOf(event);
                    follower.lastSent = event.sequenceNumber;
                }
            }
        }
        if (!wire.isEmpty())
            follower.writer.writeStreamData(wire);
        const bool over = !record || (responses::isFinished(record->status) &&
                                      follower.lastSent >= record->nextSequenceNumber() - 1);
        if (over) {
            follower.writer.endEventStream();
            it = followers.erase(it);
            continue;
        }
        ++it;
    }
    if (followers.empty())
        m_followers.erase(found);
}

void ResponsesService::follow(const StoredResponse &record, ResponseWriter writer,
                              HeaderList headers, qint64 after)
{
    if (m_fleet)
        return followFleet(record.id, std::move(writer), std::move(headers), after);
    writer.beginEventStream(headers);
    auto follower = std::make_unique<Follower>(std::move(writer));
    follower->lastSent = after;
    const QByteArray id = record.id; // a copy: delivering may drop the record
    m_followers[id].push_back(std::move(follower));
    deliver(id);
}

void ResponsesService::forget(const QByteArray &id)
{
    m_durableThrough.remove(id);
    m_localOnly.remove(id);
    m_waitingTraces.erase(id);
    for (auto it = m_queued.begin(); it != m_queued.end();) {
        if (std::get<2>(*it) == id)
            it = m_queued.erase(it);
        else
            ++it;
    }
    if (const std::shared_ptr<Running> running = m_running.take(id); running && running->channel)
        running->channel->stop();
    const auto followers = m_followers.find(id);
    if (followers != m_followers.end()) {
        for (std::unique_ptr<Follower> &follower : followers->second)
            follower->writer.endEventStream();
        m_followers.erase(followers);
    }
}

void ResponsesService::cancel(StoredResponse &record)
{
    const QByteArray id = record.id;
    if (responses::isFinished(record.status))
        return;
    if (record.status == Status::Queued) {
        for (auto it = m_queued.begin(); it != m_queued.end(); ++it) {
            if (std::get<2>(*it) == id) {
                m_queued.erase(it);
                break;
            }
        }
        // A task that never ran: its trace ends here, with the wait it had.
        if (const auto waiting = m_waitingTraces.find(id); waiting != m_waitingTraces.end()) {
            auto [trace, span] = std::move(waiting->second);
            m_waitingTraces.erase(waiting);
            trace.closeSpan(span, u"cancelled while queued"_s);
            trace.trace().queuedMicros = trace.elapsedMicros();
            if (m_finishUnrun)
                m_finishUnrun(std::move(trace), 499, u"cancelled"_s);
        }
    }
    // Copied first: stopping the execution runs its end, and `record` must not be read after.
    const QByteArray cancelled = compact(withStatus(record.response, Status::Cancelled));
    const std::shared_ptr<Running> running = m_running.value(id);
    if (running && running->channel)
        running->channel->stop(); // the execution ends as if its client had left
    taskFinished(id, Status::Cancelled, cancelled, {});
}

protocol::ApiError ResponsesService::taskNotFound(const QString &id)
{
    protocol::ApiError error;
    error.status = 404;
    error.type = u"invalid_request_error"_s;
    error.code = u"task_not_found"_s;
    error.message = u"No queued or running background task has the id '%1'."_s.arg(id);
    return error;
}

void ResponsesService::cancelTask(const QByteArray &id,
                                  std::function<void(std::optional<protocol::ApiError>)> done)
{
    if (!m_fleet)
        return done(cancelTask(id) ? std::nullopt
                                   : std::optional(taskNotFound(QString::fromLatin1(id))));
    const StoredResponse *known = m_store.peek(id);
    const QByteArray cancelled =
        known ? compact(withStatus(known->response, Status::Cancelled)) : QByteArray();
    const auto cancelWith = [this, id, done](const QByteArray &response) {
        m_fleet->cancel(
            id, response, m_config.config().responses.retention.count(),
            [self = QPointer<ResponsesService>(this), id,
             done](responses::FleetResponses::CancelOutcome outcome, Status) {
                using Outcome = responses::FleetResponses::CancelOutcome;
                if (!self)
                    return;
                if (outcome == Outcome::Cancelled) {
                    self->dropRun(id, {}, u"cancelled by an operator"_s);
                    if (StoredResponse *record = self->m_store.peek(id)) {
                        record->status = Status::Cancelled;
                        record->response = compact(withStatus(record->response, Status::Cancelled));
                    }
                    emit self->queueChanged();
                    return done(std::nullopt);
                }
                if (outcome == Outcome::Unreachable) {
                    protocol::ApiError error = protocol::ApiError::serviceUnavailable(
                        u"The fleet's Redis cannot be reached: nothing was cancelled."_s);
                    error.code = u"queue_unavailable"_s;
                    return done(error);
                }
                done(taskNotFound(QString::fromLatin1(id)));
            });
    };
    if (!cancelled.isEmpty())
        return cancelWith(cancelled);
    // The response object is the fleet's: read it to write it back cancelled.
    m_fleet->fetch(id, [self = QPointer<ResponsesService>(this), id, cancelWith,
                        done](responses::FleetResponses::Fetched fetched) {
        if (!self)
            return;
        if (fetched.outcome != responses::FleetResponses::Outcome::Done ||
            !fetched.record.background)
            return done(taskNotFound(QString::fromLatin1(id)));
        cancelWith(compact(withStatus(fetched.record.response, Status::Cancelled)));
    });
}

bool ResponsesService::cancelTask(const QByteArray &id)
{
    StoredResponse *record = m_store.find(id);
    if (!record || !record->background || responses::isFinished(record->status))
        return false;
    cancel(*record);
    return true;
}

void ResponsesService::retrieve(const StoredResponse &record, const QUrlQuery &query,
                                ResponseWriter writer, const HeaderList &identity)
{
    const QString stream = query.queryItemValue(u"stream"_s);
    if (stream != u"true"_s) {
        writer.sendWhole(200, identity, "application/json", record.response);
        return;
    }
    if (!record.background) {
        writer.sendError(protocol::ApiError::invalidRequest(
                             u"Only a background response can be streamed again; this one was "
                             u"answered when it was made."_s,
                             u"stream"_s),
                         identity);
        return;
    }
    qint64 after = -1;
    if (query.hasQueryItem(u"starting_after"_s)) {
        bool ok = false;
        after = query.queryItemValue(u"starting_after"_s).toLongLong(&ok);
        if (!ok || after < 0) {
            writer.sendError(protocol::ApiError::invalidRequest(
                                 u"`starting_after` must be a sequence number (an integer of at "
                                 u"least 0)."_s,
                                 u"starting_after"_s),
                             identity);
            return;
        }
    }
    follow(record, std::move(writer), identity, after);
}

void ResponsesService::handle(const IncomingRequest &request, const QString &rest,
                              ResponseWriter writer, const HeaderList &identity,
                              const QString &owner)
{
    const QByteArray id = rest.section(u'/', 0, 0).toUtf8();
    if (!m_fleet || id.isEmpty() || !m_fleet->reachable())
        return handleHere(request, rest, std::move(writer), identity, owner);
    // The fleet's record is the one to answer from: another node may run, cancel or delete it.
    auto pending = std::make_shared<ResponseWriter>(std::move(writer));
    m_fleet->fetch(id, [self = QPointer<ResponsesService>(this), id, request, rest, pending,
                        identity, owner](responses::FleetResponses::Fetched fetched) mutable {
        if (!self)
            return;
        self->absorb(id, std::move(fetched));
        self->handleHere(request, rest, std::move(*pending), identity, owner);
    });
}

void ResponsesService::handleHere(const IncomingRequest &request, const QString &rest,
                                  ResponseWriter writer, const HeaderList &identity,
                                  const QString &owner)
{
    const QStringList parts = rest.split(u'/');
    const QByteArray id = parts.first().toUtf8();
    const QString action = parts.size() == 2 ? parts.at(1) : QString();
    using Method = QHttpServerRequest::Method;
    const auto notAllowed = [&](const char *allow) {
        HeaderList headers = identity;
        headers.append({QByteArray("Allow"), QByteArray(allow)});
        writer.sendError(
            protocol::ApiError::methodNotAllowed(request.method == Method::Get      ? u"GET"_s
                                                 : request.method == Method::Delete ? u"DELETE"_s
                                                                                    : u"POST"_s,
                                                 request.path),
            headers);
    };
    if (parts.size() > 2 || id.isEmpty() ||
        (parts.size() == 2 && action != u"cancel"_s && action != u"input_items"_s)) {
        writer.sendError(protocol::ApiError::notFound(u"GET"_s, request.path), identity);
        return;
    }
    StoredResponse *record = ownedBy(id, owner);
    if (action == u"cancel"_s) {
        if (request.method != Method::Post)
            return notAllowed("POST");
        if (!record)
            return writer.sendError(responseNotFound(id), identity);
        if (!record->background) {
            return writer.sendError(
                protocol::ApiError::invalidRequest(
                    u"Only a background response can be cancelled."_s, u"response_id"_s),
                identity);
        }
        if (record->status != Status::Cancelled && responses::isFinished(record->status)) {
            return writer.sendError(protocol::ApiError::invalidRequest(
                                        u"Cannot cancel a response that is already %1."_s.arg(
                                            responses::statusName(record->status)),
                                        u"response_id"_s),
                                    identity);
        }
        if (m_fleet)
            return cancelInFleet(id, std::move(writer), identity);
        cancel(*record);
        auto pending = std::make_shared<ResponseWriter>(std::move(writer));
        m_store.afterWrite([self = QPointer<ResponsesService>(this), id, pending, identity] {
            const StoredResponse *done = self ? self->m_store.find(id) : nullptr;
            if (done)
                pending->sendWhole(200, identity, "application/json", done->response);
            else
                pending->sendError(responseNotFound(id), identity);
        });
        return;
    }
    if (action == u"input_items"_s) {
        if (request.method != Method::Get)
            return notAllowed("GET");
        if (!record)
            return writer.sendError(responseNotFound(id), identity);
        const QUrlQuery query(request.query);
        QJsonArray items = arrayOf(record->inputItems);
        const QString order = query.queryItemValue(u"order"_s);
        if (!order.isEmpty() && order != u"asc"_s && order != u"desc"_s)
            return writer.sendError(protocol::ApiError::invalidRequest(
                                        u"`order` must be `asc` or `desc`."_s, u"order"_s),
                                    identity);
        if (order != u"asc"_s) { // the API's default is newest first
            QJsonArray reversed;
            for (qsizetype index = items.size() - 1; index >= 0; --index)
                reversed.append(items.at(index));
            items = reversed;
        }
        qsizetype start = 0;
        if (const QString after = query.queryItemValue(u"after"_s); !after.isEmpty()) {
            for (qsizetype index = 0; index < items.size(); ++index) {
                if (items.at(index).toObject().value(u"id"_s).toString() == after)
                    start = index + 1;
            }
        }
        int limit = 20;
        if (query.hasQueryItem(u"limit"_s)) {
            bool ok = false;
            limit = query.queryItemValue(u"limit"_s).toInt(&ok);
            if (!ok || limit < 1 || limit > 100)
                return writer.sendError(protocol::ApiError::invalidRequest(
                                            u"`limit` must be between 1 and 100."_s, u"limit"_s),
                                        identity);
        }
        QJsonArray page;
        for (qsizetype index = start; index < items.size() && page.size() < limit; ++index)
            page.append(items.at(index));
        const bool more = start + page.size() < items.size();
        writer.sendWhole(200, identity, "application/json",
                         compact(QJsonObject{
                             {u"object"_s, u"list"_s},
                             {u"data"_s, page},
                             {u"first_id"_s, page.isEmpty() ? QJsonValue() : page.first()[u"id"_s]},
                             {u"last_id"_s, page.isEmpty() ? QJsonValue() : page.last()[u"id"_s]},
                             {u"has_more"_s, more}}));
        return;
    }
    if (request.method == Method::Get) {
        if (!record)
            return writer.sendError(responseNotFound(id), identity);
        return retrieve(*record, QUrlQuery(request.query), std::move(writer), identity);
    }
    if (request.method == Method::Delete) {
        if (!record)
            return writer.sendError(responseNotFound(id), identity);
        if (m_fleet)
            return removeInFleet(id, std::move(writer), identity);
        if (record->background && !responses::isFinished(record->status))
            cancel(*record);
        m_store.remove(id);
        auto pending = std::make_shared<ResponseWriter>(std::move(writer));
        m_store.afterWrite([pending, id, identity] {
            pending->sendWhole(200, identity, "application/json",
                               compact(QJsonObject{{u"id"_s, QString::fromUtf8(id)},
                                                   {u"object"_s, u"response"_s},
                                                   {u"deleted"_s, true}}));
        });
        emit queueChanged();
        return;
    }
    notAllowed("GET, DELETE");
}

ResponsesService::QueueCounts ResponsesService::counts() const
{
    QueueCounts counts;
    const qint64 now = m_clock.msSinceEpoch();
    for (const auto &[priority, createdAtMs, id] : m_queued) {
        ++counts.queued[priority];
        counts.oldestQueuedAgeMs = std::max(counts.oldestQueuedAgeMs, now - createdAtMs);
    }
    counts.running = int(m_running.size());
    counts.completed = m_outcomes[int(Status::Completed)];
    counts.incomplete = m_outcomes[int(Status::Incomplete)];
    counts.failed = m_outcomes[int(Status::Failed)];
    counts.cancelled = m_outcomes[int(Status::Cancelled)];
    counts.timedOut = m_timedOut;
    counts.storedBytes = m_store.bytes();
    counts.stored = m_store.count();
    counts.expiredByAge = m_store.expiredByAge();
    counts.expiredByBytes = m_store.expiredByBytes();
    if (m_fleet) {
        counts.fleet = true;
        std::copy(std::begin(m_fleetReport.queued), std::end(m_fleetReport.queued),
                  std::begin(counts.queued));
        counts.oldestQueuedAgeMs = m_fleetReport.oldestQueuedAgeMs;
        counts.deadLetters = m_fleetReport.deadLettered;
        counts.takenOver = m_fleet->takenOver();
        counts.deadLettered = m_fleet->deadLettered();
        counts.expiredByAge = m_fleet->expiredByAge();
        counts.expiredByBytes = m_fleet->expiredByBytes();
    }
    return counts;
}

ResponsesService::TaskList ResponsesService::taskList(int maxTasks, int maxFailures) const
{
    const qint64 now = m_clock.msSinceEpoch();
    const auto describe = [&](const StoredResponse &record) {
        TaskView view;
        view.id = record.id;
        view.tenant = record.tenant;
        view.keyId = record.keyId;
        view.model = record.model;
        view.priority = record.priority;
        view.status = record.status;
        view.createdAtMs = record.createdAtMs;
        view.finishedAtMs = record.finishedAtMs;
        view.waitedMs = (record.startedAtMs ? record.startedAtMs : now) - record.createdAtMs;
        view.runningMs = record.status == Status::InProgress ? now - record.startedAtMs : 0;
        view.runs = record.runs;
        // Only a finished response can carry an error: the others are not parsed, so a console
        // listing a full queue ten times a second reads no JSON.
        if (responses::isFinished(record.status))
            view.error = objectOf(record.response).value(u"error"_s);
        return view;
    };
    TaskList list;
    QList<const StoredResponse *> waiting;
    QList<const StoredResponse *> failed;
    for (const StoredResponse &record : m_store.all()) {
        if (!record.background)
            continue;
        if (record.status == Status::Failed)
            failed.append(&record);
        // In a fleet this node's copy of a task it does not run may be stale: the fleet's queue
        // is summed up from Redis instead (fleetReport()), and only this node's runs are listed.
        else if (!responses::isFinished(record.status) &&
                 (!m_fleet || m_running.contains(record.id)))
            waiting.append(&record);
    }
    // Running first, then queued in the order the workers take them (the store is a hash, in
    // no order): a listing cut at maxTasks keeps the tasks that matter first.
    const auto servingOrder = [](const StoredResponse *record) {
        return std::tuple<bool, int, qint64, const QByteArray &>(
            record->status != Status::InProgress, int(record->priority), record->createdAtMs,
            record->id);
    };
    std::sort(waiting.begin(), waiting.end(),
              [&](const StoredResponse *a, const StoredResponse *b) {
                  return servingOrder(a) < servingOrder(b);
              });
    list.tasksTotal = int(waiting.size());
    for (qsizetype index = 0; index < waiting.size() && index < maxTasks; ++index)
        list.tasks.append(describe(*waiting.at(index)));
    // The most recent failures, newest first: what an operator looks at.
    std::sort(failed.begin(), failed.end(), [](const StoredResponse *a, const StoredResponse *b) {
        return a->finishedAtMs > b->finishedAtMs;
    });
    for (qsizetype index = 0; index < failed.size() && index < maxFailures; ++index)
        list.recentFailures.append(describe(*failed.at(index)));
    return list;
}

QJsonObject ResponsesService::queueReport() const
{
    const QueueCounts totals = counts();
    const TaskList list = taskList(std::numeric_limits<int>::max(), 50);
    QJsonObject byTenant;
    for (const TaskView &task : list.tasks) {
        QJsonObject tenant = byTenant.value(task.tenant).toObject();
        const QString key = task.status == Status::Queued ? u"queued"_s : u"running"_s;
        tenant.insert(key, tenant.value(key).toInt() + 1);
        byTenant.insert(task.tenant, tenant);
    }
    const auto describe = [](const TaskView &task) {
        return QJsonObject{
            {u"id"_s, QString::fromLatin1(task.id)},
            {u"tenant"_s, task.tenant},
            {u"key_id"_s, task.keyId},
            {u"model"_s, task.model},
            {u"priority"_s, responses::priorityName(task.priority)},
            {u"status"_s, responses::statusName(task.status)},
            {u"created_at_ms"_s, task.createdAtMs},
            {u"waited_ms"_s, task.waitedMs},
            {u"running_ms"_s, task.runningMs},
            {u"runs"_s, task.runs},
            {u"error"_s, task.error},
        };
    };
    QJsonArray tasks;
    for (const TaskView &task : list.tasks)
        tasks.append(describe(task));
    QJsonArray recentFailures;
    for (const TaskView &task : list.recentFailures)
        recentFailures.append(describe(task));
    const config::ResponsesConfig &config = m_config.config().responses;
    return {
        {u"workers"_s, config.workers},
        {u"running"_s, totals.running},
        {u"queued"_s, QJsonObject{{u"high"_s, totals.queued[0]},
                                  {u"normal"_s, totals.queued[1]},
                                  {u"low"_s, totals.queued[2]}}},
        {u"oldest_queued_age_ms"_s, totals.oldestQueuedAgeMs},
        {u"max_queued_per_tenant"_s, config.maxQueuedPerTenant},
        {u"by_tenant"_s, byTenant},
        {u"outcomes"_s, QJsonObject{{u"completed"_s, qint64(totals.completed)},
                                    {u"incomplete"_s, qint64(totals.incomplete)},
                                    {u"failed"_s, qint64(totals.failed)},
                                    {u"cancelled"_s, qint64(totals.cancelled)},
                                    {u"timed_out"_s, qint64(totals.timedOut)}}},
        {u"stored"_s, QJsonObject{{u"responses"_s, totals.stored},
                                  {u"bytes"_s, totals.storedBytes},
                                  {u"max_bytes"_s, config.maxStoredBytes},
                                  {u"expired_by_age"_s, qint64(totals.expiredByAge)},
                                  {u"expired_by_bytes"_s, qint64(totals.expiredByBytes)}}},
        {u"tasks"_s, tasks},
        {u"recent_failures"_s, recentFailures},
    };
}

} // namespace switchyard::http
