#include "fake_upstream.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QTimer>
#include <algorithm>

namespace switchyard::testing {

QByteArray FakeUpstream::ReceivedRequest::header(QByteArrayView name) const
{
    for (const auto &[key, value] : headers) {
        if (key == name)
            return value;
    }
    return {};
}

struct FakeUpstream::Connection {
    QPointer<QTcpSocket> socket;
    QByteArray buffer;
    bool streaming = false;
    int eventsSent = 0;
    int eventsToSend = 0;
    bool cut = false;
    bool sendDone = true;
    int requestsReceived = 0;
};

QByteArray chatBody(const QByteArray &model, bool stream, const QByteArray &content)
{
    return R"({"model":")" + model + R"(","stream":)" + (stream ? "true" : "false") +
           R"(,"messages":[{"role":"user","content":")" + content + R"("}]})";
}

QString tlsTestFile(const QString &name)
{
    return qEnvironmentVariable("SWITCHYARD_SOURCE_DIR") + QStringLiteral("/tests/data/tls/") +
           name;
}

FakeUpstream::TlsFiles loopbackTlsFiles()
{
    return {tlsTestFile(QStringLiteral("server.pem")), tlsTestFile(QStringLiteral("server.key"))};
}

FakeUpstream::FakeUpstream(QObject *parent)
    : QObject(parent), m_server(std::make_unique<QTcpServer>())
{
    listen();
}

FakeUpstream::FakeUpstream(const TlsFiles &tls, QObject *parent) : QObject(parent), m_tls(true)
{
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setLocalCertificateChain(QSslCertificate::fromPath(tls.certificateFile));
    QFile keyFile(tls.privateKeyFile);
    if (!keyFile.open(QIODevice::ReadOnly))
        qFatal("cannot read the fake's TLS key %s", qPrintable(tls.privateKeyFile));
    configuration.setPrivateKey(QSslKey(&keyFile, QSsl::Ec));
    if (configuration.localCertificate().isNull() || configuration.privateKey().isNull())
        qFatal("the fake's TLS certificate or key does not load");
    configuration.setPeerVerifyMode(QSslSocket::VerifyNone); // clients bring no certificate
    auto server = std::make_unique<QSslServer>();
    server->setSslConfiguration(configuration);
    // A socket is pending only once its handshake is done; one that fails it never is.
    connect(server.get(), &QTcpServer::pendingConnectionAvailable, this,
            &FakeUpstream::onNewConnection);
    m_server = std::move(server);
    listen();
}

void FakeUpstream::listen()
{
    // Qt's default backlog of 50 would make a burst of connections wait for SYN retries.
    m_server->setListenBacklogSize(1024);
    m_server->listen(QHostAddress::LocalHost, 0);
    connect(m_server.get(), &QTcpServer::newConnection, this, &FakeUpstream::onNewConnection);
}

FakeUpstream::~FakeUpstream()
{
    // The sockets die with the server, after this object's other members: cut them loose first.
    for (QTcpSocket *socket : m_server->findChildren<QTcpSocket *>())
        socket->disconnect(this);
}

QByteArray FakeUpstream::baseUrl() const
{
    return (m_tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + QByteArray::number(port()) +
           "/v1";
}

void FakeUpstream::onNewConnection()
{
    while (QTcpSocket *socket = m_server->nextPendingConnection()) {
        m_connections.push_back(
            std::make_unique<Connection>(Connection{socket, {}, false, 0, 0, false, true, 0}));
        Connection *connection = m_connections.back().get();
        ++m_openConnections;
        connect(socket, &QTcpSocket::readyRead, this,
                [this, connection] { onReadyRead(connection); });
        connect(socket, &QTcpSocket::disconnected, this, [this, connection, socket] {
            --m_openConnections;
            ++m_closedConnections;
            m_manualStreams.removeAll(connection);
            connection->socket = nullptr; // whatever is still pending for it stops here
            socket->deleteLater();
        });
        // A TLS socket is handed over after its handshake, and the request may have arrived
        // with it.
        if (socket->bytesAvailable() > 0)
            onReadyRead(connection);
    }
}

void FakeUpstream::onReadyRead(Connection *connection)
{
    connection->buffer.append(connection->socket->readAll());
    while (true) {
        const qsizetype headerEnd = connection->buffer.indexOf("\r\n\r\n");
        if (headerEnd < 0)
            return;
        const QList<QByteArray> lines = connection->buffer.left(headerEnd).split('\n');
        ReceivedRequest request;
        const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
        request.method = requestLine.value(0);
        request.path = requestLine.value(1);
        qint64 contentLength = 0;
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const qsizetype colon = lines[i].indexOf(':');
            if (colon <= 0)
                continue;
            const QByteArray name = lines[i].left(colon).trimmed().toLower();
            const QByteArray value = lines[i].mid(colon + 1).trimmed();
            request.headers.append({name, value});
            if (name == "content-length")
                contentLength = value.toLongLong();
        }
        if (connection->buffer.size() < headerEnd + 4 + contentLength)
            return;
        request.body = connection->buffer.mid(headerEnd + 4, contentLength);
        connection->buffer.remove(0, headerEnd + 4 + contentLength);
        m_requests.append(request);
        ++connection->requestsReceived;
        const Mode modeNow = scriptedModes.isEmpty() ? mode : scriptedModes.takeFirst();
        if (answerDelayMs > 0) {
            QTimer::singleShot(answerDelayMs, this, [this, connection, request, modeNow] {
                if (connection->socket)
                    answer(connection, request, modeNow);
            });
        } else {
            answer(connection, request, modeNow);
            if (!connection->socket)
                return; // the answer was to drop the connection
        }
    }
}

void FakeUpstream::answer(Connection *connection, const ReceivedRequest &request, Mode modeNow)
{
    QTcpSocket *socket = connection->socket;
    const bool wantsStream = request.body.contains(R"("stream":true)");
    const auto head = [&](int code, const QByteArray &contentType, qint64 length) {
        QByteArray text =
            "HTTP/1.1 " + QByteArray::number(code) + " X\r\nContent-Type: " + contentType + "\r\n";
        for (const auto &[name, value] : extraHeaders)
            text += name + ": " + value + "\r\n";
        text += length >= 0 ? "Content-Length: " + QByteArray::number(length) + "\r\n\r\n"
                            : QByteArray("Transfer-Encoding: chunked\r\n\r\n");
        socket->write(text);
    };
    const auto whole = [&](int code, const QByteArray &body) {
        head(code, "application/json", body.size());
        socket->write(body);
        ++m_answersCompleted;
    };
    switch (modeNow) {
    case Mode::Hang:
        return;
    case Mode::Reset:
        socket->abort();
        return;
    case Mode::Status: {
        QByteArray body = statusBody;
        if (echoHeadersInStatus) {
            // As some providers do in their errors: the request back, credentials included.
            QStringList echoed;
            for (const auto &[name, value] : request.headers)
                echoed.append(QString::fromLatin1(name + ": " + value));
            const QString message =
                QStringLiteral("bad credentials; you sent %1 with %2")
                    .arg(QString::fromLatin1(request.path), echoed.join(QStringLiteral("; ")));
            body = QJsonDocument(QJsonObject{{QStringLiteral("error"),
                                              QJsonObject{{QStringLiteral("message"), message}}}})
                       .toJson(QJsonDocument::Compact);
        }
        head(status, statusContentType, body.size());
        socket->write(body);
        ++m_answersCompleted;
        return;
    }
    case Mode::Garbage:
        whole(200, "this is {not json");
        return;
    case Mode::CloseOnReuse:
        if (connection->requestsReceived > 1) {
            socket->disconnectFromHost(); // all of the request was read: a clean close
            return;
        }
        [[fallthrough]];
    case Mode::NotAStream:
    case Mode::Answer:
        if (!wantsStream || modeNow == Mode::NotAStream) {
            whole(200, completionBody);
            return;
        }
        break;
    case Mode::CutStream:
    case Mode::StreamNoDone:
        break;
    }
    head(200, "text/event-stream", -1);
    connection->streaming = true;
    connection->eventsSent = 0;
    connection->eventsToSend = modeNow == Mode::CutStream ? cutAfterEvents : streamEvents;
    connection->cut = modeNow == Mode::CutStream;
    connection->sendDone = modeNow != Mode::StreamNoDone;
    if (manualStreaming)
        m_manualStreams.append(connection);
    streamNext(connection);
}

void FakeUpstream::writeEvent(Connection *connection, const QByteArray &payload)
{
    const QByteArray event = "data: " + payload + "\n\n";
    connection->socket->write(QByteArray::number(event.size(), 16) + "\r\n" + event + "\r\n");
}

void FakeUpstream::streamNext(Connection *connection)
{
    if (!connection->socket)
        return;
    if (connection->eventsSent < connection->eventsToSend) {
        writeEvent(
            connection,
            R"({"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":[{"index":0,)"
            R"("delta":{"content":"t)" +
                QByteArray::number(connection->eventsSent) + QByteArray(eventPaddingBytes, 'p') +
                R"("},"finish_reason":null}]})");
        ++connection->eventsSent;
        if (!manualStreaming) {
            QTimer::singleShot(eventIntervalMs, this,
                               [this, connection] { streamNext(connection); });
        }
        return;
    }
    finishStream(connection);
}

