#include "config/config_loader.h"
#include "config_error_lines.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using switchyard::config::Config;
using switchyard::config::EnvironmentLookup;
using switchyard::config::LoadResult;
using switchyard::config::ProviderConfig;
using switchyard::config::ProviderKind;

namespace {

// Only LOCAL_KEY is set; every other name reads as unset, whatever the real environment holds.
EnvironmentLookup fakeEnvironment()
{
    return [](const QString &name) -> std::optional<QByteArray> {
        if (name == u"LOCAL_KEY"_s)
            return "sk-local-123"_ba;
        return std::nullopt;
    };
}

LoadResult load(const QByteArray &yaml)
{
    return switchyard::config::loadConfigText(yaml, u"test.yaml"_s, fakeEnvironment());
}

// The smallest valid provider list, appended where a case is about something else.
constexpr auto oneSimulatedProvider = "providers:\n"
                                      "  - id: sim\n"
                                      "    kind: simulated\n"
                                      "    models: [demo]\n";

} // namespace

class TestConfigLoader : public QObject {
    Q_OBJECT

private slots:
    void reportsEveryError_data();
    void reportsEveryError();
    void loadsEveryValueOfAFullFile();
    void appliesDefaultsForAbsentKeys();
    void parsesListenAddress_data();
    void parsesListenAddress();
    void parsesDurations_data();
    void parsesDurations();
    void parsesSizes_data();
    void parsesSizes();
    void loadsTheEmbeddedDemo();
    void reportsAnUnreadableFile();
    void readsTheProcessEnvironment();
};

