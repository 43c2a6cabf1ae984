// The one scheduler of every per-request deadline: order, re-arming, disarming from inside a
// callback, owners that go away, coroutine waits, and the single timer that drives it live.

#include "timing/deadline_scheduler.h"

#include <QCoro/QCoroTask>
#include <QTest>
#include <memory>
#include <vector>

using namespace std::chrono_literals;
using namespace switchyard;
using timing::Deadline;
using timing::DeadlineScheduler;
using timing::Sleep;

namespace {

QCoro::Task<> sleepThenMark(DeadlineScheduler &scheduler, std::chrono::milliseconds delay,
                            std::vector<int> &marks, int mark, Sleep **handle = nullptr)
{
    Sleep wait(scheduler, delay);
    if (handle)
        *handle = &wait;
    const bool elapsed = co_await wait;
    marks.push_back(elapsed ? mark : -mark);
}

} // namespace

class DeadlineSchedulerTest : public QObject {
    Q_OBJECT

private slots:
    void firesInTimeOrderThenArmingOrder();
    void rearmingMovesAndDisarmingRemoves();
    void callbacksMayArmDisarmAndDestroy();
    void neverFiresFromInsideArm();
    void manyDeadlinesKeepTheHeapInOrder();
    void coroutineSleepsInSimulatedTime();
    void coroutineSleepWokenEarly();
    void oneTimerDrivesItLive();
};

void DeadlineSchedulerTest::firesInTimeOrderThenArmingOrder()
{
    timing::ManualClock clock;
    DeadlineScheduler scheduler(clock, DeadlineScheduler::Drive::Manual);
    std::vector<int> fired;
    Deadline late(scheduler, [&] { fired.push_back(3); });
    Deadline first(scheduler, [&] { fired.push_back(1); });
    Deadline tie(scheduler, [&] { fired.push_back(2); });
    late.armIn(30ms);
    first.armIn(10ms);
    tie.armIn(10ms);
    QCOMPARE(scheduler.pending(), std::size_t(3));
    QCOMPARE(scheduler.runDue(), 0);
    clock.advance(10ms);
    QCOMPARE(scheduler.runDue(), 2);
    QCOMPARE(fired, (std::vector<int>{1, 2}));
    clock.advance(19ms);
    QCOMPARE(scheduler.runDue(), 0);
    clock.advance(1ms);
    QCOMPARE(scheduler.runDue(), 1);
    QCOMPARE(fired, (std::vector<int>{1, 2, 3}));
    QVERIFY(!late.armed());
}

void DeadlineSchedulerTest::rearmingMovesAndDisarmingRemoves()
{
    timing::ManualClock clock;
    DeadlineScheduler scheduler(clock, DeadlineScheduler::Drive::Manual);
    int fired = 0;
    Deadline watch(scheduler, [&] { ++fired; });
    watch.armIn(10ms);
    watch.armIn(50ms); // moved, not added
    QCOMPARE(scheduler.pending(), std::size_t(1));
    clock.advance(10ms);
    QCOMPARE(scheduler.runDue(), 0);
    watch.disarm();
    QCOMPARE(scheduler.pending(), std::size_t(0));
    clock.advance(100ms);
    QCOMPARE(scheduler.runDue(), 0);
    QCOMPARE(fired, 0);
    {
        Deadline gone(scheduler, [&] { ++fired; });
        gone.armIn(1ms);
    } // destroyed armed: its owner is gone, so it never fires
    QCOMPARE(scheduler.pending(), std::size_t(0));
}

void DeadlineSchedulerTest::callbacksMayArmDisarmAndDestroy()
{
    timing::ManualClock clock;
    DeadlineScheduler scheduler(clock, DeadlineScheduler::Drive::Manual);
    std::vector<int> fired;
    auto victim = std::make_unique<Deadline>(scheduler, [&] { fired.push_back(99); });
    Deadline other(scheduler, [&] { fired.push_back(2); });
    std::unique_ptr<Deadline> self;
    self = std::make_unique<Deadline>(scheduler, [&] {
        fired.push_back(1);
        victim.reset();   // destroys an armed deadline due at the same time
        other.armIn(0ms); // due now: fires in this same run, after this callback
        self.reset();     // destroys itself
    });
    self->armIn(5ms);
    victim->armIn(5ms);
    clock.advance(5ms);
    QCOMPARE(scheduler.runDue(), 2);
    QCOMPARE(fired, (std::vector<int>{1, 2}));
    QCOMPARE(scheduler.pending(), std::size_t(0));
}

