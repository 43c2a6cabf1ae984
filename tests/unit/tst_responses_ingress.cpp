// The /v1/responses translation, both ways, as golden files in
// tests/golden/adapters/responses_ingress/: requests (*.request.in.json: the chat request, the
// ignored fields and the echo, or the refusal), whole answers (*.answer.in.json), streams
// (*.stream.in.sse) and streams cut mid-way (*.failure.in.sse, then fail()). Streams are fed
// through the real SSE parser whole, split in two at every byte and at seeded random places; every
// translated stream must also keep the Responses event grammar (checkEventGrammar).
// SWITCHYARD_UPDATE_GOLDEN=1 rewrites the expected files from what the code does now; review the
// diff before keeping it.

#include "ingress/responses_ingress.h"
#include "protocol/chat_request.h"
#include "stream_splits.h"
#include "upstream/sse_parser.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using ingress::ResponsesChatRequest;
using ingress::ResponsesStreamWriter;
using upstream::SseEvent;
using upstream::SseParser;

namespace {

constexpr auto kRequestId = "req-golden";
// The request every answer and stream case answers: its echo fields appear in each response.
constexpr auto kEchoedRequest = R"({"model":"gpt-4o-mini","input":"Hi","instructions":"Be brief.",)"
                                R"("max_output_tokens":64,"metadata":{"ticket":"42"}})";

QString goldenFolder()
{
    return qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") +
           u"/tests/golden/adapters/responses_ingress"_s;
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

QByteArray pretty(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Indented);
}

void compareWithGolden(const QString &path, const QJsonObject &actual)
{
    if (updatingGolden()) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(pretty(actual));
        return;
    }
    QVERIFY2(QFile::exists(path), qPrintable(u"missing golden file "_s + path));
    QCOMPARE(QString::fromUtf8(pretty(actual)),
             QString::fromUtf8(pretty(QJsonDocument::fromJson(readFile(path)).object())));
}

QJsonValue dataValue(const QByteArray &data)
{
    const QJsonDocument document = QJsonDocument::fromJson(data);
    return document.isObject() ? QJsonValue(document.object())
                               : QJsonValue(QString::fromUtf8(data));
}

QJsonObject errorJson(const protocol::ApiError &error)
{
    return {{u"status"_s, error.status},
            {u"body"_s, QJsonDocument::fromJson(error.toJson()).object()}};
}

QJsonObject echo()
{
    const auto translated = ingress::chatRequestFromResponses(kEchoedRequest);
    return std::get<ResponsesChatRequest>(translated).echo;
}

QStringList casesWith(const QString &suffix)
{
    QStringList prefixes;
    const QDir folder(goldenFolder());
    for (const QString &file : folder.entryList({u"*"_s + suffix}, QDir::Files, QDir::Name))
        prefixes.append(folder.filePath(file.chopped(suffix.size())));
    // A suite that finds no case passes while proving nothing: a moved or empty folder fails.
    if (prefixes.isEmpty())
        qFatal("no golden case *%s in %s", qPrintable(suffix), qPrintable(folder.path()));
    return prefixes;
}

void addRows(const QString &suffix)
{
    QTest::addColumn<QString>("prefix");
    for (const QString &prefix : casesWith(suffix))
        QTest::newRow(QFileInfo(prefix).fileName().toUtf8().constData()) << prefix;
}

// Splits a byte stream into pieces ending at `cuts` (ascending) and parses it as SSE.
QList<SseEvent> parseInPieces(const QByteArray &wire, const QList<qsizetype> &cuts)
{
    SseParser parser;
    QList<SseEvent> events;
    qsizetype start = 0;
    QList<qsizetype> ends = cuts;
    ends.append(wire.size());
    for (qsizetype end : std::as_const(ends)) {
        if (!parser.feed(QByteArrayView(wire).sliced(start, end - start), events))
            qFatal("the SSE parser refused a golden stream");
        start = end;
    }
    return events;
}

