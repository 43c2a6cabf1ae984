// The shipped binary as an operator runs it: config checking, a headless gateway that answers
// and stops cleanly on SIGTERM, and a refusal to start on a broken config.

#include "fake_upstream.h"
#include "test_client.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>

using namespace switchyard::testing;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);

// One mistake on line 6 ("modles"), which also leaves the provider on line 3 without models.
const QByteArray kBrokenConfig = "listen: 127.0.0.1:8080\n"
                                 "providers:\n"
                                 "  - id: local\n"
                                 "    kind: openai\n"
                                 "    base_url: http://127.0.0.1:9/v1\n"
                                 "    modles: [test-model]\n";

// Runs the binary to completion and returns whether it finished in time.
bool runToExit(QProcess &process, const QStringList &arguments)
{
    process.start(kBinary, arguments);
    return process.waitForFinished(60000);
}

QStringList lines(const QByteArray &output)
{
    return QString::fromUtf8(output).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

class SwitchyardBinaryTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void checkConfigPrintsEachErrorWithFileLineAndColumn();
    void checkConfigAcceptsTheDemo();
    void theProcessAllocatesWithJemalloc();
    void brokenConfigRefusesToStart();
    void aListenerOffLoopbackWithoutAnAdminTokenRefusesToStart();
    void headlessGatewayAnswersAndStopsOnSigterm();
    void jsonLogIsOneObjectPerLineWithTheRequestsFields();
    void sighupReloadsTheConfigFile();

private:
    QString writeFile(const QString &name, const QByteArray &contents);
    // A config file with `head` first and one provider, `fake`, serving test-model at `fake`.
    QString writeFakeProviderConfig(const QString &name, const QByteArray &head,
                                    const FakeUpstream &fake);
    // Starts the binary with `arguments`, collecting its standard output into `output`, and
    // returns the port it says it listens on; 0 when it did not say so in time.
    quint16 startHeadless(QProcess &process, QByteArray &output, const QStringList &arguments);

    QTemporaryDir m_dir;
};

void SwitchyardBinaryTest::initTestCase()
{
    QVERIFY2(QFile::exists(kBinary), qPrintable(kBinary));
    QVERIFY(m_dir.isValid());
}

QString SwitchyardBinaryTest::writeFile(const QString &name, const QByteArray &contents)
{
    const QString path = m_dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(contents) != contents.size())
        return {};
    return path;
}

void SwitchyardBinaryTest::checkConfigPrintsEachErrorWithFileLineAndColumn()
{
    const QString path = writeFile(QStringLiteral("broken.yaml"), kBrokenConfig);
    QVERIFY(!path.isEmpty());
    QProcess process;

    QVERIFY(runToExit(process, {QStringLiteral("--check-config"), path}));

    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 1);
    const QStringList errors = lines(process.readAllStandardError());
    QVERIFY(errors.size() >= 2);
    const QRegularExpression located(
        QStringLiteral("^%1:\\d+:\\d+: \\S").arg(QRegularExpression::escape(path)));
    for (qsizetype i = 0; i + 1 < errors.size(); ++i)
        QVERIFY2(located.match(errors[i]).hasMatch(), qPrintable(errors[i]));
    QVERIFY2(errors.contains(path +
                             QStringLiteral(":6:5: unknown key `modles` (did you mean `models`?)")),
             qPrintable(errors.join(QLatin1Char('\n'))));
    QCOMPARE(errors.constLast(),
             QStringLiteral("%1: %2 error(s)").arg(path).arg(errors.size() - 1));
}

void SwitchyardBinaryTest::checkConfigAcceptsTheDemo()
{
    const QString sourceDir = qEnvironmentVariable("SWITCHYARD_SOURCE_DIR");
    QVERIFY2(!sourceDir.isEmpty(), "SWITCHYARD_SOURCE_DIR is not set");
    const QString demo = sourceDir + QStringLiteral("/resources/demo.yaml");
    QProcess process;

    QVERIFY(runToExit(process, {QStringLiteral("--check-config"), demo}));

    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 0);
    QCOMPARE(QString::fromUtf8(process.readAllStandardOutput()).trimmed(),
             demo + QStringLiteral(": valid, 3 provider(s)"));
    QCOMPARE(process.readAllStandardError(), QByteArray());
}