void FakeUpstream::finishStream(Connection *connection)
{
    m_manualStreams.removeAll(connection);
    if (connection->cut) {
        connection->socket->disconnectFromHost(); // no final chunk: the stream is cut
        return;
    }
    writeEvent(connection, R"({"id":"chatcmpl-fake","object":"chat.completion.chunk","choices":)"
                           R"([{"index":0,"delta":{},"finish_reason":"stop"}]})");
    if (connection->sendDone) {
        writeEvent(connection, "[DONE]");
        if (!afterDone.isEmpty()) {
            connection->socket->write(QByteArray::number(afterDone.size(), 16) + "\r\n" +
                                      afterDone + "\r\n");
        }
    }
    if (closeAfterDone) {
        connection->socket->disconnectFromHost(); // [DONE] sent, the response never ended
        return;
    }
    if (!endAfterDone)
        return;
    connection->socket->write("0\r\n\r\n");
    ++m_answersCompleted;
}

int FakeUpstream::requestsWithId(const QByteArray &requestId) const
{
    return int(std::count_if(m_requests.cbegin(), m_requests.cend(), [&](const auto &request) {
        return request.header("x-request-id") == requestId;
    }));
}

qint64 FakeUpstream::pendingWriteBytes() const
{
    qint64 pending = 0;
    for (const auto &connection : m_connections) {
        if (connection->socket)
            pending += connection->socket->bytesToWrite();
    }
    return pending;
}

void FakeUpstream::releaseEvent()
{
    const QList<Connection *> streams = m_manualStreams;
    for (Connection *connection : streams)
        streamNext(connection);
}

void FakeUpstream::closeConnections()
{
    for (const auto &connection : m_connections) {
        if (connection->socket)
            connection->socket->disconnectFromHost();
    }
}

} // namespace switchyard::testing
