// The OpenTelemetry export without a network: what a trace becomes in OTLP's JSON, which traces
// a sampling ratio keeps, and how the export's queue and retries count, with a poster that
// answers when the test says so.
#include "otlp/span_encoding.h"
#include "otlp/span_exporter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>
#include <algorithm>
#include <condition_variable>
#include <mutex>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using switchyard::otlp::ExportedRequest;
using switchyard::otlp::PostResult;
using switchyard::otlp::SpanExporter;
using switchyard::otlp::SpanPoster;
using switchyard::telemetry::Span;
using switchyard::telemetry::SpanKind;
using switchyard::telemetry::Trace;

namespace {

Span span(const QString &name, SpanKind kind, qint64 startMicros, qint64 durationMicros,
          const QString &detail = {})
{
    Span result;
    result.name = name;
    result.kind = kind;
    result.startMicros = startMicros;
    result.durationMicros = durationMicros;
    result.detail = detail;
    return result;
}

Span attempt(int number, const QByteArray &spanId, qint64 startMicros, qint64 durationMicros,
             const QString &outcome, int httpStatus, const QString &errorClass = {})
{
    Span result = span(u"upstream attempt"_s, SpanKind::Attempt, startMicros, durationMicros);
    result.spanId = spanId;
    result.attempt = number;
    result.provider = number == 1 ? u"first"_s : u"second"_s;
    result.upstreamModel = u"up-model"_s;
    result.outcome = outcome;
    result.httpStatus = httpStatus;
    result.errorClass = errorClass;
    result.bytes = 120;
    return result;
}

// A chat request that failed over: attempt 1 got a 500, a backoff, attempt 2 answered.
Trace failedOverTrace()
{
    Trace trace;
    trace.requestId = "req_1";
    trace.traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    trace.spanId = "aaaaaaaaaaaaaaaa";
    trace.parentSpanId = "00f067aa0ba902b7";
    trace.startedAtUtc = QDateTime::fromMSecsSinceEpoch(1'700'000'000'000, Qt::UTC);
    trace.operation = u"chat"_s;
    trace.endpoint = u"/v1/chat/completions"_s;
    trace.method = "POST";
    trace.tenant = u"acme"_s;
    trace.model = u"gpt"_s;
    trace.route = u"default"_s;
    trace.tier = u"light"_s;
    trace.provider = u"second"_s;
    trace.upstreamModel = u"up-model"_s;
    trace.status = 200;
    trace.outcome = u"ok"_s;
    trace.errorClass = u"server_error"_s;
    trace.attempts = 2;
    trace.totalMicros = 10'000;
    trace.inputTokens = 12;
    trace.outputTokens = 34;
    trace.finishReason = u"stop"_s;
    trace.spans = {
        span(u"ingress"_s, SpanKind::Step, 0, 100),
        span(u"routing"_s, SpanKind::Step, 100, 50),
        attempt(1, "1111111111111111", 200, 2000, u"failure"_s, 500, u"server_error"_s),
        span(u"response head"_s, SpanKind::Event, 1500, 0, u"HTTP 500"_s),
        span(u"backoff"_s, SpanKind::Wait, 2300, 1000, u"retry after 5xx"_s),
        attempt(2, "2222222222222222", 3400, 6000, u"success"_s, 200),
        span(u"first byte"_s, SpanKind::Event, 4000, 0),
        span(u"completion"_s, SpanKind::Event, 9900, 0, u"ok"_s),
    };
    return trace;
}

QJsonArray spansOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body)
        .object()[u"resourceSpans"_s][0][u"scopeSpans"_s][0][u"spans"_s]
        .toArray();
}

QJsonObject attributeValue(const QJsonValue &owner, const QString &key)
{
    for (const QJsonValue &attribute : owner[u"attributes"_s].toArray()) {
        if (attribute[u"key"_s].toString() == key)
            return attribute[u"value"_s].toObject();
    }
    return {};
}

QString textOf(const QJsonValue &owner, const QString &key)
{
    return attributeValue(owner, key)[u"stringValue"_s].toString();
}