// jemalloc, linked ahead of the C library, must be the allocator every library of the process
// calls: its statistics, asked for at exit through its own environment variable, prove it ran.
void SwitchyardBinaryTest::theProcessAllocatesWithJemalloc()
{
    if (!SWITCHYARD_LINKS_JEMALLOC)
        QSKIP("the sanitizer build keeps AddressSanitizer's allocator");
    QProcess process;
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    environment.insert(QStringLiteral("MALLOC_CONF"), QStringLiteral("stats_print:true"));
    process.setProcessEnvironment(environment);

    QVERIFY(runToExit(process, {QStringLiteral("--version")}));

    QCOMPARE(process.exitCode(), 0);
    const QByteArray statistics = process.readAllStandardError();
    QVERIFY2(statistics.contains("___ Begin jemalloc statistics ___"), statistics.left(500));
    // The allocations of starting Qt went through it, not only jemalloc's own few: the `total:`
    // row of its arena table, "total: <bytes> <allocations> ...", counts about 2,500 of them.
    // Loaded but bypassed by the C library's malloc, it counts 2.
    const QRegularExpression totalRow(QStringLiteral("\\ntotal:\\s+\\d+\\s+(\\d+)"));
    const QRegularExpressionMatch total = totalRow.match(QString::fromUtf8(statistics));
    QVERIFY2(total.hasMatch(), statistics.left(2000));
    QVERIFY2(total.captured(1).toLongLong() > 1000, qPrintable(total.captured(0)));
}

void SwitchyardBinaryTest::brokenConfigRefusesToStart()
{
    const QString path = writeFile(QStringLiteral("broken.yaml"), kBrokenConfig);
    QVERIFY(!path.isEmpty());
    QProcess process;

    QVERIFY(runToExit(process, {QStringLiteral("--headless"), QStringLiteral("--config"), path,
                                QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0")}));

    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 1);
    const QStringList errors = lines(process.readAllStandardError());
    QVERIFY2(errors.contains(path +
                             QStringLiteral(":6:5: unknown key `modles` (did you mean `models`?)")),
             qPrintable(errors.join(QLatin1Char('\n'))));
    QVERIFY(!errors.isEmpty());
    QVERIFY2(errors.constLast().startsWith(
                 QStringLiteral("switchyard: not starting: %1 has ").arg(path)),
             qPrintable(errors.constLast()));
    QVERIFY(!process.readAllStandardOutput().contains("base URL"));
}

void SwitchyardBinaryTest::aListenerOffLoopbackWithoutAnAdminTokenRefusesToStart()
{
    const QString path =
        writeFile(QStringLiteral("exposed.yaml"), "providers:\n"
                                                  "  - id: local\n"
                                                  "    kind: openai\n"
                                                  "    base_url: http://127.0.0.1:9/v1\n"
                                                  "    models: [test-model]\n");
    QVERIFY(!path.isEmpty());
    QProcess process;

    QVERIFY(runToExit(process, {QStringLiteral("--headless"), QStringLiteral("--config"), path,
                                QStringLiteral("--listen"), QStringLiteral("0.0.0.0:0")}));

    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 1);
    const QString errors = QString::fromUtf8(process.readAllStandardError());
    QVERIFY2(errors.contains(QStringLiteral(
                 "refusing to listen on 0.0.0.0:0: it is reachable from other machines, and "
                 "without `auth.admin_token` the admin API and /metrics would be open to them")),
             qPrintable(errors));
}

void SwitchyardBinaryTest::headlessGatewayAnswersAndStopsOnSigterm()
{
    FakeUpstream fake;
    const QString path =
        writeFakeProviderConfig(QStringLiteral("fake.yaml"), "listen: 127.0.0.1:8080\n", fake);
    QVERIFY(!path.isEmpty());
    QProcess process;
    QByteArray output;
    // --listen wins over the file's port.
    const quint16 port =
        startHeadless(process, output,
                      {QStringLiteral("--headless"), QStringLiteral("--config"), path,
                       QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0")});
    QVERIFY2(port > 0 && port != 8080, output.constData());

    TestClient client(port);
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished(30000));
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.body(), fake.completionBody);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("fake"));

    process.terminate(); // SIGTERM
    QTRY_COMPARE_WITH_TIMEOUT(process.state(), QProcess::NotRunning, 30000);
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QCOMPARE(process.exitCode(), 0);
}

