#include "test_client.h"

#include <QDeadlineTimer>
#include <QNetworkProxy>
#include <QTest>

namespace switchyard::testing {

TestClient::TestClient(quint16 port, QObject *parent) : TestClient(port, QHostAddress(), parent) {}

TestClient::TestClient(quint16 port, const QHostAddress &from, QObject *parent) : QObject(parent)
{
    connect(&m_socket, &QTcpSocket::readyRead, this, &TestClient::onReadyRead);
    connect(&m_socket, &QTcpSocket::disconnected, this, [this] { m_closed = true; });
    connect(&m_socket, &QTcpSocket::errorOccurred, this, [this] {
        if (m_socket.state() != QAbstractSocket::ConnectedState && !m_closed)
            m_connectionFailed = true;
    });
    // Straight to the gateway: asking the machine's proxy settings would make the tests depend
    // on them (and on the files the proxy library reads).
    m_socket.setProxy(QNetworkProxy::NoProxy);
    if (!from.isNull() && !m_socket.bind(from))
        m_connectionFailed = true;
    m_socket.connectToHost(QHostAddress::LocalHost, port);
}

void TestClient::resetAnswer()
{
    m_buffer.clear();
    m_status = 0;
    m_interimStatuses.clear();
    m_headers.clear();
    m_headersDone = false;
    m_chunked = false;
    m_contentLength = -1;
    m_decoder = httpwire::ChunkedDecoder();
    m_sse = upstream::SseParser();
    m_body.clear();
    m_events.clear();
    m_finished = false;
}

void TestClient::sendRaw(const QByteArray &bytes)
{
    resetAnswer();
    m_socket.write(bytes);
}

void TestClient::send(const QByteArray &method, const QByteArray &path, const QByteArray &body,
                      const QList<QPair<QByteArray, QByteArray>> &headers)
{
    resetAnswer();
    QByteArray request = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    bool hasContentType = false;
    for (const auto &[name, value] : headers) {
        request += name + ": " + value + "\r\n";
        hasContentType = hasContentType || name.toLower() == "content-type";
    }
    if (!body.isEmpty() && !hasContentType)
        request += "Content-Type: application/json\r\n";
    if (!body.isEmpty() || method == "POST")
        request += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    request += "\r\n" + body;
    m_socket.write(request);
}

QByteArray TestClient::header(QByteArrayView lowerCaseName) const
{
    for (const auto &[name, value] : m_headers) {
        if (name == lowerCaseName)
            return value;
    }
    return {};
}

bool TestClient::waitForFinished(int timeoutMs)
{
    QDeadlineTimer deadline(timeoutMs);
    while (!m_finished && !deadline.hasExpired())
        QTest::qWait(5);
    return m_finished;
}

void TestClient::pauseReading()
{
    m_readingPaused = true;
    m_socket.setReadBufferSize(64 * 1024);
}

void TestClient::resumeReading()
{
    m_readingPaused = false;
    m_socket.setReadBufferSize(0);
    onReadyRead();
}

void TestClient::onReadyRead()
{
    if (m_readingPaused)
        return;
    const QByteArray incoming = m_socket.readAll();
    m_raw.append(incoming);
    if (m_headersDone) {
        consumeBody(incoming);
        return;
    }
    m_buffer.append(incoming);
    while (!m_headersDone) {
        if (!parseHead())
            return;
    }
    const QByteArray rest = m_buffer;
    m_buffer.clear();
    consumeBody(rest);
}

// Parses one header block from the buffer; false when it is not complete yet. An interim (1xx)
// answer is recorded and dropped, so the final answer's head is parsed next.
bool TestClient::parseHead()
{
    const qsizetype end = m_buffer.indexOf("\r\n\r\n");
    if (end < 0)
        return false;
    const QList<QByteArray> lines = m_buffer.left(end).split('\n');
    const int status = lines.value(0).split(' ').value(1).toInt();
    m_buffer.remove(0, end + 4);
    if (status >= 100 && status < 200) {
        m_interimStatuses.append(status);
        return true;
    }
    m_status = status;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = lines[i].left(colon).trimmed().toLower();
        const QByteArray value = lines[i].mid(colon + 1).trimmed();
        m_headers.append({name, value});
        if (name == "transfer-encoding" && value.toLower() == "chunked")
            m_chunked = true;
        if (name == "content-length")
            m_contentLength = value.toLongLong();
    }
    m_headersDone = true;
    return true;
}

void TestClient::consumeBody(QByteArrayView bytes)
{
    if (m_finished)
        return;
    QByteArray payload;
    if (m_chunked) {
        const auto status = m_decoder.feed(bytes, payload);
        if (status == httpwire::ChunkedDecoder::Status::Malformed)
            m_framingError = true;
        if (status == httpwire::ChunkedDecoder::Status::Finished)
            m_finished = true;
    } else {
        payload = bytes.toByteArray();
    }
    m_body.append(payload);
    if (header("content-type").startsWith("text/event-stream"))
        m_sse.feed(payload, m_events);
    if (!m_chunked && m_contentLength >= 0 && m_body.size() >= m_contentLength)
        m_finished = true;
}

} // namespace switchyard::testing
