#include "eventloop/epoll_event_dispatcher.h"

#include <QCoreApplication>
#include <QEvent>
#include <QLoggingCategory>
#include <QSocketNotifier>
#include <QTimerEvent>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <utility>

namespace switchyard::eventloop {

Q_LOGGING_CATEGORY(lcDispatcher, "switchyard.eventloop")

namespace {

constexpr qint64 kNanosecondsPerMillisecond = 1'000'000;
constexpr qint64 kNanosecondsPerSecond = 1'000'000'000;
// The first batch of ready descriptors one wait returns; it doubles up to the maximum while
// waits keep filling it, so a busy loop with thousands of ready sockets needs few waits. The
// maximum also bounds one pass: each ready socket of a stream costs the engine tens of
// microseconds (a stream's end, with its trace and usage, more), and timers wait for the pass to
// end. At 8,192, a loop behind on 9,900 streams ran passes of a quarter of a second; at 1,024 a
// few passes a run still went over 0.1 s; at 512 none did (docs/benchmarks.md, "Bursts"). The
// sockets not returned by one wait are by the next: level-triggered, epoll puts a descriptor it
// returned at the back of its ready list, so none waits for more than a few passes.
constexpr int kFirstReadyBatch = 256;
constexpr int kLargestReadyBatch = 512;

qint64 monotonicNs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return qint64(now.tv_sec) * kNanosecondsPerSecond + now.tv_nsec;
}

// What wakes each notifier type, as Qt's UNIX dispatcher maps poll(2) results: a hang-up or an
// error wakes every type, so the owner reads the error instead of waiting forever.
constexpr std::array<std::uint32_t, 3> kWakingEvents{
    EPOLLIN | EPOLLHUP | EPOLLERR,  // QSocketNotifier::Read
    EPOLLOUT | EPOLLHUP | EPOLLERR, // QSocketNotifier::Write
    EPOLLPRI | EPOLLHUP | EPOLLERR, // QSocketNotifier::Exception
};
constexpr std::array<std::uint32_t, 3> kInterest{EPOLLIN, EPOLLOUT, EPOLLPRI};

const char *typeName(int type)
{
    static constexpr std::array<const char *, 3> names{"Read", "Write", "Exception"};
    return names[std::size_t(type)];
}

// A Coarse timer may fire up to 5 % of its interval early or late; moving its deadline to the
// roundest number of milliseconds within that window lets timers of similar intervals share a
// wake-up, which is what Qt's coarse timers are for.
qint64 coarseDeadlineMs(qint64 exactMs, qint64 intervalMs)
{
    const qint64 slackMs = intervalMs / 20;
    static constexpr std::array<qint64, 12> granularities{1000, 500, 250, 200, 100, 50,
                                                          25,   20,  10,  5,   2,   1};
    for (const qint64 granularity : granularities) {
        if (granularity > 2 * slackMs && granularity > 1)
            continue;
        const qint64 rounded = (exactMs + granularity / 2) / granularity * granularity;
        if (std::abs(rounded - exactMs) <= slackMs)
            return rounded;
    }
    return exactMs;
}

// Heap order: the earliest deadline on top; equal deadlines in the order they were scheduled.
template <typename Entry>
bool laterEntry(const Entry &a, const Entry &b)
{
    return a.deadlineNs != b.deadlineNs ? a.deadlineNs > b.deadlineNs : a.sequence > b.sequence;
}

qint64 ceilToSecondNs(qint64 nanoseconds)
{
    return (nanoseconds + kNanosecondsPerSecond - 1) / kNanosecondsPerSecond *
           kNanosecondsPerSecond;
}

} // namespace

EpollEventDispatcher::EpollEventDispatcher(QObject *parent) : QAbstractEventDispatcher(parent)
{
    m_epoll = epoll_create1(EPOLL_CLOEXEC);
    m_wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m_epoll < 0 || m_wakeFd < 0)
        qFatal("EpollEventDispatcher: cannot create epoll or eventfd descriptors: %s",
               std::strerror(errno));
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.fd = m_wakeFd;
    if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_wakeFd, &wake) != 0)
        qFatal("EpollEventDispatcher: cannot watch its eventfd: %s", std::strerror(errno));
    m_readyEvents.resize(kFirstReadyBatch);
}

