// Health probes as coroutines on the deadline scheduler, in simulated time: when each endpoint is
// probed, what its results do, endpoints added at runtime, and stopping in the middle of a wait
// or a probe call.

#include "execution_fixture.h"
#include "resilience/health_prober.h"

#include <QJsonDocument>
#include <QJsonObject>
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
    void aProbeTheGatewayCouldNotMakeSaysNothing();
    void endpointAddedAtRuntimeIsProbedToo();
    void stopEndsWaitsAndCalls();
    void probeIsCalledAsTrafficIs_data();
    void probeIsCalledAsTrafficIs();
    void probeAsksWhatTheModelServes_data();
    void probeAsksWhatTheModelServes();
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

void HealthProberTest::aProbeTheGatewayCouldNotMakeSaysNothing()
{
    Fixture f(kProbedConfig);
    resilience::HealthProber prober(f.store, f.health, f.transport, f.scheduler);
    prober.start();
    const int alpha = f.slot(u"alpha"_s);
    f.advance(1s);
    f.transport.status(503); // one real failure, of the two that take alpha out
    f.advance(500ms);
    f.transport.answer(); // beta
    // The next probe of alpha cannot open a socket: this process is out of descriptors.
    f.advance(500ms);
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    f.transport.finish(upstream::TransportError::LocalResources);
    QVERIFY(f.health.probeHealthy(alpha));
    QCOMPARE(f.health.snapshot()[alpha].lastFailure, u"health probe: HTTP 503"_s);
    // Probing goes on as usual: the next one is made an interval later.
    f.advance(500ms);
    f.transport.answer(); // beta
    f.advance(500ms);
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    QCOMPARE(prober.probesInFlight(), 1);
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

void HealthProberTest::probeIsCalledAsTrafficIs_data()
{
    QTest::addColumn<QByteArray>("provider");
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("url");
    QTest::addColumn<QByteArray>("keyHeader");
    QTest::addColumn<QByteArray>("keyValue");

    QTest::newRow("azure deployment of the first model")
        << "  - id: azure\n"
           "    kind: openai\n"
           "    base_url: https://myres.openai.azure.com/openai/deployments/{model}\n"
           "    api_key_env: KEY\n"
           "    api_key_header: api-key\n"
           "    query: {api-version: \"2024-10-21\"}\n"
           "    headers: {X-Team: support}\n"
           "    proxy: http://proxy.example.test:3128\n"
           "    models: [{name: gpt-4o, upstream: gpt4o-prod}, {name: mini, upstream: mini-prod}]\n"_ba
        << "POST"_ba
        << "https://myres.openai.azure.com/openai/deployments/gpt4o-prod/chat/"
           "completions?api-version=2024-10-21"_ba
        << "api-key"_ba
        << "the-key"_ba;
    QTest::newRow("anthropic health path, its own key header")
        << "  - id: claude\n"
           "    kind: anthropic\n"
           "    base_url: https://llm.example.test/anthropic/v1\n"
           "    api_key_env: KEY\n"
           "    probe_path: /health\n"
           "    query: {tenant: a}\n"
           "    headers: {X-Team: support}\n"
           "    proxy: http://proxy.example.test:3128\n"
           "    models: [claude]\n"_ba
        << "GET"_ba
        << "https://llm.example.test/health?tenant=a"_ba
        << "x-api-key"_ba
        << "the-key"_ba;
}

void HealthProberTest::probeIsCalledAsTrafficIs()
{
    QFETCH(QByteArray, provider);
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, url);
    QFETCH(QByteArray, keyHeader);
    QFETCH(QByteArray, keyValue);
    const config::LoadResult loaded =
        config::loadConfigText("providers:\n" + provider, u"probe.yaml"_s, [](const QString &) {
            return std::optional<QByteArray>("the-key");
        });
    QVERIFY(loaded.ok());
    const config::Config &config = *loaded.config;

    const auto request =
        resilience::HealthProber::probeRequest(config.resilience.probes, config.providers.first());

    QVERIFY(request);
    QCOMPARE(request->method, method);
    QCOMPARE(request->url.toEncoded(), url);
    const auto header = [&](QByteArrayView name) {
        for (const auto &[key, value] : request->headers) {
            if (key.compare(name, Qt::CaseInsensitive) == 0)
                return value;
        }
        return QByteArray();
    };
    QCOMPARE(header(keyHeader), keyValue);
    QCOMPARE(header("X-Team"), "support"_ba);
    QCOMPARE(header("x-switchyard-probe"), "1"_ba);
    QCOMPARE(request->proxy, QUrl(u"http://proxy.example.test:3128"_s));
}

void HealthProberTest::probeAsksWhatTheModelServes_data()
{
    QTest::addColumn<QByteArray>("models");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("field");

    QTest::newRow("chat first") << QByteArray("[{name: e, endpoints: [embeddings]}, c]")
                                << u"/v1/chat/completions"_s << u"c"_s << u"messages"_s;
    QTest::newRow("embeddings only")
        << QByteArray("[{name: e, upstream: text-embedding-3-small, endpoints: [embeddings]}]")
        << u"/v1/embeddings"_s << u"text-embedding-3-small"_s << u"input"_s;
    QTest::newRow("completions only") << QByteArray("[{name: i, endpoints: [completions]}]")
                                      << u"/v1/completions"_s << u"i"_s << u"prompt"_s;
    QTest::newRow("responses only") << QByteArray("[{name: r, endpoints: [responses]}]")
                                    << u"/v1/responses"_s << u"r"_s << u"input"_s;
}

void HealthProberTest::probeAsksWhatTheModelServes()
{
    QFETCH(QByteArray, models);
    QFETCH(QString, path);
    QFETCH(QString, model);
    QFETCH(QString, field);
    Fixture f(
        "providers:\n"
        "  - {id: alpha, kind: openai, responses_api: true, base_url: \"http://alpha.test/v1\","
        " models: " +
        models +
        "}\n"
        "probes: {interval: 1s, timeout: 200ms}\n");
    resilience::HealthProber prober(f.store, f.health, f.transport, f.scheduler);
    prober.start();
    f.advance(1s);

    QCOMPARE(f.transport.calls.size(), std::size_t(1));
    const upstream::UpstreamRequest &request = f.transport.last().request;
    QCOMPARE(request.url.path(), path);
    const QJsonObject body = QJsonDocument::fromJson(request.body).object();
    QCOMPARE(body.value("model"_L1).toString(), model);
    QVERIFY(body.contains(field));
    f.transport.answer();
}

QTEST_GUILESS_MAIN(HealthProberTest)
#include "tst_health_prober.moc"