QString integerOf(const QJsonValue &owner, const QString &key)
{
    return attributeValue(owner, key)[u"intValue"_s].toString();
}

QStringList eventNames(const QJsonValue &span)
{
    QStringList names;
    for (const QJsonValue &event : span[u"events"_s].toArray())
        names.append(event[u"name"_s].toString());
    return names;
}

// Answers with the outcomes it is given, one per post, then with Accepted; while held, a post
// waits until released (or the export's cut-off).
class ScriptedPoster final : public SpanPoster {
public:
    PostResult post(const QByteArray &body, const switchyard::posting::CutOff &cutOff) override
    {
        std::unique_lock lock(m_mutex);
        m_bodies.append(body);
        m_changed.notify_all();
        const auto released = [&] { return !m_held || cutOff.reached(); };
        // Woken by release(); the cut-off is looked at every few milliseconds.
        while (!released())
            m_changed.wait_for(lock, 5ms);
        PostResult result;
        result.outcome = m_script.isEmpty() ? PostResult::Outcome::Accepted : m_script.takeFirst();
        if (result.outcome != PostResult::Outcome::Accepted)
            result.error = u"scripted failure"_s;
        return result;
    }

    void hold()
    {
        std::lock_guard lock(m_mutex);
        m_held = true;
    }
    void release()
    {
        std::lock_guard lock(m_mutex);
        m_held = false;
        m_changed.notify_all();
    }
    void script(QList<PostResult::Outcome> outcomes)
    {
        std::lock_guard lock(m_mutex);
        m_script = std::move(outcomes);
    }
    int posts()
    {
        std::lock_guard lock(m_mutex);
        return int(m_bodies.size());
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_held = false;
    QList<PostResult::Outcome> m_script;
    QList<QByteArray> m_bodies;
};

// A finished request of two OTLP spans: its own and one step.
Trace twoSpanTrace(int number)
{
    Trace trace;
    trace.requestId = "req_" + QByteArray::number(number);
    trace.traceId = QByteArray::number(number).rightJustified(32, '0');
    trace.spanId = "bbbbbbbbbbbbbbbb";
    trace.startedAtUtc = QDateTime::currentDateTimeUtc();
    trace.status = 200;
    trace.spans = {span(u"ingress"_s, SpanKind::Step, 0, 10)};
    return trace;
}

switchyard::config::OtlpExportConfig exportConfig(int batch, int queue,
                                                  std::chrono::milliseconds interval)
{
    switchyard::config::OtlpExportConfig config;
    config.endpoint = QUrl(u"http://127.0.0.1:9/"_s);
    config.batchSpans = batch;
    config.queueSpans = queue;
    config.interval = interval;
    return config;
}

} // namespace

class TestOtlpExport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void encodesTheResourceAndScope();
    void encodesTheRequestAsAServerSpan();
    void encodesEachAttemptAsAClientSpan();
    void promptCacheTokensAreUsageAttributes_data();
    void promptCacheTokensAreUsageAttributes();
    void encodesStepsAndWaitsAsInternalSpans();
    void putsEachEventOnTheSpanItHappenedIn();
    void encodesAnErrorAnswer();
    void samplesByTraceId_data();
    void samplesByTraceId();
    void fullQueueDropsWholeRequestsAndCountsThem();
    void failedExportIsRetriedOnceThenAbandoned();
    void refusedExportIsNotRetried();
};

