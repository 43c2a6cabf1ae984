// Hot-path request parsing: the fields routing needs, and the precise 400s for bad bodies.

#include "protocol/chat_request.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

using namespace switchyard::protocol;

class TestChatRequest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsRoutingFields()
    {
        const auto parsed = parseChatRequest(
            R"({"model":"demo-pro","stream":true,"messages":[{"role":"system","content":"be brief"},)"
            R"({"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":null}]})");
        const auto *request = std::get_if<ChatRequest>(&parsed);
        QVERIFY(request);
        QCOMPARE(request->model, QStringLiteral("demo-pro"));
        QVERIFY(request->stream);
        QCOMPARE(request->messageCount, 3);
    }

    void rejectsBadBodies_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QString>("message");
        QTest::newRow("not json") << QByteArray("{\"model\": ") << QString()
                                  << QStringLiteral(
                                         "We could not parse the JSON body of your request (");
        QTest::newRow("array") << QByteArray("[1,2]") << QString()
                               << QStringLiteral(
                                      "The request body must be a JSON object, but got an array.");
        QTest::newRow("missing model")
            << QByteArray(R"({"messages":[{"role":"user","content":"x"}]})")
            << QStringLiteral("model") << QStringLiteral("Missing required parameter: 'model'.");
        QTest::newRow("model number")
            << QByteArray(R"({"model":5,"messages":[]})") << QStringLiteral("model")
            << QStringLiteral(
                   "Invalid type for 'model': expected a string, but got an integer instead.");
        QTest::newRow("empty messages")
            << QByteArray(R"({"model":"m","messages":[]})") << QStringLiteral("messages")
            << QStringLiteral("Invalid 'messages': empty array. Expected an array with minimum "
                              "length 1, but got an empty array instead.");
        QTest::newRow("content number")
            << QByteArray(R"({"model":"m","messages":[{"role":"user","content":1.5}]})")
            << QStringLiteral("messages[0].content")
            << QStringLiteral("Invalid type for 'messages[0].content': expected one of a string or "
                              "an array, but got a number instead.");
        QTest::newRow("role missing")
            << QByteArray(
                   R"({"model":"m","messages":[{"role":"user","content":"a"},{"content":"b"}]})")
            << QStringLiteral("messages[1].role")
            << QStringLiteral("Missing required parameter: 'messages[1].role'.");
        QTest::newRow("stream string")
            << QByteArray(
                   R"({"model":"m","stream":"yes","messages":[{"role":"user","content":"a"}]})")
            << QStringLiteral("stream")
            << QStringLiteral(
                   "Invalid type for 'stream': expected a boolean, but got a string instead.");
    }
    void rejectsBadBodies()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, param);
        QFETCH(QString, message);
        const auto parsed = parseChatRequest(body);
        const auto *error = std::get_if<ApiError>(&parsed);
        QVERIFY(error);
        QCOMPARE(error->status, 400);
        QCOMPARE(error->type, QStringLiteral("invalid_request_error"));
        QCOMPARE(error->param, param);
        QVERIFY2(error->message.startsWith(message), qPrintable(error->message));
    }

    // A rename touches exactly the model's bytes; everything else is forwarded as sent.
    void renameSplicesOnlyTheModel()
    {
        const QByteArray body =
            R"({ "temperature" : 0.25 , "model" : "public-name" , "messages":[{"role":"user","content":"model"}], "x": 12345678901234567890})";
        const auto request = std::get<ChatRequest>(parseChatRequest(body));
        const QByteArray renamed = request.withModel(body, QStringLiteral("upstream/\"quoted\""));
        QByteArray expected = body;
        expected.replace("\"public-name\"", "\"upstream/\\\"quoted\\\"\"");
        QCOMPARE(renamed, expected);
    }

    void errorHasOpenAiShape()
    {
        const ApiError error = ApiError::modelNotFound(QStringLiteral("gpt-x"));
        const QJsonObject object = QJsonDocument::fromJson(error.toJson()).object();
        const QJsonObject inner = object.value(QStringLiteral("error")).toObject();
        QCOMPARE(inner.value(QStringLiteral("type")).toString(),
                 QStringLiteral("invalid_request_error"));
        QCOMPARE(inner.value(QStringLiteral("code")).toString(), QStringLiteral("model_not_found"));
        QCOMPARE(inner.value(QStringLiteral("param")).toString(), QStringLiteral("model"));
        QVERIFY(
            inner.value(QStringLiteral("message")).toString().contains(QStringLiteral("`gpt-x`")));
        QCOMPARE(error.status, 404);
    }
};

QTEST_GUILESS_MAIN(TestChatRequest)
#include "tst_chat_request.moc"
