#include "upstream/curl_transport.h"

#include <QEvent>
#include <QFile>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sys/socket.h>
#include <unistd.h>
#include <utility>

Q_LOGGING_CATEGORY(lcUpstream, "switchyard.upstream")

namespace switchyard::upstream {

struct CurlTransport::Transfer {
    CURL *easy = nullptr;
    // The request's header lines, each ending in a NUL, and libcurl's list of them: two blocks
    // instead of curl_slist_append's node and copy per line. libcurl only reads the list.
    QByteArray headerLines;
    std::vector<curl_slist> headerList;
    QByteArray body;            // libcurl reads POSTFIELDS in place: kept until it has sent them
    int requestsStarted = 0;    // onBeforeRequest calls: more than one is a re-send
    bool resendRefused = false; // onBeforeRequest stopped a second send of this request
    UpstreamObserver *observer = nullptr;
    Call *call = nullptr;
    UpstreamResponseHead head;
    bool headDelivered = false;
    bool added = false; // handed to the multi handle
    CurlTransport *transport = nullptr;
    int socketErrno = 0; // why the last socket for this transfer could not be opened
};

class CurlTransport::Call final : public UpstreamCall {
public:
    Call(CurlTransport *transport, Transfer *transfer)
        : m_transport(transport), m_transfer(transfer)
    {
        m_transfer->call = this;
    }
    ~Call() override
    {
        if (m_transfer)
            m_transport->cancel(m_transfer);
    }
    void detach() { m_transfer = nullptr; }
    void pauseReceiving() override
    {
        if (m_transfer)
            m_transport->setPaused(m_transfer, true);
    }
    void resumeReceiving() override
    {
        if (m_transfer)
            m_transport->setPaused(m_transfer, false);
    }
    bool requestSent() const override;

private:
    CurlTransport *m_transport;
    Transfer *m_transfer;
};

// A socket notifier that calls the transport from its own event. A signal connection per
// notifier cost about 300 bytes (the connection, the slot object and the notifier's connection
// list): two per upstream socket, 600 bytes of every held stream.
class CurlTransport::WatchNotifier final : public QSocketNotifier {
public:
    WatchNotifier(SocketWatch *watch, Type type, CurlTransport *transport);

protected:
    bool event(QEvent *event) override
    {
        if (event->type() != QEvent::SockAct)
            return QSocketNotifier::event(event);
        if (type() == Read)
            m_transport->onReadable(m_watch);
        else
            m_transport->drive(curl_socket_t(socket()), CURL_CSELECT_OUT);
        return true;
    }

private:
    SocketWatch *m_watch; // outlives every activation: disabled before the watch is deleted
    CurlTransport *m_transport;
};

struct CurlTransport::SocketWatch {
    curl_socket_t socket = CURL_SOCKET_BAD;
    QSocketNotifier *read = nullptr;
    QSocketNotifier *write = nullptr;
    bool readWanted = false; // what libcurl asked for last; the read notifier may outlive it
    // A connection's socket, opened and closed through this transport's callbacks: its
    // notifiers stay while it is idle. libcurl closes other sockets (its resolver's wake-up
    // pair) itself, so theirs go when libcurl stops watching them.
    bool keptWhileIdle = false;
};

CurlTransport::WatchNotifier::WatchNotifier(SocketWatch *watch, Type type, CurlTransport *transport)
    : QSocketNotifier(qintptr(watch->socket), type, transport), m_watch(watch),
      m_transport(transport)
{}

namespace {
// RAII for the callback-depth counter: multi functions may not be called while it is non-zero.
struct CallbackScope {
    explicit CallbackScope(int &depth) : m_depth(depth) { ++m_depth; }
    ~CallbackScope() { --m_depth; }
    int &m_depth;
};

// A call on a reused connection reports no connect time at all, so only a call that also never
// sent its request is still connecting.
bool stillConnecting(CURL *easy)
{
    curl_off_t connectMicros = 0;
    long requestBytes = 0;
    curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connectMicros);
    curl_easy_getinfo(easy, CURLINFO_REQUEST_SIZE, &requestBytes);
    return connectMicros == 0 && requestBytes == 0;
}

// Errors of socket() that say this process or host ran out of something, as opposed to an
// address family the host lacks.
bool outOfLocalResources(int socketErrno)
{
    return socketErrno == EMFILE || socketErrno == ENFILE || socketErrno == ENOBUFS ||
           socketErrno == ENOMEM;
}

TransportError classify(CURLcode code, CURL *easy)
{
    switch (code) {
    case CURLE_OK:
        return TransportError::None;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return TransportError::ConnectFailed;
    case CURLE_OPERATION_TIMEDOUT:
        return stillConnecting(easy) ? TransportError::ConnectTimeout
                                     : TransportError::TotalTimeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
        return TransportError::TlsFailed;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
        return TransportError::ConnectionLost;
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return TransportError::ProtocolError;
    default:
        return TransportError::Other;
    }
}
} // namespace