void TestOtlpExport::encodesTheResourceAndScope()
{
    switchyard::otlp::ExportSource source;
    source.serviceVersion = u"1.2.3"_s;
    source.hostName = u"gateway-1"_s;
    source.processId = 42;
    const QJsonObject body =
        QJsonDocument::fromJson(switchyard::otlp::encodeExportRequest(
                                    {ExportedRequest::from(failedOverTrace())}, source))
            .object();

    const QJsonValue resource = body[u"resourceSpans"_s][0][u"resource"_s];
    QCOMPARE(textOf(resource, u"service.name"_s), u"switchyard"_s);
    QCOMPARE(textOf(resource, u"service.version"_s), u"1.2.3"_s);
    QCOMPARE(textOf(resource, u"host.name"_s), u"gateway-1"_s);
    QCOMPARE(integerOf(resource, u"process.pid"_s), u"42"_s);
    const QJsonValue scope = body[u"resourceSpans"_s][0][u"scopeSpans"_s][0][u"scope"_s];
    QCOMPARE(scope[u"name"_s].toString(), u"switchyard"_s);
    QCOMPARE(scope[u"version"_s].toString(), u"1.2.3"_s);
}

void TestOtlpExport::encodesTheRequestAsAServerSpan()
{
    const QJsonArray spans = spansOf(
        switchyard::otlp::encodeExportRequest({ExportedRequest::from(failedOverTrace())}, {}));
    QCOMPARE(spans.size(), 6); // the request, 2 steps, 2 attempts, 1 wait

    const QJsonValue server = spans[0];
    QCOMPARE(server[u"name"_s].toString(), u"chat gpt"_s);
    QCOMPARE(server[u"kind"_s].toInt(), 2);
    QCOMPARE(server[u"traceId"_s].toString(), u"4bf92f3577b34da6a3ce929d0e0e4736"_s);
    QCOMPARE(server[u"spanId"_s].toString(), u"aaaaaaaaaaaaaaaa"_s);
    QCOMPARE(server[u"parentSpanId"_s].toString(), u"00f067aa0ba902b7"_s);
    // 64-bit integers are decimal strings in OTLP's JSON.
    QCOMPARE(server[u"startTimeUnixNano"_s].toString(), u"1700000000000000000"_s);
    QCOMPARE(server[u"endTimeUnixNano"_s].toString(), u"1700000000010000000"_s);
    QCOMPARE(server[u"status"_s][u"code"_s].toInt(), 1);
    QCOMPARE(textOf(server, u"gen_ai.operation.name"_s), u"chat"_s);
    QCOMPARE(textOf(server, u"gen_ai.provider.name"_s), u"second"_s);
    QCOMPARE(textOf(server, u"gen_ai.request.model"_s), u"gpt"_s);
    QCOMPARE(textOf(server, u"gen_ai.response.model"_s), u"up-model"_s);
    QCOMPARE(integerOf(server, u"gen_ai.usage.input_tokens"_s), u"12"_s);
    QCOMPARE(integerOf(server, u"gen_ai.usage.output_tokens"_s), u"34"_s);
    QCOMPARE(
        attributeValue(server, u"gen_ai.response.finish_reasons"_s),
        (QJsonObject{
            {u"arrayValue"_s,
             QJsonObject{{u"values"_s, QJsonArray{QJsonObject{{u"stringValue"_s, u"stop"_s}}}}}}}));
    QVERIFY(attributeValue(server, u"error.type"_s).isEmpty());
    QCOMPARE(textOf(server, u"http.request.method"_s), u"POST"_s);
    QCOMPARE(textOf(server, u"url.path"_s), u"/v1/chat/completions"_s);
    QCOMPARE(integerOf(server, u"http.response.status_code"_s), u"200"_s);
    QCOMPARE(textOf(server, u"switchyard.request_id"_s), u"req_1"_s);
    QCOMPARE(textOf(server, u"switchyard.tenant"_s), u"acme"_s);
    QCOMPARE(textOf(server, u"switchyard.route"_s), u"default"_s);
    QCOMPARE(textOf(server, u"switchyard.tier"_s), u"light"_s);
    QCOMPARE(textOf(server, u"switchyard.outcome"_s), u"ok"_s);
    QCOMPARE(integerOf(server, u"switchyard.attempts"_s), u"2"_s);
    QCOMPARE(integerOf(server, u"switchyard.degraded_level"_s), u"0"_s);
    QCOMPARE(attributeValue(server, u"switchyard.streamed"_s)[u"boolValue"_s], QJsonValue(false));
}