void SwitchyardBinaryTest::jsonLogIsOneObjectPerLineWithTheRequestsFields()
{
    FakeUpstream fake;
    // The file asks for JSON at warning; the command line's --log-level wins over the file.
    const QString path =
        writeFakeProviderConfig(QStringLiteral("json-log.yaml"),
                                "listen: 127.0.0.1:0\nlog: {format: json, level: warning}\n", fake);
    QVERIFY(!path.isEmpty());
    QProcess process;
    QByteArray output;
    const quint16 port =
        startHeadless(process, output,
                      {QStringLiteral("--headless"), QStringLiteral("--config"), path,
                       QStringLiteral("--log-level"), QStringLiteral("info")});
    QVERIFY2(port > 0, output.constData());
    TestClient client(port);
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished(30000));
    QCOMPARE(client.status(), 200);
    process.terminate();
    QTRY_COMPARE_WITH_TIMEOUT(process.state(), QProcess::NotRunning, 30000);
    QCOMPARE(process.exitCode(), 0);

    const QStringList written = lines(process.readAllStandardError());
    QVERIFY(!written.isEmpty());
    QJsonObject requestLine;
    for (const QString &line : written) {
        QJsonParseError error;
        const QJsonObject object = QJsonDocument::fromJson(line.toUtf8(), &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, qPrintable(line));
        for (const char *member : {"time", "level", "logger", "message"})
            QVERIFY2(object.contains(QLatin1String(member)), qPrintable(line));
        if (object.value(QStringLiteral("message")).toString() ==
            QStringLiteral("request finished"))
            requestLine = object;
    }
    QCOMPARE(requestLine.value(QStringLiteral("logger")).toString(),
             QStringLiteral("switchyard.requests"));
    QCOMPARE(requestLine.value(QStringLiteral("status")).toInt(), 200);
    QCOMPARE(requestLine.value(QStringLiteral("provider")).toString(), QStringLiteral("fake"));
    QCOMPARE(requestLine.value(QStringLiteral("model")).toString(), QStringLiteral("test-model"));
    QCOMPARE(requestLine.value(QStringLiteral("attempts")).toInt(), 1);
    QCOMPARE(requestLine.value(QStringLiteral("streamed")).toBool(), false);
}

void SwitchyardBinaryTest::sighupReloadsTheConfigFile()
{
    FakeUpstream fake;
    // The watcher is off, so only the signal can make the gateway read the file again.
    const QByteArray head = "listen: 127.0.0.1:0\nconfig_file: {watch: false}\n";
    const QString path = writeFakeProviderConfig(QStringLiteral("sighup.yaml"), head, fake);
    QVERIFY(!path.isEmpty());
    QTemporaryDir state;
    QProcess process;
    QByteArray output;
    const quint16 port = startHeadless(process, output,
                                       {QStringLiteral("--headless"), QStringLiteral("--config"),
                                        path, QStringLiteral("--state-dir"), state.path()});
    QVERIFY2(port > 0, output.constData());
    const auto runningVersion = [port] {
        TestClient client(port);
        client.send("GET", "/admin/v1/config/status");
        if (!client.waitForFinished(10000))
            return -1;
        return QJsonDocument::fromJson(client.body())
            .object()
            .value(QStringLiteral("running_version"))
            .toInt();
    };
    QCOMPARE(runningVersion(), 1);

    // The file now names the provider differently; nothing happens until SIGHUP.
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QByteArray text = file.readAll();
    file.close();
    text.replace("id: fake", "id: renamed");
    QVERIFY(!writeFile(QStringLiteral("sighup.yaml"), text).isEmpty());
    QTest::qWait(300);
    QCOMPARE(runningVersion(), 1);
    ::kill(pid_t(process.processId()), SIGHUP);
    QTRY_COMPARE_WITH_TIMEOUT(runningVersion(), 2, 30000);

    TestClient client(port);
    client.post("/v1/chat/completions", chatBody("test-model", false));
    QVERIFY(client.waitForFinished(30000));
    QCOMPARE(client.status(), 200);
    QCOMPARE(client.header("x-switchyard-provider"), QByteArray("renamed"));
    QCOMPARE(process.state(), QProcess::Running); // SIGHUP reloads; it does not stop

    process.terminate();
    QTRY_COMPARE_WITH_TIMEOUT(process.state(), QProcess::NotRunning, 30000);
    QCOMPARE(process.exitCode(), 0);
}

QString SwitchyardBinaryTest::writeFakeProviderConfig(const QString &name, const QByteArray &head,
                                                      const FakeUpstream &fake)
{
    return writeFile(name, head +
                               "providers:\n"
                               "  - id: fake\n"
                               "    kind: openai\n"
                               "    base_url: " +
                               fake.baseUrl() + "\n    models: [test-model]\n");
}

quint16 SwitchyardBinaryTest::startHeadless(QProcess &process, QByteArray &output,
                                            const QStringList &arguments)
{
    connect(&process, &QProcess::readyReadStandardOutput, this,
            [&] { output += process.readAllStandardOutput(); });
    // Config versions go to the test's own folder, not the user's data directory.
    QStringList withState = arguments;
    if (!withState.contains(QStringLiteral("--state-dir")))
        withState << QStringLiteral("--state-dir") << m_dir.filePath(QStringLiteral("state"));
    process.start(kBinary, withState);
    if (!process.waitForStarted())
        return 0;
    const QRegularExpression baseUrl(
        QStringLiteral("OpenAI base URL http://127\\.0\\.0\\.1:(\\d+)/v1"));
    QDeadlineTimer deadline(30000);
    while (!baseUrl.match(QString::fromUtf8(output)).hasMatch() && !deadline.hasExpired() &&
           process.state() == QProcess::Running)
        QTest::qWait(20);
    return baseUrl.match(QString::fromUtf8(output)).captured(1).toUShort();
}

QTEST_GUILESS_MAIN(SwitchyardBinaryTest)
#include "tst_switchyard_binary.moc"
