// Fallbacks by error in the executor, against the fake transport in simulated time: a context
// length error or an answer the content filter emptied goes to the fallback model through the
// router, whole or streamed before the first content; each fallback model is tried at most once;
// without fallbacks the client gets what the provider said, as before.

#include "execution_fixture.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using namespace switchyard;
using namespace switchyard::testing;

class FallbackExecutionTest : public QObject {
    Q_OBJECT

private slots:
    void contextLengthGoesToTheFallbackModel();
    void withoutFallbacksTheErrorIsTheClients();
    void filteredWholeAnswerGoesToTheFallbackModel();
    void filteredStreamBeforeContentGoesToTheFallbackModel();
    void filteredAnswerWithoutFallbacksIsRelayed();
    void chainThatLeadsBackEndsCleanly();
    void chainGoesOnToTheNextModel();
    void otherBadRequestsAreNotMoved();
};

namespace {

// After the test class: moc (Qt 6.4) loses its way in a raw string with "//" before it.

// `m` is served by alpha; its fallbacks by beta. m-large's own fallbacks lead back to m.
constexpr auto kFallbacks = R"(
providers:
  - id: alpha
    kind: openai
    base_url: "http://alpha.test/v1"
    models:
      - {name: m, fallbacks: {context_length_exceeded: [m-large], content_filtered: [m-large]}}
  - id: beta
    kind: openai
    base_url: "http://beta.test/v1"
    models:
      - {name: m-large, upstream: large-2025, fallbacks: {context_length_exceeded: [m]}}
timeouts: {connect: 1s, first_token: 2s, idle: 3s, total: 10s}
retries: {backoff_base: 100ms, backoff_jitter: 0ms, min_retries_in_flight: 1}
)";

constexpr auto kNoFallbacks = R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m]}
  - {id: beta, kind: openai, base_url: "http://beta.test/v1", models: [m-large]}
timeouts: {connect: 1s, first_token: 2s, idle: 3s, total: 10s}
)";

// A chain through a route rule: m's context errors go to m-large, then m-xl.
constexpr auto kChain = R"(
providers:
  - {id: alpha, kind: openai, base_url: "http://alpha.test/v1", models: [m]}
  - {id: beta, kind: openai, base_url: "http://beta.test/v1", models: [m-large]}
  - {id: gamma, kind: openai, base_url: "http://gamma.test/v1", models: [m-xl]}
routes:
  - name: long
    when: {field: model, eq: m}
    to: {provider: alpha}
    fallbacks: {context_length_exceeded: [m-large, m-xl]}
timeouts: {connect: 1s, first_token: 2s, idle: 3s, total: 10s}
retries: {min_retries_in_flight: 1}
)";

const QByteArray kContextError =
    R"({"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}})";

const QByteArray kFilteredAnswer =
    R"({"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]})";

void answerWith(FakeTransport &transport, int status, const QByteArray &body)
{
    transport.head(status, {{"content-type", "application/json"}});
    transport.body(body);
    transport.finish();
}

QByteArray sentModel(const FakeCallState &call)
{
    return QJsonDocument::fromJson(call.request.body).object()[u"model"_s].toString().toUtf8();
}

} // namespace

void FallbackExecutionTest::contextLengthGoesToTheFallbackModel()
{
    Fixture f(kFallbacks);
    f.send();
    QCOMPARE(f.transport.last().provider(), u"alpha"_s);
    answerWith(f.transport, 400, kContextError);
    f.settle();

    QCOMPARE(f.transport.calls.size(), 2u);
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    QCOMPARE(sentModel(f.transport.last()), "large-2025"_ba); // renamed as any attempt's body
    f.transport.answer(u"the long answer"_s);

    QCOMPARE(f.log->status, 200);
    QCOMPARE(f.log->content(), u"the long answer"_s);
    QCOMPARE(f.log->header("x-switchyard-fallback-model"), "m-large"_ba);
    QCOMPARE(f.log->header("x-switchyard-fallback-reason"), "context_length_exceeded"_ba);
    QCOMPARE(f.log->header("x-switchyard-provider"), "beta"_ba);
    QCOMPARE(f.log->header("x-switchyard-degraded"), "0"_ba); // the ladder's rules are unchanged
    QCOMPARE(f.log->attempts(), 2);
    QVERIFY(f.traceHas(u"fallback by error"_s,
                       u"context_length_exceeded: from model `m` to model `m-large`"_s));
}

