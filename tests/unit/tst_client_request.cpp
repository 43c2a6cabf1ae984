// ingress::readClientRequest: one reading of a client's request, in every protocol, for live
// traffic, explain and the dry run alike.

#include "config/config_loader.h"
#include "health/health_registry.h"
#include "ingress/client_request.h"
#include "routing/router.h"
#include "timing/clock.h"

#include <QTest>

using namespace switchyard;
using namespace Qt::StringLiterals;
using protocol::Operation;

namespace {

constexpr auto kConfig = R"(
providers:
  - id: chat-a
    kind: openai
    base_url: http://127.0.0.1:9/v1
    models: [gpt-x, {name: embed-small, endpoints: [embeddings]}]
  - id: claude
    kind: anthropic
    base_url: http://127.0.0.1:9/v1
    models: [claude-fast]
tiers:
  light: {pool: [chat-a]}
  pro: {pool: [chat-a]}
routes:
  - name: pinned-pro
    when: {field: header.x-pin, eq: pro}
    to: {tier: pro}
)";

std::shared_ptr<const config::Config> loadConfig()
{
    config::LoadResult result = config::loadConfigText(
        kConfig, u"ingress.yaml"_s, [](const QString &) { return std::optional<QByteArray>(); });
    if (!result.ok())
        qFatal("test config does not load: %s", qPrintable(result.errors.first().toString()));
    return std::make_shared<const config::Config>(std::move(*result.config));
}

struct Fixture {
    Fixture() : config(loadConfig()), store(config), health(store, clock), router(store, health) {}

    std::variant<ingress::ClientRequest, protocol::ApiError>
    read(Operation operation, const QByteArray &body,
         const QList<QPair<QByteArray, QByteArray>> &headers = {})
    {
        ingress::ClientRequest request;
        if (std::optional<protocol::ApiError> error =
                ingress::readClientRequest(request, operation, headers, body, *router.table()))
            return *error;
        return request;
    }

    timing::ManualClock clock;
    std::shared_ptr<const config::Config> config;
    config::ConfigStore store;
    health::HealthRegistry health;
    routing::Router router;
};

} // namespace

class TestClientRequest : public QObject {
    Q_OBJECT

private slots:
    void chatBodyIsTheClientsWithoutTheRoutingObject();
    void responsesKeepTheClientsBodyBesideTheChatTranslation();
    void responsesOnlyANativeProviderCanServe();
    void messagesNameWhatTranslationDoesNotApply();
    void countTokensGoesToAnAnthropicProviderOrIsEstimated();
    void untranslatableMessagesNeedAnAnthropicProvider();
    void embeddingsAreTheirOwnBodyEverywhere();
    void aModelOnAnotherEndpointIsRefused();
    void anthropicOnlyRequestsForAnUnknownModelAreNotFound();
    void aRefusalKeepsWhatWasReadBeforeIt();
    void explainRoutesAsTrafficWould();
};

void TestClientRequest::chatBodyIsTheClientsWithoutTheRoutingObject()
{
    Fixture fixture;
    const auto read = fixture.read(
        Operation::Chat,
        R"({"model":"gpt-x","switchyard":{"app":"x"},"messages":[{"role":"user","content":"hi"}]})");
    const auto &request = std::get<ingress::ClientRequest>(read);
    QCOMPARE(request.chatBody,
             R"({"model":"gpt-x","messages":[{"role":"user","content":"hi"}]})"_ba);
    QVERIFY(request.operationBody.isEmpty());
    QCOMPARE(request.context.meta.value(u"app"_s), u"x"_s);
    QCOMPARE(request.context.operation, Operation::Chat);
    QVERIFY(!request.nativeOnly);
}

void TestClientRequest::responsesKeepTheClientsBodyBesideTheChatTranslation()
{
    Fixture fixture;
    const QByteArray body = R"({"model":"gpt-x","input":"hi","switchyard":{"app":"x"}})";
    const auto read = fixture.read(Operation::Responses, body);
    const auto &request = std::get<ingress::ClientRequest>(read);
    QCOMPARE(request.operationBody, R"({"model":"gpt-x","input":"hi"})"_ba);
    QVERIFY(request.chatBody.contains("\"messages\""));
    QVERIFY(!request.chatBody.contains("switchyard"));
    QVERIFY(request.responses.has_value());
    QCOMPARE(request.chat.model, u"gpt-x"_s);
}

void TestClientRequest::responsesOnlyANativeProviderCanServe()
{
    // previous_response_id has no chat form, and no provider here speaks the Responses API.
    Fixture fixture;
    const auto read = fixture.read(
        Operation::Responses, R"({"model":"gpt-x","input":"hi","previous_response_id":"resp_1"})");
    QCOMPARE(std::get<protocol::ApiError>(read).status, 400);
}

void TestClientRequest::messagesNameWhatTranslationDoesNotApply()
{
    Fixture fixture;
    const QByteArray body = R"({"model":"gpt-x","max_tokens":5,"top_k":3,)"
                            R"("thinking":{"type":"enabled","budget_tokens":2000},)"
                            R"("messages":[{"role":"user","content":"hi"}]})";
    const auto read = fixture.read(Operation::Messages, body);
    const auto &request = std::get<ingress::ClientRequest>(read);
    QCOMPARE(request.messagesIgnoredFields, (QStringList{u"thinking"_s, u"top_k"_s}));
    QCOMPARE(request.operationBody, body);
    QCOMPARE(request.context.operation, Operation::Messages);
    QVERIFY(!request.nativeOnly);
}

