#pragma once

#include <QList>
#include <QtGlobal>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace switchyard::posting {

// The moment a stopping BackgroundPoster gives up: a post in flight should end by itself then,
// and what still waits is no longer sent. Never reached before stopping begins; any thread may
// ask.
class CutOff {
public:
    bool reached() const;
    // Reached once `grace` from now is over; at once when it is zero.
    void arriveAfter(std::chrono::milliseconds grace);

private:
    std::atomic<qint64> m_atSteadyNanos{std::numeric_limits<qint64>::max()};
};

// At most one warning per period about one kind of problem; what happens in between is counted,
// and the next warning says how many there were. A receiver that stays down would otherwise
// repeat its error in the log with every post and bury everything else.
class WarningThrottle {
public:
    using TimePoint = std::chrono::steady_clock::time_point;

    explicit WarningThrottle(std::chrono::seconds period) : m_period(period) {}

    // Counts `happenings` more at `now`. When a warning is due (the first one, or a period after
    // the last), returns how many happened since the last warning, these included; otherwise
    // returns 0 and keeps them for the next one.
    quint64 count(TimePoint now, quint64 happenings = 1);

private:
    const std::chrono::seconds m_period;
    std::optional<TimePoint> m_lastWarning;
    quint64 m_unwarned = 0;
};

struct BackgroundPosterOptions {
    // The most weight that may wait (events, spans: whatever the owner counts in); an item that
    // does not fit is dropped whole and counted.
    quint64 capacity = 0;
    // A batch is sent as soon as this much weight waits, and holds at most this much: whole
    // items in the order they came, an item heavier than a batch alone.
    quint64 batchWeight = 1;
    // What waits is sent at least this often, a full batch or not. Unset: only full batches.
    std::optional<std::chrono::milliseconds> interval;
    // How long stopping may go on sending what waits. Zero: a post in flight is cut off at once
    // and nothing more is sent, so a receiver that hangs cannot hold the gateway's stop.
    std::chrono::milliseconds flushOnStop{0};
    // At most one warning about drops per this period.
    std::chrono::seconds dropWarningPeriod{60};
};

// A thread of its own that posts what the engine thread hands it: the alert webhook and the
// OpenTelemetry export. offer() takes a lock for the push and never waits for the network; the
// thread takes batches, hands each to the owner's sender, and holds one the sender wants sent
// again until its pause is over (a full batch waits behind it, so a receiver that failed gets
// its pause). Stopping sets the cut-off and joins the thread. What the queue refused is counted
// here; what became of each batch the sender counts in its own words.
template <typename Item>
class BackgroundPoster final {
public:
    struct Batch {
        QList<Item> items;     // oldest first
        quint64 weight = 0;    // the items' weights together
        int sendsBefore = 0;   // times it was sent and asked to be sent again
        bool stopping = false; // taken once stopping had begun: its last chance
    };
    // How long to wait before sending the same batch again; nothing when it is settled.
    using RetryAfter = std::optional<std::chrono::milliseconds>;

    // Called on the poster's thread only.
    struct Sender {
        // Posts the batch and counts what came of it. A post should return by itself soon after
        // `cutOff` is reached.
        std::function<RetryAfter(const Batch &batch, const CutOff &cutOff)> send;
        // A batch taken after the cut-off: it is not sent, and the owner counts it given up.
        std::function<void(const Batch &batch)> giveUp;
        // Optional: the weight refused since the last such warning, after a send or an idle
        // interval, at most once per dropWarningPeriod.
        std::function<void(quint64 dropped)> warnDropped;
    };

    BackgroundPoster(BackgroundPosterOptions options, Sender sender)
        : m_options(options), m_sender(std::move(sender)),
          m_dropWarnings(options.dropWarningPeriod), m_thread([this] { run(); })
    {}

    // Gives what waits until the cut-off (flushOnStop from now), then joins the thread.
    ~BackgroundPoster()
    {
        {
            std::lock_guard lock(m_mutex);
            // Before stopping is seen: the thread must never see stopping with no cut-off.
            m_cutOff.arriveAfter(m_options.flushOnStop);
            m_stopping = true;
        }
        m_wake.notify_one();
        m_thread.join();
    }

    BackgroundPoster(const BackgroundPoster &) = delete;
    BackgroundPoster &operator=(const BackgroundPoster &) = delete;

