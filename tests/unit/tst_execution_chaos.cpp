// Zero loss, defined and held: one healthy provider and four flaky ones for the same model (30 %
// HTTP 500, 20 % connection resets, 20 % answers cut mid-way, 30 % 429 with Retry-After: 1),
// 3,000 requests, half of them streamed, 32 at a time, in simulated time. A request may fail
// only when the attempt cap or the retry budget stopped it, and its error says which and names
// the providers tried; a stream may fail only after its first byte, with an error event. With the
// retry budget at 100 %, every plain request and every stream that had not begun is answered.

#include "execution_fixture.h"

#include <QRandomGenerator>
#include <QTest>
#include <deque>
#include <map>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using namespace switchyard;
using namespace switchyard::testing;

namespace {

constexpr int kRequests = 3000;
constexpr int kConcurrent = 32;

enum class Flake { Status500, Reset, CutMidway, RateLimited };

// What happened to the requests of one run.
struct ChaosResult {
    int answered = 0;
    int streamsCutAfterFirstByte = 0;
    QStringList lost; // requests that failed without a limit to blame, with their error
    QMap<QString, int> failuresByCode;
    QStringList failures; // "code: message" of every request that got an error
    int attemptsTold = 0;
    int callsMade = 0;
};

class ChaosRun {
public:
    ChaosRun(const QByteArray &yaml, quint32 seed) : m_fixture(yaml), m_random(seed) {}

    ChaosResult run()
    {
        ChaosResult result;
        int started = 0;
        int finished = 0;
        std::vector<std::shared_ptr<ClientLog>> logs(kRequests);
        std::vector<bool> streamed(kRequests);
        m_fixture.onFinished = [&finished](RequestExecution *execution) {
            ++finished;
            execution->deleteLater();
        };
        while (finished < kRequests) {
            while (started < kRequests && started - finished < kConcurrent) {
                const bool stream = started % 2 == 1;
                streamed[started] = stream;
                m_fixture.send(stream);
                logs[started] = m_fixture.log;
                ++started;
                answerNewCalls();
            }
            step();
            QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        }
        for (int i = 0; i < kRequests; ++i)
            judge(*logs[i], streamed[i], result);
        result.callsMade = int(m_fixture.transport.calls.size());
        return result;
    }

    Fixture &fixture() { return m_fixture; }

private:
    // Every call the executor started gets its fate and a time to meet it, 5 to 60 ms later.
    void answerNewCalls()
    {
        for (; m_seen < m_fixture.transport.calls.size(); ++m_seen) {
            const auto due = m_fixture.clock.now() + milliseconds(5 + m_random.bounded(56));
            m_due.emplace(due, m_seen);
        }
    }

    // Moves time to the next event (a call's answer or a deadline) and lets it happen.
    void step()
    {
        const bool callDue = !m_due.empty();
        const bool deadlineDue = m_fixture.scheduler.pending() > 0;
        QVERIFY(callDue || deadlineDue); // something must still happen
        auto next = callDue ? m_due.begin()->first : m_fixture.scheduler.nextDue();
        if (deadlineDue)
            next = std::min(next, m_fixture.scheduler.nextDue());
        if (next > m_fixture.clock.now())
            m_fixture.clock.advance(std::chrono::ceil<milliseconds>(next - m_fixture.clock.now()));
        while (!m_due.empty() && m_due.begin()->first <= m_fixture.clock.now()) {
            const std::size_t index = m_due.begin()->second;
            m_due.erase(m_due.begin());
            play(*m_fixture.transport.calls[index]);
            answerNewCalls();
        }
        m_fixture.scheduler.runDue();
        answerNewCalls();
    }

