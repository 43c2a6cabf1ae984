// Golden-file tests of every translation the adapters make, both ways: requests, answers,
// errors and whole streams (fed through the real SSE parser split at every byte boundary and
// at random boundaries with a fixed seed). The files live in tests/golden/adapters/: one folder
// per provider, with its config in provider.yaml, and one folder for the /v1/messages ingress.
// SWITCHYARD_UPDATE_GOLDEN=1 rewrites the expected files from what the code does now; review the
// diff before keeping it.

#include "config/config_loader.h"
#include "ingress/anthropic_ingress.h"
#include "stream_splits.h"
#include "upstream/adapters/anthropic_adapter.h"
#include "upstream/adapters/openai_adapter.h"
#include "upstream/adapters/provider_adapter.h"
#include "upstream/adapters/provider_endpoint.h"
#include "upstream/sse_parser.h"

#include "json/json_path.h"
#include "json/json_template.h"
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using upstream::SseEvent;
using upstream::SseParser;
using upstream::adapters::AdapterRequest;
using upstream::adapters::AnswerShape;
using upstream::adapters::AnswerTranslation;
using upstream::adapters::PreparedRequest;
using upstream::adapters::ProviderAdapter;
using upstream::adapters::StreamFailure;
using upstream::adapters::StreamOutput;
using upstream::adapters::Usage;

namespace {

constexpr qint64 kCreatedSecs = 1700000000;
constexpr auto kRequestId = "req-golden";

QString goldenRoot()
{
    return qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") + u"/tests/golden/adapters"_s;
}

bool updatingGolden()
{
    return qEnvironmentVariableIsSet("SWITCHYARD_UPDATE_GOLDEN");
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read golden file %s", qPrintable(path));
    return file.readAll();
}

QJsonValue readJson(const QString &path)
{
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(readFile(path), &error);
    if (error.error != QJsonParseError::NoError)
        qFatal("golden file %s is not JSON: %s", qPrintable(path), qPrintable(error.errorString()));
    return document.isObject() ? QJsonValue(document.object()) : QJsonValue(document.array());
}

QByteArray pretty(const QJsonValue &value)
{
    return value.isObject() ? QJsonDocument(value.toObject()).toJson(QJsonDocument::Indented)
                            : QJsonDocument(value.toArray()).toJson(QJsonDocument::Indented);
}

// Compares with the expected file, or writes it when updating.
void compareWithGolden(const QString &path, const QJsonValue &actual)
{
    if (updatingGolden()) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(pretty(actual));
        return;
    }
    QVERIFY2(QFile::exists(path), qPrintable(u"missing golden file "_s + path));
    // Compared as text so a failure shows both sides readably.
    QCOMPARE(QString::fromUtf8(pretty(actual)), QString::fromUtf8(pretty(readJson(path))));
}

// Data that is JSON is shown as JSON, anything else as text.
QJsonValue dataValue(const QByteArray &data)
{
    const QJsonDocument document = QJsonDocument::fromJson(data);
    if (document.isObject())
        return document.object();
    if (document.isArray())
        return document.array();
    return QString::fromUtf8(data);
}

QJsonObject errorJson(const protocol::ApiError &error)
{
    QJsonObject object{{u"status"_s, error.status},
                       {u"body"_s, QJsonDocument::fromJson(error.toJson()).object()}};
    if (!error.retryAfter.isEmpty())
        object.insert(u"retry_after"_s, QString::fromUtf8(error.retryAfter));
    return object;
}

QByteArray headerOf(const upstream::HeaderList &headers, QByteArrayView name);

QJsonObject usageJson(const Usage &usage)
{
    return {{u"prompt_tokens"_s, usage.promptTokens},
            {u"completion_tokens"_s, usage.completionTokens},
            {u"cached_prompt_tokens"_s, usage.cachedPromptTokens},
            {u"cache_write_prompt_tokens"_s, usage.cacheWritePromptTokens}};
}

QJsonObject eventJson(const SseEvent &event)
{
    QJsonObject object{{u"data"_s, dataValue(event.data)}};
    if (!event.event.isEmpty())
        object.insert(u"event"_s, QString::fromUtf8(event.event));
    return object;
}

// Splits a byte stream into pieces ending at `cuts` (ascending) and parses it as SSE.
template <typename Consume>
void parseInPieces(const QByteArray &wire, const QList<qsizetype> &cuts, Consume consume)
{
    SseParser parser;
    qsizetype start = 0;
    QList<qsizetype> ends = cuts;
    ends.append(wire.size());
    for (qsizetype end : std::as_const(ends)) {
        QList<SseEvent> events;
        QVERIFY(parser.feed(QByteArrayView(wire).sliced(start, end - start), events));
        for (const SseEvent &event : std::as_const(events))
            consume(event);
        start = end;
    }
}

QJsonObject translateStream(const ProviderAdapter &adapter, const AnswerShape &shape,
                            const QByteArray &wire, const QList<qsizetype> &cuts)
{
    std::unique_ptr<upstream::adapters::StreamTranslator> translator = adapter.startStream(shape);
    QJsonArray events;
    bool completed = false;
    std::optional<StreamFailure> failure;
    const auto take = [&](const StreamOutput &output) {
        for (const SseEvent &event : output.events)
            events.append(eventJson(event));
        completed = completed || output.completed;
        if (output.failure)
            failure = output.failure;
    };
    parseInPieces(wire, cuts, [&](const SseEvent &event) {
        // The executor stops feeding once the answer is whole or has failed.
        if (!completed && !failure)
            take(translator->feed(event));
    });
    if (!failure)
        take(translator->finish());
    QJsonObject result{{u"events"_s, events},
                       {u"completed"_s, completed},
                       {u"usage"_s, usageJson(translator->usage())}};
    if (failure) {
        result.insert(u"failure"_s,
                      QJsonObject{{u"kind"_s, failure->kind == StreamFailure::Kind::Unusable
                                                  ? u"unusable"_s
                                                  : u"provider_error"_s},
                                  {u"error"_s, errorJson(failure->error)}});
    }
    return result;
}

QJsonObject translateIngressStream(const QByteArray &wire, const QList<qsizetype> &cuts)
{
    ingress::MessagesStreamWriter writer;
    QJsonArray events;
    parseInPieces(wire, cuts, [&](const SseEvent &event) {
        for (const SseEvent &out : writer.feed(event))
            events.append(eventJson(out));
    });
    return {{u"events"_s, events}, {u"completed"_s, writer.completed()}};
}

QJsonObject shapeJson(const AnswerShape &shape)
{
    return {{u"upstream_model"_s, shape.upstreamModel},
            {u"answer_id"_s, QString::fromUtf8(shape.answerId)},
            {u"client_streams"_s, shape.clientStreams},
            {u"upstream_streams"_s, shape.upstreamStreams},
            {u"include_usage"_s, shape.includeUsage},
            {u"legacy_functions"_s, shape.legacyFunctions}};
}

QJsonObject requestJson(const PreparedRequest &prepared)
{
    QJsonArray headers;
    for (const auto &[name, value] : prepared.request.headers)
        headers.append(QJsonArray{QString::fromUtf8(name), QString::fromUtf8(value)});
    QJsonObject request{{u"url"_s, QString::fromUtf8(prepared.request.url.toEncoded())},
                        {u"method"_s, QString::fromUtf8(prepared.request.method)},
                        {u"headers"_s, headers},
                        {u"body"_s, dataValue(prepared.request.body)},
                        {u"shape"_s, shapeJson(prepared.shape)}};
    // Only where a provider sets them, so the other cases read as before.
    if (!prepared.request.proxy.isEmpty())
        request.insert(u"proxy"_s, prepared.request.proxy.toString());
    if (!prepared.request.caFile.isEmpty())
        request.insert(u"ca_file"_s, QFileInfo(prepared.request.caFile).fileName());
    return request;
}

// One provider folder: its config, loaded through the real loader, and its adapter.
struct GoldenProvider {
    config::Config config;
    std::unique_ptr<ProviderAdapter> adapter;

    const config::ProviderConfig &provider() const { return config.providers.first(); }
};

