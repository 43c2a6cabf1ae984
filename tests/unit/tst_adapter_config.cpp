// The `anthropic:` and `mapping:` keys of a provider: good files load into the values the
// adapters use, bad ones are refused with FILE:LINE:COL and a message that says what to fix.

#include "config/config_loader.h"
#include "config_error_lines.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace Qt::StringLiterals;
using switchyard::config::ConfiguredValue;
using switchyard::config::LoadResult;
using switchyard::config::ProviderConfig;

namespace {

LoadResult load(const QByteArray &yaml)
{
    const auto environment = [](const QString &name) -> std::optional<QByteArray> {
        if (name == u"AGENT_KEY"_s)
            return "agent-secret"_ba;
        return std::nullopt;
    };
    return switchyard::config::loadConfigText(yaml, u"test.yaml"_s, environment);
}

// A mapped provider whose `mapping:` block is appended by each case, indented by six.
QByteArray mapped(const QByteArray &mapping)
{
    return "providers:\n"
           "  - id: agent\n"
           "    kind: mapped\n"
           "    base_url: http://127.0.0.1:9100\n"
           "    models: [agent]\n"
           "    mapping:\n" +
           mapping;
}

} // namespace

class TestAdapterConfig : public QObject {
    Q_OBJECT

private slots:
    void loadsAnthropicSettings();
    void anthropicDefaults();
    void loadsAFullMapping();
    void mappingDefaults();
    void templateAsJsonText();
    void reportsBadConfig_data();
    void reportsBadConfig();
};

void TestAdapterConfig::loadsAnthropicSettings()
{
    const LoadResult result = load("providers:\n"
                                   "  - id: claude\n"
                                   "    kind: anthropic\n"
                                   "    base_url: https://api.anthropic.com/v1\n"
                                   "    api_key_env: AGENT_KEY\n"
                                   "    models: [claude]\n"
                                   "    anthropic:\n"
                                   "      version: \"2024-01-01\"\n"
                                   "      max_tokens: 2048\n"
                                   "      beta: [a-1, b-2]\n"_ba);
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const ProviderConfig &provider = result.config->providers.first();
    QCOMPARE(provider.adapter.anthropic.version, u"2024-01-01"_s);
    QCOMPARE(provider.adapter.anthropic.maxTokens, 2048);
    QCOMPARE(provider.adapter.anthropic.betas, (QStringList{u"a-1"_s, u"b-2"_s}));
    QCOMPARE(provider.apiKey, "agent-secret"_ba);
}

void TestAdapterConfig::anthropicDefaults()
{
    const LoadResult result = load("providers:\n"
                                   "  - id: claude\n"
                                   "    kind: anthropic\n"
                                   "    base_url: https://api.anthropic.com/v1\n"
                                   "    models: [claude]\n"_ba);
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const ProviderConfig &provider = result.config->providers.first();
    QCOMPARE(provider.adapter.anthropic.version, u"2023-06-01"_s);
    QCOMPARE(provider.adapter.anthropic.maxTokens, 4096);
    QVERIFY(provider.adapter.anthropic.betas.isEmpty());
}