bool CurlTransport::Call::requestSent() const
{
    return m_transfer && !stillConnecting(m_transfer->easy);
}

CurlTransport::CurlTransport(QObject *parent) : QObject(parent)
{
    static std::once_flag globalInit;
    std::call_once(globalInit, [] {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        // Frees the TLS library's global state at exit, after every transport is gone.
        std::atexit([] { curl_global_cleanup(); });
    });

    m_multi = curl_multi_init();
    curl_multi_setopt(m_multi, CURLMOPT_SOCKETFUNCTION, &CurlTransport::onSocket);
    curl_multi_setopt(m_multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(m_multi, CURLMOPT_TIMERFUNCTION, &CurlTransport::onTimer);
    curl_multi_setopt(m_multi, CURLMOPT_TIMERDATA, this);
    // Keep enough idle connections for a few hundred concurrent streams to reuse.
    curl_multi_setopt(m_multi, CURLMOPT_MAXCONNECTS, 512L);

    m_timer.setSingleShot(true);
    connect(&m_timer, &QTimer::timeout, this, [this] { drive(CURL_SOCKET_TIMEOUT, 0); });
}

CurlTransport::~CurlTransport()
{
    // Calls still alive must not reach a dead transport: detach them, then free everything.
    const std::unordered_set<Transfer *> remaining = m_transfers;
    for (Transfer *transfer : remaining) {
        if (transfer->call)
            transfer->call->detach();
        if (transfer->added)
            curl_multi_remove_handle(m_multi, transfer->easy);
        release(transfer);
    }
    for (CURL *easy : m_idleHandles)
        curl_easy_cleanup(easy);
    curl_multi_cleanup(m_multi); // closes the cached connections, through onCloseSocket
    for (SocketWatch *watch : m_watches)
        delete watch; // none should be left; their notifiers are this object's children
}

std::unique_ptr<UpstreamCall> CurlTransport::start(const UpstreamRequest &request,
                                                   UpstreamObserver *observer)
{
    auto *transfer = new Transfer;
    transfer->transport = this;
    transfer->observer = observer;
    transfer->body = request.body;
    // A finished handle is reset and reused: creating one costs allocations on every request.
    CURL *easy = nullptr;
    if (m_idleHandles.empty()) {
        easy = curl_easy_init();
    } else {
        easy = m_idleHandles.back();
        m_idleHandles.pop_back();
    }
    transfer->easy = easy;

    curl_easy_setopt(easy, CURLOPT_URL, encodedUrl(request.url).constData()); // libcurl copies
    curl_easy_setopt(easy, CURLOPT_PRIVATE, transfer);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    // libcurl allocates its receive buffer for each transfer and frees it at the transfer's
    // end, so a held stream keeps one for as long as it runs. At its 16 KiB default, 10,000
    // streams kept about 40 MB more resident than at its 1 KiB minimum, which holds an event
    // or three; a larger event is read in pieces.
    if (request.answerStreams)
        curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, kStreamReceiveBufferBytes);
    // Proxies come from config, never silently from the environment: an empty proxy turns
    // libcurl's reading of http_proxy and friends off. Every option below is set on each
    // transfer, as a reused handle has been reset to libcurl's defaults.
    const QByteArray proxy = request.proxy.isEmpty() ? QByteArray("") : request.proxy.toEncoded();
    curl_easy_setopt(easy, CURLOPT_PROXY, proxy.constData());
    if (!request.caFile.isEmpty()) {
        // The file alone: libcurl would otherwise also trust its built-in CA directory.
        const QByteArray caFile = QFile::encodeName(request.caFile);
        curl_easy_setopt(easy, CURLOPT_CAINFO, caFile.constData());
        curl_easy_setopt(easy, CURLOPT_CAPATH, nullptr);
        curl_easy_setopt(easy, CURLOPT_PROXY_CAINFO, caFile.constData());
        curl_easy_setopt(easy, CURLOPT_PROXY_CAPATH, nullptr);
    }
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, long(request.connectTimeout.count()));
    if (request.totalTimeout.count() > 0)
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, long(request.totalTimeout.count()));
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &CurlTransport::onHeader);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, transfer);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &CurlTransport::onBody);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, transfer);
    // When a reused connection dies before any answer byte, libcurl sends the request again on
    // a fresh connection by itself. The provider may have started the first call: the second is
    // a duplicate no attempt count or retry budget sees. libcurl asks this callback before each
    // request it sends; the second time, the transfer ends instead, and the executor's own
    // retry policy decides, counted like any attempt. (A read callback that refuses to rewind
    // stops the re-send too, but costs an upload buffer and a second send per request.)
    curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, &CurlTransport::onBeforeRequest);
    curl_easy_setopt(easy, CURLOPT_PREREQDATA, transfer);
    // Every connection's socket is opened and closed here, so a notifier kept while the
    // connection is idle never outlives its descriptor.
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, &CurlTransport::onOpenSocket);
    curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, transfer);
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, &CurlTransport::onCloseSocket);
    curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, this);

    if (request.method == "POST") {
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, transfer->body.constData());
        curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(transfer->body.size()));
    } else if (request.method == "GET") {
        curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.constData());
    }

    setHeaders(transfer, request.headers);

    auto call = std::make_unique<Call>(this, transfer);
    m_transfers.insert(transfer);
    if (m_callbackDepth > 0) {
        // Started from inside a libcurl callback (an observer reacting to an answer): adding
        // a handle there is forbidden, so the outermost drive() adds it.
        m_deferredAdd.push_back(transfer);
    } else {
        addToMulti(transfer);
    }
    return call;
}

