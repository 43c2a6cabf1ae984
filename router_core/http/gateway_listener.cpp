#include "http/gateway_listener.h"

#include "execution/client_channel.h"
#include "http/closing_answer.h"
#include "http/refused_connection.h"
#include "http/request_head.h"
#include "httpwire/chunked_encoding.h"
#include "protocol/openai_error.h"

#include <QEvent>
#include <QFile>
#include <QLoggingCategory>
#include <QPointer>
#include <QScopeGuard>
#include <QSocketNotifier>
#include <QSslKey>
#include <QSslSocket>
#include <QTcpSocket>
#include <algorithm>
#include <array>
#include <cerrno>
#include <optional>
#include <sys/socket.h>
#include <utility>

Q_LOGGING_CATEGORY(lcListener, "switchyard.listener")

namespace switchyard::http {

namespace {

using std::chrono::milliseconds;

// How long a connection closed with an answer (a 408, 413, 431) is kept after the answer was
// written, reading and discarding what the client still sends (see sendClosingAnswer). Also the
// longest a client that does not read its answer can keep the connection.
constexpr milliseconds kLingerAfterAnswer{2000};
// After an accept() error such as running out of descriptors, the wait before accepting again.
constexpr milliseconds kAcceptRetryDelay{1000};
// Connections accepted in one turn of the engine loop, and the part of the turn after which no
// more are (the first of a turn always is). Qt's accept loop takes what the listen backlog holds
// in one go, again and again while a burst keeps coming, at tens of microseconds each (socket,
// notifier, connection): a burst of 9,900 held the loop for up to 1.9 s. Accepting stays cheap
// next to starting a request, and a connection left in the backlog is worse off than one
// accepted: when the backlog overflows, the kernel drops handshakes (the client retries a second
// later, then three) or resets them. So a turn accepts for a few milliseconds, as many as come.
constexpr int kAcceptsPerTurn = 1024;
constexpr std::chrono::milliseconds kAcceptTimePerTurn{5};

QString describeDuration(milliseconds duration)
{
    return duration.count() % 1000 == 0 ? QStringLiteral("%1 s").arg(duration.count() / 1000)
                                        : QStringLiteral("%1 ms").arg(duration.count());
}

protocol::ApiError requestTimeout(const QString &message)
{
    return {408,
            message,
            QStringLiteral("invalid_request_error"),
            {},
            QStringLiteral("request_timeout"),
            {}};
}

protocol::ApiError tooManyConnections(const QString &message)
{
    // Connections come and go within seconds; a client told to wait longer would wait for
    // nothing.
    return {503,
            message,
            QStringLiteral("server_error"),
            {},
            QStringLiteral("too_many_connections"),
            QByteArray("1")};
}

// What a connection takes from the config when it is accepted, and keeps: a config applied
// while it is open changes nothing for it.
struct ConnectionLimits {
    qint64 maxBodyBytes = 0;
    milliseconds headerTimeout{0};
    milliseconds bodyTimeout{0};
    milliseconds keepAliveIdle{0};
};

// One client connection from accept to close: reads its requests (head, then body, a chunked
// one decoded) and hands each on whole, counts the requests read and the answers finished, and
// moves its one Deadline as it goes from reading headers, to reading a body, to being answered,
// to idle.
class ClientConnection final : public QObject {
    // For findChild on its socket. A name would do too, but costs every connection an
    // allocated name and the object's extra data: 200 bytes a held stream.
    Q_OBJECT
public:
    // An admitted connection, read request by request while the server answers them.
    ClientConnection(QTcpSocket *socket, const ConnectionLimits &limits,
                     std::shared_ptr<ConnectionLedger> ledger, timing::DeadlineScheduler &scheduler)
        : QObject(socket), m_socket(socket), m_limits(limits), m_ledger(std::move(ledger)),
          m_address(socket->peerAddress()), m_deadline(scheduler, [this] { onDeadline(); })
    {
        m_ledger->opened(m_address);
        connect(socket, &QIODevice::readyRead, this, &ClientConnection::onReadyRead);
        connect(socket, &QAbstractSocket::disconnected, this, [this] {
            if (m_clientListener)
                m_clientListener->onClientGone();
        });
        connect(socket, &QIODevice::bytesWritten, this, [this] {
            if (m_clientListener)
                m_clientListener->onClientDrained();
        });
        readDirectly(socket);
        // The first request is owed from the moment the connection opens: one that sends
        // nothing at all is closed when the header time is over.
        enterPhase(Phase::Headers, m_limits.headerTimeout);
    }

