#pragma once

#include "upstream/upstream_transport.h"

#include <QByteArray>
#include <QObject>
#include <QTimer>
#include <QUrl>
#include <array>
#include <curl/curl.h>
#include <memory>
#include <unordered_set>
#include <vector>

namespace switchyard::upstream {

// Upstream HTTP over libcurl's multi interface, driven by the owning thread's Qt event loop
// through socket notifiers and one timer. Connections are kept alive and reused per host, and so
// are their notifiers: a call on a kept-alive connection registers nothing with the event loop.
// Qt's network access manager was measured far too slow for this and caps connections per host.
class CurlTransport final : public QObject, public UpstreamTransport {
    Q_OBJECT
public:
    explicit CurlTransport(QObject *parent = nullptr);
    ~CurlTransport() override;

    std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request,
                                        UpstreamObserver *observer) override;

    // The most a streamed answer's body is read at once (UpstreamRequest::answerStreams):
    // libcurl's smallest receive buffer.
    static constexpr long kStreamReceiveBufferBytes = 1024;

private:
    struct Transfer;
    class Call;
    struct SocketWatch;
    class WatchNotifier;
    friend class Call;

    static int onSocket(CURL *easy, curl_socket_t socket, int what, void *transport,
                        void *socketWatch);
    static curl_socket_t onOpenSocket(void *transfer, curlsocktype purpose, curl_sockaddr *address);
    static int onCloseSocket(void *transport, curl_socket_t socket);
    static int onTimer(CURLM *multi, long timeoutMs, void *transport);
    static size_t onHeader(char *data, size_t size, size_t count, void *transfer);
    static size_t onBody(char *data, size_t size, size_t count, void *transfer);
    static void releaseSentBody(Transfer *transfer);
    static void setHeaders(Transfer *transfer, const HeaderList &headers);
    static int onBeforeRequest(void *transfer, char *primaryIp, char *localIp, int primaryPort,
                               int localPort);

    SocketWatch *watchFor(curl_socket_t socket);
    void forget(SocketWatch *watch);
    void onReadable(SocketWatch *watch);
    void drive(curl_socket_t socket, int eventMask);
    void setPaused(Transfer *transfer, bool paused);
    void afterCallbacks();
    void finishCompleted();
    void cancel(Transfer *transfer);
    void release(Transfer *transfer);
    void addToMulti(Transfer *transfer);
    QByteArray encodedUrl(const QUrl &url);

    CURLM *m_multi = nullptr;
    QTimer m_timer{this};    // parented so moveToThread() takes it along
    int m_callbackDepth = 0; // libcurl forbids multi calls from inside its callbacks
    std::unordered_set<Transfer *> m_transfers;
    std::vector<Transfer *> m_deferredRelease;
    std::vector<Transfer *> m_deferredAdd;
    static constexpr std::size_t kMaxIdleHandles = 256;
    std::vector<CURL *> m_idleHandles;
    // Every socket libcurl has asked to have watched, by descriptor, until libcurl closes it: a
    // kept-alive connection keeps its notifiers between calls (see onSocket).
    std::vector<SocketWatch *> m_watches;
    // The last URLs encoded for libcurl, found by their shared data: the adapters hand over the
    // same few URLs (see providerUrl), and encoding each again was 1.6 % of the engine's
    // instructions for a plain request.
    static constexpr std::size_t kEncodedUrlsKept = 8;
    std::array<std::pair<QUrl, QByteArray>, kEncodedUrlsKept> m_encodedUrls;
    std::size_t m_nextEncodedUrl = 0;
};

} // namespace switchyard::upstream