void TestOtlpExport::encodesEachAttemptAsAClientSpan()
{
    const QJsonArray spans = spansOf(
        switchyard::otlp::encodeExportRequest({ExportedRequest::from(failedOverTrace())}, {}));
    QJsonArray clients;
    for (const QJsonValue &span : spans) {
        if (span[u"kind"_s].toInt() == 3)
            clients.append(span);
    }
    QCOMPARE(clients.size(), 2);

    const QJsonValue failed = clients[0];
    QCOMPARE(failed[u"name"_s].toString(), u"chat up-model"_s);
    QCOMPARE(failed[u"spanId"_s].toString(), u"1111111111111111"_s);
    QCOMPARE(failed[u"parentSpanId"_s].toString(), u"aaaaaaaaaaaaaaaa"_s);
    QCOMPARE(failed[u"startTimeUnixNano"_s].toString(), u"1700000000000200000"_s);
    QCOMPARE(failed[u"endTimeUnixNano"_s].toString(), u"1700000000002200000"_s);
    QCOMPARE(failed[u"status"_s].toObject(),
             (QJsonObject{{u"code"_s, 2}, {u"message"_s, u"server_error"_s}}));
    QCOMPARE(textOf(failed, u"error.type"_s), u"server_error"_s);
    QCOMPARE(textOf(failed, u"gen_ai.provider.name"_s), u"first"_s);
    QCOMPARE(integerOf(failed, u"http.response.status_code"_s), u"500"_s);
    QCOMPARE(integerOf(failed, u"switchyard.attempt"_s), u"1"_s);
    QCOMPARE(textOf(failed, u"switchyard.attempt.outcome"_s), u"failure"_s);
    // Only the call that answered carries the answer's usage.
    QVERIFY(attributeValue(failed, u"gen_ai.usage.output_tokens"_s).isEmpty());

    const QJsonValue answered = clients[1];
    QCOMPARE(answered[u"spanId"_s].toString(), u"2222222222222222"_s);
    QCOMPARE(answered[u"status"_s].toObject(), (QJsonObject{{u"code"_s, 1}}));
    QCOMPARE(textOf(answered, u"gen_ai.provider.name"_s), u"second"_s);
    QCOMPARE(integerOf(answered, u"gen_ai.usage.output_tokens"_s), u"34"_s);
    QCOMPARE(integerOf(answered, u"switchyard.attempt"_s), u"2"_s);
    QVERIFY(attributeValue(answered, u"error.type"_s).isEmpty());
}

void TestOtlpExport::promptCacheTokensAreUsageAttributes_data()
{
    QTest::addColumn<qint64>("cacheRead");
    QTest::addColumn<qint64>("cacheWrite");
    QTest::addColumn<QString>("read"); // the attribute's value; empty: absent
    QTest::addColumn<QString>("written");
    QTest::newRow("OpenAI: reads only") << qint64(8) << qint64(-1) << u"8"_s << QString();
    QTest::newRow("Anthropic: reads and writes") << qint64(5) << qint64(2) << u"5"_s << u"2"_s;
    QTest::newRow("no cache counts") << qint64(-1) << qint64(-1) << QString() << QString();
}

void TestOtlpExport::promptCacheTokensAreUsageAttributes()
{
    QFETCH(qint64, cacheRead);
    QFETCH(qint64, cacheWrite);
    QFETCH(QString, read);
    QFETCH(QString, written);
    Trace trace = failedOverTrace();
    trace.cacheReadTokens = cacheRead;
    trace.cacheWriteTokens = cacheWrite;
    const QJsonArray spans =
        spansOf(switchyard::otlp::encodeExportRequest({ExportedRequest::from(trace)}, {}));
    // The request's span and the attempt that answered carry the usage; the failed one none.
    for (const QString &spanId : {u"aaaaaaaaaaaaaaaa"_s, u"2222222222222222"_s}) {
        const auto span = std::find_if(spans.begin(), spans.end(), [&](const QJsonValue &each) {
            return each[u"spanId"_s].toString() == spanId;
        });
        QVERIFY(span != spans.end());
        QCOMPARE(integerOf(*span, u"gen_ai.usage.input_tokens"_s), u"12"_s);
        QCOMPARE(integerOf(*span, u"gen_ai.usage.cache_read.input_tokens"_s), read);
        QCOMPARE(integerOf(*span, u"gen_ai.usage.cache_creation.input_tokens"_s), written);
    }
}

