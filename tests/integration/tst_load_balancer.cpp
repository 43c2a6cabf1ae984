// Two Switchyard processes (the shipped binary, headless) in a fleet on one Redis (Debian's
// redis-server), behind a real load balancer (Debian's HAProxy), both started by the test on
// loopback ports of their own, in front of one fake provider. Clients stream requests through
// HAProxy while a node restarts gracefully (SIGTERM: nobody sees an error) and while a node is
// killed (SIGKILL: only what it held fails, visibly, and nothing hangs).
#include "fleet_test_bed.h"
#include "test_client.h"

#include <QDeadlineTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>
#include <arpa/inet.h>
#include <fcntl.h>
#include <functional>
#include <memory>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

using namespace switchyard;
using namespace switchyard::testing;
using namespace Qt::StringLiterals;

namespace {

const QString kBinary = QStringLiteral(SWITCHYARD_BINARY);

// How long one request through the balancer may take before the test calls it hung. Generous:
// a slow, shared machine must not fail the test, and a hang is what it exists to catch.
constexpr int kRequestTimeoutMs = 60000;

// Debian's HAProxy in the foreground (-db), with its config in the test's temporary directory
// and its statistics on a Unix socket there. It listens on a socket the test bound to port 0
// and hands over (`bind fd@N`): a port of its own with no race for it.
class HaProxy {
public:
    struct Server {
        QString name;
        quint16 port = 0;
    };

    ~HaProxy()
    {
        if (m_listenSocket >= 0)
            ::close(m_listenSocket);
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(10000);
        }
    }

    // False, after a warning saying why, when it cannot start.
    bool start(const QString &directory, const QList<Server> &servers)
    {
        // Debian installs it in /usr/sbin, which a user's PATH may not hold.
        QString binary = QStandardPaths::findExecutable(u"haproxy"_s);
        if (binary.isEmpty())
            binary = QStandardPaths::findExecutable(u"haproxy"_s, {u"/usr/sbin"_s});
        if (binary.isEmpty()) {
            qWarning("haproxy is not installed (scripts/setup.sh installs it)");
            return false;
        }
        if (!bindListenSocket())
            return false;
        m_statsSocket = directory + u"/haproxy.sock"_s;
        const QString configPath = directory + u"/haproxy.cfg"_s;
        QFile file(configPath);
        const QByteArray text = config(servers);
        if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size()) {
            qWarning("cannot write %s", qPrintable(configPath));
            return false;
        }
        file.close();
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        QObject::connect(&m_process, &QProcess::readyReadStandardOutput, &m_process,
                         [this] { m_output += m_process.readAllStandardOutput(); });
        // Only HAProxy inherits the listening socket: the nodes, started the same way, must not
        // hold it open.
        m_process.setChildProcessModifier([fd = m_listenSocket] { ::fcntl(fd, F_SETFD, 0); });
        m_process.start(binary, {u"-f"_s, configPath, u"-db"_s});
        if (!m_process.waitForStarted(10000)) {
            qWarning("haproxy did not start: %s", qPrintable(m_process.errorString()));
            return false;
        }
        ::close(std::exchange(m_listenSocket, -1));
        // Ready once its statistics socket answers.
        if (!QTest::qWaitFor([this] { return !stats().isEmpty() || !running(); }, 15000) ||
            !running()) {
            qWarning("haproxy did not come up: %s", m_output.constData());
            return false;
        }
        return true;
    }

    bool running() const { return m_process.state() != QProcess::NotRunning; }
    quint16 port() const { return m_port; }
    QByteArray output() const { return m_output; }

    // The server's state as HAProxy's health checks see it: "UP", "DOWN", "UP 1/2" (going
    // down), "DOWN 1/2" (coming up)...; empty when it cannot be read.
    QString serverStatus(const QString &server) const { return statField(server, u"status"_s); }

