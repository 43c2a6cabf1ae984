// A burst of requests arriving at once: the engine starts a bounded share of them in each turn
// of its loop, and the rest wait their turn and are answered, none lost; beyond
// `admission.max_in_flight` (requests running and waiting together), or after waiting
// `admission.max_start_wait`, a request is refused with a clean 503 `gateway_overloaded`; a client
// that leaves while its request waits is recorded as gone and its request never reaches a
// provider.

#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QLoggingCategory>
#include <QRegularExpression>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

using namespace switchyard;
using namespace switchyard::testing;

namespace {

constexpr int kWaitMs = 60000;
// The gateway's requests started per turn of its loop (http/gateway_server.cpp).
constexpr int kStartsPerTurn = 32;

// Every finished request's status, and what the trace says about waiting to start.
class TraceCollector final : public telemetry::TraceSink {
public:
    void traceFinished(const telemetry::Trace &trace) override
    {
        statuses.push_back(trace.status);
        for (const telemetry::Span &span : trace.spans) {
            if (span.name == QLatin1String("waited to start"))
                ++waitedToStart;
            if (span.name == QLatin1String("completion") &&
                span.detail.startsWith(QLatin1String("client_disconnected after waiting")))
                ++goneWhileWaiting;
        }
    }
    std::vector<int> statuses;
    int waitedToStart = 0;
    int goneWhileWaiting = 0;
};

// The gauge of requests waiting to start, as /metrics gives it.
int waitingToStart(Engine &engine)
{
    static const QRegularExpression gauge(
        QStringLiteral("^switchyard_requests_waiting_to_start (\\d+)$"),
        QRegularExpression::MultilineOption);
    const QRegularExpressionMatch match = gauge.match(QString::fromUtf8(engine.metricsText()));
    return match.hasMatch() ? match.captured(1).toInt() : -1;
}

// Counts the burst's answers: each is 200, or a clean refusal, 503 `gateway_overloaded` with
// Retry-After whose message says `why`.
void tally(const std::vector<std::unique_ptr<TestClient>> &clients, const char *why, int &answered,
           int &refused)
{
    for (const auto &client : clients) {
        if (client->status() == 200) {
            ++answered;
            continue;
        }
        QCOMPARE(client->status(), 503);
        QCOMPARE(client->header("retry-after"), QByteArray("1"));
        const QJsonObject error = errorOf(client->body());
        QCOMPARE(error.value(QStringLiteral("code")).toString(),
                 QStringLiteral("gateway_overloaded"));
        const QString message = error.value(QStringLiteral("message")).toString();
        QVERIFY2(message.contains(QLatin1String(why)), qPrintable(message));
        ++refused;
    }
}

std::vector<std::unique_ptr<TestClient>> burst(quint16 port, int clients, bool stream)
{
    std::vector<std::unique_ptr<TestClient>> sent;
    for (int i = 0; i < clients; ++i) {
        sent.push_back(std::make_unique<TestClient>(port));
        sent.back()->post("/v1/chat/completions",
                          chatBody("test-model", stream, "request " + QByteArray::number(i)));
    }
    return sent;
}

} // namespace

class GatewayBurstsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanup();
    void aBurstIsAnsweredWholeSomeOfItAfterWaitingToStart_data();
    void aBurstIsAnsweredWholeSomeOfItAfterWaitingToStart();
    void beyondMaxInFlightWaitingRequestsAreRefusedCleanly();
    void aClientGoneWhileWaitingIsNeverStarted();
    void aRequestThatWaitedTooLongIsRefusedCleanly();

private:
    void start(int maxInFlight = 4096, int answerDelayMs = 0,
               std::chrono::milliseconds maxStartWait = std::chrono::seconds(20));
    // Calls `then` once, in the first turn of the loop in which at least `waiting` requests of
    // the burst wait to start (a zero timer looks in every turn, as the queue drains within a
    // few). Returns whether it did; with `giveUpWhen`, false as soon as that holds first.
    bool whenWaiting(int waiting, const std::function<void()> &then,
                     const std::function<bool()> &giveUpWhen = {});

    std::unique_ptr<FakeUpstream> m_fake;
    std::unique_ptr<Engine> m_engine;
    TraceCollector m_traces;
};

void GatewayBurstsTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void GatewayBurstsTest::cleanup()
{
    if (m_engine)
        m_engine->recorder().removeSink(&m_traces);
    m_engine.reset();
    m_fake.reset();
    m_traces = TraceCollector();
}

void GatewayBurstsTest::start(int maxInFlight, int answerDelayMs,
                              std::chrono::milliseconds maxStartWait)
{
    m_fake = std::make_unique<FakeUpstream>();
    m_fake->answerDelayMs = answerDelayMs;
    config::Config config = gatewayConfig(
        {providerFor(QStringLiteral("primary"), *m_fake, {QStringLiteral("test-model")})});
    config.server.maxConnectionsPerAddress = 0; // every client of the burst is 127.0.0.1
    config.resilience.admission.maxInFlight = maxInFlight;
    config.resilience.admission.maxStartWait = maxStartWait;
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    m_engine->recorder().addSink(&m_traces);
}

void GatewayBurstsTest::aBurstIsAnsweredWholeSomeOfItAfterWaitingToStart_data()
{
    QTest::addColumn<bool>("stream");
    QTest::newRow("whole answers") << false;
    QTest::newRow("streams") << true;
}