EpollEventDispatcher::~EpollEventDispatcher()
{
    ::close(m_wakeFd);
    ::close(m_epoll);
}

// ---- socket notifiers ----------------------------------------------------------------------

EpollEventDispatcher::Descriptor &EpollEventDispatcher::descriptorFor(int fd)
{
    if (std::size_t(fd) >= m_descriptors.size())
        m_descriptors.resize(std::max<std::size_t>(std::size_t(fd) + 1, m_descriptors.size() * 2));
    return m_descriptors[std::size_t(fd)];
}

std::uint32_t EpollEventDispatcher::wantedEvents(const Descriptor &descriptor) const
{
    std::uint32_t events = 0;
    for (int type = 0; type < kNotifierTypes; ++type) {
        if (descriptor.notifiers[std::size_t(type)])
            events |= kInterest[std::size_t(type)];
    }
    return events;
}

void EpollEventDispatcher::markDirty(int fd)
{
    Descriptor &descriptor = m_descriptors[std::size_t(fd)];
    if (!descriptor.dirty) {
        descriptor.dirty = true;
        m_dirty.push_back(fd);
    }
}

bool EpollEventDispatcher::epollControl(int operation, int fd, std::uint32_t events)
{
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    const bool done = epoll_ctl(m_epoll, operation, fd, &event) == 0;
    switch (operation) {
    case EPOLL_CTL_ADD:
        m_counters.epollAdds.fetch_add(1, std::memory_order_relaxed);
        break;
    case EPOLL_CTL_MOD:
        m_counters.epollModifies.fetch_add(1, std::memory_order_relaxed);
        break;
    default:
        m_counters.epollDeletes.fetch_add(1, std::memory_order_relaxed);
        break;
    }
    return done;
}

void EpollEventDispatcher::applyInterest(int fd)
{
    Descriptor &descriptor = m_descriptors[std::size_t(fd)];
    const std::uint32_t wanted = wantedEvents(descriptor);
    if (wanted == descriptor.kernelEvents)
        return;
    if (wanted == 0) {
        // The descriptor may already be closed (EBADF) or closed and reused by a socket that has
        // not been added yet (ENOENT): either way it is out of the set, as wanted.
        epollControl(EPOLL_CTL_DEL, fd, 0);
        descriptor.kernelEvents = 0;
        m_counters.watchedDescriptors.fetch_sub(1, std::memory_order_relaxed);
        return;
    }
    bool done = false;
    if (descriptor.kernelEvents == 0) {
        done = epollControl(EPOLL_CTL_ADD, fd, wanted);
        if (!done && errno == EEXIST)
            done = epollControl(EPOLL_CTL_MOD, fd, wanted);
        if (done)
            m_counters.watchedDescriptors.fetch_add(1, std::memory_order_relaxed);
    } else {
        done = epollControl(EPOLL_CTL_MOD, fd, wanted);
        // The kernel dropped the descriptor when it was closed under a live notifier and its
        // number now names another file: watch that one.
        if (!done && errno == ENOENT)
            done = epollControl(EPOLL_CTL_ADD, fd, wanted);
        if (!done)
            m_counters.watchedDescriptors.fetch_sub(1, std::memory_order_relaxed);
    }
    if (done) {
        descriptor.kernelEvents = wanted;
    } else {
        // As Qt's poll(2) dispatcher does with POLLNVAL: say so; the notifier stays registered
        // but cannot fire.
        qCWarning(lcDispatcher, "QSocketNotifier: Invalid socket %d: %s", fd, std::strerror(errno));
        descriptor.kernelEvents = 0;
    }
}

void EpollEventDispatcher::applyDirtyInterest()
{
    // Indexing, not iterators: nothing below adds to m_dirty, but keep it robust to that.
    for (std::size_t i = 0; i < m_dirty.size(); ++i) {
        const int fd = m_dirty[i];
        m_descriptors[std::size_t(fd)].dirty = false;
        applyInterest(fd);
    }
    m_dirty.clear();
}