    // Any thread. Queues `item` unless it does not fit or stopping has begun; then it is dropped
    // and counted. Returns whether it was queued.
    bool offer(Item item, quint64 weight = 1)
    {
        bool batchReady = false;
        {
            std::lock_guard lock(m_mutex);
            if (m_stopping || m_waitingWeight + weight > m_options.capacity) {
                m_droppedWeight.fetch_add(weight, std::memory_order_relaxed);
                return false;
            }
            m_queue.push_back({std::move(item), weight});
            m_waitingWeight += weight;
            batchReady = m_waitingWeight >= m_options.batchWeight;
            // Inside the lock: the thread takes batches under it, so it cannot count weight out
            // before it was counted in.
            m_queuedWeight.fetch_add(weight, std::memory_order_relaxed);
        }
        if (batchReady)
            m_wake.notify_one();
        return true;
    }

    // Any thread. Waiting, being sent or held for a retry: counted until the sender settles it.
    quint64 queuedWeight() const { return m_queuedWeight.load(std::memory_order_relaxed); }
    // Any thread. What offer() refused.
    quint64 droppedWeight() const { return m_droppedWeight.load(std::memory_order_relaxed); }

private:
    using Clock = std::chrono::steady_clock;

    struct Waiting {
        Item item;
        quint64 weight = 0;
    };

    std::optional<Clock::time_point> nextInterval() const
    {
        if (!m_options.interval)
            return std::nullopt;
        return Clock::now() + *m_options.interval;
    }

    Batch takeBatch() // under m_mutex
    {
        Batch batch;
        while (!m_queue.empty()) {
            const quint64 weight = m_queue.front().weight;
            if (!batch.items.isEmpty() && batch.weight + weight > m_options.batchWeight)
                break;
            batch.items.append(std::move(m_queue.front().item));
            m_queue.pop_front();
            batch.weight += weight;
            m_waitingWeight -= weight;
        }
        return batch;
    }

    void run()
    {
        std::optional<Batch> retry; // the thread's own
        std::optional<Clock::time_point> nextRound = nextInterval();
        std::unique_lock lock(m_mutex);
        while (true) {
            const auto ready = [&] {
                return m_stopping || (!retry && m_waitingWeight >= m_options.batchWeight);
            };
            if (nextRound)
                m_wake.wait_until(lock, *nextRound, ready);
            else
                m_wake.wait(lock, ready);
            const bool stopping = m_stopping;
            const bool due = ready() || (nextRound && Clock::now() >= *nextRound);
            if (!due)
                continue;
            std::optional<Batch> batch = std::exchange(retry, std::nullopt);
            if (!batch && !m_queue.empty())
                batch = takeBatch();
            if (!batch) {
                if (stopping)
                    break;
                lock.unlock();
                warnOfDrops();
                lock.lock();
                nextRound = nextInterval();
                continue;
            }
            lock.unlock();
            batch->stopping = stopping;
            RetryAfter again;
            if (m_cutOff.reached())
                m_sender.giveUp(*batch);
            else
                again = m_sender.send(*batch, m_cutOff);
            if (again) {
                ++batch->sendsBefore;
                retry = std::move(batch);
            } else {
                m_queuedWeight.fetch_sub(batch->weight, std::memory_order_relaxed);
            }
            warnOfDrops();
            lock.lock();
            nextRound = again ? std::optional(Clock::now() + *again) : nextInterval();
        }
    }

    void warnOfDrops()
    {
        if (!m_sender.warnDropped)
            return;
        const quint64 dropped = m_droppedWeight.load(std::memory_order_relaxed);
        const quint64 unseen = dropped - std::exchange(m_droppedSeen, dropped);
        if (const quint64 warned = m_dropWarnings.count(Clock::now(), unseen); warned > 0)
            m_sender.warnDropped(warned);
    }

    const BackgroundPosterOptions m_options;
    const Sender m_sender;

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<Waiting> m_queue; // guarded by m_mutex
    quint64 m_waitingWeight = 0; // guarded by m_mutex: the weight in m_queue
    bool m_stopping = false;     // guarded by m_mutex
    CutOff m_cutOff;

    std::atomic<quint64> m_queuedWeight{0};
    std::atomic<quint64> m_droppedWeight{0};

    // The thread's own.
    WarningThrottle m_dropWarnings;
    quint64 m_droppedSeen = 0;

    std::thread m_thread; // last: started once everything above exists
};

} // namespace switchyard::posting
