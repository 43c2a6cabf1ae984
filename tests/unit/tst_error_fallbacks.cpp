// Fallbacks by error: the `fallbacks:` maps of tiers, route rules and model entries and the errors
// a file can make in them; the recogniser of each provider kind's error words, on bodies the
// providers really send; and which lists a route decision carries, and how explain says so.

#include "config/config_loader.h"
#include "config/route_rules_io.h"
#include "config_error_lines.h"
#include "health/health_registry.h"
#include "resilience/error_fallback.h"
#include "routing/router.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using config::FallbackError;
using config::ProviderKind;

Q_DECLARE_METATYPE(std::optional<FallbackError>)
Q_DECLARE_METATYPE(resilience::FilterEventRole)
Q_DECLARE_METATYPE(ProviderKind)

namespace {

constexpr auto kProviders = "providers:\n"
                            "  - {id: small-a, kind: simulated, models: [small]}\n"
                            "  - {id: big-a, kind: simulated, models: [big, huge]}\n";

config::LoadResult load(const QByteArray &yaml)
{
    return config::loadConfigText(yaml, u"fallbacks.yaml"_s,
                                  [](const QString &) { return std::optional<QByteArray>(); });
}

std::shared_ptr<const config::Config> loaded(const QByteArray &yaml)
{
    config::LoadResult result = load(yaml);
    if (!result.ok())
        qFatal("test config does not load: %s", qPrintable(result.errors.first().toString()));
    return std::make_shared<const config::Config>(std::move(*result.config));
}

} // namespace

class TestErrorFallbacks : public QObject {
    Q_OBJECT

private slots:
    void readsFallbacksOfTiersRulesAndModels();
    void reportsFallbackErrors_data();
    void reportsFallbackErrors();
    void ruleFallbacksSurviveTheJsonRoundTrip();

    void recognisesErrorAnswers_data();
    void recognisesErrorAnswers();
    void recognisesFilteredAnswers_data();
    void recognisesFilteredAnswers();
    void mentionsTheFilterWithoutParsing_data();
    void mentionsTheFilterWithoutParsing();
    void readsFilteredStreamEvents_data();
    void readsFilteredStreamEvents();

    void decisionTakesTheRuleThenTheModelThenTheTier();
    void explainSaysWhichFallbacksApply();
    void embeddingsHaveNoFallbacks();
};

// ---- config ------------------------------------------------------------------------------------

void TestErrorFallbacks::readsFallbacksOfTiersRulesAndModels()
{
    const config::LoadResult result =
        load("providers:\n"
             "  - id: small-a\n"
             "    kind: simulated\n"
             "    models:\n"
             "      - {name: small, fallbacks: {context_length_exceeded: [big, huge]}}\n"
             "  - {id: big-a, kind: simulated, models: [big, huge]}\n"
             "tiers:\n"
             "  light: {pool: [small-a], fallbacks: {content_filtered: big}}\n"
             "routes:\n"
             "  - name: long\n"
             "    to: {tier: light}\n"
             "    fallbacks: {context_length_exceeded: [huge], content_filtered: [big]}\n"_ba);
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const config::Config &config = *result.config;
    QCOMPARE(config.providers[0].models[0].fallbacks.contextLengthExceeded,
             (QStringList{u"big"_s, u"huge"_s}));
    QVERIFY(config.providers[0].models[0].fallbacks.contentFiltered.isEmpty());
    QCOMPARE(config.routing.tier(u"light"_s)->fallbacks.contentFiltered, QStringList{u"big"_s});
    QCOMPARE(config.routing.routes[0].fallbacks.models(FallbackError::ContextLengthExceeded),
             QStringList{u"huge"_s});
    QCOMPARE(config.routing.routes[0].fallbacks.models(FallbackError::ContentFiltered),
             QStringList{u"big"_s});
}