private:
    QByteArray config(const QList<Server> &servers) const
    {
        // The configuration docs/fleet.md recommends, with shorter check intervals so that the
        // test runs quickly. `x-served-by` is the test's own: it tells which node answered.
        QByteArray text = "global\n"
                          "    stats socket " +
                          m_statsSocket.toUtf8() +
                          " mode 600 level admin\n"
                          "defaults\n"
                          "    mode http\n"
                          "    timeout connect 2s\n"
                          "    timeout client 5m\n"
                          "    timeout server 5m\n"
                          "    timeout http-keep-alive 60s\n"
                          "    timeout check 2s\n"
                          "    retries 3\n"
                          "    option redispatch 1\n"
                          "frontend gateway\n"
                          "    bind fd@" +
                          QByteArray::number(m_listenSocket) +
                          "\n"
                          "    default_backend switchyard\n"
                          "backend switchyard\n"
                          "    balance roundrobin\n"
                          "    option httpchk GET /readyz\n"
                          "    http-check expect status 200\n"
                          "    http-response set-header x-served-by %s\n"
                          "    default-server inter 200ms fall 2 rise 2\n";
        for (const Server &server : servers)
            text += "    server " + server.name.toUtf8() +
                    " 127.0.0.1:" + QByteArray::number(server.port) + " check\n";
        return text;
    }

    bool bindListenSocket()
    {
        m_listenSocket = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;
        socklen_t length = sizeof address;
        if (m_listenSocket < 0 ||
            ::bind(m_listenSocket, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
            ::listen(m_listenSocket, 1024) != 0 ||
            ::getsockname(m_listenSocket, reinterpret_cast<sockaddr *>(&address), &length) != 0) {
            qWarning("cannot bind a loopback socket for haproxy");
            return false;
        }
        m_port = ntohs(address.sin_port);
        return true;
    }

    // "show stat" as CSV lines, the first naming the columns ("# pxname,svname,...").
    QList<QByteArray> stats() const
    {
        QLocalSocket socket;
        socket.connectToServer(m_statsSocket);
        if (!socket.waitForConnected(2000))
            return {};
        socket.write("show stat\n");
        QByteArray reply;
        // HAProxy closes the socket after answering a single command.
        while (socket.state() == QLocalSocket::ConnectedState && socket.waitForReadyRead(2000))
            reply += socket.readAll();
        reply += socket.readAll();
        return reply.trimmed().split('\n');
    }

    QString statField(const QString &server, const QString &column) const
    {
        const QList<QByteArray> lines = stats();
        if (lines.isEmpty())
            return {};
        const QList<QByteArray> names = lines.first().mid(2).split(',');
        const qsizetype index = names.indexOf(column.toUtf8());
        for (const QByteArray &line : lines) {
            const QList<QByteArray> fields = line.split(',');
            if (fields.size() > index && index >= 0 && fields.value(0) == "switchyard" &&
                fields.value(1) == server.toUtf8())
                return QString::fromUtf8(fields.at(index));
        }
        return {};
    }

    QProcess m_process;
    QByteArray m_output;
    QString m_statsSocket;
    int m_listenSocket = -1;
    quint16 m_port = 0;
};

// Clients sending requests through the balancer without pause, each on its own kept-alive
// connection (a new one when the last was closed), alternating plain and streamed requests.
// Every request's fate is recorded.
class Traffic {
public:
    struct Request {
        int number = 0;
        bool streamed = false;
        bool finished = false; // its fate is known
        bool ok = false;
        QString problem;     // why it is not ok
        QByteArray servedBy; // the node, from the balancer's x-served-by
        QDeadlineTimer deadline;
    };

    Traffic(quint16 port, int clients) : m_port(port), m_slots(size_t(clients)) {}