    void play(FakeCallState &call)
    {
        if (!call.live)
            return; // aborted by the executor (a timeout, a client gone)
        const bool stream = call.request.body.contains("\"stream\":true");
        if (call.provider() == u"healthy"_s) {
            answer(call, stream);
            return;
        }
        const int draw = int(m_random.bounded(100));
        const Flake flake = draw < 30   ? Flake::Status500
                            : draw < 50 ? Flake::Reset
                            : draw < 70 ? Flake::CutMidway
                                        : Flake::RateLimited;
        upstream::UpstreamObserver *observer = call.observer;
        switch (flake) {
        case Flake::Status500:
            observer->onResponseHead({500, {{"content-type", "application/json"}}});
            if (call.live)
                observer->onResponseBody(R"({"error":{"message":"boom","type":"server_error"}})");
            finish(call, upstream::TransportError::None);
            break;
        case Flake::Reset:
            finish(call, upstream::TransportError::ConnectionLost);
            break;
        case Flake::CutMidway:
            if (stream) {
                observer->onResponseHead({200, {{"content-type", "text/event-stream"}}});
                if (call.live)
                    observer->onResponseBody(FakeTransport::chunkEvent(u"partial "_s));
            } else {
                observer->onResponseHead({200, {{"content-type", "application/json"}}});
                if (call.live)
                    observer->onResponseBody(R"({"id":"c1","choices":[{"message":)");
            }
            finish(call, upstream::TransportError::ConnectionLost);
            break;
        case Flake::RateLimited:
            observer->onResponseHead(
                {429, {{"content-type", "application/json"}, {"retry-after", "1"}}});
            if (call.live)
                observer->onResponseBody(R"({"error":{"message":"slow down","type":"x"}})");
            finish(call, upstream::TransportError::None);
            break;
        }
    }

    static void finish(FakeCallState &call, upstream::TransportError error)
    {
        if (!call.live)
            return;
        call.live = false;
        call.observer->onFinished({error, upstream::describe(error)});
    }

    static void answer(FakeCallState &call, bool stream)
    {
        upstream::UpstreamObserver *observer = call.observer;
        if (stream) {
            observer->onResponseHead({200, {{"content-type", "text/event-stream"}}});
            if (call.live)
                observer->onResponseBody(FakeTransport::chunkEvent(u"whole "_s) +
                                         FakeTransport::chunkEvent(u"answer"_s) +
                                         "data: [DONE]\n\n");
        } else {
            observer->onResponseHead({200, {{"content-type", "application/json"}}});
            if (call.live)
                observer->onResponseBody(FakeTransport::completion(u"whole answer"_s));
        }
        finish(call, upstream::TransportError::None);
    }

    static void judge(const ClientLog &log, bool stream, ChaosResult &result)
    {
        result.attemptsTold += log.attempts();
        if (stream && log.streamBegun) {
            if (!log.streamFailure) {
                QCOMPARE(log.streamedText(), u"whole answer"_s);
                QVERIFY(log.events.constLast().isDone());
                ++result.answered;
                return;
            }
            // Failed after its first byte: the client saw the part and then the error event.
            QVERIFY(!log.events.isEmpty());
            QCOMPARE(log.streamFailure->code, u"upstream_stream_interrupted"_s);
            ++result.streamsCutAfterFirstByte;
            return;
        }
        if (log.status == 200) {
            QCOMPARE(log.content(), u"whole answer"_s);
            ++result.answered;
            return;
        }
        QVERIFY2(log.error, "a request ended with neither an answer nor an error");
        const QString code = log.error->code;
        ++result.failuresByCode[code];
        result.failures.append(u"%1: %2"_s.arg(code, log.error->message));
        const bool limitToBlame =
            code == u"attempts_exhausted"_s || code == u"retry_budget_exhausted"_s;
        if (!limitToBlame || !log.error->message.contains(u"Tried `"_s))
            result.lost.append(u"%1 (%2): %3"_s.arg(code).arg(log.status).arg(log.error->message));
    }