void TestErrorFallbacks::reportsFallbackErrors_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QStringList>("expectedErrors");

    QTest::newRow("unknown error kind")
        << QByteArray(kProviders) +
               "tiers:\n"
               "  light: {pool: [small-a], fallbacks: {context_length: [big]}}\n"_ba
        << QStringList{u"fallbacks.yaml:5:40: unknown key `context_length` (did you mean "
                       u"`context_length_exceeded`?)"_s};
    QTest::newRow("unknown model")
        << QByteArray(kProviders) + "routes:\n"
                                    "  - name: r\n"
                                    "    to: {provider: big-a}\n"
                                    "    fallbacks: {content_filtered: [bigg]}\n"_ba
        << QStringList{u"fallbacks.yaml:7:16: `fallbacks.content_filtered` names model `bigg`, "
                       u"which no provider lists (did you mean `big`?)"_s};
    QTest::newRow("empty list")
        << QByteArray(kProviders) +
               "tiers:\n"
               "  pro: {pool: [big-a], fallbacks: {context_length_exceeded: []}}\n"_ba
        << QStringList{u"fallbacks.yaml:5:61: `context_length_exceeded` must list at least one "
                       u"model"_s};
    QTest::newRow("empty model name")
        << QByteArray(kProviders) +
               "tiers:\n"
               "  pro: {pool: [big-a], fallbacks: {content_filtered: [\"\"]}}\n"_ba
        << QStringList{u"fallbacks.yaml:5:35: `fallbacks.content_filtered` lists an empty model "
                       u"name"_s};
    QTest::newRow("model twice")
        << QByteArray(kProviders) +
               "tiers:\n"
               "  pro: {pool: [big-a], fallbacks: {content_filtered: [big, big]}}\n"_ba
        << QStringList{u"fallbacks.yaml:5:54: `content_filtered` lists model `big` twice"_s};
    QTest::newRow("model falls back to itself")
        << "providers:\n"
           "  - id: big-a\n"
           "    kind: simulated\n"
           "    models:\n"
           "      - {name: big, fallbacks: {context_length_exceeded: [huge, big]}}\n"
           "      - huge\n"_ba
        << QStringList{u"fallbacks.yaml:5:32: model `big` falls back to itself on "
                       u"`context_length_exceeded`: list another model"_s};
    QTest::newRow("two providers disagree")
        << "providers:\n"
           "  - id: a\n"
           "    kind: simulated\n"
           "    models: [{name: big, fallbacks: {content_filtered: [huge]}}, huge]\n"
           "  - id: b\n"
           "    kind: simulated\n"
           "    models: [{name: big, fallbacks: {content_filtered: [other]}}, other]\n"_ba
        << QStringList{u"fallbacks.yaml:7:37: model `big` has other `fallbacks` at line 4: a "
                       u"model's fallbacks are said once, or the same for every provider that "
                       u"lists it"_s};
    QTest::newRow("not a map")
        << QByteArray(kProviders) + "tiers:\n"
                                    "  pro: {pool: [big-a], fallbacks: [big]}\n"_ba
        << QStringList{u"fallbacks.yaml:5:35: `fallbacks` must be a map, got a list"_s};
}

void TestErrorFallbacks::reportsFallbackErrors()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QStringList, expectedErrors);

    const config::LoadResult result = load(yaml);

    QCOMPARE(errorLines(result), expectedErrors);
    QVERIFY(!result.ok());
}

void TestErrorFallbacks::ruleFallbacksSurviveTheJsonRoundTrip()
{
    const std::shared_ptr<const config::Config> config =
        loaded(QByteArray(kProviders) +
               "routes:\n"
               "  - name: r\n"
               "    to: {provider: small-a}\n"
               "    fallbacks: {content_filtered: [big], context_length_exceeded: [huge, big]}\n"
               "  - name: plain\n"
               "    to: {provider: big-a}\n"_ba);
    const QJsonArray json = config::routeRulesJson(config->routing.routes);
    QCOMPARE(json[0][u"fallbacks"_s].toObject(),
             (QJsonObject{{u"context_length_exceeded"_s, QJsonArray{u"huge"_s, u"big"_s}},
                          {u"content_filtered"_s, QJsonArray{u"big"_s}}}));
    QVERIFY(!json[1].toObject().contains(u"fallbacks"_s));

    const auto read = config::readRouteRules(
        QJsonDocument(QJsonObject{{u"routes"_s, json}}).toJson(), u"rules.json"_s, *config);
    QVERIFY(std::holds_alternative<QList<config::RouteRule>>(read));
    const QList<config::RouteRule> rules = std::get<QList<config::RouteRule>>(read);
    QCOMPARE(rules[0].fallbacks, config->routing.routes[0].fallbacks);
    QCOMPARE(config::routeRulesJson(rules), json);
}

// ---- recognising the errors --------------------------------------------------------------------

