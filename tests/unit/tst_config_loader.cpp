#include "config/config_loader.h"
#include "config_error_lines.h"

#include <QTemporaryDir>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using switchyard::config::Config;
using switchyard::config::ConfiguredValue;
using switchyard::config::EnvironmentLookup;
using switchyard::config::LoadResult;
using switchyard::config::ProviderConfig;
using switchyard::config::ProviderKind;
using switchyard::logging::LogFormat;
using switchyard::logging::LogLevel;

namespace {

// Only these are set; every other name reads as unset, whatever the real environment holds.
EnvironmentLookup fakeEnvironment()
{
    return [](const QString &name) -> std::optional<QByteArray> {
        if (name == u"LOCAL_KEY"_s)
            return "sk-local-123"_ba;
        if (name == u"TEAM_SECRET"_s)
            return "team-secret+/="_ba;
        if (name == u"TWO_LINES"_s)
            return "first\nsecond"_ba;
        return std::nullopt;
    };
}

// An openai provider whose further keys are appended by each case, indented by four.
QByteArray openAi(const QByteArray &keys)
{
    return "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    base_url: https://models.example.test/v1\n"
           "    models: [gpt]\n" +
           keys;
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

    void loadsHowAProviderIsCalled();
    void keyHeaderDefaultsByKind_data();
    void keyHeaderDefaultsByKind();
    void loadsAModelPlaceholderInBaseUrl();
    void resolvesCaFileFromTheConfigFolder();
    void reportsBadProviderCallKeys_data();
    void reportsBadProviderCallKeys();

    void readsTheLogSection_data();
    void readsTheLogSection();
    void readsTheIdempotencySection();
    void readsTheFleetSection();
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

    QTest::newRow("continues_answers on a mapped provider")
        << "providers:\n"
           "  - id: agent\n"
           "    kind: mapped\n"
           "    base_url: http://127.0.0.1:1/run\n"
           "    continues_answers: true\n"
           "    models: [a]\n"
           "    mapping:\n"
           "      request: {p: $.model}\n"
           "      answer: $.text\n"_ba
        << QStringList{
               u"test.yaml:5:5: `continues_answers` is not allowed for a mapped provider: "
               u"an agent's own JSON has no way to be given a partial answer to continue"_s};
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
    QTest::newRow("zero header timeout")
        << QByteArray(oneSimulatedProvider) + "limits:\n  header_timeout: 0s\n"_ba
        << QStringList{u"test.yaml:6:19: `header_timeout` must be greater than 0, got \"0s\""_s};
    QTest::newRow("body timeout not a duration")
        << QByteArray(oneSimulatedProvider) + "limits:\n  body_timeout: slow\n"_ba
        << QStringList{u"test.yaml:6:17: `body_timeout` must be a duration such as `250ms`, `3s` "
                       u"or `2m`, got \"slow\""_s};
    QTest::newRow("zero keep-alive idle time")
        << QByteArray(oneSimulatedProvider) + "limits:\n  keep_alive_idle: 0\n"_ba
        << QStringList{u"test.yaml:6:20: `keep_alive_idle` must be greater than 0, got \"0\""_s};
    QTest::newRow("keep-alive idle time too long")
        << QByteArray(oneSimulatedProvider) + "limits:\n  keep_alive_idle: 25h\n"_ba
        << QStringList{u"test.yaml:6:20: `keep_alive_idle` must be at most 24h, got \"25h\""_s};
    QTest::newRow("no connections allowed")
        << QByteArray(oneSimulatedProvider) + "limits:\n  max_connections: 0\n"_ba
        << QStringList{u"test.yaml:6:20: `max_connections` must be at least 1, got \"0\""_s};
    QTest::newRow("connection limit not a number")
        << QByteArray(oneSimulatedProvider) + "limits:\n  max_connections: many\n"_ba
        << QStringList{u"test.yaml:6:20: `max_connections` must be an integer, got \"many\""_s};
    QTest::newRow("connection limit beyond any descriptor table")
        << QByteArray(oneSimulatedProvider) + "limits:\n  max_connections: 5000000\n"_ba
        << QStringList{
               u"test.yaml:6:20: `max_connections` must be at most 1000000, got \"5000000\""_s};
    QTest::newRow("negative per-address limit")
        << QByteArray(oneSimulatedProvider) + "limits:\n  max_connections_per_address: -1\n"_ba
        << QStringList{u"test.yaml:6:32: `max_connections_per_address` must be at least 0, got "
                       u"\"-1\""_s};
    QTest::newRow("no refusal may drain")
        << QByteArray(oneSimulatedProvider) + "limits:\n  max_refusals_draining: 0\n"_ba
        << QStringList{u"test.yaml:6:26: `max_refusals_draining` must be at least 1, got \"0\""_s};
    QTest::newRow("refusals draining not a number")
        << QByteArray(oneSimulatedProvider) + "limits:\n  max_refusals_draining: lots\n"_ba
        << QStringList{
               u"test.yaml:6:26: `max_refusals_draining` must be an integer, got \"lots\""_s};
    QTest::newRow("unknown limit, close spelling")
        << QByteArray(oneSimulatedProvider) + "limits:\n  keepalive_idle: 10s\n"_ba
        << QStringList{
               u"test.yaml:6:3: unknown key `keepalive_idle` (did you mean `keep_alive_idle`?)"_s};

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
    QTest::newRow("log format unknown")
        << QByteArray(oneSimulatedProvider) + "log:\n  format: jsonl\n"_ba
        << QStringList{u"test.yaml:6:11: `format` must be `text` or `json`, got \"jsonl\""_s};
    QTest::newRow("log level unknown")
        << QByteArray(oneSimulatedProvider) + "log:\n  level: verbose\n"_ba
        << QStringList{
               u"test.yaml:6:10: `level` must be `debug`, `info`, `warning` or `error`, got "
               u"\"verbose\""_s};
    QTest::newRow("log key unknown")
        << QByteArray(oneSimulatedProvider) + "log:\n  formt: json\n"_ba
        << QStringList{u"test.yaml:6:3: unknown key `formt` (did you mean `format`?)"_s};
    const QByteArray fleet = QByteArray(oneSimulatedProvider) + "fleet:\n"_ba;
    QTest::newRow("fleet over TLS")
        << fleet + "  redis: rediss://127.0.0.1:6379\n"_ba
        << QStringList{u"test.yaml:6:10: rediss:// (Redis over TLS) is not supported: this "
                       u"build's Redis client has no TLS. Keep Redis on loopback or a private "
                       u"network and use redis://"_s};
    QTest::newRow("fleet off loopback without a password")
        << fleet + "  redis: redis://10.1.2.3:6379\n"_ba
        << QStringList{u"test.yaml:6:10: a Redis off loopback needs `password: {env: NAME}`: "
                       u"keep Redis on loopback or a private network, behind a password"_s};
    QTest::newRow("fleet password in the file")
        << fleet + "  redis: redis://127.0.0.1\n  password: hunter2\n"_ba
        << QStringList{u"test.yaml:7:13: `password` must be written `{env: NAME}`: the config "
                       u"file is shown in the console and kept in its versions"_s};
    QTest::newRow("fleet password variable unset")
        << fleet + "  redis: redis://127.0.0.1\n  password: {env: NOT_SET}\n"_ba
        << QStringList{u"test.yaml:7:19: environment variable NOT_SET is not set"_s};
    QTest::newRow("fleet without redis")
        << fleet + "  node: a\n"_ba
        << QStringList{u"test.yaml:6:3: `fleet` is missing required key `redis`"_s};
    QTest::newRow("fleet node name")
        << fleet + "  redis: redis://127.0.0.1\n  node: \"a b\"\n"_ba
        << QStringList{u"test.yaml:7:9: `node` must be 1 to 63 letters, digits, `.`, `_` or `-`, "
                       u"starting with a letter or digit"_s};
    QTest::newRow("fleet key unknown")
        << fleet + "  redis: redis://127.0.0.1\n  sync: 1s\n"_ba
        << QStringList{u"test.yaml:7:3: unknown key `sync` (did you mean `sync_interval`?)"_s};
    QTest::newRow("fleet timeout out of range")
        << fleet + "  redis: redis://127.0.0.1\n  timeout: 1ms\n"_ba
        << QStringList{u"test.yaml:7:12: `timeout` must be between 10 ms and 10000 ms"_s};
    const QByteArray idempotency = QByteArray(oneSimulatedProvider) + "idempotency:\n"_ba;
    QTest::newRow("idempotency key unknown")
        << idempotency + "  windw: 1m\n"_ba
        << QStringList{u"test.yaml:6:3: unknown key `windw` (did you mean `window`?)"_s};
    QTest::newRow("idempotency window too long")
        << idempotency + "  window: 25h\n"_ba
        << QStringList{u"test.yaml:6:11: `window` must be at most 24h, got \"25h\""_s};
    QTest::newRow("idempotency window too short")
        << idempotency + "  window: 500ms\n"_ba
        << QStringList{u"test.yaml:6:11: `window` must be between 1s and 24h, got \"500ms\""_s};
    QTest::newRow("idempotency answer bound too small")
        << idempotency + "  max_answer_bytes: 512\n"_ba
        << QStringList{u"test.yaml:6:21: `max_answer_bytes` must be between 1KiB and 64MiB, got "
                       u"\"512\""_s};
    QTest::newRow("idempotency no answers")
        << idempotency + "  max_answers: 0\n"_ba
        << QStringList{u"test.yaml:6:16: `max_answers` must be at least 1, got \"0\""_s};
    QTest::newRow("log not a map") << QByteArray(oneSimulatedProvider) + "log: json\n"_ba
                                   << QStringList{u"test.yaml:5:6: `log` must be a map, got "
                                                  u"\"json\""_s};
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
             "  drain_delay: 3s\n"
             "  header_timeout: 4s\n"
             "  body_timeout: 90s\n"
             "  keep_alive_idle: 2m\n"
             "  max_connections: 300\n"
             "  max_connections_per_address: 0\n"
             "  max_refusals_draining: 64\n"
             "trace: {capacity: 500, max_bytes: 8MiB, chunk_events: 32,\n"
             "        keep_bodies: true, body_max_bytes: 4KiB}\n"
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
    QCOMPARE(config.server.drainDelay, 3s);
    QCOMPARE(config.server.headerTimeout, 4s);
    QCOMPARE(config.server.bodyTimeout, 90s);
    QCOMPARE(config.server.keepAliveIdle, 2min);
    QCOMPARE(config.server.maxConnections, 300);
    QCOMPARE(config.server.maxConnectionsPerAddress, 0);
    QCOMPARE(config.server.maxRefusalsDraining, 64);
    QCOMPARE(config.trace.capacity, 500);
    QCOMPARE(config.trace.maxBytes, qint64(8) * 1024 * 1024);
    QCOMPARE(config.trace.chunkEvents, 32);
    QVERIFY(config.trace.keepBodies);
    QCOMPARE(config.trace.bodyMaxBytes, qint64(4096));
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
    QCOMPARE(cloud.where.line, 16);
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
    QCOMPARE(config.server.drainDelay, 0ms);
    QCOMPARE(config.server.headerTimeout, 10s);
    QCOMPARE(config.server.bodyTimeout, 60s);
    QCOMPARE(config.server.keepAliveIdle, 75s);
    QCOMPARE(config.server.maxConnections, 10000);
    QCOMPARE(config.server.maxConnectionsPerAddress, 1024);
    QCOMPARE(config.server.maxRefusalsDraining, 1024);
    QCOMPARE(config.trace.capacity, 2000);
    QCOMPARE(config.trace.chunkEvents, 256);
    QVERIFY(!config.trace.keepBodies);
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
    // Every model the demo serves has a price, so its Usage page shows spend.
    for (const ProviderConfig &provider : config.providers) {
        for (const switchyard::config::ModelRoute &model : provider.models)
            QVERIFY2(config.usage.pricing.models.contains(model.publicName),
                     qPrintable(model.publicName));
    }
    QCOMPARE(config.usage.pricing.models.value(u"demo-pro"_s).outputPerMillionUsd, 60.0);
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

void TestConfigLoader::loadsHowAProviderIsCalled()
{
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    const QString caFile = folder.filePath(u"private-ca.pem"_s);
    QFile pem(caFile);
    QVERIFY(pem.open(QIODevice::WriteOnly));
    pem.write("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    pem.close();

    const LoadResult result = load(openAi("    api_key_env: LOCAL_KEY\n"
                                          "    api_key_header: api-key\n"
                                          "    api_key_prefix: \"\"\n"
                                          "    headers:\n"
                                          "      X-Team: support\n"
                                          "      X-Secret: {env: TEAM_SECRET}\n"
                                          "    query: {api-version: \"2024-10-21\", sig: {env: "
                                          "TEAM_SECRET}}\n"
                                          "    proxy: http://proxy.example.test:3128\n"
                                          "    transport: libcurl\n"
                                          "    ca_file: " +
                                          caFile.toUtf8() + "\n"));

    QCOMPARE(errorLines(result), QStringList());
    const ProviderConfig &provider = result.config->providers.first();
    QCOMPARE(provider.keyHeaderName(), "api-key"_ba);
    QCOMPARE(provider.keyPrefix(), QByteArray());
    QCOMPARE(provider.headers,
             (QList<ConfiguredValue>{{"X-Team", "support", {}},
                                     {"X-Secret", "team-secret+/=", u"TEAM_SECRET"_s}}));
    QCOMPARE(provider.query, (QList<ConfiguredValue>{{"api-version", "2024-10-21", {}},
                                                     {"sig", "team-secret+/=", u"TEAM_SECRET"_s}}));
    QVERIFY(!provider.headers.at(0).isSecret());
    QVERIFY(provider.headers.at(1).isSecret());
    QCOMPARE(provider.proxy, QUrl(u"http://proxy.example.test:3128"_s));
    QCOMPARE(provider.caFile, caFile);
    QVERIFY(provider.callsOverLibcurl);
}

void TestConfigLoader::keyHeaderDefaultsByKind_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<QByteArray>("prefix");

    QTest::newRow("openai") << openAi({}) << "Authorization"_ba
                            << "Bearer "_ba;
    QTest::newRow("openai, key elsewhere: no prefix")
        << openAi("    api_key_header: X-Api-Key\n") << "X-Api-Key"_ba << QByteArray();
    QTest::newRow("openai, authorization in any case keeps Bearer")
        << openAi("    api_key_header: authorization\n") << "authorization"_ba
        << "Bearer "_ba;
    QTest::newRow("openai, own prefix")
        << openAi("    api_key_prefix: \"Token \"\n") << "Authorization"_ba
        << "Token "_ba;
    QTest::newRow("anthropic") << "providers:\n"
                                  "  - id: claude\n"
                                  "    kind: anthropic\n"
                                  "    base_url: https://api.anthropic.com/v1\n"
                                  "    models: [claude]\n"_ba
                               << "x-api-key"_ba << QByteArray();
    QTest::newRow("anthropic behind a gateway that wants a bearer token")
        << "providers:\n"
           "  - id: claude\n"
           "    kind: anthropic\n"
           "    base_url: https://llm-gateway.example.test/anthropic/v1\n"
           "    api_key_header: Authorization\n"
           "    models: [claude]\n"_ba
        << "Authorization"_ba
        << "Bearer "_ba;
    const QByteArray mapping = "    mapping:\n"
                               "      request: {p: $.model}\n"
                               "      answer: $.text\n";
    const QByteArray mapped = "providers:\n"
                              "  - id: agent\n"
                              "    kind: mapped\n"
                              "    base_url: http://127.0.0.1:9100\n"
                              "    models: [agent]\n";
    QTest::newRow("mapped, provider keys") << mapped + "    api_key_header: X-Agent-Key\n" + mapping
                                           << "X-Agent-Key"_ba << QByteArray();
    // Older files put these under `mapping:`, where the prefix defaulted to "Bearer " whatever
    // the header: they keep meaning what they meant.
    QTest::newRow("mapped, older mapping keys")
        << mapped + mapping + "      api_key_header: X-Agent-Key\n"
        << "X-Agent-Key"_ba
        << "Bearer "_ba;
    QTest::newRow("mapped, older header, provider prefix")
        << mapped + "    api_key_prefix: \"\"\n" + mapping + "      api_key_header: X-Agent-Key\n"
        << "X-Agent-Key"_ba << QByteArray();
}

void TestConfigLoader::keyHeaderDefaultsByKind()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QByteArray, header);
    QFETCH(QByteArray, prefix);

