// The Traces page's pieces as plain values: the request list (newest first, running rows
// replaced by finished ones, the admin API's filters, pause with "N new", the bound), the
// waterfall's time-to-pixel maths, the live text assembled from streamed events, and "copy as
// curl".

#include "ui/traces/curl_command.h"
#include "ui/traces/live_text.h"
#include "ui/traces/trace_list_model.h"
#include "ui/traces/trace_waterfall_layout.h"

#include <QAbstractItemModelTester>
#include <QSet>
#include <QSignalSpy>
#include <QTest>

using namespace switchyard;
using namespace switchyard::ui;
using namespace Qt::StringLiterals;

namespace {

// 2024-03-12 14:00:00 UTC.
const QDateTime kStart = QDateTime::fromMSecsSinceEpoch(1'710'252'000'000, Qt::UTC);

telemetry::RequestRecord record(const QByteArray &id, int startMs, int status = 200,
                                const QString &provider = u"sim-swift"_s, qint64 totalMs = 120)
{
    telemetry::RequestRecord record;
    record.requestId = id;
    record.startedAtUtc = kStart.addMSecs(startMs);
    record.model = u"gpt-4o-mini"_s;
    record.provider = provider;
    record.status = status;
    record.outcome = status < 400 ? u"ok"_s : u"upstream_error"_s;
    record.attempts = 1;
    record.totalMicros = totalMs * 1000;
    return record;
}

telemetry::Trace running(const QByteArray &id, int startMs, qint64 soFarMs)
{
    telemetry::Trace trace;
    static_cast<telemetry::RequestRecord &>(trace) =
        record(id, startMs, 0, u"sim-swift"_s, soFarMs);
    trace.outcome.clear();
    return trace;
}

QByteArrayList shownIds(const QAbstractItemModel &model)
{
    QByteArrayList ids;
    for (int row = 0; row < model.rowCount(); ++row)
        ids.append(model.index(row, 0).data(TraceListModel::RequestIdRole).toByteArray());
    return ids;
}

telemetry::Span span(const QString &name, qint64 startMs, qint64 durationMs,
                     telemetry::SpanKind kind, const QString &outcome = {})
{
    telemetry::Span span;
    span.name = name;
    span.startMicros = startMs * 1000;
    span.durationMicros = durationMs < 0 ? -1 : durationMs * 1000;
    span.kind = kind;
    span.outcome = outcome;
    return span;
}

} // namespace

Q_DECLARE_METATYPE(switchyard::telemetry::TraceFilter)
Q_DECLARE_METATYPE(switchyard::ui::AttemptTone)

class TraceModelsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void listIsNewestFirst();
    void runningRowGrowsThenIsReplacedByItsFinishedRecord();
    void runningRowThatEndedOutOfSightLeaves();
    void filtersMatchTheAdminApi_data();
    void filtersMatchTheAdminApi();
    void pauseHoldsNewRowsAndCountsThem();
    void listKeepsTheNewestFiveThousand();

    void barsShareOneAxisWithGapsForWaits();
    void attemptsAreColouredByOutcome_data();
    void attemptsAreColouredByOutcome();
    void openSpanRunsToTheTimeSoFar();
    void axisTicksAreRoundMilliseconds();
    void chunkGapsGiveMedianMaxAndHistogram();

    void liveTextFromChatChunks();
    void liveTextFromResponsesEvents();
    void liveTextFromAnthropicEvents();
    void liveTextEndsInTheErrorEventTheClientSaw();
    void liveTextFromAKeptBody_data();
    void liveTextFromAKeptBody();

    void curlReproducesTheRequestWithoutCredentials();
    void curlWithoutKeptBodiesSaysSo();
    void curlQuotesForTheShell();
};

void TraceModelsTest::initTestCase()
{
    qputenv("TZ", "UTC");
    QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
}

