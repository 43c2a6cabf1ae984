// The OpenTelemetry export end to end: the real gateway in front of fake providers, real
// requests, and a collector on a loopback port of its own that receives the export. The spans
// it decodes must say what happened: the request as a SERVER span (under the client's span when
// it sent a traceparent), each provider attempt as a CLIENT span whose id the provider saw, the
// gateway's steps as INTERNAL spans, all in order in time. A collector that never answers fills
// the queue, and the drops are counted; a sampling ratio of 0 sends nothing.
#include "engine/engine.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "telemetry/trace.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace switchyard;
using namespace switchyard::testing;
using namespace std::chrono_literals;
using namespace Qt::StringLiterals;

namespace {

using Mode = FakeUpstream::Mode;
const QString kModel = u"test-model"_s;

// A fake provider standing in for a collector: it answers every POST with 200 and `{}`, the
// ExportTraceServiceResponse of a collector that took everything, and records what it got.
std::unique_ptr<FakeUpstream> collector()
{
    auto fake = std::make_unique<FakeUpstream>();
    fake->mode = Mode::Status;
    fake->status = 200;
    fake->statusBody = "{}";
    return fake;
}

config::OtlpExportConfig exportTo(quint16 port)
{
    config::OtlpExportConfig otlp;
    otlp.endpoint = QUrl(u"http://127.0.0.1:%1"_s.arg(port));
    otlp.headers = {{"X-Collector-Key", "ck-123", {}}};
    otlp.interval = 20ms; // a test waits for exports, so they go soon
    return otlp;
}

// `first` then `second`, both serving test-model: `second` has weight 0, so it is only ever the
// failover.
config::Config gatewayOf(const FakeUpstream &first, const FakeUpstream &second,
                         const config::OtlpExportConfig &otlp)
{
    config::ProviderConfig backup = providerFor(u"second"_s, second, {kModel});
    backup.weight = 0;
    config::Config config = gatewayConfig({providerFor(u"first"_s, first, {kModel}), backup});
    config.timeouts = shortTimeouts();
    config.resilience.retries.backoffBase = 0ms;
    config.resilience.retries.backoffJitter = 0ms;
    config.resilience.retries.backoffMax = 0ms;
    config.trace.otlp = otlp;
    return config;
}

// Every span the collector received, from every export request.
QList<QJsonObject> receivedSpans(const FakeUpstream &collector)
{
    QList<QJsonObject> spans;
    for (const FakeUpstream::ReceivedRequest &request : collector.requests()) {
        const QJsonObject body = QJsonDocument::fromJson(request.body).object();
        for (const QJsonValue &resourceSpans : body[u"resourceSpans"_s].toArray()) {
            for (const QJsonValue &scopeSpans : resourceSpans[u"scopeSpans"_s].toArray()) {
                for (const QJsonValue &span : scopeSpans[u"spans"_s].toArray())
                    spans.append(span.toObject());
            }
        }
    }
    return spans;
}

QList<QJsonObject> spansOfTrace(const FakeUpstream &collector, const QByteArray &traceId)
{
    QList<QJsonObject> spans;
    for (const QJsonObject &span : receivedSpans(collector)) {
        if (span[u"traceId"_s].toString().toLatin1() == traceId)
            spans.append(span);
    }
    return spans;
}

QList<QJsonObject> ofKind(const QList<QJsonObject> &spans, int kind)
{
    QList<QJsonObject> result;
    for (const QJsonObject &span : spans) {
        if (span[u"kind"_s].toInt() == kind)
            result.append(span);
    }
    return result;
}

QJsonObject attributeValue(const QJsonObject &span, const QString &key)
{
    for (const QJsonValue &attribute : span[u"attributes"_s].toArray()) {
        if (attribute[u"key"_s].toString() == key)
            return attribute[u"value"_s].toObject();
    }
    return {};
}

QString textOf(const QJsonObject &span, const QString &key)
{
    return attributeValue(span, key)[u"stringValue"_s].toString();
}

QString integerOf(const QJsonObject &span, const QString &key)
{
    return attributeValue(span, key)[u"intValue"_s].toString();
}

qint64 startOf(const QJsonValue &span)
{
    return span[u"startTimeUnixNano"_s].toString().toLongLong();
}

qint64 endOf(const QJsonValue &span)
{
    return span[u"endTimeUnixNano"_s].toString().toLongLong();
}

// The span id a provider's call carried in its traceparent: "00-{trace}-{span}-01".
QString spanIdSeenBy(const FakeUpstream::ReceivedRequest &request)
{
    return QString::fromLatin1(request.header("traceparent").mid(36, 16));
}

// What a span must be whatever it stands for: hex ids, times as decimal strings, inside its
// request's span.
void verifyShapeAndNesting(const QJsonObject &span, const QJsonObject &server)
{
    static const QRegularExpression spanId(u"^[0-9a-f]{16}$"_s);
    QVERIFY(spanId.match(span[u"spanId"_s].toString()).hasMatch());
    QVERIFY(span[u"startTimeUnixNano"_s].isString());
    QVERIFY(span[u"endTimeUnixNano"_s].isString());
    QVERIFY(startOf(span) > 0);
    QVERIFY(startOf(span) <= endOf(span));
    if (span == server)
        return;
    QCOMPARE(span[u"parentSpanId"_s].toString(), server[u"spanId"_s].toString());
    QVERIFY(startOf(span) >= startOf(server));
    QVERIFY(endOf(span) <= endOf(server));
}

// Spans that every export reaches in the end: 1 + one per span that is not a point event.
quint64 otlpSpansOf(Engine &engine)
{
    quint64 spans = 0;
    for (const telemetry::Trace &trace : engine.traces().latest(engine.traces().size())) {
        ++spans;
        for (const telemetry::Span &span : trace.spans)
            spans += span.kind == telemetry::SpanKind::Event ? 0 : 1;
    }
    return spans;
}

} // namespace

class OtlpExportTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void exportsARequestAsAServerSpanWithItsSteps();
    void exportsAFailoverAsOneClientSpanPerAttempt();
    void exportsAStreamUnderTheClientsSpan();
    void samplesWholeTracesByTraceId();
    void samplingRatioZeroExportsNothing();
    void fullQueueDropsAndCountsWhileRequestsGoOn();
    void unreachableCollectorIsRetriedOnceThenCounted();
};

void OtlpExportTest::exportsARequestAsAServerSpanWithItsSteps()
{
    FakeUpstream first;
    FakeUpstream second;
    const auto otlp = collector();
    auto engine = startEngine(gatewayOf(first, second, exportTo(otlp->port())));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false),
                {{"x-switchyard-tenant", "acme"}});
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    const QByteArray traceId = client.header("x-switchyard-trace-id");
    QTRY_VERIFY_WITH_TIMEOUT(!spansOfTrace(*otlp, traceId).isEmpty(), 5000);

    const FakeUpstream::ReceivedRequest &exported = otlp->requests().constFirst();
    QCOMPARE(exported.method, "POST"_ba);
    QCOMPARE(exported.path, "/v1/traces"_ba);
    QCOMPARE(exported.header("content-type"), "application/json"_ba);
    QCOMPARE(exported.header("x-collector-key"), "ck-123"_ba);
    const QJsonObject body = QJsonDocument::fromJson(exported.body).object();
    const QJsonValue resourceSpans = body[u"resourceSpans"_s][0];
    QCOMPARE(resourceSpans[u"scopeSpans"_s][0][u"scope"_s][u"name"_s].toString(), u"switchyard"_s);
    bool namedService = false;
    for (const QJsonValue &attribute : resourceSpans[u"resource"_s][u"attributes"_s].toArray())
        namedService |= attribute ==
                        QJsonObject{{u"key"_s, u"service.name"_s},
                                    {u"value"_s, QJsonObject{{u"stringValue"_s, u"switchyard"_s}}}};
    QVERIFY(namedService);

    const QList<QJsonObject> spans = spansOfTrace(*otlp, traceId);
    const QList<QJsonObject> servers = ofKind(spans, 2);
    QCOMPARE(servers.size(), 1);
    const QJsonObject server = servers.constFirst();
    QCOMPARE(server[u"name"_s].toString(), u"chat test-model"_s);
    QVERIFY(!server.contains(u"parentSpanId"_s));
    QCOMPARE(server[u"status"_s].toObject(), (QJsonObject{{u"code"_s, 1}}));
    QCOMPARE(textOf(server, u"gen_ai.operation.name"_s), u"chat"_s);
    QCOMPARE(textOf(server, u"gen_ai.provider.name"_s), u"first"_s);
    QCOMPARE(textOf(server, u"gen_ai.request.model"_s), u"test-model"_s);
    QCOMPARE(textOf(server, u"switchyard.request_id"_s),
             QString::fromLatin1(client.header("x-switchyard-request-id")));
    QCOMPARE(textOf(server, u"switchyard.tenant"_s), u"acme"_s);
    QCOMPARE(integerOf(server, u"http.response.status_code"_s), u"200"_s);
    QCOMPARE(integerOf(server, u"switchyard.attempts"_s), u"1"_s);
    QCOMPARE(
        attributeValue(
            server,
            u"gen_ai.response.finish_reasons"_s)[u"arrayValue"_s][u"values"_s][0][u"stringValue"_s]
            .toString(),
        u"stop"_s);

    const QList<QJsonObject> clients = ofKind(spans, 3);
    QCOMPARE(clients.size(), 1);
    QCOMPARE(clients.constFirst()[u"spanId"_s].toString(),
             spanIdSeenBy(first.requests().constFirst()));
    QCOMPARE(clients.constFirst()[u"name"_s].toString(), u"chat test-model"_s);
    QCOMPARE(clients.constFirst()[u"status"_s][u"code"_s].toInt(), 1);

    QStringList steps;
    for (const QJsonObject &step : ofKind(spans, 1))
        steps.append(step[u"name"_s].toString());
    QCOMPARE(steps, (QStringList{u"ingress"_s, u"admission"_s, u"routing"_s}));
    for (const QJsonObject &span : spans)
        verifyShapeAndNesting(span, server);
    // The steps come before the call, in the order they ran.
    const QList<QJsonObject> internal = ofKind(spans, 1);
    for (int index = 1; index < internal.size(); ++index)
        QVERIFY(startOf(internal[index]) >= endOf(internal[index - 1]));
    QVERIFY(startOf(clients.constFirst()) >= endOf(internal.constLast()));

    QTRY_COMPARE_WITH_TIMEOUT(engine->spanExportCounts().exportedSpans, quint64(spans.size()),
                              5000);
    QVERIFY(engine->snapshot().spanExport.enabled);
}

