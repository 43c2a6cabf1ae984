// The embedded demo's failover drill, run as an operator runs it: the shipped binary, headless,
// with the demo's own config; `sim-swift` (90 % of the `chat-canary` split) set to fail with
// HTTP 500 through the admin API. The split follows health: every demo-chat request is still
// answered, first by failing over to the other branch, then, once sim-swift's breaker opens, by
// moving its share to sim-steady; the explanation says so; a strict split keeps its promise. With
// sim-swift cutting its streams mid-way, every streamed demo-chat answer still ends whole: the
// route continues cut streams on sim-steady.
#include "gateway_process.h"
#include "test_client.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <functional>
#include <memory>

using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);
const QString kDemoConfig = QStringLiteral(SWITCHYARD_DEMO_CONFIG);

QByteArray chatBody(bool stream)
{
    return R"({"model":"demo-chat","stream":)" + QByteArray(stream ? "true" : "false") +
           R"(,"messages":[{"role":"user","content":"hello"}]})";
}

struct Answer {
    int status = 0;
    QByteArray provider;
    bool complete = false;  // a whole body, or a stream that ended with [DONE]
    QByteArray body;        // for a failure's message
    bool continued = false; // a chunk said the stream went on at another provider
};

Answer chat(quint16 port, bool stream)
{
    TestClient client(port);
    client.post("/v1/chat/completions", chatBody(stream));
    Answer answer;
    if (!client.waitForFinished(30000))
        return answer;
    answer.status = client.status();
    answer.provider = client.header("x-switchyard-provider");
    answer.body = client.body().left(600);
    for (const auto &event : client.events())
        answer.continued = answer.continued || event.data.contains(R"("switchyard":{)");
    answer.complete =
        stream ? !client.events().isEmpty() && client.events().last().data.trimmed() == "[DONE]"
               : QJsonDocument::fromJson(client.body())
                         .object()
                         .value(u"choices"_s)
                         .toArray()
                         .size() == 1;
    return answer;
}

int setSimulator(quint16 port, const QByteArray &provider, const QByteArray &knobs)
{
    TestClient client(port);
    client.post("/admin/v1/simulator/" + provider, knobs, {{"content-type", "application/json"}});
    return client.waitForFinished(10000) ? client.status() : 0;
}

int setSimulatorMode(quint16 port, const QByteArray &provider, const QByteArray &mode)
{
    return setSimulator(port, provider, R"({"mode":")" + mode + R"("})");
}

// The decision for a demo-chat request with this request id, as explain gives it.
QJsonObject explain(quint16 port, const QByteArray &requestId)
{
    TestClient client(port);
    client.post("/admin/v1/route/explain", chatBody(false), {{"x-request-id", requestId}});
    if (!client.waitForFinished(10000) || client.status() != 200)
        return {};
    return QJsonDocument::fromJson(client.body()).object().value(u"decision"_s).toObject();
}

QString steps(const QJsonObject &decision)
{
    QStringList lines;
    for (const QJsonValue &step : decision.value(u"steps"_s).toArray())
        lines.append(step.toObject().value(u"detail"_s).toString());
    return lines.join(u'\n');
}

} // namespace

class TestDemoDrill : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void init();
    void cleanup();
    void aFailingCanaryBranchLosesNoRequest();
    void aStrictSplitKeepsItsPromise();
    void streamsCutMidWayAreContinued();

private:
    // The demo's config, changed by `edit`, run by the shipped binary on a free port.
    GatewayProcess &startDemo(const std::function<void(QByteArray &)> &edit = {});

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<GatewayProcess> m_node;
};

void TestDemoDrill::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

void TestDemoDrill::cleanup()
{
    m_node.reset();
    m_dir.reset();
}

GatewayProcess &TestDemoDrill::startDemo(const std::function<void(QByteArray &)> &edit)
{
    QFile demo(kDemoConfig);
    if (!demo.open(QIODevice::ReadOnly))
        qFatal("cannot read the demo config %s", qPrintable(kDemoConfig));
    QByteArray text = demo.readAll();
    if (edit)
        edit(text);
    const QString path = m_dir->filePath(u"demo.yaml"_s);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
        qFatal("cannot write %s", qPrintable(path));
    file.close();
    m_node = std::make_unique<GatewayProcess>(
        kBinary, u"demo"_s, path, m_dir->filePath(u"state"_s),
        GatewayProcess::Options{{}, {u"--listen"_s, u"127.0.0.1:0"_s}});
    return *m_node;
}