void TraceModelsTest::listIsNewestFirst()
{
    TraceListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    telemetry::TraceFeed feed;
    feed.finished = {record("a", 0), record("b", 100)};
    model.applyFeed(feed);
    QCOMPARE(shownIds(model), (QByteArrayList{"b", "a"}));

    feed.finished = {record("c", 200)};
    model.applyFeed(feed);
    QCOMPARE(shownIds(model), (QByteArrayList{"c", "b", "a"}));
    QCOMPARE(model.index(0, TraceListModel::TimeColumn).data().toString(), u"14:00:00.200"_s);
    QCOMPARE(model.index(0, TraceListModel::StatusColumn).data().toString(), u"200"_s);
    QCOMPARE(model.index(0, TraceListModel::RouteColumn).data().toString(), u"default"_s);
}

void TraceModelsTest::runningRowGrowsThenIsReplacedByItsFinishedRecord()
{
    TraceListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

    telemetry::TraceFeed feed;
    feed.finished = {record("earlier", 0)};
    feed.running = {running("stream-1", 50, 100)};
    feed.runningCount = 1;
    model.applyFeed(feed);
    QCOMPARE(shownIds(model), (QByteArrayList{"stream-1", "earlier"}));
    QCOMPARE(model.index(0, TraceListModel::StatusColumn).data().toString(), u"running"_s);
    QCOMPARE(model.index(0, TraceListModel::LatencyColumn).data().toString(), u"100 ms"_s);
    QCOMPARE(model.index(0, 0).data(TraceListModel::RunningRole).toBool(), true);

    feed = {};
    feed.running = {running("stream-1", 50, 850)};
    feed.runningCount = 1;
    model.applyFeed(feed);
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, TraceListModel::LatencyColumn).data().toString(), u"850 ms"_s);
    QCOMPARE(changed.size(), 1);
    QCOMPARE(changed.first().at(0).toModelIndex().column(), int(TraceListModel::LatencyColumn));

    feed = {};
    telemetry::RequestRecord done = record("stream-1", 50, 502, u"sim-steady"_s, 1240);
    done.attempts = 2;
    feed.finished = {done};
    model.applyFeed(feed);
    QCOMPARE(shownIds(model), (QByteArrayList{"stream-1", "earlier"}));
    QCOMPARE(model.index(0, 0).data(TraceListModel::RunningRole).toBool(), false);
    QCOMPARE(model.index(0, TraceListModel::StatusColumn).data().toString(),
             u"502 upstream_error"_s);
    QCOMPARE(model.index(0, TraceListModel::LatencyColumn).data().toString(), u"1.24 s"_s);
    QCOMPARE(model.index(0, TraceListModel::AttemptsColumn).data().toString(), u"2"_s);
    QCOMPARE(inserted.size(), 1); // one insertion of both rows; never re-inserted
}

void TraceModelsTest::runningRowThatEndedOutOfSightLeaves()
{
    TraceListModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    telemetry::TraceFeed feed;
    feed.running = {running("gone", 0, 10)};
    feed.runningCount = 1;
    model.applyFeed(feed);
    QCOMPARE(model.rowCount(), 1);

    // More running than listed: an unlisted row may still be running, so it stays.
    feed = {};
    feed.runningCount = 60;
    model.applyFeed(feed);
    QCOMPARE(model.rowCount(), 1);

    // Its finished record was left out of a busy feed: the row leaves, and the count says so.
    feed = {};
    feed.finishedLeftOut = 3;
    model.applyFeed(feed);
    QCOMPARE(model.rowCount(), 0);
    QCOMPARE(model.droppedCount(), quint64(3));
}