std::shared_ptr<GoldenProvider> loadProvider(const QString &folder)
{
    const auto environment = [](const QString &name) -> std::optional<QByteArray> {
        return "sk-test-" + name.toLower().toUtf8();
    };
    const QString path = folder + u"/provider.yaml"_s;
    config::LoadResult loaded = config::loadConfigText(readFile(path), path, environment);
    if (!loaded.ok()) {
        for (const config::ConfigError &error : loaded.errors)
            qWarning().noquote() << error.toString();
        qFatal("golden provider config %s does not load", qPrintable(path));
    }
    auto golden = std::make_shared<GoldenProvider>();
    golden->config = std::move(*loaded.config);
    golden->adapter = upstream::adapters::adapterFor(golden->provider());
    return golden;
}

AdapterRequest adapterRequest(const GoldenProvider &golden, const QByteArray &openAiBody)
{
    const QJsonObject body = QJsonDocument::fromJson(openAiBody).object();
    AdapterRequest request;
    request.openAiBody = openAiBody;
    request.bodyModel = body.value(u"model"_s).toString();
    request.upstreamModel = golden.provider().upstreamModelFor(request.bodyModel);
    if (request.upstreamModel.isEmpty())
        request.upstreamModel = request.bodyModel;
    request.stream = body.value(u"stream"_s).toBool();
    request.requestId = kRequestId;
    request.createdSecs = kCreatedSecs;
    request.extraHeaders = {{"x-request-id", kRequestId}};
    return request;
}

// The shape a case's answer and stream are translated with: from its request file when it has
// one, else an unstreamed request for the provider's first model.
AnswerShape shapeFor(const GoldenProvider &golden, const QString &casePrefix)
{
    const QString requestFile = casePrefix + u".request.in.json"_s;
    QByteArray body = R"({"model":")" + golden.provider().models.first().publicName.toUtf8() +
                      R"(","messages":[{"role":"user","content":"hi"}]})";
    if (QFile::exists(requestFile))
        body = readFile(requestFile);
    auto prepared = golden.adapter->buildRequest(adapterRequest(golden, body));
    if (auto *ready = std::get_if<PreparedRequest>(&prepared))
        return ready->shape;
    AnswerShape shape;
    shape.upstreamModel = golden.provider().models.first().upstreamName;
    shape.answerId = QByteArray("chatcmpl-") + kRequestId;
    shape.createdSecs = kCreatedSecs;
    return shape;
}

struct GoldenCase {
    QString folder;
    QString prefix; // folder/case
};

QList<GoldenCase> casesWith(const QString &suffix, bool ingress)
{
    QList<GoldenCase> cases;
    const QDir root(goldenRoot());
    for (const QString &name : root.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
        if (name == u"responses_ingress"_s)
            continue; // the /v1/responses translation has its own test, tst_responses_ingress
        const QDir folder(root.filePath(name));
        const bool isIngress = !folder.exists(u"provider.yaml"_s);
        if (isIngress != ingress)
            continue;
        for (const QString &file : folder.entryList({u"*"_s + suffix}, QDir::Files, QDir::Name))
            cases.append({folder.path(), folder.filePath(file.chopped(suffix.size()))});
    }
    // A suite that finds no case passes while proving nothing: a moved or empty folder fails.
    if (cases.isEmpty())
        qFatal("no golden case *%s under %s", qPrintable(suffix), qPrintable(goldenRoot()));
    return cases;
}

QByteArray rowName(const GoldenCase &golden)
{
    return QDir(goldenRoot()).relativeFilePath(golden.prefix).toUtf8();
}

} // namespace

class TestAdapters : public QObject {
    Q_OBJECT

private slots:
    void goldenRequests_data();
    void goldenRequests();
    void goldenAnswers_data();
    void goldenAnswers();
    void goldenErrors_data();
    void goldenErrors();
    void goldenStreams_data();
    void goldenStreams();
    void anthropicCacheCountsAreAddedOnce_data();
    void anthropicCacheCountsAreAddedOnce();

    void ingressRequests_data();
    void ingressRequests();
    void ingressAnswers_data();
    void ingressAnswers();
    void ingressStreams_data();
    void ingressStreams();
    void ingressErrorShapes_data();
    void ingressErrorShapes();
    void ingressStreamFailure();

    void openAiPassThroughKeepsTheClientsBytes();
    void anthropicPassThroughKeepsTheClientsBytes();
    void anthropicPassThroughTakesTheProvidersVersionWhenTheClientSendsNone();
    void anthropicPassThroughAnswerKeepsItsBytesAndCacheCounts();
    void anthropicPassThroughRelaysEveryEvent();
    void anthropicPassThroughErrorEventIsTheProvidersFailure();
    void adapterForEveryKind_data();
    void adapterForEveryKind();
    void providerHttpErrorClassifies_data();
    void providerHttpErrorClassifies();
    void callsTheConfiguredEndpointForEveryKind_data();
    void callsTheConfiguredEndpointForEveryKind();
    void providerUrlEncodesWhatItInserts_data();
    void providerUrlEncodesWhatItInserts();
    void displayUrlHidesSecretQueryValues();
    void providerUrlsAreBuiltOnceAndFollowEveryChange();
    void withoutSecretsHidesWhatTheProviderRepeats();

    void jsonPathParses_data();
    void jsonPathParses();
    void jsonPathRejects_data();
    void jsonPathRejects();
    void jsonPathFinds_data();
    void jsonPathFinds();
    void templateRenders_data();
    void templateRenders();
    void templateRejects_data();
    void templateRejects();

private:
    QHash<QString, std::shared_ptr<GoldenProvider>> m_providers;
    GoldenProvider &provider(const QString &folder)
    {
        auto &slot = m_providers[folder];
        if (!slot)
            slot = loadProvider(folder);
        return *slot;
    }
};

void TestAdapters::goldenRequests_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("prefix");
    for (const GoldenCase &golden : casesWith(u".request.in.json"_s, false))
        QTest::newRow(rowName(golden).constData()) << golden.folder << golden.prefix;
}

void TestAdapters::goldenRequests()
{
    QFETCH(QString, folder);
    QFETCH(QString, prefix);
    const GoldenProvider &golden = provider(folder);
    const auto prepared = golden.adapter->buildRequest(
        adapterRequest(golden, readFile(prefix + u".request.in.json"_s)));
    const QJsonObject actual =
        std::holds_alternative<PreparedRequest>(prepared)
            ? requestJson(std::get<PreparedRequest>(prepared))
            : QJsonObject{{u"refused"_s, errorJson(std::get<protocol::ApiError>(prepared))}};
    compareWithGolden(prefix + u".request.out.json"_s, actual);
}

void TestAdapters::goldenAnswers_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("prefix");
    for (const GoldenCase &golden : casesWith(u".answer.in.json"_s, false))
        QTest::newRow(rowName(golden).constData()) << golden.folder << golden.prefix;
}

void TestAdapters::goldenAnswers()
{
    QFETCH(QString, folder);
    QFETCH(QString, prefix);
    const GoldenProvider &golden = provider(folder);
    const AnswerShape shape = shapeFor(golden, prefix);
    const AnswerTranslation translation =
        golden.adapter->translateAnswer(shape, readFile(prefix + u".answer.in.json"_s));
    QJsonObject actual;
    if (translation.kind == AnswerTranslation::Kind::Ok) {
        actual = {{u"kind"_s, u"ok"_s},
                  {u"body"_s, dataValue(translation.openAiJson)},
                  {u"usage"_s, usageJson(translation.usage)}};
    } else {
        actual = {{u"kind"_s, u"unusable"_s}, {u"error"_s, errorJson(translation.error)}};
    }
    compareWithGolden(prefix + u".answer.out.json"_s, actual);

    // A streamed client request to a provider that answered whole gets the answer replayed.
    if (translation.kind == AnswerTranslation::Kind::Ok && shape.clientStreams &&
        !shape.upstreamStreams) {
        QJsonArray events;
        for (const SseEvent &event :
             upstream::adapters::completionAsChunks(shape, translation.openAiJson))
            events.append(eventJson(event));
        compareWithGolden(prefix + u".replay.out.json"_s, QJsonObject{{u"events"_s, events}});
    }
}

void TestAdapters::goldenErrors_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("prefix");
    for (const GoldenCase &golden : casesWith(u".error.in.json"_s, false))
        QTest::newRow(rowName(golden).constData()) << golden.folder << golden.prefix;
}

