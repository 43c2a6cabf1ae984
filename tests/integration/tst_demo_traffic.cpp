// Demo traffic against the embedded demo's own config: each model is asked for at an endpoint it
// is served at, so a healthy demo shows no client error, and every answer is priced, so the
// demo's Usage page shows spend.

#include "bridge/engine_host.h"
#include "config/config_loader.h"
#include "sim/demo_traffic.h"
#include "telemetry/trace_feed.h"

#include <QSet>
#include <QTest>
#include <memory>

using namespace Qt::StringLiterals;
using namespace switchyard;
using protocol::Operation;
using sim::DemoModel;

namespace {

constexpr int kTrafficTimeoutMs = 60000;

config::ModelRoute modelRoute(const QString &name, protocol::Operations endpoints)
{
    config::ModelRoute route;
    route.publicName = name;
    route.upstreamName = name;
    route.endpoints = endpoints;
    return route;
}

config::ProviderConfig provider(const QString &id, const QList<config::ModelRoute> &models)
{
    config::ProviderConfig provider;
    provider.id = id;
    provider.kind = config::ProviderKind::Simulated;
    provider.models = models;
    return provider;
}

constexpr protocol::Operations kEmbeddings = protocol::operationBit(Operation::Embeddings);
constexpr protocol::Operations kCompletions = protocol::operationBit(Operation::Completions);

config::LoadResult loadDemo()
{
    return config::loadConfigFile(qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") +
                                      u"/resources/demo.yaml"_s,
                                  config::processEnvironment());
}

QString describe(const telemetry::RequestRecord &record)
{
    return u"%1 %2 at %3: %4"_s.arg(QString::number(record.status), record.model, record.endpoint,
                                    record.outcome);
}

} // namespace

namespace switchyard::sim {
// How QCOMPARE prints a DemoModel: "demo-embed at /v1/embeddings".
char *toString(const DemoModel &model)
{
    return QTest::toString(model.name + u" at "_s + protocol::operationPath(model.operation));
}
} // namespace switchyard::sim

Q_DECLARE_METATYPE(QList<switchyard::config::ProviderConfig>)
Q_DECLARE_METATYPE(QList<switchyard::sim::DemoModel>)

class DemoTrafficTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void eachModelIsAskedForAtAnEndpointItServes_data();
    void eachModelIsAskedForAtAnEndpointItServes();
    void theDemosModelsAreChatAndOneEmbeddingsModel();
    void demoTrafficOnTheDemoGetsNoClientError();
    void demoTrafficOnTheDemoIsPriced();

private:
    // What the demo's own traffic made on the demo's config: every request finished while it
    // ran, as the console's trace feed delivered them.
    QList<telemetry::RequestRecord> m_finished;
};

void DemoTrafficTest::initTestCase()
{
    QVERIFY2(!qEnvironmentVariable("SWITCHYARD_SOURCE_DIR").isEmpty(),
             "SWITCHYARD_SOURCE_DIR must name the source tree");
    const config::LoadResult demo = loadDemo();
    QVERIFY(demo.ok());
    config::Config config = *demo.config;
    config.server.listenPort = 0;
    EngineHost host(std::move(config));
    connect(&host, &EngineBridge::traceFeedUpdated, this,
            [this](const telemetry::TraceFeed &feed) { m_finished.append(feed.finished); });
    QString error;
    QVERIFY2(host.start(&error), qPrintable(error));

    // At the console's rate, until every model has been asked for several times.
    host.setDemoTraffic(true, 40.0);
    const auto timesAskedFor = [this](const QString &model) {
        return std::count_if(
            m_finished.cbegin(), m_finished.cend(),
            [&model](const telemetry::RequestRecord &record) { return record.model == model; });
    };
    QTRY_VERIFY_WITH_TIMEOUT(m_finished.size() >= 200 && timesAskedFor(u"demo-light"_s) >= 10 &&
                                 timesAskedFor(u"demo-chat"_s) >= 10 &&
                                 timesAskedFor(u"demo-embed"_s) >= 10 &&
                                 timesAskedFor(u"demo-pro"_s) >= 10,
                             kTrafficTimeoutMs);
    host.setDemoTraffic(false, 0.0);
}