    Fixture m_fixture;
    QRandomGenerator m_random;
    std::multimap<timing::Clock::TimePoint, std::size_t> m_due;
    std::size_t m_seen = 0;
};

// With `breakersTrip` false the flaky providers stay in rotation the whole run: the hardest
// case for the retry loop. With it true they drop out once their breakers open.
QByteArray chaosConfig(int budgetPercent, bool breakersTrip)
{
    QByteArray yaml = "providers:\n";
    for (const char *id : {"healthy", "flaky-1", "flaky-2", "flaky-3", "flaky-4"}) {
        yaml += QByteArray("  - {id: ") + id + ", kind: openai, base_url: \"http://" + id +
                ".test/v1\", models: [m]}\n";
    }
    if (!breakersTrip)
        yaml += "breaker: {consecutive_failures: 1000000, failure_rate: 1.0}\n";
    return yaml + "retries: {budget_percent: " + QByteArray::number(budgetPercent) + "}\n";
}

} // namespace

class ExecutionChaosTest : public QObject {
    Q_OBJECT

private slots:
    void nothingIsLost_data();
    void nothingIsLost();
    void fullRetryBudgetAnswersEveryRequestThatCanBeAnswered_data();
    void fullRetryBudgetAnswersEveryRequestThatCanBeAnswered();
};

void ExecutionChaosTest::nothingIsLost_data()
{
    QTest::addColumn<quint32>("seed");
    QTest::addColumn<bool>("breakersTrip");
    for (quint32 seed : {1, 2, 3}) {
        QTest::addRow("seed %u, breakers trip", seed) << seed << true;
        QTest::addRow("seed %u, flaky providers stay in", seed) << seed << false;
    }
}

void ExecutionChaosTest::nothingIsLost()
{
    QFETCH(quint32, seed);
    QFETCH(bool, breakersTrip);
    ChaosRun chaos(chaosConfig(20, breakersTrip), seed); // the default retry budget
    const ChaosResult result = chaos.run();
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(result.lost.isEmpty(), qPrintable(result.lost.mid(0, 5).join(u'\n')));
    // Every call a provider saw is one a client was told about.
    QCOMPARE(result.callsMade, result.attemptsTold);
    QVERIFY(result.answered > kRequests * 9 / 10);
    const Fixture &f = chaos.fixture();
    QCOMPARE(f.retryBudget.requestsInFlight(), 0);
    QCOMPARE(f.retryBudget.retriesInFlight(), 0);
    QCOMPARE(f.scheduler.pending(), std::size_t(0));
    // Every slot an attempt took is back: in flight, and failed-over traffic.
    for (int slot = 0; slot < f.health.providerCount(); ++slot) {
        QCOMPARE(f.health.inFlight(slot), 0);
        QCOMPARE(f.health.failoverInFlight(slot), 0);
    }
    qInfo("answered %d, streams cut after their first byte %d, failures by code %s",
          result.answered, result.streamsCutAfterFirstByte,
          qPrintable(QStringList(result.failuresByCode.keys()).join(u", "_s)));
}

void ExecutionChaosTest::fullRetryBudgetAnswersEveryRequestThatCanBeAnswered_data()
{
    QTest::addColumn<bool>("breakersTrip");
    QTest::newRow("breakers trip") << true;
    QTest::newRow("flaky providers stay in") << false;
}

void ExecutionChaosTest::fullRetryBudgetAnswersEveryRequestThatCanBeAnswered()
{
    QFETCH(bool, breakersTrip);
    ChaosRun chaos(chaosConfig(100, breakersTrip), 7);
    const ChaosResult result = chaos.run();
    if (QTest::currentTestFailed())
        return;
    QVERIFY2(result.failures.isEmpty(), qPrintable(result.failures.mid(0, 5).join(u'\n')));
    QCOMPARE(result.answered + result.streamsCutAfterFirstByte, kRequests);
    QCOMPARE(result.callsMade, result.attemptsTold);
}

QTEST_GUILESS_MAIN(ExecutionChaosTest)
#include "tst_execution_chaos.moc"
