#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <chrono>
#include <functional>

namespace switchyard::metrics {

// How late the thread's event loop runs a timer that is due: the engine thread's own
// responsiveness, which no request timing shows until it is bad enough to time requests out.
// One precise single-shot timer re-armed at each tick (so a late tick does not shift the next
// one's measure) costs ten wake-ups a second.
class LoopLagMonitor final : public QObject {
    Q_OBJECT
public:
    using Observer = std::function<void(double lagSeconds)>;

    explicit LoopLagMonitor(Observer observer, QObject *parent = nullptr);

    static constexpr std::chrono::milliseconds kInterval{100};

    // Starts sampling on the calling thread, which must be the thread this object lives on.
    void start(std::chrono::milliseconds interval = kInterval);
    // The lateness of the last tick, in milliseconds; 0 before the first.
    double lastLagMs() const { return m_lastLagMs; }

private:
    void tick();

    Observer m_observer;
    QTimer m_timer{this};
    // Real time, not an injected clock: the lag measured is the real event loop's behind a real
    // timer, which a manual clock could not stand in for.
    QElapsedTimer m_clock;
    std::chrono::nanoseconds m_interval{0};
    qint64 m_dueNanos = 0;
    double m_lastLagMs = 0.0;
};

} // namespace switchyard::metrics