void EpollEventDispatcher::registerSocketNotifier(QSocketNotifier *notifier)
{
    Q_ASSERT(notifier);
    const int fd = int(notifier->socket());
    const int type = int(notifier->type());
    if (fd < 0 || type < 0 || type >= kNotifierTypes) {
        qCWarning(lcDispatcher, "QSocketNotifier: Internal error: invalid socket %d", fd);
        return;
    }
    Descriptor &descriptor = descriptorFor(fd);
    QSocketNotifier *&slot = descriptor.notifiers[std::size_t(type)];
    if (slot && slot != notifier) {
        qCWarning(lcDispatcher,
                  "QSocketNotifier: Multiple socket notifiers for same socket %d "
                  "and type %s",
                  fd, typeName(type));
        // The replaced notifier's event collected in this pass is not the new one's to take,
        // and the old one may be deleted before its turn (Qt drops it from its pending list too).
        int &pending = descriptor.pendingIndex[std::size_t(type)];
        if (pending >= 0) {
            m_pending[std::size_t(pending)].notifier = nullptr;
            pending = -1;
        }
        // Taking over a live registration usually means the descriptor was closed under the old
        // notifier and its number reused: the kernel dropped the old file from the epoll set, so
        // an unchanged interest must still be added again for the new one.
        if (descriptor.kernelEvents != 0) {
            epollControl(EPOLL_CTL_DEL, fd, 0);
            descriptor.kernelEvents = 0;
            m_counters.watchedDescriptors.fetch_sub(1, std::memory_order_relaxed);
        }
    }
    slot = notifier;
    markDirty(fd);
}

void EpollEventDispatcher::unregisterSocketNotifier(QSocketNotifier *notifier)
{
    Q_ASSERT(notifier);
    const int fd = int(notifier->socket());
    const int type = int(notifier->type());
    if (fd < 0 || std::size_t(fd) >= m_descriptors.size() || type < 0 || type >= kNotifierTypes)
        return;
    Descriptor &descriptor = m_descriptors[std::size_t(fd)];
    QSocketNotifier *&slot = descriptor.notifiers[std::size_t(type)];
    if (slot != notifier) {
        // A notifier that lost its place to a later one of the same descriptor and type: it owns
        // no slot, but an activation collected for it must not outlive it.
        for (PendingActivation &activation : m_pending) {
            if (activation.notifier == notifier)
                activation.notifier = nullptr;
        }
        return;
    }
    slot = nullptr;
    int &pending = descriptor.pendingIndex[std::size_t(type)];
    if (pending >= 0) {
        m_pending[std::size_t(pending)].notifier = nullptr;
        pending = -1;
    }
    if (wantedEvents(descriptor) == 0) {
        // Leave the epoll set now, not before the next wait: the owner is about to close the
        // descriptor, and its number may be reused (and registered) before that wait.
        applyInterest(fd);
    } else {
        markDirty(fd);
    }
}

// ---- timers --------------------------------------------------------------------------------

void EpollEventDispatcher::pushHeap(int timerId, Timer &timer)
{
    timer.heapSequence = m_nextSequence++;
    m_heap.push_back({timer.deadlineNs, timer.heapSequence, timerId});
    std::push_heap(m_heap.begin(), m_heap.end(), laterEntry<HeapEntry>);
}

void EpollEventDispatcher::scheduleFirst(int timerId, Timer &timer, qint64 nowNs)
{
    const qint64 exactNs = nowNs + timer.intervalMs * kNanosecondsPerMillisecond;
    switch (timer.effectiveType) {
    case Qt::PreciseTimer:
        timer.deadlineNs = exactNs;
        break;
    case Qt::CoarseTimer:
        timer.deadlineNs = std::max(
            nowNs, coarseDeadlineMs(exactNs / kNanosecondsPerMillisecond, timer.intervalMs) *
                       kNanosecondsPerMillisecond);
        break;
    case Qt::VeryCoarseTimer:
        // Whole seconds, as Qt: the interval rounded to the nearest second (at least one).
        timer.deadlineNs = ceilToSecondNs(nowNs) + timer.intervalMs / 1000 * kNanosecondsPerSecond;
        break;
    }
    pushHeap(timerId, timer);
}

