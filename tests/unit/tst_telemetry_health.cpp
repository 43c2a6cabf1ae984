// Traces (ids, spans, the bounded ring) and the health registry's counters and states.

#include "health/health_registry.h"
#include "telemetry/request_recorder.h"

#include <QSet>
#include <QTest>
#include <QThread>
#include <algorithm>
#include <array>
#include <memory>

using namespace switchyard;

class TestTelemetryHealth : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void traceparentIsHonouredOnlyWhenValid_data()
    {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("valid") << QByteArray(
                                      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
                               << QByteArray("4bf92f3577b34da6a3ce929d0e0e4736");
        QTest::newRow("uppercase hex")
            << QByteArray("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01")
            << QByteArray();
        QTest::newRow("all-zero trace id")
            << QByteArray("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
            << QByteArray();
        QTest::newRow("version ff")
            << QByteArray("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            << QByteArray();
        QTest::newRow("too short") << QByteArray("00-4bf92f35-01") << QByteArray();
        QTest::newRow("empty") << QByteArray() << QByteArray();
    }
    void traceparentIsHonouredOnlyWhenValid()
    {
        QFETCH(QByteArray, header);
        QFETCH(QByteArray, expected);
        QCOMPARE(telemetry::traceIdFromTraceparent(header), expected);
    }

    void newIdsHaveTheirShape()
    {
        const QByteArray traceId = telemetry::newTraceId();
        QCOMPARE(traceId.size(), 32);
        QCOMPARE(telemetry::traceIdFromTraceparent("00-" + traceId + "-00f067aa0ba902b7-01"),
                 traceId);
        QVERIFY(telemetry::newRequestId().startsWith("req_"));
        QVERIFY(telemetry::newRequestId() != telemetry::newRequestId());
    }

    void newIdsAreDistinctInEveryThreadAndUseEveryDigitEverywhere()
    {
        // Drawn from a generator per thread: a second thread's ids are its own, not a replay of
        // the first's.
        QSet<QByteArray> seen;
        const auto draw = [](QList<QByteArray> &into) {
            for (int i = 0; i < 5000; ++i) {
                into.append(telemetry::newTraceId());
                into.append(telemetry::newSpanId());
                into.append(telemetry::newRequestId());
            }
        };
        QList<QByteArray> here;
        QList<QByteArray> there;
        draw(here);
        std::unique_ptr<QThread> other(QThread::create([&] { draw(there); }));
        other->start();
        QVERIFY(other->wait(30000));
        constexpr qsizetype kHexLength[] = {32, 16, 24}; // a trace id, a span id, a request id's
        std::array<std::array<bool, 16>, 32> digitAt{};  // a trace id's position, then its digit
        for (const QList<QByteArray> *ids : {&here, &there}) {
            for (qsizetype i = 0; i < ids->size(); ++i) {
                const QByteArray &id = ids->at(i);
                QVERIFY2(!seen.contains(id), id.constData());
                seen.insert(id);
                const QByteArray hex = i % 3 == 2 ? id.sliced(4) : id;
                QCOMPARE(hex.size(), kHexLength[i % 3]);
                for (qsizetype at = 0; at < hex.size(); ++at) {
                    const char c = hex[at];
                    QVERIFY((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
                    if (i % 3 == 0)
                        digitAt[at][c <= '9' ? c - '0' : c - 'a' + 10] = true;
                }
            }
        }
        QCOMPARE(seen.size(), 30000);
        for (const auto &digits : digitAt)
            QVERIFY(std::all_of(digits.begin(), digits.end(), [](bool d) { return d; }));
    }

    void builderClosesOpenSpansOnFinish()
    {
        telemetry::TraceBuilder builder(m_clock, "req_1", "t");
        const int ingress = builder.openSpan(QStringLiteral("ingress"));
        builder.closeSpan(ingress, QStringLiteral("parsed"));
        builder.openSpan(QStringLiteral("upstream attempt"));
        builder.pointEvent(QStringLiteral("first byte"));
        const telemetry::Trace trace = builder.finish(200, QStringLiteral("ok"));
        QCOMPARE(trace.spans.size(), 3);
        QCOMPARE(trace.span(QStringLiteral("ingress"))->detail, QStringLiteral("parsed"));
        QVERIFY(trace.span(QStringLiteral("upstream attempt"))->durationMicros >= 0);
        QCOMPARE(trace.span(QStringLiteral("first byte"))->durationMicros, 0);
        QCOMPARE(trace.status, 200);
        QCOMPARE(trace.outcome, QStringLiteral("ok"));
    }

    void spansAreTimedOnTheBuildersClock()
    {
        timing::ManualClock clock;
        telemetry::TraceBuilder builder(clock, "req_1", telemetry::newTraceId());
        clock.advance(std::chrono::microseconds(250));
        const int attempt = builder.openSpan(QStringLiteral("upstream attempt"));
        clock.advance(std::chrono::microseconds(1500));
        builder.pointEvent(QStringLiteral("first byte"));
        clock.advance(std::chrono::milliseconds(2));
        builder.closeSpan(attempt);
        QCOMPARE(builder.traceSoFar().totalMicros, 3750);
        clock.advance(std::chrono::microseconds(10));
        const telemetry::Trace trace = builder.finish(200, QStringLiteral("ok"));

        QCOMPARE(trace.startedAtUtc,
                 QDateTime::fromMSecsSinceEpoch(timing::ManualClock::kStartMsSinceEpoch, Qt::UTC));
        QCOMPARE(trace.span(QStringLiteral("upstream attempt"))->startMicros, 250);
        QCOMPARE(trace.span(QStringLiteral("upstream attempt"))->durationMicros, 3500);
        QCOMPARE(trace.span(QStringLiteral("first byte"))->startMicros, 1750);
        QCOMPARE(trace.totalMicros, 3760);
    }

    void ringKeepsTheNewestAndCountsDrops()
    {
        telemetry::TraceRing ring(3);
        for (int i = 0; i < 5; ++i) {
            telemetry::Trace trace;
            trace.requestId = "req_" + QByteArray::number(i);
            ring.add(trace);
        }
        QCOMPARE(ring.size(), 3);
        QCOMPARE(ring.droppedCount(), quint64(2));
        QVERIFY(!ring.find("req_1").has_value());
        QCOMPARE(ring.find("req_4")->requestId, QByteArray("req_4"));
        QCOMPARE(ring.latest(2).first().requestId, QByteArray("req_4"));
        QCOMPARE(ring.latest(2).last().requestId, QByteArray("req_3"));
    }

    void ringIsBoundedInBytesToo()
    {
        telemetry::Trace big;
        big.requestBody = QByteArray(10'000, 'x');
        telemetry::TraceRing measure(1);
        measure.add(big);
        const qint64 one = measure.bytes();
        QVERIFY(one > 10'000);
        telemetry::TraceRing ring(100, 3 * one + one / 2);
        for (int i = 0; i < 6; ++i) {
            big.requestId = "req_" + QByteArray::number(i);
            ring.add(big);
        }
        QCOMPARE(ring.size(), 3);
        QVERIFY(ring.bytes() <= ring.maxBytes());
        QCOMPARE(ring.droppedCount(), quint64(3));
        QCOMPARE(ring.latest(1).first().requestId, QByteArray("req_5"));

        // A trace larger than the whole bound is still kept, alone.
        telemetry::TraceRing tiny(100, 10);
        tiny.add(big);
        tiny.add(big);
        QCOMPARE(tiny.size(), 1);
    }

    // The ring keeps traces packed: every field comes back as it went in, text in any script,
    // empty values (a null one comes back empty, which every reader takes alike), and a record
    // listed without its spans.
    void ringGivesBackEveryFieldOfATrace()
    {
        telemetry::Trace trace;
        trace.sequence = 41;
        trace.requestId = "req_round_trip";
        trace.traceId = telemetry::newTraceId();
        trace.spanId = telemetry::newSpanId();
        trace.parentSpanId = telemetry::newSpanId();
        trace.shadowOf = "req_live";
        trace.shadowRequestId = "req_shadow";
        trace.startedAtUtc = QDateTime::fromMSecsSinceEpoch(1'764'374'400'123, Qt::UTC);
        trace.operation = QStringLiteral("embeddings");
        trace.endpoint = QStringLiteral("/v1/embeddings");
        trace.tenant = QStringLiteral("团队-α");
        trace.keyId = QStringLiteral("key_7");
        trace.model = QStringLiteral("qwen-small");
        trace.route = QStringLiteral("long-context");
        trace.tier = QStringLiteral("pro");
        trace.provider = QStringLiteral("vllm-a");
        trace.upstreamModel = QStringLiteral("Qwen/Qwen2.5-7B");
        trace.streamed = true;
        trace.status = 502;
        trace.outcome = QStringLiteral("upstream_error");
        trace.errorClass = QStringLiteral("server_error");
        trace.attempts = 3;
        trace.degradedLevel = 2;
        trace.totalMicros = 123'456;
        trace.timeToFirstByteMicros = 7'890;
        trace.queuedMicros = 55;
        trace.inputTokens = 412;
        trace.outputTokens = 24;
        trace.tokensEstimated = true;
        trace.cacheReadTokens = 100;
        trace.cacheWriteTokens = 12;
        trace.costUsd = 0.001234;
        trace.cacheSavedUsd = -0.5;
        trace.priced = true;
        trace.responseCache = QStringLiteral("miss");
        trace.responseCacheSavedUsd = 0.25;
        trace.finishReason = QStringLiteral("length");

        telemetry::Span attempt;
        attempt.name = QStringLiteral("upstream attempt");
        attempt.startMicros = 250;
        attempt.durationMicros = 3500;
        attempt.detail = QStringLiteral("vllm-a HTTP 502 — 失败");
        attempt.kind = telemetry::SpanKind::Attempt;
        attempt.attempt = 2;
        attempt.httpStatus = 502;
        attempt.spanId = telemetry::newSpanId();
        attempt.provider = QStringLiteral("vllm-a");
        attempt.upstreamModel = QStringLiteral("Qwen/Qwen2.5-7B");
        attempt.outcome = QStringLiteral("failure");
        attempt.errorClass = QStringLiteral("server_error");
        attempt.bytes = 321;
        telemetry::Span wait;
        wait.name = QStringLiteral("backoff");
        wait.kind = telemetry::SpanKind::Wait;
        trace.explainSteps = {QStringLiteral("rule: long-context"), QString(), QStringLiteral("ß")};
        // The choice's detail is the steps joined (kept once, joined again when read); a detail
        // that only starts like it is kept as it is.
        telemetry::Span choice;
        choice.name = QStringLiteral("choice");
        choice.kind = telemetry::SpanKind::Event;
        choice.detail = trace.explainSteps.join(QStringLiteral("; "));
        telemetry::Span almost = choice;
        almost.detail += QStringLiteral(";");
        trace.spans = {choice, attempt, wait, almost};
        trace.chunks = {{10, 20}, {30, telemetry::ChunkMark::kMaxBytes}};
        trace.chunkCount = 7;
        trace.chunkBytes = 900;
        trace.method = "POST";
        trace.path = "/v1/embeddings?x=1";
        trace.requestHeaders = {{"content-type", "application/json"}, {"x-empty", ""}};
        trace.requestBody = QByteArray("{\"input\":\"\0\"}", 14);
        trace.responseBody = "data: [DONE]";
        trace.bodiesKept = true;
        trace.requestBodyCut = true;
        trace.responseBodyCut = true;

        telemetry::TraceRing ring(10);
        ring.add(telemetry::Trace{}); // an empty one beside it
        ring.add(trace);
        const std::optional<telemetry::Trace> found = ring.find("req_round_trip");
        QVERIFY(found.has_value());
        QCOMPARE(found->spans.size(), 4);
        QCOMPARE(found->spans.at(0).detail, QStringLiteral("rule: long-context; ; ß"));
        QCOMPARE(found->spans.at(1).detail, attempt.detail);
        QCOMPARE(found->spans.at(3).detail, QStringLiteral("rule: long-context; ; ß;"));
        QCOMPARE(found->tenant, trace.tenant);
        QCOMPARE(found->startedAtUtc, trace.startedAtUtc);
        QCOMPARE(found->requestBody, trace.requestBody);
        QVERIFY(*found == trace);
        QVERIFY(ring.latest(2).last() == telemetry::Trace{});

        QList<telemetry::RequestRecord> listed;
        ring.visitNewestFirst(0, [&](const telemetry::RequestRecord &record) {
            listed.append(record);
            return true;
        });
        QCOMPARE(listed.size(), 2);
        QVERIFY(listed.first() == static_cast<const telemetry::RequestRecord &>(trace));
        QVERIFY(listed.last() == telemetry::RequestRecord{});
        QVERIFY(!ring.find("req_").has_value()); // a prefix of a kept id is not that id

        // The choice's detail, when it is the explanation joined, is not held twice.
        telemetry::Trace joined;
        joined.explainSteps = {QString(200, u'a'), QString(200, u'b')};
        telemetry::Span joinedChoice = choice;
        joinedChoice.detail = joined.explainSteps.join(QStringLiteral("; "));
        joined.spans = {joinedChoice};
        telemetry::Trace notJoined = joined;
        notJoined.spans.first().detail += QStringLiteral(".");
        telemetry::TraceRing one(1);
        one.add(notJoined);
        const qint64 heldTwice = one.bytes();
        one.add(joined);
        // The 400 characters of the steps, held once more, are 800 bytes.
        QVERIFY2(one.bytes() + 600 < heldTwice,
                 qPrintable(QStringLiteral("%1 against %2").arg(one.bytes()).arg(heldTwice)));
        QVERIFY(*one.find("") == joined);
    }

    void chunkMarksAreBoundedButEveryChunkIsCounted()
    {
        telemetry::TraceBuilder builder(m_clock, "req", telemetry::newTraceId());
        builder.setLimits({4, false, 16});
        for (int i = 0; i < 10; ++i)
            builder.chunk(100 + i);
        const telemetry::Trace trace = builder.finish(200, QStringLiteral("ok"));
        QCOMPARE(int(trace.chunks.size()), 4);
        QCOMPARE(trace.chunks.back().bytes, 103);
        QCOMPARE(trace.chunkCount, 10u);
        QCOMPARE(trace.chunkBytes, qint64(10 * 100 + 45));
    }

    void theChoiceLineIsJoinedWhenTheTraceIsRead()
    {
        telemetry::TraceBuilder builder(m_clock, "req", telemetry::newTraceId());
        builder.openSpan(QStringLiteral("ingress"));
        builder.explainChoice(
            {{QStringLiteral("rule"), QStringLiteral("default")},
             {QStringLiteral("pool"), QStringLiteral("weighted draw 0.42 chose `a`")}});
        const QString line = QStringLiteral("rule: default; pool: weighted draw 0.42 chose `a`");
        const QStringList lines{QStringLiteral("rule: default"),
                                QStringLiteral("pool: weighted draw 0.42 chose `a`")};
        // A running request holds its explanation once, as the router's steps: no line is
        // written on the request's way to its provider.
        QCOMPARE(builder.trace().spans.at(1).name, QStringLiteral("choice"));
        QVERIFY(builder.trace().spans.at(1).detail.isEmpty());
        QVERIFY(builder.trace().explainSteps.isEmpty());
        // Every way of reading it sees the lines.
        QCOMPARE(builder.spansSoFar().at(1).detail, line);
        QCOMPARE(builder.traceSoFar().spans.at(1).detail, line);
        QCOMPARE(builder.traceSoFar().explainSteps, lines);
        // Written once the answer has begun; a second write changes nothing.
        builder.writeHeld();
        QCOMPARE(builder.trace().explainSteps, lines);
        builder.writeHeld();
        QCOMPARE(builder.trace().explainSteps, lines);
        QCOMPARE(builder.spansSoFar().at(1).detail, line);
        const telemetry::Trace finished = builder.finish(200, QStringLiteral("ok"));
        QCOMPARE(finished.spans.at(1).detail, line);
        QCOMPARE(finished.spans.at(1).kind, telemetry::SpanKind::Event);
        QCOMPARE(finished.explainSteps.size(), 2);
    }

    void aHugeChunkIsMarkedAtTheMarksLimitAndCountedWhole()
    {
        telemetry::TraceBuilder builder(m_clock, "req", telemetry::newTraceId());
        const qint64 huge = telemetry::ChunkMark::kMaxBytes + 1000;
        builder.chunk(huge);
        builder.chunk(7);
        const telemetry::Trace trace = builder.finish(200, QStringLiteral("ok"));
        QCOMPARE(qint64(trace.chunks.front().bytes), telemetry::ChunkMark::kMaxBytes);
        QCOMPARE(qint64(trace.chunks.back().bytes), qint64(7));
        QVERIFY(trace.chunks.back().atMicros >= trace.chunks.front().atMicros);
        QCOMPARE(trace.chunkBytes, huge + 7);
    }

    void theRequestIsHeldUntilWrittenAndReadWhenever()
    {
        telemetry::TraceBuilder builder(m_clock, "req", telemetry::newTraceId());
        builder.setLimits({256, true, 8});
        builder.setRequest("POST", "/v1/chat/completions",
                           {{"authorization", "Bearer sk-secret"}, {"x-team", "search"}},
                           "0123456789abcdef");
        // Held, not yet copied into the record; a view of the running request sees it all the
        // same, credentials redacted and the body cut.
        QVERIFY(builder.trace().requestHeaders.isEmpty());
        QVERIFY(builder.trace().bodiesKept);
        const telemetry::Trace soFar = builder.traceSoFar();
        const telemetry::HeaderPairs expected{{"authorization", "[redacted]"},
                                              {"x-team", "search"}};
        QCOMPARE(soFar.requestHeaders, expected);
        QCOMPARE(soFar.requestBody, QByteArray("01234567"));
        QVERIFY(soFar.requestBodyCut);

        builder.writeHeld();
        QCOMPARE(builder.trace().requestHeaders, expected);
        QCOMPARE(builder.trace().requestBody, QByteArray("01234567"));
        builder.trace().requestHeaders.append(
            qMakePair(QByteArray("x-later"), QByteArray("kept"))); // a second capture is none
        builder.writeHeld();
        const telemetry::Trace finished = builder.finish(200, QStringLiteral("ok"));
        QCOMPARE(finished.requestHeaders.size(), 3);
        QCOMPARE(finished.method, QByteArray("POST"));
        QCOMPARE(finished.path, QByteArray("/v1/chat/completions"));

        // A body that fits is kept whole.
        telemetry::TraceBuilder small(m_clock, "req", telemetry::newTraceId());
        small.setLimits({256, true, 64});
        small.setRequest("POST", "/v1/embeddings", {}, "{}");
        const telemetry::Trace smallTrace = small.finish(200, QStringLiteral("ok"));
        QCOMPARE(smallTrace.requestBody, QByteArray("{}"));
        QVERIFY(!smallTrace.requestBodyCut);
    }

    void credentialHeadersAreKnownByNameInAnyCase()
    {
        for (const char *name : {"Authorization", "proxy-authorization", "X-API-KEY", "api-key",
                                 "x-goog-api-key", "Cookie"})
            QVERIFY2(telemetry::isCredentialHeader(name), name);
        for (const char *name : {"", "x-team", "cookies", "x-api-keys", "authorisation",
                                 "content-type", "x-goog-api-kex", "set-cookie"})
            QVERIFY2(!telemetry::isCredentialHeader(name), name);
    }

    void credentialsNeverEnterATraceAndBodiesAreCut()
    {
        telemetry::TraceBuilder builder(m_clock, "req", telemetry::newTraceId());
        builder.setLimits({256, true, 8});
        builder.setRequest("POST", "/v1/chat/completions",
                           {{"Authorization", "Bearer sk-client-secret"},
                            {"X-Api-Key", "sk-other"},
                            {"Cookie", "session=1"},
                            {"content-type", "application/json"}},
                           "0123456789abcdef");
        builder.appendResponseBody("0123");
        builder.appendResponseBody("456789");
        const telemetry::Trace trace = builder.finish(200, QStringLiteral("ok"));
        for (const auto &[name, value] : trace.requestHeaders) {
            if (name != "content-type")
                QCOMPARE(value, QByteArray("[redacted]"));
        }
        QCOMPARE(trace.requestHeaders.size(), 4);
        QCOMPARE(trace.requestBody, QByteArray("01234567"));
        QVERIFY(trace.requestBodyCut);
        QCOMPARE(trace.responseBody, QByteArray("01234567"));
        QVERIFY(trace.responseBodyCut);

        telemetry::TraceBuilder unkept(m_clock, "req", telemetry::newTraceId());
        unkept.setRequest("POST", "/v1/chat/completions", {}, "{}");
        unkept.appendResponseBody("{}");
        QVERIFY(unkept.trace().requestBody.isEmpty());
        QVERIFY(unkept.trace().responseBody.isEmpty());
        QVERIFY(!unkept.trace().bodiesKept);
    }

    void traceparentCarriesTheParentSpan()
    {
        const auto parsed =
            telemetry::parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        QVERIFY(parsed.has_value());
        QCOMPARE(parsed->traceId, QByteArray("4bf92f3577b34da6a3ce929d0e0e4736"));
        QCOMPARE(parsed->parentSpanId, QByteArray("00f067aa0ba902b7"));
        QVERIFY(!telemetry::parseTraceparent(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"));
        QCOMPARE(telemetry::formatTraceparent(parsed->traceId, "1111111111111111"),
                 QByteArray("00-4bf92f3577b34da6a3ce929d0e0e4736-1111111111111111-01"));
    }

    void recorderNumbersFeedsSinksAndFollowsTheWatchedRequest()
    {
        struct Collect final : telemetry::TraceSink {
            QList<telemetry::Trace> seen;
            void traceFinished(const telemetry::Trace &trace) override { seen.append(trace); }
        } sink;
        telemetry::TraceRing ring(10);
        telemetry::RequestRecorder recorder(ring);
        recorder.addSink(&sink);

        telemetry::TraceBuilder first(m_clock, "req-a", telemetry::newTraceId());
        telemetry::TraceBuilder second(m_clock, "req-b", telemetry::newTraceId());
        recorder.watch("req-b"); // before it starts: it is watched from its first byte
        recorder.beginLive(&first);
        recorder.beginLive(&second);
        QCOMPARE(recorder.liveCount(), 2);
        QVERIFY(!first.watched());
        QVERIFY(second.watched());
        first.appendLiveData("ignored");
        second.appendLiveData("{\"delta\":1}");
        QCOMPARE(recorder.takeWatchedData(), QByteArray("{\"delta\":1}\n"));
        QVERIFY(recorder.takeWatchedData().isEmpty());
        recorder.watch("req-a");
        QVERIFY(first.watched());
        QVERIFY(!second.watched());

        recorder.endLive(&first);
        recorder.record(first.finish(200, QStringLiteral("ok")));
        recorder.endLive(&second);
        recorder.record(second.finish(502, QStringLiteral("upstream_unavailable")));
        QCOMPARE(recorder.liveCount(), 0);
        QCOMPARE(sink.seen.size(), 2);
        QCOMPARE(sink.seen[0].sequence, quint64(1));
        QCOMPARE(sink.seen[1].sequence, quint64(2));
        QCOMPARE(sink.seen[1].statusClass(), QStringLiteral("5xx"));
        QCOMPARE(ring.find("req-b")->sequence, quint64(2));
    }

    void latencyPercentilesUseNearestRank()
    {
        health::LatencyWindow window;
        QCOMPARE(window.percentile(50), -1.0);
        QCOMPARE(window.p50(), -1.0);
        for (int value = 100; value >= 1; --value)
            window.record(value);
        QCOMPARE(window.percentile(50), 50.0);
        QCOMPARE(window.percentile(95), 95.0);
        QCOMPARE(window.percentile(100), 100.0);
        QCOMPARE(window.p50(), 50.0);
        QCOMPARE(window.p95(), 95.0);
        window.record(1000); // the cache follows new samples
        QCOMPARE(window.p95(), 96.0);
        window.clear();
        QCOMPARE(window.p50(), -1.0);
    }

    void aRefilledWindowReadsOnlyItsNewSamples()
    {
        // Percentiles read only the samples held: after a clear, the old ones still in the
        // array must not count, and once the window wraps, every slot does.
        health::LatencyWindow window;
        for (int sample = 0; sample < health::LatencyWindow::kCapacity; ++sample)
            window.record(1000);
        window.clear();
        for (int value = 1; value <= 10; ++value)
            window.record(value);
        QCOMPARE(window.percentile(100), 10.0);
        QCOMPARE(window.p50(), 5.0);
        QCOMPARE(window.p95(), 10.0);
        for (int sample = 10; sample < health::LatencyWindow::kCapacity + 10; ++sample)
            window.record(2); // wraps: the first ten are overwritten
        QCOMPARE(window.size(), health::LatencyWindow::kCapacity);
        QCOMPARE(window.percentile(100), 2.0);
        QCOMPARE(window.percentile(1), 2.0);
    }

    void aFullWindowRefreshesItsPercentilesEveryFewSamples()
    {
        health::LatencyWindow window;
        for (int sample = 0; sample < health::LatencyWindow::kCapacity; ++sample)
            window.record(10);
        QCOMPARE(window.p95(), 10.0);
        const auto recordSlow = [&](int samples) {
            for (int sample = 0; sample < samples; ++sample)
                window.record(1000);
        };
        recordSlow(health::LatencyWindow::kRefreshEvery); // a refresh is due: read it
        QCOMPARE(window.p95(), 10.0);                     // 8 slow samples of 256 are not 5 %
        recordSlow(5);                                    // 13 slow samples now are
        QCOMPARE(window.percentile(95), 1000.0);
        QCOMPARE(window.p95(), 10.0); // but the cached value waits for the next refresh
        recordSlow(3);
        QCOMPARE(window.p95(), 1000.0);
    }

    void outcomeWindowKeepsTheLastCalls()
    {
        health::OutcomeWindow window(3);
        QCOMPARE(window.failureRatio(), 0.0);
        window.record(true);
        window.record(false);
        window.record(true);
        QCOMPARE(window.size(), 3);
        QCOMPARE(window.failures(), 2);
        window.record(false); // the first failure leaves the window
        QCOMPARE(window.size(), 3);
        QCOMPARE(window.failures(), 1);
        window.clear();
        QCOMPARE(window.size(), 0);
        QCOMPARE(window.failures(), 0);
    }

    void registryCountsAndDerivesState()
    {
        config::ProviderConfig provider;
        provider.id = QStringLiteral("p");
        provider.models = {{QStringLiteral("m"), QStringLiteral("m")}};
        config::Config config;
        config.providers = {provider};
        const config::ConfigStore store(config);
        health::HealthRegistry registry(store);
        QCOMPARE(registry.indexOf(QStringLiteral("p")), 0);
        QCOMPARE(registry.indexOf(QStringLiteral("nope")), -1);

        const auto call = [&](health::CallOutcome outcome) {
            registry.callStarted(0);
            QCOMPARE(registry.inFlight(0), 1);
            registry.callFinished(0, outcome, 10.0, 4.0, QStringLiteral("HTTP 500"));
            QCOMPARE(registry.inFlight(0), 0);
        };
        for (int i = 0; i < 4; ++i)
            call(health::CallOutcome::Success);
        QCOMPARE(registry.state(0), ProviderState::Up);

        // Quality problems and the request's own faults never move health.
        call(health::CallOutcome::Unusable);
        call(health::CallOutcome::RequestFault);
        call(health::CallOutcome::Cancelled);
        QCOMPARE(registry.state(0), ProviderState::Up);

        call(health::CallOutcome::CallFailure);
        call(health::CallOutcome::CallFailure);
        QCOMPARE(registry.state(0), ProviderState::Degraded); // 2 of 6 recent calls failed
        call(health::CallOutcome::CallFailure);
        // 3 of 7 is more than the breaker's 40 %: it opens.
        QCOMPARE(registry.state(0), ProviderState::Down);
        QCOMPARE(registry.breakerState(0), BreakerState::Open);
        QVERIFY(!registry.anyProviderUp());
        QCOMPARE(registry.snapshot().first().consecutiveFailures, 3);
        QCOMPARE(registry.snapshot().first().lastFailure, QStringLiteral("HTTP 500"));
        QCOMPARE(registry.snapshot().first().recentCalls, 7);

        // A call sent before the breaker opened and finishing now is counted but decides nothing.
        call(health::CallOutcome::Success);
        QCOMPARE(registry.state(0), ProviderState::Down);
        const ProviderHealth health = registry.snapshot().first();
        QCOMPARE(health.requests, quint64(10)); // cancelled calls are not counted
        QCOMPARE(health.errors, quint64(4));    // 3 call failures + 1 unusable answer
        QCOMPARE(health.unusableAnswers, quint64(1));
        QCOMPARE(health.p50LatencyMs, 10.0);
        QCOMPARE(health.p50TimeToFirstTokenMs, 4.0);
    }

private:
    timing::ManualClock m_clock;
};

QTEST_GUILESS_MAIN(TestTelemetryHealth)
#include "tst_telemetry_health.moc"