void TraceModelsTest::filtersMatchTheAdminApi_data()
{
    QTest::addColumn<telemetry::TraceFilter>("filter");
    QTest::addColumn<QByteArrayList>("shown");

    const auto filter = [](auto &&set) {
        telemetry::TraceFilter filter;
        set(filter);
        return filter;
    };
    QTest::newRow("everything") << telemetry::TraceFilter{}
                                << QByteArrayList{"live-7", "fail-4", "rate-3", "slow-2", "ok-1"};
    QTest::newRow("5xx") << filter([](auto &f) { f.statusClass = u"5xx"_s; })
                         << QByteArrayList{"fail-4"};
    QTest::newRow("4xx") << filter([](auto &f) { f.statusClass = u"4xx"_s; })
                         << QByteArrayList{"rate-3"};
    QTest::newRow("provider") << filter([](auto &f) { f.provider = u"sim-swift"_s; })
                              << QByteArrayList{"live-7", "rate-3", "ok-1"};
    QTest::newRow("route") << filter([](auto &f) { f.route = u"long-context"_s; })
                           << QByteArrayList{"slow-2"};
    QTest::newRow("default route") << filter([](auto &f) { f.route = u"default"_s; })
                                   << QByteArrayList{"live-7", "fail-4", "rate-3", "ok-1"};
    QTest::newRow("tenant") << filter([](auto &f) { f.tenant = u"acme"_s; })
                            << QByteArrayList{"rate-3", "ok-1"};
    QTest::newRow("errors only") << filter([](auto &f) { f.errorsOnly = true; })
                                 << QByteArrayList{"fail-4", "rate-3"};
    // A running request's time so far counts: it is already slower than that.
    QTest::newRow("slower than") << filter([](auto &f) { f.slowerThanMs = 1000; })
                                 << QByteArrayList{"live-7", "slow-2"};
    QTest::newRow("id search") << filter([](auto &f) { f.idContains = u"SLOW"_s; })
                               << QByteArrayList{"slow-2"};
    QTest::newRow("combined") << filter([](auto &f) {
        f.provider = u"sim-swift"_s;
        f.errorsOnly = true;
    }) << QByteArrayList{"rate-3"};
}

void TraceModelsTest::filtersMatchTheAdminApi()
{
    QFETCH(telemetry::TraceFilter, filter);
    QFETCH(QByteArrayList, shown);

    TraceListModel model;
    TraceFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
    telemetry::RequestRecord ok = record("ok-1", 0);
    ok.tenant = u"acme"_s;
    telemetry::RequestRecord slow = record("slow-2", 100, 200, u"sim-deep"_s, 2400);
    slow.route = u"long-context"_s;
    telemetry::RequestRecord rate = record("rate-3", 200, 429, u"sim-swift"_s, 50);
    rate.tenant = u"acme"_s;
    telemetry::TraceFeed feed;
    feed.finished = {ok, slow, rate, record("fail-4", 300, 502, u"sim-steady"_s, 900)};
    feed.running = {running("live-7", 400, 3000)};
    feed.runningCount = 1;
    model.applyFeed(feed);

    proxy.setFilter(filter);
    QCOMPARE(shownIds(proxy), shown);
}

void TraceModelsTest::pauseHoldsNewRowsAndCountsThem()
{
    TraceListModel model;
    TraceFilterProxyModel proxy;
    proxy.setSourceModel(&model);
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    telemetry::TraceFeed feed;
    feed.running = {running("watched", 0, 100)};
    feed.runningCount = 1;
    model.applyFeed(feed);

    model.setPaused(true);
    feed = {};
    feed.finished = {record("n-1", 100), record("n-2", 200, 503, u"sim-deep"_s),
                     record("watched", 0, 200, u"sim-swift"_s, 400)};
    feed.running = {running("n-3", 300, 20)};
    feed.runningCount = 1;
    model.applyFeed(feed);
    // Nothing moves while paused, but the row already shown is brought up to date.
    QCOMPARE(shownIds(model), QByteArrayList{"watched"});
    QCOMPARE(model.index(0, TraceListModel::StatusColumn).data().toString(), u"200"_s);
    QCOMPARE(model.pendingCount(), 3);
    QCOMPARE(proxy.pendingMatching(), 3);
    telemetry::TraceFilter errors;
    errors.errorsOnly = true;
    proxy.setFilter(errors);
    QCOMPARE(proxy.pendingMatching(), 1);
    proxy.setFilter({});

    // A waiting request that finishes is updated where it waits.
    feed = {};
    feed.finished = {record("n-3", 300, 200, u"sim-swift"_s, 900)};
    model.applyFeed(feed);
    QCOMPARE(model.pendingCount(), 3);
    QCOMPARE(model.pendingRows().first().running, false);

    model.setPaused(false);
    QCOMPARE(model.pendingCount(), 0);
    QCOMPARE(shownIds(model), (QByteArrayList{"n-3", "n-2", "n-1", "watched"}));
}