void EpollEventDispatcher::scheduleNext(int timerId, Timer &timer, qint64 nowNs)
{
    // The next deadline counts from the last one, so a repeating timer does not drift; one that
    // fell behind (the thread was busy) starts again from now rather than firing in a burst.
    const qint64 intervalNs = timer.intervalMs * kNanosecondsPerMillisecond;
    qint64 next = timer.deadlineNs + intervalNs;
    if (next <= nowNs)
        next = nowNs + intervalNs;
    if (timer.effectiveType == Qt::CoarseTimer) {
        next =
            std::max(nowNs, coarseDeadlineMs(next / kNanosecondsPerMillisecond, timer.intervalMs) *
                                kNanosecondsPerMillisecond);
    } else if (timer.effectiveType == Qt::VeryCoarseTimer) {
        next = ceilToSecondNs(next);
    }
    timer.deadlineNs = next;
    pushHeap(timerId, timer);
}

void EpollEventDispatcher::compactHeapIfMostlyStale()
{
    // Stopping a timer leaves its heap entry behind (lazy deletion keeps stop O(1)); once stale
    // entries outnumber live ones, one linear rebuild clears them: amortised O(1) per stop.
    if (m_heap.size() < 64 || m_heap.size() < 2 * m_timers.size())
        return;
    std::erase_if(m_heap, [this](const HeapEntry &entry) {
        const auto found = m_timers.find(entry.timerId);
        return found == m_timers.end() || found->second.heapSequence != entry.sequence;
    });
    std::make_heap(m_heap.begin(), m_heap.end(), laterEntry<HeapEntry>);
}

void EpollEventDispatcher::registerTimer(int timerId, qint64 interval, Qt::TimerType timerType,
                                         QObject *object)
{
    if (timerId < 1 || interval < 0 || !object) {
        qCWarning(lcDispatcher, "QEventDispatcher::registerTimer: invalid arguments");
        return;
    }
    if (m_timers.contains(timerId))
        unregisterTimer(timerId); // Qt never does this; if it did, the later registration wins
    Timer timer{object, interval, interval, timerType, timerType, 0, 0, m_nextIdentity++, false};
    // Qt's boundaries: 5 % of under 20 ms is under a millisecond, so such a Coarse timer runs
    // Precise; 5 % of 20 s or more is a second or more, so such a timer runs VeryCoarse.
    if (timerType == Qt::CoarseTimer) {
        if (interval <= 20)
            timer.effectiveType = Qt::PreciseTimer;
        else if (interval >= 20000)
            timer.effectiveType = Qt::VeryCoarseTimer;
    }
    if (timer.effectiveType == Qt::VeryCoarseTimer)
        timer.intervalMs = std::max<qint64>(1000, (interval + 500) / 1000 * 1000);
    const auto position = m_timers.emplace(timerId, timer).first;
    m_counters.registeredTimers.fetch_add(1, std::memory_order_relaxed);
    m_timersByObject[object].append(timerId);
    scheduleFirst(timerId, position->second, monotonicNs());
}

bool EpollEventDispatcher::unregisterTimer(int timerId)
{
    const auto found = m_timers.find(timerId);
    if (found == m_timers.end())
        return false;
    QObject *object = found->second.object;
    m_timers.erase(found);
    m_counters.registeredTimers.fetch_sub(1, std::memory_order_relaxed);
    const auto byObject = m_timersByObject.find(object);
    if (byObject != m_timersByObject.end()) {
        auto &ids = byObject.value();
        ids.removeOne(timerId);
        if (ids.isEmpty())
            m_timersByObject.erase(byObject);
    }
    compactHeapIfMostlyStale();
    return true;
}

bool EpollEventDispatcher::unregisterTimers(QObject *object)
{
    const auto byObject = m_timersByObject.find(object);
    if (byObject == m_timersByObject.end())
        return false;
    for (const int timerId : byObject.value()) {
        if (m_timers.erase(timerId) > 0)
            m_counters.registeredTimers.fetch_sub(1, std::memory_order_relaxed);
    }
    m_timersByObject.erase(byObject);
    compactHeapIfMostlyStale();
    return true;
}