void TestConfigLoader::reportsEveryError_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QStringList>("expectedErrors");

    QTest::newRow("syntax error") << "listen: 127.0.0.1: 8080\n"_ba
                                  << QStringList{
                                         u"test.yaml:1:18: invalid YAML: illegal map value"_s};
    QTest::newRow("empty document") << "# nothing but a comment\n"_ba
                                    << QStringList{u"test.yaml:1:1: config is empty; expected a "
                                                   u"map with `providers`"_s};
    QTest::newRow("document is a list")
        << "- id: sim\n"_ba
        << QStringList{u"test.yaml:1:1: config must be a map with `providers`, got a list"_s};
    QTest::newRow("second document") << QByteArray(oneSimulatedProvider) + "---\nlisten: x:1\n"_ba
                                     << QStringList{u"test.yaml:6:1: config must be a single YAML "
                                                    u"document, found another one"_s};

    QTest::newRow("model endpoints")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    responses_api: true\n"
           "    models:\n"
           "      - {name: a, endpoints: [chat, embedings]}\n"
           "      - {name: b, endpoints: [completions]}\n"
           "      - {name: c, dimensions: 8}\n"
           "      - {name: d, endpoints: []}\n"
           "  - id: claude\n"
           "    kind: anthropic\n"
           "    base_url: http://127.0.0.1:1/v1\n"
           "    models:\n"
           "      - {name: e, endpoints: [embeddings]}\n"
           "      - {name: f, endpoints: [responses]}\n"_ba
        << QStringList{
               u"test.yaml:4:5: `responses_api` is only allowed for an openai provider: other "
               u"kinds are served the Responses API translated to their own protocol"_s,
               u"test.yaml:6:37: unknown endpoint \"embedings\": expected `chat`, `responses`, "
               u"`embeddings` or `completions` (did you mean `embeddings`?)"_s,
               u"test.yaml:7:31: simulated providers cannot serve `completions`: only openai "
               u"providers pass legacy completions on"_s,
               u"test.yaml:8:19: `dimensions` is only allowed for a model whose `endpoints` list "
               u"`embeddings`"_s,
               u"test.yaml:9:30: `endpoints` must list one or more of `chat`, `responses`, "
               u"`embeddings` and `completions`, got an empty list"_s,
               u"test.yaml:14:31: anthropic providers cannot serve `embeddings`: only openai "
               u"and simulated providers serve embeddings"_s,
               u"test.yaml:15:30: `responses` without `chat` needs a provider that speaks the "
               u"Responses API itself (`responses_api: true`); otherwise Switchyard translates "
               u"the Responses API to chat, and the model must serve `chat`"_s,
           };
    QTest::newRow("integer expected")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "    capacity: lots\n"_ba
        << QStringList{u"test.yaml:5:15: `capacity` must be an integer, got \"lots\""_s};
    QTest::newRow("list expected") << "providers:\n"
                                      "  - id: sim\n"
                                      "    kind: simulated\n"
                                      "    models: 5\n"_ba
                                   << QStringList{u"test.yaml:4:13: `models` must be a list of "
                                                  u"model names, got \"5\""_s};
    QTest::newRow("map expected") << QByteArray(oneSimulatedProvider) + "timeouts: [3s]\n"_ba
                                  << QStringList{
                                         u"test.yaml:5:11: `timeouts` must be a map, got a list"_s};
    QTest::newRow("empty value")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "    weight:\n"_ba
        << QStringList{u"test.yaml:5:5: `weight` must be an integer, got an empty value"_s};
    QTest::newRow("integer below minimum")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "    weight: -1\n"_ba
        << QStringList{u"test.yaml:5:13: `weight` must be at least 0, got \"-1\""_s};

    QTest::newRow("missing required key") << "providers:\n"
                                             "  - id: sim\n"
                                             "    models: [demo]\n"_ba
                                          << QStringList{u"test.yaml:2:5: provider is missing "
                                                         u"required key `kind`"_s};
    QTest::newRow("missing providers")
        << "listen: 127.0.0.1:9000\n"_ba
        << QStringList{u"test.yaml:1:1: config is missing required key `providers`"_s};
    QTest::newRow("openai without base_url")
        << "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    models: [gpt-4o]\n"_ba
        << QStringList{u"test.yaml:2:5: openai provider is missing required key `base_url`"_s};
    QTest::newRow("empty provider list")
        << "providers: []\n"_ba
        << QStringList{u"test.yaml:1:12: `providers` must list at least one provider"_s};
    QTest::newRow("provider entry not a map")
        << "providers:\n"
           "  - sim\n"_ba
        << QStringList{u"test.yaml:2:5: entry 1 of `providers` must be a map, got \"sim\""_s};

    QTest::newRow("unknown key, close spelling")
        << QByteArray(oneSimulatedProvider) + "timout: {connect: 1s}\n"_ba
        << QStringList{u"test.yaml:5:1: unknown key `timout` (did you mean `timeouts`?)"_s};
    QTest::newRow("unknown key, prefix of an allowed key")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "    latency: 2s\n"_ba
        << QStringList{
               u"test.yaml:5:5: unknown key `latency` (did you mean `latency_objective`?)"_s};
    QTest::newRow("unknown key, different case")
        << QByteArray(oneSimulatedProvider) + "Listen: 127.0.0.1:1\n"_ba
        << QStringList{u"test.yaml:5:1: unknown key `Listen` (did you mean `listen`?)"_s};
    QTest::newRow("unknown key, nothing close")
        << QByteArray(oneSimulatedProvider) + "colour: blue\n"_ba
        << QStringList{u"test.yaml:5:1: unknown key `colour`"_s};
    QTest::newRow("unknown key, one letter") << QByteArray(oneSimulatedProvider) + "x: 1\n"_ba
                                             << QStringList{u"test.yaml:5:1: unknown key `x`"_s};

    QTest::newRow("duplicate provider id")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"_ba
        << QStringList{u"test.yaml:5:9: duplicate provider id `sim` (first at line 2)"_s};
    QTest::newRow("duplicate map key")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "    models: [other]\n"_ba
        << QStringList{u"test.yaml:5:5: duplicate key `models` (first at line 4)"_s};
    QTest::newRow("duplicate key in a flow map")
        << QByteArray(oneSimulatedProvider) + "timeouts: {idle: 1s, idle: 2s}\n"_ba
        << QStringList{u"test.yaml:5:22: duplicate key `idle` (first at line 5)"_s};
    QTest::newRow("duplicate model in one provider")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo, other, {name: demo, upstream: x}]\n"_ba
        << QStringList{u"test.yaml:4:34: duplicate model `demo` (first at line 4)"_s};
    QTest::newRow("invalid provider id")
        << "providers:\n"
           "  - id: local qwen\n"
           "    kind: simulated\n"
           "    models: [demo]\n"_ba
        << QStringList{u"test.yaml:2:9: `id` may contain only letters, digits, `.`, `_` and `-`, "
                       u"got \"local qwen\""_s};
    QTest::newRow("unknown kind")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: gemini\n"
           "    models: [demo]\n"_ba
        << QStringList{
               u"test.yaml:3:11: `kind` must be `openai`, `anthropic`, `mapped` or `simulated`, "
               u"got \"gemini\""_s};

    QTest::newRow("unset environment variable")
        << "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    base_url: http://127.0.0.1:8001/v1\n"
           "    api_key_env: MISSING_KEY\n"
           "    models: [gpt-4o]\n"_ba
        << QStringList{u"test.yaml:5:18: environment variable MISSING_KEY is not set"_s};
    QTest::newRow("key pasted instead of a variable name")
        << "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    base_url: http://127.0.0.1:8001/v1\n"
           "    api_key_env: sk-live-abc123\n"
           "    models: [gpt-4o]\n"_ba
        << QStringList{u"test.yaml:5:18: `api_key_env` must name an environment variable "
                       u"(letters, digits and `_`), not hold the key itself"_s};

    QTest::newRow("bad duration")
        << QByteArray(oneSimulatedProvider) + "timeouts: {connect: soon}\n"_ba
        << QStringList{u"test.yaml:5:21: `connect` must be a duration such as `250ms`, `3s` or "
                       u"`2m`, got \"soon\""_s};
    QTest::newRow("zero timeout")
        << QByteArray(oneSimulatedProvider) + "timeouts: {idle: 0s}\n"_ba
        << QStringList{u"test.yaml:5:18: `idle` must be greater than 0, got \"0s\""_s};
    QTest::newRow("fraction of a millisecond without unit")
        << QByteArray(oneSimulatedProvider) + "timeouts: {total: 1.5}\n"_ba
        << QStringList{u"test.yaml:5:19: `total` must be a duration such as `250ms`, `3s` or "
                       u"`2m`, got \"1.5\""_s};
    QTest::newRow("duration too long")
        << QByteArray(oneSimulatedProvider) + "timeouts: {total: 25h}\n"_ba
        << QStringList{u"test.yaml:5:19: `total` must be at most 24h, got \"25h\""_s};

    QTest::newRow("bad size")
        << QByteArray(oneSimulatedProvider) + "limits:\n  max_body: 8 MegaBytes\n"_ba
        << QStringList{u"test.yaml:6:13: `max_body` must be a size such as `8MiB`, `512KiB` or "
                       u"`1048576`, got \"8 MegaBytes\""_s};
    QTest::newRow("size too large")
        << QByteArray(oneSimulatedProvider) + "limits:\n  max_body: 2GiB\n"_ba
        << QStringList{u"test.yaml:6:13: `max_body` must be at most 1GiB, got \"2GiB\""_s};

    QTest::newRow("bad URL scheme")
        << "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    base_url: ftp://models.example.test/v1\n"
           "    models: [gpt-4o]\n"_ba
        << QStringList{u"test.yaml:4:15: `base_url` must be an http or https URL such as "
                       u"`http://127.0.0.1:8001/v1`, got \"ftp://models.example.test/v1\""_s};
    QTest::newRow("URL without host")
        << "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    base_url: localhost:8001\n"
           "    models: [gpt-4o]\n"_ba
        << QStringList{u"test.yaml:4:15: `base_url` must be an http or https URL such as "
                       u"`http://127.0.0.1:8001/v1`, got \"localhost:8001\""_s};

    QTest::newRow("error rate above 1")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "    simulate: {error_rate: 1.5}\n"_ba
        << QStringList{u"test.yaml:5:28: `error_rate` must be between 0 and 1, got \"1.5\""_s};
    QTest::newRow("zero tokens per second")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "    simulate: {tokens_per_second: 0}\n"_ba
        << QStringList{u"test.yaml:5:35: `tokens_per_second` must be greater than 0, got \"0\""_s};

    QTest::newRow("base_url on a simulated provider")
        << "providers:\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    base_url: http://127.0.0.1:8001/v1\n"
           "    models: [demo]\n"_ba
        << QStringList{u"test.yaml:4:5: `base_url` is not allowed for a simulated provider"_s};
    QTest::newRow("simulate on an openai provider")
        << "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    base_url: http://127.0.0.1:8001/v1\n"
           "    models: [gpt-4o]\n"
           "    simulate: {latency: 1s}\n"_ba
        << QStringList{u"test.yaml:6:5: `simulate` is only allowed for a simulated provider"_s};

    QTest::newRow("listen without port")
        << QByteArray(oneSimulatedProvider) + "listen: 127.0.0.1\n"_ba
        << QStringList{u"test.yaml:5:9: `listen` must be HOST:PORT such as `127.0.0.1:8080`, got "
                       u"\"127.0.0.1\""_s};
    QTest::newRow("listen port out of range")
        << QByteArray(oneSimulatedProvider) + "listen: 127.0.0.1:70000\n"_ba
        << QStringList{
               u"test.yaml:5:9: `listen` port must be between 0 and 65535, got \"127.0.0.1:70000\""_s};

    QTest::newRow("many errors, all reported in file order")
        << "listen: nowhere\n"
           "trace: {capacity: 0}\n"
           "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    models: []\n"
           "    capacty: 3\n"
           "  - id: sim\n"
           "    kind: simulated\n"
           "    models: [demo]\n"
           "    simulate:\n"
           "      answer_tokens: many\n"
           "      error_rate: -0.1\n"_ba
        << QStringList{
               u"test.yaml:1:9: `listen` must be HOST:PORT such as `127.0.0.1:8080`, got "
               u"\"nowhere\""_s,
               u"test.yaml:2:19: `capacity` must be at least 1, got \"0\""_s,
               u"test.yaml:4:5: openai provider is missing required key `base_url`"_s,
               u"test.yaml:6:13: `models` must list at least one model"_s,
               u"test.yaml:7:5: unknown key `capacty` (did you mean `capacity`?)"_s,
               u"test.yaml:12:22: `answer_tokens` must be an integer, got \"many\""_s,
               u"test.yaml:13:19: `error_rate` must be between 0 and 1, got \"-0.1\""_s,
           };
}

