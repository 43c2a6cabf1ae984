// The engine thread's epoll event dispatcher, run as the engine runs it: installed on a QThread
// before it starts. Timers, posted events and queued signals, socket notifiers on real
// descriptors (including ones closed and reused while their old notifier lives), wake-ups from
// another thread, Qt's own TCP classes and a whole engine serving requests on it.

#include "eventloop/epoll_event_dispatcher.h"
#include "fake_upstream.h"
#include "gateway_harness.h"
#include "test_client.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QLoggingCategory>
#include <QPointer>
#include <QRegularExpression>
#include <QSocketNotifier>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <atomic>
#include <fcntl.h>
#include <memory>
#include <sys/socket.h>
#include <tuple>
#include <type_traits>
#include <unistd.h>

using namespace switchyard;
using namespace switchyard::testing;
using eventloop::EpollEventDispatcher;

namespace {

// A thread running on a fresh EpollEventDispatcher, and a way to run code on it and wait.
class EpollThread {
public:
    EpollThread()
    {
        m_dispatcher = new EpollEventDispatcher;
        m_thread.setEventDispatcher(m_dispatcher);
        m_thread.start();
        m_context = new QObject;
        m_context->moveToThread(&m_thread);
    }
    ~EpollThread()
    {
        QMetaObject::invokeMethod(
            m_context, [this] { delete m_context; }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }

    EpollEventDispatcher *dispatcher() const { return m_dispatcher; }
    QThread *thread() { return &m_thread; }

    template <typename Work>
    auto run(Work work)
    {
        using Result = std::invoke_result_t<Work>;
        if constexpr (std::is_void_v<Result>) {
            QMetaObject::invokeMethod(m_context, work, Qt::BlockingQueuedConnection);
        } else {
            Result result{};
            QMetaObject::invokeMethod(
                m_context, [&] { result = work(); }, Qt::BlockingQueuedConnection);
            return result;
        }
    }

private:
    QThread m_thread;
    EpollEventDispatcher *m_dispatcher = nullptr; // owned by the thread
    QObject *m_context = nullptr;
};

// Runs a nested loop on the calling thread until `loop.quit()` or `timeoutMs`; false on timeout.
// The timeout is a guard against a hang, never a measurement.
bool runLoop(QEventLoop &loop, int timeoutMs = 5000)
{
    bool timedOut = false;
    QTimer guard;
    guard.setSingleShot(true);
    QObject::connect(&guard, &QTimer::timeout, &loop, [&] {
        timedOut = true;
        loop.quit();
    });
    guard.start(timeoutMs);
    loop.exec();
    return !timedOut;
}

// Records the id of every timer event it receives.
class TimerRecorder : public QObject {
public:
    QList<int> fired;
    std::function<void(int)> onFire;

protected:
    void timerEvent(QTimerEvent *event) override
    {
        fired.append(event->timerId());
        if (onFire)
            onFire(event->timerId());
    }
};

class PostedEventRecorder : public QObject {
public:
    static constexpr QEvent::Type kType = QEvent::Type(QEvent::User + 12);
    std::atomic<int> received{0};
    QThread *receivedOn = nullptr;

protected:
    bool event(QEvent *event) override
    {
        if (event->type() != kType)
            return QObject::event(event);
        receivedOn = QThread::currentThread();
        ++received;
        return true;
    }
};

// Emits from the test's thread into receivers on the dispatcher's thread: queued signals.
class Emitter : public QObject {
    Q_OBJECT
Q_SIGNALS:
    void ping();
};

struct SocketPair {
    int ends[2] = {-1, -1};
    SocketPair() { ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends); }
    ~SocketPair()
    {
        for (int end : ends) {
            if (end >= 0)
                ::close(end);
        }
    }
    bool valid() const { return ends[0] >= 0 && ends[1] >= 0; }
    void send(int end, QByteArrayView bytes) const
    {
        QVERIFY(::write(ends[end], bytes.data(), size_t(bytes.size())) == bytes.size());
    }
};

QByteArray drain(int fd)
{
    QByteArray bytes;
    char buffer[4096];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got <= 0)
            return bytes;
        bytes.append(buffer, got);
    }
}

} // namespace

class EpollDispatcherTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void theThreadRunsTheEpollDispatcher();
    void timersFireInDeadlineOrderWithTheirIds();
    void repeatingTimerKeepsItsIdAndSingleShotFiresOnce();
    void remainingTimeCountsDownAndForgetsStoppedTimers();
    void remainingTimeFollowsTheTimerType_data();
    void remainingTimeFollowsTheTimerType();
    void unregisterTimersOfAnObjectLeavesOthersRunning();
    void restartingATimerManyTimesLeavesOneLiveEntry();
    void zeroIntervalTimerDoesNotStarveSockets();
    void nestedLoopInATimerFiresTheTimersDueWithIt();
    void timerStartedBeforeBlockingBoundsTheWait();
    void zeroIntervalTimersAreNotReportedAsEvents();
    void postedEventsAndQueuedSignalsArriveWhileIdle();
    void readAndWriteNotifiersOnASocketPair();
    void hangUpWakesTheReadNotifier();
    void notifierChangedInsideAnotherActivation_data();
    void notifierChangedInsideAnotherActivation();
    void descriptorReusedInTheSameWakeUpDoesNotFireTheNewNotifier();
    void descriptorReusedWhileTheOldNotifierIsAliveButDisabled();
    void notifierReplacedInsideAnotherActivationLosesItsCollectedEvent();
    void descriptorReusedUnderAnEnabledNotifierIsWatchedForTheNewOne();
    void wakeUpAndInterruptFromAnotherThread();
    void postingOnTheLoopThreadWritesNoWakeUp();
    void excludedNotifiersDoNotSpinAWaitingLoop();
    void tcpRoundTripWithQtSockets();
    void engineServesPlainAndStreamedRequests();
    void keptAliveConnectionDoesNotChurnRegistrations();
};