// Feeds the chat events one by one, as the executor does, then fails the stream if asked.
QList<SseEvent> translate(const QList<SseEvent> &chatEvents, bool failAtEnd, bool *completed)
{
    ResponsesStreamWriter writer(echo(), kRequestId);
    QList<SseEvent> out;
    for (const SseEvent &event : chatEvents)
        out.append(writer.feed(event));
    if (failAtEnd) {
        out.append(writer.fail(protocol::ApiError{
            502, u"Provider `p` broke off the stream."_s, u"upstream_error"_s, {}, {}, {}}));
    }
    *completed = writer.completed();
    return out;
}

QJsonObject streamJson(const QList<SseEvent> &events, bool completed)
{
    QJsonArray list;
    for (const SseEvent &event : events)
        list.append(QJsonObject{{u"event"_s, QString::fromUtf8(event.event)},
                                {u"data"_s, dataValue(event.data)}});
    return {{u"events"_s, list}, {u"completed"_s, completed}};
}

// The rules a Responses client relies on, whatever the content: sequence numbers 0..n-1, the
// `event:` name equal to `type`, created and in_progress first, one terminal event last (after
// an `error` event when failed), items added in output_index order and done once, content and
// arguments only inside their item, text only inside its content part.
QString grammarViolation(const QList<SseEvent> &events)
{
    struct Item {
        bool done = false;
        int openPart = -1;
        int parts = 0;
    };
    QHash<int, Item> items;
    const auto type = [&](qsizetype index) {
        return QJsonDocument::fromJson(events.at(index).data).object().value(u"type"_s).toString();
    };
    if (events.size() < 3)
        return u"fewer than three events"_s;
    if (type(0) != u"response.created"_s || type(1) != u"response.in_progress"_s)
        return u"the stream does not begin with response.created, response.in_progress"_s;
    for (qsizetype index = 0; index < events.size(); ++index) {
        const QJsonObject data = QJsonDocument::fromJson(events.at(index).data).object();
        const QString kind = data.value(u"type"_s).toString();
        const int outputIndex = data.value(u"output_index"_s).toInt(-1);
        const QString where = u"event %1 (%2): "_s.arg(index).arg(kind);
        if (data.value(u"sequence_number"_s).toInteger(-1) != index)
            return where + u"sequence_number is not %1"_s.arg(index);
        if (QString::fromUtf8(events.at(index).event) != kind)
            return where + u"the event name differs from the type"_s;
        const bool last = index == events.size() - 1;
        const bool terminal = kind == u"response.completed"_s || kind == u"response.incomplete"_s ||
                              kind == u"response.failed"_s;
        if (terminal != last)
            return where + u"a terminal event must be last, and the last event terminal"_s;
        if (kind == u"response.failed"_s && type(index - 1) != u"error"_s)
            return where + u"response.failed must follow an error event"_s;
        if (kind == u"error"_s && index != events.size() - 2)
            return where + u"only response.failed may follow an error event"_s;
        if (kind == u"response.output_item.added"_s) {
            if (outputIndex != items.size())
                return where + u"output_index out of order"_s;
            items.insert(outputIndex, {});
            continue;
        }
        if (outputIndex < 0)
            continue;
        if (!items.contains(outputIndex) || items[outputIndex].done)
            return where + u"no open item at that output_index"_s;
        Item &item = items[outputIndex];
        const int contentIndex = data.value(u"content_index"_s).toInt(-1);
        if (kind == u"response.content_part.added"_s) {
            if (item.openPart >= 0 || contentIndex != item.parts)
                return where + u"content part out of order"_s;
            item.openPart = contentIndex;
        } else if (kind == u"response.content_part.done"_s) {
            if (item.openPart != contentIndex)
                return where + u"closes a part that is not open"_s;
            item.openPart = -1;
            ++item.parts;
        } else if (kind.startsWith(u"response.output_text."_s) ||
                   kind.startsWith(u"response.refusal."_s)) {
            if (item.openPart != contentIndex)
                return where + u"text outside its content part"_s;
        } else if (kind == u"response.output_item.done"_s) {
            if (item.openPart >= 0)
                return where + u"item done while a content part is open"_s;
            item.done = true;
        }
    }
    if (type(events.size() - 1) != u"response.failed"_s) {
        for (auto it = items.cbegin(); it != items.cend(); ++it) {
            if (!it->done)
                return u"item %1 never done"_s.arg(it.key());
        }
    }
    return {};
}