    ~ClientConnection() override { m_ledger->closed(m_address); }

    // Who hears of the client while its request is answered (GatewayListener::watchClient).
    void setClientListener(execution::ClientListener *listener) { m_clientListener = listener; }
    execution::ClientListener *clientListener() const { return m_clientListener; }

    void answerFinished()
    {
        m_clientListener = nullptr; // that answer's request hears no more of its client
        ++m_answersFinished;
        if (m_continueOwed && m_answersFinished >= m_answersBeforeContinue)
            sendContinue();
        if (m_state == State::Done && m_answersFinished >= m_requestsRead) {
            closeQuietly(); // the last request asked for it
            return;
        }
        if (m_phase == Phase::Finishing) {
            if (m_answersFinished >= m_answersBeforeRefusal)
                sendAndClose(*m_refusal);
            return;
        }
        // Only when nothing is being read either: a pipelined request already arriving keeps
        // its header or body time.
        if (m_phase == Phase::Answering && m_answersFinished >= m_requestsRead)
            enterPhase(Phase::Idle, m_limits.keepAliveIdle);
    }

private:
    // Unframed: refused, nothing more is read as requests. Done: a request asked to close the
    // connection after its answer; whatever follows it is read and dropped.
    enum class State { Headers, Body, ChunkedBody, Unframed, Done };
    // What the connection's one deadline watches.
    enum class Phase {
        Headers,   // a request's header block is owed: header_timeout
        Body,      // its body is owed: body_timeout
        Answering, // every request read is being answered: no deadline, however long it takes
        Idle,      // nothing to read or answer: keep_alive_idle
        Finishing, // refused; earlier answers still leave before the refusal: no deadline
        Closing,   // the last answer was written: at most kLingerAfterAnswer more
    };

    void enterPhase(Phase phase, std::optional<milliseconds> deadline = std::nullopt)
    {
        m_phase = phase;
        m_phaseChangedWhileReading = false;
        if (deadline)
            m_deadline.armIn(*deadline);
        else
            m_deadline.disarm();
    }

    // While a read is inspected, phase changes only take effect when it is done: a request that
    // arrives whole in one read, the usual case, then moves the deadline once (off the idle
    // time) instead of arming a header and a body time only to disarm them again.
    void changePhaseWhileReading(Phase phase)
    {
        m_phase = phase;
        m_phaseChangedWhileReading = true;
    }
    void settleDeadline()
    {
        if (!std::exchange(m_phaseChangedWhileReading, false))
            return;
        if (m_phase == Phase::Headers)
            m_deadline.armIn(m_limits.headerTimeout);
        else if (m_phase == Phase::Body)
            m_deadline.armIn(m_limits.bodyTimeout);
        else
            m_deadline.disarm();
    }

    void onDeadline()
    {
        switch (m_phase) {
        case Phase::Headers:
            ++m_ledger->counts.headerTimeouts;
            if (!m_requestStarted && m_requestsRead == 0) {
                // Nothing was asked, so nothing is answered: a 408 would reach a client that
                // may send its first request just now and read the 408 as its answer.
                closeQuietly();
                return;
            }
            refuse(requestTimeout(QStringLiteral("The request headers did not arrive within "
                                                 "%1 (`limits.header_timeout`).")
                                      .arg(describeDuration(m_limits.headerTimeout))));
            return;
        case Phase::Body:
            ++m_ledger->counts.bodyTimeouts;
            refuse(requestTimeout(QStringLiteral("The request body did not arrive within %1 "
                                                 "of its headers (`limits.body_timeout`).")
                                      .arg(describeDuration(m_limits.bodyTimeout))));
            return;
        case Phase::Idle:
            // An answer counts as finished once it is all queued; a slow reader may still be
            // taking it. Closing then would cut it, so the idle time starts again for as long
            // as the queue keeps shrinking.
            if (const qint64 unsent = m_socket->bytesToWrite();
                unsent > 0 && unsent != m_unsentAtIdleCheck) {
                m_unsentAtIdleCheck = unsent;
                enterPhase(Phase::Idle, m_limits.keepAliveIdle);
                return;
            }
            ++m_ledger->counts.idleClosed;
            closeQuietly();
            return;
        case Phase::Closing:
            m_socket->abort();
            return;
        case Phase::Answering:
        case Phase::Finishing:
            return; // never armed
        }
    }