void TraceModelsTest::listKeepsTheNewestFiveThousand()
{
    TraceListModel model;
    int next = 0;
    // Eleven full feeds: 5,500 requests, of which the list keeps the newest 5,000.
    for (int feedIndex = 0; feedIndex < 11; ++feedIndex) {
        telemetry::TraceFeed feed;
        for (int i = 0; i < telemetry::TraceFeed::kMaxFinished; ++i, ++next)
            feed.finished.append(record("r-" + QByteArray::number(next), next));
        model.applyFeed(feed);
    }
    QCOMPARE(model.rowCount(), TraceListModel::kMaxRows);
    QCOMPARE(model.droppedCount(), quint64(500));
    QCOMPARE(model.rowAt(0).record.requestId, QByteArray("r-5499"));
    QCOMPARE(model.rowAt(TraceListModel::kMaxRows - 1).record.requestId, QByteArray("r-500"));
}

void TraceModelsTest::barsShareOneAxisWithGapsForWaits()
{
    using telemetry::SpanKind;
    telemetry::Trace trace;
    trace.totalMicros = 1'000'000;
    trace.spans = {span(u"ingress"_s, 0, 10, SpanKind::Step),
                   span(u"upstream attempt"_s, 10, 400, SpanKind::Attempt, u"failure"_s),
                   span(u"retry"_s, 410, 0, SpanKind::Event),
                   span(u"backoff"_s, 410, 250, SpanKind::Wait),
                   span(u"upstream attempt"_s, 660, 340, SpanKind::Attempt, u"success"_s),
                   span(u"first byte"_s, 700, 0, SpanKind::Event)};
    trace.chunks = {{700'000, 40}, {850'000, 40}, {1'000'000, 12}};

    const WaterfallLayout layout(trace, 1000.0);
    QCOMPARE(layout.endMicros(), qint64(1'000'000));
    const QList<WaterfallLayout::Row> &rows = layout.rows();
    QCOMPARE(rows.size(), 6);
    QCOMPARE(rows[0].x, 0.0);
    QCOMPARE(rows[0].width, 10.0);
    QCOMPARE(rows[1].x, 10.0);
    QCOMPARE(rows[1].width, 400.0);
    QCOMPARE(rows[1].tone, AttemptTone::Failure);
    QCOMPARE(rows[2].width, 0.0); // a point event
    QCOMPARE(rows[2].x, 410.0);
    // The wait fills exactly the gap between the two attempts.
    QCOMPARE(rows[3].kind, SpanKind::Wait);
    QCOMPARE(rows[3].x, rows[1].x + rows[1].width);
    QCOMPARE(rows[3].x + rows[3].width, rows[4].x);
    QCOMPARE(rows[4].x, 660.0);
    QCOMPARE(rows[4].width, 340.0);
    QCOMPARE(rows[4].tone, AttemptTone::Success);
    QCOMPARE(rows[5].x, 700.0);
    QCOMPARE(layout.chunkXs(), (QList<double>{700.0, 850.0, 1000.0}));

    // Half the width, half the pixels: the axis scales, the proportions stay.
    const WaterfallLayout narrow(trace, 500.0);
    QCOMPARE(narrow.rows()[4].x, 330.0);
    QCOMPARE(narrow.rows()[4].width, 170.0);
}