    // Sends, reads and records until `done` holds or `timeoutMs` is over; false on timeout.
    bool runUntil(const std::function<bool()> &done, int timeoutMs)
    {
        QDeadlineTimer deadline(timeoutMs);
        while (!done()) {
            if (deadline.hasExpired())
                return false;
            pump();
            QTest::qWait(5);
        }
        return true;
    }
    // Stops sending and waits for every request sent to finish (or to time out as hung).
    bool drain()
    {
        m_sending = false;
        return runUntil([this] { return inFlight() == 0; }, kRequestTimeoutMs + 10000);
    }

    int inFlight() const
    {
        int count = 0;
        for (const Slot &slot : m_slots)
            count += slot.request >= 0 ? 1 : 0;
        return count;
    }
    // The numbers of the requests running now.
    QList<int> running() const
    {
        QList<int> numbers;
        for (const Slot &slot : m_slots) {
            if (slot.request >= 0)
                numbers.append(slot.request);
        }
        return numbers;
    }
    // A stream from `node` has begun and is not over: that node holds a request.
    bool streamRunningOn(const QByteArray &node) const
    {
        for (const Slot &slot : m_slots) {
            if (slot.request >= 0 && slot.client && m_requests[slot.request].streamed &&
                slot.client->headReceived() && !slot.client->finished() &&
                slot.client->header("x-served-by") == node)
                return true;
        }
        return false;
    }
    const std::vector<Request> &requests() const { return m_requests; }
    int sent() const { return int(m_requests.size()); }
    // Finished requests numbered `from` or later that `node` answered without a problem.
    int answeredBy(const QByteArray &node, int from = 0) const
    {
        int count = 0;
        for (const Request &request : m_requests)
            count += request.number >= from && request.ok && request.servedBy == node ? 1 : 0;
        return count;
    }
    QStringList failures(int from = 0) const
    {
        QStringList lines;
        for (const Request &request : m_requests) {
            if (request.number >= from && request.finished && !request.ok)
                lines.append(u"request %1 (%2, node %3): %4"_s.arg(request.number)
                                 .arg(request.streamed ? u"streamed"_s : u"plain"_s)
                                 .arg(QString::fromUtf8(request.servedBy), request.problem));
        }
        return lines;
    }

private:
    struct Slot {
        std::unique_ptr<TestClient> client;
        int request = -1; // the number of the request it runs, -1: none
    };

    void pump()
    {
        for (Slot &slot : m_slots) {
            if (slot.request >= 0)
                check(slot);
            if (slot.request < 0 && m_sending)
                send(slot);
        }
    }

    void send(Slot &slot)
    {
        if (!slot.client || slot.client->connectionClosed() || slot.client->connectionFailed())
            slot.client = std::make_unique<TestClient>(m_port);
        Request request;
        request.number = int(m_requests.size());
        // Two plain, two streamed, and so on: round robin then gives each node both kinds.
        request.streamed = request.number / 2 % 2 == 1;
        request.deadline = QDeadlineTimer(kRequestTimeoutMs);
        slot.client->post("/v1/chat/completions",
                          chatBody("test-model", request.streamed,
                                   "request " + QByteArray::number(request.number)));
        slot.request = request.number;
        m_requests.push_back(request);
    }

    // Records the request's fate once it is known: answered whole, or failed as a client sees
    // it (an error status, a connection closed before the answer's end, nothing in time).
    void check(Slot &slot)
    {
        Request &request = m_requests[size_t(slot.request)];
        TestClient &client = *slot.client;
        if (client.headReceived())
            request.servedBy = client.header("x-served-by");
        if (client.finished()) {
            request.problem = problemOf(client, request.streamed);
        } else if (client.connectionFailed()) {
            request.problem = u"connection failed"_s;
        } else if (client.connectionClosed()) {
            request.problem =
                client.headReceived()
                    ? u"connection closed after status %1 before the answer's end"_s.arg(
                          client.status())
                    : u"connection closed without an answer"_s;
        } else if (request.deadline.hasExpired()) {
            request.problem = u"hung: no answer in %1 ms"_s.arg(kRequestTimeoutMs);
            slot.client.reset(); // its connection is given up
        } else {
            return;
        }
        request.finished = true;
        request.ok = request.problem.isEmpty();
        slot.request = -1;
    }