    // A header block larger than this is refused with 431.
    static constexpr qsizetype kMaxHeaderBytes = 64 * 1024;
    // The most a request body reserves before its bytes arrive.
    static constexpr qint64 kMostBodyReserved = 64 * 1024;

    // Reads what arrived and follows it through the connection's requests; each request read
    // whole is handed on once the read is done.
    void onReadyRead()
    {
        {
            const auto settle = qScopeGuard([this] { settleDeadline(); });
            readAvailable();
        }
        dispatchRead();
    }

    // A plain connection's bytes are read here, not by QTcpSocket: its read notifier's
    // activation is taken before the socket sees it, and one recv() into a buffer the engine
    // thread shares reads what arrived. QTcpSocket would ask the kernel how much there is first
    // (ioctl FIONREAD, a system call per request: 4 % of the engine thread under the non-streamed
    // load of docs/benchmarks.md) and copy it into a block of its own. The end of the connection
    // is left to QTcpSocket, which then reads it too and ends the socket as ever. So is an error,
    // though this read has taken it: QTcpSocket reads an end after it and reports the remote
    // host closed, whatever the error was (nothing here tells the errors apart). TLS
    // connections, and a socket whose notifier is not found, read through Qt.
    void readDirectly(QTcpSocket *socket)
    {
        if (qobject_cast<QSslSocket *>(socket))
            return;
        for (QSocketNotifier *notifier : socket->findChildren<QSocketNotifier *>()) {
            if (notifier->type() == QSocketNotifier::Read) {
                m_readNotifier = notifier;
                notifier->installEventFilter(this);
                return;
            }
        }
    }

    // Reading goes back to QTcpSocket: what is left is drained or closed through it.
    void stopReadingDirectly()
    {
        if (m_readNotifier)
            m_readNotifier->removeEventFilter(this);
        m_readNotifier = nullptr;
    }

    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (event->type() != QEvent::SockAct || watched != m_readNotifier.data())
            return false;
        // Shared by every connection of the thread: each read is handled before the next.
        static thread_local std::array<char, 64 * 1024> buffer;
        const ssize_t received =
            ::recv(int(m_socket->socketDescriptor()), buffer.data(), buffer.size(), 0);
        if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
            return true; // nothing after all; the notifier says again when there is
        if (received <= 0) {
            stopReadingDirectly();
            return false; // QTcpSocket reads the end (after an error, an end too) and closes
        }
        {
            const auto settle = qScopeGuard([this] { settleDeadline(); });
            follow(QByteArrayView(buffer.data(), received));
        }
        dispatchRead();
        return true;
    }

    void readAvailable()
    {
        if (m_state == State::Unframed)
            return;
        const qint64 available = m_socket->bytesAvailable();
        if (available <= 0)
            return;
        // Asking for exactly what the socket holds takes Qt's read block itself when it is one
        // block (the usual case), leaving the socket no buffer at all. Otherwise a socket keeps a
        // 16 KiB block for its whole life, and a held stream's client never sends again. Here it
        // is freed when this read is handled; a connection between reads keeps only what it has
        // not finished with (part of a header block, a body so far).
        const QByteArray arrived = m_socket->read(available);
        if (!arrived.isEmpty())
            follow(arrived);
    }