void DemoTrafficTest::eachModelIsAskedForAtAnEndpointItServes_data()
{
    QTest::addColumn<QList<config::ProviderConfig>>("providers");
    QTest::addColumn<QList<DemoModel>>("expected");

    QTest::newRow("chat models")
        << QList{provider(u"a"_s, {modelRoute(u"light"_s, protocol::kChatOperations),
                                   modelRoute(u"pro"_s, protocol::kChatOperations)})}
        << QList{DemoModel{u"light"_s, Operation::Chat}, DemoModel{u"pro"_s, Operation::Chat}};
    QTest::newRow("embeddings only")
        << QList{provider(u"a"_s, {modelRoute(u"chat"_s, protocol::kChatOperations),
                                   modelRoute(u"vectors"_s, kEmbeddings)})}
        << QList{DemoModel{u"chat"_s, Operation::Chat},
                 DemoModel{u"vectors"_s, Operation::Embeddings}};
    QTest::newRow("chat at one provider, embeddings at another")
        << QList{provider(u"a"_s, {modelRoute(u"both"_s, kEmbeddings)}),
                 provider(u"b"_s, {modelRoute(u"both"_s, protocol::kChatOperations)})}
        << QList{DemoModel{u"both"_s, Operation::Chat}};
    QTest::newRow("named by two providers, listed once")
        << QList{provider(u"a"_s, {modelRoute(u"light"_s, protocol::kChatOperations)}),
                 provider(u"b"_s, {modelRoute(u"pro"_s, protocol::kChatOperations),
                                   modelRoute(u"light"_s, protocol::kChatOperations)})}
        << QList{DemoModel{u"light"_s, Operation::Chat}, DemoModel{u"pro"_s, Operation::Chat}};
    QTest::newRow("legacy completions only: left out")
        << QList{provider(u"a"_s, {modelRoute(u"instruct"_s, kCompletions),
                                   modelRoute(u"chat"_s, protocol::kChatOperations)})}
        << QList{DemoModel{u"chat"_s, Operation::Chat}};
}

void DemoTrafficTest::eachModelIsAskedForAtAnEndpointItServes()
{
    QFETCH(QList<config::ProviderConfig>, providers);
    QFETCH(QList<DemoModel>, expected);

    QCOMPARE(sim::demoModelsOf(providers), expected);
}

void DemoTrafficTest::theDemosModelsAreChatAndOneEmbeddingsModel()
{
    const config::LoadResult demo = loadDemo();
    QVERIFY(demo.ok());

    const QList<DemoModel> expected{
        {u"demo-light"_s, Operation::Chat},
        {u"demo-chat"_s, Operation::Chat},
        {u"demo-embed"_s, Operation::Embeddings},
        {u"demo-pro"_s, Operation::Chat},
    };
    QCOMPARE(sim::demoModelsOf(demo.config->providers), expected);
}

void DemoTrafficTest::demoTrafficOnTheDemoGetsNoClientError()
{
    QStringList clientErrors;
    QSet<QString> embeddingsEndpoints;
    QSet<QString> chatEndpoints;
    for (const telemetry::RequestRecord &record : std::as_const(m_finished)) {
        if (record.status >= 400 && record.status < 500)
            clientErrors.append(describe(record));
        (record.model == u"demo-embed"_s ? embeddingsEndpoints : chatEndpoints)
            .insert(record.endpoint);
    }
    QVERIFY2(clientErrors.isEmpty(), qPrintable(clientErrors.join(u'\n')));
    QCOMPARE(embeddingsEndpoints, QSet<QString>{u"/v1/embeddings"_s});
    QCOMPARE(chatEndpoints, QSet<QString>{u"/v1/chat/completions"_s});
}

void DemoTrafficTest::demoTrafficOnTheDemoIsPriced()
{
    // Every model has a price; an answered request used tokens, so it cost something. A failed
    // one (the simulated providers' error rate) may have cost nothing, but is priced all the same.
    QSet<QString> answeredModels;
    for (const telemetry::RequestRecord &record : std::as_const(m_finished)) {
        QVERIFY2(record.priced, qPrintable(describe(record)));
        if (record.status == 200) {
            QVERIFY2(record.costUsd > 0.0, qPrintable(describe(record)));
            answeredModels.insert(record.model);
        }
    }
    QCOMPARE(answeredModels,
             (QSet<QString>{u"demo-light"_s, u"demo-chat"_s, u"demo-embed"_s, u"demo-pro"_s}));
}

QTEST_GUILESS_MAIN(DemoTrafficTest)
#include "tst_demo_traffic.moc"