void TestAdapters::goldenErrors()
{
    QFETCH(QString, folder);
    QFETCH(QString, prefix);
    const GoldenProvider &golden = provider(folder);
    // {"status": 429, "headers": {"retry-after": "7"}, "body": {...} or "raw text"}
    const QJsonObject input = readJson(prefix + u".error.in.json"_s).toObject();
    upstream::HeaderList headers;
    const QJsonObject headerObject = input.value(u"headers"_s).toObject();
    for (auto it = headerObject.constBegin(); it != headerObject.constEnd(); ++it)
        headers.append({it.key().toUtf8(), it.value().toString().toUtf8()});
    const QJsonValue body = input.value(u"body"_s);
    const QByteArray bytes =
        body.isString() ? body.toString().toUtf8() : QJsonDocument(body.toObject()).toJson();
    const protocol::ApiError error =
        golden.adapter->translateError(input.value(u"status"_s).toInt(), headers, bytes);
    compareWithGolden(prefix + u".error.out.json"_s, errorJson(error));
}

void TestAdapters::goldenStreams_data()
{
    QTest::addColumn<QString>("folder");
    QTest::addColumn<QString>("prefix");
    for (const GoldenCase &golden : casesWith(u".stream.in.sse"_s, false))
        QTest::newRow(rowName(golden).constData()) << golden.folder << golden.prefix;
}

void TestAdapters::goldenStreams()
{
    QFETCH(QString, folder);
    QFETCH(QString, prefix);
    const GoldenProvider &golden = provider(folder);
    AnswerShape shape = shapeFor(golden, prefix);
    QVERIFY2(shape.upstreamStreams || !QFile::exists(prefix + u".request.in.json"_s),
             "a stream case's request must ask for a stream");
    shape.clientStreams = shape.upstreamStreams = true;
    const QByteArray wire = readFile(prefix + u".stream.in.sse"_s);
    const QJsonObject whole = translateStream(*golden.adapter, shape, wire, {});
    compareWithGolden(prefix + u".stream.out.json"_s, whole);
    for (const QList<qsizetype> &cuts : testing::streamSplits(wire)) {
        const QJsonObject split = translateStream(*golden.adapter, shape, wire, cuts);
        if (split != whole) {
            QCOMPARE(QString::fromUtf8(pretty(split)), QString::fromUtf8(pretty(whole)));
            QFAIL("stream translation depends on where the bytes were split");
        }
    }
}

// The golden files (anthropic/prompt_cached, cache_counted_once; openai/prompt_cached) prove it
// on whole answers and streams; these are Anthropic's counts alone, event by event: the cache's
// on top of input_tokens, and a later event's counts replacing an earlier one's rather than
// adding to them.
void TestAdapters::anthropicCacheCountsAreAddedOnce_data()
{
    QTest::addColumn<QStringList>("usages"); // one `usage` object per event, in order
    QTest::addColumn<qint64>("prompt");
    QTest::addColumn<qint64>("cacheRead");
    QTest::addColumn<qint64>("cacheWrite");
    QTest::newRow("reads and writes on top of input_tokens")
        << QStringList{uR"({"input_tokens":6,"cache_creation_input_tokens":1000,)"
                       uR"("cache_read_input_tokens":2000,"output_tokens":50})"_s}
        << qint64(3006) << qint64(2000) << qint64(1000);
    QTest::newRow("no cache counts") << QStringList{uR"({"input_tokens":6,"output_tokens":50})"_s}
                                     << qint64(6) << qint64(-1) << qint64(-1);
    QTest::newRow("message_delta repeats every count")
        << QStringList{uR"({"input_tokens":6,"cache_creation_input_tokens":1000,)"
                       uR"("cache_read_input_tokens":2000,"output_tokens":1})"_s,
                       uR"({"input_tokens":6,"cache_creation_input_tokens":1000,)"
                       uR"("cache_read_input_tokens":2000,"output_tokens":50})"_s}
        << qint64(3006) << qint64(2000) << qint64(1000);
    QTest::newRow("message_delta counts the output alone")
        << QStringList{uR"({"input_tokens":6,"cache_creation_input_tokens":1000,)"
                       uR"("cache_read_input_tokens":2000,"output_tokens":1})"_s,
                       uR"({"output_tokens":50})"_s}
        << qint64(3006) << qint64(2000) << qint64(1000);
    QTest::newRow("a later cache count without input_tokens")
        << QStringList{uR"({"input_tokens":6,"cache_read_input_tokens":2000})"_s,
                       uR"({"cache_read_input_tokens":2500,"output_tokens":50})"_s}
        << qint64(2506) << qint64(2500) << qint64(-1);
    QTest::newRow("a later input_tokens without cache counts")
        << QStringList{uR"({"input_tokens":6,"cache_read_input_tokens":2000})"_s,
                       uR"({"input_tokens":6,"output_tokens":50})"_s}
        << qint64(2006) << qint64(2000) << qint64(-1);
}

void TestAdapters::anthropicCacheCountsAreAddedOnce()
{
    QFETCH(QStringList, usages);
    QFETCH(qint64, prompt);
    QFETCH(qint64, cacheRead);
    QFETCH(qint64, cacheWrite);
    Usage usage;
    for (const QString &text : usages) {
        const QJsonObject object = QJsonDocument::fromJson(text.toUtf8()).object();
        QVERIFY2(!object.isEmpty(), qPrintable(text));
        usage = upstream::adapters::usageFromAnthropic(object, usage);
    }
    QCOMPARE(usage.promptTokens, prompt);
    QCOMPARE(usage.cachedPromptTokens, cacheRead);
    QCOMPARE(usage.cacheWritePromptTokens, cacheWrite);
}

void TestAdapters::ingressRequests_data()
{
    QTest::addColumn<QString>("prefix");
    for (const GoldenCase &golden : casesWith(u".request.in.json"_s, true))
        QTest::newRow(rowName(golden).constData()) << golden.prefix;
}

void TestAdapters::ingressRequests()
{
    QFETCH(QString, prefix);
    const auto converted =
        ingress::chatRequestFromMessages(readFile(prefix + u".request.in.json"_s));
    QJsonObject actual;
    if (const auto *error = std::get_if<protocol::ApiError>(&converted)) {
        actual.insert(u"refused"_s, errorJson(*error));
    } else {
        const auto &request = std::get<ingress::MessagesChatRequest>(converted);
        actual.insert(u"chat_request"_s, dataValue(request.chatBody));
        if (!request.ignoredFields.isEmpty())
            actual.insert(u"ignored_fields"_s, QJsonArray::fromStringList(request.ignoredFields));
        // Only an anthropic provider may then serve it: the gateway refuses it for any other.
        if (request.untranslatable)
            actual.insert(u"anthropic_providers_only"_s, errorJson(*request.untranslatable));
    }
    compareWithGolden(prefix + u".request.out.json"_s, actual);
}

void TestAdapters::ingressAnswers_data()
{
    QTest::addColumn<QString>("prefix");
    for (const GoldenCase &golden : casesWith(u".answer.in.json"_s, true))
        QTest::newRow(rowName(golden).constData()) << golden.prefix;
}

void TestAdapters::ingressAnswers()
{
    QFETCH(QString, prefix);
    const auto converted = ingress::messageFromCompletion(readFile(prefix + u".answer.in.json"_s));
    const QJsonObject actual =
        std::holds_alternative<QByteArray>(converted)
            ? QJsonObject{{u"message"_s, dataValue(std::get<QByteArray>(converted))}}
            : QJsonObject{{u"refused"_s, errorJson(std::get<protocol::ApiError>(converted))}};
    compareWithGolden(prefix + u".answer.out.json"_s, actual);
}

void TestAdapters::ingressStreams_data()
{
    QTest::addColumn<QString>("prefix");
    for (const GoldenCase &golden : casesWith(u".stream.in.sse"_s, true))
        QTest::newRow(rowName(golden).constData()) << golden.prefix;
}

