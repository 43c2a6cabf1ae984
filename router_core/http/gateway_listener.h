#pragma once

#include "config/config_store.h"
#include "http/request_head.h"
#include "telemetry/connection_counts.h"
#include "timing/deadline_scheduler.h"
#include "timing/loop_turn.h"

#include <QHash>
#include <QHostAddress>
#include <QSslConfiguration>
#include <QTcpServer>
#include <functional>
#include <memory>
#include <optional>
#include <variant>

namespace switchyard::execution {
class ClientListener;
}

class QTcpSocket;

namespace switchyard::http {

// Answers one request read whole from `socket`. Requests of one connection arrive in order;
// a pipelined one may arrive while the answer before it is still being written.
using RequestHandler = std::function<void(QTcpSocket *socket, IncomingRequest request)>;
// Readies what the answering side keeps per connection, once it is admitted: work done as the
// connection opens is not done on its first request's way to the provider.
using ConnectionHandler = std::function<void(QTcpSocket *socket)>;

// The counts of the listener, shared with each connection it accepted: a connection deleted
// after its listener (at shutdown, in whatever order Qt deletes children) still finds them.
struct ConnectionLedger {
    RequestHandler handleRequest;
    ConnectionHandler connectionOpened; // may be unset
    telemetry::ConnectionCounts counts;
    QHash<QHostAddress, int> openByAddress; // only addresses with a connection open
    // Called when a connection, admitted or refused, has ended: one waiting in the listen
    // backlog may come in. Unset once the listener is gone.
    std::function<void()> connectionEnded;

    void opened(const QHostAddress &address);
    void closed(const QHostAddress &address);
    void refusalStarted();
    void refusalEnded();
};

// The listening socket and the HTTP/1.1 reading of every client connection. Qt 6.4's HTTP
// server was measured reading each request head one byte at a time (141 reads and a 16 KiB
// reservation per request, a fifth of the engine thread's instructions at 64 connections), has
// no timeouts, buffers a whole body before any handler runs and ignores
// `Expect: 100-continue`. This listener:
// - refuses a connection over `limits.max_connections` or `limits.max_connections_per_address`
//   with 503 once it has drained the request being sent (http/refused_connection); when
//   `limits.max_refusals_draining` refusals are draining, it stops accepting, and further
//   connections wait in the kernel's listen backlog (never reset) until one ends;
// - accepts at most kAcceptsPerTurn connections in one turn of the engine loop (timing/loop_turn):
//   a burst of thousands waits in the kernel's listen backlog and comes in over the next turns,
//   while the streams already open and the loop's timers go on;
// - reads each request whole (request/head parsing in http/request_head) and hands it to the
//   RequestHandler: a malformed head gets 400, a declared Content-Length over the limit gets
//   413 before the body is read, oversized headers get 431, "100 Continue" is answered (in its
//   turn, after the answers to earlier pipelined requests);
// - bounds how long a connection may hold the gateway without progress: headers and body must
//   arrive within their timeouts (408 when they do not), and a kept-alive connection with
//   nothing to read or answer is closed after the idle time. Each connection has one Deadline
//   on the engine's scheduler, moved as the connection changes phase: no timer per connection.
// With `tls` configured, each accepted socket is a QSslSocket that starts server encryption at
// once; everything above reads the decrypted stream. The certificate and key are read again when
// the store announces a snapshot that names other files (or the same files, changed on disk, in
// the config applied): connections already open keep the certificate they were accepted with.
class GatewayListener final : public QTcpServer {
    Q_OBJECT
public:
    // Limits and timeouts are the store's current ones, read for each new connection.
    GatewayListener(const config::ConfigStore &store, timing::DeadlineScheduler &scheduler,
                    QObject *parent = nullptr);
    ~GatewayListener() override;

    const telemetry::ConnectionCounts &counts() const { return m_ledger->counts; }
    // Whether new connections are offered TLS.
    bool tlsEnabled() const { return m_tls.has_value(); }
    // The certificate new connections are offered; null without TLS.
    QSslCertificate tlsCertificate() const;

    // Reads the certificate and key files. Empty on success, otherwise why not (the listener
    // keeps what it had).
    static std::variant<QSslConfiguration, QString>
    tlsConfigurationFrom(const config::TlsConfig &tls);

    // Who answers the requests read, and who hears of each admitted connection as it opens;
    // set once, before listening.
    void setRequestHandler(RequestHandler handler, ConnectionHandler opened = {});

    // The server has finished answering one request on `socket` (or dropped it): when no other
    // request is being read or answered there, the connection's idle time starts.
    static void answerFinished(QTcpSocket *socket);

    // The request being answered on `socket` hears of its client through `listener`: the client
    // going, and the client taking bytes Qt had to buffer. A connection forwards its socket's
    // signals, connected once when it opened, to the listener of the moment; connecting them for
    // every request was 1.2 % of the engine thread's time, more in the teardown
    // (docs/benchmarks.md). False when `socket` is not a listener's connection: the caller
    // connects the signals itself.
    static bool watchClient(QTcpSocket *socket, execution::ClientListener *listener);
    // `listener` hears no more; another listener set since keeps hearing. The connection lets go
    // of its listener by itself when the answer finishes (answerFinished).
    static void unwatchClient(QTcpSocket *socket, execution::ClientListener *listener);

protected:
    void incomingConnection(qintptr socketDescriptor) override;

private:
    void accept(qintptr socketDescriptor);
    void onAcceptError(QAbstractSocket::SocketError error);
    void waitForRoom();
    void waitForNextTurn();
    void onConnectionEnded();
    void acceptAgain();
    void useTls(const config::TlsConfig &tls);

    const config::ConfigStore &m_store;
    timing::DeadlineScheduler &m_scheduler;
    std::shared_ptr<ConnectionLedger> m_ledger = std::make_shared<ConnectionLedger>();
    // Qt stops accepting for good after an accept() error that is not temporary, such as
    // running out of file descriptors; this resumes it once descriptors may have been freed.
    timing::Deadline m_resumeAccepting;
    // Accepting waits for a connection to end: `limits.max_refusals_draining` were draining.
    bool m_waitingForRoom = false;
    // Accepting waits for the next turn of the loop: this one accepted its share.
    bool m_waitingForTurn = false;
    timing::LoopTurn m_turn;
    timing::TurnBudget m_acceptsThisTurn;
    // Qt's accept loop stops only when its list of pending connections, which this listener
    // never fills, reaches maxPendingConnections(); what it was before a wait made it 0.
    const int m_acceptLoopLimit = maxPendingConnections();
    config::TlsConfig m_tlsFiles;           // what m_tls was read from
    std::optional<QSslConfiguration> m_tls; // unset: plain HTTP
};

} // namespace switchyard::http