void OtlpExportTest::exportsAFailoverAsOneClientSpanPerAttempt()
{
    FakeUpstream first;
    first.mode = Mode::Status;
    first.status = 500;
    FakeUpstream second;
    const auto otlp = collector();
    auto engine = startEngine(gatewayOf(first, second, exportTo(otlp->port())));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), "second"_ba);
    const QByteArray traceId = client.header("x-switchyard-trace-id");
    QTRY_VERIFY_WITH_TIMEOUT(!spansOfTrace(*otlp, traceId).isEmpty(), 5000);

    const QList<QJsonObject> spans = spansOfTrace(*otlp, traceId);
    const QJsonObject server = ofKind(spans, 2).constFirst();
    QCOMPARE(server[u"status"_s][u"code"_s].toInt(), 1);
    QCOMPARE(integerOf(server, u"switchyard.attempts"_s), u"2"_s);
    QCOMPARE(textOf(server, u"gen_ai.provider.name"_s), u"second"_s);

    const QList<QJsonObject> attempts = ofKind(spans, 3);
    QCOMPARE(attempts.size(), 2);
    const QJsonObject failed = attempts[0];
    const QJsonObject answered = attempts[1];
    QCOMPARE(failed[u"spanId"_s].toString(), spanIdSeenBy(first.requests().constFirst()));
    QCOMPARE(answered[u"spanId"_s].toString(), spanIdSeenBy(second.requests().constFirst()));
    QCOMPARE(textOf(failed, u"gen_ai.provider.name"_s), u"first"_s);
    QCOMPARE(textOf(answered, u"gen_ai.provider.name"_s), u"second"_s);
    QCOMPARE(failed[u"status"_s][u"code"_s].toInt(), 2);
    QVERIFY(!textOf(failed, u"error.type"_s).isEmpty());
    QCOMPARE(failed[u"status"_s][u"message"_s].toString(), textOf(failed, u"error.type"_s));
    QCOMPARE(integerOf(failed, u"http.response.status_code"_s), u"500"_s);
    QCOMPARE(integerOf(failed, u"switchyard.attempt"_s), u"1"_s);
    QCOMPARE(answered[u"status"_s][u"code"_s].toInt(), 1);
    QVERIFY(attributeValue(answered, u"error.type"_s).isEmpty());
    QCOMPARE(integerOf(answered, u"switchyard.attempt"_s), u"2"_s);
    QVERIFY(startOf(answered) >= endOf(failed));
    for (const QJsonObject &span : spans)
        verifyShapeAndNesting(span, server);
}

