#include "timing/deadline_scheduler.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace switchyard::timing {

using std::chrono::milliseconds;

Deadline::Deadline(DeadlineScheduler &scheduler, std::function<void()> onDue)
    : m_scheduler(scheduler), m_onDue(std::move(onDue))
{}

Deadline::~Deadline()
{
    disarm();
}

void Deadline::arm(Clock::TimePoint when)
{
    disarm();
    m_when = when;
    m_scheduler.insert(this);
}

void Deadline::armIn(milliseconds delay)
{
    arm(m_scheduler.now() + std::max(delay, milliseconds(0)));
}

void Deadline::disarm()
{
    if (armed())
        m_scheduler.remove(this);
}

DeadlineScheduler::DeadlineScheduler(const Clock &clock, Drive drive, QObject *parent)
    : QObject(parent), m_clock(clock), m_drive(drive)
{
    m_timer.setSingleShot(true);
    // Deadlines are milliseconds; a coarse timer may fire up to 5 % late, a precise one costs a
    // wake-up more per deadline for nothing a request could notice.
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, [this] { runDue(); });
}

DeadlineScheduler::~DeadlineScheduler()
{
    // Owners outliving the scheduler must not reach into it: their deadlines become unarmed.
    for (Deadline *deadline : m_heap)
        deadline->m_heapIndex = Deadline::kNotPending;
}

bool DeadlineScheduler::earlier(const Deadline *a, const Deadline *b) const
{
    return a->m_when != b->m_when ? a->m_when < b->m_when : a->m_sequence < b->m_sequence;
}

void DeadlineScheduler::place(std::size_t index, Deadline *deadline)
{
    m_heap[index] = deadline;
    deadline->m_heapIndex = index;
}

void DeadlineScheduler::siftUp(std::size_t index)
{
    Deadline *moving = m_heap[index];
    while (index > 0) {
        const std::size_t parent = (index - 1) / 2;
        if (!earlier(moving, m_heap[parent]))
            break;
        place(index, m_heap[parent]);
        index = parent;
    }
    place(index, moving);
}

void DeadlineScheduler::siftDown(std::size_t index)
{
    Deadline *moving = m_heap[index];
    const std::size_t size = m_heap.size();
    while (true) {
        std::size_t child = 2 * index + 1;
        if (child >= size)
            break;
        if (child + 1 < size && earlier(m_heap[child + 1], m_heap[child]))
            ++child;
        if (!earlier(m_heap[child], moving))
            break;
        place(index, m_heap[child]);
        index = child;
    }
    place(index, moving);
}

void DeadlineScheduler::insert(Deadline *deadline)
{
    deadline->m_sequence = m_nextSequence++;
    m_heap.push_back(deadline);
    deadline->m_heapIndex = m_heap.size() - 1;
    siftUp(m_heap.size() - 1);
    if (m_heap.front() == deadline)
        rearmTimer();
}

void DeadlineScheduler::remove(Deadline *deadline)
{
    const std::size_t index = deadline->m_heapIndex;
    deadline->m_heapIndex = Deadline::kNotPending;
    Deadline *last = m_heap.back();
    m_heap.pop_back();
    if (last != deadline) {
        place(index, last);
        siftDown(index);
        siftUp(last->m_heapIndex);
    }
    // The timer is left running: a later first deadline, or none, only makes it fire early
    // once, and runDue() re-arms it then. Stopping and restarting it for every request that ends
    // before its deadline would cost two event-dispatcher calls per request.
}

int DeadlineScheduler::runDue()
{
    if (m_running)
        return 0; // a callback that drives the loop again finds its deadlines handled here
    m_running = true;
    int fired = 0;
    const Clock::TimePoint now = m_clock.now();
    while (!m_heap.empty() && m_heap.front()->m_when <= now) {
        Deadline *due = m_heap.front();
        remove(due);
        ++fired;
        due->m_onDue(); // may arm, disarm or destroy any deadline, itself included
    }
    m_running = false;
    rearmTimer();
    return fired;
}

void DeadlineScheduler::rearmTimer()
{
    if (m_drive != Drive::Timer || m_running)
        return;
    if (m_heap.empty())
        return; // a running timer fires once more for nothing

    const Clock::TimePoint first = m_heap.front()->m_when;
    if (m_timer.isActive() && m_timerDue <= first)
        return; // fires in time; a deadline later than needed is found then
    // Rounded up: a timer that fires a fraction early would find nothing due and spin.
    const qint64 waitMs = std::chrono::ceil<milliseconds>(first - m_clock.now()).count();
    m_timerDue = first;
    m_timer.start(int(std::clamp<qint64>(waitMs, 0, std::numeric_limits<int>::max())));
}

Sleep::Sleep(DeadlineScheduler &scheduler, milliseconds delay)
    : m_deadline(scheduler, [this] { resume(true); }), m_delay(delay)
{}

void Sleep::suspend(std::coroutine_handle<> waiting)
{
    m_waiting = waiting;
    m_deadline.armIn(m_delay);
}

void Sleep::wake()
{
    if (!m_waiting)
        return;
    m_deadline.disarm();
    resume(false);
}

void Sleep::resume(bool elapsed)
{
    m_elapsed = elapsed;
    std::exchange(m_waiting, {}).resume();
}

} // namespace switchyard::timing