    const LoadResult result = load(yaml);

    QCOMPARE(errorLines(result), QStringList());
    const ProviderConfig &provider = result.config->providers.first();
    QCOMPARE(provider.keyHeaderName(), header);
    QCOMPARE(provider.keyPrefix(), prefix);
}

void TestConfigLoader::loadsAModelPlaceholderInBaseUrl()
{
    const LoadResult result =
        load("providers:\n"
             "  - id: azure\n"
             "    kind: openai\n"
             "    base_url: https://myres.openai.azure.com/openai/deployments/{model}\n"
             "    models: [gpt4o-prod, gpt4o-mini-prod]\n"_ba);

    QCOMPARE(errorLines(result), QStringList());
    QCOMPARE(result.config->providers.first().baseUrl.toEncoded(),
             "https://myres.openai.azure.com/openai/deployments/%7Bmodel%7D"_ba);
}

void TestConfigLoader::resolvesCaFileFromTheConfigFolder()
{
    QTemporaryDir folder;
    QVERIFY(folder.isValid());
    QVERIFY(QDir(folder.path()).mkdir(u"certs"_s));
    QFile pem(folder.filePath(u"certs/ca.pem"_s));
    QVERIFY(pem.open(QIODevice::WriteOnly));
    pem.write("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
    pem.close();
    const QString configPath = folder.filePath(u"gateway.yaml"_s);
    QFile file(configPath);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(openAi("    ca_file: certs/ca.pem\n"));
    file.close();

    const LoadResult result = switchyard::config::loadConfigFile(configPath, fakeEnvironment());

    QCOMPARE(errorLines(result), QStringList());
    QCOMPARE(result.config->providers.first().caFile, folder.filePath(u"certs/ca.pem"_s));
}

void TestConfigLoader::reportsBadProviderCallKeys_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QStringList>("expectedErrors");

    QTest::newRow("misspelt provider key")
        << openAi("    header: {X-Team: support}\n    api_key_heder: api-key\n")
        << QStringList{u"test.yaml:6:5: unknown key `header` (did you mean `headers`?)"_s,
                       u"test.yaml:7:5: unknown key `api_key_heder` (did you mean "
                       u"`api_key_header`?)"_s};
    QTest::newRow("headers Switchyard owns")
        << openAi("    headers:\n"
                  "      host: example.test\n"
                  "      Content-Length: 5\n"
                  "      Transfer-Encoding: chunked\n"
                  "      Connection: close\n"
                  "      Content-Type: text/plain\n"
                  "      Accept: text/plain\n"
                  "      Accept-Encoding: gzip\n"
                  "      Expect: 100-continue\n"
                  "      TraceParent: 00-x\n"
                  "      X-Request-Id: mine\n"
                  "      x-switchyard-depth: \"0\"\n")
        << QStringList{
               u"test.yaml:7:7: header `host` cannot be set here: Switchyard writes it itself"_s,
               u"test.yaml:8:7: header `Content-Length` cannot be set here: Switchyard writes it "
               u"itself"_s,
               u"test.yaml:9:7: header `Transfer-Encoding` cannot be set here: Switchyard writes "
               u"it itself"_s,
               u"test.yaml:10:7: header `Connection` cannot be set here: Switchyard writes it "
               u"itself"_s,
               u"test.yaml:11:7: header `Content-Type` cannot be set here: Switchyard writes it "
               u"itself"_s,
               u"test.yaml:12:7: header `Accept` cannot be set here: Switchyard writes it itself"_s,
               u"test.yaml:13:7: header `Accept-Encoding` cannot be set here: Switchyard writes "
               u"it itself"_s,
               u"test.yaml:14:7: header `Expect` cannot be set here: Switchyard writes it itself"_s,
               u"test.yaml:15:7: header `TraceParent` cannot be set here: Switchyard writes it "
               u"itself"_s,
               u"test.yaml:16:7: header `X-Request-Id` cannot be set here: Switchyard writes it "
               u"itself"_s,
               u"test.yaml:17:7: header `x-switchyard-depth` cannot be set here: Switchyard "
               u"writes it itself"_s};
    QTest::newRow("anthropic headers of an anthropic provider")
        << "providers:\n"
           "  - id: claude\n"
           "    kind: anthropic\n"
           "    base_url: https://api.anthropic.com/v1\n"
           "    models: [claude]\n"
           "    headers: {anthropic-version: \"2023-01-01\", Anthropic-Beta: x}\n"_ba
        << QStringList{u"test.yaml:6:15: header `anthropic-version` cannot be set here: an "
                       u"anthropic provider sets it with `anthropic.version`"_s,
                       u"test.yaml:6:48: header `Anthropic-Beta` cannot be set here: an "
                       u"anthropic provider sets it with `anthropic.beta`"_s};
    QTest::newRow("bad header names and values")
        << openAi("    headers:\n"
                  "      \"X Team\": a\n"
                  "      X-List: [a, b]\n"
                  "      X-Empty:\n"
                  "      X-Split: \"a\\nb\"\n"
                  "      X-Dup: a\n"
                  "      x-dup: b\n")
        << QStringList{u"test.yaml:7:7: `\"X Team\"` is not a header name"_s,
                       u"test.yaml:8:15: header `X-List` must have a text value or `{env: NAME}`, "
                       u"got a list"_s,
                       u"test.yaml:9:7: header `X-Empty` must have a text value or `{env: NAME}`, "
                       u"got an empty value"_s,
                       u"test.yaml:10:16: header `X-Split` must fit on one line"_s,
                       u"test.yaml:12:7: duplicate header `x-dup` (first at line 11)"_s};
    QTest::newRow("header secrets from the environment")
        << openAi("    headers:\n"
                  "      X-Unset: {env: NOT_SET_ANYWHERE}\n"
                  "      X-Pasted: {env: \"sk-live-abc\"}\n"
                  "      X-Typo: {evn: TEAM_SECRET}\n"
                  "      X-Broken: {env: TWO_LINES}\n")
        << QStringList{u"test.yaml:7:22: environment variable NOT_SET_ANYWHERE is not set"_s,
                       u"test.yaml:8:23: `env` must name an environment variable (letters, "
                       u"digits and `_`), not hold the value itself"_s,
                       u"test.yaml:9:15: header `X-Typo` is missing required key `env`"_s,
                       u"test.yaml:9:16: unknown key `evn` (did you mean `env`?)"_s,
                       u"test.yaml:10:23: environment variable TWO_LINES holds a line break; "
                       u"header `X-Broken` must fit on one line"_s};
    QTest::newRow("the key's header set twice")
        << openAi("    api_key_env: LOCAL_KEY\n"
                  "    headers: {authorization: Basic abc}\n")
        << QStringList{u"test.yaml:6:18: the key from `api_key_env` goes in header "
                       u"`Authorization`, which `headers` sets too; remove one, or move the key "
                       u"with `api_key_header`"_s};
    QTest::newRow("bad key header and prefix")
        << openAi("    api_key_header: Content-Type\n"
                  "    api_key_prefix: [Bearer]\n")
        << QStringList{u"test.yaml:6:21: `api_key_header` cannot be `Content-Type`: Switchyard "
                       u"writes it itself"_s,
                       u"test.yaml:7:21: `api_key_prefix` must be a string, got a list"_s};
    QTest::newRow("bad query")
        << openAi("    query: {api-version: [1], \"\": x, key: {env: NOT_SET_ANYWHERE}}\n")
        << QStringList{u"test.yaml:6:26: query parameter `api-version` must have a text value "
                       u"or `{env: NAME}`, got a list"_s,
                       u"test.yaml:6:31: `\"\"` is not a query parameter name"_s,
                       u"test.yaml:6:49: environment variable NOT_SET_ANYWHERE is not set"_s};
    QTest::newRow("query is a list") << openAi("    query: [api-version]\n")
                                     << QStringList{u"test.yaml:6:12: `query` must be a map of "
                                                    u"parameter names to values, got a list"_s};
    QTest::newRow("bad proxy") << openAi("    proxy: proxy.example.test:3128\n")
                               << QStringList{u"test.yaml:6:12: `proxy` must be a proxy URL such "
                                              u"as `http://proxy.example:3128` (schemes: http, "
                                              u"https, socks4, socks4a, socks5, socks5h), got "
                                              u"\"proxy.example.test:3128\""_s};
    QTest::newRow("unknown transport")
        << openAi("    transport: curl\n")
        << QStringList{u"test.yaml:6:16: `transport` must be `auto` (plain http without a proxy "
                       u"over the gateway's own HTTP/1.1 client, the rest over libcurl) or "
                       u"`libcurl` (every call), got \"curl\""_s};
    QTest::newRow("ca_file that is not there")
        << openAi("    ca_file: /nonexistent/private-ca.pem\n")
        << QStringList{u"test.yaml:6:14: `ca_file` /nonexistent/private-ca.pem does not exist"_s};
    QTest::newRow("ca_file that is a folder")
        << openAi("    ca_file: /\n")
        << QStringList{u"test.yaml:6:14: `ca_file` / is not a file"_s};
    QTest::newRow("model placeholder outside the path")
        << "providers:\n"
           "  - id: azure\n"
           "    kind: openai\n"
           "    base_url: https://{model}.openai.azure.com/v1\n"
           "    models: [gpt]\n"
           "  - id: other\n"
           "    kind: openai\n"
           "    base_url: https://x.example.test/deployments/{deployment}\n"
           "    models: [gpt]\n"_ba
        << QStringList{u"test.yaml:4:15: `{model}` may only stand in the path of `base_url`, "
                       u"got \"https://{model}.openai.azure.com/v1\""_s,
                       u"test.yaml:8:15: `base_url` may hold `{model}` but no other `{...}`, got "
                       u"\"https://x.example.test/deployments/{deployment}\""_s};
    QTest::newRow("call keys on a simulated provider")
        << QByteArray(oneSimulatedProvider) +
               "    headers: {X-Team: a}\n    proxy: http://proxy.example.test:3128\n"_ba
        << QStringList{u"test.yaml:5:5: `headers` is not allowed for a simulated provider"_s,
                       u"test.yaml:6:5: `proxy` is not allowed for a simulated provider"_s};
    QTest::newRow("older mapping keys repeating the provider's")
        << "providers:\n"
           "  - id: agent\n"
           "    kind: mapped\n"
           "    base_url: http://127.0.0.1:9100\n"
           "    models: [agent]\n"
           "    api_key_header: X-Agent-Key\n"
           "    headers: {X-Team: support}\n"
           "    mapping:\n"
           "      api_key_header: X-Other-Key\n"
           "      headers: {x-team: sales, X-Extra: 1}\n"
           "      request: {p: $.model}\n"
           "      answer: $.text\n"_ba
        << QStringList{u"test.yaml:9:7: `mapping.api_key_header` repeats the provider's own "
                       u"`api_key_header`; keep the provider's"_s,
                       u"test.yaml:10:7: `mapping.headers` repeats the provider's own `headers`; "
                       u"keep the provider's"_s};
}