CurlTransport::SocketWatch *CurlTransport::watchFor(curl_socket_t socket)
{
    if (socket < 0)
        return nullptr;
    if (std::size_t(socket) >= m_watches.size())
        m_watches.resize(std::max<std::size_t>(std::size_t(socket) + 1, m_watches.size() * 2));
    SocketWatch *&watch = m_watches[std::size_t(socket)];
    if (!watch) {
        watch = new SocketWatch;
        watch->socket = socket;
    }
    return watch;
}

// libcurl says which sockets it wants watched, and for what; it removes a kept-alive connection's
// socket when its call ends and adds it again for the next call. Removing and creating notifiers
// each time cost a notifier, a connection and two epoll changes per call (4 % of the engine at 64
// connections), so the read notifier stays enabled while the socket is idle in libcurl's cache:
// nothing is readable there unless the provider closes the connection, and then the notifier is
// disabled once (onReadable). A write notifier would fire at once on an idle socket, so it is
// disabled whenever libcurl does not want it. Notifiers go only when libcurl closes the socket.
int CurlTransport::onSocket(CURL *, curl_socket_t socket, int what, void *transportPointer, void *)
{
    auto *transport = static_cast<CurlTransport *>(transportPointer);
    SocketWatch *watch = transport->watchFor(socket);
    if (!watch)
        return 0;
    const bool wantRead = what == CURL_POLL_IN || what == CURL_POLL_INOUT;
    const bool wantWrite = what == CURL_POLL_OUT || what == CURL_POLL_INOUT;
    watch->readWanted = wantRead;
    if (what == CURL_POLL_REMOVE && !watch->keptWhileIdle) {
        transport->forget(watch);
        return 0;
    }
    if (wantRead && !watch->read)
        watch->read = new WatchNotifier(watch, QSocketNotifier::Read, transport);
    if (wantWrite && !watch->write)
        watch->write = new WatchNotifier(watch, QSocketNotifier::Write, transport);
    if (wantRead && !watch->read->isEnabled())
        watch->read->setEnabled(true);
    // Removed (CURL_POLL_REMOVE) or wanted for writing only: the read notifier is left as it is.
    if (watch->write && watch->write->isEnabled() != wantWrite)
        watch->write->setEnabled(wantWrite);
    return 0;
}