void EpollDispatcherTest::initTestCase()
{
    QLoggingCategory::setFilterRules(QStringLiteral("switchyard.*.debug=false\n"
                                                    "switchyard.*.info=false"));
}

void EpollDispatcherTest::theThreadRunsTheEpollDispatcher()
{
    EpollThread epoll;
    QCOMPARE(QAbstractEventDispatcher::instance(epoll.thread()), epoll.dispatcher());
    const bool onThread =
        epoll.run([&] { return QAbstractEventDispatcher::instance() == epoll.dispatcher(); });
    QVERIFY(onThread);
}

void EpollDispatcherTest::timersFireInDeadlineOrderWithTheirIds()
{
    EpollThread epoll;
    const auto [started, fired] = epoll.run([] {
        TimerRecorder recorder;
        QEventLoop loop;
        // Started out of order; equal intervals started one after the other keep that order.
        const QList<int> started{
            recorder.startTimer(60, Qt::PreciseTimer), recorder.startTimer(20, Qt::PreciseTimer),
            recorder.startTimer(40, Qt::PreciseTimer), recorder.startTimer(40, Qt::PreciseTimer)};
        recorder.onFire = [&](int id) {
            recorder.killTimer(id); // each fires once
            if (recorder.fired.size() == 4)
                loop.quit();
        };
        runLoop(loop);
        return std::pair{started, recorder.fired};
    });
    QCOMPARE(fired, (QList<int>{started[1], started[2], started[3], started[0]}));
}

void EpollDispatcherTest::repeatingTimerKeepsItsIdAndSingleShotFiresOnce()
{
    EpollThread epoll;
    const auto [repeatingId, fired, singleShots] = epoll.run([] {
        TimerRecorder recorder;
        QEventLoop loop;
        int singleShots = 0;
        QTimer::singleShot(1, &recorder, [&] { ++singleShots; });
        const int repeatingId = recorder.startTimer(2, Qt::PreciseTimer);
        recorder.onFire = [&](int) {
            if (recorder.fired.size() == 5)
                loop.quit();
        };
        runLoop(loop);
        recorder.killTimer(repeatingId);
        return std::tuple{repeatingId, recorder.fired, singleShots};
    });
    QCOMPARE(fired, QList<int>(5, repeatingId));
    QCOMPARE(singleShots, 1);
}

void EpollDispatcherTest::remainingTimeCountsDownAndForgetsStoppedTimers()
{
    EpollThread epoll;
    const auto [remaining, afterStop, unknown, counted, countedAfter] = epoll.run([&] {
        QObject owner;
        const int id = owner.startTimer(10000, Qt::PreciseTimer);
        const int remaining = epoll.dispatcher()->remainingTime(id);
        const qint64 counted = epoll.dispatcher()->counters().registeredTimers;
        owner.killTimer(id);
        return std::tuple{remaining, epoll.dispatcher()->remainingTime(id),
                          epoll.dispatcher()->remainingTime(987654), counted,
                          epoll.dispatcher()->counters().registeredTimers};
    });
    QVERIFY2(remaining > 9000 && remaining <= 10000, QByteArray::number(remaining));
    QCOMPARE(afterStop, -1);
    QCOMPARE(unknown, -1);
    QCOMPARE(countedAfter, counted - 1);
}

void EpollDispatcherTest::remainingTimeFollowsTheTimerType_data()
{
    QTest::addColumn<Qt::TimerType>("type");
    QTest::addColumn<int>("intervalMs");
    QTest::addColumn<int>("atMostMs");
    QTest::addColumn<int>("atLeastMs");
    // Precise: to the millisecond. Coarse: within 5 % of the interval. VeryCoarse: whole seconds,
    // so up to a second more than the interval rounded to seconds. Lower bounds leave a second
    // for a busy machine between starting the timer and asking.
    QTest::newRow("precise 3000 ms") << Qt::PreciseTimer << 3000 << 3000 << 2000;
    QTest::newRow("coarse 3000 ms") << Qt::CoarseTimer << 3000 << 3150 << 1850;
    QTest::newRow("coarse 10 ms runs precise") << Qt::CoarseTimer << 10 << 10 << 0;
    QTest::newRow("very coarse 2400 ms") << Qt::VeryCoarseTimer << 2400 << 3000 << 1000;
    QTest::newRow("coarse 25 s runs very coarse") << Qt::CoarseTimer << 25000 << 26000 << 24000;
}

void EpollDispatcherTest::remainingTimeFollowsTheTimerType()
{
    QFETCH(Qt::TimerType, type);
    QFETCH(int, intervalMs);
    QFETCH(int, atMostMs);
    QFETCH(int, atLeastMs);
    EpollThread epoll;
    const auto [remaining, listed] = epoll.run([&] {
        QObject owner;
        const int id = owner.startTimer(intervalMs, type);
        return std::pair{epoll.dispatcher()->remainingTime(id),
                         epoll.dispatcher()->registeredTimers(&owner)};
    });
    QVERIFY2(remaining <= atMostMs && remaining >= atLeastMs, QByteArray::number(remaining));
    QCOMPARE(listed.size(), 1);
    QCOMPARE(listed.at(0).interval, intervalMs);
    QCOMPARE(listed.at(0).timerType, type);
}