void OtlpExportTest::exportsAStreamUnderTheClientsSpan()
{
    FakeUpstream first;
    FakeUpstream second;
    const auto otlp = collector();
    auto engine = startEngine(gatewayOf(first, second, exportTo(otlp->port())));
    QVERIFY(engine);
    TestClient client(engine->port());
    const QByteArray traceId = "4bf92f3577b34da6a3ce929d0e0e4736";

    client.post("/v1/chat/completions", chatBody("test-model", true),
                {{"traceparent", "00-" + traceId + "-00f067aa0ba902b7-01"}});
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);
    QTRY_VERIFY_WITH_TIMEOUT(!spansOfTrace(*otlp, traceId).isEmpty(), 5000);

    const QList<QJsonObject> spans = spansOfTrace(*otlp, traceId);
    const QJsonObject server = ofKind(spans, 2).constFirst();
    QCOMPARE(server[u"parentSpanId"_s].toString(), u"00f067aa0ba902b7"_s);
    QCOMPARE(attributeValue(server, u"switchyard.streamed"_s)[u"boolValue"_s], QJsonValue(true));
    QVERIFY(integerOf(server, u"switchyard.stream.chunks"_s).toLongLong() > 0);
    QVERIFY(integerOf(server, u"switchyard.stream.bytes"_s).toLongLong() > 0);
    const QJsonObject attempt = ofKind(spans, 3).constFirst();
    QCOMPARE(attempt[u"spanId"_s].toString(), spanIdSeenBy(first.requests().constFirst()));
    QCOMPARE(attempt[u"parentSpanId"_s].toString(), server[u"spanId"_s].toString());

    // The first byte is a point event of the call that sent it, inside that call's time.
    bool sawFirstByte = false;
    for (const QJsonValue &event : attempt[u"events"_s].toArray()) {
        if (event[u"name"_s].toString() != u"first byte"_s)
            continue;
        sawFirstByte = true;
        const qint64 at = event[u"timeUnixNano"_s].toString().toLongLong();
        QVERIFY(at >= startOf(attempt));
        QVERIFY(at <= endOf(attempt));
    }
    QVERIFY(sawFirstByte);
    for (const QJsonObject &span : spans)
        verifyShapeAndNesting(span, server);
}

void OtlpExportTest::samplesWholeTracesByTraceId()
{
    FakeUpstream first;
    FakeUpstream second;
    const auto otlp = collector();
    config::OtlpExportConfig half = exportTo(otlp->port());
    half.samplingRatio = 0.5;
    auto engine = startEngine(gatewayOf(first, second, half));
    QVERIFY(engine);
    // The rightmost 56 bits of the trace id decide: the upper half is kept.
    const QByteArray kept = "0af7651916cd43dd00800000000000aa";
    const QByteArray left = "0af7651916cd43dd007fffffffffffff";
    for (const QByteArray &traceId : {left, kept}) {
        TestClient client(engine->port());
        client.post("/v1/chat/completions", chatBody("test-model", false),
                    {{"traceparent", "00-" + traceId + "-00f067aa0ba902b7-01"}});
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
    }

    QTRY_VERIFY_WITH_TIMEOUT(!spansOfTrace(*otlp, kept).isEmpty(), 5000);
    QVERIFY(spansOfTrace(*otlp, left).isEmpty());
    QCOMPARE(quint64(spansOfTrace(*otlp, kept).size()), engine->spanExportCounts().exportedSpans);
}