QList<QAbstractEventDispatcher::TimerInfo>
EpollEventDispatcher::registeredTimers(QObject *object) const
{
    QList<TimerInfo> timers;
    const auto byObject = m_timersByObject.constFind(object);
    if (byObject == m_timersByObject.cend())
        return timers;
    for (const int timerId : byObject.value()) {
        const auto found = m_timers.find(timerId);
        if (found != m_timers.end()) {
            // As registered: moveToThread() registers these again on the new thread's dispatcher.
            const Timer &timer = found->second;
            timers.append(TimerInfo(timerId, int(timer.registeredIntervalMs), timer.type));
        }
    }
    return timers;
}

int EpollEventDispatcher::remainingTime(int timerId)
{
    const auto found = m_timers.find(timerId);
    if (found == m_timers.end())
        return -1;
    const qint64 leftNs = found->second.deadlineNs - monotonicNs();
    if (leftNs <= 0)
        return 0;
    return int((leftNs + kNanosecondsPerMillisecond - 1) / kNanosecondsPerMillisecond);
}

qint64 EpollEventDispatcher::firstDeadlineNs()
{
    while (!m_heap.empty()) {
        const HeapEntry &top = m_heap.front();
        const auto found = m_timers.find(top.timerId);
        if (found != m_timers.end() && found->second.heapSequence == top.sequence)
            return top.deadlineNs;
        std::pop_heap(m_heap.begin(), m_heap.end(), laterEntry<HeapEntry>);
        m_heap.pop_back();
    }
    return -1;
}

int EpollEventDispatcher::activateTimers()
{
    const qint64 nowNs = monotonicNs();
    // Only entries made before this pass began are fired: a timer started, or restarted at zero
    // interval, by one of these events waits for the next pass, so timers can never keep a pass
    // from ending. Each entry leaves the heap (and its timer is rescheduled) just before it is
    // delivered, never in a batch: a handler running a nested loop leaves the timers due after
    // it on the heap, where that loop's passes find and fire them.
    const quint64 cut = m_nextSequence;
    int activated = 0;
    while (!m_heap.empty() && m_heap.front().deadlineNs <= nowNs && m_heap.front().sequence < cut) {
        std::pop_heap(m_heap.begin(), m_heap.end(), laterEntry<HeapEntry>);
        const HeapEntry entry = m_heap.back();
        m_heap.pop_back();
        const auto found = m_timers.find(entry.timerId);
        if (found == m_timers.end() || found->second.heapSequence != entry.sequence)
            continue; // stopped or restarted since this entry was made
        Timer &timer = found->second;
        scheduleNext(entry.timerId, timer, nowNs);
        if (timer.inDelivery)
            continue; // its own event is running a nested loop: no re-entry, as in Qt
        timer.inDelivery = true;
        const quint64 identity = timer.identity;
        QObject *object = timer.object;
        QTimerEvent event(entry.timerId);
        m_counters.timerActivations.fetch_add(1, std::memory_order_relaxed);
        // As Qt: a zero-interval timer (an idle task) is no event for processEvents() to report,
        // or a loop that processes events until none are left would never stop.
        if (timer.registeredIntervalMs > 0)
            ++activated;
        QCoreApplication::sendEvent(object, &event);
        // The timer may have been stopped, and its id reused, while the event ran.
        const auto after = m_timers.find(entry.timerId);
        if (after != m_timers.end() && after->second.identity == identity)
            after->second.inDelivery = false;
    }
    return activated;
}

// ---- the pass ------------------------------------------------------------------------------

void EpollEventDispatcher::wakeUp()
{
    // On the loop's own thread the loop is not waiting: marking the pass is enough, and every
    // pass looks at the mark just before it would sleep. (Measured: one eventfd write and one
    // read per proxied request, from the engine's own posted events.)
    if (m_loopThread.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
        m_wakeUpOnOwnThread = true;
        return;
    }
    // One write per sleep is enough: the flag is cleared when the eventfd is drained.
    if (!m_wakeUpPending.exchange(true, std::memory_order_acq_rel)) {
        m_counters.wakeUpWrites.fetch_add(1, std::memory_order_relaxed);
        const std::uint64_t one = 1;
        while (::write(m_wakeFd, &one, sizeof one) < 0 && errno == EINTR) {
        }
    }
}

void EpollEventDispatcher::interrupt()
{
    m_interrupted.store(true, std::memory_order_release);
    wakeUp();
}