void TestOtlpExport::encodesStepsAndWaitsAsInternalSpans()
{
    const QJsonArray spans = spansOf(
        switchyard::otlp::encodeExportRequest({ExportedRequest::from(failedOverTrace())}, {}));
    QStringList names;
    QSet<QString> ids;
    for (const QJsonValue &span : spans) {
        ids.insert(span[u"spanId"_s].toString());
        if (span[u"kind"_s].toInt() != 1)
            continue;
        names.append(span[u"name"_s].toString());
        QCOMPARE(span[u"parentSpanId"_s].toString(), u"aaaaaaaaaaaaaaaa"_s);
        QVERIFY(
            QRegularExpression(u"^[0-9a-f]{16}$"_s).match(span[u"spanId"_s].toString()).hasMatch());
    }
    QCOMPARE(names, (QStringList{u"ingress"_s, u"routing"_s, u"backoff"_s}));
    QCOMPARE(ids.size(), spans.size()); // every span its own id
    const QJsonValue backoff = spans[4];
    QCOMPARE(backoff[u"name"_s].toString(), u"backoff"_s);
    QCOMPARE(textOf(backoff, u"switchyard.span.kind"_s), u"wait"_s);
    QCOMPARE(textOf(backoff, u"switchyard.detail"_s), u"retry after 5xx"_s);
    QCOMPARE(backoff[u"startTimeUnixNano"_s].toString(), u"1700000000002300000"_s);
    QCOMPARE(backoff[u"endTimeUnixNano"_s].toString(), u"1700000000003300000"_s);
}

void TestOtlpExport::putsEachEventOnTheSpanItHappenedIn()
{
    const QJsonArray spans = spansOf(
        switchyard::otlp::encodeExportRequest({ExportedRequest::from(failedOverTrace())}, {}));
    QCOMPARE(eventNames(spans[0]), QStringList{u"completion"_s});
    QCOMPARE(eventNames(spans[3]), QStringList{u"response head"_s});
    QCOMPARE(eventNames(spans[5]), QStringList{u"first byte"_s});
    const QJsonValue head = spans[3][u"events"_s][0];
    QCOMPARE(head[u"timeUnixNano"_s].toString(), u"1700000000001500000"_s);
    QCOMPARE(textOf(head, u"switchyard.detail"_s), u"HTTP 500"_s);
}

void TestOtlpExport::encodesAnErrorAnswer()
{
    Trace trace = failedOverTrace();
    trace.status = 502;
    trace.outcome = u"upstream_error"_s;
    trace.spans.removeAt(5); // the second attempt never happened
    const QJsonValue server =
        spansOf(switchyard::otlp::encodeExportRequest({ExportedRequest::from(trace)}, {}))[0];
    QCOMPARE(server[u"status"_s].toObject(),
             (QJsonObject{{u"code"_s, 2}, {u"message"_s, u"upstream_error"_s}}));
    QCOMPARE(textOf(server, u"error.type"_s), u"upstream_error"_s);
    QCOMPARE(integerOf(server, u"http.response.status_code"_s), u"502"_s);
}