void EpollDispatcherTest::unregisterTimersOfAnObjectLeavesOthersRunning()
{
    EpollThread epoll;
    const auto [listedBefore, listedAfter, removed, removedAgain, othersFired, stoppedFired] =
        epoll.run([&] {
            TimerRecorder stopped;
            TimerRecorder other;
            QEventLoop loop;
            stopped.startTimer(5, Qt::PreciseTimer);
            stopped.startTimer(7, Qt::CoarseTimer);
            stopped.startTimer(9, Qt::PreciseTimer);
            const qsizetype listedBefore = epoll.dispatcher()->registeredTimers(&stopped).size();
            const bool removed = epoll.dispatcher()->unregisterTimers(&stopped);
            const bool removedAgain = epoll.dispatcher()->unregisterTimers(&stopped);
            const qsizetype listedAfter = epoll.dispatcher()->registeredTimers(&stopped).size();
            other.startTimer(20, Qt::PreciseTimer);
            other.onFire = [&](int) {
                if (other.fired.size() == 3)
                    loop.quit();
            };
            runLoop(loop);
            epoll.dispatcher()->unregisterTimers(&other);
            return std::tuple{listedBefore, listedAfter,        removed,
                              removedAgain, other.fired.size(), stopped.fired.size()};
        });
    QCOMPARE(listedBefore, 3);
    QCOMPARE(listedAfter, 0);
    QVERIFY(removed);
    QVERIFY(!removedAgain);
    QCOMPARE(othersFired, 3);
    QCOMPARE(stoppedFired, 0);
}

void EpollDispatcherTest::restartingATimerManyTimesLeavesOneLiveEntry()
{
    // What the engine does per read of a busy connection in the worst case: a QTimer restarted
    // over and over. It must still fire once, when the last start says.
    EpollThread epoll;
    const auto [fired, liveTimers] = epoll.run([&] {
        QTimer timer;
        timer.setSingleShot(true);
        timer.setTimerType(Qt::PreciseTimer);
        int fired = 0;
        QEventLoop loop;
        QObject::connect(&timer, &QTimer::timeout, &loop, [&] {
            ++fired;
            loop.quit();
        });
        for (int i = 0; i < 100000; ++i)
            timer.start(1000 + i % 7);
        const qint64 liveTimers = epoll.dispatcher()->counters().registeredTimers;
        timer.start(5);
        runLoop(loop);
        // Anything still due fires now, if it was wrongly left behind.
        QTimer::singleShot(30, &loop, &QEventLoop::quit);
        loop.exec();
        return std::pair{fired, liveTimers};
    });
    QCOMPARE(fired, 1);
    QCOMPARE(liveTimers, 1);
}

void EpollDispatcherTest::zeroIntervalTimerDoesNotStarveSockets()
{
    SocketPair pair;
    QVERIFY(pair.valid());
    EpollThread epoll;
    const auto [zeroTicks, readActivations] = epoll.run([&] {
        QEventLoop loop;
        int zeroTicks = 0;
        int readActivations = 0;
        QTimer zero;
        zero.setInterval(0);
        QObject::connect(&zero, &QTimer::timeout, &loop, [&] { ++zeroTicks; });
        zero.start();
        QSocketNotifier reader(qintptr(pair.ends[0]), QSocketNotifier::Read);
        QObject::connect(&reader, &QSocketNotifier::activated, &loop, [&] {
            ++readActivations;
            drain(pair.ends[0]);
            loop.quit();
        });
        // The bytes arrive while the zero timer keeps every pass busy.
        QTimer::singleShot(20, &loop, [&] { pair.send(1, "ping"); });
        runLoop(loop);
        return std::pair{zeroTicks, readActivations};
    });
    QCOMPARE(readActivations, 1);
    QVERIFY(zeroTicks > 0);
}

void EpollDispatcherTest::nestedLoopInATimerFiresTheTimersDueWithIt()
{
    // Two timers due in the same pass; the first one's handler waits in a nested loop for the
    // second. The second must not be held back by the pass that is delivering the first.
    EpollThread epoll;
    const auto [secondFiredInside, quitByGuard] = epoll.run([] {
        TimerRecorder recorder;
        QEventLoop outer;
        // Both due before the next pass looks at timers: the thread is kept busy past them.
        const int first = recorder.startTimer(0, Qt::PreciseTimer);
        const int second = recorder.startTimer(0, Qt::PreciseTimer);
        bool secondFiredInside = false;
        bool quitByGuard = false;
        bool inFirst = false;
        QEventLoop nested;
        recorder.onFire = [&](int id) {
            recorder.killTimer(id);
            if (id == first) {
                inFirst = true;
                quitByGuard = !runLoop(nested, 2000);
                inFirst = false;
                outer.quit();
            } else if (id == second) {
                secondFiredInside = inFirst;
                nested.quit();
            }
        };
        runLoop(outer);
        return std::pair{secondFiredInside, quitByGuard};
    });
    QVERIFY(!quitByGuard);
    QVERIFY(secondFiredInside);
}

void EpollDispatcherTest::timerStartedBeforeBlockingBoundsTheWait()
{
    // The only timer is started by an aboutToBlock() slot: the wait it is about to start must
    // end when that timer is due, not when the guard's much later one is.
    EpollThread epoll;
    const bool beforeTheGuard = epoll.run([&] {
        QEventLoop loop;
        bool started = false;
        bool fired = false;
        QObject::connect(epoll.dispatcher(), &QAbstractEventDispatcher::aboutToBlock, &loop, [&] {
            if (started)
                return;
            started = true;
            QTimer::singleShot(1, Qt::PreciseTimer, &loop, [&] {
                fired = true;
                loop.quit();
            });
        });
        // Without the slot's timer the guard alone would set the timeout; that timer must
        // shorten it.
        QTimer guard;
        guard.setSingleShot(true);
        bool guardQuit = false;
        QObject::connect(&guard, &QTimer::timeout, &loop, [&] {
            guardQuit = true;
            loop.quit();
        });
        guard.start(3000);
        loop.exec();
        return fired && !guardQuit;
    });
    QVERIFY(beforeTheGuard);
}

