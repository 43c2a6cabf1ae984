// A background response whose process is killed while it runs: the shipped binary, headless,
// with a state directory, in front of a fake provider that streams one event at a time. The
// process gets SIGKILL mid-answer; a new process on the same state directory runs the task again
// under the same id, and its event log keeps every event a client read before the crash with its
// number, numbering the re-run's events after them.
#include "fake_upstream.h"
#include "gateway_process.h"
#include "test_client.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);

QJsonObject jsonOf(const QByteArray &body)
{
    return QJsonDocument::fromJson(body).object();
}

qint64 sequenceOf(const switchyard::upstream::SseEvent &event)
{
    return jsonOf(event.data).value(u"sequence_number"_s).toInteger(-1);
}

QString statusOf(quint16 port, const QByteArray &id)
{
    TestClient client(port);
    client.send("GET", "/v1/responses/" + id);
    client.waitForFinished();
    return jsonOf(client.body()).value(u"status"_s).toString();
}

} // namespace

class BackgroundCrashTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aTaskRunningWhenTheProcessIsKilledCompletesAfterARestart()
    {
        QTemporaryDir directory;
        QVERIFY(directory.isValid());
        FakeUpstream fake;
        fake.manualStreaming = true;
        fake.streamEvents = 4;
        const QString configPath = directory.filePath(u"gateway.yaml"_s);
        QFile file(configPath);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("listen: 127.0.0.1:0\n"
                   "providers:\n"
                   "  - {id: fake, kind: openai, base_url: " +
                   fake.baseUrl() +
                   ", models: [test-model]}\n"
                   "probes: {enabled: false}\n");
        file.close();
        const QString state = directory.filePath(u"state"_s);

        QByteArray id;
        QList<qint64> readBeforeTheCrash;
        {
            GatewayProcess first(kBinary, u"first"_s, configPath, state, {});
            const quint16 port = first.waitForPort();
            QVERIFY2(port != 0, first.errors().constData());
            TestClient client(port);
            client.post("/v1/responses",
                        R"({"model":"test-model","input":"hello","background":true,"stream":true})",
                        {{"Content-Type", "application/json"}});
            QVERIFY(QTest::qWaitFor([&] { return fake.requests().size() == 1; }, 10000));
            fake.releaseEvent();
            fake.releaseEvent();
            QVERIFY(QTest::qWaitFor(
                [&] {
                    for (const auto &event : client.events()) {
                        if (event.event == "response.output_text.delta" &&
                            event.data.contains("\"t1\""))
                            return true;
                    }
                    return false;
                },
                10000));
            id = jsonOf(client.events().first().data)
                     .value(u"response"_s)
                     .toObject()
                     .value(u"id"_s)
                     .toString()
                     .toUtf8();
            for (const auto &event : client.events())
                readBeforeTheCrash.append(sequenceOf(event));
            first.kill(); // SIGKILL: no shutdown, no flush
            QCOMPARE(first.exitStatus(), QProcess::CrashExit);
        }
        fake.manualStreaming = false;

        GatewayProcess second(kBinary, u"second"_s, configPath, state, {});
        const quint16 port = second.waitForPort();
        QVERIFY2(port != 0, second.errors().constData());
        QVERIFY(QTest::qWaitFor([&] { return statusOf(port, id) == u"completed"_s; }, 20000));
        QCOMPARE(fake.requests().size(), 2); // at least once to the provider: here twice

        TestClient replay(port);
        replay.send("GET", "/v1/responses/" + id + "?stream=true");
        QVERIFY(replay.waitForFinished());
        QList<qint64> numbers;
        for (const auto &event : replay.events())
            numbers.append(sequenceOf(event));
        // One log: what a client read before the crash keeps its numbers, the re-run's events
        // come after them, and no number is used twice.
        for (qsizetype index = 0; index < numbers.size(); ++index)
            QCOMPARE(numbers.at(index), qint64(index));
        QCOMPARE(numbers.mid(0, readBeforeTheCrash.size()), readBeforeTheCrash);
        QCOMPARE(replay.events().last().event, QByteArray("response.completed"));
        const QJsonObject response =
            jsonOf(replay.events().last().data).value(u"response"_s).toObject();
        QCOMPARE(response.value(u"id"_s).toString().toUtf8(), id);
        second.stop();
    }
};

QTEST_GUILESS_MAIN(BackgroundCrashTest)
#include "tst_background_crash.moc"