    // Follows what arrived through the connection's requests.
    void follow(QByteArrayView data)
    {
        if (m_state == State::Unframed)
            return;
        qsizetype position = 0;
        while (position < data.size() && m_state != State::Unframed && m_state != State::Done) {
            if (m_state == State::Body) {
                bodyArriving();
                const qint64 take = std::min<qint64>(m_bodyRemaining, data.size() - position);
                m_current.body.append(data.sliced(position, take));
                m_bodyRemaining -= take;
                position += take;
                if (m_bodyRemaining == 0)
                    requestRead();
                continue;
            }
            if (m_state == State::ChunkedBody) {
                // A chunked body declares no size up front: count it as it arrives.
                bodyArriving();
                qsizetype consumed = 0;
                const auto status =
                    m_chunkedBody.feed(data.sliced(position), m_current.body, &consumed);
                position += consumed;
                if (m_current.body.size() > m_limits.maxBodyBytes) {
                    refuse(protocol::ApiError::payloadTooLarge(m_limits.maxBodyBytes));
                    return;
                }
                if (status == httpwire::ChunkedDecoder::Status::Malformed) {
                    refuse(protocol::ApiError::invalidRequest(
                        QStringLiteral("The request body's chunked encoding is malformed.")));
                    return;
                }
                if (status == httpwire::ChunkedDecoder::Status::Finished)
                    requestRead();
                continue;
            }
            // Line ends between requests are not a request yet (RFC 9112 2.2: ignored); anything
            // else starts one, and with it the time its header block has.
            if (!m_requestStarted) {
                while (position < data.size() && (data[position] == '\r' || data[position] == '\n'))
                    ++position;
                if (position == data.size())
                    continue;
                requestStarted();
            }
            if (m_headerBlock.isEmpty()) {
                // The usual case: a whole header block in this read, parsed in place.
                const HeaderEnd end = findHeaderEnd(data.sliced(position));
                if (end.found() && end.blockBytes <= kMaxHeaderBytes) {
                    const QByteArrayView block = data.sliced(position, end.blockBytes);
                    position += end.consumedBytes;
                    if (!beginRequest(block))
                        return;
                    continue;
                }
            }
            const qsizetype before = m_headerBlock.size();
            m_headerBlock.append(data.sliced(position));
            const HeaderEnd end = findHeaderEnd(m_headerBlock);
            if ((end.found() ? end.blockBytes : m_headerBlock.size()) > kMaxHeaderBytes) {
                // Refused rather than read on: the body after these headers would go unmeasured.
                refuse(protocol::ApiError{
                    431,
                    QStringLiteral("Request headers are larger than the limit of %1 "
                                   "bytes.")
                        .arg(kMaxHeaderBytes),
                    QStringLiteral("invalid_request_error"),
                    {},
                    QStringLiteral("headers_too_large"),
                    {}});
                return;
            }
            if (!end.found())
                return;
            position += end.consumedBytes - before;
            const QByteArray block = m_headerBlock.left(end.blockBytes);
            m_headerBlock = QByteArray(); // let a long block's memory go
            if (!beginRequest(block))
                return;
        }
    }

    void requestStarted()
    {
        m_requestStarted = true;
        // A new connection's header time runs from when it opened, not from its first byte.
        if (m_phase != Phase::Headers)
            changePhaseWhileReading(Phase::Headers);
    }

    // Returns false when the request was refused and the connection is being closed.
    bool beginRequest(QByteArrayView block)
    {
        auto parsed = parseRequestHead(block);
        if (const auto *error = std::get_if<protocol::ApiError>(&parsed)) {
            refuse(*error);
            return false;
        }
        RequestHead &head = std::get<RequestHead>(parsed);
        if (head.contentLength > m_limits.maxBodyBytes) {
            m_current.path = head.request.path; // the refusal answers in the path's protocol
            refuse(protocol::ApiError::payloadTooLarge(m_limits.maxBodyBytes));
            return false;
        }
        m_current = std::move(head.request);
        m_current.remoteAddress = m_address;
        m_closeAfterCurrent = m_current.closeAfterAnswer;
        const bool bodyFollows = head.chunked || head.contentLength > 0;
        if (head.expectsContinue && bodyFollows) {
            // The client waits for this before it sends the body. On a pipelined connection
            // earlier answers (perhaps streams) are still leaving: an interim answer written now
            // would land inside one of them, so it waits for its turn.
            m_continueOwed = true;
            m_answersBeforeContinue = m_requestsRead;
            if (m_answersFinished >= m_answersBeforeContinue)
                sendContinue();
        }
        ++m_requestsRead;
        m_requestStarted = false;
        if (head.chunked) {
            m_chunkedBody = httpwire::ChunkedDecoder();
            m_state = State::ChunkedBody;
            changePhaseWhileReading(Phase::Body);
        } else if (head.contentLength > 0) {
            // Sized by what the client declared, but only so far: a declaration alone must not
            // reserve megabytes per connection.
            m_current.body.reserve(std::min<qint64>(head.contentLength, kMostBodyReserved));
            m_bodyRemaining = head.contentLength;
            m_state = State::Body;
            changePhaseWhileReading(Phase::Body);
        } else {
            requestRead();
        }
        return true;
    }