void EpollDispatcherTest::zeroIntervalTimersAreNotReportedAsEvents()
{
    EpollThread epoll;
    const auto [firedCalls, reported, preciseReported] = epoll.run([&] {
        TimerRecorder recorder;
        recorder.onFire = [&](int id) { recorder.killTimer(id); };
        recorder.startTimer(0);
        int firedCalls = 0;
        bool reported = false;
        // Non-blocking passes until the idle timer has fired (the first one normally does it).
        for (int pass = 0; pass < 100 && recorder.fired.isEmpty(); ++pass) {
            reported = epoll.dispatcher()->processEvents(QEventLoop::AllEvents);
            ++firedCalls;
        }
        // A timer with an interval is reported: the figure above is not false for another reason.
        const int precise = recorder.startTimer(1, Qt::PreciseTimer);
        bool preciseReported = false;
        while (recorder.fired.size() < 2)
            preciseReported = epoll.dispatcher()->processEvents(QEventLoop::WaitForMoreEvents);
        Q_UNUSED(precise);
        return std::tuple{firedCalls, reported, preciseReported};
    });
    QVERIFY(firedCalls < 100);
    QVERIFY(!reported);
    QVERIFY(preciseReported);
}

void EpollDispatcherTest::postedEventsAndQueuedSignalsArriveWhileIdle()
{
    EpollThread epoll;
    PostedEventRecorder recorder;
    recorder.moveToThread(epoll.thread());
    // The thread is asleep in epoll_wait with no timer: only a wake-up brings these in.
    for (int i = 0; i < 3; ++i)
        QCoreApplication::postEvent(&recorder, new QEvent(PostedEventRecorder::kType));
    QTRY_COMPARE_WITH_TIMEOUT(recorder.received.load(), 3, 5000);
    QCOMPARE(recorder.receivedOn, epoll.thread());

    std::atomic<int> queuedCalls{0};
    std::atomic<QThread *> calledOn{nullptr};
    Emitter sender;
    QObject receiver;
    receiver.moveToThread(epoll.thread());
    connect(&sender, &Emitter::ping, &receiver, [&] {
        calledOn = QThread::currentThread();
        ++queuedCalls;
    });
    for (int i = 0; i < 5; ++i)
        emit sender.ping();
    QTRY_COMPARE_WITH_TIMEOUT(queuedCalls.load(), 5, 5000);
    QCOMPARE(calledOn.load(), epoll.thread());
    epoll.run([&] {
        recorder.moveToThread(nullptr);
        receiver.moveToThread(nullptr);
    });
    recorder.moveToThread(thread());
    receiver.moveToThread(thread());
}

void EpollDispatcherTest::readAndWriteNotifiersOnASocketPair()
{
    SocketPair pair;
    QVERIFY(pair.valid());
    EpollThread epoll;
    const auto [wrote, received, watched] = epoll.run([&] {
        QEventLoop loop;
        bool wrote = false;
        QByteArray received;
        // One descriptor, two notifiers: one epoll entry with both events.
        QSocketNotifier writer(qintptr(pair.ends[0]), QSocketNotifier::Write);
        QSocketNotifier reader(qintptr(pair.ends[0]), QSocketNotifier::Read);
        QSocketNotifier peerReader(qintptr(pair.ends[1]), QSocketNotifier::Read);
        QObject::connect(&writer, &QSocketNotifier::activated, &loop, [&] {
            pair.send(0, "hello");
            wrote = true;
            writer.setEnabled(false); // writable forever: level-triggered would repeat
        });
        QObject::connect(&peerReader, &QSocketNotifier::activated, &loop, [&] {
            QCOMPARE(drain(pair.ends[1]), QByteArray("hello"));
            pair.send(1, "world");
        });
        QObject::connect(&reader, &QSocketNotifier::activated, &loop, [&] {
            received += drain(pair.ends[0]);
            loop.quit();
        });
        runLoop(loop);
        return std::tuple{wrote, received, epoll.dispatcher()->counters().watchedDescriptors};
    });
    QVERIFY(wrote);
    QCOMPARE(received, QByteArray("world"));
    QCOMPARE(watched, 2);
    // Every notifier is gone with its scope: nothing is left in the epoll set.
    QCOMPARE(epoll.dispatcher()->counters().watchedDescriptors, 0);
}

void EpollDispatcherTest::hangUpWakesTheReadNotifier()
{
    SocketPair pair;
    QVERIFY(pair.valid());
    EpollThread epoll;
    const auto [activated, endOfFile] = epoll.run([&] {
        QEventLoop loop;
        bool endOfFile = false;
        int activated = 0;
        QSocketNotifier reader(qintptr(pair.ends[0]), QSocketNotifier::Read);
        QObject::connect(&reader, &QSocketNotifier::activated, &loop, [&] {
            ++activated;
            char byte;
            endOfFile = ::read(pair.ends[0], &byte, 1) == 0;
            reader.setEnabled(false);
            loop.quit();
        });
        QTimer::singleShot(10, &loop, [&] {
            ::close(pair.ends[1]);
            pair.ends[1] = -1;
        });
        runLoop(loop);
        return std::pair{activated, endOfFile};
    });
    QCOMPARE(activated, 1);
    QVERIFY(endOfFile);
}

void EpollDispatcherTest::notifierChangedInsideAnotherActivation_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<bool>("otherFiresInALaterPass");
    QTest::newRow("disabled") << QStringLiteral("disable") << false;
    QTest::newRow("deleted") << QStringLiteral("delete") << false;
    QTest::newRow("disabled and enabled again") << QStringLiteral("toggle") << true;
}

