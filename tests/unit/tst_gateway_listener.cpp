// The listener's hooks to the answering side: each admitted connection is announced once as it
// opens, before its first request is read, and its requests then arrive on that same socket; a
// refused connection is never announced. Real sockets on a loopback port.
#include "config/config_loader.h"
#include "config/config_store.h"
#include "http/gateway_listener.h"
#include "timing/clock.h"
#include "timing/deadline_scheduler.h"

#include <QPointer>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>

using namespace switchyard;
using namespace Qt::StringLiterals;

namespace {

constexpr int kWaitMs = 10000;

config::Config configWith(const QByteArray &yaml)
{
    config::LoadResult result = config::loadConfigText(
        yaml, u"gateway.yaml"_s, [](const QString &) { return std::nullopt; });
    if (!result.ok())
        qFatal("fixture does not load");
    return *result.config;
}

} // namespace

class GatewayListenerTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void announcesEachAdmittedConnectionBeforeItsRequests()
    {
        config::ConfigStore store(configWith("providers:\n"
                                             "  - {id: cloud, kind: simulated, models: [m]}\n"
                                             "limits:\n"
                                             "  max_connections_per_address: 1\n"));
        timing::DeadlineScheduler scheduler(timing::SteadyClock::instance());
        http::GatewayListener listener(store, scheduler);
        QList<QPointer<QTcpSocket>> opened;
        QList<QPointer<QTcpSocket>> answered;
        listener.setRequestHandler(
            [&](QTcpSocket *socket, http::IncomingRequest request) {
                QCOMPARE(request.path, u"/v1/models"_s);
                answered.append(socket);
            },
            [&](QTcpSocket *socket) {
                QVERIFY(answered.isEmpty()); // announced as it opens, not with a request
                opened.append(socket);
            });
        QVERIFY(listener.listen(QHostAddress::LocalHost, 0));

        QTcpSocket admitted;
        admitted.connectToHost(QHostAddress::LocalHost, listener.serverPort());
        QVERIFY(admitted.waitForConnected(kWaitMs));
        QTRY_COMPARE_WITH_TIMEOUT(opened.size(), 1, kWaitMs);
        QVERIFY(opened.first());
        QCOMPARE(opened.first()->peerPort(), admitted.localPort());

        // Over the per-address cap: refused with 503, never announced.
        QTcpSocket refused;
        refused.connectToHost(QHostAddress::LocalHost, listener.serverPort());
        QVERIFY(refused.waitForConnected(kWaitMs));
        refused.write("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
        QTRY_VERIFY_WITH_TIMEOUT(refused.bytesAvailable() > 0 ||
                                     refused.state() == QAbstractSocket::UnconnectedState,
                                 kWaitMs);
        QVERIFY(refused.readAll().startsWith("HTTP/1.1 503"));
        QCOMPARE(opened.size(), 1);

        admitted.write("GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n");
        QTRY_COMPARE_WITH_TIMEOUT(answered.size(), 1, kWaitMs);
        QCOMPARE(answered.first(), opened.first());
        QCOMPARE(opened.size(), 1);
    }
};

QTEST_GUILESS_MAIN(GatewayListenerTest)
#include "tst_gateway_listener.moc"