    void sendContinue()
    {
        m_continueOwed = false;
        m_socket->write("HTTP/1.1 100 Continue\r\n\r\n");
    }

    // The client sends the body without waiting for its "100 Continue" (clients give up waiting
    // after a second or so): the interim answer is no longer owed, and would only be noise.
    void bodyArriving() { m_continueOwed = false; }

    // The whole request is in: it is answered once this read is done, which may take as long as
    // a stream does.
    void requestRead()
    {
        m_read.push_back(std::move(m_current));
        m_current = IncomingRequest();
        m_state = std::exchange(m_closeAfterCurrent, false) ? State::Done : State::Headers;
        changePhaseWhileReading(Phase::Answering);
    }

    // Hands the requests this read completed to the server, in order. After the read, not
    // during it: a quick answer finishes at once and moves the connection's deadline, which must
    // find the read's own changes already made.
    void dispatchRead()
    {
        if (m_read.empty())
            return;
        std::vector<IncomingRequest> read;
        read.swap(m_read);
        const QPointer<QTcpSocket> socket = m_socket;
        for (IncomingRequest &request : read) {
            if (!socket || !m_ledger->handleRequest)
                return;
            m_ledger->handleRequest(socket, std::move(request));
        }
    }

    // Ends the connection with `error` as the answer to the request being read. Answers to
    // earlier requests on the connection (pipelined, perhaps still streaming) leave first, in
    // order: the refusal waits for them rather than cutting them.
    void refuse(const protocol::ApiError &error)
    {
        // The request being refused was counted when its headers were read only if it got as
        // far as its body.
        m_answersBeforeRefusal = m_requestsRead - (m_phase == Phase::Body ? 1 : 0);
        m_continueOwed = false; // the refusal answers that request
        m_state = State::Unframed;
        m_refusalInAnthropicShape = answersInAnthropicShape(m_current.path);
        m_current = IncomingRequest();
        // Nothing more is read as requests: this body is never buffered, and the rest of a
        // request that timed out never reaches a handler.
        stopReadingDirectly();
        disconnect(m_socket, &QIODevice::readyRead, nullptr, nullptr);
        connect(m_socket, &QIODevice::readyRead, m_socket,
                [socket = m_socket] { socket->skip(socket->bytesAvailable()); });
        m_socket->skip(m_socket->bytesAvailable());
        if (m_answersFinished < m_answersBeforeRefusal) {
            m_refusal = std::make_unique<protocol::ApiError>(error);
            enterPhase(Phase::Finishing);
            return;
        }
        sendAndClose(error);
    }

    void sendAndClose(const protocol::ApiError &error)
    {
        // What the client still sends is dropped (refuse() made it so) until it closes too
        // (then Qt closes the socket) or the linger time is over.
        sendClosingAnswer(m_socket, error, m_refusalInAnthropicShape);
        enterPhase(Phase::Closing, kLingerAfterAnswer);
    }

    // A close with nothing to say: nothing was asked, or everything asked was answered.
    void closeQuietly()
    {
        enterPhase(Phase::Closing, kLingerAfterAnswer); // for answer bytes the client never read
        m_socket->disconnectFromHost();
    }

