// The degradation ladder's lower rungs: canned answers matched on the request, and the answers
// Switchyard writes itself in the shapes OpenAI clients read.

#include "resilience/degradation.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QtTest>

using namespace Qt::StringLiterals;
using switchyard::config::CannedAnswer;
using switchyard::config::DegradationConfig;
namespace resilience = switchyard::resilience;

class TestDegradation : public QObject {
    Q_OBJECT

private slots:
    void findsTheLastUserMessage_data();
    void findsTheLastUserMessage();
    void picksTheFirstMatchingCannedAnswer_data();
    void picksTheFirstMatchingCannedAnswer();
    void writesAWholeCompletion();
    void writesAStreamEndingWithDone();
};

void TestDegradation::findsTheLastUserMessage_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("text");

    QTest::newRow("one message") << R"({"messages":[{"role":"user","content":"hello"}]})"_ba
                                 << u"hello"_s;
    QTest::newRow("last of several")
        << R"({"messages":[{"role":"user","content":"first"},)"
           R"({"role":"assistant","content":"a"},{"role":"user","content":"second"},)"
           R"({"role":"tool","content":"t"}]})"_ba
        << u"second"_s;
    QTest::newRow("content parts")
        << R"({"messages":[{"role":"user","content":[{"type":"text","text":"look"},)"
           R"({"type":"image_url","image_url":{"url":"x"}},{"type":"text","text":"here"}]}]})"_ba
        << u"look\nhere"_s;
    QTest::newRow("no user message")
        << R"({"messages":[{"role":"system","content":"s"}]})"_ba << QString();
    QTest::newRow("not JSON") << "{"_ba << QString();
}

void TestDegradation::findsTheLastUserMessage()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, text);
    QCOMPARE(resilience::lastUserMessageText(body), text);
}

void TestDegradation::picksTheFirstMatchingCannedAnswer_data()
{
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("message");
    QTest::addColumn<QString>("reply");

    QTest::newRow("model and keyword")
        << u"support-bot"_s << u"Where is my ORDER?"_s << u"order status"_s;
    QTest::newRow("keyword only, any model")
        << u"other"_s << u"what are your opening hours"_s << u"hours"_s;
    QTest::newRow("model only") << u"support-bot"_s << u"hi"_s << u"support fallback"_s;
    QTest::newRow("nothing matches") << u"other"_s << u"hi"_s << QString();
}

void TestDegradation::picksTheFirstMatchingCannedAnswer()
{
    QFETCH(QString, model);
    QFETCH(QString, message);
    QFETCH(QString, reply);
    DegradationConfig config;
    config.canned = {CannedAnswer{u"support-*"_s, {u"order"_s, u"delivery"_s}, u"order status"_s},
                     CannedAnswer{{}, {u"hours"_s}, u"hours"_s},
                     CannedAnswer{u"support-*"_s, {}, u"support fallback"_s}};

    const CannedAnswer *answer = resilience::matchCannedAnswer(config, model, message);

    QCOMPARE(answer ? answer->reply : QString(), reply);
}

void TestDegradation::writesAWholeCompletion()
{
    resilience::SyntheticAnswer answer{"chatcmpl-req_1",         u"demo"_s, 1'700'000'000,
                                       u"We are busy, sorry."_s, 3,         u"all failed"_s};

    const QJsonObject object = QJsonDocument::fromJson(answer.completion()).object();

    QCOMPARE(object.value(u"id"_s).toString(), u"chatcmpl-req_1"_s);
    QCOMPARE(object.value(u"object"_s).toString(), u"chat.completion"_s);
    QCOMPARE(object.value(u"created"_s).toInteger(), 1'700'000'000);
    QCOMPARE(object.value(u"model"_s).toString(), u"demo"_s);
    const QJsonObject choice = object.value(u"choices"_s).toArray().at(0).toObject();
    QCOMPARE(choice.value(u"index"_s).toInt(), 0);
    QCOMPARE(choice.value(u"finish_reason"_s).toString(), u"stop"_s);
    QCOMPARE(choice.value(u"message"_s).toObject().value(u"role"_s).toString(), u"assistant"_s);
    QCOMPARE(choice.value(u"message"_s).toObject().value(u"content"_s).toString(),
             u"We are busy, sorry."_s);
    const QJsonObject note = object.value(u"switchyard_degraded"_s).toObject();
    QCOMPARE(note.value(u"level"_s).toInt(), 3);
    QCOMPARE(note.value(u"reason"_s).toString(), u"all failed"_s);
}

void TestDegradation::writesAStreamEndingWithDone()
{
    resilience::SyntheticAnswer answer{"chatcmpl-req_2", u"demo"_s, 1, u"canned"_s, 2, u"why"_s};

    const QList<QByteArray> events = answer.streamEvents();

    QCOMPARE(events.size(), 3);
    const QJsonObject first = QJsonDocument::fromJson(events[0]).object();
    QCOMPARE(first.value(u"object"_s).toString(), u"chat.completion.chunk"_s);
    const QJsonObject delta =
        first.value(u"choices"_s).toArray().at(0).toObject().value(u"delta"_s).toObject();
    QCOMPARE(delta.value(u"role"_s).toString(), u"assistant"_s);
    QCOMPARE(delta.value(u"content"_s).toString(), u"canned"_s);
    const QJsonObject last = QJsonDocument::fromJson(events[1]).object();
    QCOMPARE(last.value(u"choices"_s).toArray().at(0).toObject().value(u"finish_reason"_s),
             QJsonValue(u"stop"_s));
    QCOMPARE(last.value(u"switchyard_degraded"_s).toObject().value(u"level"_s).toInt(), 2);
    QCOMPARE(events[2], "[DONE]"_ba);
}

QTEST_APPLESS_MAIN(TestDegradation)
#include "tst_degradation.moc"