void TraceModelsTest::attemptsAreColouredByOutcome_data()
{
    QTest::addColumn<QString>("outcome");
    QTest::addColumn<AttemptTone>("tone");
    QTest::newRow("success") << u"success"_s << AttemptTone::Success;
    QTest::newRow("failure") << u"failure"_s << AttemptTone::Failure;
    QTest::newRow("rate limited") << u"rate_limited"_s << AttemptTone::RateLimited;
    QTest::newRow("unusable") << u"unusable"_s << AttemptTone::Unusable;
    QTest::newRow("request fault") << u"request_fault"_s << AttemptTone::RequestFault;
    QTest::newRow("cancelled") << u"cancelled"_s << AttemptTone::Cancelled;
}

void TraceModelsTest::attemptsAreColouredByOutcome()
{
    QFETCH(QString, outcome);
    QFETCH(AttemptTone, tone);
    const telemetry::Span attempt =
        span(u"upstream attempt"_s, 0, 100, telemetry::SpanKind::Attempt, outcome);
    QCOMPARE(attemptToneOf(attempt), tone);
    // Every outcome has a colour of its own.
    QSet<QRgb> colours;
    for (const AttemptTone each :
         {AttemptTone::Success, AttemptTone::Failure, AttemptTone::RateLimited,
          AttemptTone::Unusable, AttemptTone::RequestFault, AttemptTone::Cancelled,
          AttemptTone::Running})
        colours.insert(attemptToneColor(each).rgb());
    QCOMPARE(colours.size(), 7);
}

void TraceModelsTest::openSpanRunsToTheTimeSoFar()
{
    telemetry::Trace trace;
    trace.totalMicros = 500'000;
    trace.spans = {span(u"routing"_s, 0, 20, telemetry::SpanKind::Step),
                   span(u"upstream attempt"_s, 100, -1, telemetry::SpanKind::Attempt)};
    const WaterfallLayout layout(trace, 1000.0);
    const WaterfallLayout::Row &attempt = layout.rows()[1];
    QVERIFY(attempt.open);
    QCOMPARE(attempt.tone, AttemptTone::Running);
    QCOMPARE(attempt.x, 200.0);
    QCOMPARE(attempt.width, 800.0);
}

