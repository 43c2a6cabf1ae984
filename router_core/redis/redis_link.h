#pragma once

#include "redis/redis_address.h"
#include "redis/redis_reply.h"

#include <QByteArray>
#include <QList>
#include <QObject>
#include <QTimer>
#include <chrono>
#include <functional>
#include <map>
#include <memory>

class QSocketNotifier;
struct redisAsyncContext;

namespace switchyard::redis {

// One connection to Redis, asynchronous on the thread the link lives on: commands are written
// when the socket can take them and answered through callbacks from that thread's event loop, so
// no round trip ever blocks it. The protocol is hiredis's; the bridge to Qt's event loop is ours
// (hiredis ships one for Qt 4's string-based connections, which Qt 6 no longer has).
//
// The link keeps itself up: lost or refused, it reconnects with a growing pause (100 ms up to
// 2 s by default), authenticating and selecting the database each time; linkUp() says when it can
// be used again, so its owner can republish what Redis may have lost. A command that Redis does
// not answer within `timeout` counts as Redis being unreachable: the connection is dropped (a
// Redis that hangs is down, not slow) and every command waiting on it fails.
class Link final : public QObject {
    Q_OBJECT
public:
    struct Options {
        Address address;
        QByteArray password; // empty: no AUTH
        std::chrono::milliseconds timeout{500};
        std::chrono::milliseconds firstRetry{100};
        std::chrono::milliseconds longestRetry{2000};
        QByteArray clientName; // CLIENT SETNAME: how the link shows in Redis's CLIENT LIST
    };
    // Runs exactly once per command, on the link's thread, never inside send().
    using Callback = std::function<void(const Result &)>;

    explicit Link(Options options, QObject *parent = nullptr);
    ~Link() override;
    Link(const Link &) = delete;
    Link &operator=(const Link &) = delete;

    // Connects; from then on the link reconnects by itself until it is destroyed.
    void start();

    // Connected, authenticated and answering.
    bool isUp() const { return m_up; }
    // When the link was last lost (or started, if it never came up), as UTC milliseconds since
    // the epoch; 0 while it is up.
    qint64 downSinceMs() const { return m_up ? 0 : m_downSinceMs; }
    // Why it is down, in one sentence; empty while it is up.
    QString problem() const { return m_up ? QString() : m_problem; }
    const Options &options() const { return m_options; }

    // Every command handed to Redis since start: a test counts round trips with it.
    quint64 commandsSent() const { return m_commandsSent; }
    // Commands that failed without an answer (down, lost, timed out).
    quint64 commandsFailed() const { return m_commandsFailed; }

    // Sends one command (its arguments as binary-safe strings). While the link is down the
    // callback is told so on the next turn of the event loop.
    void send(QList<QByteArray> arguments, Callback done);

Q_SIGNALS:
    void linkUp();
    void linkDown(const QString &reason);

private:
    struct Pending {
        Callback done;
        qint64 deadlineMs = 0; // on the steady clock
    };

    void connectNow();
    void handshake();
    // Writes the command to the context: the handshake's, before the link counts as up.
    void write(const QList<QByteArray> &arguments, Callback done);
    void answer(quint64 id, const redisReply *reply);
    void lose(const QString &reason);
    void dropContext();
    void scheduleRetry();
    void armDeadline();
    void checkDeadline();
    void failLater(Callback done, const QString &failure);

    // hiredis's callbacks; the context's `data` is the link.
    static void onConnect(const redisAsyncContext *context, int status);
    static void onDisconnect(const redisAsyncContext *context, int status);
    static void onReply(redisAsyncContext *context, void *reply, void *privateData);
    // hiredis's event hooks, bridged to QSocketNotifiers.
    static void addRead(void *data);
    static void deleteRead(void *data);
    static void addWrite(void *data);
    static void deleteWrite(void *data);
    static void cleanup(void *data);
    void setNotifier(std::unique_ptr<QSocketNotifier> &slot, bool wanted, bool read);

    Options m_options;
    redisAsyncContext *m_context = nullptr; // owned by hiredis once connecting; null when none
    std::unique_ptr<QSocketNotifier> m_readNotifier;
    std::unique_ptr<QSocketNotifier> m_writeNotifier;
    std::map<quint64, Pending> m_pending; // by id: Redis answers in the order it was asked
    quint64 m_nextId = 1;
    bool m_started = false;
    bool m_up = false;
    bool m_inHiredis = false; // inside a hiredis call: the context must not be freed now
    qint64 m_downSinceMs = 0;
    QString m_problem;
    std::chrono::milliseconds m_retryPause;
    QTimer m_retryTimer;
    QTimer m_deadlineTimer;
    quint64 m_commandsSent = 0;
    quint64 m_commandsFailed = 0;
};

} // namespace switchyard::redis