void TestAdapters::ingressStreams()
{
    QFETCH(QString, prefix);
    const QByteArray wire = readFile(prefix + u".stream.in.sse"_s);
    const QJsonObject whole = translateIngressStream(wire, {});
    compareWithGolden(prefix + u".stream.out.json"_s, whole);
    for (const QList<qsizetype> &cuts : testing::streamSplits(wire)) {
        const QJsonObject split = translateIngressStream(wire, cuts);
        if (split != whole) {
            QCOMPARE(QString::fromUtf8(pretty(split)), QString::fromUtf8(pretty(whole)));
            QFAIL("stream translation depends on where the bytes were split");
        }
    }
}

void TestAdapters::ingressErrorShapes_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("anthropicType");
    QTest::newRow("bad request") << 400 << u"invalid_request_error"_s;
    QTest::newRow("unprocessable") << 422 << u"invalid_request_error"_s;
    QTest::newRow("unauthorised") << 401 << u"authentication_error"_s;
    QTest::newRow("forbidden") << 403 << u"permission_error"_s;
    QTest::newRow("unknown model") << 404 << u"not_found_error"_s;
    QTest::newRow("too large") << 413 << u"request_too_large"_s;
    QTest::newRow("rate limited") << 429 << u"rate_limit_error"_s;
    QTest::newRow("loop refused") << 508 << u"api_error"_s;
    QTest::newRow("bad gateway") << 502 << u"api_error"_s;
    QTest::newRow("unavailable") << 503 << u"overloaded_error"_s;
    QTest::newRow("gateway timeout") << 504 << u"api_error"_s;
}

void TestAdapters::ingressErrorShapes()
{
    QFETCH(int, status);
    QFETCH(QString, anthropicType);
    const protocol::ApiError error{status, u"What went wrong."_s, u"upstream_error"_s, {}, {}, {}};
    QCOMPARE(QString::fromUtf8(ingress::anthropicErrorJson(error)),
             uR"({"error":{"message":"What went wrong.","type":"%1"},"type":"error"})"_s.arg(
                 anthropicType));
}

void TestAdapters::ingressStreamFailure()
{
    ingress::MessagesStreamWriter writer;
    SseEvent chunk;
    chunk.data = R"({"id":"chatcmpl-1","model":"m","choices":[{"index":0,"delta":)"
                 R"({"role":"assistant","content":"Hel"},"finish_reason":null}]})";
    QCOMPARE(writer.feed(chunk).size(), 3); // message_start, content_block_start, delta
    const QList<SseEvent> failure = writer.fail(
        protocol::ApiError{502, u"Provider `x` broke off the stream."_s, {}, {}, {}, {}});
    QCOMPARE(failure.size(), 1);
    QCOMPARE(failure.first().event, "error"_ba);
    QCOMPARE(failure.first().data,
             R"({"error":{"message":"Provider `x` broke off the stream.","type":"api_error"},)"
             R"("type":"error"})"_ba);
    QVERIFY(writer.feed(chunk).isEmpty());
    QVERIFY(!writer.completed());
}

void TestAdapters::openAiPassThroughKeepsTheClientsBytes()
{
    // Spacing and key order are the client's: only the model's token is touched, and only when
    // the provider knows the model by another name.
    const QByteArray body = "{ \"model\" : \"fast\",\n  \"messages\":[{\"role\":\"user\","
                            "\"content\":\"hi\"}], \"x_vendor_knob\": {\"a\": 1} }";
    const GoldenProvider &golden = provider(goldenRoot() + u"/openai"_s);

    AdapterRequest same = adapterRequest(golden, body);
    same.upstreamModel = same.bodyModel;
    const auto unchanged = golden.adapter->buildRequest(same);
    const PreparedRequest &asSent = std::get<PreparedRequest>(unchanged);
    QCOMPARE(asSent.request.body, body);
    QVERIFY(asSent.request.body.isSharedWith(body)); // not even copied

    const auto renamed = golden.adapter->buildRequest(adapterRequest(golden, body));
    QCOMPARE(std::get<PreparedRequest>(renamed).request.body,
             "{ \"model\" : \"local/qwen2.5-7b\",\n  \"messages\":[{\"role\":\"user\","
             "\"content\":\"hi\"}], \"x_vendor_knob\": {\"a\": 1} }"_ba);

    const QByteArray answer = R"({"id":"x","choices":[]})";
    const AnswerTranslation translation = golden.adapter->translateAnswer({}, answer);
    QVERIFY(translation.openAiJson.isSharedWith(answer));
}

// Anthropic's own protocol to an anthropic provider: the request a coding agent sends (cache
// markers, thinking and its signatures, fields newer than this gateway) as the provider gets it.
void TestAdapters::anthropicPassThroughKeepsTheClientsBytes()
{
    const QByteArray body =
        readFile(goldenRoot() + u"/anthropic_ingress/coding_agent.request.in.json"_s);
    const GoldenProvider &golden = provider(goldenRoot() + u"/anthropic"_s);
    AdapterRequest request = adapterRequest(golden, body);
    request.operation = protocol::Operation::Messages;
    request.clientProtocolHeaders = {
        {"anthropic-version", "2024-01-01"},
        {"anthropic-beta", "interleaved-thinking-2025-05-14, prompt-caching-2024-07-31"}};

    const auto built = golden.adapter->buildRequest(request);
    const PreparedRequest &prepared = std::get<PreparedRequest>(built);
    QByteArray expected = body;
    expected.replace("\"claude-fast\"", "\"claude-3-5-haiku-20241022\"");
    QCOMPARE(prepared.request.body, expected);
    QCOMPARE(prepared.request.url.toString(), u"https://api.anthropic.com/v1/messages"_s);
    QCOMPARE(headerOf(prepared.request.headers, "anthropic-version"), "2024-01-01"_ba);
    // The client's features first, the provider's after, each once.
    QCOMPARE(headerOf(prepared.request.headers, "anthropic-beta"),
             "interleaved-thinking-2025-05-14,prompt-caching-2024-07-31"_ba);
    QCOMPARE(headerOf(prepared.request.headers, "x-api-key"), "sk-test-anthropic_key"_ba);
    QCOMPARE(prepared.shape.operation, protocol::Operation::Messages);

    // The model it already has: the client's bytes themselves, not a copy.
    request.upstreamModel = request.bodyModel;
    const auto same = golden.adapter->buildRequest(request);
    QVERIFY(std::get<PreparedRequest>(same).request.body.isSharedWith(body));

    // A token count goes to the same API's counting path.
    request.operation = protocol::Operation::CountTokens;
    const auto count = golden.adapter->buildRequest(request);
    QCOMPARE(std::get<PreparedRequest>(count).request.url.toString(),
             u"https://api.anthropic.com/v1/messages/count_tokens"_s);
}

void TestAdapters::anthropicPassThroughTakesTheProvidersVersionWhenTheClientSendsNone()
{
    const GoldenProvider &golden = provider(goldenRoot() + u"/anthropic"_s);
    AdapterRequest request = adapterRequest(
        golden,
        R"({"model":"claude-fast","max_tokens":5,"messages":[{"role":"user","content":"hi"}]})");
    request.operation = protocol::Operation::Messages;
    const auto built = golden.adapter->buildRequest(request);
    const PreparedRequest &prepared = std::get<PreparedRequest>(built);
    QCOMPARE(headerOf(prepared.request.headers, "anthropic-version"), "2023-06-01"_ba);
    QCOMPARE(headerOf(prepared.request.headers, "anthropic-beta"), "prompt-caching-2024-07-31"_ba);
}