void TestAdapterConfig::loadsAFullMapping()
{
    const LoadResult result = load(mapped("      path: /generate\n"
                                          "      headers: {X-Team: support}\n"
                                          "      api_key_header: X-Agent-Key\n"
                                          "      api_key_prefix: \"Token \"\n"
                                          "      request:\n"
                                          "        conversation:\n"
                                          "          $map: $.messages\n"
                                          "          to: {role: \"@.role\", text: {$text: "
                                          "\"@.content\"}}\n"
                                          "        parameters: {max_new_tokens: $.max_tokens|256, "
                                          "greedy: false, label: '42'}\n"
                                          "      answer: $.reply\n"
                                          "      finish_reason: $.why\n"
                                          "      usage: {prompt_tokens: $.n.in, completion_tokens: "
                                          "$.n.out}\n"
                                          "      error: $.error.message\n"
                                          "      stream:\n"
                                          "        path: /stream\n"
                                          "        delta: $.delta\n"
                                          "        done: $.done\n"
                                          "        done_data: \"[END]\"\n"
                                          "        finish_reason: $.why\n"
                                          "        usage: {completion_tokens: $.n.out}\n"
                                          "        error: $.error\n"_ba));
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const ProviderConfig &provider = result.config->providers.first();
    const auto &mapping = provider.adapter.mapping;
    QCOMPARE(mapping.path, u"/generate"_s);
    // The older spelling inside `mapping:` fills the provider's own fields.
    QCOMPARE(provider.headers, (QList<ConfiguredValue>{{"X-Team", "support", {}}}));
    QCOMPARE(provider.keyHeaderName(), "X-Agent-Key"_ba);
    QCOMPARE(provider.keyPrefix(), "Token "_ba);
    QCOMPARE(mapping.answer.text(), u"$.reply"_s);
    QCOMPARE(mapping.finishReason->text(), u"$.why"_s);
    QCOMPARE(mapping.usage.promptTokens->text(), u"$.n.in"_s);
    QCOMPARE(mapping.usage.completionTokens->text(), u"$.n.out"_s);
    QCOMPARE(mapping.error->text(), u"$.error.message"_s);
    QVERIFY(mapping.stream.enabled);
    QCOMPARE(mapping.stream.path, u"/stream"_s);
    QCOMPARE(mapping.stream.delta.text(), u"$.delta"_s);
    QCOMPARE(mapping.stream.done->text(), u"$.done"_s);
    QCOMPARE(mapping.stream.doneData, "[END]"_ba);
    QVERIFY(!mapping.stream.usage.promptTokens);
    QCOMPARE(mapping.stream.error->text(), u"$.error"_s);

    // YAML scalars keep their JSON types: plain numbers and booleans, quoted text.
    const QJsonObject request =
        QJsonDocument::fromJson(
            R"({"model":"agent","max_tokens":64,"messages":[{"role":"user","content":"hi"}]})")
            .object();
    QCOMPARE(
        QJsonDocument(mapping.request.render(request).toObject()).toJson(QJsonDocument::Compact),
        R"({"conversation":[{"role":"user","text":"hi"}],)"
        R"("parameters":{"greedy":false,"label":"42","max_new_tokens":64}})"_ba);
}

void TestAdapterConfig::mappingDefaults()
{
    const LoadResult result = load(mapped("      request: {prompt: $.messages}\n"
                                          "      answer: $.text\n"_ba));
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const ProviderConfig &provider = result.config->providers.first();
    const auto &mapping = provider.adapter.mapping;
    QVERIFY(mapping.path.isEmpty());
    QVERIFY(provider.headers.isEmpty());
    QCOMPARE(provider.keyHeaderName(), "Authorization"_ba);
    QCOMPARE(provider.keyPrefix(), "Bearer "_ba);
    QVERIFY(!mapping.finishReason);
    QVERIFY(!mapping.error);
    QVERIFY(!mapping.stream.enabled);
}

void TestAdapterConfig::templateAsJsonText()
{
    const LoadResult result =
        load(mapped("      request: |\n"
                    "        {\"prompt\": {\"$text\": \"$.messages[-1].content\"},\n"
                    "         \"n\": 1}\n"
                    "      answer: $.text\n"_ba));
    QVERIFY2(result.ok(), qPrintable(errorLines(result).join(u'\n')));
    const QJsonObject request =
        QJsonDocument::fromJson(R"({"model":"agent","messages":[{"role":"user","content":"hi"}]})")
            .object();
    QCOMPARE(
        QJsonDocument(
            result.config->providers.first().adapter.mapping.request.render(request).toObject())
            .toJson(QJsonDocument::Compact),
        R"({"n":1,"prompt":"hi"})"_ba);
}