    static QString problemOf(const TestClient &client, bool streamed)
    {
        if (client.status() != 200)
            return u"status %1: %2"_s.arg(client.status()).arg(QString::fromUtf8(client.body()));
        if (!streamed) {
            const QJsonObject answer = QJsonDocument::fromJson(client.body()).object();
            return answer.value(u"object"_s).toString() == u"chat.completion"_s
                       ? QString()
                       : u"not a completion: %1"_s.arg(QString::fromUtf8(client.body()));
        }
        for (const upstream::SseEvent &event : client.events()) {
            if (event.event == "error" || event.data.contains("\"error\""))
                return u"error event: %1"_s.arg(QString::fromUtf8(event.data));
        }
        if (client.events().isEmpty() || !client.events().constLast().isDone())
            return u"stream without [DONE]"_s;
        return {};
    }

    quint16 m_port;
    std::vector<Slot> m_slots;
    std::vector<Request> m_requests;
    bool m_sending = true;
};

} // namespace

class TestLoadBalancer : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void aNodeRestartedWithSigtermLosesNoRequest();
    void aNodeKilledFailsOnlyWhatItHeld();

private:
    // Starts a and b, then HAProxy in front of them; true once both are up behind it.
    bool startFleetBehindHaProxy();

    std::unique_ptr<FleetTestBed> m_bed;
    std::unique_ptr<HaProxy> m_haproxy;
};

void TestLoadBalancer::initTestCase()
{
    QVERIFY2(QFile::exists(kBinary), qPrintable(kBinary));
}

void TestLoadBalancer::init()
{
    m_bed = std::make_unique<FleetTestBed>(kBinary);
    QVERIFY(m_bed->start());
    // drain_delay: longer than the balancer takes to see /readyz fail (2 checks 200 ms apart),
    // with room for a slow machine.
    m_bed->config.extra = "limits:\n"
                          "  drain_delay: 3s\n"
                          "  shutdown_grace: 30s\n";
    // Answers that take a while, so that requests are in flight whenever a node goes: a plain
    // answer after 150 ms, a stream of 8 events 50 ms apart.
    m_bed->fake().answerDelayMs = 150;
    m_bed->fake().streamEvents = 8;
    m_bed->fake().eventIntervalMs = 50;
}

void TestLoadBalancer::cleanup()
{
    m_haproxy.reset();
    m_bed.reset();
}

bool TestLoadBalancer::startFleetBehindHaProxy()
{
    GatewayProcess &a = m_bed->startNode(u"a"_s);
    GatewayProcess &b = m_bed->startNode(u"b"_s);
    if (!a.waitForPort() || !b.waitForPort()) {
        qWarning("a node did not start: %s %s", a.errors().constData(), b.errors().constData());
        return false;
    }
    m_haproxy = std::make_unique<HaProxy>();
    if (!m_haproxy->start(m_bed->directory(), {{u"a"_s, a.port()}, {u"b"_s, b.port()}}))
        return false;
    return QTest::qWaitFor(
        [this] {
            return m_haproxy->serverStatus(u"a"_s) == u"UP"_s &&
                   m_haproxy->serverStatus(u"b"_s) == u"UP"_s;
        },
        20000);
}