void TestAdapters::anthropicPassThroughAnswerKeepsItsBytesAndCacheCounts()
{
    const GoldenProvider &golden = provider(goldenRoot() + u"/anthropic"_s);
    AnswerShape shape;
    shape.operation = protocol::Operation::Messages;
    const QByteArray answer =
        R"({"id":"msg_1","type":"message","content":[{"type":"text","text":"ok"}],)"
        R"("usage":{"input_tokens":12,"cache_creation_input_tokens":300,)"
        R"("cache_read_input_tokens":4000,"output_tokens":9}})";
    const AnswerTranslation translation = golden.adapter->translateAnswer(shape, answer);
    QCOMPARE(translation.kind, AnswerTranslation::Kind::Ok);
    QVERIFY(translation.openAiJson.isSharedWith(answer));
    // Anthropic counts cached input on top of input_tokens: the prompt is all three, once.
    QCOMPARE(translation.usage.promptTokens, 4312);
    QCOMPARE(translation.usage.cachedPromptTokens, 4000);
    QCOMPARE(translation.usage.cacheWritePromptTokens, 300);
    QCOMPARE(translation.usage.completionTokens, 9);

    // A token count's input_tokens is its answer, not usage anyone pays for.
    shape.operation = protocol::Operation::CountTokens;
    const AnswerTranslation counted =
        golden.adapter->translateAnswer(shape, R"({"input_tokens":1234})");
    QCOMPARE(counted.kind, AnswerTranslation::Kind::Ok);
    QVERIFY(!counted.usage.isKnown());

    const AnswerTranslation garbled = golden.adapter->translateAnswer(shape, "<html>");
    QCOMPARE(garbled.kind, AnswerTranslation::Kind::Unusable);
}

void TestAdapters::anthropicPassThroughRelaysEveryEvent()
{
    const QByteArray wire =
        readFile(goldenRoot() + u"/anthropic_passthrough/thinking.events.sse"_s);
    const GoldenProvider &golden = provider(goldenRoot() + u"/anthropic"_s);
    AnswerShape shape;
    shape.operation = protocol::Operation::Messages;
    shape.clientStreams = shape.upstreamStreams = true;

    QJsonArray sent;
    parseInPieces(wire, {}, [&](const SseEvent &event) { sent.append(eventJson(event)); });
    QCOMPARE(sent.size(), 11);
    for (const QList<qsizetype> &cuts : testing::streamSplits(wire)) {
        const QJsonObject relayed = translateStream(*golden.adapter, shape, wire, cuts);
        // Every event as the provider wrote it, ping, thinking and signature deltas included.
        QCOMPARE(relayed.value(u"events"_s).toArray(), sent);
        QVERIFY(relayed.value(u"completed"_s).toBool());
        QVERIFY(!relayed.contains(u"failure"_s));
    }
    std::unique_ptr<upstream::adapters::StreamTranslator> translator =
        golden.adapter->startStream(shape);
    parseInPieces(wire, {}, [&](const SseEvent &event) { translator->feed(event); });
    QCOMPARE(translator->usage().promptTokens, 4012);
    QCOMPARE(translator->usage().cachedPromptTokens, 4000);
    QCOMPARE(translator->usage().completionTokens, 9);

    // Cut before message_stop: not whole.
    const QByteArray cut = wire.left(wire.indexOf("event: message_stop"));
    const QJsonObject partial = translateStream(*golden.adapter, shape, cut, {});
    QVERIFY(!partial.value(u"completed"_s).toBool());
}

void TestAdapters::anthropicPassThroughErrorEventIsTheProvidersFailure()
{
    const GoldenProvider &golden = provider(goldenRoot() + u"/anthropic"_s);
    AnswerShape shape;
    shape.operation = protocol::Operation::Messages;
    shape.clientStreams = shape.upstreamStreams = true;
    const QByteArray wire =
        "event: error\n"
        R"(data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"
        "\n\n";
    const QJsonObject relayed = translateStream(*golden.adapter, shape, wire, {});
    QCOMPARE(relayed.value(u"events"_s).toArray().size(), 0);
    const QJsonObject failure = relayed.value(u"failure"_s).toObject();
    QCOMPARE(failure.value(u"kind"_s).toString(), u"provider_error"_s);
    QCOMPARE(failure.value(u"error"_s)
                 .toObject()
                 .value(u"body"_s)
                 .toObject()
                 .value(u"error"_s)
                 .toObject()
                 .value(u"message"_s)
                 .toString(),
             u"Provider `claude` reported an error in the stream: Overloaded (overloaded_error)"_s);

    const QJsonObject garbled = translateStream(*golden.adapter, shape, "data: nope\n\n", {});
    QCOMPARE(garbled.value(u"failure"_s).toObject().value(u"kind"_s).toString(), u"unusable"_s);
}

void TestAdapters::adapterForEveryKind_data()
{
    QTest::addColumn<config::ProviderKind>("kind");
    QTest::addColumn<QString>("url");
    QTest::addColumn<bool>("canStream");
    QTest::newRow("openai") << config::ProviderKind::OpenAi
                            << u"http://127.0.0.1:8001/v1/chat/completions"_s << true;
    QTest::newRow("simulated") << config::ProviderKind::Simulated
                               << u"http://127.0.0.1:8001/v1/chat/completions"_s << true;
    QTest::newRow("anthropic") << config::ProviderKind::Anthropic
                               << u"http://127.0.0.1:8001/v1/messages"_s << true;
    QTest::newRow("mapped without stream")
        << config::ProviderKind::Mapped << u"http://127.0.0.1:8001/v1/"_s << false;
}

void TestAdapters::adapterForEveryKind()
{
    QFETCH(config::ProviderKind, kind);
    QFETCH(QString, url);
    QFETCH(bool, canStream);
    config::ProviderConfig provider;
    provider.id = u"p"_s;
    provider.kind = kind;
    provider.baseUrl = QUrl(u"http://127.0.0.1:8001/v1/"_s);
    provider.adapter.mapping.request = std::get<json::RequestTemplate>(
        json::RequestTemplate::compile(QJsonObject{{u"prompt"_s, u"$.messages[-1].content"_s}}));
    const auto adapter = upstream::adapters::adapterFor(provider);
    QCOMPARE(adapter->canStream(), canStream);
    AdapterRequest request;
    request.openAiBody = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
    request.bodyModel = request.upstreamModel = u"m"_s;
    const auto prepared = adapter->buildRequest(request);
    QCOMPARE(std::get<PreparedRequest>(prepared).request.url.toString(), url);
}

namespace {

// A provider from YAML through the real loader; the environment holds every variable, its value
// "secret-" and the name in lower case.
config::ProviderConfig loadedProvider(const QByteArray &yaml)
{
    const auto environment = [](const QString &name) -> std::optional<QByteArray> {
        return "secret-" + name.toLower().toUtf8();
    };
    config::LoadResult loaded = config::loadConfigText(yaml, u"test.yaml"_s, environment);
    for (const config::ConfigError &error : std::as_const(loaded.errors))
        qWarning().noquote() << error.toString();
    return loaded.ok() ? loaded.config->providers.first() : config::ProviderConfig();
}

QByteArray headerOf(const upstream::HeaderList &headers, QByteArrayView name)
{
    for (const auto &[key, value] : headers) {
        if (key.compare(name, Qt::CaseInsensitive) == 0)
            return value;
    }
    return {};
}

} // namespace