void CurlTransport::onReadable(SocketWatch *watch)
{
    if (watch->readWanted) {
        drive(watch->socket, CURL_CSELECT_IN);
        return;
    }
    // Idle in libcurl's cache and readable: the provider closed the connection (or sent bytes
    // nobody asked for). libcurl notices when it next picks the connection and closes it; until
    // then the notifier would fire on every pass.
    watch->read->setEnabled(false);
}

void CurlTransport::forget(SocketWatch *watch)
{
    m_watches[std::size_t(watch->socket)] = nullptr;
    // Disabled before the descriptor is closed, as its number may be reused at once; and deleted
    // later, as this may run inside one of the notifier's own activations.
    for (QSocketNotifier *notifier : {watch->read, watch->write}) {
        if (notifier) {
            notifier->setEnabled(false);
            notifier->deleteLater();
        }
    }
    delete watch;
}

curl_socket_t CurlTransport::onOpenSocket(void *transferPointer, curlsocktype,
                                          curl_sockaddr *address)
{
    auto *transfer = static_cast<Transfer *>(transferPointer);
    CurlTransport *transport = transfer->transport;
    const curl_socket_t socket =
        ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    // libcurl reports any failure here as "could not connect", which would blame the provider
    // for this process's own descriptor limit.
    transfer->socketErrno = socket < 0 ? errno : 0;
    if (socket >= 0 && std::size_t(socket) < transport->m_watches.size()) {
        // Left over from a descriptor closed behind libcurl's back: not this socket's.
        if (SocketWatch *stale = transport->m_watches[std::size_t(socket)])
            transport->forget(stale);
    }
    if (SocketWatch *watch = transport->watchFor(socket))
        watch->keptWhileIdle = true;
    return socket < 0 ? CURL_SOCKET_BAD : socket;
}

int CurlTransport::onCloseSocket(void *transportPointer, curl_socket_t socket)
{
    auto *transport = static_cast<CurlTransport *>(transportPointer);
    if (socket >= 0 && std::size_t(socket) < transport->m_watches.size()) {
        if (SocketWatch *watch = transport->m_watches[std::size_t(socket)])
            transport->forget(watch);
    }
    return ::close(socket);
}

int CurlTransport::onTimer(CURLM *, long timeoutMs, void *transportPointer)
{
    auto *transport = static_cast<CurlTransport *>(transportPointer);
    if (timeoutMs < 0)
        transport->m_timer.stop();
    else
        transport->m_timer.start(int(timeoutMs)); // a 0 ms timer fires after we return
    return 0;
}

size_t CurlTransport::onHeader(char *data, size_t size, size_t count, void *transferPointer)
{
    auto *transfer = static_cast<Transfer *>(transferPointer);
    const size_t bytes = size * count;
    if (!transfer->observer)
        return 0; // cancelled inside an earlier callback: stop the transfer
    QByteArrayView line(data, qsizetype(bytes));
    while (line.endsWith('\n') || line.endsWith('\r'))
        line.chop(1);
    if (line.startsWith("HTTP/")) {
        // "HTTP/1.1 200 OK": the three digits after the first space.
        transfer->head = UpstreamResponseHead();
        transfer->head.headers.reserve(16); // one allocation for a provider's usual dozen
        const qsizetype space = line.indexOf(' ');
        int status = 0;
        for (qsizetype i = space + 1; space > 0 && i < line.size() && i <= space + 3; ++i) {
            if (line[i] < '0' || line[i] > '9') {
                status = 0;
                break;
            }
            status = status * 10 + (line[i] - '0');
        }
        transfer->head.status = status;
        return bytes;
    }
    if (line.isEmpty()) {
        // End of a header block. 1xx blocks are followed by the real one.
        if (transfer->head.status >= 200 && !transfer->headDelivered) {
            transfer->headDelivered = true;
            releaseSentBody(transfer);
            // Delivered once, and never needed here again: the observer keeps what it wants.
            const UpstreamResponseHead head = std::exchange(transfer->head, {});
            transfer->observer->onResponseHead(head);
        }
        return bytes;
    }
    const qsizetype colon = line.indexOf(':');
    if (colon > 0) {
        // Lower-cased as it is copied: one allocation for the name, one for the value.
        QByteArray name(colon, Qt::Uninitialized);
        std::transform(line.begin(), line.begin() + colon, name.begin(),
                       [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; });
        transfer->head.headers.append(
            {std::move(name), line.sliced(colon + 1).trimmed().toByteArray()});
    }
    return bytes;
}