void TestClientRequest::countTokensGoesToAnAnthropicProviderOrIsEstimated()
{
    Fixture fixture;
    const auto native =
        fixture.read(Operation::CountTokens,
                     R"({"model":"claude-fast","messages":[{"role":"user","content":"hi"}]})");
    QVERIFY(std::get<ingress::ClientRequest>(native).nativeOnly);
    QVERIFY(!std::get<ingress::ClientRequest>(native).answeredByEstimate);

    const auto estimated = fixture.read(
        Operation::CountTokens, R"({"model":"gpt-x","messages":[{"role":"user","content":"hi"}]})");
    QVERIFY(std::get<ingress::ClientRequest>(estimated).answeredByEstimate);
    QVERIFY(!std::get<ingress::ClientRequest>(estimated).nativeOnly);
}

void TestClientRequest::untranslatableMessagesNeedAnAnthropicProvider()
{
    Fixture fixture;
    const QByteArray tools = R"(,"max_tokens":5,"messages":[{"role":"user","content":"hi"}],)"
                             R"("tools":[{"type":"web_search_20250305","name":"web_search"}]})";
    const auto native = fixture.read(Operation::Messages, R"({"model":"claude-fast")" + tools);
    const auto &request = std::get<ingress::ClientRequest>(native);
    QVERIFY(request.nativeOnly);
    QVERIFY(
        request.nativeOnlyReason.startsWith(u"only anthropic providers can serve this request"_s));

    const auto refused = fixture.read(Operation::Messages, R"({"model":"gpt-x")" + tools);
    QCOMPARE(std::get<protocol::ApiError>(refused).param, u"tools[0]"_s);
}

void TestClientRequest::embeddingsAreTheirOwnBodyEverywhere()
{
    Fixture fixture;
    const QByteArray body = R"({"model":"embed-small","input":"hi"})";
    const auto read = fixture.read(Operation::Embeddings, body);
    const auto &request = std::get<ingress::ClientRequest>(read);
    QCOMPARE(request.chatBody, body);
    QCOMPARE(request.operationBody, body);
}

void TestClientRequest::aModelOnAnotherEndpointIsRefused()
{
    Fixture fixture;
    const auto read = fixture.read(
        Operation::Messages,
        R"({"model":"embed-small","max_tokens":5,"messages":[{"role":"user","content":"x"}]})");
    const protocol::ApiError &error = std::get<protocol::ApiError>(read);
    QCOMPARE(error.code, u"model_not_supported_on_endpoint"_s);
    QCOMPARE(
        error.message,
        u"The model `embed-small` is not served on /v1/messages; it is served on /v1/embeddings."_s);
}

void TestClientRequest::anthropicOnlyRequestsForAnUnknownModelAreNotFound()
{
    // A typo in the model must not be answered with an estimate, nor blamed on its providers.
    Fixture fixture;
    const auto counted =
        fixture.read(Operation::CountTokens,
                     R"({"model":"claude-fsat","messages":[{"role":"user","content":"x"}]})");
    QCOMPARE(std::get<protocol::ApiError>(counted).code, u"model_not_found"_s);
    const auto tooled = fixture.read(
        Operation::Messages,
        R"({"model":"claude-fsat","max_tokens":5,"messages":[{"role":"user","content":"x"}],)"
        R"("tools":[{"type":"web_search_20250305","name":"web_search"}]})");
    QCOMPARE(std::get<protocol::ApiError>(tooled).code, u"model_not_found"_s);
}

void TestClientRequest::aRefusalKeepsWhatWasReadBeforeIt()
{
    Fixture fixture;
    ingress::ClientRequest request;
    const std::optional<protocol::ApiError> error = ingress::readClientRequest(
        request, Operation::Chat, {{"x-switchyard-depth", "deep"}},
        R"({"model":"gpt-x","stream":true,"messages":[{"role":"user","content":"x"}]})",
        *fixture.router.table());
    QVERIFY(error);
    QCOMPARE(request.chat.model, u"gpt-x"_s);
    QVERIFY(request.chat.stream);
}

void TestClientRequest::explainRoutesAsTrafficWould()
{
    Fixture fixture;
    const QByteArray body = R"({"model":"gpt-x","switchyard":{"app":"x"},)"
                            R"("messages":[{"role":"user","content":"hi"}]})";
    const auto read =
        fixture.read(Operation::Chat, body, {{"x-request-id", "r-1"}, {"x-pin", "pro"}});
    ingress::ClientRequest request = std::get<ingress::ClientRequest>(read);
    const routing::Explanation explanation = fixture.router.explain(
        *fixture.router.table(), request.context, request.chat.hasRoutingObject);
    QCOMPARE(explanation.context.requestId, "r-1"_ba);
    QCOMPARE(explanation.context.meta.value(u"app"_s), u"x"_s);
    QVERIFY(explanation.stripsRoutingObject);
    QCOMPARE(explanation.decision.rule, u"pinned-pro"_s);
    QCOMPARE(explanation.decision.tier, u"pro"_s);

    const auto withoutId = fixture.read(Operation::Chat, body);
    const routing::Explanation drawn = fixture.router.explain(
        *fixture.router.table(), std::get<ingress::ClientRequest>(withoutId).context, true);
    QVERIFY(!drawn.context.requestId.isEmpty());

    const auto refused = fixture.read(Operation::Chat, body, {{"x-switchyard-depth", "deep"}});
    QCOMPARE(std::get<protocol::ApiError>(refused).param, u"x-switchyard-depth"_s);
}

QTEST_GUILESS_MAIN(TestClientRequest)
#include "tst_client_request.moc"