void EpollEventDispatcher::drainWakeUp()
{
    // The flag first, then the read: a wakeUp() in between sets the flag again, and the next
    // pass sees it and does not sleep even if this read took its write. (The other order could
    // take a write and then clear the flag of a wake-up that came after the read: lost.)
    m_wakeUpPending.store(false, std::memory_order_seq_cst);
    m_drainedThisPass = true;
    std::uint64_t count = 0;
    while (::read(m_wakeFd, &count, sizeof count) < 0 && errno == EINTR) {
    }
}

int EpollEventDispatcher::waitForEvents(bool includeNotifiers, qint64 timeoutNs)
{
    m_counters.waits.fetch_add(1, std::memory_order_relaxed);
    if (!includeNotifiers) {
        // Notifiers excluded (QEventLoop::ExcludeSocketNotifiers): wait on the eventfd alone,
        // or every ready socket would end the wait at once and the loop would spin.
        pollfd wake{m_wakeFd, POLLIN, 0};
        timespec timeout{timeoutNs / kNanosecondsPerSecond, timeoutNs % kNanosecondsPerSecond};
        const int ready = ppoll(&wake, 1, timeoutNs < 0 ? nullptr : &timeout, nullptr);
        if (ready > 0)
            drainWakeUp();
        return 0;
    }
    int ready = -1;
    if (m_haveWaitWithNanoseconds) {
        timespec timeout{timeoutNs / kNanosecondsPerSecond, timeoutNs % kNanosecondsPerSecond};
        ready = epoll_pwait2(m_epoll, m_readyEvents.data(), int(m_readyEvents.size()),
                             timeoutNs < 0 ? nullptr : &timeout, nullptr);
        if (ready < 0 && errno == ENOSYS)
            m_haveWaitWithNanoseconds = false; // a kernel before 5.11
    }
    if (!m_haveWaitWithNanoseconds) {
        // Rounded up: waking before a timer is due would only spin.
        const int timeoutMs =
            timeoutNs < 0 ? -1
                          : int(std::min<qint64>((timeoutNs + kNanosecondsPerMillisecond - 1) /
                                                     kNanosecondsPerMillisecond,
                                                 std::numeric_limits<int>::max()));
        ready = epoll_wait(m_epoll, m_readyEvents.data(), int(m_readyEvents.size()), timeoutMs);
    }
    if (ready < 0) {
        if (errno != EINTR)
            qCWarning(lcDispatcher, "epoll_wait failed: %s", std::strerror(errno));
        return 0;
    }
    return ready;
}

void EpollEventDispatcher::collectReadyNotifiers(int readyCount)
{
    for (int i = 0; i < readyCount; ++i) {
        const epoll_event &ready = m_readyEvents[std::size_t(i)];
        const int fd = ready.data.fd;
        if (fd == m_wakeFd) {
            drainWakeUp();
            continue;
        }
        if (fd < 0 || std::size_t(fd) >= m_descriptors.size())
            continue;
        Descriptor &descriptor = m_descriptors[std::size_t(fd)];
        bool wanted = false;
        for (int type = 0; type < kNotifierTypes; ++type) {
            QSocketNotifier *notifier = descriptor.notifiers[std::size_t(type)];
            if (!notifier || (ready.events & kWakingEvents[std::size_t(type)]) == 0)
                continue;
            wanted = true;
            int &pending = descriptor.pendingIndex[std::size_t(type)];
            if (pending < 0) {
                pending = int(m_pending.size());
                m_pending.push_back({notifier, fd, type});
            }
        }
        // Ready for an event nobody asks for any more (interest is narrowed lazily): narrow it
        // before the next wait so the level-triggered event does not come back.
        if (!wanted)
            markDirty(fd);
    }
    if (readyCount == int(m_readyEvents.size()) && m_readyEvents.size() < kLargestReadyBatch)
        m_readyEvents.resize(m_readyEvents.size() * 2);
}