void DeadlineSchedulerTest::neverFiresFromInsideArm()
{
    timing::ManualClock clock;
    DeadlineScheduler scheduler(clock, DeadlineScheduler::Drive::Manual);
    int fired = 0;
    Deadline now(scheduler, [&] { ++fired; });
    now.armIn(0ms);
    now.armIn(-5ms); // a negative delay is "now"
    QCOMPARE(fired, 0);
    QCOMPARE(scheduler.runDue(), 1);
    QCOMPARE(fired, 1);
}

void DeadlineSchedulerTest::manyDeadlinesKeepTheHeapInOrder()
{
    timing::ManualClock clock;
    DeadlineScheduler scheduler(clock, DeadlineScheduler::Drive::Manual);
    std::vector<int> fired;
    std::vector<std::unique_ptr<Deadline>> deadlines;
    // A fixed shuffle of 0..999 ms, then every third one moved and every seventh disarmed.
    for (int i = 0; i < 1000; ++i) {
        const int at = (i * 379) % 1000;
        deadlines.push_back(
            std::make_unique<Deadline>(scheduler, [&fired, at] { fired.push_back(at); }));
        deadlines.back()->armIn(std::chrono::milliseconds(at));
    }
    int expected = 1000;
    for (int i = 0; i < 1000; i += 3)
        deadlines[i]->armIn(std::chrono::milliseconds((i * 379) % 1000));
    for (int i = 0; i < 1000; i += 7) {
        deadlines[i]->disarm();
        --expected;
    }
    clock.advance(1000ms);
    QCOMPARE(scheduler.runDue(), expected);
    QVERIFY(std::is_sorted(fired.begin(), fired.end()));
}

void DeadlineSchedulerTest::coroutineSleepsInSimulatedTime()
{
    timing::ManualClock clock;
    DeadlineScheduler scheduler(clock, DeadlineScheduler::Drive::Manual);
    std::vector<int> marks;
    QCoro::Task<> first = sleepThenMark(scheduler, 200ms, marks, 2);
    QCoro::Task<> second = sleepThenMark(scheduler, 100ms, marks, 1);
    QVERIFY(marks.empty());
    clock.advance(100ms);
    scheduler.runDue();
    QCOMPARE(marks, (std::vector<int>{1}));
    QVERIFY(second.isReady());
    clock.advance(100ms);
    scheduler.runDue();
    QCOMPARE(marks, (std::vector<int>{1, 2}));
    QVERIFY(first.isReady());
}

void DeadlineSchedulerTest::coroutineSleepWokenEarly()
{
    timing::ManualClock clock;
    DeadlineScheduler scheduler(clock, DeadlineScheduler::Drive::Manual);
    std::vector<int> marks;
    Sleep *waiting = nullptr;
    QCoro::Task<> task = sleepThenMark(scheduler, 10s, marks, 7, &waiting);
    QVERIFY(waiting);
    waiting->wake();
    QCOMPARE(marks, (std::vector<int>{-7})); // resumed at once, told it was woken
    QCOMPARE(scheduler.pending(), std::size_t(0));
    QVERIFY(task.isReady());
}

void DeadlineSchedulerTest::oneTimerDrivesItLive()
{
    // The real clock and the scheduler's own timer: the deadlines fire from the event loop,
    // in order, with no runDue() from the test.
    DeadlineScheduler scheduler(timing::SteadyClock::instance());
    std::vector<int> fired;
    Deadline second(scheduler, [&] { fired.push_back(2); });
    Deadline first(scheduler, [&] { fired.push_back(1); });
    Deadline cancelled(scheduler, [&] { fired.push_back(99); });
    second.armIn(20ms);
    first.armIn(5ms);
    cancelled.armIn(1ms);
    cancelled.disarm();
    QTRY_COMPARE(fired.size(), std::size_t(2));
    QCOMPARE(fired, (std::vector<int>{1, 2}));
    QCOMPARE(scheduler.pending(), std::size_t(0));
}

QTEST_GUILESS_MAIN(DeadlineSchedulerTest)
#include "tst_deadline_scheduler.moc"
