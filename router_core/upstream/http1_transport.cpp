#include "upstream/http1_transport.h"

#include "httpwire/chunked_encoding.h"
#include "httpwire/header_text.h"
#include "protocol/decimal_text.h"

#include <QHostInfo>
#include <QSocketNotifier>
#include <QTimerEvent>
#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utility>

namespace switchyard::upstream {

using std::chrono::steady_clock;

namespace {

// What libcurl keeps a resolved name for: long enough that a busy gateway resolves each
// provider once a minute, short enough that a moved provider is found again soon.
constexpr std::chrono::seconds kResolvedNameLifetime{60};
// Reads in one pass for one connection before the event loop serves the others.
constexpr int kReadsPerPass = 4;
constexpr qsizetype kReadBufferBytes = 64 * 1024;

// A connection idle this long is checked before it carries a request: providers close idle ones
// after whole seconds (uvicorn 5 s, nginx 75 s), and the close may have arrived in the event
// loop's current pass, after its last look at the socket. Busier connections are not checked:
// the check is a system call, and at most a millisecond of that pass is at stake.
constexpr std::chrono::seconds kIdleBeforeCheck{1};
// How often idle connections are looked at for their age, when there are any.
constexpr std::chrono::seconds kIdleSweepInterval{30};

// Whether an idle connection can still carry a request: nothing to read (EAGAIN), as the
// provider sends nothing between answers; an end of file, a reset or stray bytes mean it cannot.
bool stillOpen(int socket)
{
    char byte = 0;
    const ssize_t peeked = ::recv(socket, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    return peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

// Where an answer's head ends: its lines end in CRLF, or in a bare LF as some hand-written
// servers send (RFC 9112 2.2 lets a recipient accept it, and libcurl does). textBytes covers the
// lines, each with its line end; headBytes the blank line too. Both -1 when the end is not there.
struct HeadEnd {
    qsizetype textBytes = -1;
    qsizetype headBytes = -1;
};

HeadEnd findHeadEnd(QByteArrayView bytes, qsizetype from)
{
    for (qsizetype at = bytes.indexOf('\n', from); at >= 0; at = bytes.indexOf('\n', at + 1)) {
        if (at + 1 < bytes.size() && bytes[at + 1] == '\n')
            return {at + 1, at + 2};
        if (at + 2 < bytes.size() && bytes[at + 1] == '\r' && bytes[at + 2] == '\n')
            return {at + 1, at + 3};
    }
    return {};
}

QByteArrayView withoutCarriageReturn(QByteArrayView line)
{
    return line.endsWith('\r') ? line.chopped(1) : line;
}

bool outOfLocalResources(int socketErrno)
{
    return socketErrno == EMFILE || socketErrno == ENFILE || socketErrno == ENOBUFS ||
           socketErrno == ENOMEM;
}

QString errnoText(int number)
{
    return QString::fromLocal8Bit(std::strerror(number));
}

// ASCII case aside; the lengths first, which spares most calls into Qt's compare.
bool equalsIgnoringCase(QByteArrayView a, QByteArrayView b)
{
    return a.size() == b.size() && a.compare(b, Qt::CaseInsensitive) == 0;
}

// Whether a comma-separated header value lists `token` (Connection: keep-alive, close).
bool listsToken(QByteArrayView value, QByteArrayView token)
{
    while (!value.isEmpty()) {
        const qsizetype comma = value.indexOf(',');
        const QByteArrayView item = comma < 0 ? value : value.first(comma);
        if (equalsIgnoringCase(item.trimmed(), token))
            return true;
        value = comma < 0 ? QByteArrayView() : value.sliced(comma + 1);
    }
    return false;
}

// The last coding a Transfer-Encoding lists: only "chunked" there frames the body.
bool endsInChunked(QByteArrayView value)
{
    const qsizetype comma = value.lastIndexOf(',');
    return equalsIgnoringCase((comma < 0 ? value : value.sliced(comma + 1)).trimmed(), "chunked");
}

} // namespace

struct Http1Transport::Target {
    QUrl url; // held, so its data is not freed and its address not reused (sameUrlData)
    QString host;
    QHostAddress literal; // when the host is an address, nothing is resolved
    quint16 port = 80;
    QByteArray hostKey; // "host:port": the idle pool's key
    QByteArray hostHeader;
    QByteArray requestTarget; // the path and query, as they go on the request line
};

struct Http1Transport::Connection {
    int socket = -1;
    QByteArray hostKey;
    ConnectionNotifier *read = nullptr;
    ConnectionNotifier *write = nullptr;
    Exchange *exchange = nullptr; // none while idle
    bool idle = false;
    bool closed = false;
    steady_clock::time_point idleSince;
};

struct Http1Transport::Exchange {
    enum class Stage { Resolving, Connecting, Exchanging, Done };
    enum class Framing { None, Length, Chunked, UntilClose };

    UpstreamObserver *observer = nullptr;
    Call *call = nullptr;
    QString host;
    quint16 port = 80;
    QByteArray hostKey;
    std::chrono::milliseconds connectTimeout{0};

    // The request as it goes out: the head built here, the body as given; let go once sent.
    QByteArray requestHead;
    QByteArray requestBody;
    qsizetype bytesSent = 0;
    bool requestComplete = false;
    bool headRequest = false;
    bool closeRequested = false; // the caller sent "Connection: close"

    Stage stage = Stage::Resolving;
    QList<QHostAddress> addresses;
    qsizetype nextAddress = 0;
    int lastConnectErrno = ECONNREFUSED;
    Connection *connection = nullptr;
    bool reusedConnection = false;
    int connectTimer = 0;
    int totalTimer = 0;

    // The answer.
    bool headReceived = false;
    bool anyAnswerByte = false;
    QByteArray headBuffer; // only when a head arrives in pieces
    QByteArray heldBody;   // what came with the head of a call its head's observer paused
    Framing framing = Framing::UntilClose;
    qint64 bodyRemaining = 0;
    httpwire::ChunkedDecoder chunked;
    bool keepAlive = true;
    bool paused = false;

    // An end decided where it cannot be reported at once (inside start(), or a completion held
    // while paused): reported from the event loop.
    bool endPending = false;
    TransportError pendingError = TransportError::None;
    QString pendingDescription;
};

// Calls the transport from its own event, as CurlTransport's notifiers do: a signal connection
// per notifier would cost about 300 bytes of every held stream.
class Http1Transport::ConnectionNotifier final : public QSocketNotifier {
public:
    ConnectionNotifier(Connection *connection, Type type, Http1Transport *transport)
        : QSocketNotifier(qintptr(connection->socket), type, transport), m_connection(connection),
          m_transport(transport)
    {}

protected:
    bool event(QEvent *event) override
    {
        if (event->type() != QEvent::SockAct)
            return QSocketNotifier::event(event);
        if (type() == Read)
            m_transport->onReadable(m_connection);
        else
            m_transport->onWritable(m_connection);
        return true;
    }

private:
    Connection *m_connection; // disabled before the connection is closed, freed after its pass
    Http1Transport *m_transport;
};

class Http1Transport::Call final : public UpstreamCall {
public:
    Call(Http1Transport *transport, Exchange *exchange)
        : m_transport(transport), m_exchange(exchange)
    {
        m_exchange->call = this;
    }
    ~Call() override
    {
        if (m_exchange)
            m_transport->cancel(m_exchange);
    }
    void detach() { m_exchange = nullptr; }
    void pauseReceiving() override
    {
        if (m_exchange)
            m_transport->setPaused(m_exchange, true);
    }
    void resumeReceiving() override
    {
        if (m_exchange)
            m_transport->setPaused(m_exchange, false);
    }
    bool requestSent() const override
    {
        return m_exchange && (m_exchange->stage == Exchange::Stage::Exchanging ||
                              m_exchange->stage == Exchange::Stage::Done);
    }

private:
    Http1Transport *m_transport;
    Exchange *m_exchange;
};

namespace {
// Every entry from the event loop or from a caller counts itself, so what a callback closes or
// cancels is freed only once no frame of this transport can still reach it.
struct HandlerScope {
    explicit HandlerScope(int &depth) : m_depth(depth) { ++m_depth; }
    ~HandlerScope() { --m_depth; }
    int &m_depth;
};
} // namespace

Http1Transport::Http1Transport(QObject *parent) : QObject(parent)
{
    m_readBuffer.resize(kReadBufferBytes);
}

Http1Transport::~Http1Transport()
{
    for (Exchange *exchange : m_exchanges) {
        if (exchange->call)
            exchange->call->detach();
        exchange->call = nullptr;
        exchange->observer = nullptr;
        if (exchange->connection)
            closeConnection(exchange->connection);
        delete exchange;
    }
    m_exchanges.clear();
    for (const std::vector<Connection *> &connections : QHash(m_idle)) {
        for (Connection *connection : connections)
            closeConnection(connection);
    }
    for (Exchange *exchange : m_disposed)
        delete exchange;
    for (Connection *connection : m_disposedConnections)
        delete connection;
}

bool Http1Transport::handles(const UpstreamRequest &request)
{
    return request.url.scheme() == QLatin1String("http") && request.proxy.isEmpty() &&
           request.caFile.isEmpty() && !request.overLibcurl;
}

const Http1Transport::Target &Http1Transport::targetFor(const QUrl &url)
{
    for (const std::unique_ptr<Target> &known : m_targets) {
        if (known && sameUrlData(known->url, url))
            return *known;
    }
    auto target = std::make_unique<Target>();
    target->url = url;
    target->host = url.host();
    target->port = quint16(url.port(80));
    target->literal = QHostAddress(target->host);
    const QByteArray encodedHost = url.host(QUrl::FullyEncoded).toLatin1();
    const QByteArray hostWithBrackets = target->literal.protocol() == QAbstractSocket::IPv6Protocol
                                            ? '[' + encodedHost + ']'
                                            : encodedHost;
    target->hostHeader =
        url.port() < 0 ? hostWithBrackets : hostWithBrackets + ':' + QByteArray::number(url.port());
    target->hostKey = hostWithBrackets + ':' + QByteArray::number(target->port);
    target->requestTarget =
        url.toEncoded(QUrl::RemoveScheme | QUrl::RemoveAuthority | QUrl::RemoveFragment);
    if (!target->requestTarget.startsWith('/'))
        target->requestTarget.prepend('/'); // "http://host?x=1" asks for "/?x=1"
    std::unique_ptr<Target> &slot = m_targets[m_nextTarget];
    m_nextTarget = (m_nextTarget + 1) % kTargetsKept;
    slot = std::move(target);
    return *slot;
}

std::unique_ptr<UpstreamCall> Http1Transport::start(const UpstreamRequest &request,
                                                    UpstreamObserver *observer)
{
    HandlerScope scope(m_handlerDepth);
    const Target &target = targetFor(request.url);
    auto *exchange = new Exchange;
    exchange->observer = observer;
    exchange->host = target.host;
    exchange->port = target.port;
    exchange->hostKey = target.hostKey;
    exchange->connectTimeout = request.connectTimeout;
    exchange->headRequest = request.method == "HEAD";
    exchange->requestBody = request.body;

    // The head in one block: request line, Host, the caller's headers in their order, and the
    // body's length unless the caller framed it. Measured first and copied into place: appending
    // piece by piece ran QByteArray's general insert path a dozen times a request, cold.
    bool hasHost = false;
    bool hasLength = false;
    qsizetype bytes = request.method.size() + 1 + target.requestTarget.size() + 11 + 2;
    for (const auto &[name, value] : request.headers) {
        bytes += name.size() + 2 + value.size() + 2;
        hasHost = hasHost || equalsIgnoringCase(name, "host");
        hasLength = hasLength || equalsIgnoringCase(name, "content-length") ||
                    equalsIgnoringCase(name, "transfer-encoding");
        // The caller asked for the connection's end after this answer (RFC 9112 9.6).
        if (equalsIgnoringCase(name, "connection") && listsToken(value, "close"))
            exchange->closeRequested = true;
    }
    if (!hasHost)
        bytes += 6 + target.hostHeader.size() + 2;
    const bool addLength = !hasLength && (!request.body.isEmpty() || request.method == "POST" ||
                                          request.method == "PUT" || request.method == "PATCH");
    std::array<char, 20> lengthDigits{};
    const QByteArrayView length =
        addLength ? protocol::decimalDigits(lengthDigits, quint64(request.body.size()))
                  : QByteArrayView();
    if (addLength)
        bytes += 16 + length.size() + 2;
    QByteArray &head = exchange->requestHead;
    head = QByteArray(bytes, Qt::Uninitialized);
    char *out = head.data();
    const auto put = [&out](QByteArrayView piece) {
        std::memcpy(out, piece.data(), size_t(piece.size()));
        out += piece.size();
    };
    put(request.method);
    put(" ");
    put(target.requestTarget);
    put(" HTTP/1.1\r\n");
    if (!hasHost) {
        put("Host: ");
        put(target.hostHeader);
        put("\r\n");
    }
    for (const auto &[name, value] : request.headers) {
        put(name);
        put(": ");
        put(value);
        put("\r\n");
    }
    if (addLength) {
        put("Content-Length: ");
        put(length);
        put("\r\n");
    }
    put("\r\n");
    Q_ASSERT(out == head.data() + head.size());

    auto call = std::make_unique<Call>(this, exchange);
    m_exchanges.push_back(exchange);
    if (request.totalTimeout.count() > 0)
        exchange->totalTimer = startTimer(request.totalTimeout, Qt::PreciseTimer);
    if (exchange->totalTimer)
        m_timers.emplace(exchange->totalTimer, exchange);
    Exchange *const outerStart = std::exchange(m_inStart, exchange);
    begin(exchange);
    m_inStart = outerStart;
    return call;
}

void Http1Transport::begin(Exchange *exchange)
{
    if (Connection *idle = takeIdle(exchange->hostKey)) {
        exchange->reusedConnection = true;
        exchange->connection = idle;
        idle->exchange = exchange;
        exchange->stage = Exchange::Stage::Exchanging;
        send(exchange);
        return;
    }
    // A connect timeout covers resolving the name too, as libcurl's does.
    exchange->connectTimer = startTimer(exchange->connectTimeout, Qt::PreciseTimer);
    if (exchange->connectTimer)
        m_timers.emplace(exchange->connectTimer, exchange);
    const QHostAddress literal(exchange->host);
    if (!literal.isNull()) {
        exchange->addresses = {literal};
        connectNext(exchange);
        return;
    }
    resolve(exchange);
}

void Http1Transport::resolve(Exchange *exchange)
{
    ResolvedHost &entry = m_hosts[exchange->host];
    if (!entry.addresses.isEmpty() && steady_clock::now() < entry.expires) {
        exchange->addresses = entry.addresses;
        connectNext(exchange);
        return;
    }
    entry.waiting.push_back(exchange);
    if (entry.resolving)
        return;
    entry.resolving = true;
    ++m_lookups;
    const QString host = exchange->host;
    QHostInfo::lookupHost(host, this, [this, host](const QHostInfo &info) {
        onResolved(host, info.addresses(),
                   info.error() == QHostInfo::NoError ? QString() : info.errorString());
    });
}

void Http1Transport::onResolved(const QString &host, const QList<QHostAddress> &addresses,
                                const QString &error)
{
    HandlerScope scope(m_handlerDepth);
    ResolvedHost &entry = m_hosts[host];
    entry.resolving = false;
    const bool found = error.isEmpty() && !addresses.isEmpty();
    if (found) {
        entry.addresses = addresses;
        entry.expires = steady_clock::now() + kResolvedNameLifetime;
    }
    const std::vector<Exchange *> waiting = std::exchange(entry.waiting, {});
    for (Exchange *exchange : waiting) {
        // Cancelled or ended by an earlier one's callback: still allocated until this frame's
        // flush, but no longer waiting.
        if (exchange->stage != Exchange::Stage::Resolving)
            continue;
        if (!found) {
            finish(exchange, TransportError::ConnectFailed,
                   QStringLiteral("could not resolve %1: %2")
                       .arg(host, error.isEmpty() ? QStringLiteral("no address") : error));
            continue;
        }
        exchange->addresses = addresses;
        connectNext(exchange);
    }
    flushDisposed();
}

void Http1Transport::connectNext(Exchange *exchange)
{
    exchange->stage = Exchange::Stage::Connecting;
    while (exchange->nextAddress < exchange->addresses.size()) {
        const QHostAddress &address = exchange->addresses[exchange->nextAddress++];
        sockaddr_storage storage{};
        socklen_t length = 0;
        if (address.protocol() == QAbstractSocket::IPv4Protocol) {
            auto *v4 = reinterpret_cast<sockaddr_in *>(&storage);
            v4->sin_family = AF_INET;
            v4->sin_port = htons(exchange->port);
            v4->sin_addr.s_addr = htonl(address.toIPv4Address());
            length = sizeof(sockaddr_in);
        } else if (address.protocol() == QAbstractSocket::IPv6Protocol) {
            auto *v6 = reinterpret_cast<sockaddr_in6 *>(&storage);
            v6->sin6_family = AF_INET6;
            v6->sin6_port = htons(exchange->port);
            const Q_IPV6ADDR bytes = address.toIPv6Address();
            std::memcpy(&v6->sin6_addr, bytes.c, sizeof(bytes.c));
            v6->sin6_scope_id = address.scopeId().toUInt();
            length = sizeof(sockaddr_in6);
        } else {
            continue;
        }
        const int socket =
            ::socket(storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (socket < 0) {
            const int socketErrno = errno;
            if (outOfLocalResources(socketErrno)) {
                // This process's own limit, never the provider's fault. Nothing was sent.
                finish(exchange, TransportError::LocalResources, errnoText(socketErrno));
                return;
            }
            exchange->lastConnectErrno = socketErrno;
            continue;
        }
        const int on = 1;
        ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
        ::setsockopt(socket, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
        const int connected = ::connect(socket, reinterpret_cast<sockaddr *>(&storage), length);
        if (connected < 0 && errno != EINPROGRESS) {
            exchange->lastConnectErrno = errno;
            ::close(socket);
            continue;
        }
        auto *connection = new Connection;
        connection->socket = socket;
        connection->hostKey = exchange->hostKey;
        connection->exchange = exchange;
        connection->read = new ConnectionNotifier(connection, QSocketNotifier::Read, this);
        ++m_openConnections;
        exchange->connection = connection;
        if (connected == 0) {
            onConnected(connection);
        } else {
            connection->read->setEnabled(false);
            connection->write = new ConnectionNotifier(connection, QSocketNotifier::Write, this);
        }
        return;
    }
    forgetAddresses(exchange->host);
    finish(exchange, TransportError::ConnectFailed, errnoText(exchange->lastConnectErrno));
}

void Http1Transport::forgetAddresses(const QString &host)
{
    // Every address of the name failed: the provider may have moved (a new deployment, a
    // service that changed its address), so the next call looks the name up again rather than
    // trying the same addresses until they expire. Calls to a provider that is down are few
    // once its breaker opens, so this costs few lookups.
    const auto found = m_hosts.find(host);
    if (found != m_hosts.end())
        found->addresses.clear();
}

void Http1Transport::onConnected(Connection *connection)
{
    Exchange *exchange = connection->exchange;
    if (exchange->connectTimer) {
        killTimer(exchange->connectTimer);
        m_timers.erase(exchange->connectTimer);
        exchange->connectTimer = 0;
    }
    exchange->stage = Exchange::Stage::Exchanging;
    connection->read->setEnabled(!exchange->paused);
    send(exchange);
}

void Http1Transport::send(Exchange *exchange)
{
    Connection *connection = exchange->connection;
    const qsizetype headBytes = exchange->requestHead.size();
    const qsizetype totalBytes = headBytes + exchange->requestBody.size();
    iovec pieces[2];
    int count = 0;
    if (exchange->bytesSent < headBytes) {
        pieces[count++] = {exchange->requestHead.data() + exchange->bytesSent,
                           size_t(headBytes - exchange->bytesSent)};
    }
    if (!exchange->requestBody.isEmpty()) {
        const qsizetype bodySent = std::max<qsizetype>(0, exchange->bytesSent - headBytes);
        pieces[count++] = {exchange->requestBody.data() + bodySent,
                           size_t(exchange->requestBody.size() - bodySent)};
    }
    msghdr message{};
    message.msg_iov = pieces;
    message.msg_iovlen = size_t(count);
    const ssize_t sent = ::sendmsg(connection->socket, &message, MSG_NOSIGNAL);
    if (sent < 0) {
        if (errno == EAGAIN || errno == EINTR) {
            if (!connection->write)
                connection->write =
                    new ConnectionNotifier(connection, QSocketNotifier::Write, this);
            connection->write->setEnabled(true);
            return;
        }
        const int sendErrno = errno;
        if (exchange->reusedConnection && exchange->bytesSent == 0) {
            // Refused before a byte went out: the provider closed the connection while it was
            // idle and cannot have seen this request. A fresh connection carries it.
            closeConnection(connection);
            exchange->reusedConnection = false;
            begin(exchange);
            return;
        }
        if (exchange->reusedConnection && !exchange->anyAnswerByte) {
            endNotSentAgain(exchange);
            return;
        }
        finish(exchange, TransportError::ConnectionLost, errnoText(sendErrno));
        return;
    }
    exchange->bytesSent += sent;
    if (exchange->bytesSent < totalBytes) {
        if (!connection->write)
            connection->write = new ConnectionNotifier(connection, QSocketNotifier::Write, this);
        connection->write->setEnabled(true);
        return;
    }
    // All out: a held stream keeps neither its head nor its body, an agent's whole
    // conversation, for as long as it runs.
    exchange->requestComplete = true;
    exchange->requestHead = QByteArray();
    exchange->requestBody = QByteArray();
    if (connection->write && connection->write->isEnabled())
        connection->write->setEnabled(false);
}

void Http1Transport::onWritable(Connection *connection)
{
    HandlerScope scope(m_handlerDepth);
    Exchange *exchange = connection->exchange;
    if (!exchange || connection->closed) {
        connection->write->setEnabled(false);
    } else if (exchange->stage == Exchange::Stage::Connecting) {
        int socketError = 0;
        socklen_t length = sizeof(socketError);
        ::getsockopt(connection->socket, SOL_SOCKET, SO_ERROR, &socketError, &length);
        connection->write->setEnabled(false);
        if (socketError != 0) {
            exchange->lastConnectErrno = socketError;
            closeConnection(connection);
            connectNext(exchange);
        } else {
            onConnected(connection);
        }
    } else if (!exchange->requestComplete) {
        send(exchange);
    } else {
        connection->write->setEnabled(false);
    }
    flushDisposed();
}

void Http1Transport::onReadable(Connection *connection)
{
    HandlerScope scope(m_handlerDepth);
    if (connection->closed) {
        flushDisposed();
        return;
    }
    Exchange *exchange = connection->exchange;
    if (!exchange) {
        // Idle and readable: the provider closed the connection (or sent bytes nobody asked
        // for). Either way it cannot carry another request.
        closeConnection(connection);
        flushDisposed();
        return;
    }
    for (int pass = 0; pass < kReadsPerPass; ++pass) {
        const ssize_t received =
            ::recv(connection->socket, m_readBuffer.data(), size_t(m_readBuffer.size()), 0);
        if (received < 0) {
            if (errno != EAGAIN && errno != EINTR) {
                const int receiveErrno = errno;
                if (exchange->reusedConnection && !exchange->anyAnswerByte)
                    endNotSentAgain(exchange);
                else
                    finish(exchange, TransportError::ConnectionLost, errnoText(receiveErrno));
            }
            break;
        }
        if (received == 0) {
            if (exchange->headReceived && exchange->framing == Exchange::Framing::UntilClose) {
                exchange->keepAlive = false;
                complete(exchange);
            } else if (exchange->reusedConnection && !exchange->anyAnswerByte) {
                endNotSentAgain(exchange);
            } else {
                finish(exchange, TransportError::ConnectionLost,
                       QStringLiteral("the provider closed the connection"));
            }
            break;
        }
        if (!receive(exchange, QByteArrayView(m_readBuffer.constData(), received)))
            break;
        if (received < m_readBuffer.size() || exchange->paused)
            break;
    }
    flushDisposed();
}

bool Http1Transport::receive(Exchange *exchange, QByteArrayView bytes)
{
    exchange->anyAnswerByte = true;
    if (!exchange->headReceived) {
        if (!receiveHead(exchange, bytes))
            return false;
        if (!exchange->headReceived)
            return true; // the rest of the head is still to come
        const bool noBody =
            exchange->framing == Exchange::Framing::None ||
            (exchange->framing == Exchange::Framing::Length && exchange->bodyRemaining == 0);
        if (noBody) {
            if (!bytes.isEmpty())
                exchange->keepAlive = false; // bytes nobody asked for: the connection is spent
            complete(exchange);
            return false;
        }
    }
    if (bytes.isEmpty())
        return true;
    if (exchange->paused) {
        // Paused by the head's observer: what came with the head waits for the resume.
        exchange->heldBody = bytes.toByteArray();
        return false;
    }
    return receiveBody(exchange, bytes);
}

bool Http1Transport::receiveHead(Exchange *exchange, QByteArrayView &bytes)
{
    while (!exchange->headReceived) {
        // The head's end, found in what arrived now or in the pieces kept before it.
        QByteArrayView text;
        qsizetype consumed = 0;
        if (exchange->headBuffer.isEmpty()) {
            const HeadEnd end = findHeadEnd(bytes, 0);
            if (end.textBytes < 0) {
                if (bytes.size() > kMaxHeadBytes) {
                    finish(exchange, TransportError::ProtocolError,
                           QStringLiteral("the answer's head is larger than %1 bytes")
                               .arg(kMaxHeadBytes));
                    return false;
                }
                exchange->headBuffer = bytes.toByteArray();
                bytes = {};
                return true;
            }
            text = bytes.first(end.textBytes);
            consumed = end.headBytes;
        } else {
            const qsizetype searchFrom = std::max<qsizetype>(0, exchange->headBuffer.size() - 2);
            exchange->headBuffer.append(bytes);
            const HeadEnd end = findHeadEnd(exchange->headBuffer, searchFrom);
            if (end.textBytes < 0) {
                if (exchange->headBuffer.size() > kMaxHeadBytes) {
                    finish(exchange, TransportError::ProtocolError,
                           QStringLiteral("the answer's head is larger than %1 bytes")
                               .arg(kMaxHeadBytes));
                    return false;
                }
                bytes = {};
                return true;
            }
            // What followed the head in this read starts after it in the buffer.
            const qsizetype keptBefore = exchange->headBuffer.size() - bytes.size();
            text = QByteArrayView(exchange->headBuffer).first(end.textBytes);
            consumed = end.headBytes - keptBefore;
        }

        // "HTTP/1.1 200 OK": the version, then three digits.
        const qsizetype lineEnd = text.indexOf('\n');
        const QByteArrayView statusLine = withoutCarriageReturn(text.first(lineEnd));
        int status = 0;
        bool valid =
            statusLine.startsWith("HTTP/1.") && statusLine.size() >= 12 && statusLine[8] == ' ';
        for (qsizetype i = 9; valid && i < 12; ++i) {
            valid = statusLine[i] >= '0' && statusLine[i] <= '9';
            status = status * 10 + (statusLine[i] - '0');
        }
        if (!valid || (statusLine.size() > 12 && statusLine[12] != ' ')) {
            finish(exchange, TransportError::ProtocolError,
                   QStringLiteral("the status line is \"%1\"")
                       .arg(QString::fromLatin1(
                           statusLine.first(std::min<qsizetype>(80, statusLine.size())))));
            return false;
        }
        const bool http10 = statusLine[7] == '0';

        UpstreamResponseHead head;
        head.status = status;
        head.headers.reserve(16); // one allocation for a provider's usual dozen
        bool chunked = false;
        bool otherCoding = false;
        bool hasLength = false;
        qint64 length = 0;
        bool closeAfter = http10;
        qsizetype lineStart = lineEnd + 1;
        while (lineStart < text.size()) {
            qsizetype next = text.indexOf('\n', lineStart);
            if (next < 0)
                next = text.size();
            const QByteArrayView line =
                withoutCarriageReturn(text.sliced(lineStart, next - lineStart));
            lineStart = next + 1;
            const qsizetype colon = line.indexOf(':');
            if (colon <= 0)
                continue; // not a header line: nothing a caller could use
            QByteArray name = httpwire::lowerCaseHeaderName(line.first(colon));
            const QByteArrayView value = line.sliced(colon + 1).trimmed();
            if (name == "transfer-encoding") {
                chunked = endsInChunked(value);
                otherCoding = !chunked;
            } else if (name == "content-length") {
                bool numeric = false;
                const qint64 parsed = value.toLongLong(&numeric);
                if (!numeric || parsed < 0 || (hasLength && parsed != length)) {
                    finish(exchange, TransportError::ProtocolError,
                           QStringLiteral("Content-Length \"%1\" is not a length")
                               .arg(QString::fromLatin1(
                                   value.first(std::min<qsizetype>(40, value.size())))));
                    return false;
                }
                hasLength = true;
                length = parsed;
            } else if (name == "connection") {
                if (listsToken(value, "close"))
                    closeAfter = true;
                else if (http10 && listsToken(value, "keep-alive"))
                    closeAfter = false;
            }
            head.headers.append({std::move(name), httpwire::headerText(value)});
        }
        bytes = bytes.sliced(consumed);
        exchange->headBuffer = QByteArray();

        if (status >= 100 && status < 200 && status != 101)
            continue; // "100 Continue" and its kind: the real head follows

        exchange->headReceived = true;
        exchange->keepAlive = !closeAfter && !exchange->closeRequested;
        if (exchange->headRequest || status == 204 || status == 304 || status == 101) {
            exchange->framing = Exchange::Framing::None;
            exchange->keepAlive = exchange->keepAlive && status != 101;
        } else if (chunked) {
            exchange->framing = Exchange::Framing::Chunked;
            // Both framings, or chunked on HTTP/1.0: read as chunked (RFC 9112 6.3), but the
            // sender disagrees with itself about where the answer ends, so nothing after it on
            // this connection is trusted (a smuggled answer would be read as the next call's).
            if (hasLength || http10)
                exchange->keepAlive = false;
        } else if (otherCoding || !hasLength) {
            exchange->framing = Exchange::Framing::UntilClose;
            exchange->keepAlive = false;
        } else {
            exchange->framing = Exchange::Framing::Length;
            exchange->bodyRemaining = length;
        }
        exchange->observer->onResponseHead(head);
        if (!exchange->observer)
            return false; // the observer cancelled the call
    }
    return true;
}

bool Http1Transport::receiveBody(Exchange *exchange, QByteArrayView bytes)
{
    switch (exchange->framing) {
    case Exchange::Framing::Length: {
        const qsizetype taken = qsizetype(std::min<qint64>(exchange->bodyRemaining, bytes.size()));
        if (taken < bytes.size())
            exchange->keepAlive = false; // more than the answer said: the connection is spent
        exchange->bodyRemaining -= taken;
        exchange->observer->onResponseBody(bytes.first(taken));
        if (!exchange->observer)
            return false;
        if (exchange->bodyRemaining == 0) {
            complete(exchange);
            return false;
        }
        return true;
    }
    case Exchange::Framing::Chunked: {
        // Borrowed, not used in place: an observer may start a call whose answer decodes here.
        QByteArray decoded;
        decoded.swap(m_decoded);
        qsizetype consumed = bytes.size();
        const httpwire::ChunkedDecoder::Status status =
            exchange->chunked.feed(bytes, decoded, &consumed);
        if (status == httpwire::ChunkedDecoder::Status::Malformed) {
            finish(exchange, TransportError::ProtocolError,
                   QStringLiteral("the chunked body is malformed"));
            return false;
        }
        if (!decoded.isEmpty())
            exchange->observer->onResponseBody(decoded);
        decoded.clear();
        if (m_decoded.isNull())
            m_decoded.swap(decoded);
        if (!exchange->observer)
            return false;
        if (status == httpwire::ChunkedDecoder::Status::Finished) {
            if (consumed < bytes.size())
                exchange->keepAlive = false;
            complete(exchange);
            return false;
        }
        return true;
    }
    case Exchange::Framing::UntilClose:
        exchange->observer->onResponseBody(bytes);
        return exchange->observer != nullptr;
    case Exchange::Framing::None:
        break;
    }
    return true;
}

void Http1Transport::complete(Exchange *exchange)
{
    exchange->stage = Exchange::Stage::Done;
    if (Connection *connection = std::exchange(exchange->connection, nullptr)) {
        connection->exchange = nullptr;
        if (exchange->keepAlive && exchange->requestComplete)
            keepIdle(connection);
        else
            closeConnection(connection);
    }
    if (exchange->paused) {
        // Back-pressure holds the end too, as libcurl's pause does: reported on resume.
        exchange->endPending = true;
        exchange->pendingError = TransportError::None;
        return;
    }
    finish(exchange, TransportError::None, {});
}

void Http1Transport::finish(Exchange *exchange, TransportError error, const QString &detail)
{
    end(exchange, error,
        error == TransportError::None ? QString()
                                      : QStringLiteral("%1 (%2)").arg(describe(error), detail));
}

void Http1Transport::endNotSentAgain(Exchange *exchange)
{
    // The same words as CurlTransport's, where libcurl's own re-send is refused.
    end(exchange, TransportError::ConnectionLost,
        QStringLiteral("the kept-alive connection closed before the answer; the request was not "
                       "sent again"));
}

void Http1Transport::end(Exchange *exchange, TransportError error, const QString &description)
{
    if (m_inStart == exchange) {
        // Failed inside start(): the caller has no call to hold yet. Reported from the loop.
        exchange->endPending = true;
        exchange->pendingError = error;
        exchange->pendingDescription = description;
        schedulePendingEnds();
        return;
    }
    stopTimers(exchange);
    exchange->stage = Exchange::Stage::Done;
    if (Connection *connection = std::exchange(exchange->connection, nullptr)) {
        connection->exchange = nullptr;
        closeConnection(connection); // an answer left unfinished: the connection is spent
    }
    UpstreamObserver *observer = std::exchange(exchange->observer, nullptr);
    if (exchange->call)
        exchange->call->detach();
    exchange->call = nullptr;
    dispose(exchange);
    if (!observer)
        return;
    UpstreamResult result;
    result.error = error;
    result.description = description;
    observer->onFinished(result);
}

void Http1Transport::setPaused(Exchange *exchange, bool paused)
{
    HandlerScope scope(m_handlerDepth);
    exchange->paused = paused;
    if (Connection *connection = exchange->connection) {
        if (exchange->stage == Exchange::Stage::Exchanging &&
            connection->read->isEnabled() == paused)
            connection->read->setEnabled(!paused);
    }
    if (!paused && (exchange->endPending || !exchange->heldBody.isEmpty()))
        schedulePendingEnds();
    flushDisposed();
}

void Http1Transport::cancel(Exchange *exchange)
{
    HandlerScope scope(m_handlerDepth);
    exchange->observer = nullptr;
    exchange->call = nullptr;
    stopTimers(exchange);
    if (exchange->stage == Exchange::Stage::Resolving) {
        auto found = m_hosts.find(exchange->host);
        if (found != m_hosts.end())
            std::erase(found->waiting, exchange);
    }
    if (Connection *connection = std::exchange(exchange->connection, nullptr)) {
        connection->exchange = nullptr;
        closeConnection(connection); // mid-exchange: what is on the wire belongs to no one
    }
    exchange->stage = Exchange::Stage::Done;
    dispose(exchange);
    flushDisposed();
}

void Http1Transport::schedulePendingEnds()
{
    if (m_pendingEndsScheduled)
        return;
    m_pendingEndsScheduled = true;
    QMetaObject::invokeMethod(this, &Http1Transport::reportPendingEnds, Qt::QueuedConnection);
}

void Http1Transport::reportPendingEnds()
{
    HandlerScope scope(m_handlerDepth);
    m_pendingEndsScheduled = false;
    const std::vector<Exchange *> exchanges = m_exchanges; // an end may start further calls
    for (Exchange *exchange : exchanges) {
        if (exchange->paused || !exchange->observer)
            continue;
        if (!exchange->heldBody.isEmpty()) {
            const QByteArray held = std::exchange(exchange->heldBody, {});
            receiveBody(exchange, held);
            continue;
        }
        if (!exchange->endPending)
            continue;
        exchange->endPending = false;
        end(exchange, exchange->pendingError, exchange->pendingDescription);
    }
    flushDisposed();
}

void Http1Transport::timerEvent(QTimerEvent *event)
{
    HandlerScope scope(m_handlerDepth);
    if (event->timerId() == m_idleSweep.timerId()) {
        closeAgedIdleConnections();
        flushDisposed();
        return;
    }
    const auto found = m_timers.find(event->timerId());
    if (found == m_timers.end()) {
        killTimer(event->timerId());
        return;
    }
    Exchange *exchange = found->second;
    const bool connecting = exchange->stage == Exchange::Stage::Resolving ||
                            exchange->stage == Exchange::Stage::Connecting;
    if (exchange->stage == Exchange::Stage::Resolving) {
        auto host = m_hosts.find(exchange->host);
        if (host != m_hosts.end())
            std::erase(host->waiting, exchange);
    } else if (exchange->stage == Exchange::Stage::Connecting) {
        forgetAddresses(exchange->host);
    }
    finish(exchange, connecting ? TransportError::ConnectTimeout : TransportError::TotalTimeout,
           QStringLiteral("no answer within the time allowed"));
    flushDisposed();
}

void Http1Transport::stopTimers(Exchange *exchange)
{
    for (int *timer : {&exchange->connectTimer, &exchange->totalTimer}) {
        if (*timer) {
            killTimer(*timer);
            m_timers.erase(*timer);
            *timer = 0;
        }
    }
}

Http1Transport::Connection *Http1Transport::takeIdle(const QByteArray &hostKey)
{
    const auto found = m_idle.find(hostKey);
    if (found == m_idle.end())
        return nullptr;
    std::vector<Connection *> &connections = found.value();
    const steady_clock::time_point now = steady_clock::now();
    while (!connections.empty()) {
        Connection *connection = connections.back(); // the warmest
        connections.pop_back();
        connection->idle = false;
        --m_idleConnections;
        const steady_clock::duration idleFor = now - connection->idleSince;
        if (idleFor < kMaxIdleAge && (idleFor < kIdleBeforeCheck || stillOpen(connection->socket)))
            return connection;
        closeConnection(connection);
    }
    return nullptr;
}

void Http1Transport::keepIdle(Connection *connection)
{
    if (m_idleConnections >= kMaxIdleConnections) {
        closeConnection(connection);
        return;
    }
    connection->idle = true;
    connection->idleSince = steady_clock::now();
    ++m_idleConnections;
    m_idle[connection->hostKey].push_back(connection);
    if (!m_idleSweep.isActive())
        m_idleSweep.start(int(std::chrono::milliseconds(kIdleSweepInterval).count()),
                          Qt::VeryCoarseTimer, this);
    // Watched while idle: nothing arrives unless the provider closes the connection.
    if (!connection->read->isEnabled())
        connection->read->setEnabled(true);
    if (connection->write && connection->write->isEnabled())
        connection->write->setEnabled(false);
}

void Http1Transport::closeAgedIdleConnections()
{
    // A provider no longer called would otherwise keep its idle connections open for good.
    const steady_clock::time_point now = steady_clock::now();
    std::vector<Connection *> aged;
    for (const std::vector<Connection *> &connections : std::as_const(m_idle)) {
        for (Connection *connection : connections) {
            if (now - connection->idleSince >= kMaxIdleAge)
                aged.push_back(connection);
        }
    }
    for (Connection *connection : aged)
        closeConnection(connection);
    if (m_idleConnections == 0)
        m_idleSweep.stop();
}

void Http1Transport::closeConnection(Connection *connection)
{
    if (connection->closed)
        return;
    connection->closed = true;
    if (connection->idle) {
        connection->idle = false;
        --m_idleConnections;
        const auto found = m_idle.find(connection->hostKey);
        if (found != m_idle.end())
            std::erase(found.value(), connection);
    }
    if (connection->exchange)
        connection->exchange->connection = nullptr;
    connection->exchange = nullptr;
    // Disabled before the descriptor is closed, as its number may be reused at once; deleted
    // later, as this may run inside one of the notifier's own activations.
    for (ConnectionNotifier *notifier : {connection->read, connection->write}) {
        if (notifier) {
            notifier->setEnabled(false);
            notifier->deleteLater();
        }
    }
    ::close(connection->socket);
    --m_openConnections;
    m_disposedConnections.push_back(connection);
}

void Http1Transport::dispose(Exchange *exchange)
{
    std::erase(m_exchanges, exchange);
    m_disposed.push_back(exchange);
}

void Http1Transport::flushDisposed()
{
    if (m_handlerDepth > 1)
        return; // a frame below may still hold one of them
    for (Exchange *exchange : std::exchange(m_disposed, {}))
        delete exchange;
    for (Connection *connection : std::exchange(m_disposedConnections, {}))
        delete connection;
}

} // namespace switchyard::upstream