void EpollDispatcherTest::notifierChangedInsideAnotherActivation()
{
    QFETCH(QString, change);
    QFETCH(bool, otherFiresInALaterPass);
    SocketPair first;
    SocketPair second;
    QVERIFY(first.valid() && second.valid());
    // Both readable before the thread's next wait: their events arrive in the same wake-up.
    first.send(1, "a");
    second.send(1, "b");
    EpollThread epoll;
    const auto [activations, sawLaterPass] = epoll.run([&] {
        QEventLoop loop;
        int passes = 0;
        QObject::connect(epoll.dispatcher(), &QAbstractEventDispatcher::awake, &loop,
                         [&] { ++passes; });
        std::array<QPointer<QSocketNotifier>, 2> notifiers{
            new QSocketNotifier(qintptr(first.ends[0]), QSocketNotifier::Read),
            new QSocketNotifier(qintptr(second.ends[0]), QSocketNotifier::Read)};
        std::array<int, 2> activationPass{-1, -1};
        int activations = 0;
        for (int index = 0; index < 2; ++index) {
            QObject::connect(notifiers[index], &QSocketNotifier::activated, &loop, [&, index] {
                ++activations;
                activationPass[index] = passes;
                drain(index == 0 ? first.ends[0] : second.ends[0]);
                QSocketNotifier *other = notifiers[1 - index];
                if (activations == 1 && other) {
                    if (change == QLatin1String("disable")) {
                        other->setEnabled(false);
                    } else if (change == QLatin1String("delete")) {
                        delete other;
                    } else {
                        other->setEnabled(false);
                        other->setEnabled(true);
                    }
                }
                if (activations == 2)
                    loop.quit();
            });
        }
        // A pass is the unit here, not time: give the other a few passes to show up.
        QTimer::singleShot(100, &loop, &QEventLoop::quit);
        runLoop(loop);
        const bool sawLaterPass = activations == 2 && activationPass[0] != activationPass[1];
        for (QSocketNotifier *notifier : notifiers)
            delete notifier;
        return std::pair{activations, sawLaterPass};
    });
    QCOMPARE(activations, otherFiresInALaterPass ? 2 : 1);
    QCOMPARE(sawLaterPass, otherFiresInALaterPass);
}

void EpollDispatcherTest::descriptorReusedInTheSameWakeUpDoesNotFireTheNewNotifier()
{
    // The first notifier to run deletes the other, closes its descriptor and puts a fresh,
    // silent socket under the same number with a new notifier; the event already collected for
    // the old socket must not reach the new notifier.
    SocketPair first;
    SocketPair second;
    QVERIFY(first.valid() && second.valid());
    first.send(1, "a");
    second.send(1, "b");
    EpollThread epoll;
    const auto [activations, firedForTheOldSocket, firedForItsOwnBytes, reusedNumber] =
        epoll.run([&] {
            QEventLoop loop;
            std::array<SocketPair *, 2> pairs{&first, &second};
            std::array<QSocketNotifier *, 2> notifiers{
                new QSocketNotifier(qintptr(first.ends[0]), QSocketNotifier::Read),
                new QSocketNotifier(qintptr(second.ends[0]), QSocketNotifier::Read)};
            std::unique_ptr<QSocketNotifier> replacement;
            std::unique_ptr<SocketPair> fresh;
            int activations = 0;
            bool newNotifierFired = false;
            bool reusedNumber = false;
            for (int index = 0; index < 2; ++index) {
                QObject::connect(notifiers[index], &QSocketNotifier::activated, &loop, [&, index] {
                    ++activations;
                    drain(pairs[index]->ends[0]);
                    if (activations > 1)
                        return;
                    const int other = 1 - index;
                    const int number = pairs[other]->ends[0];
                    delete notifiers[other];
                    notifiers[other] = nullptr;
                    fresh = std::make_unique<SocketPair>();
                    // Put the fresh socket under the old number, as the kernel would on reuse.
                    reusedNumber = ::dup3(fresh->ends[0], number, O_CLOEXEC) == number;
                    replacement =
                        std::make_unique<QSocketNotifier>(qintptr(number), QSocketNotifier::Read);
                    QObject::connect(replacement.get(), &QSocketNotifier::activated, &loop,
                                     [&] { newNotifierFired = true; });
                });
            }
            QTimer::singleShot(100, &loop, &QEventLoop::quit);
            loop.exec();
            const bool firedForTheOldSocket = newNotifierFired;
            // And the new socket is watched for real: its own bytes wake its notifier.
            bool firedForItsOwnBytes = false;
            if (replacement) {
                QObject::connect(replacement.get(), &QSocketNotifier::activated, &loop, [&] {
                    firedForItsOwnBytes = true;
                    loop.quit();
                });
                fresh->send(1, "new");
                runLoop(loop);
            }
            replacement.reset();
            for (QSocketNotifier *notifier : notifiers)
                delete notifier;
            return std::tuple{activations, firedForTheOldSocket, firedForItsOwnBytes, reusedNumber};
        });
    QVERIFY(reusedNumber);
    QCOMPARE(activations, 1);
    QVERIFY(!firedForTheOldSocket);
    QVERIFY(firedForItsOwnBytes);
}