void FallbackExecutionTest::withoutFallbacksTheErrorIsTheClients()
{
    Fixture f(kNoFallbacks);
    f.send();
    answerWith(f.transport, 400, kContextError);
    f.settle();

    QCOMPARE(f.transport.calls.size(), 1u);
    QCOMPARE(f.log->status, 400);
    QVERIFY(f.log->error->message.contains(u"maximum context length is 8192 tokens"_s));
    QVERIFY(f.log->header("x-switchyard-fallback-model").isEmpty());
    QVERIFY(!f.traceHas(u"fallback by error"_s, {}));
}

void FallbackExecutionTest::filteredWholeAnswerGoesToTheFallbackModel()
{
    Fixture f(kFallbacks);
    f.send();
    answerWith(f.transport, 200, kFilteredAnswer);
    f.settle();

    QCOMPARE(f.transport.calls.size(), 2u);
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    f.transport.answer(u"allowed"_s);
    QCOMPARE(f.log->status, 200);
    QCOMPARE(f.log->content(), u"allowed"_s);
    QCOMPARE(f.log->header("x-switchyard-fallback-reason"), "content_filtered"_ba);
    // The provider answered as it would again: not a failure of the endpoint.
    QCOMPARE(f.health.snapshot()[f.slot(u"alpha"_s)].consecutiveFailures, 0);
}

void FallbackExecutionTest::filteredStreamBeforeContentGoesToTheFallbackModel()
{
    Fixture f(kFallbacks);
    f.send(true);
    f.transport.beginStream();
    f.transport.body(
        R"(data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})"
        "\n\n");
    f.transport.body(
        R"(data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]})"
        "\n\n");
    f.settle();

    QVERIFY(!f.log->streamBegun); // nothing of the filtered answer reached the client
    QCOMPARE(f.transport.calls.size(), 2u);
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    f.transport.beginStream();
    f.transport.chunk(u"fine"_s);
    f.transport.done();
    f.transport.finish();
    QVERIFY(f.log->streamEnded);
    QVERIFY(!f.log->streamFailure);
    QCOMPARE(f.log->streamedText(), u"fine"_s);
    QCOMPARE(f.log->header("x-switchyard-fallback-model"), "m-large"_ba);
}

void FallbackExecutionTest::filteredAnswerWithoutFallbacksIsRelayed()
{
    Fixture f(kNoFallbacks);
    f.send();
    answerWith(f.transport, 200, kFilteredAnswer);

    QCOMPARE(f.transport.calls.size(), 1u);
    QCOMPARE(f.log->status, 200);
    QCOMPARE(f.log->answer, kFilteredAnswer);
    QCOMPARE(f.lastTrace().finishReason, u"content_filter"_s);
}

void FallbackExecutionTest::chainThatLeadsBackEndsCleanly()
{
    Fixture f(kFallbacks);
    f.send();
    answerWith(f.transport, 400, kContextError);
    f.settle();
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    // m-large names m, which this request tried first: no third attempt, the error is the last.
    answerWith(f.transport, 400, kContextError);
    f.settle();

    QCOMPARE(f.transport.calls.size(), 2u);
    QCOMPARE(f.log->status, 400);
    QVERIFY(f.log->error->message.contains(u"Provider `beta`"_s));
    QVERIFY(f.traceHas(u"no fallback"_s, u"context_length_exceeded"_s));
    QCOMPARE(f.finished, 1);
}

void FallbackExecutionTest::chainGoesOnToTheNextModel()
{
    Fixture f(kChain);
    f.send();
    answerWith(f.transport, 400, kContextError);
    f.settle();
    QCOMPARE(f.transport.last().provider(), u"beta"_s);
    answerWith(f.transport, 400, kContextError);
    f.settle();
    QCOMPARE(f.transport.calls.size(), 3u);
    QCOMPARE(f.transport.last().provider(), u"gamma"_s);
    f.transport.answer(u"xl"_s);

    QCOMPARE(f.log->status, 200);
    QCOMPARE(f.log->header("x-switchyard-fallback-model"), "m-xl"_ba);
    QCOMPARE(f.log->header("x-switchyard-route"), "long"_ba); // the request's own route
    QVERIFY(f.traceHas(u"fallback by error"_s, u"from model `m-large` to model `m-xl`"_s));
}

void FallbackExecutionTest::otherBadRequestsAreNotMoved()
{
    Fixture f(kFallbacks);
    f.send();
    answerWith(
        f.transport, 400,
        R"({"error":{"message":"Invalid value for 'temperature'","type":"invalid_request_error","code":"invalid_value"}})");
    f.settle();

    QCOMPARE(f.transport.calls.size(), 1u);
    QCOMPARE(f.log->status, 400);
}

QTEST_GUILESS_MAIN(FallbackExecutionTest)
#include "tst_fallback_execution.moc"