void TestOtlpExport::samplesByTraceId_data()
{
    QTest::addColumn<double>("ratio");
    QTest::addColumn<QByteArray>("traceId");
    QTest::addColumn<bool>("sampled");
    // The rightmost 14 hex digits decide: kept when they reach (1 - ratio) x 2^56.
    QTest::newRow("ratio 1 keeps the lowest")
        << 1.0 << "ffffffffffffffffff00000000000000"_ba << true;
    QTest::newRow("ratio 0 drops the highest")
        << 0.0 << "000000000000000000ffffffffffffff"_ba << false;
    QTest::newRow("half keeps the upper half")
        << 0.5 << "0000000000000000008000000000000a"_ba << true;
    QTest::newRow("half drops the lower half")
        << 0.5 << "ffffffffffffffffff7fffffffffffff"_ba << false;
    QTest::newRow("a quarter drops three quarters")
        << 0.25 << "000000000000000000bfffffffffffff"_ba << false;
    QTest::newRow("a quarter keeps the top quarter")
        << 0.25 << "000000000000000000c0000000000000"_ba << true;
}

void TestOtlpExport::samplesByTraceId()
{
    QFETCH(double, ratio);
    QFETCH(QByteArray, traceId);
    QFETCH(bool, sampled);
    QCOMPARE(switchyard::otlp::sampledAt(ratio, traceId), sampled);
}

void TestOtlpExport::fullQueueDropsWholeRequestsAndCountsThem()
{
    auto owned = std::make_unique<ScriptedPoster>();
    ScriptedPoster &poster = *owned;
    poster.hold();
    // Exports go only when a batch is full: the interval is never reached in this test.
    SpanExporter exporter(exportConfig(4, 12, 1h), std::move(owned));

    // Two requests of two spans make a batch, which leaves and is held at the collector.
    for (int number = 1; number <= 2; ++number)
        exporter.traceFinished(twoSpanTrace(number));
    QTRY_COMPARE(poster.posts(), 1);
    // Six more fill the queue of twelve spans; the seventh does not fit and is dropped whole.
    for (int number = 3; number <= 9; ++number)
        exporter.traceFinished(twoSpanTrace(number));
    QCOMPARE(exporter.counts().droppedSpans, quint64(2));
    QCOMPARE(exporter.counts().queuedSpans, quint64(16));
    QCOMPARE(exporter.counts().exportedSpans, quint64(0));

    poster.release();
    QTRY_COMPARE(exporter.counts().exportedSpans, quint64(16));
    const switchyard::telemetry::SpanExportCounts counts = exporter.counts();
    QVERIFY(counts.enabled);
    QCOMPARE(counts.queuedSpans, quint64(0));
    QCOMPARE(counts.droppedSpans, quint64(2));
    QCOMPARE(counts.abandonedSpans, quint64(0));
    QCOMPARE(counts.failedExports, quint64(0));
}

void TestOtlpExport::failedExportIsRetriedOnceThenAbandoned()
{
    auto owned = std::make_unique<ScriptedPoster>();
    ScriptedPoster &poster = *owned;
    poster.script({PostResult::Outcome::Retryable, PostResult::Outcome::Retryable});
    SpanExporter exporter(exportConfig(100, 100, 10ms), std::move(owned));

    exporter.traceFinished(twoSpanTrace(1));
    QTRY_COMPARE(exporter.counts().abandonedSpans, quint64(2));
    QCOMPARE(exporter.counts().failedExports, quint64(2));
    QCOMPARE(poster.posts(), 2);

    // The next request goes out on its own, and the collector takes it.
    exporter.traceFinished(twoSpanTrace(2));
    QTRY_COMPARE(exporter.counts().exportedSpans, quint64(2));
    QCOMPARE(poster.posts(), 3);
    QCOMPARE(exporter.counts().queuedSpans, quint64(0));
}

void TestOtlpExport::refusedExportIsNotRetried()
{
    auto owned = std::make_unique<ScriptedPoster>();
    ScriptedPoster &poster = *owned;
    poster.script({PostResult::Outcome::Refused});
    SpanExporter exporter(exportConfig(100, 100, 10ms), std::move(owned));

    exporter.traceFinished(twoSpanTrace(1));
    QTRY_COMPARE(exporter.counts().abandonedSpans, quint64(2));
    QCOMPARE(exporter.counts().failedExports, quint64(1));
    QCOMPARE(poster.posts(), 1);
}

QTEST_GUILESS_MAIN(TestOtlpExport)
#include "tst_otlp_export.moc"