void OtlpExportTest::samplingRatioZeroExportsNothing()
{
    FakeUpstream first;
    FakeUpstream second;
    const auto otlp = collector();
    config::OtlpExportConfig none = exportTo(otlp->port());
    none.samplingRatio = 0.0;
    auto engine = startEngine(gatewayOf(first, second, none));
    QVERIFY(engine);

    for (int request = 0; request < 5; ++request) {
        TestClient client(engine->port());
        client.post("/v1/chat/completions", chatBody("test-model", false));
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
    }
    // Each request reached the export before its trace was kept; none was queued.
    QTRY_COMPARE(engine->traces().size(), 5);
    const telemetry::SpanExportCounts counts = engine->spanExportCounts();
    QVERIFY(counts.enabled);
    QCOMPARE(counts.queuedSpans + counts.exportedSpans + counts.droppedSpans, quint64(0));
    // Several export intervals later, still nothing has been sent.
    QTest::qWait(200);
    QVERIFY(otlp->requests().isEmpty());
}

void OtlpExportTest::fullQueueDropsAndCountsWhileRequestsGoOn()
{
    FakeUpstream first;
    FakeUpstream second;
    FakeUpstream silent; // a collector that takes the request and never answers
    silent.mode = Mode::Hang;
    config::OtlpExportConfig tiny = exportTo(silent.port());
    tiny.batchSpans = 6;
    tiny.queueSpans = 12;
    tiny.timeout = 60s; // the held export outlasts the test
    auto engine = startEngine(gatewayOf(first, second, tiny));
    QVERIFY(engine);

    for (int request = 0; request < 10; ++request) {
        TestClient client(engine->port());
        client.post("/v1/chat/completions", chatBody("test-model", false));
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
    }
    QTRY_COMPARE(engine->traces().size(), 10);

    // One batch is held by the collector and the queue holds at most twelve spans: of ten
    // requests of five spans or more, most were dropped, and every span is counted once.
    const telemetry::SpanExportCounts counts = engine->spanExportCounts();
    QCOMPARE(counts.exportedSpans, quint64(0));
    QVERIFY(counts.droppedSpans >= otlpSpansOf(*engine) - 12 - 6);
    QVERIFY(counts.queuedSpans <= 12 + 6);
    QCOMPARE(counts.droppedSpans + counts.queuedSpans + counts.abandonedSpans,
             otlpSpansOf(*engine));
    QCOMPARE(engine->snapshot().spanExport.droppedSpans, counts.droppedSpans);
}

void OtlpExportTest::unreachableCollectorIsRetriedOnceThenCounted()
{
    FakeUpstream first;
    FakeUpstream second;
    auto engine = startEngine(gatewayOf(first, second, exportTo(closedLoopbackPort())));
    QVERIFY(engine);
    TestClient client(engine->port());

    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished());
    QCOMPARE(client.status(), 200);

    QTRY_COMPARE_WITH_TIMEOUT(engine->spanExportCounts().failedExports, quint64(2), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(engine->spanExportCounts().abandonedSpans, otlpSpansOf(*engine),
                              5000);
    const telemetry::SpanExportCounts counts = engine->spanExportCounts();
    QCOMPARE(counts.exportedSpans, quint64(0));
    QCOMPARE(counts.queuedSpans, quint64(0));

    // The same counts, where an operator's Prometheus sees them.
    TestClient scrape(engine->port());
    scrape.send("GET", "/metrics");
    QVERIFY(scrape.waitForFinished());
    const QByteArray text = scrape.body();
    QVERIFY(text.contains("switchyard_otlp_failed_exports_total 2\n"));
    QVERIFY(text.contains("switchyard_otlp_spans_total{outcome=\"abandoned\"} " +
                          QByteArray::number(counts.abandonedSpans) + "\n"));
    QVERIFY(text.contains("switchyard_otlp_spans_total{outcome=\"exported\"} 0\n"));
    QVERIFY(text.contains("switchyard_otlp_spans_queued 0\n"));
}

QTEST_GUILESS_MAIN(OtlpExportTest)
#include "tst_gateway_otlp.moc"
