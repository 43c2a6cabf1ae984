#pragma once

#include <QMetaObject>
#include <QObject>
#include <coroutine>
#include <functional>
#include <optional>
#include <utility>

namespace switchyard {

// `ThreadHop<Result> hop(worker, home, work); co_await hop;`: runs `work` on `worker`'s thread
// and resumes the coroutine on `home`'s thread with its result. (A named hop, not a temporary:
// GCC 12 may destroy a temporary with a non-trivial destructor in a co_await expression twice.) A
// console command that waits for the engine reads as one sequence instead of a call posted inside a
// call posted back. Neither side is waited for: if `worker` or `home` is destroyed before its part
// runs, Qt drops the posted call, and with it the suspended coroutine, which is destroyed without
// resuming.
template <typename Result>
class ThreadHop {
public:
    ThreadHop(QObject *worker, QObject *home, std::function<Result()> work)
        : m_worker(worker), m_home(home), m_work(std::move(work))
    {}

    // A pointer-sized awaiter: the hop holds the result and must not move while it waits.
    struct Awaiter {
        ThreadHop *hop;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> waiting) { hop->post(waiting); }
        Result await_resume() { return std::move(*hop->m_result); }
    };
    Awaiter operator co_await() { return Awaiter{this}; }

private:
    // Owns the suspended coroutine until it is resumed; destroys it if it never will be.
    class Resumption {
    public:
        explicit Resumption(std::coroutine_handle<> waiting) : m_waiting(waiting) {}
        Resumption(Resumption &&other) noexcept : m_waiting(std::exchange(other.m_waiting, {})) {}
        Resumption &operator=(Resumption &&) = delete;
        ~Resumption()
        {
            if (m_waiting)
                m_waiting.destroy();
        }
        void resume() { std::exchange(m_waiting, {}).resume(); }

    private:
        std::coroutine_handle<> m_waiting;
    };

    void post(std::coroutine_handle<> waiting)
    {
        QMetaObject::invokeMethod(m_worker, [this, resumption = Resumption(waiting)]() mutable {
            m_result.emplace(m_work());
            QMetaObject::invokeMethod(
                m_home, [resumption = std::move(resumption)]() mutable { resumption.resume(); });
        });
    }

    QObject *m_worker;
    QObject *m_home;
    std::function<Result()> m_work;
    std::optional<Result> m_result;
};

} // namespace switchyard