void TestErrorFallbacks::recognisesErrorAnswers_data()
{
    QTest::addColumn<ProviderKind>("kind");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<std::optional<FallbackError>>("expected");

    const auto context = std::optional(FallbackError::ContextLengthExceeded);
    const auto filtered = std::optional(FallbackError::ContentFiltered);
    const std::optional<FallbackError> none;

    QTest::newRow("openai context_length_exceeded")
        << ProviderKind::OpenAi << 400
        << R"({"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})"_ba
        << context;
    QTest::newRow("openai responses context window")
        << ProviderKind::OpenAi << 400
        << R"({"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}})"_ba
        << context;
    QTest::newRow("vllm maximum context length")
        << ProviderKind::OpenAi << 400
        << R"({"object":"error","message":"This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400})"_ba
        << context;
    QTest::newRow("vllm newer error object")
        << ProviderKind::OpenAi << 400
        << R"({"error":{"message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens in the messages, Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}})"_ba
        << context;
    QTest::newRow("llama.cpp context size")
        << ProviderKind::OpenAi << 400
        << R"({"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}})"_ba
        << context;
    QTest::newRow("ollama plain error")
        << ProviderKind::OpenAi << 400
        << R"({"error":"input length exceeds the context length"})"_ba << context;
    QTest::newRow("mistral too large")
        << ProviderKind::OpenAi << 400
        << R"({"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_message_error","param":null,"code":"3051"})"_ba
        << context;
    QTest::newRow("azure content filter")
        << ProviderKind::OpenAi << 400
        << R"({"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.","type":null,"param":"prompt","code":"content_filter","status":400,"innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{"hate":{"filtered":true,"severity":"high"}}}}})"_ba
        << filtered;
    QTest::newRow("openai safety system")
        << ProviderKind::OpenAi << 400
        << R"({"error":{"code":"content_policy_violation","message":"Your request was rejected as a result of our safety system.","param":null,"type":"invalid_request_error"}})"_ba
        << filtered;
    QTest::newRow("anthropic prompt too long")
        << ProviderKind::Anthropic << 400
        << R"({"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215034 tokens > 200000 maximum"}})"_ba
        << context;
    QTest::newRow("anthropic output blocked")
        << ProviderKind::Anthropic << 400
        << R"({"type":"error","error":{"type":"invalid_request_error","message":"Output blocked by content filtering policy"}})"_ba
        << filtered;
    QTest::newRow("anthropic other invalid request")
        << ProviderKind::Anthropic << 400
        << R"({"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}})"_ba
        << none;
    QTest::newRow("anthropic overloaded is not")
        << ProviderKind::Anthropic << 400
        << R"({"type":"error","error":{"type":"overloaded_error","message":"prompt is too long"}})"_ba
        << none;
    QTest::newRow("mapped agent's words")
        << ProviderKind::Mapped << 422
        << R"({"status":"failed","reason":"Input is too long for requested model."})"_ba << context;
    QTest::newRow("other bad request")
        << ProviderKind::OpenAi << 400
        << R"({"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error","param":"temperature","code":"invalid_value"}})"_ba
        << none;
    QTest::newRow("rate limit naming tokens")
        << ProviderKind::OpenAi << 429
        << R"({"error":{"message":"Request too large: maximum context length","code":"context_length_exceeded"}})"_ba
        << none;
    QTest::newRow("server error")
        << ProviderKind::OpenAi << 500
        << R"({"error":{"message":"maximum context length","code":"context_length_exceeded"}})"_ba
        << none;
    QTest::newRow("plain text") << ProviderKind::OpenAi << 400
                                << "Bad Request: prompt is too long"_ba << context;
}

void TestErrorFallbacks::recognisesErrorAnswers()
{
    QFETCH(ProviderKind, kind);
    QFETCH(int, status);
    QFETCH(QByteArray, body);
    QFETCH(std::optional<FallbackError>, expected);

    QCOMPARE(resilience::recognizeErrorAnswer(kind, status, body), expected);
}