void EpollDispatcherTest::descriptorReusedWhileTheOldNotifierIsAliveButDisabled()
{
    EpollThread epoll;
    const auto [oldFired, newFired, sameNumber, watchedBefore] = epoll.run([&] {
        QEventLoop loop;
        auto old = std::make_unique<SocketPair>();
        const int number = old->ends[0];
        QSocketNotifier oldNotifier(qintptr(number), QSocketNotifier::Read);
        int oldFired = 0;
        QObject::connect(&oldNotifier, &QSocketNotifier::activated, &loop, [&] { ++oldFired; });
        // Let the old one be watched by the kernel first (a whole pass: a timer, not a posted
        // event), then disable it and close its socket.
        QTimer::singleShot(1, &loop, &QEventLoop::quit);
        loop.exec();
        const qint64 watchedBefore = epoll.dispatcher()->counters().watchedDescriptors;
        oldNotifier.setEnabled(false);
        ::close(old->ends[0]);
        old->ends[0] = -1;

        SocketPair fresh;
        // The kernel hands out the lowest free number, which is usually the one just closed.
        const bool sameNumber =
            fresh.ends[0] == number || ::dup3(fresh.ends[0], number, O_CLOEXEC) == number;
        QSocketNotifier newNotifier(qintptr(number), QSocketNotifier::Read);
        int newFired = 0;
        QObject::connect(&newNotifier, &QSocketNotifier::activated, &loop, [&] {
            ++newFired;
            drain(number);
            loop.quit();
        });
        fresh.send(1, "first");
        runLoop(loop);
        // The old notifier goes away while disabled: the new one keeps its registration.
        oldNotifier.setSocket(-1);
        fresh.send(1, "second");
        runLoop(loop);
        if (fresh.ends[0] != number)
            ::close(number);
        return std::tuple{oldFired, newFired, sameNumber, watchedBefore};
    });
    QCOMPARE(watchedBefore, 1);
    QVERIFY(sameNumber);
    QCOMPARE(oldFired, 0);
    QCOMPARE(newFired, 2);
}

void EpollDispatcherTest::notifierReplacedInsideAnotherActivationLosesItsCollectedEvent()
{
    // Both sockets are ready in one wake-up. The first handler to run puts a second Read
    // notifier on the other's descriptor (it takes the old one's place) and switches the old one
    // off: the event collected for the old one must not reach it, and the new one fires later
    // because the socket is still readable.
    SocketPair first;
    SocketPair second;
    QVERIFY(first.valid() && second.valid());
    first.send(1, "a");
    second.send(1, "b");
    EpollThread epoll;
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral(
                                           "Multiple socket notifiers for same socket")));
    const auto [activations, replacedFired, replacementFired] = epoll.run([&] {
        QEventLoop loop;
        std::array<SocketPair *, 2> pairs{&first, &second};
        std::array<QSocketNotifier *, 2> notifiers{
            new QSocketNotifier(qintptr(first.ends[0]), QSocketNotifier::Read),
            new QSocketNotifier(qintptr(second.ends[0]), QSocketNotifier::Read)};
        std::unique_ptr<QSocketNotifier> replacement;
        int activations = 0;
        int replaced = -1;
        bool replacedFired = false;
        bool replacementFired = false;
        for (int index = 0; index < 2; ++index) {
            QObject::connect(notifiers[index], &QSocketNotifier::activated, &loop, [&, index] {
                ++activations;
                if (index == replaced) {
                    replacedFired = true;
                    return;
                }
                drain(pairs[index]->ends[0]);
                if (replaced >= 0)
                    return;
                replaced = 1 - index;
                const int number = pairs[replaced]->ends[0];
                replacement =
                    std::make_unique<QSocketNotifier>(qintptr(number), QSocketNotifier::Read);
                QObject::connect(replacement.get(), &QSocketNotifier::activated, &loop, [&] {
                    replacementFired = true;
                    drain(number);
                    loop.quit();
                });
                // Deleting it here is what the review found (a use after free); switching it
                // off takes the same path and shows the stray event without undefined behaviour.
                notifiers[replaced]->setEnabled(false);
            });
        }
        runLoop(loop);
        replacement.reset();
        for (QSocketNotifier *notifier : notifiers)
            delete notifier;
        return std::tuple{activations, replacedFired, replacementFired};
    });
    QVERIFY(!replacedFired);
    QCOMPARE(activations, 1);
    QVERIFY(replacementFired);
}

void EpollDispatcherTest::descriptorReusedUnderAnEnabledNotifierIsWatchedForTheNewOne()
{
    // The socket is closed while its notifier is still enabled (the kernel drops it from the
    // epoll set), the number is reused, and a new notifier of the same type takes it over: same
    // interest as before, but the new file must still be added to the set.
    EpollThread epoll;
    QTest::ignoreMessage(QtWarningMsg, QRegularExpression(QStringLiteral(
                                           "Multiple socket notifiers for same socket")));
    const auto [newFired, sameNumber] = epoll.run([&] {
        QEventLoop loop;
        auto old = std::make_unique<SocketPair>();
        const int number = old->ends[0];
        auto oldNotifier =
            std::make_unique<QSocketNotifier>(qintptr(number), QSocketNotifier::Read);
        QTimer::singleShot(1, &loop, &QEventLoop::quit);
        loop.exec(); // a whole pass: the old socket is in the kernel's set
        ::close(old->ends[0]);
        old->ends[0] = -1;
        SocketPair fresh;
        const bool sameNumber =
            fresh.ends[0] == number || ::dup3(fresh.ends[0], number, O_CLOEXEC) == number;
        QSocketNotifier newNotifier(qintptr(number), QSocketNotifier::Read);
        bool newFired = false;
        QObject::connect(&newNotifier, &QSocketNotifier::activated, &loop, [&] {
            newFired = true;
            drain(number);
            loop.quit();
        });
        fresh.send(1, "new");
        runLoop(loop, 1000);
        oldNotifier.reset(); // it lost its place: the new one stays registered
        if (fresh.ends[0] != number)
            ::close(number);
        return std::pair{newFired, sameNumber};
    });
    QVERIFY(sameNumber);
    QVERIFY(newFired);
}