void TestConfigLoader::reportsEveryError()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QStringList, expectedErrors);

    const LoadResult result = load(yaml);

    QCOMPARE(errorLines(result), expectedErrors);
    QCOMPARE(result.ok(), false);
    QCOMPARE(result.config.has_value(), false);
}

void TestConfigLoader::loadsEveryValueOfAFullFile()
{
    const LoadResult result =
        load("listen: 0.0.0.0:9090\n"
             "limits:\n"
             "  max_body: 2MiB\n"
             "  shutdown_grace: 5s\n"
             "trace:\n"
             "  capacity: 500\n"
             "timeouts: {connect: 250ms, first_token: 2m, idle: 1500, total: 1.5s}\n"
             "providers:\n"
             "  - id: local-qwen\n"
             "    kind: openai\n"
             "    base_url: https://models.example.test/v1\n"
             "    api_key_env: LOCAL_KEY\n"
             "    models: [qwen2.5-32b, {name: gpt-4o, upstream: qwen2.5-32b}]\n"
             "    weight: 0\n"
             "    capacity: 16\n"
             "    latency_objective: 2s\n"
             "  - id: sim.fast_1\n"
             "    kind: simulated\n"
             "    models: [demo]\n"
             "    simulate:\n"
             "      latency: 0ms\n"
             "      first_token: 40ms\n"
             "      tokens_per_second: 12.5\n"
             "      error_rate: 1\n"
             "      answer_tokens: 7\n"_ba);

    QCOMPARE(errorLines(result), QStringList());
    QVERIFY(result.config.has_value());
    const Config &config = *result.config;

    QCOMPARE(config.sourceName, u"test.yaml"_s);
    QCOMPARE(config.server.listenHost, u"0.0.0.0"_s);
    QCOMPARE(config.server.listenPort, quint16(9090));
    QCOMPARE(config.server.maxBodyBytes, qint64(2 * 1024 * 1024));
    QCOMPARE(config.server.shutdownGrace, 5s);
    QCOMPARE(config.server.traceCapacity, 500);
    QCOMPARE(config.timeouts.connect, 250ms);
    QCOMPARE(config.timeouts.firstToken, 2min);
    QCOMPARE(config.timeouts.idle, 1500ms);
    QCOMPARE(config.timeouts.total, 1500ms);
    QCOMPARE(config.providers.size(), 2);

    const ProviderConfig &cloud = config.providers.at(0);
    QCOMPARE(cloud.id, u"local-qwen"_s);
    QCOMPARE(cloud.kind, ProviderKind::OpenAi);
    QCOMPARE(cloud.baseUrl, QUrl(u"https://models.example.test/v1"_s));
    QCOMPARE(cloud.apiKeyEnv, u"LOCAL_KEY"_s);
    QCOMPARE(cloud.apiKey, "sk-local-123"_ba);
    QCOMPARE(cloud.models.size(), 2);
    QCOMPARE(cloud.models.at(0).publicName, u"qwen2.5-32b"_s);
    QCOMPARE(cloud.models.at(0).upstreamName, u"qwen2.5-32b"_s);
    QCOMPARE(cloud.models.at(1).publicName, u"gpt-4o"_s);
    QCOMPARE(cloud.models.at(1).upstreamName, u"qwen2.5-32b"_s);
    QCOMPARE(cloud.upstreamModelFor(u"gpt-4o"_s), u"qwen2.5-32b"_s);
    QCOMPARE(cloud.upstreamModelFor(u"unserved-model"_s), QString());
    QCOMPARE(cloud.weight, 0);
    QCOMPARE(cloud.capacity, 16);
    QCOMPARE(cloud.latencyObjective, 2s);
    QCOMPARE(cloud.where.file, u"test.yaml"_s);
    QCOMPARE(cloud.where.line, 9);
    QCOMPARE(cloud.where.column, 5);

    const ProviderConfig &simulated = config.providers.at(1);
    QCOMPARE(simulated.id, u"sim.fast_1"_s);
    QCOMPARE(simulated.kind, ProviderKind::Simulated);
    QCOMPARE(simulated.baseUrl, QUrl());
    QCOMPARE(simulated.apiKey, QByteArray());
    QCOMPARE(simulated.simulated.latency, 0ms);
    QCOMPARE(simulated.simulated.timeToFirstToken, 40ms);
    QCOMPARE(simulated.simulated.tokensPerSecond, 12.5);
    QCOMPARE(simulated.simulated.errorRate, 1.0);
    QCOMPARE(simulated.simulated.answerTokens, 7);

    QCOMPARE(config.provider(u"sim.fast_1"_s), &simulated);
    QCOMPARE(config.provider(u"absent"_s), nullptr);
}

