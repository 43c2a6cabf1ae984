// Chaos: several clients send a few hundred streamed and plain requests at once while three
// providers answer, fail with 500, hang, reset or cut their streams in a seeded random order.
// Whatever happens, every client gets a valid answer or a well-formed OpenAI error (in the body,
// or as the last event of a stream that had begun), nothing stays in flight, every attempt the
// providers saw is one the client was told about, and retries stay within their budget.

#include "engine/engine.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "health/health_registry.h"
#include "http/gateway_server.h"
#include "resilience/retry_policy.h"
#include "test_client.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QTest>
#include <algorithm>
#include <memory>
#include <vector>

using namespace switchyard;
using namespace switchyard::testing;
using namespace std::chrono_literals;

namespace {

using Mode = FakeUpstream::Mode;

constexpr int kProviders = 3;
constexpr int kClients = 8;
constexpr int kRequestsPerClient = 40;
constexpr int kMaxAttempts = 3;
constexpr double kBudgetPercent = 20.0;
constexpr int kMinRetriesInFlight = 2;
// Longer than any request can run with these timeouts; a script never runs dry.
constexpr int kScriptLength = 4000;

// Half the calls answer; the rest fail in every way a provider can.
QList<Mode> chaosScript(quint32 seed)
{
    QRandomGenerator random(seed);
    QList<Mode> script;
    script.reserve(kScriptLength);
    for (int i = 0; i < kScriptLength; ++i) {
        const int draw = int(random.bounded(100));
        script.append(draw < 50   ? Mode::Answer
                      : draw < 65 ? Mode::Status
                      : draw < 75 ? Mode::Hang
                      : draw < 85 ? Mode::Reset
                                  : Mode::CutStream);
    }
    return script;
}

// One client's requests, one after the other, each on its own connection.
struct Sequence {
    int client = 0;
    int sent = 0;
    std::unique_ptr<TestClient> current;
    bool stream = false;
};

struct Outcome {
    bool stream = false;
    int status = 0;
    QByteArray requestId;
    int attempts = 0;
    QString problem; // empty when the answer was well formed
};

bool isOpenAiError(const QJsonObject &error)
{
    return !error.value(QStringLiteral("message")).toString().isEmpty() &&
           !error.value(QStringLiteral("type")).toString().isEmpty();
}

// Empty when the client's answer is one an OpenAI client can read; otherwise what is wrong.
QString problemWith(const TestClient &client, bool stream)
{
    if (client.framingError())
        return QStringLiteral("broken HTTP framing");
    if (client.status() >= 400) {
        if (client.header("content-type") != "application/json")
            return QStringLiteral("error without a JSON body");
        return isOpenAiError(errorOf(client.body())) ? QString()
                                                     : QStringLiteral("malformed error body");
    }
    if (client.status() != 200)
        return QStringLiteral("unexpected status %1").arg(client.status());
    if (!stream) {
        const QJsonObject answer = QJsonDocument::fromJson(client.body()).object();
        return answer.value(QStringLiteral("choices")).toArray().isEmpty()
                   ? QStringLiteral("200 without a completion")
                   : QString();
    }
    const QList<upstream::SseEvent> &events = client.events();
    if (events.isEmpty())
        return QStringLiteral("empty stream");
    if (events.constLast().isDone()) {
        for (const upstream::SseEvent &event : events) {
            if (!errorOf(event.data).isEmpty())
                return QStringLiteral("error event in a stream that ended with [DONE]");
        }
        return QString();
    }
    // Failed after its first byte: the last event is the error, and nothing claims completion.
    for (const upstream::SseEvent &event : events) {
        if (event.isDone())
            return QStringLiteral("[DONE] before the end");
    }
    return isOpenAiError(errorOf(events.constLast().data))
               ? QString()
               : QStringLiteral("stream ended neither with [DONE] nor with an error event");
}

} // namespace

class ChaosTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void everyRequestIsAnsweredWellUnderChaos();

private:
    void sendNext(Sequence &sequence);
    void collect(Sequence &sequence);

    std::unique_ptr<Engine> m_engine;
    QList<Outcome> m_outcomes;
    int m_finishedSequences = 0;
};

void ChaosTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false\n"
                                                    "switchyard.*.warning=false"));
}

void ChaosTest::sendNext(Sequence &sequence)
{
    if (sequence.sent == kRequestsPerClient) {
        ++m_finishedSequences;
        return;
    }
    sequence.stream = (sequence.client + sequence.sent) % 2 == 1;
    ++sequence.sent;
    sequence.current = std::make_unique<TestClient>(m_engine->port());
    TestClient *client = sequence.current.get();
    client->post("/v1/chat/completions", chatBody("test-model", sequence.stream,
                                                  "chaos " + QByteArray::number(sequence.client) +
                                                      "/" + QByteArray::number(sequence.sent)));
}

void ChaosTest::collect(Sequence &sequence)
{
    TestClient &client = *sequence.current;
    Outcome outcome;
    outcome.stream = sequence.stream;
    outcome.status = client.status();
    outcome.requestId = client.header("x-switchyard-request-id");
    const QByteArray attempts = client.header("x-switchyard-attempts");
    // Refusals before routing (admission, no route) made no attempt and carry no count.
    outcome.attempts = attempts.isEmpty() ? 0 : attempts.toInt();
    outcome.problem = problemWith(client, sequence.stream);
    if (outcome.requestId.isEmpty())
        outcome.problem = QStringLiteral("no request id");
    m_outcomes.append(outcome);
}