void TestAdapterConfig::reportsBadConfig_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QStringList>("expectedErrors");

    QTest::newRow("mapped without mapping")
        << "providers:\n"
           "  - id: agent\n"
           "    kind: mapped\n"
           "    base_url: http://127.0.0.1:9100\n"
           "    models: [agent]\n"_ba
        << QStringList{u"test.yaml:2:5: mapped provider is missing required key `mapping`"_s};
    QTest::newRow("mapping on an openai provider")
        << "providers:\n"
           "  - id: cloud\n"
           "    kind: openai\n"
           "    base_url: http://127.0.0.1:9100/v1\n"
           "    models: [gpt]\n"
           "    mapping: {answer: $.reply}\n"_ba
        << QStringList{u"test.yaml:6:5: `mapping` is only allowed for a mapped provider"_s};
    QTest::newRow("anthropic settings on a mapped provider")
        << mapped("      request: {p: $.model}\n"
                  "      answer: $.text\n"
                  "    anthropic: {version: x}\n"_ba)
        << QStringList{u"test.yaml:9:5: `anthropic` is only allowed for an anthropic provider"_s};
    QTest::newRow("unknown anthropic key")
        << "providers:\n"
           "  - id: claude\n"
           "    kind: anthropic\n"
           "    base_url: https://api.anthropic.com/v1\n"
           "    models: [claude]\n"
           "    anthropic: {versoin: \"2023-06-01\", max_tokens: 0}\n"_ba
        << QStringList{u"test.yaml:6:17: unknown key `versoin` (did you mean `version`?)"_s,
                       u"test.yaml:6:52: `max_tokens` must be at least 1, got \"0\""_s};
    QTest::newRow("unknown mapping key")
        << mapped("      request: {p: $.model}\n"
                  "      answr: $.text\n"_ba)
        << QStringList{u"test.yaml:7:7: `mapping` is missing required key `answer`"_s,
                       u"test.yaml:8:7: unknown key `answr` (did you mean `answer`?)"_s};
    QTest::newRow("template is not valid JSON")
        << mapped("      request: '{\"prompt\": \"$.model\",}'\n"
                  "      answer: $.text\n"_ba)
        << QStringList{u"test.yaml:7:16: `request` is not valid JSON: object is missing after a "
                       u"comma at line 1, column 22 of the template"_s};
    QTest::newRow("template on several lines is not valid JSON")
        << mapped("      request: |\n"
                  "        {\"prompt\": \"$.model\",\n"
                  "         \"n\": }\n"
                  "      answer: $.text\n"_ba)
        << QStringList{u"test.yaml:7:16: `request` is not valid JSON: object is missing after a "
                       u"comma at line 2, column 7 of the template"_s};
    QTest::newRow("template is a list")
        << mapped("      request: [$.model]\n"
                  "      answer: $.text\n"_ba)
        << QStringList{u"test.yaml:7:16: `request` must be a template: a map, or a JSON object "
                       u"written as a string, got a list"_s};
    QTest::newRow("template references a field the request never has")
        << mapped("      request:\n"
                  "        parameters:\n"
                  "          max_new_tokens: $.max_new_tokens|256\n"
                  "      answer: $.text\n"_ba)
        << QStringList{
               u"test.yaml:9:27: reference `$.max_new_tokens` can never match: the OpenAI chat "
               u"request has no field `max_new_tokens` (it has audio, frequency_penalty, "
               u"function_call, functions, logit_bias, logprobs, max_completion_tokens, "
               u"max_tokens, messages, metadata, modalities, model, n, parallel_tool_calls, "
               u"prediction, presence_penalty, reasoning_effort, response_format, seed, "
               u"service_tier, stop, store, stream, stream_options, temperature, tool_choice, "
               u"tools, top_logprobs, top_p, user, web_search_options)"_s};
    QTest::newRow("map element field that messages never have")
        << mapped("      request:\n"
                  "        conversation:\n"
                  "          $map: $.messages\n"
                  "          to:\n"
                  "            - \"@.role\"\n"
                  "            - \"@.text\"\n"
                  "      answer: $.text\n"_ba)
        << QStringList{u"test.yaml:12:15: reference `@.text` can never match: a message has no "
                       u"field `text` (it has audio, content, function_call, name, refusal, "
                       u"role, tool_call_id, tool_calls)"_s};
    QTest::newRow("reference error in a JSON text template")
        << mapped("      request: '{\"turns\": {\"$map\": \"$.messages\", \"to\": \"@.txt\"}}'\n"
                  "      answer: $.text\n"_ba)
        << QStringList{u"test.yaml:7:16: `request` at `turns.to`: reference `@.txt` can never "
                       u"match: a message has no field `txt` (it has audio, content, "
                       u"function_call, name, refusal, role, tool_call_id, tool_calls)"_s};
    QTest::newRow("template key given twice")
        << mapped("      request:\n"
                  "        prompt: $.model\n"
                  "        prompt: $.user\n"
                  "      answer: $.text\n"_ba)
        << QStringList{u"test.yaml:9:9: duplicate key `prompt` (first at line 8)"_s};
    QTest::newRow("answer path with invalid syntax")
        << mapped("      request: {p: $.model}\n"
                  "      answer: $.choices[first]\n"_ba)
        << QStringList{u"test.yaml:8:15: `answer` is not a valid path: expected an index, `*` "
                       u"or a quoted name in `[...]` at character 11"_s};
    QTest::newRow("answer path without a root")
        << mapped("      request: {p: $.model}\n"
                  "      answer: reply\n"_ba)
        << QStringList{u"test.yaml:8:15: `answer` is not a valid path: a path must start with "
                       u"`$` (the document) or `@` (the `$map` element), got `r`"_s};
    QTest::newRow("answer path at a map element")
        << mapped("      request: {p: $.model}\n"
                  "      answer: \"@.reply\"\n"_ba)
        << QStringList{u"test.yaml:8:15: `answer` must start with `$`, the provider's answer; "
                       u"`@` only means something inside a request template's `$map`"_s};
    QTest::newRow("answer path naming a list")
        << mapped("      request: {p: $.model}\n"
                  "      answer: $.parts[*].text\n"_ba)
        << QStringList{u"test.yaml:8:15: `answer` must name one value, but `[*]` in "
                       u"`$.parts[*].text` names a list"_s};
    QTest::newRow("stream without delta, bad done path")
        << mapped("      request: {p: $.model}\n"
                  "      answer: $.text\n"
                  "      stream: {done: $.done., done_data: \"\"}\n"_ba)
        << QStringList{u"test.yaml:9:15: `stream` is missing required key `delta`"_s,
                       u"test.yaml:9:22: `done` is not a valid path: expected a member name "
                       u"after `.` at character 8 (letters, digits, `_`, `-`; use [\"...\"] for "
                       u"other names)"_s,
                       u"test.yaml:9:42: `done_data` must not be empty"_s};
    QTest::newRow("bad path and headers")
        << mapped("      path: generate\n"
                  "      headers: {Content-Type: text/plain, \"Bad Name\": x, X-A: 1, x-a: 2}\n"
                  "      api_key_header: \"no good\"\n"
                  "      request: {p: $.model}\n"
                  "      answer: $.text\n"_ba)
        << QStringList{
               u"test.yaml:7:13: `path` must be a URL path such as `/generate`, got \"generate\""_s,
               u"test.yaml:8:17: header `Content-Type` cannot be set here: Switchyard writes it "
               u"itself"_s,
               u"test.yaml:8:43: `\"Bad Name\"` is not a header name"_s,
               u"test.yaml:8:66: duplicate header `x-a` (first at line 8)"_s,
               u"test.yaml:9:23: `mapping.api_key_header` must be a header name, got \"no good\""_s};
    QTest::newRow("usage with an unknown count")
        << mapped("      request: {p: $.model}\n"
                  "      answer: $.text\n"
                  "      usage: {total_tokens: $.n}\n"_ba)
        << QStringList{u"test.yaml:9:15: unknown key `total_tokens`"_s};
}

void TestAdapterConfig::reportsBadConfig()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QStringList, expectedErrors);
    const LoadResult result = load(yaml);
    QVERIFY(!result.ok());
    QCOMPARE(errorLines(result), expectedErrors);
}

QTEST_GUILESS_MAIN(TestAdapterConfig)
#include "tst_adapter_config.moc"