void TestAdapters::callsTheConfiguredEndpointForEveryKind_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<QString>("model");
    QTest::addColumn<bool>("stream");
    QTest::addColumn<QByteArray>("url");
    QTest::addColumn<QByteArray>("keyHeader");
    QTest::addColumn<QByteArray>("keyValue");

    // Every kind takes the same keys; each row adds one header and one query parameter.
    const QByteArray callKeys = "    api_key_env: PROVIDER_KEY\n"
                                "    headers: {X-Team: support, X-Secret: {env: TEAM_SECRET}}\n"
                                "    query: {tenant: \"a b+c\"}\n"
                                "    proxy: http://proxy.example.test:3128\n";
    QTest::newRow("openai")
        << "providers:\n  - id: p\n    kind: openai\n    base_url: https://llm.example.test/v1/\n"
           "    models: [m]\n" +
               callKeys
        << u"m"_s << false << "https://llm.example.test/v1/chat/completions?tenant=a%20b%2Bc"_ba
        << "Authorization"_ba
        << "Bearer secret-provider_key"_ba;
    QTest::newRow("anthropic")
        << "providers:\n  - id: p\n    kind: anthropic\n    base_url: https://llm.example.test/v1\n"
           "    models: [m]\n" +
               callKeys
        << u"m"_s << false << "https://llm.example.test/v1/messages?tenant=a%20b%2Bc"_ba
        << "x-api-key"_ba
        << "secret-provider_key"_ba;
    const QByteArray mapped = "providers:\n  - id: p\n    kind: mapped\n"
                              "    base_url: http://agent.example.test:9100/agents?v=2\n"
                              "    models: [m]\n    api_key_header: X-Agent-Key\n" +
                              callKeys +
                              "    mapping:\n"
                              "      path: /generate\n"
                              "      request: {prompt: $.messages}\n"
                              "      answer: $.text\n"
                              "      stream: {path: /generate/stream, delta: $.delta}\n";
    QTest::newRow("mapped")
        << mapped << u"m"_s << false
        << "http://agent.example.test:9100/agents/generate?v=2&tenant=a%20b%2Bc"_ba
        << "X-Agent-Key"_ba
        << "secret-provider_key"_ba;
    QTest::newRow("mapped, streamed")
        << mapped << u"m"_s << true
        << "http://agent.example.test:9100/agents/generate/stream?v=2&tenant=a%20b%2Bc"_ba
        << "X-Agent-Key"_ba
        << "secret-provider_key"_ba;
    // Azure OpenAI: one provider, a deployment per model, named by the model's upstream name.
    const QByteArray azure = "providers:\n  - id: azure\n    kind: openai\n"
                             "    base_url: https://myres.openai.azure.com/openai/deployments/"
                             "{model}\n"
                             "    models: [{name: m, upstream: gpt4o-prod}, {name: mini, upstream: "
                             "gpt4o-mini-prod}]\n"
                             "    api_key_header: api-key\n" +
                             callKeys;
    QTest::newRow("azure, first deployment")
        << azure << u"m"_s << false
        << "https://myres.openai.azure.com/openai/deployments/gpt4o-prod/chat/"
           "completions?tenant=a%20b%2Bc"_ba
        << "api-key"_ba
        << "secret-provider_key"_ba;
    QTest::newRow("azure, second deployment")
        << azure << u"mini"_s << true
        << "https://myres.openai.azure.com/openai/deployments/gpt4o-mini-prod/chat/"
           "completions?tenant=a%20b%2Bc"_ba
        << "api-key"_ba
        << "secret-provider_key"_ba;
}

void TestAdapters::callsTheConfiguredEndpointForEveryKind()
{
    QFETCH(QByteArray, yaml);
    QFETCH(QString, model);
    QFETCH(bool, stream);
    QFETCH(QByteArray, url);
    QFETCH(QByteArray, keyHeader);
    QFETCH(QByteArray, keyValue);
    const config::ProviderConfig provider = loadedProvider(yaml);
    QVERIFY(!provider.id.isEmpty());
    const auto adapter = upstream::adapters::adapterFor(provider);

    AdapterRequest request;
    request.openAiBody = R"({"model":")" + model.toUtf8() + R"(","stream":)" +
                         (stream ? "true" : "false") +
                         R"(,"messages":[{"role":"user","content":"hi"}]})";
    request.bodyModel = model;
    request.upstreamModel = provider.upstreamModelFor(model);
    request.stream = stream;
    const auto prepared = adapter->buildRequest(request);
    QVERIFY(std::holds_alternative<PreparedRequest>(prepared));
    const upstream::UpstreamRequest &call = std::get<PreparedRequest>(prepared).request;

    QCOMPARE(call.url.toEncoded(), url);
    QCOMPARE(headerOf(call.headers, keyHeader), keyValue);
    QCOMPARE(headerOf(call.headers, "X-Team"), "support"_ba);
    QCOMPARE(headerOf(call.headers, "X-Secret"), "secret-team_secret"_ba);
    QCOMPARE(call.proxy, QUrl(u"http://proxy.example.test:3128"_s));
    QVERIFY(call.caFile.isEmpty());
    // The key goes out once, in its own header only.
    int keyCopies = 0;
    for (const auto &[name, value] : call.headers)
        keyCopies += value.contains("secret-provider_key") ? 1 : 0;
    QCOMPARE(keyCopies, 1);
}

void TestAdapters::providerUrlEncodesWhatItInserts_data()
{
    QTest::addColumn<QString>("baseUrl");
    QTest::addColumn<QString>("operationPath");
    QTest::addColumn<QString>("model");
    QTest::addColumn<QByteArray>("url");

    QTest::newRow("a slash in the model stays inside its path segment")
        << u"https://h.example.test/deployments/{model}"_s << u"chat/completions"_s
        << u"org/model v2"_s
        << "https://h.example.test/deployments/org%2Fmodel%20v2/chat/completions"_ba;
    QTest::newRow("the placeholder in the middle of a segment")
        << u"https://h.example.test/models/{model}:predict"_s << QString() << u"gemma"_s
        << "https://h.example.test/models/gemma:predict"_ba;
    QTest::newRow("no placeholder: the model is not in the URL")
        << u"http://127.0.0.1:8001/v1"_s << u"embeddings"_s << u"m"_s
        << "http://127.0.0.1:8001/v1/embeddings"_ba;
    QTest::newRow("trailing slashes of the base are not doubled")
        << u"http://127.0.0.1:8001/v1//"_s << u"responses"_s << u"m"_s
        << "http://127.0.0.1:8001/v1/responses"_ba;
    QTest::newRow("a mapped path keeps its colon, encodes its percent")
        << u"http://127.0.0.1:8001"_s << u"/v1/x:generate%"_s << u"m"_s
        << "http://127.0.0.1:8001/v1/x:generate%25"_ba;
}

void TestAdapters::providerUrlEncodesWhatItInserts()
{
    QFETCH(QString, baseUrl);
    QFETCH(QString, operationPath);
    QFETCH(QString, model);
    QFETCH(QByteArray, url);
    config::ProviderConfig provider;
    provider.baseUrl = QUrl(baseUrl);
    QCOMPARE(upstream::adapters::providerUrl(provider, operationPath, model).toEncoded(), url);
}

void TestAdapters::displayUrlHidesSecretQueryValues()
{
    const config::ProviderConfig provider =
        loadedProvider("providers:\n  - id: p\n    kind: openai\n"
                       "    base_url: https://user:pass@llm.example.test/v1\n"
                       "    models: [m]\n"
                       "    query: {api-version: \"2024-10-21\", key: {env: QUERY_KEY}}\n");
    const QUrl url = upstream::adapters::providerUrl(provider, u"chat/completions", u"m"_s);
    QCOMPARE(url.toEncoded(), "https://user:pass@llm.example.test/v1/chat/"
                              "completions?api-version=2024-10-21&key=secret-query_key"_ba);

    const QString shown = upstream::adapters::displayUrl(provider, url);

    QCOMPARE(shown,
             u"https://llm.example.test/v1/chat/completions?api-version=2024-10-21&key=REDACTED"_s);
}

void TestAdapters::providerUrlsAreBuiltOnceAndFollowEveryChange()
{
    using upstream::adapters::displayUrl;
    using upstream::adapters::providerUrl;
    config::ProviderConfig provider;
    provider.baseUrl = QUrl(u"http://a.example.test/v1"_s);

    // Asked again, the same URL comes back without being built again.
    const QUrl first = providerUrl(provider, u"chat/completions", u"m"_s);
    const QUrl again = providerUrl(provider, u"chat/completions", u"m"_s);
    QCOMPARE(again.toEncoded(), "http://a.example.test/v1/chat/completions"_ba);
    QVERIFY(upstream::sameUrlData(first, again));

    // Every part it is built from is part of what it is found by: a config applied since (a new
    // snapshot, its own copy of the provider), another model or operation, another query value.
    config::ProviderConfig applied = provider;
    applied.baseUrl = QUrl(u"http://b.example.test/v2/{model}"_s);
    QCOMPARE(providerUrl(applied, u"chat/completions", u"m"_s).toEncoded(),
             "http://b.example.test/v2/m/chat/completions"_ba);
    QCOMPARE(providerUrl(applied, u"chat/completions", u"n"_s).toEncoded(),
             "http://b.example.test/v2/n/chat/completions"_ba);
    QCOMPARE(providerUrl(applied, u"embeddings", u"n"_s).toEncoded(),
             "http://b.example.test/v2/n/embeddings"_ba);
    applied.query = {{"sig", "one", QString()}};
    QCOMPARE(providerUrl(applied, u"embeddings", u"n"_s).toEncoded(),
             "http://b.example.test/v2/n/embeddings?sig=one"_ba);
    applied.query = {{"sig", "two", QString()}};
    const QUrl withSignature = providerUrl(applied, u"embeddings", u"n"_s);
    QCOMPARE(withSignature.toEncoded(), "http://b.example.test/v2/n/embeddings?sig=two"_ba);
    QCOMPARE(displayUrl(applied, withSignature),
             u"http://b.example.test/v2/n/embeddings?sig=two"_s);

    // The same URL from a value that came from the environment is shown without it, though it
    // was shown in full a moment ago.
    applied.query = {{"sig", "two", u"SIG"_s}};
    const QUrl secret = providerUrl(applied, u"embeddings", u"n"_s);
    QCOMPARE(secret.toEncoded(), withSignature.toEncoded());
    QCOMPARE(displayUrl(applied, secret), u"http://b.example.test/v2/n/embeddings?sig=REDACTED"_s);
    QCOMPARE(displayUrl(applied, secret), u"http://b.example.test/v2/n/embeddings?sig=REDACTED"_s);
    // A URL built elsewhere is shown all the same.
    QCOMPARE(displayUrl(applied, QUrl(u"http://c.example.test/x?sig=two"_s)),
             u"http://c.example.test/x?sig=REDACTED"_s);

    // More URLs than are kept: the first, asked again after all of them, is built again, right.
    for (int model = 0; model < 40; ++model)
        QCOMPARE(providerUrl(provider, u"chat/completions", QString::number(model)).toEncoded(),
                 "http://a.example.test/v1/chat/completions"_ba);
    const QUrl rebuilt = providerUrl(provider, u"chat/completions", u"m"_s);
    QCOMPARE(rebuilt.toEncoded(), "http://a.example.test/v1/chat/completions"_ba);
    QVERIFY(!upstream::sameUrlData(first, rebuilt));
}