void TestDemoDrill::aFailingCanaryBranchLosesNoRequest()
{
    GatewayProcess &demo = startDemo();
    const quint16 port = demo.waitForPort();
    QVERIFY2(port != 0, demo.errors().constData());

    // The demo's providers fail now and then by design (error_rate); sim-steady must not here,
    // so that every failure in this test is the drill's.
    QCOMPARE(setSimulator(port, "sim-steady", R"({"error_rate":0})"), 200);
    QCOMPARE(setSimulatorMode(port, "sim-swift", "500"), 200);
    // Requests carry no session, so each request id draws its own bucket: about nine in ten are
    // sim-swift's. Whole and streamed, one after another, as the demo sends them.
    for (int i = 0; i < 24; ++i) {
        const bool stream = i % 2 == 1;
        const Answer answer = chat(port, stream);
        QVERIFY2(answer.status == 200 && answer.complete,
                 qPrintable(u"request %1 (%2): status %3: %4"_s.arg(i)
                                .arg(stream ? u"streamed"_s : u"whole"_s)
                                .arg(answer.status)
                                .arg(QString::fromUtf8(answer.body))));
        // Its own tenth of the buckets, and sim-swift's requests after their failed attempt.
        QCOMPARE(answer.provider, QByteArray("sim-steady"));
    }

    // sim-swift's breaker is open now: its share is moved before any attempt, and explain says so.
    QJsonObject moved;
    for (int i = 0; i < 50 && moved.isEmpty(); ++i) {
        const QJsonObject decision = explain(port, "drill-" + QByteArray::number(i));
        QVERIFY(!decision.isEmpty());
        if (decision.value(u"canary_moved_from"_s).toString() == u"sim-swift"_s)
            moved = decision;
    }
    QVERIFY2(!moved.isEmpty(), "no request of sim-swift's buckets was moved");
    QCOMPARE(moved.value(u"canary_side"_s).toString(), u"sim-steady"_s);
    QVERIFY2(steps(moved).contains(u"branch `sim-swift` unavailable: none of its endpoints can "
                                   u"be chosen, share moved to `sim-steady`"_s),
             qPrintable(steps(moved)));

    // The drill ends: sim-swift answers again once its breaker lets a probe through; until then
    // sim-steady keeps answering, so nothing in between fails either.
    QCOMPARE(setSimulatorMode(port, "sim-swift", "ok"), 200);
    for (int i = 0; i < 10; ++i) {
        const Answer answer = chat(port, false);
        QVERIFY2(answer.status == 200, answer.body.constData());
    }
}

void TestDemoDrill::streamsCutMidWayAreContinued()
{
    GatewayProcess &demo = startDemo();
    const quint16 port = demo.waitForPort();
    QVERIFY2(port != 0, demo.errors().constData());
    QCOMPARE(setSimulator(port, "sim-steady", R"({"error_rate":0})"), 200);
    QCOMPARE(setSimulatorMode(port, "sim-swift", "cut-stream"), 200);
    int continued = 0;
    for (int i = 0; i < 12; ++i) {
        const Answer answer = chat(port, true);
        QVERIFY2(answer.status == 200 && answer.complete,
                 qPrintable(u"request %1: status %2: %3"_s.arg(i)
                                .arg(answer.status)
                                .arg(QString::fromUtf8(answer.body))));
        continued += answer.continued ? 1 : 0;
    }
    // About nine in ten streams begin at sim-swift and are cut there (until its breaker opens).
    QVERIFY2(continued > 0, "no stream was continued");
}

void TestDemoDrill::aStrictSplitKeepsItsPromise()
{
    GatewayProcess &demo = startDemo([](QByteArray &text) {
        const QByteArray split = "{target: sim-steady, weight: 10}], key: session}";
        QVERIFY(text.contains(split));
        text.replace(split, "{target: sim-steady, weight: 10}], key: session, strict: true}");
    });
    const quint16 port = demo.waitForPort();
    QVERIFY2(port != 0, demo.errors().constData());
    QCOMPARE(setSimulator(port, "sim-steady", R"({"error_rate":0})"), 200);
    QCOMPARE(setSimulatorMode(port, "sim-swift", "500"), 200);
    int failed = 0;
    for (int i = 0; i < 20; ++i) {
        const Answer answer = chat(port, false);
        if (answer.status != 200)
            ++failed;
        else
            QCOMPARE(answer.provider, QByteArray("sim-steady")); // its own buckets only
    }
    // sim-swift's requests are not moved: they fail (HTTP 500, then 503 once its breaker opens).
    QVERIFY2(failed >= 10, qPrintable(QString::number(failed)));
}

QTEST_MAIN(TestDemoDrill)
#include "tst_demo_drill.moc"