void ChaosTest::everyRequestIsAnsweredWellUnderChaos()
{
    std::vector<std::unique_ptr<FakeUpstream>> fakes;
    QList<config::ProviderConfig> providers;
    for (int i = 0; i < kProviders; ++i) {
        fakes.push_back(std::make_unique<FakeUpstream>());
        FakeUpstream &fake = *fakes.back();
        fake.status = 500;
        fake.cutAfterEvents = 1;
        fake.streamEvents = 3;
        fake.eventIntervalMs = 2;
        fake.scriptedModes = chaosScript(quint32(1000 + i));
        providers.append(
            providerFor(QStringLiteral("p%1").arg(i), fake, {QStringLiteral("test-model")}));
    }
    config::Config config = gatewayConfig(providers);
    config.timeouts = shortTimeouts();
    config.timeouts.firstToken = 200ms;
    config.timeouts.idle = 200ms;
    config.timeouts.total = 1s;
    config.resilience.retries.backoffBase = 5ms;
    config.resilience.retries.backoffJitter = 5ms;
    config.resilience.retries.backoffMax = 20ms;
    config.resilience.retries.maxAttempts = kMaxAttempts;
    config.resilience.retries.budgetPercent = kBudgetPercent;
    config.resilience.retries.minRetriesInFlight = kMinRetriesInFlight;
    // Breakers open and close again within the test; no probe calls muddle the counts.
    config.resilience.breaker.openFor = 200ms;
    config.resilience.breaker.maxOpenFor = 400ms;
    config.resilience.breaker.ramp = 0ms;
    config.resilience.probes.enabled = false;
    m_engine = startEngine(config);
    QVERIFY(m_engine);
    const auto *server = m_engine->findChild<http::GatewayServer *>();
    QVERIFY(server);

    std::vector<Sequence> sequences(kClients);
    for (int i = 0; i < kClients; ++i) {
        sequences[i].client = i;
        sendNext(sequences[i]);
    }
    const auto step = [this, &sequences] {
        for (Sequence &sequence : sequences) {
            if (sequence.current && sequence.current->finished()) {
                collect(sequence);
                sequence.current.reset();
                sendNext(sequence);
            }
        }
        return m_finishedSequences == kClients;
    };
    QTRY_VERIFY_WITH_TIMEOUT(step(), 240000);

    // Every answer is one an OpenAI client can read.
    QCOMPARE(m_outcomes.size(), kClients * kRequestsPerClient);
    int answered = 0;
    for (const Outcome &outcome : m_outcomes) {
        QVERIFY2(outcome.problem.isEmpty(),
                 qPrintable(QStringLiteral("%1 (%2, HTTP %3)")
                                .arg(outcome.problem, QString::fromLatin1(outcome.requestId))
                                .arg(outcome.status)));
        answered += outcome.status == 200 ? 1 : 0;
    }
    QVERIFY(answered > 0);

    // Nothing is left behind.
    QTRY_COMPARE_WITH_TIMEOUT(m_engine->inFlight(), 0, 5000);
    QCOMPARE(healthInFlight(*m_engine), 0);
    const resilience::RetryBudget &budget = m_engine->retryBudget();
    QCOMPARE(budget.requestsInFlight(), 0);
    QCOMPARE(budget.retriesInFlight(), 0);

    // The providers saw exactly the attempts each client was told of, and no request made more
    // than the cap. With 500 (not 429) as the only status, every attempt of a request goes to
    // another provider, so a request's attempts are the providers that saw it. A provider may
    // see one attempt more than once: libcurl sends a request again, up to five times, when a
    // reused connection dies before any byte of the answer (the stale keep-alive rule), and a
    // provider that resets right after reading a request looks exactly like that.
    constexpr int kTransportSendsPerAttempt = 6;
    int retries = 0;
    for (const Outcome &outcome : m_outcomes) {
        int providersSeen = 0;
        for (const auto &fake : fakes) {
            const int copies = fake->requestsWithId(outcome.requestId);
            QVERIFY(copies <= kTransportSendsPerAttempt);
            providersSeen += copies > 0 ? 1 : 0;
        }
        QVERIFY2(providersSeen == outcome.attempts,
                 qPrintable(QStringLiteral("%1: %2 attempt(s) reported, %3 provider(s) saw it")
                                .arg(QString::fromLatin1(outcome.requestId))
                                .arg(outcome.attempts)
                                .arg(providersSeen)));
        QVERIFY(outcome.attempts <= kMaxAttempts);
        retries += std::max(0, outcome.attempts - 1);
    }

    // Every retry took a slot of the budget, and the slots in use never went beyond what the
    // budget allows for this many clients.
    QVERIFY(retries > 0);
    QVERIFY2(quint64(retries) <= budget.retriesGranted(),
             qPrintable(QStringLiteral("%1 retries made, %2 granted")
                            .arg(retries)
                            .arg(budget.retriesGranted())));
    const int allowedAtMost = std::max(kMinRetriesInFlight, int(kBudgetPercent / 100.0 * kClients));
    QVERIFY2(budget.peakRetriesInFlight() <= allowedAtMost,
             qPrintable(QStringLiteral("peak %1 retries in flight, at most %2 allowed")
                            .arg(budget.peakRetriesInFlight())
                            .arg(allowedAtMost)));
}

QTEST_GUILESS_MAIN(ChaosTest)
#include "tst_chaos.moc"