void TestAdapters::withoutSecretsHidesWhatTheProviderRepeats()
{
    const config::ProviderConfig provider =
        loadedProvider("providers:\n  - id: p\n    kind: openai\n"
                       "    base_url: https://llm.example.test/v1\n"
                       "    api_key_env: KEY\n"
                       "    models: [m]\n"
                       "    headers: {X-Team: support, X-Token: {env: TOKEN}}\n"
                       "    query: {sig: {env: SIG}}\n");
    QCOMPARE(provider.apiKey, "secret-key"_ba);

    const QString repeated = upstream::adapters::withoutSecrets(
        provider, u"bad key: Bearer secret-key; X-Token: secret-token; X-Team: support; "
                  u"url: /v1/chat/completions?sig=secret-sig"_s);

    QCOMPARE(repeated, u"bad key: Bearer REDACTED; X-Token: REDACTED; X-Team: support; "
                       u"url: /v1/chat/completions?sig=REDACTED"_s);
}

void TestAdapters::providerHttpErrorClassifies_data()
{
    QTest::addColumn<int>("upstreamStatus");
    QTest::addColumn<int>("clientStatus");
    QTest::addColumn<QString>("type");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QByteArray>("retryAfter");
    QTest::newRow("bad request") << 400 << 400 << u"invalid_request_error"_s
                                 << u"upstream_rejected"_s
                                 << u"Provider `p` rejected the request (HTTP 400): why"_s
                                 << QByteArray();
    QTest::newRow("unauthorised") << 401 << 401 << u"authentication_error"_s
                                  << u"upstream_rejected"_s
                                  << u"Provider `p` rejected the request (HTTP 401): why"_s
                                  << QByteArray();
    QTest::newRow("rate limited") << 429 << 429 << u"rate_limit_error"_s
                                  << u"upstream_rate_limited"_s
                                  << u"Provider `p` is rate limiting requests: why"_s << "7"_ba;
    QTest::newRow("server error") << 500 << 502 << u"upstream_error"_s << u"upstream_error"_s
                                  << u"Provider `p` failed with HTTP 500: why"_s << QByteArray();
    QTest::newRow("unavailable") << 503 << 503 << u"upstream_error"_s << u"upstream_error"_s
                                 << u"Provider `p` failed with HTTP 503: why"_s << "7"_ba;
    QTest::newRow("anthropic overloaded")
        << 529 << 503 << u"upstream_error"_s << u"upstream_error"_s
        << u"Provider `p` failed with HTTP 529: why"_s << "7"_ba;
}

void TestAdapters::providerHttpErrorClassifies()
{
    QFETCH(int, upstreamStatus);
    QFETCH(int, clientStatus);
    QFETCH(QString, type);
    QFETCH(QString, code);
    QFETCH(QString, message);
    QFETCH(QByteArray, retryAfter);
    const protocol::ApiError error =
        upstream::adapters::providerHttpError(u"p"_s, upstreamStatus, u"why"_s, "7");
    QCOMPARE(error.status, clientStatus);
    QCOMPARE(error.type, type);
    QCOMPARE(error.code, code);
    QCOMPARE(error.message, message);
    QCOMPARE(error.retryAfter, retryAfter);
}

void TestAdapters::jsonPathParses_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<int>("steps");
    QTest::addColumn<bool>("picksOne");
    QTest::newRow("document") << u"$"_s << 0 << true;
    QTest::newRow("member") << u"$.reply"_s << 1 << true;
    QTest::newRow("nested with index") << u"$.choices[0].message.content"_s << 4 << true;
    QTest::newRow("from the end") << u"$.messages[-1]"_s << 2 << true;
    QTest::newRow("quoted name") << u"$[\"odd key\"].x"_s << 2 << true;
    QTest::newRow("element") << u"@.role"_s << 1 << true;
    QTest::newRow("every") << u"$.messages[*].content"_s << 3 << false;
}

void TestAdapters::jsonPathParses()
{
    QFETCH(QString, text);
    QFETCH(int, steps);
    QFETCH(bool, picksOne);
    const auto parsed = json::JsonPath::parse(text);
    QVERIFY2(std::holds_alternative<json::JsonPath>(parsed),
             qPrintable(std::get_if<QString>(&parsed) ? *std::get_if<QString>(&parsed) : text));
    const auto &path = std::get<json::JsonPath>(parsed);
    QCOMPARE(path.steps().size(), steps);
    QCOMPARE(path.picksOne(), picksOne);
    QCOMPARE(path.text(), text);
}

void TestAdapters::jsonPathRejects_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("no root") << u"reply"_s
                             << u"a path must start with `$` (the document) or `@` (the `$map` "
                                u"element), got `r`"_s;
    QTest::newRow("empty") << QString()
                           << u"a path must start with `$` (the document) or `@` (the `$map` "
                              u"element)"_s;
    QTest::newRow("double dot") << u"$..reply"_s
                                << u"expected a member name after `.` at character 3 (letters, "
                                   u"digits, `_`, `-`; use [\"...\"] for other names)"_s;
    QTest::newRow("unclosed bracket") << u"$.a[0"_s << u"expected `]` at character 6"_s;
    QTest::newRow("bad index") << u"$.a[x]"_s
                               << u"expected an index, `*` or a quoted name in `[...]` at "
                                  u"character 5"_s;
    QTest::newRow("stray character") << u"$.a b"_s
                                     << u"unexpected ` ` at character 4; expected `.name` or "
                                        u"`[...]`"_s;
    QTest::newRow("default outside a template")
        << u"$.a|1"_s
        << u"unexpected `|` at character 4; a path ends at its last name or "
           u"bracket"_s;
}

void TestAdapters::jsonPathRejects()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    const auto parsed = json::JsonPath::parse(text);
    QVERIFY(std::holds_alternative<QString>(parsed));
    QCOMPARE(std::get<QString>(parsed), message);
}

void TestAdapters::jsonPathFinds_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QByteArray>("found"); // JSON of [value], or "none"
    QTest::newRow("member") << u"$.reply"_s << R"(["hello"])"_ba;
    QTest::newRow("nested") << u"$.usage.input"_s << "[12]"_ba;
    QTest::newRow("index") << u"$.items[1].name"_s << R"(["b"])"_ba;
    QTest::newRow("from the end") << u"$.items[-1].name"_s << R"(["c"])"_ba;
    QTest::newRow("every") << u"$.items[*].name"_s << R"([["a","b","c"]])"_ba;
    QTest::newRow("every, some missing") << u"$.items[*].size"_s << "[[2]]"_ba;
    QTest::newRow("null is found") << u"$.nothing"_s << "[null]"_ba;
    QTest::newRow("missing member") << u"$.replies"_s << "none"_ba;
    QTest::newRow("index out of range") << u"$.items[3]"_s << "none"_ba;
    QTest::newRow("member of a list") << u"$.items.name"_s << "none"_ba;
    QTest::newRow("whole document") << u"$.odd[\"a.b\"]"_s << "[true]"_ba;
}