    QTcpSocket *m_socket;
    // While this connection reads its socket itself. Qt owns it (the socket's engine) and may
    // delete it first, when the socket is closed.
    QPointer<QSocketNotifier> m_readNotifier;
    ConnectionLimits m_limits;
    std::shared_ptr<ConnectionLedger> m_ledger;
    QHostAddress m_address;
    timing::Deadline m_deadline;
    Phase m_phase = Phase::Headers;
    bool m_phaseChangedWhileReading = false;
    State m_state = State::Headers;
    bool m_requestStarted = false; // a byte of the next request, beyond line ends, has arrived
    quint64 m_requestsRead = 0;    // header blocks read and passed on to Qt
    quint64 m_answersFinished = 0;
    quint64 m_answersBeforeRefusal = 0;
    bool m_continueOwed = false;         // a "100 Continue" waits for earlier answers to leave
    quint64 m_answersBeforeContinue = 0; // ... this many of them
    // Waiting for earlier answers to leave; held apart, as nearly no connection has one.
    std::unique_ptr<protocol::ApiError> m_refusal;
    execution::ClientListener *m_clientListener = nullptr;
    bool m_refusalInAnthropicShape = false; // the refused request was on /v1/messages
    qint64 m_unsentAtIdleCheck = 0;   // answer bytes still queued when the idle time last ran out
    QByteArray m_headerBlock;         // a header block split across reads
    IncomingRequest m_current;        // the request being read
    bool m_closeAfterCurrent = false; // it asked to close the connection after its answer
    std::vector<IncomingRequest> m_read; // read whole in this read, not yet handed on
    qint64 m_bodyRemaining = 0;
    httpwire::ChunkedDecoder m_chunkedBody;
};

} // namespace

void ConnectionLedger::opened(const QHostAddress &address)
{
    ++counts.open;
    ++counts.accepted;
    ++openByAddress[address];
}

void ConnectionLedger::closed(const QHostAddress &address)
{
    --counts.open;
    const auto found = openByAddress.find(address);
    if (found != openByAddress.end() && --found.value() <= 0)
        openByAddress.erase(found); // the table holds only addresses with connections open
    if (connectionEnded)
        connectionEnded();
}

void ConnectionLedger::refusalStarted()
{
    ++counts.refusalsDraining;
}

void ConnectionLedger::refusalEnded()
{
    --counts.refusalsDraining;
    if (connectionEnded)
        connectionEnded();
}

GatewayListener::GatewayListener(const config::ConfigStore &store,
                                 timing::DeadlineScheduler &scheduler, QObject *parent)
    : QTcpServer(parent), m_store(store), m_scheduler(scheduler),
      m_resumeAccepting(scheduler,
                        [this] {
                            if (!m_waitingForRoom)
                                acceptAgain();
                        }),
      m_acceptsThisTurn(m_turn, kAcceptsPerTurn, kAcceptTimePerTurn)
{
    m_ledger->connectionEnded = [this] { onConnectionEnded(); };
    connect(this, &QTcpServer::acceptError, this, &GatewayListener::onAcceptError);
    useTls(store.config().tls);
    connect(
        &store, &config::ConfigStore::replaced, this,
        [this](const std::shared_ptr<const config::Config> &snapshot) { useTls(snapshot->tls); });
}

GatewayListener::~GatewayListener()
{
    // The connections, deleted with their sockets after this, find no listener to call.
    m_ledger->connectionEnded = nullptr;
}

std::variant<QSslConfiguration, QString>
GatewayListener::tlsConfigurationFrom(const config::TlsConfig &tls)
{
    QFile certificateFile(tls.certificateFile);
    if (!certificateFile.open(QIODevice::ReadOnly))
        return QStringLiteral("cannot read %1: %2")
            .arg(tls.certificateFile, certificateFile.errorString());
    const QList<QSslCertificate> chain = QSslCertificate::fromData(certificateFile.readAll());
    if (chain.isEmpty())
        return QStringLiteral("%1 holds no PEM certificate").arg(tls.certificateFile);
    QFile keyFile(tls.keyFile);
    if (!keyFile.open(QIODevice::ReadOnly))
        return QStringLiteral("cannot read %1: %2").arg(tls.keyFile, keyFile.errorString());
    const QByteArray keyPem = keyFile.readAll();
    QSslKey key;
    for (const QSsl::KeyAlgorithm algorithm : {QSsl::Rsa, QSsl::Ec, QSsl::Dsa}) {
        key = QSslKey(keyPem, algorithm, QSsl::Pem);
        if (!key.isNull())
            break;
    }
    if (key.isNull())
        return QStringLiteral("%1 holds no unencrypted PEM private key").arg(tls.keyFile);
    QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
    configuration.setLocalCertificateChain(chain); // the leaf first, then its intermediates
    configuration.setPrivateKey(key);
    configuration.setPeerVerifyMode(QSslSocket::VerifyNone); // clients show keys, not certificates
    configuration.setProtocol(QSsl::TlsV1_2OrLater);
    return configuration;
}

