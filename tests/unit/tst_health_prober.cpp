// Health probes as coroutines on the deadline scheduler, in simulated time: when each endpoint is
// probed, what its results do, endpoints added at runtime, and stopping in the middle of a wait
// or a probe call.

#include "execution_fixture.h"
#include "resilience/health_prober.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using namespace switchyard;
using namespace switchyard::testing;

class HealthProberTest : public QObject {
    Q_OBJECT

private slots:
    void probesEachEndpointStaggeredThenEveryInterval();
    void failedProbesTakeAnEndpointOutAndBringItBack();
    void endpointAddedAtRuntimeIsProbedToo();
    void stopEndsWaitsAndCalls();
};

namespace {

// After the test class: moc (Qt 6.4) loses its way in a raw string with "//" before it.
constexpr auto kProbedConfig = R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m]}
  - {id: beta, kind: openai, base_url: "http://beta.test/v1", models: [m]}
probes: {interval: 1s, timeout: 200ms, unhealthy_after: 2, healthy_after: 1}
)";

QStringList probedProviders(const FakeTransport &transport)
{
    QStringList providers;
    for (const auto &call : transport.calls)
        providers.append(call->provider());
    return providers;
}

} // namespace

void HealthProberTest::probesEachEndpointStaggeredThenEveryInterval()
{
    Fixture f(kProbedConfig);
    resilience::HealthProber prober(f.store, f.health, f.transport, f.scheduler);
    prober.start();
    f.advance(999ms);
    QVERIFY(f.transport.calls.empty());
    f.advance(1ms); // alpha: one interval after start
    QCOMPARE(probedProviders(f.transport), QStringList{u"alpha"_s});
    QCOMPARE(f.transport.last().request.url.path(), u"/v1/chat/completions"_s);
    QCOMPARE(prober.probesInFlight(), 1);
    f.transport.answer();
    QCOMPARE(prober.probesInFlight(), 0);
    f.advance(500ms); // beta: half an interval later, the endpoints spread over the interval
    QCOMPARE(probedProviders(f.transport), (QStringList{u"alpha"_s, u"beta"_s}));
    f.transport.answer();
    f.advance(500ms); // alpha again, one interval after its last probe started
    QCOMPARE(probedProviders(f.transport), (QStringList{u"alpha"_s, u"beta"_s, u"alpha"_s}));
}

void HealthProberTest::failedProbesTakeAnEndpointOutAndBringItBack()
{
    Fixture f(kProbedConfig);
    resilience::HealthProber prober(f.store, f.health, f.transport, f.scheduler);
    prober.start();
    const int alpha = f.slot(u"alpha"_s);
    f.advance(500ms);
    for (int probe = 0; probe < 2; ++probe) {
        f.advance(500ms); // alpha at 1 s and 2 s
        QCOMPARE(f.transport.last().provider(), u"alpha"_s);
        f.transport.status(503);
        f.advance(500ms);     // beta at 1.5 s and 2.5 s
        f.transport.answer(); // beta stays healthy
    }
    QVERIFY(!f.health.probeHealthy(alpha));
    QCOMPARE(f.health.snapshot()[alpha].lastFailure, u"health probe: HTTP 503"_s);
    // A probe that never answers fails by its own timeout (the transport's).
    f.advance(500ms);
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    f.transport.finish(upstream::TransportError::TotalTimeout);
    QCOMPARE(f.health.snapshot()[alpha].lastFailure, u"health probe: timed out after 200 ms"_s);
    f.advance(500ms);
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    f.transport.answer();
    f.advance(500ms);
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    f.transport.answer();
    QVERIFY(f.health.probeHealthy(alpha));
}

void HealthProberTest::endpointAddedAtRuntimeIsProbedToo()
{
    Fixture f(kProbedConfig);
    resilience::HealthProber prober(f.store, f.health, f.transport, f.scheduler);
    prober.start();
    config::ProviderConfig agent;
    agent.id = u"agent-7"_s;
    agent.kind = config::ProviderKind::OpenAi;
    agent.baseUrl = QUrl(u"http://agent-7.test/v1"_s);
    agent.models = {{u"m"_s, u"m"_s}};
    f.health.addProvider(agent);
    // The watcher sees it within an interval, and probes it one interval after that.
    f.advance(2s);
    QVERIFY2(probedProviders(f.transport).contains(u"agent-7"_s),
             qPrintable(probedProviders(f.transport).join(u' ')));
}

void HealthProberTest::stopEndsWaitsAndCalls()
{
    Fixture f(kProbedConfig);
    auto prober =
        std::make_unique<resilience::HealthProber>(f.store, f.health, f.transport, f.scheduler);
    prober->start();
    f.advance(1s);
    QVERIFY(f.transport.last().live); // alpha's probe under way, beta and the watcher waiting
    prober->stop();
    QVERIFY(!f.transport.last().live);
    QCOMPARE(f.scheduler.pending(), std::size_t(0));
    f.advance(5s);
    QCOMPARE(f.transport.calls.size(), std::size_t(1));

    prober->start(); // starts again from the beginning
    f.advance(1s);
    QCOMPARE(f.transport.calls.size(), std::size_t(2));
    prober.reset(); // destroyed mid-call: the same
    QVERIFY(!f.transport.last().live);
    QCOMPARE(f.scheduler.pending(), std::size_t(0));
}

QTEST_GUILESS_MAIN(HealthProberTest)
#include "tst_health_prober.moc"