void GatewayBurstsTest::aBurstIsAnsweredWholeSomeOfItAfterWaitingToStart()
{
    QFETCH(bool, stream);
    // Well over what one turn starts, within the test's open-file limit (two descriptors a
    // client here, two in the gateway, one at the fake).
    constexpr int kClients = 180;
    start();
    const auto clients = burst(m_engine->port(), kClients, stream);
    QTRY_VERIFY_WITH_TIMEOUT(std::all_of(clients.begin(), clients.end(),
                                         [](const auto &client) { return client->finished(); }),
                             kWaitMs);
    for (const auto &client : clients)
        QCOMPARE(client->status(), 200);
    QTRY_COMPARE(int(m_traces.statuses.size()), kClients);
    // The burst was more than one turn takes on: some of it waited, and says so in its trace.
    QVERIFY2(m_traces.waitedToStart > 0, "no request waited to start");
    QCOMPARE(waitingToStart(*m_engine), 0);
    QCOMPARE(m_engine->inFlight(), 0);
}

void GatewayBurstsTest::beyondMaxInFlightWaitingRequestsAreRefusedCleanly()
{
    constexpr int kMaxInFlight = 40;
    constexpr int kClients = 200;
    start(kMaxInFlight, 300); // answers slow enough that the first ones are still running
    const auto clients = burst(m_engine->port(), kClients, false);
    QTRY_VERIFY_WITH_TIMEOUT(std::all_of(clients.begin(), clients.end(),
                                         [](const auto &client) { return client->finished(); }),
                             kWaitMs);
    int answered = 0;
    int refused = 0;
    tally(clients, "`admission.max_in_flight`", answered, refused);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(answered + refused, kClients);
    QVERIFY2(answered >= kMaxInFlight, qPrintable(QString::number(answered)));
    QVERIFY(refused > 0);
    QCOMPARE(int(m_fake->requests().size()), answered);
    QCOMPARE(waitingToStart(*m_engine), 0);
}

void GatewayBurstsTest::aClientGoneWhileWaitingIsNeverStarted()
{
    constexpr int kClients = 180;
    start(4096, 1000);
    // How many of a burst wait at once depends on how its clients, on this thread too,
    // interleave with the gateway: on a busy machine the most seen was 28 to 170. A burst in which
    // never more waited than the next turn starts proves nothing here and is sent again.
    int requestsBefore = 0;
    bool clientsLeft = false;
    for (int burstNumber = 0; burstNumber < 5 && !clientsLeft; ++burstNumber) {
        m_traces = TraceCollector();
        requestsBefore = int(m_fake->requests().size());
        auto clients = burst(m_engine->port(), kClients, false);
        // Once more of the burst waits than the next turn starts, every client leaves.
        clientsLeft = whenWaiting(
            2 * kStartsPerTurn,
            [&] {
                for (auto &client : clients)
                    client->disconnectNow();
            },
            [&] {
                return std::all_of(clients.begin(), clients.end(),
                                   [](const auto &client) { return client->finished(); });
            });
        QTRY_COMPARE_WITH_TIMEOUT(int(m_traces.statuses.size()), kClients, kWaitMs);
    }
    QVERIFY2(clientsLeft, "in five bursts, never more waited than a turn starts");
    QVERIFY2(m_traces.goneWhileWaiting > 0, "no request was recorded as gone while it waited");
    for (int status : m_traces.statuses) // 200 only for one answered before its client left
        QVERIFY2(status == 499 || status == 200, qPrintable(QString::number(status)));
    // Those gone while they waited never reached the provider.
    const int reached = int(m_fake->requests().size()) - requestsBefore;
    QVERIFY2(reached <= kClients - m_traces.goneWhileWaiting,
             qPrintable(QStringLiteral("%1 requests reached the provider, %2 left while waiting")
                            .arg(reached)
                            .arg(m_traces.goneWhileWaiting)));
    QCOMPARE(waitingToStart(*m_engine), 0);
}

void GatewayBurstsTest::aRequestThatWaitedTooLongIsRefusedCleanly()
{
    constexpr int kClients = 180;
    start(4096, 1000, std::chrono::milliseconds(300));
    const auto clients = burst(m_engine->port(), kClients, false);
    // The engine held up for longer than a request may wait to start, as an engine far behind
    // would be: every request still waiting has waited too long when the next turn comes.
    QVERIFY(whenWaiting(1, [] { QThread::msleep(400); }));
    QTRY_VERIFY_WITH_TIMEOUT(std::all_of(clients.begin(), clients.end(),
                                         [](const auto &client) { return client->finished(); }),
                             kWaitMs);
    int answered = 0;
    int refused = 0;
    tally(clients, "longer than `admission.max_start_wait` (300 ms)", answered, refused);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(answered + refused, kClients);
    QVERIFY(refused > 0);
    QCOMPARE(int(m_fake->requests().size()), answered);
    QCOMPARE(waitingToStart(*m_engine), 0);
}

bool GatewayBurstsTest::whenWaiting(int waiting, const std::function<void()> &then,
                                    const std::function<bool()> &giveUpWhen)
{
    bool done = false;
    QTimer everyTurn;
    connect(&everyTurn, &QTimer::timeout, this, [&] {
        if (done || waitingToStart(*m_engine) < waiting)
            return;
        done = true;
        then();
    });
    everyTurn.start(0);
    (void)QTest::qWaitFor([&] { return done || (giveUpWhen && giveUpWhen()); }, kWaitMs);
    return done;
}

QTEST_GUILESS_MAIN(GatewayBurstsTest)
#include "tst_gateway_bursts.moc"
