// The Traces page on a fake bridge, fed scripted trace feeds with chosen timestamps, so every run
// draws the same picture: selecting a request watches and loads it, its text grows from the
// watched stream, the list holds still while a request is selected and "N new" resumes it,
// "copy as curl" leaves credentials out, and the screenshots in docs/screenshots.

#include "fake_engine_bridge.h"
#include "screenshots.h"
#include "ui/shell/main_window.h"
#include "ui/traces/trace_list_model.h"
#include "ui/traces/trace_waterfall_view.h"
#include "ui/traces/traces_page.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextDocumentFragment>

using namespace switchyard;
using namespace switchyard::ui;
using namespace Qt::StringLiterals;

namespace {

// 2024-03-12 14:00:00 UTC, in the zone the test pins.
const QDateTime kStart = QDateTime::fromMSecsSinceEpoch(1'710'252'000'000, Qt::UTC);
constexpr qint64 kMs = 1000; // microseconds

telemetry::Span span(const QString &name, double startMs, double durationMs,
                     telemetry::SpanKind kind = telemetry::SpanKind::Step,
                     const QString &detail = {})
{
    telemetry::Span span;
    span.name = name;
    span.startMicros = qint64(startMs * kMs);
    span.durationMicros = durationMs < 0 ? -1 : qint64(durationMs * kMs);
    span.kind = kind;
    span.detail = detail;
    return span;
}

telemetry::Span event(const QString &name, double atMs, const QString &detail = {})
{
    return span(name, atMs, 0, telemetry::SpanKind::Event, detail);
}

telemetry::Span attempt(int number, const QString &provider, const QString &upstreamModel,
                        double startMs, double durationMs, const QString &outcome,
                        const QString &errorClass, int httpStatus, const QString &detail)
{
    telemetry::Span span =
        ::span(u"upstream attempt"_s, startMs, durationMs, telemetry::SpanKind::Attempt, detail);
    span.attempt = number;
    span.provider = provider;
    span.upstreamModel = upstreamModel;
    span.outcome = outcome;
    span.errorClass = errorClass;
    span.httpStatus = httpStatus;
    span.spanId = "53995c3f42cd8ad" + QByteArray::number(number);
    return span;
}

// The request as a client sent it, credentials redacted as the engine stores them.
void sentAs(telemetry::Trace &trace, bool keepBodies)
{
    trace.method = "POST";
    trace.path = trace.endpoint.toUtf8();
    trace.requestHeaders = {
        {"host", "127.0.0.1:8080"},           {"authorization", "[redacted]"},
        {"content-type", "application/json"}, {"content-length", "164"},
        {"x-request-id", trace.requestId},    {"x-tenant", trace.tenant.toUtf8()}};
    trace.bodiesKept = keepBodies;
    if (keepBodies) {
        trace.requestBody = R"({"model":")" + trace.model.toUtf8() +
                            R"(","stream":true,"messages":[{"role":"user","content":)"
                            R"("Summarise the incident report in three lines."}]})";
    }
}

// A finished request of the background traffic.
telemetry::RequestRecord background(int index)
{
    static const QStringList models{u"gpt-4o-mini"_s, u"gpt-4o"_s, u"claude-sonnet"_s,
                                    u"llama-3.1-8b"_s};
    static const QStringList providers{u"sim-swift"_s, u"sim-steady"_s, u"sim-deep"_s};
    static const QStringList routes{QString(), u"long-context"_s, u"cheap"_s};
    static const QStringList tiers{u"fast"_s, u"premium"_s, QString()};
    telemetry::RequestRecord record;
    record.sequence = quint64(index + 1);
    record.requestId = "req-" + QByteArray::number(0x5a3c10 + index * 7919, 16);
    record.startedAtUtc = kStart.addMSecs(index * 430);
    record.endpoint = u"/v1/chat/completions"_s;
    record.tenant = index % 3 == 0 ? u"globex"_s : u"acme"_s;
    record.model = models.at(index % models.size());
    record.route = routes.at(index % routes.size());
    record.tier = tiers.at((index / 2) % tiers.size());
    record.provider = providers.at((index * 2) % providers.size());
    record.upstreamModel = record.model;
    record.streamed = index % 2 == 0;
    record.status = 200;
    record.outcome = u"ok"_s;
    record.attempts = 1;
    record.totalMicros = (180 + (index * 137) % 1900) * kMs;
    record.timeToFirstByteMicros = record.streamed ? (60 + (index * 53) % 300) * kMs : -1;
    record.inputTokens = 120 + (index * 97) % 900;
    record.outputTokens = 40 + (index * 31) % 400;
    record.finishReason = u"stop"_s;
    if (index == 5) {
        record.status = 429;
        record.outcome = u"rate_limited"_s;
        record.errorClass = u"rate_limited"_s;
        record.inputTokens = record.outputTokens = -1;
        record.timeToFirstByteMicros = -1;
        record.totalMicros = 42 * kMs;
    } else if (index == 11) {
        record.status = 502;
        record.outcome = u"upstream_error"_s;
        record.errorClass = u"server_error"_s;
        record.attempts = 3;
        record.inputTokens = record.outputTokens = -1;
        record.timeToFirstByteMicros = -1;
    } else if (index == 14) {
        record.degradedLevel = 1;
        record.model = u"gpt-4o"_s;
        record.upstreamModel = u"gpt-4o-mini"_s;
    }
    return record;
}

// A streamed chat answer that failed over: sim-swift answered 502, the executor backed off
// 250 ms and sim-steady streamed the answer.
telemetry::Trace failedOver()
{
    telemetry::Trace trace;
    trace.sequence = 40;
    trace.requestId = "req-9f2e41c7";
    trace.traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    trace.startedAtUtc = kStart.addMSecs(17'250);
    trace.endpoint = u"/v1/chat/completions"_s;
    trace.tenant = u"acme"_s;
    trace.model = u"gpt-4o-mini"_s;
    trace.tier = u"fast"_s;
    trace.provider = u"sim-steady"_s;
    trace.upstreamModel = u"steady-large"_s;
    trace.streamed = true;
    trace.status = 200;
    trace.outcome = u"ok"_s;
    trace.errorClass = u"server_error"_s;
    trace.attempts = 2;
    trace.totalMicros = 1842 * kMs;
    trace.timeToFirstByteMicros = 788 * kMs;
    trace.inputTokens = 412;
    trace.outputTokens = 96;
    trace.finishReason = u"stop"_s;
    trace.spans = {
        span(u"ingress"_s, 0, 0.4, telemetry::SpanKind::Step, u"chat, 164 bytes"_s),
        span(u"admission"_s, 0.4, 0.1),
        span(u"routing"_s, 0.5, 0.6, telemetry::SpanKind::Step, u"default route, tier fast"_s),
        event(u"choice"_s, 1.1, u"sim-swift first by score, then sim-steady"_s),
        attempt(1, u"sim-swift"_s, u"swift-mini"_s, 1.2, 300.8, u"failure"_s, u"server_error"_s,
                502, u"HTTP 502 from sim-swift (server_error)"_s),
        event(u"retry"_s, 302, u"server_error is retryable; attempt 2 of 3 after 250 ms"_s),
        span(u"backoff"_s, 302, 250, telemetry::SpanKind::Wait,
             u"retrying server_error after 250 ms"_s),
        attempt(2, u"sim-steady"_s, u"steady-large"_s, 552, 1289, u"success"_s, QString(), 200,
                u"sim-steady HTTP 200"_s),
        event(u"first byte"_s, 788, u"first event after 236.0 ms"_s),
        event(u"usage"_s, 1836, u"412 in, 96 out"_s),
        event(u"completion"_s, 1842, u"ok"_s),
    };
    trace.spans[7].bytes = 6120;
    trace.explainSteps = {
        u"rule: no rule matched; the default route applies"_s,
        u"tier: fast (from the model's default tier)"_s,
        u"candidates: sim-swift (score 0.82), sim-steady (score 0.71)"_s,
        u"canary: none on this route"_s,
        u"breakers: all closed"_s,
        u"order: sim-swift, then sim-steady on failure"_s,
    };
    // Chunks every ~11 ms with the odd stall, the way a real provider's tokens arrive.
    for (int i = 0; i < 96; ++i) {
        const qint64 at =
            788 * kMs + qint64(i) * 10'900 + (i > 40 ? 90'000 : 0) + (i > 70 ? 60'000 : 0);
        trace.chunks.push_back({at, qint32(48 + (i * 37) % 60)});
    }
    trace.chunkCount = 96;
    trace.chunkBytes = 7300;
    sentAs(trace, true);
    trace.responseBody =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Checkout errors rose at "
        "14:02 after a bad deploy.\"}}]}\n\n"
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
        "data: [DONE]\n\n";
    return trace;
}

const QStringList kPoem{u"The incident began at 14:02"_s,
                        u" when the checkout"_s,
                        u" service"_s,
                        u" started returning 502s"_s,
                        u" for one in five requests."_s,
                        u"\n\n"_s,
                        u"Cause:"_s,
                        u" a deploy"_s,
                        u" shipped"_s,
                        u" a connection pool"_s,
                        u" capped at four"_s,
                        u" connections,"_s,
                        u" so bursts queued"_s,
                        u" behind"_s,
                        u" slow payment calls"_s,
                        u" and timed out."_s,
                        u"\n\n"_s,
                        u"Fix:"_s,
                        u" the pool limit"_s,
                        u" was restored"_s,
                        u" to 64"_s,
                        u" at 14:19;"_s,
                        u" error rates"_s,
                        u" returned"_s,
                        u" to baseline"_s,
                        u" within two minutes."_s};

QByteArray chatChunk(const QString &content)
{
    QJsonObject delta{{u"content"_s, content}};
    return "{\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
           "\"delta\":" +
           QJsonDocument(delta).toJson(QJsonDocument::Compact) + "}]}";
}

// A request streaming from sim-deep, `pieces` chunks in.
telemetry::Trace streaming(int pieces)
{
    telemetry::Trace trace;
    trace.requestId = "req-c41d7a02";
    trace.traceId = "0af7651916cd43dd8448eb211c80319c";
    trace.startedAtUtc = kStart.addMSecs(18'020);
    trace.endpoint = u"/v1/chat/completions"_s;
    trace.tenant = u"globex"_s;
    trace.model = u"claude-sonnet"_s;
    trace.route = u"long-context"_s;
    trace.tier = u"premium"_s;
    trace.provider = u"sim-deep"_s;
    trace.upstreamModel = u"deep-xl"_s;
    trace.streamed = true;
    trace.attempts = 1;
    const qint64 firstByte = 412 * kMs;
    trace.timeToFirstByteMicros = firstByte;
    trace.spans = {
        span(u"ingress"_s, 0, 0.5, telemetry::SpanKind::Step, u"chat, 2,310 bytes"_s),
        span(u"admission"_s, 0.5, 0.1),
        span(u"routing"_s, 0.6, 0.7, telemetry::SpanKind::Step,
             u"rule long-context, tier premium"_s),
        event(u"choice"_s, 1.3, u"sim-deep: the only premium endpoint with room"_s),
        attempt(1, u"sim-deep"_s, u"deep-xl"_s, 1.4, -1, QString(), QString(), 200,
                u"sim-deep, attempt 1 (primary, tier premium)"_s),
        event(u"response head"_s, 380, u"HTTP 200"_s),
        event(u"first byte"_s, 412, u"first event after 410.6 ms"_s),
    };
    trace.explainSteps = {u"rule: long-context matched (estimated input tokens > 1,500)"_s,
                          u"tier: premium (set by the rule)"_s,
                          u"candidates: sim-deep (score 0.77)"_s, u"breakers: sim-deep closed"_s};
    qint64 at = firstByte;
    for (int i = 0; i < pieces; ++i) {
        trace.chunks.push_back({at, qint32(chatChunk(kPoem.at(i % kPoem.size())).size())});
        at += 38 * kMs + (i % 5 == 4 ? 70 * kMs : 0) + (i % 3) * 9 * kMs;
    }
    trace.chunkCount = quint32(pieces);
    trace.totalMicros = at + 20 * kMs;
    sentAs(trace, false);
    return trace;
}

// What the status bar shows in the pictures: the demo's usual address and rate.
EngineSnapshot demoSnapshot()
{
    EngineSnapshot snapshot;
    snapshot.listenAddress = u"127.0.0.1:8080"_s;
    snapshot.requestsPerSecond = 12.5;
    return snapshot;
}

telemetry::TraceFeed backgroundFeed(int count)
{
    telemetry::TraceFeed feed;
    for (int i = 0; i < count; ++i)
        feed.finished.append(background(i));
    return feed;
}

} // namespace

class TracesPageTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void selectionWatchesAndLoadsAndDeselectionUnwatches();
    void watchedStreamGrowsTheTextAndEndsInItsFinishReason();
    void errorEventShowsAsTheErrorTheClientSaw();
    void selectedRowHoldsTheListAndNewButtonResumes();
    void scrollingAwayFromTheTopHoldsTheList();
    void filtersComeFromWhatTheListHolds();
    void copyAsCurlLeavesCredentialsOut();
    void bodiesNotKeptAreExplained();
    void theDetailShowsThePromptCacheAndTheCost_data();
    void theDetailShowsThePromptCacheAndTheCost();
    void liveStreamScreenshot();
    void failoverScreenshot();

private:
    QString screenshotPath(const QString &fileName) const;
    QTemporaryDir m_scratch;
};

void TracesPageTest::initTestCase()
{
    qputenv("TZ", "UTC");
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
    QVERIFY(m_scratch.isValid());
}

QString TracesPageTest::screenshotPath(const QString &fileName) const
{
    return switchyard::testing::screenshotPath(m_scratch.path(), fileName);
}

void TracesPageTest::theDetailShowsThePromptCacheAndTheCost_data()
{
    QTest::addColumn<qint64>("cacheRead");
    QTest::addColumn<qint64>("cacheWrite");
    QTest::addColumn<bool>("priced");
    QTest::addColumn<double>("saved");
    QTest::addColumn<QString>("facts"); // the end of the facts line
    QTest::newRow("read from the cache")
        << qint64(384) << qint64(-1) << true << 0.0002
        << u"412 → 96 tokens  ·  384 cached  ·  cost $0.0011, saved $0.0002"_s;
    QTest::newRow("written to it, at a premium")
        << qint64(0) << qint64(400) << true << -0.0001
        << u"412 → 96 tokens  ·  0 cached, 400 written to the cache  ·  cost $0.0011, $0.0001 "
           u"more for cache writes"_s;
    QTest::newRow("a tiny saving keeps two digits")
        << qint64(384) << qint64(-1) << true << 0.0000288
        << u"384 cached  ·  cost $0.0011, saved $0.000029"_s;
    QTest::newRow("no cache prices")
        << qint64(384) << qint64(-1) << true << 0.0 << u"384 cached  ·  cost $0.0011"_s;
    QTest::newRow("no cache, no price")
        << qint64(-1) << qint64(-1) << false << 0.0 << u"412 → 96 tokens"_s;
}

void TracesPageTest::theDetailShowsThePromptCacheAndTheCost()
{
    QFETCH(qint64, cacheRead);
    QFETCH(qint64, cacheWrite);
    QFETCH(bool, priced);
    QFETCH(double, saved);
    QFETCH(QString, facts);
    telemetry::Trace trace = failedOver();
    trace.cacheReadTokens = cacheRead;
    trace.cacheWriteTokens = cacheWrite;
    trace.priced = priced;
    trace.costUsd = priced ? 0.0011 : 0.0;
    trace.cacheSavedUsd = saved;
    testing::FakeEngineBridge bridge;
    bridge.traces.insert(trace.requestId, trace);
    TracesPage page(bridge);
    telemetry::TraceFeed feed;
    feed.finished.append(trace);
    bridge.publishFeed(feed);
    QVERIFY(page.selectRequest(trace.requestId));
    const QString shown =
        QTextDocumentFragment::fromHtml(page.findChild<QLabel *>(u"traceDetailFacts"_s)->text())
            .toPlainText()
            .replace(QChar::Nbsp, u' ');
    QVERIFY2(shown.endsWith(facts), qPrintable(shown));
}

void TracesPageTest::selectionWatchesAndLoadsAndDeselectionUnwatches()
{
    testing::FakeEngineBridge bridge;
    bridge.traces.insert("req-9f2e41c7", failedOver());
    TracesPage page(bridge);
    telemetry::TraceFeed feed = backgroundFeed(4);
    feed.finished.append(failedOver());
    bridge.publishFeed(feed);

    QVERIFY(page.selectRequest("req-9f2e41c7"));
    QCOMPARE(bridge.watched, QByteArray("req-9f2e41c7"));
    QCOMPARE(bridge.loadedTraces, QByteArrayList{"req-9f2e41c7"});
    QCOMPARE(page.waterfall()->trace().spans.size(), 11);
    QCOMPARE(page.findChild<QListWidget *>(u"traceExplainSteps"_s)->count(), 6);
    // The finished answer's kept body is the text the client saw.
    QCOMPARE(page.liveText().text(), u"Checkout errors rose at 14:02 after a bad deploy."_s);
    QCOMPARE(page.findChild<QLabel *>(u"traceLiveEnd"_s)->text(), u"Finished: stop"_s);

    page.listView()->clearSelection();
    QCOMPARE(bridge.watched, QByteArray());
    QVERIFY(page.selectedRequestId().isEmpty());
    QVERIFY(!page.waterfall()->hasTrace());
}

void TracesPageTest::watchedStreamGrowsTheTextAndEndsInItsFinishReason()
{
    testing::FakeEngineBridge bridge;
    TracesPage page(bridge);
    telemetry::TraceFeed feed;
    feed.running = {streaming(0)};
    feed.runningCount = 1;
    bridge.traces.insert("req-c41d7a02", streaming(0));
    bridge.publishFeed(feed);
    QVERIFY(page.selectRequest("req-c41d7a02"));
    QCOMPARE(bridge.watched, QByteArray("req-c41d7a02"));

    // Three feeds, each with the events relayed since the last, one per line.
    int sent = 0;
    for (const int upTo : {3, 7, 12}) {
        feed = {};
        feed.running = {streaming(upTo)};
        feed.runningCount = 1;
        feed.watchedId = "req-c41d7a02";
        for (; sent < upTo; ++sent)
            feed.watchedData += chatChunk(kPoem.at(sent)) + '\n';
        bridge.publishFeed(feed);
        QCOMPARE(page.liveTextView()->toPlainText(), kPoem.mid(0, upTo).join(QString()));
        QCOMPARE(page.waterfall()->trace().chunks.size(), size_t(upTo));
    }
    QVERIFY(page.findChild<QLabel *>(u"traceLiveEnd"_s)->text().startsWith(u"Streaming"_s));

    feed = {};
    feed.watchedId = "req-c41d7a02";
    feed.watchedData =
        R"({"id":"chatcmpl-7","choices":[{"index":0,"delta":{},"finish_reason":"length"}]})"
        "\n[DONE]\n";
    telemetry::Trace done = streaming(12);
    done.status = 200;
    done.outcome = u"ok"_s;
    done.finishReason = u"length"_s;
    done.spans[4].durationMicros = done.totalMicros - done.spans[4].startMicros;
    done.spans[4].outcome = u"success"_s;
    bridge.traces.insert("req-c41d7a02", done);
    feed.finished = {done};
    bridge.publishFeed(feed);
    QCOMPARE(page.findChild<QLabel *>(u"traceLiveEnd"_s)->text(), u"Finished: length"_s);
    // Finished: the whole trace is loaded again, and the streamed text stays.
    QCOMPARE(bridge.loadedTraces.size(), 2);
    QCOMPARE(page.liveTextView()->toPlainText(), kPoem.mid(0, 12).join(QString()));
    QCOMPARE(page.listModel()->rowAt(0).running, false);
}

void TracesPageTest::errorEventShowsAsTheErrorTheClientSaw()
{
    testing::FakeEngineBridge bridge;
    TracesPage page(bridge);
    telemetry::TraceFeed feed;
    feed.running = {streaming(2)};
    feed.runningCount = 1;
    bridge.publishFeed(feed);
    QVERIFY(page.selectRequest("req-c41d7a02"));
    feed.watchedId = "req-c41d7a02";
    feed.watchedData = chatChunk(u"The inci"_s) + "\n" +
                       R"({"error":{"message":"sim-deep stopped answering mid-stream",)"
                       R"("type":"server_error","code":"upstream_error"}})"
                       "\n";
    bridge.publishFeed(feed);
    QCOMPARE(page.liveTextView()->toPlainText(), u"The inci"_s);
    QCOMPARE(page.findChild<QLabel *>(u"traceLiveEnd"_s)->text(),
             u"Error the client saw: upstream_error: sim-deep stopped answering mid-stream"_s);
}

void TracesPageTest::selectedRowHoldsTheListAndNewButtonResumes()
{
    testing::FakeEngineBridge bridge;
    TracesPage page(bridge);
    page.resize(1200, 800);
    bridge.publishFeed(backgroundFeed(3));
    QVERIFY(page.selectRequest(background(1).requestId));
    QVERIFY(page.listModel()->paused());
    QVERIFY(page.newRequestsButton()->isHidden());

    telemetry::TraceFeed feed;
    feed.finished = {background(3), background(4)};
    bridge.publishFeed(feed);
    QCOMPARE(page.listModel()->rowCount(), 3);
    QVERIFY(!page.newRequestsButton()->isHidden());
    QCOMPARE(page.newRequestsButton()->text(), u"↑ 2 new"_s);
    // The selection stays on its request.
    QCOMPARE(page.selectedRequestId(), background(1).requestId);

    QTest::mouseClick(page.newRequestsButton(), Qt::LeftButton);
    QVERIFY(!page.listModel()->paused());
    QCOMPARE(page.listModel()->rowCount(), 5);
    QCOMPARE(page.listModel()->rowAt(0).record.requestId, background(4).requestId);
    QVERIFY(page.newRequestsButton()->isHidden());
    QVERIFY(page.selectedRequestId().isEmpty());
    QCOMPARE(bridge.watched, QByteArray());
}

void TracesPageTest::scrollingAwayFromTheTopHoldsTheList()
{
    testing::FakeEngineBridge bridge;
    TracesPage page(bridge);
    page.resize(1200, 700);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    bridge.publishFeed(backgroundFeed(60));
    QScrollBar *scroll = page.listView()->verticalScrollBar();
    QTRY_VERIFY(scroll->maximum() > 0); // the view lays out its new rows from the event loop
    scroll->setValue(scroll->maximum());
    QVERIFY(page.listModel()->paused());

    telemetry::TraceFeed feed;
    feed.finished = {background(60)};
    bridge.publishFeed(feed);
    QCOMPARE(page.listModel()->rowCount(), 60);
    QCOMPARE(page.newRequestsButton()->text(), u"↑ 1 new"_s);

    scroll->setValue(0);
    QVERIFY(!page.listModel()->paused());
    QCOMPARE(page.listModel()->rowCount(), 61);
    QVERIFY(page.newRequestsButton()->isHidden());
}

void TracesPageTest::filtersComeFromWhatTheListHolds()
{
    testing::FakeEngineBridge bridge;
    TracesPage page(bridge);
    bridge.publishFeed(backgroundFeed(18));
    auto *providers = page.findChild<QComboBox *>(u"traceProviderFilter"_s);
    QCOMPARE(providers->count(), 4); // all, then the three providers seen
    QCOMPARE(providers->itemText(1), u"sim-deep"_s);
    auto *routes = page.findChild<QComboBox *>(u"traceRouteFilter"_s);
    QVERIFY(routes->findData(u"default"_s) > 0);

    page.findChild<QCheckBox *>(u"traceErrorsOnly"_s)->setChecked(true);
    QCOMPARE(page.listView()->model()->rowCount(), 2);
    page.findChild<QCheckBox *>(u"traceErrorsOnly"_s)->setChecked(false);

    auto *search = page.findChild<QLineEdit *>(u"traceIdSearch"_s);
    search->setText(QString::fromLatin1(background(7).requestId.toUpper()));
    page.applyFilters(); // rather than waiting for the pause after typing
    QCOMPARE(page.listView()->model()->rowCount(), 1);
    QCOMPARE(
        page.listView()->model()->index(0, 0).data(TraceListModel::RequestIdRole).toByteArray(),
        background(7).requestId);
    search->clear();

    page.findChild<QSpinBox *>(u"traceSlowerThan"_s)->setValue(1500);
    for (int row = 0; row < page.listView()->model()->rowCount(); ++row) {
        const QByteArray id = page.listView()
                                  ->model()
                                  ->index(row, 0)
                                  .data(TraceListModel::RequestIdRole)
                                  .toByteArray();
        QVERIFY(page.listModel()->rowAt(page.listModel()->rowOf(id)).record.totalMicros >
                1500 * kMs);
    }
}

void TracesPageTest::copyAsCurlLeavesCredentialsOut()
{
    testing::FakeEngineBridge bridge;
    bridge.traces.insert("req-9f2e41c7", failedOver());
    TracesPage page(bridge);
    telemetry::TraceFeed feed;
    feed.finished = {failedOver()};
    bridge.publishFeed(feed);
    QVERIFY(page.selectRequest("req-9f2e41c7"));

    // Some headless platforms have no clipboard; there the button's own word is the proof.
    QClipboard *clipboard = QGuiApplication::clipboard();
    clipboard->setText(u"probe"_s);
    const bool clipboardWorks = clipboard->text() == u"probe"_s;
    QVERIFY(page.copyCurlButton()->isEnabled());
    page.copyCurlButton()->click();
    QCOMPARE(page.findChild<QLabel *>(u"traceCopyHint"_s)->text(), u"Copied to the clipboard"_s);
    if (clipboardWorks)
        QCOMPARE(clipboard->text(), page.curlCommand());
    const QString copied = page.curlCommand();
    QVERIFY2(copied.startsWith(u"curl -sS -N -X POST 'http://127.0.0.1:1/v1/chat/completions' \\\n"
                               "  -H \"authorization: Bearer $OPENAI_API_KEY\" \\\n"
                               "  -H 'content-type: application/json' \\\n"
                               "  -H 'x-request-id: req-9f2e41c7' \\\n"
                               "  -H 'x-tenant: acme' \\\n"
                               "  --data-raw '{\"model\":\"gpt-4o-mini\",\"stream\":true,"_s),
             qPrintable(copied));
    QVERIFY(!copied.contains(u"redacted"_s));
}

void TracesPageTest::bodiesNotKeptAreExplained()
{
    testing::FakeEngineBridge bridge;
    telemetry::Trace trace = failedOver();
    sentAs(trace, false);
    trace.responseBody.clear();
    bridge.traces.insert(trace.requestId, trace);
    TracesPage page(bridge);
    telemetry::TraceFeed feed;
    feed.finished = {trace};
    bridge.publishFeed(feed);
    QVERIFY(page.selectRequest(trace.requestId));

    QVERIFY(page.curlCommand().startsWith(u"# The request body was not kept"_s));
    const QString request = page.findChild<QPlainTextEdit *>(u"traceRequestText"_s)->toPlainText();
    QVERIFY2(request.contains(u"trace.keep_bodies: true"_s), qPrintable(request));
    QVERIFY(request.contains(u"authorization: [redacted]"_s));
    QVERIFY(page.liveTextView()->placeholderText().contains(u"trace.keep_bodies"_s));
}

void TracesPageTest::liveStreamScreenshot()
{
    testing::FakeEngineBridge bridge;
    bridge.publish(demoSnapshot());
    MainWindow window(bridge);
    window.pageTabs()->setCurrentWidget(window.tracesPage());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    TracesPage &page = *window.tracesPage();

    telemetry::TraceFeed feed = backgroundFeed(40);
    feed.finished.append(failedOver());
    telemetry::Trace other = streaming(0);
    other.requestId = "req-e07b3391";
    other.startedAtUtc = kStart.addMSecs(18'400);
    other.provider = u"sim-swift"_s;
    other.model = u"gpt-4o-mini"_s;
    other.route.clear();
    other.tier = u"fast"_s;
    other.totalMicros = 260 * kMs;
    other.timeToFirstByteMicros = -1;
    feed.running = {other, streaming(1)};
    feed.runningCount = 2;
    bridge.publishFeed(feed);
    QVERIFY(page.selectRequest("req-c41d7a02"));

    int sent = 0;
    for (const int upTo : {6, 12, 19}) {
        feed = {};
        other.totalMicros += 600 * kMs;
        feed.running = {other, streaming(upTo)};
        feed.runningCount = 2;
        feed.watchedId = "req-c41d7a02";
        for (; sent < upTo; ++sent)
            feed.watchedData += chatChunk(kPoem.at(sent)) + '\n';
        bridge.publishFeed(feed);
    }
    QCOMPARE(page.liveTextView()->toPlainText(), kPoem.mid(0, 19).join(QString()));
    const WaterfallLayout layout = page.waterfall()->layout();
    QCOMPARE(layout.chunkXs().size(), 19);
    QVERIFY(layout.rows()[4].open);

    QCoreApplication::processEvents(); // the layouts' pending requests, as a running console has
    const QString path = screenshotPath(u"traces_live.png"_s);
    QVERIFY2(window.grab().save(path), qPrintable(path));
    qInfo("traces screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));
}

void TracesPageTest::failoverScreenshot()
{
    testing::FakeEngineBridge bridge;
    bridge.traces.insert("req-9f2e41c7", failedOver());
    bridge.publish(demoSnapshot());
    MainWindow window(bridge);
    window.pageTabs()->setCurrentWidget(window.tracesPage());
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    TracesPage &page = *window.tracesPage();

    telemetry::TraceFeed feed = backgroundFeed(40);
    feed.finished.insert(17, failedOver());
    bridge.publishFeed(feed);
    QVERIFY(page.selectRequest("req-9f2e41c7"));
    page.listView()->scrollTo(page.listView()->currentIndex());

    // The first attempt failed, the backoff fills the gap, the second answered.
    const WaterfallLayout layout = page.waterfall()->layout();
    const WaterfallLayout::Row &first = layout.rows()[4];
    const WaterfallLayout::Row &backoff = layout.rows()[6];
    const WaterfallLayout::Row &second = layout.rows()[7];
    QCOMPARE(first.tone, AttemptTone::Failure);
    QCOMPARE(backoff.kind, telemetry::SpanKind::Wait);
    QCOMPARE(second.tone, AttemptTone::Success);
    QVERIFY(qAbs(first.x + first.width - backoff.x) < 0.5);
    QVERIFY(qAbs(backoff.x + backoff.width - second.x) < 0.5);
    QCOMPARE(TraceWaterfallView::spanCaption(failedOver().spans[4]),
             u"HTTP 502 · server_error · 301 ms"_s);
    const QString tip = page.waterfall()->toolTipAt(page.waterfall()->rowRect(6).center());
    QVERIFY2(tip.contains(u"retrying server_error after 250 ms"_s), qPrintable(tip));

    QCoreApplication::processEvents(); // the layouts' pending requests, as a running console has
    const QString path = screenshotPath(u"traces_failover.png"_s);
    QVERIFY2(window.grab().save(path), qPrintable(path));
    qInfo("traces screenshot: %s", qPrintable(QDir::toNativeSeparators(path)));
}

QTEST_MAIN(TracesPageTest)
#include "tst_traces_page.moc"