void EpollDispatcherTest::wakeUpAndInterruptFromAnotherThread()
{
    EpollThread epoll;
    // Set by the nested pass when it is about to sleep: a wake-up from this thread is only owed
    // to a pass that sleeps, or is about to (one sent while the thread is awake is merged into
    // the pass it is running, as in Qt's dispatchers).
    std::atomic<bool> nestedRunning{false};
    std::atomic<bool> nestedAsleep{false};
    bool sleptThisPass = false; // the dispatcher's thread only
    connect(
        epoll.dispatcher(), &QAbstractEventDispatcher::aboutToBlock, epoll.dispatcher(),
        [&] {
            if (nestedRunning) {
                sleptThisPass = true;
                nestedAsleep = true;
            }
        },
        Qt::DirectConnection);
    std::atomic<bool> returned{false};
    const auto sleepNested = [&] {
        nestedAsleep = false;
        returned = false;
        // Nested passes that may block (no timer, no descriptor, nothing posted) until one has
        // slept: the first may not, if the wake-up that brought this call is still pending.
        QMetaObject::invokeMethod(epoll.dispatcher(), [&] {
            nestedRunning = true;
            do {
                sleptThisPass = false;
                epoll.dispatcher()->processEvents(QEventLoop::WaitForMoreEvents);
            } while (!sleptThisPass);
            nestedRunning = false;
            returned = true;
        });
    };

    sleepNested();
    QTRY_VERIFY_WITH_TIMEOUT(nestedAsleep.load(), 5000);
    epoll.dispatcher()->wakeUp();
    QTRY_VERIFY_WITH_TIMEOUT(returned.load(), 5000);

    sleepNested();
    QTRY_VERIFY_WITH_TIMEOUT(nestedAsleep.load(), 5000);
    epoll.dispatcher()->interrupt();
    QTRY_VERIFY_WITH_TIMEOUT(returned.load(), 5000);

    // Many wake-ups racing with the thread's own passes: none may be lost, so every nested
    // sleep ends.
    for (int round = 0; round < 100; ++round) {
        sleepNested();
        for (int spin = 0; !nestedAsleep.load(); ++spin) {
            epoll.dispatcher()->wakeUp();
            if (spin % 16 == 0)
                QThread::yieldCurrentThread();
        }
        epoll.dispatcher()->wakeUp();
        QTRY_VERIFY_WITH_TIMEOUT(returned.load(), 5000);
    }
    // quit() interrupts the thread's own loop: the fixture's destructor waits for it.
}

void EpollDispatcherTest::postingOnTheLoopThreadWritesNoWakeUp()
{
    EpollThread epoll;
    const auto [delivered, writesOnThread, postedBeforeSleep] = epoll.run([&] {
        const quint64 writesBefore = epoll.dispatcher()->counters().wakeUpWrites;
        // Events posted from the loop's own thread, and a deleteLater(): all delivered by the
        // loop, none with an eventfd write.
        PostedEventRecorder recorder;
        QEventLoop loop;
        for (int i = 0; i < 3; ++i)
            QCoreApplication::postEvent(&recorder, new QEvent(PostedEventRecorder::kType));
        // Deleted later from inside the loop, so that this loop's next pass delivers it.
        auto *doomed = new QObject;
        bool deleted = false;
        QObject::connect(doomed, &QObject::destroyed, &loop, [&] {
            deleted = true;
            loop.quit();
        });
        QMetaObject::invokeMethod(
            &loop, [&] { doomed->deleteLater(); }, Qt::QueuedConnection);
        const bool ran = runLoop(loop);
        const bool delivered = ran && recorder.received.load() == 3;
        const quint64 writes = epoll.dispatcher()->counters().wakeUpWrites - writesBefore;

        // Posted by an aboutToBlock() slot, after the pass looked for wake-ups: the wait that
        // follows must not sleep on it (no timer would end that sleep before the guard's).
        QEventLoop second;
        bool posted = false;
        QObject::connect(epoll.dispatcher(), &QAbstractEventDispatcher::aboutToBlock, &second, [&] {
            if (posted)
                return;
            posted = true;
            QMetaObject::invokeMethod(
                &second, [&] { second.quit(); }, Qt::QueuedConnection);
        });
        const bool beforeTheGuard = runLoop(second, 3000);
        return std::tuple{delivered && deleted, writes, posted && beforeTheGuard};
    });
    QVERIFY(delivered);
    QCOMPARE(writesOnThread, quint64(0));
    QVERIFY(postedBeforeSleep);

    // From another thread the eventfd is still written, and the sleeping loop wakes.
    const quint64 writesBefore = epoll.dispatcher()->counters().wakeUpWrites;
    PostedEventRecorder remote;
    remote.moveToThread(epoll.thread());
    QCoreApplication::postEvent(&remote, new QEvent(PostedEventRecorder::kType));
    QTRY_COMPARE_WITH_TIMEOUT(remote.received.load(), 1, 5000);
    QVERIFY(epoll.dispatcher()->counters().wakeUpWrites > writesBefore);
    epoll.run([&] { remote.moveToThread(nullptr); });
    remote.moveToThread(thread());
}

void EpollDispatcherTest::excludedNotifiersDoNotSpinAWaitingLoop()
{
    SocketPair pair;
    QVERIFY(pair.valid());
    pair.send(1, "ready"); // readable for the whole test
    EpollThread epoll;
    const auto [activatedWhileExcluded, waits, activatedAfter] = epoll.run([&] {
        int activated = 0;
        QSocketNotifier reader(qintptr(pair.ends[0]), QSocketNotifier::Read);
        QObject::connect(&reader, &QSocketNotifier::activated, &reader, [&] { ++activated; });
        QTimer stop;
        stop.setSingleShot(true);
        bool stopped = false;
        QObject::connect(&stop, &QTimer::timeout, &reader, [&] { stopped = true; });
        stop.start(50);
        const quint64 waitsBefore = epoll.dispatcher()->counters().waits;
        while (!stopped) {
            epoll.dispatcher()->processEvents(QEventLoop::ExcludeSocketNotifiers |
                                              QEventLoop::WaitForMoreEvents);
        }
        const quint64 waits = epoll.dispatcher()->counters().waits - waitsBefore;
        const int activatedWhileExcluded = activated;
        epoll.dispatcher()->processEvents(QEventLoop::AllEvents);
        return std::tuple{activatedWhileExcluded, waits, activated};
    });
    QCOMPARE(activatedWhileExcluded, 0);
    // A waiting loop with the ready socket excluded sleeps until its timer: a few waits, not
    // thousands of empty passes.
    QVERIFY2(waits < 10, QByteArray::number(waits));
    QCOMPARE(activatedAfter, 1);
}