void TraceModelsTest::axisTicksAreRoundMilliseconds()
{
    telemetry::Trace trace;
    trace.totalMicros = 1'000'000;
    const WaterfallLayout layout(trace, 1000.0);
    // At least 80 px apart on 1 ms per pixel: 100 ms steps.
    QCOMPARE(layout.tickStepMicros(80), qint64(100'000));
    const QList<qint64> ticks = layout.ticksMicros(80);
    QCOMPARE(ticks.size(), 11);
    QCOMPARE(ticks.last(), qint64(1'000'000));
    QCOMPARE(layout.xOf(ticks[3]), 300.0);
    QCOMPARE(layout.tickStepMicros(150), qint64(200'000));
}

void TraceModelsTest::chunkGapsGiveMedianMaxAndHistogram()
{
    // Gaps of 10, 20, 30 and 500 ms.
    const std::vector<telemetry::ChunkMark> chunks{
        {0, 10}, {10'000, 10}, {30'000, 10}, {60'000, 10}, {560'000, 10}};
    const ChunkGapStats gaps = ChunkGapStats::of(chunks);
    QCOMPARE(gaps.gapCount, 4);
    QCOMPARE(gaps.medianMicros, qint64(20'000));
    QCOMPARE(gaps.maxMicros, qint64(500'000));
    const std::array<int, ChunkGapStats::kBinCount> expected{0, 2, 1, 0, 0, 0, 1};
    QCOMPARE(gaps.histogram, expected);

    QCOMPARE(ChunkGapStats::of({{0, 5}}).medianMicros, qint64(-1));
}

void TraceModelsTest::liveTextFromChatChunks()
{
    LiveText text;
    text.appendEventData(
        R"({"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})"
        "\n"
        R"({"id":"c1","choices":[{"index":0,"delta":{"content":"Hel"}}]})"
        "\n");
    QCOMPARE(text.text(), u"Hel"_s);
    QVERIFY(text.finishReason().isEmpty());
    // The next feed: the rest, the finish reason, and the end of the stream.
    text.appendEventData(R"({"id":"c1","choices":[{"index":0,"delta":{"content":"lo, wörld"}}]})"
                         "\n"
                         R"({"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"
                         "\n[DONE]\n");
    QCOMPARE(text.text(), u"Hello, wörld"_s);
    QCOMPARE(text.finishReason(), u"stop"_s);
    QVERIFY(text.error().isEmpty());
    QCOMPARE(text.eventCount(), 4);
}

void TraceModelsTest::liveTextFromResponsesEvents()
{
    LiveText text;
    text.appendEventData(
        R"({"type":"response.created","response":{"id":"resp_1","status":"in_progress"}})"
        "\n"
        R"({"type":"response.output_text.delta","item_id":"msg_1","delta":"Hi"})"
        "\n"
        R"({"type":"response.output_text.delta","item_id":"msg_1","delta":" there"})"
        "\n"
        R"({"type":"response.output_text.done","item_id":"msg_1","text":"Hi there"})"
        "\n"
        R"({"type":"response.completed","response":{"id":"resp_1","status":"completed"}})"
        "\n");
    QCOMPARE(text.text(), u"Hi there"_s);
    QCOMPARE(text.finishReason(), u"completed"_s);

    LiveText cut;
    cut.appendEventData(
        R"({"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"}}})");
    QCOMPARE(cut.finishReason(), u"max_output_tokens"_s);
}

void TraceModelsTest::liveTextFromAnthropicEvents()
{
    LiveText text;
    text.appendEventData(
        R"({"type":"message_start","message":{"id":"msg_1","content":[],"stop_reason":null}})"
        "\n"
        R"({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hmm"}})"
        "\n"
        R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}})"
        "\n"
        R"({"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" there"}})"
        "\n"
        R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}})"
        "\n"
        R"({"type":"message_stop"})"
        "\n");
    QCOMPARE(text.text(), u"Hi there"_s);
    QCOMPARE(text.finishReason(), u"end_turn"_s);

    LiveText failed;
    failed.appendEventData(
        R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})");
    QCOMPARE(failed.error(), u"overloaded_error: Overloaded"_s);
}

void TraceModelsTest::liveTextEndsInTheErrorEventTheClientSaw()
{
    LiveText text;
    text.appendEventData(R"({"choices":[{"index":0,"delta":{"content":"partial ans"}}]})"
                         "\n"
                         R"({"error":{"message":"The provider stopped answering mid-stream.",)"
                         R"("type":"server_error","code":"upstream_error"}})"
                         "\n");
    QCOMPARE(text.text(), u"partial ans"_s);
    QCOMPARE(text.error(), u"upstream_error: The provider stopped answering mid-stream."_s);
    QVERIFY(text.finishReason().isEmpty());
}

void TraceModelsTest::liveTextFromAKeptBody_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("finishReason");
    QTest::addColumn<QString>("error");
    QTest::newRow("chat answer")
        << QByteArray(R"({"choices":[{"index":0,"message":{"role":"assistant","content":"Done."},)"
                      R"("finish_reason":"length"}]})")
        << u"Done."_s << u"length"_s << QString();
    QTest::newRow("event stream")
        << QByteArray("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                      "data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":"
                      "\"stop\"}]}\n\ndata: [DONE]\n\n")
        << u"ab"_s << u"stop"_s << QString();
    QTest::newRow("responses answer")
        << QByteArray(R"({"status":"completed","output":[{"type":"message","content":)"
                      R"([{"type":"output_text","text":"Yes."}]}]})")
        << u"Yes."_s << u"completed"_s << QString();
    QTest::newRow("anthropic message")
        << QByteArray(R"({"type":"message","role":"assistant","content":[{"type":"thinking",)"
                      R"("thinking":"Hmm","signature":"s"},{"type":"text","text":"Yes."}],)"
                      R"("stop_reason":"max_tokens"})")
        << u"Yes."_s << u"max_tokens"_s << QString();
    QTest::newRow("error answer")
        << QByteArray(R"({"error":{"message":"No provider could answer.","code":"no_provider"}})")
        << QString() << QString() << u"no_provider: No provider could answer."_s;
}

