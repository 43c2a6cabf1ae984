#pragma once

#include <QObject>

class QSocketNotifier;

namespace switchyard::app {

// Turns SIGINT and SIGTERM into a Qt signal, and SIGHUP into a request to reload the config. A
// POSIX signal handler may only do async-signal-safe work, so it writes one byte to a socket pair
// the event loop watches.
class SignalWatcher final : public QObject {
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;

Q_SIGNALS:
    void terminationRequested(int signalNumber);
    void reloadRequested();

private:
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace switchyard::app
