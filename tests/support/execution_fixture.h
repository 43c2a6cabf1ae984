#pragma once

// The engine around one request execution, with fakes on the far side of both seams: a transport
// whose calls the test answers by hand and a client that records what it was sent. The router,
// health registry, retry budget, admission and deadline scheduler are the real ones, on a clock
// that moves only when the test moves it. Header-only: for unit tests of the executor.

#include "config/config_loader.h"
#include "config/config_store.h"
#include "execution/client_channel.h"
#include "execution/request_execution.h"
#include "health/health_registry.h"
#include "resilience/admission.h"
#include "resilience/retry_policy.h"
#include "routing/request_context.h"
#include "routing/router.h"
#include "telemetry/request_recorder.h"
#include "timing/deadline_scheduler.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <algorithm>
#include <memory>
#include <vector>

namespace switchyard::testing {

using namespace Qt::StringLiterals;
using execution::RequestExecution;
using std::chrono::milliseconds;
using timing::DeadlineScheduler;

// ---- the far side of the seams -----------------------------------------------------------------

// One call the executor started, and what the test does with it.
struct FakeCallState {
    upstream::UpstreamRequest request;
    upstream::UpstreamObserver *observer = nullptr;
    bool live = true; // not yet aborted by the executor nor finished by the test
    bool paused = false;
    bool sent = true; // the request went out: the test sets false for a call still connecting

    QString provider() const { return request.url.host().section(u'.', 0, 0); }
};

class FakeCall final : public upstream::UpstreamCall {
public:
    explicit FakeCall(std::shared_ptr<FakeCallState> state) : m_state(std::move(state)) {}
    ~FakeCall() override { m_state->live = false; }
    void pauseReceiving() override { m_state->paused = true; }
    void resumeReceiving() override { m_state->paused = false; }
    bool requestSent() const override { return m_state->sent; }

private:
    std::shared_ptr<FakeCallState> m_state;
};

class FakeTransport final : public upstream::UpstreamTransport {
public:
    std::unique_ptr<upstream::UpstreamCall> start(const upstream::UpstreamRequest &request,
                                                  upstream::UpstreamObserver *observer) override
    {
        auto state = std::make_shared<FakeCallState>();
        state->request = request;
        state->observer = observer;
        calls.push_back(state);
        return std::make_unique<FakeCall>(state);
    }

    FakeCallState &last() { return *calls.back(); }
    int liveCalls() const
    {
        return int(
            std::count_if(calls.begin(), calls.end(), [](const auto &c) { return c->live; }));
    }

    // Whole answers and failures of the last call.
    void head(int status, upstream::HeaderList headers = {})
    {
        QVERIFY(last().live);
        last().observer->onResponseHead({status, std::move(headers)});
    }
    void body(const QByteArray &bytes)
    {
        QVERIFY(last().live);
        last().observer->onResponseBody(bytes);
    }
    void finish(upstream::TransportError error = upstream::TransportError::None)
    {
        QVERIFY(last().live);
        FakeCallState &call = last();
        call.live = false;
        call.observer->onFinished({error, upstream::describe(error)});
    }
    void answer(const QString &content = u"hello"_s)
    {
        head(200, {{"content-type", "application/json"}});
        body(completion(content));
        finish();
    }
    void status(int code, upstream::HeaderList headers = {})
    {
        headers.append(qMakePair(QByteArray("content-type"), QByteArray("application/json")));
        head(code, std::move(headers));
        body(R"({"error":{"message":"provider says no","type":"server_error"}})");
        finish();
    }
    void beginStream() { head(200, {{"content-type", "text/event-stream"}}); }
    void chunk(const QString &text) { body(chunkEvent(text)); }
    void done() { body("data: [DONE]\n\n"); }

    // One chat.completion.chunk event carrying `text`, as its bytes on the wire.
    static QByteArray chunkEvent(const QString &text)
    {
        const QJsonObject delta{{u"content"_s, text}};
        const QJsonObject choice{{u"index"_s, 0}, {u"delta"_s, delta}};
        const QJsonObject event{{u"id"_s, u"c1"_s},
                                {u"object"_s, u"chat.completion.chunk"_s},
                                {u"model"_s, u"m"_s},
                                {u"choices"_s, QJsonArray{choice}}};
        return "data: " + QJsonDocument(event).toJson(QJsonDocument::Compact) + "\n\n";
    }