void TraceModelsTest::liveTextFromAKeptBody()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, text);
    QFETCH(QString, finishReason);
    QFETCH(QString, error);
    LiveText live;
    live.setResponseBody(body);
    QCOMPARE(live.text(), text);
    QCOMPARE(live.finishReason(), finishReason);
    QCOMPARE(live.error(), error);
}

void TraceModelsTest::curlReproducesTheRequestWithoutCredentials()
{
    telemetry::Trace trace;
    trace.method = "POST";
    trace.path = "/v1/chat/completions";
    trace.streamed = true;
    trace.requestHeaders = {{"Host", "127.0.0.1:8080"},
                            {"Authorization", "[redacted]"},
                            {"x-api-key", "[redacted]"},
                            {"Cookie", "[redacted]"},
                            {"Content-Type", "application/json"},
                            {"Content-Length", "75"},
                            {"x-request-id", "req-42"}};
    trace.bodiesKept = true;
    trace.requestBody = R"({"model":"gpt-4o-mini","stream":true,"messages":[]})";

    const QString command = CurlCommand::forTrace(trace, u"127.0.0.1:8080"_s);
    QCOMPARE(command,
             u"curl -sS -N -X POST 'http://127.0.0.1:8080/v1/chat/completions' \\\n"
             "  -H \"Authorization: Bearer $OPENAI_API_KEY\" \\\n"
             "  -H 'Content-Type: application/json' \\\n"
             "  -H 'x-request-id: req-42' \\\n"
             "  --data-raw '{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[]}'"_s);
    QVERIFY(!command.contains(u"redacted"_s));
    QVERIFY(!command.contains(u"x-api-key"_s, Qt::CaseInsensitive));
    QVERIFY(!command.contains(u"Cookie"_s));

    // A credential that somehow arrived unredacted is still never copied.
    trace.requestHeaders = {{"authorization", "Bearer sk-live-secret"}, {"X-Api-Key", "k-123"}};
    const QString leaked = CurlCommand::forTrace(trace, u"127.0.0.1:8080"_s);
    QVERIFY(!leaked.contains(u"sk-live-secret"_s));
    QVERIFY(!leaked.contains(u"k-123"_s));
    QVERIFY(leaked.contains(u"-H \"authorization: Bearer $OPENAI_API_KEY\""_s));
}

void TraceModelsTest::curlWithoutKeptBodiesSaysSo()
{
    telemetry::Trace trace;
    trace.method = "POST";
    trace.path = "/v1/responses";
    trace.requestHeaders = {{"content-type", "application/json"}};
    trace.bodiesKept = false;
    const QString command = CurlCommand::forTrace(trace, u"10.0.0.5:9000"_s);
    const QStringList lines = command.split(u'\n');
    QVERIFY2(lines.first().startsWith(u"# The request body was not kept"_s), qPrintable(command));
    QVERIFY(lines.first().contains(u"trace.keep_bodies: true"_s));
    QCOMPARE(lines.at(1), u"curl -sS -X POST 'http://10.0.0.5:9000/v1/responses' \\"_s);
    QVERIFY(!command.contains(u"--data"_s));
}

void TraceModelsTest::curlQuotesForTheShell()
{
    QCOMPARE(CurlCommand::shellQuoted(u"it's $HOME"_s), u"'it'\\''s $HOME'"_s);
    telemetry::Trace trace;
    trace.method = "POST";
    trace.path = "/v1/chat/completions";
    trace.bodiesKept = true;
    trace.requestBody = R"({"messages":[{"role":"user","content":"don't"}]})";
    QVERIFY(
        CurlCommand::forTrace(trace, u"h:1"_s)
            .endsWith(uR"(--data-raw '{"messages":[{"role":"user","content":"don'\''t"}]}')"_s));
}

QTEST_MAIN(TraceModelsTest)
#include "tst_trace_models.moc"