void TestConfigLoader::reportsBadProviderCallKeys()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QStringList, expectedErrors);

    const LoadResult result = load(yaml);

    QCOMPARE(errorLines(result), expectedErrors);
    QVERIFY(!result.ok());
}

void TestConfigLoader::readsTheLogSection_data()
{
    QTest::addColumn<QByteArray>("section");
    QTest::addColumn<std::optional<LogFormat>>("format");
    QTest::addColumn<std::optional<LogLevel>>("level");

    QTest::newRow("absent: the command line or the defaults decide")
        << QByteArray() << std::optional<LogFormat>() << std::optional<LogLevel>();
    QTest::newRow("json at debug")
        << "log:\n  format: json\n  level: debug\n"_ba << std::optional(LogFormat::Json)
        << std::optional(LogLevel::Debug);
    QTest::newRow("format only") << "log:\n  format: text\n"_ba << std::optional(LogFormat::Text)
                                 << std::optional<LogLevel>();
    QTest::newRow("level only") << "log:\n  level: warning\n"_ba << std::optional<LogFormat>()
                                << std::optional(LogLevel::Warning);
}

void TestConfigLoader::readsTheLogSection()
{
    QFETCH(QByteArray, section);
    QFETCH(std::optional<LogFormat>, format);
    QFETCH(std::optional<LogLevel>, level);

    const LoadResult result = load(QByteArray(oneSimulatedProvider) + section);

    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    QCOMPARE(result.config->log.format, format);
    QCOMPARE(result.config->log.level, level);
}