void TestConfigLoader::appliesDefaultsForAbsentKeys()
{
    const LoadResult result = load(oneSimulatedProvider);

    QCOMPARE(errorLines(result), QStringList());
    QVERIFY(result.config.has_value());
    const Config &config = *result.config;

    QCOMPARE(config.server.listenHost, u"127.0.0.1"_s);
    QCOMPARE(config.server.listenPort, quint16(8080));
    QCOMPARE(config.server.maxBodyBytes, qint64(8 * 1024 * 1024));
    QCOMPARE(config.server.shutdownGrace, 10s);
    QCOMPARE(config.server.traceCapacity, 2000);
    QCOMPARE(config.timeouts.connect, 3s);
    QCOMPARE(config.timeouts.firstToken, 30s);
    QCOMPARE(config.timeouts.idle, 20s);
    QCOMPARE(config.timeouts.total, 180s);
    QCOMPARE(config.providers.size(), 1);

    const ProviderConfig &provider = config.providers.at(0);
    QCOMPARE(provider.id, u"sim"_s);
    QCOMPARE(provider.weight, 1);
    QCOMPARE(provider.capacity, 64);
    QCOMPARE(provider.latencyObjective, 2500ms);
    QCOMPARE(provider.apiKeyEnv, QString());
    QCOMPARE(provider.models.size(), 1);
    QCOMPARE(provider.models.at(0).upstreamName, u"demo"_s);
    QCOMPARE(provider.simulated.latency, 250ms);
    QCOMPARE(provider.simulated.timeToFirstToken, 120ms);
    QCOMPARE(provider.simulated.tokensPerSecond, 40.0);
    QCOMPARE(provider.simulated.errorRate, 0.0);
    QCOMPARE(provider.simulated.answerTokens, 24);
}