void GatewayListener::useTls(const config::TlsConfig &tls)
{
    // The same files in a new snapshot are read again too: replacing a certificate in place and
    // applying the config is how it is renewed.
    if (!tls.enabled()) {
        if (m_tls)
            qCInfo(lcListener) << "new connections are plain HTTP: `tls` was removed";
        m_tls.reset();
        m_tlsFiles = tls;
        return;
    }
    auto loaded = tlsConfigurationFrom(tls);
    if (const QString *problem = std::get_if<QString>(&loaded)) {
        // The loader checked these files; they changed since. Keep serving with what works.
        qCWarning(lcListener).noquote()
            << "TLS certificate not changed:" << *problem
            << (m_tls ? "(new connections keep the previous certificate)"
                      : "(new connections are plain HTTP)");
        return;
    }
    const bool changed = m_tlsFiles != tls;
    m_tls = std::get<QSslConfiguration>(std::move(loaded));
    m_tlsFiles = tls;
    if (changed)
        qCInfo(lcListener).noquote()
            << "new connections use the TLS certificate" << tls.certificateFile << "for"
            << m_tls->localCertificate().subjectDisplayName();
}

QSslCertificate GatewayListener::tlsCertificate() const
{
    return m_tls ? m_tls->localCertificate() : QSslCertificate();
}

namespace {
// The listener's connection object on `socket`, if it is one of a listener's connections.
ClientConnection *connectionOf(QTcpSocket *socket)
{
    return socket ? socket->findChild<ClientConnection *>(QString(), Qt::FindDirectChildrenOnly)
                  : nullptr;
}
} // namespace

void GatewayListener::answerFinished(QTcpSocket *socket)
{
    if (ClientConnection *connection = connectionOf(socket))
        connection->answerFinished();
}

bool GatewayListener::watchClient(QTcpSocket *socket, execution::ClientListener *listener)
{
    ClientConnection *connection = connectionOf(socket);
    if (!connection)
        return false;
    connection->setClientListener(listener);
    return true;
}

void GatewayListener::unwatchClient(QTcpSocket *socket, execution::ClientListener *listener)
{
    ClientConnection *connection = connectionOf(socket);
    if (connection && connection->clientListener() == listener)
        connection->setClientListener(nullptr);
}

void GatewayListener::onAcceptError(QAbstractSocket::SocketError)
{
    ++m_ledger->counts.acceptErrors;
    qCWarning(lcListener).noquote()
        << "accepting a client connection failed:" << errorString() << "with"
        << m_ledger->counts.open << "client connection(s) open; accepting again in"
        << describeDuration(kAcceptRetryDelay)
        << "(the open-file limit may be too low for limits.max_connections)";
    m_resumeAccepting.armIn(kAcceptRetryDelay);
}

void GatewayListener::incomingConnection(qintptr socketDescriptor)
{
    m_acceptsThisTurn.take(); // never refused: accepting stops below once the turn's share is in
    accept(socketDescriptor);
    // Checked after every connection, admitted ones too: after a wait, accepting resumes when
    // any connection ends, and the one that comes in then takes its place.
    if (m_ledger->counts.refusalsDraining >= m_store.config().server.maxRefusalsDraining)
        waitForRoom();
    else if (m_acceptsThisTurn.spent())
        waitForNextTurn();
}

void GatewayListener::waitForNextTurn()
{
    // As waitForRoom(): Qt's accept loop stops only at maxPendingConnections().
    setMaxPendingConnections(0);
    pauseAccepting();
    if (std::exchange(m_waitingForTurn, true))
        return;
    // Posted events are the first thing of the next turn.
    QMetaObject::invokeMethod(
        this,
        [this] {
            m_waitingForTurn = false;
            if (!m_waitingForRoom)
                acceptAgain();
        },
        Qt::QueuedConnection);
}

