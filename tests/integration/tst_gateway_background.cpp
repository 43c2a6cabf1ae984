// Background and stored responses through the real server on one node: a background request is
// answered `queued` at once and runs on a chat-only provider; its stream resumes after a
// disconnect from a sequence number with every event once; cancel (queued and running), delete,
// input_items; the queue's priority order, its per-tenant bound and a task's time limit; a
// stored conversation continued with previous_response_id on a chat-only provider, tools
// included; ownership by client key; and the state database: stored responses and a task left
// running survive a restart, and the previous release's file opens and migrates. The provider is
// a FakeUpstream that counts and keeps what it receives.

#include "auth/credentials.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/request_recorder.h"
#include "test_client.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

constexpr QByteArrayView kKeyA = "sk-test-team-a";
constexpr QByteArrayView kKeyB = "sk-test-team-b";

QJsonObject jsonOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object();
}

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QByteArray responsesBody(const QJsonObject &fields)
{
    QJsonObject body{{u"model"_s, u"test-model"_s}, {u"input"_s, u"hello"_s}};
    for (auto it = fields.begin(); it != fields.end(); ++it)
        body.insert(it.key(), it.value());
    return compact(body);
}

std::unique_ptr<TestClient> call(quint16 port, const QByteArray &method, const QByteArray &path,
                                 const QByteArray &body = {}, const HeaderList &headers = {})
{
    auto client = std::make_unique<TestClient>(port);
    HeaderList all = headers;
    if (!body.isEmpty())
        all.append({QByteArray("Content-Type"), QByteArray("application/json")});
    client->send(method, path, body, all);
    client->waitForFinished();
    return client;
}

QJsonObject create(quint16 port, const QJsonObject &fields, const HeaderList &headers = {})
{
    return jsonOf(call(port, "POST", "/v1/responses", responsesBody(fields), headers)->body());
}

QJsonObject retrieve(quint16 port, const QString &id, const HeaderList &headers = {})
{
    return jsonOf(call(port, "GET", "/v1/responses/" + id.toUtf8(), {}, headers)->body());
}

QString statusOf(quint16 port, const QString &id, const HeaderList &headers = {})
{
    return retrieve(port, id, headers).value(u"status"_s).toString();
}

bool waitForStatus(quint16 port, const QString &id, const QString &status,
                   const HeaderList &headers = {})
{
    return QTest::qWaitFor([&] { return statusOf(port, id, headers) == status; }, 10000);
}

QString outputText(const QJsonObject &response)
{
    QString text;
    for (const QJsonValue &item : response.value(u"output"_s).toArray()) {
        for (const QJsonValue &part : item.toObject().value(u"content"_s).toArray())
            text += part.toObject().value(u"text"_s).toString();
    }
    return text;
}

qint64 sequenceOf(const upstream::SseEvent &event)
{
    return jsonOf(event.data).value(u"sequence_number"_s).toInteger(-1);
}

QString textOfInput(const FakeUpstream::ReceivedRequest &request)
{
    const QJsonArray messages = jsonOf(request.body).value(u"messages"_s).toArray();
    return messages.isEmpty() ? QString()
                              : messages.last().toObject().value(u"content"_s).toString();
}

config::Config configFor(const FakeUpstream &fake, const QString &stateDirectory = {})
{
    config::Config config = gatewayConfig({providerFor(u"fake"_s, fake, {u"test-model"_s})});
    config.state.directory = stateDirectory;
    config.resilience.probes.enabled = false;
    return config;
}

HeaderList bearer(QByteArrayView key)
{
    return {{"Authorization", "Bearer " + key.toByteArray()}};
}

} // namespace

class GatewayBackgroundTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        QLoggingCategory::setFilterRules(u"switchyard.*.debug=false\nswitchyard.*.info=false"_s);
    }

    void aBackgroundRequestIsQueuedThenRunOnAChatOnlyProvider()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const QJsonObject queued = create(engine->port(), {{u"background"_s, true}});
        QCOMPARE(queued.value(u"status"_s).toString(), u"queued"_s);
        QCOMPARE(queued.value(u"background"_s).toBool(), true);
        QCOMPARE(queued.value(u"store"_s).toBool(), true);
        const QString id = queued.value(u"id"_s).toString();
        QVERIFY2(QRegularExpression(u"^resp_[0-9a-f]{32}$"_s).match(id).hasMatch(), qPrintable(id));

        QVERIFY(waitForStatus(engine->port(), id, u"completed"_s));
        const QJsonObject done = retrieve(engine->port(), id);
        QCOMPARE(outputText(done), u"t0t1t2"_s);
        QCOMPARE(done.value(u"id"_s).toString(), id);
        // The provider speaks chat only: it was asked for a chat completion, streamed.
        QCOMPARE(fake.requests().size(), 1);
        QVERIFY(fake.requests().first().path.endsWith("/chat/completions"));
        QCOMPARE(jsonOf(fake.requests().first().body).value(u"stream"_s).toBool(), true);

        // The run is a request like any other: in the traces, with its wait as a span.
        QVERIFY(QTest::qWaitFor([&] { return engine->recorder().liveCount() == 0; }, 5000));
        const QJsonObject metrics = jsonOf(call(engine->port(), "GET", "/admin/v1/queue")->body());
        QCOMPARE(metrics.value(u"outcomes"_s).toObject().value(u"completed"_s).toInt(), 1);
        const QByteArray scrape = call(engine->port(), "GET", "/metrics")->body();
        QVERIFY(scrape.contains("switchyard_background_tasks_total{outcome=\"completed\"} 1"));
    }

    void aRetriedCreateWithTheSameIdempotencyKeyGetsTheSameTask()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const HeaderList key{{"Idempotency-Key", "create-once"}};
        const QJsonObject first = create(engine->port(), {{u"background"_s, true}}, key);
        const QJsonObject again = create(engine->port(), {{u"background"_s, true}}, key);
        const QString id = first.value(u"id"_s).toString();
        QVERIFY(!id.isEmpty());
        // The duplicate guard kept the accept: the retry names the same task, queued once.
        QCOMPARE(again.value(u"id"_s).toString(), id);
        QVERIFY(waitForStatus(engine->port(), id, u"completed"_s));
        QCOMPARE(fake.requests().size(), 1);
    }

    void aStreamResumesAfterADisconnectWithEveryEventOnce()
    {
        FakeUpstream fake;
        fake.manualStreaming = true;
        fake.streamEvents = 6;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        TestClient first(engine->port());
        first.post("/v1/responses", responsesBody({{u"background"_s, true}, {u"stream"_s, true}}),
                   {{"Content-Type", "application/json"}});
        QVERIFY(QTest::qWaitFor([&] { return fake.requests().size() == 1; }, 5000));
        fake.releaseEvent();
        fake.releaseEvent();
        const auto sawDelta = [&] {
            for (const upstream::SseEvent &event : first.events()) {
                if (event.event == "response.output_text.delta")
                    return true;
            }
            return false;
        };
        QVERIFY(QTest::qWaitFor(sawDelta, 5000));
        const QList<upstream::SseEvent> before = first.events();
        QCOMPARE(before.first().event, QByteArray("response.created"));
        QCOMPARE(jsonOf(before.first().data)
                     .value(u"response"_s)
                     .toObject()
                     .value(u"status"_s)
                     .toString(),
                 u"queued"_s);
        const QString id =
            jsonOf(before.first().data).value(u"response"_s).toObject().value(u"id"_s).toString();
        for (qsizetype index = 0; index < before.size(); ++index)
            QCOMPARE(sequenceOf(before.at(index)), index);
        const qint64 lastSeen = sequenceOf(before.last());
        first.disconnectNow();

        // The task goes on without anyone connected.
        QVERIFY(QTest::qWaitFor(
            [&] {
                fake.releaseEvent();
                return statusOf(engine->port(), id) == u"completed"_s;
            },
            10000));
        auto resumed = call(engine->port(), "GET",
                            "/v1/responses/" + id.toUtf8() +
                                "?stream=true&starting_after=" + QByteArray::number(lastSeen));
        QCOMPARE(resumed->status(), 200);
        const QList<upstream::SseEvent> after = resumed->events();
        QVERIFY(!after.isEmpty());
        for (qsizetype index = 0; index < after.size(); ++index)
            QCOMPARE(sequenceOf(after.at(index)), lastSeen + 1 + index);
        QCOMPARE(after.last().event, QByteArray("response.completed"));
        QString text;
        for (const upstream::SseEvent &event : before + after) {
            if (event.event == "response.output_text.delta")
                text += jsonOf(event.data).value(u"delta"_s).toString();
        }
        QCOMPARE(text, u"t0t1t2t3t4t5"_s);
        QCOMPARE(outputText(retrieve(engine->port(), id)), text);
    }

    void cancelStopsAQueuedAndARunningTask()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Hang;
        config::Config config = configFor(fake);
        config.responses.workers = 1;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const quint16 port = engine->port();
        const QString running = create(port, {{u"background"_s, true}}).value(u"id"_s).toString();
        QVERIFY(waitForStatus(port, running, u"in_progress"_s));
        const QString queued = create(port, {{u"background"_s, true}}).value(u"id"_s).toString();
        QCOMPARE(statusOf(port, queued), u"queued"_s);

        auto cancelledQueued = call(port, "POST", "/v1/responses/" + queued.toUtf8() + "/cancel");
        QCOMPARE(cancelledQueued->status(), 200);
        QCOMPARE(jsonOf(cancelledQueued->body()).value(u"status"_s).toString(), u"cancelled"_s);
        auto cancelledRunning = call(port, "POST", "/v1/responses/" + running.toUtf8() + "/cancel");
        QCOMPARE(cancelledRunning->status(), 200);
        QCOMPARE(statusOf(port, running), u"cancelled"_s);
        // The running call was abandoned; the queued task never reached the provider.
        QVERIFY(QTest::qWaitFor([&] { return fake.closedConnections() >= 1; }, 5000));
        QCOMPARE(fake.requests().size(), 1);
        // A finished response cannot be cancelled again into another state.
        fake.mode = FakeUpstream::Mode::Answer;
        const QString done = create(port, {{u"background"_s, true}}).value(u"id"_s).toString();
        QVERIFY(waitForStatus(port, done, u"completed"_s));
        auto late = call(port, "POST", "/v1/responses/" + done.toUtf8() + "/cancel");
        QCOMPARE(late->status(), 400);
        QCOMPARE(statusOf(port, done), u"completed"_s);
    }

    void theQueueServesHighPriorityFirstAndOldestFirstWithinOne()
    {
        FakeUpstream fake;
        fake.manualStreaming = true;
        config::Config config = configFor(fake);
        config.responses.workers = 1;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const quint16 port = engine->port();
        QList<QString> ids;
        ids.append(create(port, {{u"background"_s, true}, {u"input"_s, u"blocker"_s}})
                       .value(u"id"_s)
                       .toString());
        QVERIFY(QTest::qWaitFor([&] { return fake.requests().size() == 1; }, 5000));
        const QList<std::pair<QString, QByteArray>> waiting{
            {u"low-1"_s, "low"}, {u"normal-1"_s, "normal"}, {u"high-1"_s, "high"},
            {u"low-2"_s, "low"}, {u"high-2"_s, "high"},     {u"unsaid"_s, ""},
        };
        for (const auto &[input, priority] : waiting) {
            HeaderList headers;
            if (!priority.isEmpty())
                headers.append({"x-switchyard-priority", priority});
            ids.append(create(port, {{u"background"_s, true}, {u"input"_s, input}}, headers)
                           .value(u"id"_s)
                           .toString());
        }
        const QJsonObject queue = jsonOf(call(port, "GET", "/admin/v1/queue")->body());
        QCOMPARE(queue.value(u"running"_s).toInt(), 1);
        QCOMPARE(queue.value(u"queued"_s).toObject().value(u"high"_s).toInt(), 2);
        QCOMPARE(queue.value(u"queued"_s).toObject().value(u"normal"_s).toInt(), 2);
        QCOMPARE(queue.value(u"queued"_s).toObject().value(u"low"_s).toInt(), 2);
        QVERIFY(QTest::qWaitFor(
            [&] {
                fake.releaseEvent();
                return statusOf(port, ids.last()) == u"completed"_s && fake.requests().size() == 7;
            },
            20000));
        QStringList order;
        for (const FakeUpstream::ReceivedRequest &request : fake.requests())
            order.append(textOfInput(request));
        QCOMPARE(order, (QStringList{u"blocker"_s, u"high-1"_s, u"high-2"_s, u"normal-1"_s,
                                     u"unsaid"_s, u"low-1"_s, u"low-2"_s}));
    }

    void aTenantOverItsQueueBoundGets429()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Hang;
        config::Config config = configFor(fake);
        config.responses.maxQueuedPerTenant = 2;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const quint16 port = engine->port();
        const HeaderList teamA{{"x-switchyard-tenant", "team-a"}};
        QCOMPARE(
            call(port, "POST", "/v1/responses", responsesBody({{u"background"_s, true}}), teamA)
                ->status(),
            200);
        QCOMPARE(
            call(port, "POST", "/v1/responses", responsesBody({{u"background"_s, true}}), teamA)
                ->status(),
            200);
        auto refused =
            call(port, "POST", "/v1/responses", responsesBody({{u"background"_s, true}}), teamA);
        QCOMPARE(refused->status(), 429);
        QCOMPARE(errorOf(refused->body()).value(u"code"_s).toString(), u"queue_full"_s);
        QVERIFY(!refused->header("retry-after").isEmpty());
        // Another tenant's bound is its own.
        QCOMPARE(call(port, "POST", "/v1/responses", responsesBody({{u"background"_s, true}}),
                      {{"x-switchyard-tenant", "team-b"}})
                     ->status(),
                 200);
    }

    void aTaskOverItsTimeLimitFails()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Hang;
        config::Config config = configFor(fake);
        config.responses.taskTimeout = std::chrono::seconds(1);
        config.timeouts.firstToken = std::chrono::seconds(60);
        auto engine = startEngine(config);
        QVERIFY(engine);
        const QString id =
            create(engine->port(), {{u"background"_s, true}}).value(u"id"_s).toString();
        QVERIFY(waitForStatus(engine->port(), id, u"failed"_s));
        const QJsonObject failed = retrieve(engine->port(), id);
        QCOMPARE(failed.value(u"error"_s).toObject().value(u"code"_s).toString(),
                 u"task_timed_out"_s);
        auto events = call(engine->port(), "GET", "/v1/responses/" + id.toUtf8() + "?stream=true");
        QCOMPARE(events->events().last().event, QByteArray("response.failed"));
    }

    void aStoredConversationContinuesOnAChatOnlyProviderWithTools()
    {
        FakeUpstream fake;
        fake.completionBody = compact(QJsonObject{
            {u"id"_s, u"chatcmpl-1"_s},
            {u"object"_s, u"chat.completion"_s},
            {u"model"_s, u"test-model"_s},
            {u"choices"_s,
             QJsonArray{QJsonObject{
                 {u"index"_s, 0},
                 {u"finish_reason"_s, u"tool_calls"_s},
                 {u"message"_s,
                  QJsonObject{
                      {u"role"_s, u"assistant"_s},
                      {u"content"_s, QJsonValue()},
                      {u"tool_calls"_s,
                       QJsonArray{QJsonObject{
                           {u"id"_s, u"call_1"_s},
                           {u"type"_s, u"function"_s},
                           {u"function"_s,
                            QJsonObject{{u"name"_s, u"weather"_s},
                                        {u"arguments"_s, u"{\"city\":\"Paris\"}"_s}}}}}}}}}}}});
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const quint16 port = engine->port();
        const QJsonArray tools{
            QJsonObject{{u"type"_s, u"function"_s},
                        {u"name"_s, u"weather"_s},
                        {u"parameters"_s, QJsonObject{{u"type"_s, u"object"_s}}}}};
        const QJsonObject first = create(port, {{u"store"_s, true},
                                                {u"instructions"_s, u"Be brief."_s},
                                                {u"input"_s, u"Weather in Paris?"_s},
                                                {u"tools"_s, tools}});
        QCOMPARE(first.value(u"status"_s).toString(), u"completed"_s);
        QCOMPARE(first.value(u"store"_s).toBool(), true);
        const QString firstId = first.value(u"id"_s).toString();
        QCOMPARE(first.value(u"output"_s).toArray().first()[u"type"_s].toString(),
                 u"function_call"_s);

        fake.completionBody = compact(QJsonObject{
            {u"id"_s, u"chatcmpl-2"_s},
            {u"object"_s, u"chat.completion"_s},
            {u"model"_s, u"test-model"_s},
            {u"choices"_s,
             QJsonArray{QJsonObject{{u"index"_s, 0},
                                    {u"finish_reason"_s, u"stop"_s},
                                    {u"message"_s, QJsonObject{{u"role"_s, u"assistant"_s},
                                                               {u"content"_s, u"Sunny."_s}}}}}}});
        const QJsonObject second = create(
            port, {{u"previous_response_id"_s, firstId},
                   {u"tools"_s, tools},
                   {u"input"_s, QJsonArray{QJsonObject{{u"type"_s, u"function_call_output"_s},
                                                       {u"call_id"_s, u"call_1"_s},
                                                       {u"output"_s, u"18C, sunny"_s}}}}});
        QCOMPARE(second.value(u"status"_s).toString(), u"completed"_s);
        QCOMPARE(second.value(u"previous_response_id"_s).toString(), firstId);
        QCOMPARE(outputText(second), u"Sunny."_s);
        // The provider got the whole conversation in chat form; the first request's
        // instructions are not carried over, as the Responses API does not carry them.
        QCOMPARE(fake.requests().size(), 2);
        const QJsonArray messages =
            jsonOf(fake.requests().at(1).body).value(u"messages"_s).toArray();
        QCOMPARE(messages.size(), 3);
        QCOMPARE(messages.at(0)[u"role"_s].toString(), u"user"_s);
        QCOMPARE(messages.at(0)[u"content"_s].toString(), u"Weather in Paris?"_s);
        QCOMPARE(messages.at(1)[u"role"_s].toString(), u"assistant"_s);
        QCOMPARE(messages.at(1)[u"tool_calls"_s][0][u"id"_s].toString(), u"call_1"_s);
        QCOMPARE(messages.at(2)[u"role"_s].toString(), u"tool"_s);
        QCOMPARE(messages.at(2)[u"tool_call_id"_s].toString(), u"call_1"_s);
        QCOMPARE(messages.at(2)[u"content"_s].toString(), u"18C, sunny"_s);

        // Not stored (the default): continuing it is refused by name.
        const QString unstored = create(port, {}).value(u"id"_s).toString();
        auto refused = call(port, "POST", "/v1/responses",
                            responsesBody({{u"previous_response_id"_s, unstored}}));
        QCOMPARE(refused->status(), 400);
        QCOMPARE(errorOf(refused->body()).value(u"code"_s).toString(),
                 u"previous_response_not_found"_s);
        QCOMPARE(errorOf(refused->body()).value(u"param"_s).toString(), u"previous_response_id"_s);
    }

    void inputItemsAndDelete()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const quint16 port = engine->port();
        const QJsonObject stored = create(
            port, {{u"store"_s, true},
                   {u"input"_s,
                    QJsonArray{QJsonObject{{u"role"_s, u"user"_s}, {u"content"_s, u"one"_s}},
                               QJsonObject{{u"role"_s, u"user"_s}, {u"content"_s, u"two"_s}}}}});
        const QByteArray id = stored.value(u"id"_s).toString().toUtf8();
        const QJsonObject newestFirst =
            jsonOf(call(port, "GET", "/v1/responses/" + id + "/input_items")->body());
        QCOMPARE(newestFirst.value(u"object"_s).toString(), u"list"_s);
        const QJsonArray items = newestFirst.value(u"data"_s).toArray();
        QCOMPARE(items.size(), 2);
        QCOMPARE(items.at(0)[u"content"_s][0][u"text"_s].toString(), u"two"_s);
        QVERIFY(items.at(0)[u"id"_s].toString().startsWith(u"msg_"_s));
        const QJsonObject page = jsonOf(
            call(port, "GET", "/v1/responses/" + id + "/input_items?order=asc&limit=1")->body());
        QCOMPARE(page.value(u"data"_s).toArray().size(), 1);
        QCOMPARE(page.value(u"has_more"_s).toBool(), true);
        QCOMPARE(page.value(u"data"_s)[0][u"content"_s][0][u"text"_s].toString(), u"one"_s);

        auto deleted = call(port, "DELETE", "/v1/responses/" + id);
        QCOMPARE(deleted->status(), 200);
        QCOMPARE(jsonOf(deleted->body()).value(u"deleted"_s).toBool(), true);
        auto gone = call(port, "GET", "/v1/responses/" + id);
        QCOMPARE(gone->status(), 404);
        QCOMPARE(errorOf(gone->body()).value(u"code"_s).toString(), u"response_not_found"_s);
        QCOMPARE(call(port, "DELETE", "/v1/responses/" + id)->status(), 404);
    }

    void whatCannotBeKeptIsRefusedByName()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const quint16 port = engine->port();
        auto unstored = call(port, "POST", "/v1/responses",
                             responsesBody({{u"background"_s, true}, {u"store"_s, false}}));
        QCOMPARE(unstored->status(), 400);
        QCOMPARE(errorOf(unstored->body()).value(u"param"_s).toString(), u"store"_s);
        auto wrongType =
            call(port, "POST", "/v1/responses", responsesBody({{u"background"_s, u"yes"_s}}));
        QCOMPARE(wrongType->status(), 400);
        QCOMPARE(errorOf(wrongType->body()).value(u"param"_s).toString(), u"background"_s);
        auto builtIn = call(
            port, "POST", "/v1/responses",
            responsesBody({{u"background"_s, true},
                           {u"tools"_s, QJsonArray{QJsonObject{{u"type"_s, u"web_search"_s}}}}}));
        QCOMPARE(builtIn->status(), 400);
        QCOMPARE(call(port, "GET", "/v1/responses/resp_0123")->status(), 404);
        QCOMPARE(call(port, "PUT", "/v1/responses/resp_0123")->status(), 405);
        QCOMPARE(fake.requests().size(), 0);
    }

    void onlyTheKeyThatStoredAResponseMayUseIt()
    {
        FakeUpstream fake;
        config::Config config =
            loadTestConfig("listen: 127.0.0.1:0\n"
                           "providers:\n"
                           "  - {id: fake, kind: openai, base_url: " +
                               fake.baseUrl() +
                               ", models: [test-model]}\n"
                               "auth:\n"
                               "  keys:\n"
                               "    - {id: key-a, tenant: team-a, key: sha256:" +
                               auth::sha256(kKeyA).toHex() +
                               "}\n"
                               "    - {id: key-b, tenant: team-a, key: sha256:" +
                               auth::sha256(kKeyB).toHex() + "}\n",
                           u"background.yaml"_s);
        config.resilience.probes.enabled = false;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const quint16 port = engine->port();
        const QJsonObject stored = create(port, {{u"store"_s, true}}, bearer(kKeyA));
        const QByteArray id = stored.value(u"id"_s).toString().toUtf8();
        QVERIFY(!id.isEmpty());
        QCOMPARE(call(port, "GET", "/v1/responses/" + id, {}, bearer(kKeyA))->status(), 200);
        // Another key of the same tenant: the response does not exist for it.
        QCOMPARE(call(port, "GET", "/v1/responses/" + id, {}, bearer(kKeyB))->status(), 404);
        QCOMPARE(call(port, "DELETE", "/v1/responses/" + id, {}, bearer(kKeyB))->status(), 404);
        QCOMPARE(
            call(port, "GET", "/v1/responses/" + id + "/input_items", {}, bearer(kKeyB))->status(),
            404);
        auto continued = call(port, "POST", "/v1/responses",
                              responsesBody({{u"previous_response_id"_s, QString::fromUtf8(id)}}),
                              bearer(kKeyB));
        QCOMPARE(continued->status(), 400);
        QCOMPARE(call(port, "GET", "/v1/responses/" + id)->status(), 401);
        QCOMPARE(call(port, "GET", "/v1/responses/" + id, {}, bearer(kKeyA))->status(), 200);
    }

    void aTaskWhoseKeyIsRevokedWhileItWaitsDoesNotRun()
    {
        FakeUpstream fake;
        fake.mode = FakeUpstream::Mode::Hang;
        config::Config config =
            loadTestConfig("listen: 127.0.0.1:0\n"
                           "providers:\n"
                           "  - {id: fake, kind: openai, base_url: " +
                               fake.baseUrl() +
                               ", models: [test-model]}\n"
                               "auth:\n"
                               "  keys:\n"
                               "    - {id: key-a, tenant: team-a, key: sha256:" +
                               auth::sha256(kKeyA).toHex() +
                               "}\n"
                               "responses:\n"
                               "  queue: {workers: 1}\n",
                           u"background.yaml"_s);
        config.resilience.probes.enabled = false;
        auto engine = startEngine(config);
        QVERIFY(engine);
        const quint16 port = engine->port();
        auto made = call(port, "POST", "/admin/v1/keys", compact({{u"tenant"_s, u"team-b"_s}}));
        QCOMPARE(made->status(), 201);
        const QString keyId = jsonOf(made->body()).value(u"id"_s).toString();
        const QByteArray keyText = jsonOf(made->body()).value(u"key"_s).toString().toUtf8();
        QVERIFY(!keyText.isEmpty());

        // The one worker is held by key-a's task; key-b's waits behind it.
        const QString holding =
            create(port, {{u"background"_s, true}}, bearer(kKeyA)).value(u"id"_s).toString();
        QVERIFY(waitForStatus(port, holding, u"in_progress"_s, bearer(kKeyA)));
        const QString waiting =
            create(port, {{u"background"_s, true}}, bearer(keyText)).value(u"id"_s).toString();
        QCOMPARE(statusOf(port, waiting, bearer(keyText)), u"queued"_s);

        QCOMPARE(call(port, "DELETE", "/admin/v1/keys/" + keyId.toUtf8())->status(), 200);
        QCOMPARE(
            call(port, "POST", "/v1/responses/" + holding.toUtf8() + "/cancel", {}, bearer(kKeyA))
                ->status(),
            200);
        // The waiting task is taken, then fails by name without reaching the provider.
        QJsonObject failure;
        QVERIFY(QTest::qWaitFor(
            [&] {
                const QJsonObject queue = jsonOf(call(port, "GET", "/admin/v1/queue")->body());
                for (const QJsonValue &task : queue.value(u"recent_failures"_s).toArray()) {
                    if (task.toObject().value(u"id"_s).toString() == waiting)
                        failure = task.toObject();
                }
                return !failure.isEmpty();
            },
            10000));
        QCOMPARE(failure.value(u"status"_s).toString(), u"failed"_s);
        QCOMPARE(failure.value(u"error"_s).toObject().value(u"code"_s).toString(),
                 u"key_revoked"_s);
        QCOMPARE(fake.requests().size(), 1);
    }

    void aModelNothingServesIsRefusedWhenQueued()
    {
        FakeUpstream fake;
        auto engine = startEngine(configFor(fake));
        QVERIFY(engine);
        const auto answer =
            call(engine->port(), "POST", "/v1/responses",
                 responsesBody({{u"background"_s, true}, {u"model"_s, u"no-such-model"_s}}));
        QCOMPARE(answer->status(), 404);
        QCOMPARE(jsonOf(answer->body()).value(u"error"_s).toObject().value(u"code"_s).toString(),
                 u"model_not_found"_s);
        // Nothing was queued: no task waits, none ran.
        QCOMPARE(jsonOf(call(engine->port(), "GET", "/admin/v1/queue")->body())
                     .value(u"tasks"_s)
                     .toArray()
                     .size(),
                 0);
        QCOMPARE(fake.requests().size(), 0);
    }

    void anIntentTaskWaitsForAnAgentAndOutlivesOneThatVanished()
    {
        FakeUpstream fake;
        config::Config config = configFor(fake);
        config.responses.taskTimeout = std::chrono::seconds(6);
        auto engine = startEngine(config);
        QVERIFY(engine);
        const quint16 port = engine->port();
        const HeaderList intent{{"x-switchyard-intent", "travel/book/flight"}};
        const auto registerAgent = [port](const QByteArray &id, const FakeUpstream &agent) {
            return call(port, "POST", "/admin/v1/agents",
                        R"({"id":")" + id + R"(","base_url":")" + agent.baseUrl() +
                            R"(","capabilities":["travel/book/flight"]})")
                ->status();
        };

        // No agent offers the intent: the task waits, queued, instead of failing.
        const QString id =
            create(port, {{u"background"_s, true}}, intent).value(u"id"_s).toString();
        QVERIFY(!id.isEmpty());
        QTest::qWait(1500);
        QCOMPARE(statusOf(port, id), u"queued"_s);

        // An agent that vanished (its port closed): its failed run does not end the task.
        quint16 ghostPort = 0;
        {
            auto ghost = std::make_unique<FakeUpstream>();
            ghostPort = ghost->port();
            QCOMPARE(registerAgent("ghost", *ghost), 201);
        }
        QVERIFY(ghostPort != 0);
        QTest::qWait(1500);
        // Tried on the ghost, perhaps again this very moment: waiting or running, not ended.
        const QString meanwhile = statusOf(port, id);
        QVERIFY2(meanwhile == u"queued"_s || meanwhile == u"in_progress"_s, qPrintable(meanwhile));
        QCOMPARE(call(port, "DELETE", "/admin/v1/agents/ghost")->status(), 200);

        // A live agent: the task runs on it, never on the provider.
        FakeUpstream agent;
        QCOMPARE(registerAgent("booker", agent), 201);
        QVERIFY(waitForStatus(port, id, u"completed"_s));
        QCOMPARE(agent.requests().size(), 1);
        QCOMPARE(fake.requests().size(), 0);

        // An intent nobody offers fails at the task's time limit, saying why.
        const QString lonely =
            create(port, {{u"background"_s, true}}, {{"x-switchyard-intent", "travel/plan/trip"}})
                .value(u"id"_s)
                .toString();
        QVERIFY(waitForStatus(port, lonely, u"failed"_s));
        const QJsonObject error = retrieve(port, lonely).value(u"error"_s).toObject();
        QCOMPARE(error.value(u"code"_s).toString(), u"no_agent_available"_s);
        QVERIFY2(error.value(u"message"_s).toString().contains(u"travel/plan/trip"_s),
                 qPrintable(error.value(u"message"_s).toString()));
    }

    void storedResponsesAndUnfinishedTasksSurviveARestart()
    {
        QTemporaryDir state;
        QVERIFY(state.isValid());
        FakeUpstream fake;
        QString stored;
        QString unfinished;
        QList<qint64> seenBefore;
        {
            fake.manualStreaming = true;
            auto engine = startEngine(configFor(fake, state.path()));
            QVERIFY(engine);
            fake.manualStreaming = false;
            stored = create(engine->port(), {{u"store"_s, true}}).value(u"id"_s).toString();
            fake.manualStreaming = true;
            unfinished =
                create(engine->port(), {{u"background"_s, true}}).value(u"id"_s).toString();
            QVERIFY(QTest::qWaitFor([&] { return fake.requests().size() == 2; }, 5000));
            fake.releaseEvent();
            fake.releaseEvent();
            QCOMPARE(statusOf(engine->port(), unfinished), u"in_progress"_s);
            // What a client could have read before the end: the events on disk so far.
            TestClient follower(engine->port());
            follower.send("GET", "/v1/responses/" + unfinished.toUtf8() + "?stream=true");
            QVERIFY(QTest::qWaitFor([&] { return follower.events().size() >= 4; }, 5000));
            for (const upstream::SseEvent &event : follower.events())
                seenBefore.append(sequenceOf(event));
        } // the engine ends with the task still running
        fake.manualStreaming = false;
        auto engine = startEngine(configFor(fake, state.path()));
        QVERIFY(engine);
        QCOMPARE(statusOf(engine->port(), stored), u"completed"_s);
        QVERIFY(waitForStatus(engine->port(), unfinished, u"completed"_s));
        QCOMPARE(fake.requests().size(), 3); // at least once to the provider: here twice
        auto events =
            call(engine->port(), "GET", "/v1/responses/" + unfinished.toUtf8() + "?stream=true");
        QList<qint64> numbers;
        for (const upstream::SseEvent &event : events->events())
            numbers.append(sequenceOf(event));
        for (qsizetype index = 0; index < numbers.size(); ++index)
            QCOMPARE(numbers.at(index), qint64(index)); // one log, no number used twice
        QVERIFY(numbers.size() > seenBefore.size());
        QCOMPARE(numbers.mid(0, seenBefore.size()), seenBefore);
        QCOMPARE(events->events().last().event, QByteArray("response.completed"));
        QCOMPARE(outputText(retrieve(engine->port(), unfinished)), u"t0t1t2"_s);

        // Once more: a response that finished before this start streams whole and ends.
        engine.reset();
        engine = startEngine(configFor(fake, state.path()));
        QVERIFY(engine);
        auto again = call(engine->port(), "GET",
                          "/v1/responses/" + unfinished.toUtf8() + "?stream=true&starting_after=1");
        QVERIFY(again->finished());
        QCOMPARE(again->events().size(), numbers.size() - 2);
        QCOMPARE(again->events().last().event, QByteArray("response.completed"));
    }

    void thePreviousReleasesStateDatabaseOpensAndMigrates()
    {
        QTemporaryDir state;
        QVERIFY(state.isValid());
        const QString fixture = qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") +
                                u"/tests/data/state/before_background_responses.db"_s;
        QVERIFY(QFile::copy(fixture, QDir(state.path()).filePath(u"switchyard.db"_s)));
        QFile::setPermissions(QDir(state.path()).filePath(u"switchyard.db"_s),
                              QFile::ReadOwner | QFile::WriteOwner);
        FakeUpstream fake;
        config::Config config =
            gatewayConfig({providerFor(u"fake"_s, fake, {u"demo-chat"_s})}); // the key's model
        config.state.directory = state.path();
        config.resilience.probes.enabled = false;
        config.auth.required = true; // the fixture's key, stored by the API, must open it
        auto engine = startEngine(config);
        QVERIFY(engine);
        const quint16 port = engine->port();
        // The key the previous release stored still opens the gateway.
        const HeaderList key =
            bearer(QByteArrayView("sk-sy-C80Aogqz9fPQpt6RRb_6brOQe06pZ4mWjq2h7hg5zQ0"));
        QCOMPARE(call(port, "POST", "/v1/responses", responsesBody({}))->status(), 401);
        const QJsonObject queued =
            create(port, {{u"background"_s, true}, {u"model"_s, u"demo-chat"_s}}, key);
        const QString id = queued.value(u"id"_s).toString();
        QVERIFY2(!id.isEmpty(), compact(queued).constData());
        QVERIFY(waitForStatus(port, id, u"completed"_s, key));
        engine.reset();

        QSqlDatabase database = QSqlDatabase::addDatabase(u"QSQLITE"_s, u"migration-check"_s);
        database.setDatabaseName(QDir(state.path()).filePath(u"switchyard.db"_s));
        QVERIFY(database.open());
        const auto count = [&](const QString &sql) {
            QSqlQuery query(database);
            return query.exec(sql) && query.next() ? query.value(0).toInt() : -1;
        };
        // What the previous release kept is still there, beside the new tables.
        QCOMPARE(count(u"SELECT count(*) FROM config_versions WHERE number <= 2"_s), 2);
        QVERIFY(count(u"SELECT count(*) FROM usage_ledger"_s) >= 8);
        QCOMPARE(count(u"SELECT count(*) FROM stored_responses WHERE status = 'completed'"_s), 1);
        QVERIFY(count(u"SELECT count(*) FROM response_events"_s) > 3);
        database.close();
        database = QSqlDatabase();
        QSqlDatabase::removeDatabase(u"migration-check"_s);
    }
};

QTEST_GUILESS_MAIN(GatewayBackgroundTest)
#include "tst_gateway_background.moc"
