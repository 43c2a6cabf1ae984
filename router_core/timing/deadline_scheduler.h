#pragma once

#include "timing/clock.h"

#include <QObject>
#include <QTimer>
#include <chrono>
#include <coroutine>
#include <cstddef>
#include <functional>
#include <vector>

namespace switchyard::timing {

class DeadlineScheduler;

// One pending wake-up, owned by whoever waits for it: a request's first-token or idle watch, a
// backoff, a Retry-After wait. Arming an armed deadline moves it; destroying it disarms it, so a
// callback never reaches an owner that is gone. Arming and disarming cost O(log n) in the
// deadlines pending and allocate nothing once the scheduler's heap has grown.
class Deadline {
public:
    Deadline(DeadlineScheduler &scheduler, std::function<void()> onDue);
    ~Deadline();
    Deadline(const Deadline &) = delete;
    Deadline &operator=(const Deadline &) = delete;

    void arm(Clock::TimePoint when);
    void armIn(std::chrono::milliseconds delay); // from the scheduler's clock's now
    void disarm();
    bool armed() const { return m_heapIndex != kNotPending; }
    Clock::TimePoint when() const { return m_when; }

private:
    friend class DeadlineScheduler;
    static constexpr std::size_t kNotPending = std::size_t(-1);

    DeadlineScheduler &m_scheduler;
    std::function<void()> m_onDue;
    Clock::TimePoint m_when{};
    std::uint64_t m_sequence = 0; // equal times fire in the order they were armed
    std::size_t m_heapIndex = kNotPending;
};

// Every per-request deadline of the engine thread in one binary heap, read from one injected
// clock. In production one QTimer is set for the earliest deadline; a test drives it by hand
// with a ManualClock and runDue(), so executors run in simulated time without real sleeps.
// Even a deadline already due fires from the event loop (or runDue()), never from inside arm():
// the next attempt never starts inside the callbacks of the one that failed.
class DeadlineScheduler final : public QObject {
    Q_OBJECT
public:
    enum class Drive { Timer, Manual };

    explicit DeadlineScheduler(const Clock &clock, Drive drive = Drive::Timer,
                               QObject *parent = nullptr);
    ~DeadlineScheduler() override;

    Clock::TimePoint now() const { return m_clock.now(); }
    // The clock deadlines are read from. What else times a request (its trace, the request rate)
    // reads the same one, so a test that moves it moves them all.
    const Clock &clock() const { return m_clock; }

    // Fires every deadline due at the clock's present time, including those a callback arms
    // for the present; returns how many fired. The timer calls it; tests call it after moving
    // their clock.
    int runDue();
    std::size_t pending() const { return m_heap.size(); }
    // The earliest pending deadline; only meaningful when pending() > 0.
    Clock::TimePoint nextDue() const { return m_heap.front()->m_when; }

private:
    friend class Deadline;

    void insert(Deadline *deadline);
    void remove(Deadline *deadline);
    void siftUp(std::size_t index);
    void siftDown(std::size_t index);
    bool earlier(const Deadline *a, const Deadline *b) const;
    void place(std::size_t index, Deadline *deadline);
    void rearmTimer();

    const Clock &m_clock;
    Drive m_drive;
    QTimer m_timer{this};          // parented: moveToThread() takes it along
    Clock::TimePoint m_timerDue{}; // what the running timer was set for
    std::vector<Deadline *> m_heap;
    std::uint64_t m_nextSequence = 0;
    bool m_running = false;
};

// `Sleep sleep(scheduler, delay); co_await sleep;`: a coroutine's wait that simulated time drives
// too, named rather than a temporary (GCC 12 may destroy a temporary co_awaited with a
// non-trivial destructor twice). wake() ends it early (a client gone, a drain); the coroutine then
// resumes from the caller's stack, so callers wake it only from event handlers. co_await gives
// whether the whole delay passed. (The awaiter is a pointer-sized proxy: GCC 12 copies an
// awaiter co_awaited by reference, and a Sleep owns a Deadline that must not move.)
class Sleep {
public:
    Sleep(DeadlineScheduler &scheduler, std::chrono::milliseconds delay);

    struct Awaiter {
        Sleep *sleep;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> waiting) { sleep->suspend(waiting); }
        bool await_resume() const noexcept { return sleep->m_elapsed; }
    };
    Awaiter operator co_await() { return Awaiter{this}; }

    void wake(); // no-op unless a coroutine waits

private:
    void suspend(std::coroutine_handle<> waiting);
    void resume(bool elapsed);

    Deadline m_deadline;
    std::chrono::milliseconds m_delay;
    std::coroutine_handle<> m_waiting;
    bool m_elapsed = false;
};

} // namespace switchyard::timing