void TestAdapters::jsonPathFinds()
{
    QFETCH(QString, path);
    QFETCH(QByteArray, found);
    const QJsonObject document =
        QJsonDocument::fromJson(
            R"({"reply":"hello","usage":{"input":12},"nothing":null,"odd":{"a.b":true},)"
            R"("items":[{"name":"a"},{"name":"b","size":2},{"name":"c"}]})")
            .object();
    const auto value = std::get<json::JsonPath>(json::JsonPath::parse(path)).find(document);
    if (found == "none") {
        QVERIFY(!value);
        return;
    }
    QVERIFY(value);
    QCOMPARE(QJsonDocument(QJsonArray{*value}).toJson(QJsonDocument::Compact), found);
}

void TestAdapters::templateRenders_data()
{
    QTest::addColumn<QByteArray>("templateJson");
    QTest::addColumn<QByteArray>("rendered");
    QTest::newRow("literals stay") << R"({"a":1,"b":[true,null],"c":"text"})"_ba
                                   << R"({"a":1,"b":[true,null],"c":"text"})"_ba;
    QTest::newRow("reference") << R"({"m":"$.model","t":"$.temperature"})"_ba
                               << R"({"m":"agent-v2","t":0.2})"_ba;
    QTest::newRow("missing reference is left out") << R"({"seed":"$.seed","list":["$.seed",1]})"_ba
                                                   << R"({"list":[1]})"_ba;
    QTest::newRow("defaults keep their JSON type")
        << R"({"n":"$.max_tokens|256","s":"$.user|anonymous","q":"$.user|\"7\""})"_ba
        << R"({"n":256,"q":"7","s":"anonymous"})"_ba;
    QTest::newRow("a present value beats the default") << R"({"t":"$.temperature|1"})"_ba
                                                       << R"({"t":0.2})"_ba;
    QTest::newRow("map over messages")
        << R"({"c":{"$map":"$.messages","to":{"r":"@.role","x":{"$text":"@.content"}}}})"_ba
        << R"({"c":[{"r":"system","x":"Be brief."},{"r":"user","x":"Hi\nthere"}]})"_ba;
    QTest::newRow("every and last")
        << R"({"roles":"$.messages[*].role","last":{"$text":"$.messages[-1].content"}})"_ba
        << R"({"last":"Hi\nthere","roles":["system","user"]})"_ba;
    QTest::newRow("escaped dollar and text that is no reference")
        << R"({"a":"$$.model","b":"@@home","c":"$5 a call","$$raw":"@home"})"_ba
        << R"({"$raw":"@home","a":"$.model","b":"@home","c":"$5 a call"})"_ba;
}

void TestAdapters::templateRenders()
{
    QFETCH(QByteArray, templateJson);
    QFETCH(QByteArray, rendered);
    const auto compiled =
        json::RequestTemplate::compile(QJsonDocument::fromJson(templateJson).object());
    QVERIFY(std::holds_alternative<json::RequestTemplate>(compiled));
    const QJsonObject request =
        QJsonDocument::fromJson(R"({"model":"agent-v2","temperature":0.2,"messages":[)"
                                R"({"role":"system","content":"Be brief."},)"
                                R"({"role":"user","content":[{"type":"text","text":"Hi"},)"
                                R"({"type":"image_url","image_url":{"url":"https://x/y.png"}},)"
                                R"({"type":"text","text":"there"}]}]})")
            .object();
    const QJsonValue value = std::get<json::RequestTemplate>(compiled).render(request);
    QCOMPARE(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact), rendered);
}

void TestAdapters::templateRejects_data()
{
    QTest::addColumn<QByteArray>("templateJson");
    QTest::addColumn<QString>("where");
    QTest::addColumn<QString>("message");
    QTest::newRow("unknown request field")
        << R"({"p":{"n":"$.max_new_tokens"}})"_ba << u"p.n"_s
        << u"reference `$.max_new_tokens` can never match: the OpenAI chat request has no field "
           u"`max_new_tokens` (it has audio, frequency_penalty, function_call, functions, "
           u"logit_bias, logprobs, max_completion_tokens, max_tokens, messages, metadata, "
           u"modalities, model, n, parallel_tool_calls, prediction, presence_penalty, "
           u"reasoning_effort, response_format, seed, service_tier, stop, store, stream, "
           u"stream_options, temperature, tool_choice, tools, top_logprobs, top_p, user, "
           u"web_search_options)"_s;
    QTest::newRow("unknown message field")
        << R"({"c":{"$map":"$.messages","to":{"t":"@.text"}}})"_ba << u"c.to.t"_s
        << u"reference `@.text` can never match: a message has no field `text` (it has audio, "
           u"content, function_call, name, refusal, role, tool_call_id, tool_calls)"_s;
    QTest::newRow("member of a list")
        << R"({"r":"$.messages.role"})"_ba << u"r"_s
        << u"reference `$.messages.role` can never match: `$.messages` is a list; pick an "
           u"element (`$.messages[0]`, `$.messages[-1]`) or map it with `$map`"_s;
    QTest::newRow("index into text")
        << R"({"r":"$.model[0]"})"_ba << u"r"_s
        << u"reference `$.model[0]` can never match: `$.model` is a string, not a list"_s;
    QTest::newRow("member of a number")
        << R"({"r":"$.temperature.value"})"_ba << u"r"_s
        << u"reference `$.temperature.value` can never match: `$.temperature` is a number and "
           u"has no member `value`"_s;
    QTest::newRow("element outside a map")
        << R"({"r":"@.role"})"_ba << u"r"_s
        << u"reference `@.role` uses `@`, which stands for the element of a `$map`, but it is "
           u"not inside one"_s;
    QTest::newRow("bad path syntax")
        << R"({"list":[1,"$.messages[x]"]})"_ba << u"list[1]"_s
        << u"reference `$.messages[x]` is not a valid path: expected an index, `*` or a quoted "
           u"name in `[...]` at character 12"_s;
    QTest::newRow("map over a single value")
        << R"({"c":{"$map":"$.model","to":"@"}})"_ba << u"c.$map"_s
        << u"`$map` needs a list, but `$.model` is a string"_s;
    QTest::newRow("map without to") << R"({"c":{"$map":"$.messages"}})"_ba << u"c"_s
                                    << u"`$map` needs `to`, the template for each element"_s;
    QTest::newRow("unknown directive")
        << R"({"c":{"$each":"$.messages"}})"_ba << u"c.$each"_s
        << u"unknown directive `$each`; a template knows `$map` and `$text` (write `$$` for a "
           u"member name that starts with `$`)"_s;
    QTest::newRow("not an object")
        << R"(["$.model"])"_ba << QString() << u"a request template must be a JSON object"_s;
}

void TestAdapters::templateRejects()
{
    QFETCH(QByteArray, templateJson);
    QFETCH(QString, where);
    QFETCH(QString, message);
    const QJsonDocument document = QJsonDocument::fromJson(templateJson);
    const auto compiled = json::RequestTemplate::compile(
        document.isObject() ? QJsonValue(document.object()) : QJsonValue(document.array()));
    QVERIFY(std::holds_alternative<QList<json::RequestTemplate::Error>>(compiled));
    const auto &errors = std::get<QList<json::RequestTemplate::Error>>(compiled);
    QCOMPARE(errors.size(), 1);
    QString location;
    for (const auto &step : errors.first().where) {
        if (const QString *member = std::get_if<QString>(&step))
            location += (location.isEmpty() ? QString() : u"."_s) + *member;
        else
            location += u"[%1]"_s.arg(std::get<qsizetype>(step));
    }
    QCOMPARE(location, where);
    QCOMPARE(errors.first().message, message);
}

QTEST_GUILESS_MAIN(TestAdapters)
#include "tst_adapters.moc"