void TestConfigLoader::parsesListenAddress_data()
{
    QTest::addColumn<QByteArray>("listen");
    QTest::addColumn<QString>("expectedHost");
    QTest::addColumn<int>("expectedPort");

    QTest::newRow("IPv4") << "127.0.0.2:8181"_ba << u"127.0.0.2"_s << 8181;
    QTest::newRow("name, any port") << "localhost:0"_ba << u"localhost"_s << 0;
    QTest::newRow("IPv6 in brackets") << "\"[::1]:65535\""_ba << u"::1"_s << 65535;
}

void TestConfigLoader::parsesListenAddress()
{
    QFETCH(QByteArray, listen);
    QFETCH(QString, expectedHost);
    QFETCH(int, expectedPort);

    const LoadResult result = load("listen: "_ba + listen + "\n" + oneSimulatedProvider);

    QCOMPARE(errorLines(result), QStringList());
    QVERIFY(result.config.has_value());
    const Config &config = *result.config;

    QCOMPARE(config.server.listenHost, expectedHost);
    QCOMPARE(config.server.listenPort, quint16(expectedPort));
}

void TestConfigLoader::parsesDurations_data()
{
    QTest::addColumn<QByteArray>("duration");
    QTest::addColumn<qint64>("expectedMs");

    QTest::newRow("milliseconds") << "250ms"_ba << qint64(250);
    QTest::newRow("seconds") << "3s"_ba << qint64(3000);
    QTest::newRow("minutes") << "2m"_ba << qint64(120'000);
    QTest::newRow("hours") << "1h"_ba << qint64(3'600'000);
    QTest::newRow("bare number is milliseconds") << "1500"_ba << qint64(1500);
    QTest::newRow("fraction with unit") << "1.5s"_ba << qint64(1500);
    QTest::newRow("space before unit") << "\"30 s\""_ba << qint64(30'000);
}

void TestConfigLoader::parsesDurations()
{
    QFETCH(QByteArray, duration);
    QFETCH(qint64, expectedMs);

    const LoadResult result =
        load("timeouts: {connect: "_ba + duration + "}\n" + oneSimulatedProvider);

    QCOMPARE(errorLines(result), QStringList());
    QVERIFY(result.config.has_value());
    const Config &config = *result.config;

    QCOMPARE(config.timeouts.connect.count(), expectedMs);
}

void TestConfigLoader::parsesSizes_data()
{
    QTest::addColumn<QByteArray>("size");
    QTest::addColumn<qint64>("expectedBytes");

    QTest::newRow("bare number is bytes") << "1048576"_ba << qint64(1'048'576);
    QTest::newRow("bytes") << "100B"_ba << qint64(100);
    QTest::newRow("kibibytes") << "512KiB"_ba << qint64(524'288);
    QTest::newRow("kilobytes are decimal") << "2KB"_ba << qint64(2000);
    QTest::newRow("mebibytes") << "8MiB"_ba << qint64(8'388'608);
    QTest::newRow("megabytes are decimal") << "3MB"_ba << qint64(3'000'000);
    QTest::newRow("fraction of a mebibyte") << "1.5MiB"_ba << qint64(1'572'864);
    QTest::newRow("gibibyte") << "1GiB"_ba << qint64(1'073'741'824);
}

void TestConfigLoader::parsesSizes()
{
    QFETCH(QByteArray, size);
    QFETCH(qint64, expectedBytes);

    const LoadResult result = load("limits: {max_body: "_ba + size + "}\n" + oneSimulatedProvider);

    QCOMPARE(errorLines(result), QStringList());
    QVERIFY(result.config.has_value());
    const Config &config = *result.config;

    QCOMPARE(config.server.maxBodyBytes, expectedBytes);
}

void TestConfigLoader::loadsTheEmbeddedDemo()
{
    // Set by the test registration, so this reads the very file the program embeds.
    const QString sourceDir = qEnvironmentVariable("SWITCHYARD_SOURCE_DIR");
    QVERIFY2(!sourceDir.isEmpty(), "SWITCHYARD_SOURCE_DIR must name the source tree");
    const QString path = sourceDir + u"/resources/demo.yaml"_s;

    const LoadResult result = switchyard::config::loadConfigFile(path, fakeEnvironment());

    QCOMPARE(errorLines(result), QStringList());
    QVERIFY(result.config.has_value());
    const Config &config = *result.config;
    QCOMPARE(config.sourceName, path);
    QCOMPARE(config.providers.size(), 3);
    QCOMPARE(config.providers.at(0).id, u"sim-swift"_s);
    QCOMPARE(config.providers.at(1).id, u"sim-steady"_s);
    QCOMPARE(config.providers.at(2).id, u"sim-deep"_s);
    for (const ProviderConfig &provider : config.providers)
        QCOMPARE(provider.kind, ProviderKind::Simulated);
    QCOMPARE(config.providers.at(0).simulated.errorRate, 0.01);
    QCOMPARE(config.providers.at(2).latencyObjective, 4s);
}

void TestConfigLoader::reportsAnUnreadableFile()
{
    QTemporaryDir directory;
    QVERIFY(directory.isValid());
    const QString path = directory.filePath(u"missing.yaml"_s);

    const LoadResult result = switchyard::config::loadConfigFile(path, fakeEnvironment());

    QCOMPARE(errorLines(result),
             QStringList{path + u":0:0: cannot read file: No such file or directory"_s});
    QCOMPARE(result.config.has_value(), false);
}

void TestConfigLoader::readsTheProcessEnvironment()
{
    const QString name = u"SWITCHYARD_TST_CONFIG_LOADER_KEY"_s;
    const EnvironmentLookup environment = switchyard::config::processEnvironment();

    QVERIFY(qputenv("SWITCHYARD_TST_CONFIG_LOADER_KEY", "value-1"));
    QCOMPARE(environment(name), std::optional<QByteArray>("value-1"_ba));
    QVERIFY(qunsetenv("SWITCHYARD_TST_CONFIG_LOADER_KEY"));
    QCOMPARE(environment(name), std::optional<QByteArray>());
}

QTEST_GUILESS_MAIN(TestConfigLoader)
#include "tst_config_loader.moc"