void TestErrorFallbacks::recognisesFilteredAnswers_data()
{
    QTest::addColumn<QByteArray>("answer");
    QTest::addColumn<bool>("filtered");

    QTest::newRow("chat filtered, content null")
        << R"({"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]})"_ba
        << true;
    QTest::newRow("chat filtered, content empty, refusal null")
        << R"({"choices":[{"index":0,"message":{"role":"assistant","content":"","refusal":null},"finish_reason":"content_filter"}]})"_ba
        << true;
    QTest::newRow("chat filtered after some content")
        << R"({"choices":[{"index":0,"message":{"role":"assistant","content":"Once upon"},"finish_reason":"content_filter"}]})"_ba
        << false;
    QTest::newRow("chat filtered with a tool call")
        << R"({"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"t"}]},"finish_reason":"content_filter"}]})"_ba
        << false;
    QTest::newRow("chat stopped normally")
        << R"({"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]})"_ba
        << false;
    QTest::newRow("anthropic refusal, no content")
        << R"({"id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":"refusal","usage":{"input_tokens":10,"output_tokens":0}})"_ba
        << true;
    QTest::newRow("anthropic refusal after text")
        << R"({"type":"message","content":[{"type":"text","text":"I"}],"stop_reason":"refusal"})"_ba
        << false;
    QTest::newRow("responses incomplete for the filter")
        << R"({"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]})"_ba
        << true;
}

void TestErrorFallbacks::recognisesFilteredAnswers()
{
    QFETCH(QByteArray, answer);
    QFETCH(bool, filtered);

    QCOMPARE(resilience::isFilteredWithoutContent(answer), filtered);
    // The gateway parses only answers that mention the filter: none filtered may go unmentioned.
    if (filtered)
        QVERIFY(resilience::mentionsContentFilter(answer));
}

void TestErrorFallbacks::mentionsTheFilterWithoutParsing_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<bool>("mentions");

    QTest::newRow("empty") << QByteArray() << false;
    QTest::newRow("finish_reason content_filter")
        << R"({"choices":[{"finish_reason":"content_filter"}]})"_ba << true;
    QTest::newRow("azure results only")
        << R"({"choices":[{"content_filter_results":{}}]})"_ba << true;
    QTest::newRow("stop_reason refusal") << R"({"stop_reason":"refusal"})"_ba << true;
    QTest::newRow("stop_reason refusal, spaced") << R"({"stop_reason": "refusal"})"_ba << true;
    QTest::newRow("a chat delta's refusal key")
        << R"({"delta":{"content":"Hi","refusal":null}})"_ba << false;
    QTest::newRow("a refusal key, then its text")
        << R"({"message":{"refusal":"I can't"},"finish_reason":"stop"})"_ba << false;
    QTest::newRow("a key first, then the value")
        << R"({"refusal":null,"stop_reason":"refusal"})"_ba << true;
    QTest::newRow("the word alone at the start") << R"("refusal")"_ba << false;
    QTest::newRow("a plain answer")
        << R"({"choices":[{"message":{"content":"content filter"},"finish_reason":"stop"}]})"_ba
        << false;
}

void TestErrorFallbacks::mentionsTheFilterWithoutParsing()
{
    QFETCH(QByteArray, json);
    QFETCH(bool, mentions);

    QCOMPARE(resilience::mentionsContentFilter(json), mentions);
}

void TestErrorFallbacks::readsFilteredStreamEvents_data()
{
    QTest::addColumn<QByteArray>("event");
    QTest::addColumn<QByteArray>("data");
    QTest::addColumn<resilience::FilterEventRole>("role");

    using Role = resilience::FilterEventRole;
    QTest::newRow("chat filter finish")
        << QByteArray()
        << R"({"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]})"_ba
        << Role::FilteredEnd;
    QTest::newRow("azure filter finish with results")
        << QByteArray()
        << R"({"choices":[{"index":0,"delta":{"content":null},"finish_reason":"content_filter","content_filter_results":{"hate":{"filtered":true}}}]})"_ba
        << Role::FilteredEnd;
    QTest::newRow("chat content") << QByteArray()
                                  << R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})"_ba
                                  << Role::Other;
    QTest::newRow("usage only") << QByteArray()
                                << R"({"choices":[],"usage":{"prompt_tokens":5}})"_ba
                                << Role::Neutral;
    QTest::newRow("azure prompt filter results")
        << QByteArray()
        << R"({"id":"","choices":[],"prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]})"_ba
        << Role::Neutral;
    QTest::newRow("done") << QByteArray() << "[DONE]"_ba << Role::Neutral;
    QTest::newRow("anthropic refusal")
        << "message_delta"_ba
        << R"({"type":"message_delta","delta":{"stop_reason":"refusal","stop_sequence":null},"usage":{"output_tokens":0}})"_ba
        << Role::FilteredEnd;
    QTest::newRow("anthropic end turn")
        << "message_delta"_ba
        << R"({"type":"message_delta","delta":{"stop_reason":"end_turn"}})"_ba << Role::Other;
    QTest::newRow("anthropic stop") << "message_stop"_ba
                                    << R"({"type":"message_stop"})"_ba << Role::Neutral;
}