void checkStreamCase(const QString &prefix, const QString &inSuffix, const QString &outSuffix,
                     bool failAtEnd)
{
    const QByteArray wire = readFile(prefix + inSuffix);
    bool completed = false;
    const QList<SseEvent> whole = translate(parseInPieces(wire, {}), failAtEnd, &completed);
    if (failAtEnd)
        QVERIFY(!completed);
    const QString violation = grammarViolation(whole);
    QVERIFY2(violation.isEmpty(), qPrintable(violation));
    const QJsonObject expected = streamJson(whole, completed);
    compareWithGolden(prefix + outSuffix, expected);
    for (const QList<qsizetype> &cuts : testing::streamSplits(wire)) {
        const QJsonObject split =
            streamJson(translate(parseInPieces(wire, cuts), failAtEnd, &completed), completed);
        if (split != expected) {
            QCOMPARE(QString::fromUtf8(pretty(split)), QString::fromUtf8(pretty(expected)));
            QFAIL("stream translation depends on where the bytes were split");
        }
    }
}

SseEvent dataEvent(const QByteArray &data)
{
    SseEvent event;
    event.data = data;
    return event;
}

} // namespace

class TestResponsesIngress : public QObject {
    Q_OBJECT

private slots:
    void goldenRequests_data() { addRows(u".request.in.json"_s); }
    void goldenRequests();
    void goldenAnswers_data() { addRows(u".answer.in.json"_s); }
    void goldenAnswers();
    void goldenStreams_data() { addRows(u".stream.in.sse"_s); }
    void goldenStreams();
    void goldenFailures_data() { addRows(u".failure.in.sse"_s); }
    void goldenFailures();

    void responseIdKeepsItsPrefix();
    void nothingBeforeTheFirstChunk();
    void failureBeforeAnyChunkIsOnlyTheErrorEvent();
    void nothingAfterTheEnd();
    void rateLimitFailsWithItsOwnCode();
};

void TestResponsesIngress::goldenRequests()
{
    QFETCH(QString, prefix);
    const auto translated =
        ingress::chatRequestFromResponses(readFile(prefix + u".request.in.json"_s));
    if (const auto *refused = std::get_if<protocol::ApiError>(&translated)) {
        QCOMPARE(refused->status, 400);
        QVERIFY2(!refused->param.isEmpty() || refused->message.contains(u"JSON"_s),
                 "a refusal names the field");
        compareWithGolden(prefix + u".request.out.json"_s, {{u"refused"_s, errorJson(*refused)}});
        return;
    }
    const ResponsesChatRequest &request = std::get<ResponsesChatRequest>(translated);
    // What the lead's door hands to the chat pipeline must pass its parser unchanged.
    const auto parsed = protocol::parseChatRequest(request.chatBody);
    QVERIFY2(std::holds_alternative<protocol::ChatRequest>(parsed),
             std::holds_alternative<protocol::ApiError>(parsed)
                 ? qPrintable(std::get<protocol::ApiError>(parsed).message)
                 : "");
    compareWithGolden(prefix + u".request.out.json"_s,
                      {{u"chat_request"_s, dataValue(request.chatBody)},
                       {u"ignored_fields"_s, QJsonArray::fromStringList(request.ignoredFields)},
                       {u"echo"_s, request.echo}});
}

void TestResponsesIngress::goldenAnswers()
{
    QFETCH(QString, prefix);
    const auto translated = ingress::responseFromCompletion(readFile(prefix + u".answer.in.json"_s),
                                                            echo(), kRequestId);
    compareWithGolden(
        prefix + u".answer.out.json"_s,
        std::holds_alternative<QByteArray>(translated)
            ? QJsonObject{{u"response"_s, dataValue(std::get<QByteArray>(translated))}}
            : QJsonObject{{u"refused"_s, errorJson(std::get<protocol::ApiError>(translated))}});
}

