// Ingress: what a request tells the router. Metadata headers into a RequestContext (and the
// precise 400 for a bad one), the body's `switchyard` object into meta.<key> and out of the
// forwarded body, and the cheap features the gearbox reads.

#include "protocol/chat_request.h"
#include "routing/request_context.h"

#include <QTest>

using namespace Qt::StringLiterals;
using namespace switchyard;
using Headers = QList<QPair<QByteArray, QByteArray>>;

namespace {

protocol::ChatRequest parse(const QByteArray &body)
{
    auto parsed = protocol::parseChatRequest(body);
    if (const auto *error = std::get_if<protocol::ApiError>(&parsed))
        qFatal("test body does not parse: %s", qPrintable(error->message));
    return std::get<protocol::ChatRequest>(parsed);
}

QByteArray userMessage(const QByteArray &content)
{
    return R"({"model":"m","messages":[{"role":"user","content":")" + content + R"("}]})";
}

} // namespace

class TestRequestContext : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void readsEveryMetadataHeader()
    {
        const Headers headers{{"X-Switchyard-Tenant", "acme"},
                              {"x-switchyard-user", "alice"},
                              {"x-switchyard-session", "s-1"},
                              {"x-switchyard-priority", "HIGH"},
                              {"x-switchyard-tier", "Pro"},
                              {"x-switchyard-task", "code_gen"},
                              {"x-switchyard-sensitivity", "high"},
                              {"x-switchyard-max-cost", "0.25"},
                              {"x-switchyard-timeout-budget-ms", "1500"},
                              {"x-switchyard-fallback-level", "1"},
                              {"x-switchyard-depth", "2"},
                              {"x-switchyard-intent", "travel/book/flight"},
                              {"x-request-id", "req-7"},
                              {"x-team", "blue"}};
        const auto built = routing::buildRequestContext(headers, parse(userMessage("hi")));
        const auto *context = std::get_if<routing::RequestContext>(&built);
        QVERIFY(context);
        QCOMPARE(context->model, u"m"_s);
        QCOMPARE(context->tenant, u"acme"_s);
        QCOMPARE(context->user, u"alice"_s);
        QCOMPARE(context->session, u"s-1"_s);
        QCOMPARE(context->priority, u"high"_s);
        QCOMPARE(context->tierHint, u"pro"_s);
        QCOMPARE(context->task, u"code_gen"_s);
        QCOMPARE(context->sensitivity, u"high"_s);
        QCOMPARE(context->maxCost, std::optional<double>(0.25));
        QCOMPARE(context->timeoutBudget->count(), 1500);
        QCOMPARE(context->fallbackLevel, 1);
        QCOMPARE(context->depth, 2);
        QCOMPARE(context->intent, u"travel/book/flight"_s);
        QCOMPARE(context->requestId, "req-7"_ba);
        QCOMPARE(context->header("X-TEAM"), "blue"_ba);
    }

    void absentHeadersKeepDefaults()
    {
        const auto built =
            routing::buildRequestContext({{"x-switchyard-user", "  "}}, parse(userMessage("hi")));
        const auto &context = std::get<routing::RequestContext>(built);
        QVERIFY(context.user.isEmpty()); // an empty header is the same as none
        QCOMPARE(context.fallbackLevel, 3);
        QCOMPARE(context.depth, 0);
        QVERIFY(!context.timeoutBudget);
        QVERIFY(!context.maxCost);
        QVERIFY(context.requestId.isEmpty());
    }

    void invalidHeaderIsA400NamingIt_data()
    {
        QTest::addColumn<QByteArray>("name");
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QString>("message");
        QTest::newRow("priority") << "x-switchyard-priority"_ba
                                  << "urgent"_ba
                                  << u"Invalid value for header 'x-switchyard-priority': expected "
                                     u"one of `low`, `normal` or `high`, but got 'urgent'."_s;
        QTest::newRow("tier") << "x-switchyard-tier"_ba
                              << "max"_ba
                              << u"Invalid value for header 'x-switchyard-tier': expected `light` "
                                 u"or `pro`, but got 'max'."_s;
        QTest::newRow("task") << "x-switchyard-task"_ba
                              << "code gen"_ba
                              << u"Invalid value for header 'x-switchyard-task': expected a word "
                                 u"of at most 64 letters, digits, `-`, `_`, `.` or `:`, but got "
                                 u"'code gen'."_s;
        QTest::newRow("sensitivity")
            << "x-switchyard-sensitivity"_ba
            << "very/high"_ba
            << u"Invalid value for header 'x-switchyard-sensitivity': expected a word of at most "
               u"64 letters, digits, `-`, `_`, `.` or `:`, but got 'very/high'."_s;
        QTest::newRow("max cost") << "x-switchyard-max-cost"_ba
                                  << "-1"_ba
                                  << u"Invalid value for header 'x-switchyard-max-cost': expected "
                                     u"a number of at least 0, but got '-1'."_s;
        QTest::newRow("timeout budget")
            << "x-switchyard-timeout-budget-ms"_ba
            << "2s"_ba
            << u"Invalid value for header 'x-switchyard-timeout-budget-ms': expected a whole "
               u"number of milliseconds from 1 to 86400000, but got '2s'."_s;
        QTest::newRow("fallback level")
            << "x-switchyard-fallback-level"_ba
            << "4"_ba
            << u"Invalid value for header 'x-switchyard-fallback-level': expected a whole number "
               u"from 0 to 3, but got '4'."_s;
        QTest::newRow("depth") << "x-switchyard-depth"_ba
                               << "-1"_ba
                               << u"Invalid value for header 'x-switchyard-depth': expected a "
                                  u"whole number of at least 0, but got '-1'."_s;
        QTest::newRow("intent") << "x-switchyard-intent"_ba
                                << "travel/book"_ba
                                << u"Invalid value for header 'x-switchyard-intent': expected "
                                   u"`domain/action/attribute`, each a word of letters, digits, "
                                   u"`-`, `_`, `.` or `:`, but got 'travel/book'."_s;
        QTest::newRow("user control character")
            << "x-switchyard-user"_ba
            << "al\x01ice"_ba
            << u"Invalid value for header 'x-switchyard-user': expected at most 256 bytes "
               u"without control characters, but got 'al?ice'."_s;
    }
    void invalidHeaderIsA400NamingIt()
    {
        QFETCH(QByteArray, name);
        QFETCH(QByteArray, value);
        QFETCH(QString, message);
        const auto built = routing::buildRequestContext({{name, value}}, parse(userMessage("x")));
        const auto *error = std::get_if<protocol::ApiError>(&built);
        QVERIFY(error);
        QCOMPARE(error->status, 400);
        QCOMPARE(error->type, u"invalid_request_error"_s);
        QCOMPARE(error->code, u"invalid_header"_s);
        QCOMPARE(error->param, QString::fromLatin1(name));
        QCOMPARE(error->message, message);
    }

    void unsaneRequestIdIsNotTaken()
    {
        QCOMPARE(routing::acceptedRequestId({{"X-Request-Id", " abc-1 "}}), "abc-1"_ba);
        QCOMPARE(routing::acceptedRequestId({{"x-request-id", "a b"}}), QByteArray());
        QCOMPARE(routing::acceptedRequestId({{"x-request-id", QByteArray(129, 'a')}}),
                 QByteArray());
    }

    void routingObjectBecomesMeta()
    {
        const auto chat =
            parse(R"({"model":"m","switchyard":{"app":"demo","n":3,"f":1.5,"b":true,"z":null},)"
                  R"("messages":[{"role":"user","content":"x"}]})");
        QVERIFY(chat.hasRoutingObject);
        const auto context =
            std::get<routing::RequestContext>(routing::buildRequestContext({}, chat));
        const QHash<QString, QString> expected{
            {u"app"_s, u"demo"_s}, {u"n"_s, u"3"_s}, {u"f"_s, u"1.5"_s}, {u"b"_s, u"true"_s}};
        QCOMPARE(context.meta, expected);
    }

    void badRoutingObjectIsA400_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("param");
        QTest::addColumn<QString>("message");
        QTest::newRow("not an object")
            << QByteArray(
                   R"({"model":"m","switchyard":[1],"messages":[{"role":"user","content":"x"}]})")
            << u"switchyard"_s
            << u"Invalid type for 'switchyard': expected an object, but got an array instead."_s;
        QTest::newRow("nested value")
            << QByteArray(
                   R"({"model":"m","switchyard":{"a":{"b":1}},"messages":[{"role":"user","content":"x"}]})")
            << u"switchyard.a"_s
            << u"Invalid type for 'switchyard.a': expected a string, number or boolean, but got "
               u"an object instead."_s;
    }
    void badRoutingObjectIsA400()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, param);
        QFETCH(QString, message);
        const auto parsed = protocol::parseChatRequest(body);
        const auto *error = std::get_if<protocol::ApiError>(&parsed);
        QVERIFY(error);
        QCOMPARE(error->status, 400);
        QCOMPARE(error->param, param);
        QCOMPARE(error->message, message);
    }

    void routingObjectIsStrippedAndNothingElse_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QByteArray>("forwarded");
        const QByteArray messages = R"("messages":[{"role":"user","content":"x"}])";
        QTest::newRow("middle") << R"({"model":"m", "switchyard": {"a":1}, )" + messages + "}"
                                << R"({"model":"m", )" + messages + "}";
        QTest::newRow("first") << R"({ "switchyard":{"a":"b"},  "model":"m",)" + messages + "}"
                               << R"({ "model":"m",)" + messages + "}";
        QTest::newRow("last") << R"({"model":"m",)" + messages +
                                     ", \"switchyard\" : {\"k\":\"}\\\"{\"} }"
                              << R"({"model":"m",)" + messages + " }";
        QTest::newRow("escaped key")
            << R"({"model":"m",)" + messages + ",\"switch\\u0079ard\":{\"a\":true}}"
            << R"({"model":"m",)" + messages + "}";
        QTest::newRow("none: same bytes") << R"({"model":"m", )" + messages + "}"
                                          << R"({"model":"m", )" + messages + "}";
    }
    void routingObjectIsStrippedAndNothingElse()
    {
        QFETCH(QByteArray, body);
        QFETCH(QByteArray, forwarded);
        const protocol::ChatRequest chat = parse(body);
        QCOMPARE(routing::forwardedBody(chat, body), forwarded);
    }

    void estimatesTokens_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<int>("tokens");
        QTest::addColumn<int>("characters");
        // 4 framing tokens per message, plus the text.
        QTest::newRow("ascii: 4 characters a token") << "hello world"_ba << 4 + 3 << 11;
        QTest::newRow("cjk: 1 token a character") << "你好世界"_ba << 4 + 4 << 4;
        QTest::newRow("kana and hangul") << "こんにちは안녕"_ba << 4 + 7 << 7;
        QTest::newRow("other non-ascii: 2 a token") << "héllo"_ba << 4 + 1 + 1 << 5;
    }
    void estimatesTokens()
    {
        QFETCH(QByteArray, content);
        QFETCH(int, tokens);
        QFETCH(int, characters);
        const protocol::ChatRequest chat = parse(userMessage(content));
        QCOMPARE(chat.estimatedInputTokens, tokens);
        QCOMPARE(chat.characterCount, characters);
    }

    void countsComplexityFeatures()
    {
        const QByteArray body =
            R"({"model":"m","tools":[{"type":"function","function":{"name":"a"}},)"
            R"({"type":"function","function":{"name":"b"}}],"messages":[)"
            R"({"role":"system","content":"be brief"},)"
            R"({"role":"user","content":[{"type":"text","text":"```py\nx\n```\nand ```y```"}]},)"
            R"({"role":"assistant","content":null}]})";
        const protocol::ChatRequest chat = parse(body);
        const auto context =
            std::get<routing::RequestContext>(routing::buildRequestContext({}, chat));
        QCOMPARE(context.messageCount, 3);
        QCOMPARE(context.toolCount, 2);
        QCOMPARE(context.codeBlockCount, 2);
        // Tool definitions count as input tokens too, but not as message characters.
        QCOMPARE(context.characterCount,
                 qint64(QStringLiteral("be brief").size() +
                        QStringLiteral("```py\nx\n```\nand ```y```").size()));
        QVERIFY(context.estimatedInputTokens > 3 * 4 + (context.characterCount + 3) / 4);
    }

    // The text is read eight bytes at a time while it is plain ASCII: a fence, a lone backtick
    // or a non-ASCII character counts the same wherever it falls in those eight.
    void countsFencesAndCharactersAtAnyOffset()
    {
        for (int offset = 0; offset < 17; ++offset) {
            const QByteArray text = QByteArray(offset, 'x') + "```py\\nx\\n```" +
                                    QByteArray(17, 'y') + "``" + QByteArray(8, 'z') + "`" +
                                    QByteArray(offset % 9, 'w') + "\xc3\xa9" + "你" +
                                    QByteArray(11, 'v');
            const protocol::ChatRequest chat = parse(userMessage(text));
            const auto context =
                std::get<routing::RequestContext>(routing::buildRequestContext({}, chat));
            QCOMPARE(context.codeBlockCount, 1);
            // Each "\\n" is two characters in the JSON text and one in the message.
            const qint64 ascii = text.size() - 2 - 3 - 2;
            QCOMPARE(context.characterCount, ascii + 1 + 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestRequestContext)
#include "tst_request_context.moc"