void TestErrorFallbacks::readsFilteredStreamEvents()
{
    QFETCH(QByteArray, event);
    QFETCH(QByteArray, data);
    QFETCH(resilience::FilterEventRole, role);

    upstream::SseEvent sse;
    sse.event = event;
    sse.data = data;
    QCOMPARE(resilience::filterEventRole(sse), role);
    if (role == resilience::FilterEventRole::FilteredEnd)
        QVERIFY(resilience::mentionsContentFilter(data));
}

// ---- the decision ------------------------------------------------------------------------------

namespace {

constexpr auto kRouted = R"(
providers:
  - id: small-a
    kind: simulated
    models:
      - {name: small, fallbacks: {context_length_exceeded: [big], content_filtered: [big]}}
  - {id: big-a, kind: simulated, models: [big, huge, embed]}
tiers:
  light: {pool: [small-a], fallbacks: {content_filtered: [huge], context_length_exceeded: [huge]}}
  pro: {pool: [big-a]}
routes:
  - name: long-docs
    priority: 10
    when: {field: header.x-docs, eq: "yes"}
    to: {tier: light}
    fallbacks: {context_length_exceeded: [huge]}
  - name: default
    to: {tier: light}
)";

struct RouterFixture {
    RouterFixture()
        : config(loaded(kRouted)), store(config), health(store, clock), router(store, health)
    {}

    routing::RouteDecision route(const QString &model, bool docs = false,
                                 protocol::Operation operation = protocol::Operation::Chat)
    {
        routing::RequestContext context;
        context.requestId = "req-1";
        context.model = model;
        context.operation = operation;
        if (docs)
            context.headers.append(qMakePair(QByteArray("x-docs"), QByteArray("yes")));
        return router.route(context);
    }

    timing::ManualClock clock;
    std::shared_ptr<const config::Config> config;
    config::ConfigStore store;
    health::HealthRegistry health;
    routing::Router router;
};

} // namespace

void TestErrorFallbacks::decisionTakesTheRuleThenTheModelThenTheTier()
{
    RouterFixture fixture;
    // The rule names context length; the model names content filtering; the tier is not needed.
    const routing::RouteDecision docs = fixture.route(u"small"_s, true);
    QCOMPARE(docs.rule, u"long-docs"_s);
    QCOMPARE(docs.errorFallbacks.contextLengthExceeded, QStringList{u"huge"_s});
    QCOMPARE(docs.errorFallbacks.contentFiltered, QStringList{u"big"_s});
    // Without the rule's list the model's applies; a model without one takes the tier's.
    QCOMPARE(fixture.route(u"small"_s).errorFallbacks.contextLengthExceeded, QStringList{u"big"_s});
    QCOMPARE(fixture.route(u"big"_s).errorFallbacks.contentFiltered, QStringList{u"huge"_s});
}

void TestErrorFallbacks::explainSaysWhichFallbacksApply()
{
    RouterFixture fixture;
    const routing::RouteDecision decision = fixture.route(u"small"_s, true);
    QCOMPARE(decision.steps.last().stage, u"fallbacks"_s);
    QCOMPARE(decision.steps.last().detail,
             u"on context_length_exceeded -> huge (rule `long-docs`); content_filtered -> big "
             u"(model `small`); each fallback model at most once"_s);
}

void TestErrorFallbacks::embeddingsHaveNoFallbacks()
{
    RouterFixture fixture;
    const routing::RouteDecision decision =
        fixture.route(u"embed"_s, false, protocol::Operation::Embeddings);
    QVERIFY(decision.errorFallbacks.isEmpty());
    QVERIFY(decision.steps.last().stage != u"fallbacks"_s);
}

QTEST_GUILESS_MAIN(TestErrorFallbacks)
#include "tst_error_fallbacks.moc"