void GatewayListener::waitForRoom()
{
    // pauseAccepting() alone would let Qt's loop go on accepting what the backlog holds now.
    setMaxPendingConnections(0);
    pauseAccepting();
    m_waitingForRoom = true;
    ++m_ledger->counts.acceptPauses;
    qCDebug(lcListener).noquote()
        << m_ledger->counts.refusalsDraining
        << "refused connections are draining (`limits.max_refusals_draining`): new connections "
           "wait in the listen backlog until one ends";
}

void GatewayListener::onConnectionEnded()
{
    if (std::exchange(m_waitingForRoom, false))
        acceptAgain();
}

void GatewayListener::acceptAgain()
{
    // After an accept() error, its own wait decides.
    if (!isListening() || m_resumeAccepting.armed())
        return;
    setMaxPendingConnections(m_acceptLoopLimit);
    resumeAccepting();
}

void GatewayListener::accept(qintptr socketDescriptor)
{
    QSslSocket *secure = m_tls ? new QSslSocket(this) : nullptr;
    QTcpSocket *socket = secure ? secure : new QTcpSocket(this);
    if (!socket->setSocketDescriptor(socketDescriptor)) {
        delete socket;
        return;
    }
    if (secure) {
        // Everything above reads and writes the decrypted stream, refusals included: written
        // before the handshake is done, they wait in the socket and leave encrypted. A client
        // that never finishes its handshake sends no request, and the header time closes it.
        secure->setSslConfiguration(*m_tls);
        connect(secure, &QSslSocket::sslErrors, secure, [secure](const QList<QSslError> &errors) {
            qCDebug(lcListener).noquote()
                << "TLS handshake with" << secure->peerAddress().toString()
                << "failed:" << (errors.isEmpty() ? QString() : errors.first().errorString());
        });
        secure->startServerEncryption();
    }
    const config::ServerConfig &server = m_store.config().server;
    telemetry::ConnectionCounts &counts = m_ledger->counts;
    const QHostAddress peer = socket->peerAddress();
    std::optional<protocol::ApiError> refusal;
    if (counts.open >= server.maxConnections) {
        ++counts.refusedOverTotal;
        refusal = tooManyConnections(
            QStringLiteral("Switchyard has %1 client connections open, its limit "
                           "(`limits.max_connections`); try again shortly.")
                .arg(server.maxConnections));
    } else if (server.maxConnectionsPerAddress > 0 &&
               m_ledger->openByAddress.value(peer) >= server.maxConnectionsPerAddress) {
        ++counts.refusedOverAddress;
        refusal = tooManyConnections(
            QStringLiteral("Your address has %1 connections open to Switchyard, the limit for "
                           "one client address (`limits.max_connections_per_address`); reuse "
                           "open connections or close idle ones.")
                .arg(server.maxConnectionsPerAddress));
    }
    if (refusal) {
        connect(socket, &QAbstractSocket::disconnected, socket, &QObject::deleteLater);
        qCDebug(lcListener).noquote()
            << "refused a connection from" << peer.toString() << "(" << refusal->message << ")";
        new RefusedConnection(socket, *refusal, m_ledger, m_scheduler);
        return;
    }
    // Streamed tokens are small writes that must leave at once: Nagle's algorithm would hold
    // each one back until the client acknowledged the previous (40 ms with delayed ACKs).
    socket->setSocketOption(QAbstractSocket::LowDelayOption, 1);
    // Gone once the client is: an answer still being written holds the socket through a
    // QPointer and stops writing.
    connect(socket, &QAbstractSocket::disconnected, socket, &QObject::deleteLater);
    new ClientConnection(socket,
                         ConnectionLimits{server.maxBodyBytes, server.headerTimeout,
                                          server.bodyTimeout, server.keepAliveIdle},
                         m_ledger, m_scheduler);
    if (m_ledger->connectionOpened)
        m_ledger->connectionOpened(socket);
}

void GatewayListener::setRequestHandler(RequestHandler handler, ConnectionHandler opened)
{
    m_ledger->handleRequest = std::move(handler);
    m_ledger->connectionOpened = std::move(opened);
}

} // namespace switchyard::http

#include "gateway_listener.moc"