void TestResponsesIngress::goldenStreams()
{
    QFETCH(QString, prefix);
    checkStreamCase(prefix, u".stream.in.sse"_s, u".stream.out.json"_s, false);
}

void TestResponsesIngress::goldenFailures()
{
    QFETCH(QString, prefix);
    checkStreamCase(prefix, u".failure.in.sse"_s, u".failure.out.json"_s, true);
}

void TestResponsesIngress::responseIdKeepsItsPrefix()
{
    QCOMPARE(ingress::responseIdFor("req-7"), u"resp_req-7"_s);
    QCOMPARE(ingress::responseIdFor("resp_abc"), u"resp_abc"_s);
}

void TestResponsesIngress::nothingBeforeTheFirstChunk()
{
    ResponsesStreamWriter writer(echo(), kRequestId);
    QVERIFY(writer.feed(dataEvent("")).isEmpty());
    QVERIFY(writer.feed(dataEvent("not json")).isEmpty());
    const QList<SseEvent> first = writer.feed(
        dataEvent(R"({"id":"c","created":1700000001,"model":"m","choices":[{"index":0,)"
                  R"("delta":{"role":"assistant","content":""},"finish_reason":null}]})"));
    QCOMPARE(first.size(), 2);
    QCOMPARE(first.at(0).event, "response.created"_ba);
    QCOMPARE(first.at(1).event, "response.in_progress"_ba);
    QVERIFY(!writer.completed());
}

void TestResponsesIngress::failureBeforeAnyChunkIsOnlyTheErrorEvent()
{
    ResponsesStreamWriter writer(echo(), kRequestId);
    const QList<SseEvent> events = writer.fail(
        protocol::ApiError{504, u"Provider `p` timed out."_s, u"upstream_error"_s, {}, {}, {}});
    QCOMPARE(events.size(), 1);
    QCOMPARE(events.first().event, "error"_ba);
    QCOMPARE(events.first().data,
             R"({"code":null,"error":{"code":null,"message":"Provider `p` timed out.","param":)"
             R"(null,"type":"upstream_error"},"message":"Provider `p` timed out.","param":null,)"
             R"("sequence_number":0,"type":"error"})"_ba);
}

void TestResponsesIngress::nothingAfterTheEnd()
{
    const protocol::ApiError error{502, u"cut"_s, u"upstream_error"_s, {}, {}, {}};
    ResponsesStreamWriter completed(echo(), kRequestId);
    QVERIFY(!completed.feed(dataEvent("[DONE]")).isEmpty());
    QVERIFY(completed.completed());
    QVERIFY(completed.feed(dataEvent("[DONE]")).isEmpty());
    QVERIFY(completed.fail(error).isEmpty());

    ResponsesStreamWriter failed(echo(), kRequestId);
    QVERIFY(!failed.feed(dataEvent(R"({"id":"c","model":"m","choices":[]})")).isEmpty());
    QCOMPARE(failed.fail(error).size(), 2);
    QVERIFY(failed.fail(error).isEmpty());
    QVERIFY(failed.feed(dataEvent("[DONE]")).isEmpty());
    QVERIFY(!failed.completed());
}

void TestResponsesIngress::rateLimitFailsWithItsOwnCode()
{
    ResponsesStreamWriter writer(echo(), kRequestId);
    writer.feed(dataEvent(R"({"id":"c","model":"m","choices":[]})"));
    const QList<SseEvent> events = writer.fail(protocol::ApiError{
        429, u"Slow down."_s, u"rate_limit_error"_s, {}, u"rate_limit_exceeded"_s, "3"});
    QCOMPARE(events.size(), 2);
    const QJsonObject failed = QJsonDocument::fromJson(events.last().data).object();
    QCOMPARE(failed.value(u"response"_s).toObject().value(u"status"_s).toString(), u"failed"_s);
    QCOMPARE(failed.value(u"response"_s).toObject().value(u"error"_s).toObject(),
             (QJsonObject{{u"code"_s, u"rate_limit_exceeded"_s}, {u"message"_s, u"Slow down."_s}}));
}

QTEST_GUILESS_MAIN(TestResponsesIngress)
#include "tst_responses_ingress.moc"