void TestLoadBalancer::aNodeRestartedWithSigtermLosesNoRequest()
{
    QVERIFY(startFleetBehindHaProxy());
    Traffic traffic(m_haproxy->port(), 8);
    // Both nodes serve before the restart.
    QVERIFY(traffic.runUntil(
        [&] { return traffic.answeredBy("a") >= 20 && traffic.answeredBy("b") >= 20; }, 60000));

    GatewayProcess &a = m_bed->node(0);
    const quint16 port = a.port();
    QVERIFY(traffic.runUntil([&] { return traffic.streamRunningOn("a"); }, 30000));
    a.terminate();
    // The balancer sees it go, while the node still serves what it took.
    QVERIFY(traffic.runUntil([&] { return m_haproxy->serverStatus(u"a"_s) == u"DOWN"_s; }, 30000));
    QVERIFY(traffic.runUntil([&] { return !a.running(); }, 60000));
    QCOMPARE(a.exitStatus(), QProcess::NormalExit);
    QCOMPARE(a.exitCode(), 0);
    const int beforeRestart = traffic.sent();

    // Back on the same port, where the balancer looks for it, with the same state.
    GatewayProcess &again =
        m_bed->startNode(u"a"_s, {.extraArguments = {u"--listen"_s, u"127.0.0.1:%1"_s.arg(port)}});
    QVERIFY2(again.waitForPort() == port, again.errors().constData());
    QVERIFY(traffic.runUntil([&] { return m_haproxy->serverStatus(u"a"_s) == u"UP"_s; }, 60000));
    QVERIFY(traffic.runUntil([&] { return traffic.answeredBy("a", beforeRestart) >= 20; }, 60000));
    QVERIFY(traffic.drain());

    const QStringList failures = traffic.failures();
    qInfo("%d requests through the balancer, %d answered by a, %d by b", traffic.sent(),
          traffic.answeredBy("a"), traffic.answeredBy("b"));
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(u'\n')));
}

void TestLoadBalancer::aNodeKilledFailsOnlyWhatItHeld()
{
    QVERIFY(startFleetBehindHaProxy());
    Traffic traffic(m_haproxy->port(), 8);
    QVERIFY(traffic.runUntil(
        [&] { return traffic.answeredBy("a") >= 20 && traffic.answeredBy("b") >= 20; }, 60000));
    QVERIFY(traffic.failures().isEmpty());

    GatewayProcess &b = m_bed->node(1);
    QVERIFY(traffic.runUntil([&] { return traffic.streamRunningOn("b"); }, 30000));
    // Killed and reaped before the clients send anything more: the requests running now are
    // exactly those that may have been on b when it died.
    const QList<int> heldAtKill = traffic.running();
    const int firstAfterKill = traffic.sent();
    b.kill();
    QVERIFY(!b.running());
    QVERIFY(traffic.runUntil([&] { return m_haproxy->serverStatus(u"b"_s) == u"DOWN"_s; }, 30000));
    QVERIFY(traffic.runUntil([&] { return traffic.answeredBy("a", firstAfterKill) >= 40; }, 60000));
    QVERIFY(traffic.drain()); // none hangs: each finished, one way or another, in time

    // What b held failed, each in a way its client saw; nothing else did.
    QStringList unexpected;
    int failed = 0;
    for (const Traffic::Request &request : traffic.requests()) {
        if (request.ok)
            continue;
        ++failed;
        QVERIFY2(!request.problem.startsWith(u"hung"_s), qPrintable(request.problem));
        if (!heldAtKill.contains(request.number) || request.servedBy == "a")
            unexpected.append(u"request %1: %2"_s.arg(request.number).arg(request.problem));
    }
    qInfo("%d requests through the balancer; %d of the %lld running at the kill failed:\n%s",
          traffic.sent(), failed, static_cast<long long>(heldAtKill.size()),
          qPrintable(traffic.failures().join(u'\n')));
    QVERIFY2(unexpected.isEmpty(), qPrintable(unexpected.join(u'\n')));
    // At least the stream b was sending when it died: the kill did cut something.
    QVERIFY(failed >= 1);
    // After it, the other node answers everything.
    QVERIFY2(traffic.failures(firstAfterKill).isEmpty(),
             qPrintable(traffic.failures(firstAfterKill).join(u'\n')));
}

QTEST_GUILESS_MAIN(TestLoadBalancer)
#include "tst_load_balancer.moc"
