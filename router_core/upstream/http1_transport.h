#pragma once

#include "upstream/upstream_transport.h"

#include <QBasicTimer>
#include <QByteArray>
#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QString>
#include <QUrl>
#include <array>
#include <chrono>
#include <memory>
#include <unordered_map>
#include <vector>

namespace switchyard::upstream {

// Plain-http HTTP/1.1 to providers, on the owning thread's event loop: a request is one sendmsg
// on a kept-alive connection and its answer one recv, through one read notifier the connection
// keeps for its life. Written for the gateway's common case, a provider on the same network
// (vLLM, Ollama, an in-house agent) reached without TLS or a proxy, where libcurl's general
// machinery (URL parsing, header building, two polls a request) was a fifth of the engine's CPU.
// TLS, proxies and CA files stay with CurlTransport (see GatewayTransport).
//
// Like CurlTransport: connections are kept per host and port and reused, most recently used
// first; a request is never sent twice (a kept-alive connection closed before any answer byte
// ends the call, and the executor's retry policy decides); names are resolved off the thread
// (QHostInfo) and kept for a minute.
class Http1Transport final : public QObject, public UpstreamTransport {
    Q_OBJECT
public:
    explicit Http1Transport(QObject *parent = nullptr);
    ~Http1Transport() override;

    // Only plain http without a proxy or a CA file, unless the provider asked for libcurl
    // (`transport: libcurl`): the rest is CurlTransport's.
    static bool handles(const UpstreamRequest &request);

    std::unique_ptr<UpstreamCall> start(const UpstreamRequest &request,
                                        UpstreamObserver *observer) override;

    // Connections open now, idle ones among them (what tests read to see reuse and closes).
    int openConnections() const { return m_openConnections; }
    int idleConnections() const { return m_idleConnections; }
    // Names looked up so far, rather than answered from the addresses kept for
    // kResolvedNameLifetime (what tests read to see the cache kept and dropped).
    int lookups() const { return m_lookups; }

    // At most this many connections are kept idle, all hosts together; and none longer than
    // this, as libcurl's default (providers close theirs between 5 s and 2 minutes).
    static constexpr int kMaxIdleConnections = 512;
    static constexpr std::chrono::seconds kMaxIdleAge{118};
    // An answer's head larger than this is not an HTTP answer a provider sends.
    static constexpr qsizetype kMaxHeadBytes = 64 * 1024;

private:
    struct Target;
    struct Connection;
    struct Exchange;
    class Call;
    class ConnectionNotifier;
    friend class Call;
    friend class ConnectionNotifier;

    struct ResolvedHost {
        QList<QHostAddress> addresses;
        std::chrono::steady_clock::time_point expires;
        bool resolving = false;
        std::vector<Exchange *> waiting;
    };

    const Target &targetFor(const QUrl &url);
    void begin(Exchange *exchange);
    void resolve(Exchange *exchange);
    void onResolved(const QString &host, const QList<QHostAddress> &addresses,
                    const QString &error);
    void connectNext(Exchange *exchange);
    void onConnected(Connection *connection);
    void send(Exchange *exchange);
    void onReadable(Connection *connection);
    void onWritable(Connection *connection);
    // Each returns false once the exchange has ended (finished, failed or cancelled).
    bool receive(Exchange *exchange, QByteArrayView bytes);
    bool receiveHead(Exchange *exchange, QByteArrayView &bytes);
    bool receiveBody(Exchange *exchange, QByteArrayView bytes);
    void complete(Exchange *exchange);
    void finish(Exchange *exchange, TransportError error, const QString &detail);
    void endNotSentAgain(Exchange *exchange);
    void end(Exchange *exchange, TransportError error, const QString &description);
    void setPaused(Exchange *exchange, bool paused);
    void cancel(Exchange *exchange);
    void schedulePendingEnds();
    void reportPendingEnds();
    void timerEvent(QTimerEvent *event) override;
    void stopTimers(Exchange *exchange);

    void forgetAddresses(const QString &host);

    Connection *takeIdle(const QByteArray &hostKey);
    void keepIdle(Connection *connection);
    void closeConnection(Connection *connection);
    void closeAgedIdleConnections();
    void dispose(Exchange *exchange);
    void flushDisposed();

    // The last few targets, found by their URL's shared data as CurlTransport finds its encoded
    // URLs: the adapters hand over the same few URLs, so each is taken apart once.
    static constexpr std::size_t kTargetsKept = 8;
    std::array<std::unique_ptr<Target>, kTargetsKept> m_targets;
    std::size_t m_nextTarget = 0;

    QHash<QString, ResolvedHost> m_hosts;
    int m_lookups = 0;
    QHash<QByteArray, std::vector<Connection *>> m_idle; // by "host:port"
    std::unordered_map<int, Exchange *> m_timers;        // by timer id
    std::vector<Exchange *> m_exchanges;
    // Freed once no handler of this transport is on the stack.
    std::vector<Exchange *> m_disposed;
    std::vector<Connection *> m_disposedConnections;
    Exchange *m_inStart = nullptr; // the call start() is setting up: its end is reported later
    bool m_pendingEndsScheduled = false;
    QBasicTimer m_idleSweep;
    int m_handlerDepth = 0;
    int m_openConnections = 0;
    int m_idleConnections = 0;
    // One buffer reads every answer: a held stream keeps no receive buffer of its own.
    QByteArray m_readBuffer;
    QByteArray m_decoded; // a chunked body's payload, handed over and emptied per read
};

} // namespace switchyard::upstream
