#pragma once

#include <QByteArray>
#include <QList>
#include <QProcess>
#include <QString>
#include <QTemporaryDir>
#include <memory>

namespace switchyard::testing {

// A real Redis for a test: Debian's redis-server, started by the test itself on 127.0.0.1 at a
// free port, in a temporary directory, keeping nothing on disk. Not a service of the machine:
// it lives and dies with the test.
class RedisServer {
public:
    RedisServer() = default;
    ~RedisServer();
    RedisServer(const RedisServer &) = delete;
    RedisServer &operator=(const RedisServer &) = delete;

    // Starts it; false (after a warning saying why) when it cannot. `password` empty: none.
    bool start(const QByteArray &password = {});
    // Kills it at once (SIGKILL): whatever it held is gone, as in a crash.
    void kill();
    // Starts it again on the same port: empty, unless it is persistent.
    bool restart();
    // Before start(): an append-only file synced at every write, which a restart reads back, as
    // a Redis configured for durability does.
    void setPersistent(bool persistent) { m_persistent = persistent; }
    // Stops and continues the process (SIGSTOP, SIGCONT): a Redis that accepts and never
    // answers, as under a long fork or a swapped-out machine.
    void suspend();
    void resume();
    bool isRunning() const;

    quint16 port() const { return m_port; }
    // redis://127.0.0.1:PORT/0
    QString url() const;

    // One command on a connection of its own, blocking: for a test to look at what Redis holds
    // or to change it behind the gateway's back. Returns the reply as text (an array's elements
    // joined by newlines, an integer in decimal, nil as an empty array); empty on failure.
    QByteArray command(const QList<QByteArray> &arguments) const;
    // The keys matching `pattern`, sorted.
    QList<QByteArray> keys(const QByteArray &pattern) const;

private:
    bool launch();

    std::unique_ptr<QTemporaryDir> m_directory;
    std::unique_ptr<QProcess> m_process;
    QByteArray m_password;
    quint16 m_port = 0;
    bool m_persistent = false;
};

} // namespace switchyard::testing