void TestConfigLoader::readsTheIdempotencySection()
{
    const LoadResult defaults = load(QByteArray(oneSimulatedProvider));
    QVERIFY(defaults.ok());
    const switchyard::config::IdempotencyConfig &plain = defaults.config->idempotency;
    QVERIFY(plain.enabled);
    QCOMPARE(plain.window, std::chrono::milliseconds(600000));
    QVERIFY(!plain.requestIdHeader);
    QCOMPARE(plain.maxAnswerBytes, 1024 * 1024);
    QCOMPARE(plain.maxAnswers, 1000);

    const LoadResult full = load(QByteArray(oneSimulatedProvider) + "idempotency:\n"
                                                                    "  enabled: false\n"
                                                                    "  window: 90s\n"
                                                                    "  request_id_header: true\n"
                                                                    "  max_answer_bytes: 64KiB\n"
                                                                    "  max_answers: 50\n"_ba);
    QVERIFY2(full.ok(), qPrintable(errorLines(full).join(u'\n')));
    const switchyard::config::IdempotencyConfig &set = full.config->idempotency;
    QVERIFY(!set.enabled);
    QCOMPARE(set.window, std::chrono::milliseconds(90000));
    QVERIFY(set.requestIdHeader);
    QCOMPARE(set.maxAnswerBytes, 64 * 1024);
    QCOMPARE(set.maxAnswers, 50);
}

