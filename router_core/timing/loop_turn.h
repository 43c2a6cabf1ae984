#pragma once

#include <QObject>
#include <QPointer>
#include <chrono>

class QAbstractEventDispatcher;

namespace switchyard::timing {

// The turns of the engine thread's event loop: a turn begins each time the thread's event
// dispatcher wakes (QAbstractEventDispatcher::awake, which Qt's dispatchers and the engine's
// epoll one all emit before a pass's posted events, ready sockets and due timers).
//
// Why the engine counts them: a burst of thousands of clients connecting and sending at once is
// ready to be accepted and started in one pass, and one pass that accepts, reads, routes and
// starts thousands of requests runs for seconds, while the timers due in it (the lag monitor,
// first-token and idle deadlines) and the streams already open wait. Work the engine takes on
// itself is therefore bounded per turn (TurnBudget); the rest waits for the next turn, which
// comes at once, after the ready sockets and due timers of this one.
class LoopTurn final : public QObject {
    Q_OBJECT
public:
    // Follows the event dispatcher of the thread that asks: the engine's objects are made on the
    // thread that starts the engine and then moved to its own, and what counts is the loop they
    // run in.
    explicit LoopTurn(QObject *parent = nullptr);

    // Which turn the loop is in: a new number after every wake-up.
    quint64 number();
    // Time since the current turn began.
    std::chrono::nanoseconds elapsed();

private:
    void follow();
    void begin();

    QPointer<QAbstractEventDispatcher> m_dispatcher;
    QMetaObject::Connection m_awake;
    quint64 m_number = 0;
    qint64 m_beganNs = 0;
};

// How much of one kind of work (connections accepted, requests started) a turn may take on: at
// most `perTurn` items, and none after `within` of the turn has passed, except that the first
// of every turn is always allowed, so the work goes on however long the turn's other work took.
class TurnBudget {
public:
    TurnBudget(LoopTurn &turn, int perTurn, std::chrono::nanoseconds within)
        : m_turn(turn), m_perTurn(perTurn), m_within(within)
    {}

    // Takes one item of this turn's allowance; false when the turn has none left.
    bool take();
    // Whether take() would refuse now.
    bool spent();

private:
    LoopTurn &m_turn;
    const int m_perTurn;
    const std::chrono::nanoseconds m_within;
    quint64 m_turnNumber = 0;
    int m_taken = 0;
};

} // namespace switchyard::timing