void EpollDispatcherTest::tcpRoundTripWithQtSockets()
{
    EpollThread epoll;
    const auto [echoed, sent] = epoll.run([] {
        QEventLoop loop;
        QTcpServer server;
        if (!server.listen(QHostAddress::LocalHost, 0))
            return std::pair{QByteArray(), QByteArray("listen failed")};
        QObject::connect(&server, &QTcpServer::newConnection, &loop, [&] {
            QTcpSocket *peer = server.nextPendingConnection();
            QObject::connect(peer, &QTcpSocket::readyRead, peer,
                             [peer] { peer->write(peer->readAll()); });
        });
        // Larger than the socket buffers: the write notifiers must carry it through.
        QByteArray sent(4 * 1024 * 1024, Qt::Uninitialized);
        for (qsizetype i = 0; i < sent.size(); ++i)
            sent[i] = char('a' + i % 23);
        QTcpSocket client;
        QByteArray echoed;
        QObject::connect(&client, &QTcpSocket::connected, &loop, [&] { client.write(sent); });
        QObject::connect(&client, &QTcpSocket::readyRead, &loop, [&] {
            echoed += client.readAll();
            if (echoed.size() >= sent.size())
                loop.quit();
        });
        client.connectToHost(QHostAddress::LocalHost, server.serverPort());
        runLoop(loop, 20000);
        return std::pair{echoed, sent};
    });
    QCOMPARE(echoed.size(), sent.size());
    QVERIFY(echoed == sent);
}

void EpollDispatcherTest::engineServesPlainAndStreamedRequests()
{
    FakeUpstream fake; // on this thread, with Qt's dispatcher
    fake.streamEvents = 5;
    fake.eventIntervalMs = 2;
    EpollThread epoll;
    const config::Config config =
        gatewayConfig({providerFor(QStringLiteral("primary"), fake, {QStringLiteral("m")})});
    std::unique_ptr<Engine> engine = epoll.run([&] { return startEngine(config); });
    QVERIFY(engine);
    QCOMPARE(engine->thread(), epoll.thread());

    for (const bool stream : {false, true, false, true}) {
        TestClient client(engine->port());
        client.post("/v1/chat/completions", chatBody("m", stream));
        QVERIFY(client.waitForFinished());
        QCOMPARE(client.status(), 200);
        if (stream) {
            QCOMPARE(client.events().size(), 7); // 5 content, the final event, [DONE]
            QCOMPARE(client.events().last().data, QByteArray("[DONE]"));
        } else {
            QVERIFY(client.body().contains("\"choices\""));
        }
    }
    // Many at once: each connection's notifiers live side by side in one epoll set.
    std::vector<std::unique_ptr<TestClient>> clients;
    for (int i = 0; i < 50; ++i) {
        clients.push_back(std::make_unique<TestClient>(engine->port()));
        clients.back()->post("/v1/chat/completions", chatBody("m", true));
    }
    for (auto &client : clients) {
        QVERIFY(client->waitForFinished());
        QCOMPARE(client->status(), 200);
        QCOMPARE(client->events().size(), 7);
    }
    epoll.run([&] { engine.reset(); });
}

void EpollDispatcherTest::keptAliveConnectionDoesNotChurnRegistrations()
{
    FakeUpstream fake;
    fake.streamEvents = 3;
    fake.eventIntervalMs = 1;
    EpollThread epoll;
    const config::Config config =
        gatewayConfig({providerFor(QStringLiteral("primary"), fake, {QStringLiteral("m")})});
    std::unique_ptr<Engine> engine = epoll.run([&] { return startEngine(config); });
    QVERIFY(engine);
    TestClient client(engine->port());
    const auto request = [&](bool stream) {
        client.post("/v1/chat/completions", chatBody("m", stream));
        return client.waitForFinished() && client.status() == 200;
    };
    // Warm up: the client connection and the upstream connection exist and are watched.
    QVERIFY(request(false));
    QVERIFY(request(true));
    const eventloop::DispatcherCounters before = epoll.dispatcher()->counters();
    constexpr int kRequests = 40;
    for (int i = 0; i < kRequests; ++i)
        QVERIFY(request(i % 2 == 1));
    const eventloop::DispatcherCounters after = epoll.dispatcher()->counters();
    const quint64 addsAndDeletes =
        (after.epollAdds - before.epollAdds) + (after.epollDeletes - before.epollDeletes);
    const quint64 modifies = after.epollModifies - before.epollModifies;
    qInfo("per request on one kept-alive connection: %.2f adds+deletes, %.2f modifies",
          double(addsAndDeletes) / kRequests, double(modifies) / kRequests);
    // The same connections serve every request: the set does not grow.
    QCOMPARE(after.watchedDescriptors, before.watchedDescriptors);
    QCOMPARE(fake.openConnections(), 1);
    // The client's kept-alive connection stays in the set with its read interest; what
    // changes per request is bounded by the one upstream connection libcurl parks between
    // transfers (it stops watching an idle connection, and its notifiers go with it): at most one
    // add and one delete per request, never a number that grows with the requests served.
    QVERIFY2(addsAndDeletes <= 2 * kRequests, QByteArray::number(addsAndDeletes));
    QVERIFY2(modifies <= 4 * kRequests, QByteArray::number(modifies));
    epoll.run([&] { engine.reset(); });
}

QTEST_GUILESS_MAIN(EpollDispatcherTest)
#include "tst_epoll_dispatcher.moc"