void TestConfigLoader::readsTheFleetSection()
{
    const LoadResult none = load(QByteArray(oneSimulatedProvider));
    QVERIFY(none.ok());
    QVERIFY(!none.config->fleet.has_value()); // a single node, as before fleets existed

    const LoadResult defaults =
        load(QByteArray(oneSimulatedProvider) + "fleet: {redis: redis://127.0.0.1:7001}\n"_ba);
    QVERIFY2(defaults.ok(), qPrintable(errorLines(defaults).join(u'\n')));
    const switchyard::config::FleetConfig &plain = *defaults.config->fleet;
    QCOMPARE(plain.redis, u"redis://127.0.0.1:7001"_s);
    QCOMPARE(plain.name, u"default"_s);
    QVERIFY(!plain.node.isEmpty()); // the host name
    QVERIFY(plain.password.isEmpty());
    QCOMPARE(plain.timeout, std::chrono::milliseconds(500));
    QCOMPARE(plain.syncInterval, std::chrono::milliseconds(100));
    QCOMPARE(plain.membershipTtl, std::chrono::milliseconds(3000));

    const LoadResult full =
        load(QByteArray(oneSimulatedProvider) + "fleet:\n"
                                                "  redis: redis://10.1.2.3:6380/4\n"
                                                "  name: staging\n"
                                                "  node: gw-2\n"
                                                "  password: {env: TEAM_SECRET}\n"
                                                "  timeout: 250ms\n"
                                                "  sync_interval: 50ms\n"
                                                "  membership_ttl: 10s\n"_ba);
    QVERIFY2(full.ok(), qPrintable(errorLines(full).join(u'\n')));
    const switchyard::config::FleetConfig &fleet = *full.config->fleet;
    QCOMPARE(fleet.redis, u"redis://10.1.2.3:6380/4"_s);
    QCOMPARE(fleet.name, u"staging"_s);
    QCOMPARE(fleet.node, u"gw-2"_s);
    QCOMPARE(fleet.password, "team-secret+/="_ba);
    QCOMPARE(fleet.passwordVariable, u"TEAM_SECRET"_s);
    QCOMPARE(fleet.timeout, std::chrono::milliseconds(250));
    QCOMPARE(fleet.syncInterval, std::chrono::milliseconds(50));
    QCOMPARE(fleet.membershipTtl, std::chrono::milliseconds(10000));
}

QTEST_GUILESS_MAIN(TestConfigLoader)

#include "tst_config_loader.moc"
