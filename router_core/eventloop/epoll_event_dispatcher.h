#pragma once

#include <QAbstractEventDispatcher>
#include <QHash>
#include <QVarLengthArray>
#include <array>
#include <atomic>
#include <cstdint>
#include <thread>
#include <unordered_map>
#include <vector>

struct epoll_event;

namespace switchyard::eventloop {

// What the dispatcher has done since it was made; readable from any thread (each figure is
// exact on its own, the set is not one atomic snapshot). Tests use it to show that work does not
// grow with connections or with requests on a kept-alive one.
struct DispatcherCounters {
    quint64 epollAdds = 0;         // EPOLL_CTL_ADD calls
    quint64 epollModifies = 0;     // EPOLL_CTL_MOD calls
    quint64 epollDeletes = 0;      // EPOLL_CTL_DEL calls
    quint64 waits = 0;             // epoll_wait / poll calls
    quint64 socketActivations = 0; // QEvent::SockAct sent to a notifier
    quint64 timerActivations = 0;  // QTimerEvent sent
    quint64 wakeUpWrites = 0;      // writes to the wake-up eventfd (wake-ups from other threads)
    qint64 watchedDescriptors = 0; // descriptors in the kernel's epoll set now (not the wake-up)
    qint64 registeredTimers = 0;   // timers registered now
};

// A QAbstractEventDispatcher on Linux epoll, for the engine thread: the cost of one pass is
// O(ready descriptors + expired timers), not O(open descriptors + live timers) as in Qt's glib
// and UNIX dispatchers, which poll every notifier and keep timers in a sorted list.
//
// Semantics follow Qt 6.4's UNIX dispatcher:
// - Level-triggered. Read, Write and Exception notifiers of one descriptor share one epoll entry.
//   EPOLLHUP and EPOLLERR activate every notifier of the descriptor, as POLLHUP/POLLERR do there.
//   A notifier disabled or deleted while the events of its pass are being delivered is not
//   activated; re-enabled in the same pass, it is activated on the next pass if still ready.
// - Interest changes are applied to the kernel just before the next wait, so a notifier switched
//   off and on within one pass (QAbstractSocket's write notifier around a flush) costs no system
//   call. When a descriptor's last notifier goes, it leaves the epoll set at once: its number may
//   be closed and reused by a new socket before the next wait.
// - Timers: a binary heap keyed by deadline with lazy deletion, so start, stop and restart are
//   O(log n). Precise timers keep millisecond accuracy; Coarse ones (20 ms to 20 s) are moved
//   within 5 % of their interval to a round number of milliseconds, so timers of similar
//   intervals fire in one wake-up; VeryCoarse ones (and Coarse ones of 20 s or more) fire on whole
//   seconds. A timer is activated at most once per pass and never re-entered, and a pass fires
//   only timers due when it began, so zero-interval timers cannot starve descriptors. Each due
//   timer leaves the heap only when its turn comes, so a nested loop run by one timer's handler
//   fires the others. Zero-interval timers do not count as events in processEvents()'s result.
// - aboutToBlock() is emitted before the wait's timeout is computed, so a timer it starts
//   bounds that wait.
// - Posted events are sent at the start of each pass; wakeUp() from another thread writes an
//   eventfd, from the dispatcher's own thread (an object of the engine posting to another, or
//   deleteLater()) only keeps the next wait from sleeping: that thread is running, not waiting,
//   so a write and the read that drains it would be two system calls for nothing. interrupt()
//   makes the current or next wait return at once.
class EpollEventDispatcher final : public QAbstractEventDispatcher {
    Q_OBJECT
public:
    explicit EpollEventDispatcher(QObject *parent = nullptr);
    ~EpollEventDispatcher() override;

    bool processEvents(QEventLoop::ProcessEventsFlags flags) override;

    void registerSocketNotifier(QSocketNotifier *notifier) override;
    void unregisterSocketNotifier(QSocketNotifier *notifier) override;

    using QAbstractEventDispatcher::registerTimer;
    void registerTimer(int timerId, qint64 interval, Qt::TimerType timerType,
                       QObject *object) override;
    bool unregisterTimer(int timerId) override;
    bool unregisterTimers(QObject *object) override;
    QList<TimerInfo> registeredTimers(QObject *object) const override;
    int remainingTime(int timerId) override;