void CurlTransport::setHeaders(Transfer *transfer, const HeaderList &headers)
{
    // An empty Expect: stops libcurl from waiting for "100 Continue" on larger bodies.
    static constexpr QByteArrayView kNoExpect("Expect:\0", 8);
    qsizetype bytes = kNoExpect.size();
    for (const auto &[name, value] : headers)
        bytes += name.size() + 2 + value.size() + 1;
    QByteArray &lines = transfer->headerLines;
    lines.reserve(bytes);
    lines.append(kNoExpect);
    for (const auto &[name, value] : headers)
        lines.append(name).append(": ", 2).append(value).append('\0');
    // The lines are all written: from here their addresses hold until the transfer is released.
    std::vector<curl_slist> &list = transfer->headerList;
    list.resize(size_t(headers.size()) + 1);
    char *line = lines.data();
    list[0].data = line;
    line += kNoExpect.size();
    for (qsizetype i = 0; i < headers.size(); ++i) {
        list[size_t(i) + 1].data = line;
        line += headers[i].first.size() + 2 + headers[i].second.size() + 1;
    }
    for (size_t i = 0; i < list.size(); ++i)
        list[i].next = i + 1 < list.size() ? &list[i + 1] : nullptr;
    curl_easy_setopt(transfer->easy, CURLOPT_HTTPHEADER, list.data());
}

void CurlTransport::releaseSentBody(Transfer *transfer)
{
    // A held stream would keep its request body, an agent's whole conversation, for as long as
    // it runs. libcurl reads POSTFIELDS only to send the request: once the answer has begun and
    // every byte went out, it reads them again only to send the request a second time, which
    // onBeforeRequest refuses; redirects are not followed and no authentication is negotiated.
    curl_off_t uploaded = -1;
    if (!transfer->body.isEmpty() &&
        curl_easy_getinfo(transfer->easy, CURLINFO_SIZE_UPLOAD_T, &uploaded) == CURLE_OK &&
        uploaded == curl_off_t(transfer->body.size()))
        transfer->body = QByteArray();
}

size_t CurlTransport::onBody(char *data, size_t size, size_t count, void *transferPointer)
{
    auto *transfer = static_cast<Transfer *>(transferPointer);
    const size_t bytes = size * count;
    if (!transfer->observer)
        return 0;
    transfer->observer->onResponseBody(QByteArrayView(data, qsizetype(bytes)));
    return transfer->observer ? bytes : 0;
}

int CurlTransport::onBeforeRequest(void *transferPointer, char *, char *, int, int)
{
    auto *transfer = static_cast<Transfer *>(transferPointer);
    if (++transfer->requestsStarted == 1)
        return CURL_PREREQFUNC_OK;
    transfer->resendRefused = true; // never send a request twice: see start()
    return CURL_PREREQFUNC_ABORT;
}

void CurlTransport::drive(curl_socket_t socket, int eventMask)
{
    int running = 0;
    {
        CallbackScope scope(m_callbackDepth);
        curl_multi_socket_action(m_multi, socket, eventMask, &running);
    }
    afterCallbacks();
}