    static QByteArray completion(const QString &content)
    {
        const QJsonObject message{{u"role"_s, u"assistant"_s}, {u"content"_s, content}};
        const QJsonObject choice{
            {u"index"_s, 0}, {u"message"_s, message}, {u"finish_reason"_s, u"stop"_s}};
        return QJsonDocument(QJsonObject{{u"id"_s, u"c1"_s},
                                         {u"object"_s, u"chat.completion"_s},
                                         {u"model"_s, u"m"_s},
                                         {u"choices"_s, QJsonArray{choice}}})
            .toJson(QJsonDocument::Compact);
    }

    std::vector<std::shared_ptr<FakeCallState>> calls;
};

// What the client received, kept by the test after the execution (and its channel) are gone.
struct ClientLog {
    int status = 0;
    execution::Dialect dialect = execution::Dialect::Chat;
    execution::HeaderList headers;
    QByteArray answer;
    std::optional<protocol::ApiError> error;
    bool streamBegun = false;
    bool streamEnded = false;
    std::optional<protocol::ApiError> streamFailure;
    QList<upstream::SseEvent> events;
    bool aborted = false;
    qint64 pendingBytes = 0;
    execution::ClientListener *listener = nullptr;

    QByteArray header(QByteArrayView name) const
    {
        for (const auto &[key, value] : headers) {
            if (key == name)
                return value;
        }
        return {};
    }
    int attempts() const { return header("x-switchyard-attempts").toInt(); }
    QString content() const
    {
        const QJsonObject object = QJsonDocument::fromJson(answer).object();
        return object[u"choices"_s][0][u"message"_s][u"content"_s].toString();
    }
    QString streamedText() const
    {
        QString text;
        for (const upstream::SseEvent &event : events) {
            if (!event.isDone()) {
                text += QJsonDocument::fromJson(event.data)
                            .object()[u"choices"_s][0][u"delta"_s][u"content"_s]
                            .toString();
            }
        }
        return text;
    }
};

class FakeClient final : public execution::ClientChannel {
public:
    explicit FakeClient(std::shared_ptr<ClientLog> log) : m_log(std::move(log)) {}

    void setListener(execution::ClientListener *listener) override { m_log->listener = listener; }
    bool connected() const override { return true; }
    bool answerStarted() const override { return m_log->status != 0; }
    qint64 pendingBytes() const override { return m_log->pendingBytes; }
    void sendAnswer(int status, const execution::HeaderList &headers, const QByteArray &openAiJson,
                    execution::Dialect dialect) override
    {
        QCOMPARE(m_log->status, 0);
        m_log->dialect = dialect;
        m_log->status = status;
        m_log->headers = headers;
        m_log->answer = openAiJson;
    }
    void sendError(const protocol::ApiError &error, const execution::HeaderList &headers) override
    {
        QCOMPARE(m_log->status, 0);
        m_log->status = error.status;
        m_log->headers = headers;
        m_log->error = error;
    }
    void beginStream(const execution::HeaderList &headers, execution::Dialect dialect) override
    {
        QCOMPARE(m_log->status, 0);
        m_log->dialect = dialect;
        m_log->status = 200;
        m_log->headers = headers;
        m_log->streamBegun = true;
    }
    void sendStreamEvents(const QList<upstream::SseEvent> &events, bool) override
    {
        QVERIFY(m_log->streamBegun && !m_log->streamEnded);
        m_log->events.append(events);
    }
    void failStream(const protocol::ApiError &error) override
    {
        QVERIFY(m_log->streamBegun && !m_log->streamEnded);
        m_log->streamFailure = error;
        m_log->streamEnded = true;
    }
    void endStream() override
    {
        QVERIFY(m_log->streamBegun && !m_log->streamEnded);
        m_log->streamEnded = true;
    }
    void abort() override { m_log->aborted = true; }

private:
    std::shared_ptr<ClientLog> m_log;
};

// ---- the engine around one execution -----------------------------------------------------------

inline std::shared_ptr<const config::Config> loadConfig(const QByteArray &yaml)
{
    config::LoadResult result = config::loadConfigText(
        yaml, u"execution.yaml"_s, [](const QString &) { return std::optional<QByteArray>(); });
    if (!result.ok())
        qFatal("test config does not load: %s", qPrintable(result.errors.first().toString()));
    return std::make_shared<const config::Config>(std::move(*result.config));
}

struct Fixture {
    explicit Fixture(const QByteArray &yaml)
        : store(loadConfig(yaml)), health(store, clock), traces(64), recorder(traces),
          retryBudget(store), admission(store, clock), router(store, health),
          scheduler(clock, DeadlineScheduler::Drive::Manual)
    {}