int EpollEventDispatcher::activateNotifiers()
{
    int activated = 0;
    // Indexing, and a copy of each entry before it is delivered: a nested loop inside a
    // notifier's handler appends to m_pending and delivers what is left of it.
    for (std::size_t i = 0; i < m_pending.size(); ++i) {
        const PendingActivation activation = m_pending[i];
        if (!activation.notifier)
            continue;
        m_pending[i].notifier = nullptr;
        m_descriptors[std::size_t(activation.descriptor)]
            .pendingIndex[std::size_t(activation.type)] = -1;
        QEvent event(QEvent::SockAct);
        m_counters.socketActivations.fetch_add(1, std::memory_order_relaxed);
        ++activated;
        QCoreApplication::sendEvent(activation.notifier, &event);
    }
    m_pending.clear();
    return activated;
}

bool EpollEventDispatcher::processEvents(QEventLoop::ProcessEventsFlags flags)
{
    m_loopThread.store(std::this_thread::get_id(), std::memory_order_relaxed);
    m_interrupted.store(false, std::memory_order_relaxed);
    m_drainedThisPass = false;
    emit awake();
    QCoreApplication::sendPostedEvents();

    const bool includeTimers = !flags.testFlag(QEventLoop::X11ExcludeTimers);
    const bool includeNotifiers = !flags.testFlag(QEventLoop::ExcludeSocketNotifiers);
    const bool mayBlock = flags.testFlag(QEventLoop::WaitForMoreEvents) &&
                          !m_interrupted.load(std::memory_order_acquire);

    // A wake-up asked for since the last drain is honoured even if its eventfd write was already
    // read by that drain: this pass does not sleep, and clears it.
    const bool wakeUpAsked = m_wakeUpPending.load(std::memory_order_seq_cst);
    // Before the timeout is computed, as in Qt: a timer started by an aboutToBlock() slot must
    // bound this wait.
    if (mayBlock && !wakeUpAsked && !m_wakeUpOnOwnThread)
        emit aboutToBlock();
    if (m_interrupted.load(std::memory_order_acquire))
        return false;
    qint64 timeoutNs = mayBlock && !wakeUpAsked ? -1 : 0;
    if (includeTimers && timeoutNs != 0) {
        const qint64 firstNs = firstDeadlineNs();
        if (firstNs >= 0)
            timeoutNs = std::max<qint64>(0, firstNs - monotonicNs());
    }

    applyDirtyInterest();
    // Asked on this thread since the last pass, by posted events or an aboutToBlock() slot:
    // nothing was written to the eventfd, so this wait must not sleep.
    if (std::exchange(m_wakeUpOnOwnThread, false))
        timeoutNs = 0;
    const int readyCount = waitForEvents(includeNotifiers, timeoutNs);
    if (includeNotifiers)
        collectReadyNotifiers(readyCount);
    if (wakeUpAsked && !m_drainedThisPass)
        drainWakeUp();

    int activated = 0;
    if (includeNotifiers)
        activated += activateNotifiers();
    if (includeTimers)
        activated += activateTimers();
    return activated > 0;
}

DispatcherCounters EpollEventDispatcher::counters() const
{
    DispatcherCounters counters;
    counters.epollAdds = m_counters.epollAdds.load(std::memory_order_relaxed);
    counters.epollModifies = m_counters.epollModifies.load(std::memory_order_relaxed);
    counters.epollDeletes = m_counters.epollDeletes.load(std::memory_order_relaxed);
    counters.waits = m_counters.waits.load(std::memory_order_relaxed);
    counters.socketActivations = m_counters.socketActivations.load(std::memory_order_relaxed);
    counters.timerActivations = m_counters.timerActivations.load(std::memory_order_relaxed);
    counters.wakeUpWrites = m_counters.wakeUpWrites.load(std::memory_order_relaxed);
    counters.watchedDescriptors = m_counters.watchedDescriptors.load(std::memory_order_relaxed);
    counters.registeredTimers = m_counters.registeredTimers.load(std::memory_order_relaxed);
    return counters;
}

QAbstractEventDispatcher *createEngineEventDispatcher()
{
    const QByteArray choice = qgetenv("SWITCHYARD_EVENT_DISPATCHER");
    if (choice == "qt")
        return nullptr;
    if (!choice.isEmpty() && choice != "epoll") {
        qCWarning(lcDispatcher,
                  "SWITCHYARD_EVENT_DISPATCHER=%s is not one of epoll, qt: using epoll",
                  choice.constData());
    }
    return new EpollEventDispatcher;
}

} // namespace switchyard::eventloop