    void wakeUp() override;
    void interrupt() override;

    DispatcherCounters counters() const;

private:
    static constexpr int kNotifierTypes = 3; // QSocketNotifier::Read, Write, Exception

    struct Descriptor {
        std::array<QSocketNotifier *, kNotifierTypes> notifiers{};
        std::array<int, kNotifierTypes> pendingIndex{-1, -1, -1}; // into m_pending, or -1
        std::uint32_t kernelEvents = 0; // what the kernel's epoll set holds; 0: not in it
        bool dirty = false;             // on m_dirty: interest to apply before the next wait
    };
    struct PendingActivation {
        QSocketNotifier *notifier; // nullptr once unregistered before its turn
        int descriptor;
        int type;
    };
    struct Timer {
        QObject *object;
        qint64 registeredIntervalMs;
        qint64 intervalMs;           // VeryCoarse: whole seconds
        Qt::TimerType type;          // as registered
        Qt::TimerType effectiveType; // Coarse below 20 ms runs Precise, above 20 s VeryCoarse
        qint64 deadlineNs;
        quint64 heapSequence; // the heap entry that is this timer's current one
        quint64 identity;     // unique per registration: detects an id reused during delivery
        bool inDelivery = false;
    };
    struct HeapEntry {
        qint64 deadlineNs;
        quint64 sequence; // insertion order breaks ties, so equal deadlines fire in start order
        int timerId;
    };

    Descriptor &descriptorFor(int fd);
    std::uint32_t wantedEvents(const Descriptor &descriptor) const;
    void markDirty(int fd);
    void applyInterest(int fd);
    void applyDirtyInterest();
    bool epollControl(int operation, int fd, std::uint32_t events);

    int waitForEvents(bool includeNotifiers, qint64 timeoutNs);
    void collectReadyNotifiers(int readyCount);
    int activateNotifiers();
    void drainWakeUp();

    qint64 firstDeadlineNs();
    void scheduleFirst(int timerId, Timer &timer, qint64 nowNs);
    void scheduleNext(int timerId, Timer &timer, qint64 nowNs);
    void pushHeap(int timerId, Timer &timer);
    void compactHeapIfMostlyStale();
    int activateTimers();

    int m_epoll = -1;
    int m_wakeFd = -1;
    std::atomic<bool> m_wakeUpPending{false}; // the eventfd was written since its last drain
    // The thread running the passes, set by each; a wakeUp() there writes no eventfd but sets
    // m_wakeUpOnOwnThread, which only that thread reads.
    std::atomic<std::thread::id> m_loopThread{};
    bool m_wakeUpOnOwnThread = false;
    std::atomic<bool> m_interrupted{false};
    bool m_haveWaitWithNanoseconds = true;
    bool m_drainedThisPass = false;

    std::vector<Descriptor> m_descriptors; // indexed by descriptor number
    std::vector<int> m_dirty;
    std::vector<PendingActivation> m_pending;
    std::vector<epoll_event> m_readyEvents;

    std::unordered_map<int, Timer> m_timers;
    QHash<QObject *, QVarLengthArray<int, 2>> m_timersByObject;
    std::vector<HeapEntry> m_heap;
    quint64 m_nextSequence = 1;
    quint64 m_nextIdentity = 1;

    struct AtomicCounters {
        std::atomic<quint64> epollAdds{0};
        std::atomic<quint64> epollModifies{0};
        std::atomic<quint64> epollDeletes{0};
        std::atomic<quint64> waits{0};
        std::atomic<quint64> socketActivations{0};
        std::atomic<quint64> timerActivations{0};
        std::atomic<quint64> wakeUpWrites{0};
        std::atomic<qint64> watchedDescriptors{0};
        std::atomic<qint64> registeredTimers{0};
    };
    AtomicCounters m_counters;
};

// Which dispatcher the engine thread runs: epoll unless SWITCHYARD_EVENT_DISPATCHER=qt asks for
// Qt's own (kept to compare the two and as a way back). Returns nullptr for Qt's, which
// QThread then creates itself. Any other value of the variable is reported and ignored.
QAbstractEventDispatcher *createEngineEventDispatcher();

} // namespace switchyard::eventloop