    // Starts one request; `headers` are the client's request headers.
    RequestExecution *send(bool stream = false, QList<QPair<QByteArray, QByteArray>> headers = {},
                           const QByteArray &content = "hello")
    {
        const QByteArray body =
            "{\"model\":\"m\",\"stream\":" + QByteArray(stream ? "true" : "false") +
            ",\"messages\":[{\"role\":\"user\",\"content\":\"" + content + "\"}]}";
        auto parsed = protocol::parseChatRequest(body);
        protocol::ChatRequest chat = std::get<protocol::ChatRequest>(parsed);
        routing::RequestContext context =
            std::get<routing::RequestContext>(routing::buildRequestContext(headers, chat));
        const QByteArray requestId = "req-" + QByteArray::number(++sent);
        context.requestId = requestId;
        const std::shared_ptr<const routing::RoutingTable> table = router.table();
        routing::RouteDecision decision = router.route(*table, context);
        log = std::make_shared<ClientLog>();
        const execution::ExecutionServices services{transport,
                                                    health,
                                                    recorder,
                                                    retryBudget,
                                                    admission,
                                                    scheduler,
                                                    loop,
                                                    [] { return 0.0; },
                                                    [this](RequestExecution *run) {
                                                        ++finished;
                                                        if (onFinished)
                                                            onFinished(run);
                                                    }};
        auto *run = new RequestExecution(
            services, table->snapshot(), chat, routing::forwardedBody(chat, body),
            std::move(context), std::move(decision),
            telemetry::TraceBuilder(clock, requestId, telemetry::newTraceId()),
            std::make_unique<FakeClient>(log), &owner);
        run->setFallbackRouting(router, table);
        run->start();
        return run;
    }

    // Moves simulated time forward and fires what is due, one millisecond-step at a time so
    // deadlines fire in order.
    void advance(milliseconds by)
    {
        scheduler.runDue();
        const auto until = clock.now() + by;
        while (scheduler.pending() > 0 && scheduler.nextDue() <= until) {
            const auto step = scheduler.nextDue() - clock.now();
            if (step.count() > 0)
                clock.advance(std::chrono::ceil<milliseconds>(step));
            scheduler.runDue();
        }
        if (clock.now() < until)
            clock.advance(std::chrono::ceil<milliseconds>(until - clock.now()));
        scheduler.runDue();
    }
    void settle() { advance(milliseconds(0)); } // fires what is due now: zero backoffs

    int slot(const QString &id) const { return health.indexOf(id); }
    telemetry::Trace lastTrace() const { return traces.latest(1).constFirst(); }
    bool traceHas(const QString &name, const QString &detailPart) const
    {
        const telemetry::Trace trace = lastTrace();
        for (const telemetry::Span &span : trace.spans) {
            if (span.name == name && span.detail.contains(detailPart))
                return true;
        }
        return false;
    }

    timing::ManualClock clock;
    config::ConfigStore store;
    health::HealthRegistry health;
    telemetry::TraceRing traces;
    telemetry::RequestRecorder recorder;
    timing::LoopHealth loop; // a test sets lagMs to play an overloaded engine
    resilience::RetryBudget retryBudget;
    resilience::AdmissionController admission;
    routing::Router router;
    DeadlineScheduler scheduler;
    FakeTransport transport;
    QObject owner; // parent of the executions: deleted with the fixture
    std::shared_ptr<ClientLog> log;
    int sent = 0;
    int finished = 0;
    std::function<void(RequestExecution *)> onFinished; // besides counting, for each that finished
};

} // namespace switchyard::testing