void CurlTransport::setPaused(Transfer *transfer, bool paused)
{
    if (!transfer->added)
        return; // not yet handed to libcurl: nothing is being received
    // Unpausing may deliver buffered data at once, through onBody and so to an observer.
    {
        CallbackScope scope(m_callbackDepth);
        curl_easy_pause(transfer->easy, paused ? CURLPAUSE_RECV : CURLPAUSE_CONT);
    }
    afterCallbacks();
}

void CurlTransport::afterCallbacks()
{
    if (m_callbackDepth > 0)
        return; // re-entered from an observer: the outermost caller finishes the work
    std::vector<Transfer *> released;
    released.swap(m_deferredRelease);
    for (Transfer *transfer : released) {
        if (transfer->added)
            curl_multi_remove_handle(m_multi, transfer->easy);
        release(transfer);
    }
    std::vector<Transfer *> added;
    added.swap(m_deferredAdd);
    for (Transfer *transfer : added)
        addToMulti(transfer);
    finishCompleted();
}

QByteArray CurlTransport::encodedUrl(const QUrl &url)
{
    for (const auto &[known, encoded] : m_encodedUrls) {
        if (!known.isEmpty() && sameUrlData(known, url))
            return encoded;
    }
    auto &slot = m_encodedUrls[m_nextEncodedUrl];
    m_nextEncodedUrl = (m_nextEncodedUrl + 1) % kEncodedUrlsKept;
    slot = {url, url.toEncoded()};
    return slot.second;
}

void CurlTransport::addToMulti(Transfer *transfer)
{
    transfer->added = true;
    curl_multi_add_handle(m_multi, transfer->easy);
}

void CurlTransport::finishCompleted()
{
    int pending = 0;
    while (CURLMsg *message = curl_multi_info_read(m_multi, &pending)) {
        if (message->msg != CURLMSG_DONE)
            continue;
        CURL *easy = message->easy_handle;
        const CURLcode code = message->data.result;
        Transfer *transfer = nullptr;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, &transfer);

        UpstreamResult result;
        result.error = classify(code, easy);
        if (code == CURLE_COULDNT_CONNECT && outOfLocalResources(transfer->socketErrno)) {
            result.error = TransportError::LocalResources;
            result.description = QStringLiteral("%1 (%2)").arg(
                describe(result.error),
                QString::fromLocal8Bit(std::strerror(transfer->socketErrno)));
        } else if (transfer->resendRefused) {
            // libcurl's words ("callback aborted") name our refusal, not what happened to the
            // call.
            result.error = TransportError::ConnectionLost;
            result.description = QStringLiteral(
                "the kept-alive connection closed before the answer; the request was not "
                "sent again");
        } else if (result.error != TransportError::None) {
            result.description = QStringLiteral("%1 (%2)").arg(
                describe(result.error), QString::fromUtf8(curl_easy_strerror(code)));
        }
        UpstreamObserver *observer = transfer->observer;
        const bool deliverHead = !transfer->headDelivered && code == CURLE_OK;
        const UpstreamResponseHead head = std::move(transfer->head); // released just below
        if (transfer->call)
            transfer->call->detach();
        curl_multi_remove_handle(m_multi, easy);
        release(transfer);

        if (observer) {
            if (deliverHead)
                observer->onResponseHead(head);
            observer->onFinished(result);
        }
    }
}

void CurlTransport::cancel(Transfer *transfer)
{
    transfer->observer = nullptr;
    transfer->call = nullptr;
    if (m_callbackDepth > 0) {
        const auto pendingAdd = std::find(m_deferredAdd.begin(), m_deferredAdd.end(), transfer);
        if (pendingAdd != m_deferredAdd.end())
            m_deferredAdd.erase(pendingAdd);
        m_deferredRelease.push_back(transfer);
        return;
    }
    if (transfer->added)
        curl_multi_remove_handle(m_multi, transfer->easy);
    release(transfer);
}

void CurlTransport::release(Transfer *transfer)
{
    if (m_idleHandles.size() < kMaxIdleHandles) {
        curl_easy_reset(transfer->easy);
        m_idleHandles.push_back(transfer->easy);
    } else {
        curl_easy_cleanup(transfer->easy);
    }
    m_transfers.erase(transfer);
    delete transfer;
}

} // namespace switchyard::upstream
