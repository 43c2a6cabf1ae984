// The engine loop's turns and the budgets of work per turn: a turn is one pass of the thread's
// event dispatcher, whichever dispatcher that is; a budget allows its count or its time per turn,
// always the first of a turn, and starts again in the next.

#include "eventloop/epoll_event_dispatcher.h"
#include "timing/loop_turn.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <chrono>

using namespace switchyard;
using namespace std::chrono_literals;

class LoopTurnTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void eachPassOfTheLoopIsANewTurn();
    void aBudgetAllowsItsCountPerTurn();
    void aBudgetWhoseTimeIsOverStillAllowsTheFirstOfATurn();
    void postedWorkRunsInTheNextTurnWithAFreshBudget();
    void followsTheLoopOfTheThreadThatAsks();
};

void LoopTurnTest::eachPassOfTheLoopIsANewTurn()
{
    timing::LoopTurn turn;
    const quint64 first = turn.number();
    QCOMPARE(turn.number(), first); // no pass in between
    QCoreApplication::processEvents();
    const quint64 second = turn.number();
    QVERIFY(second > first);
    QCoreApplication::processEvents();
    QVERIFY(turn.number() > second);
    QVERIFY(turn.elapsed() >= 0ns);
}

void LoopTurnTest::aBudgetAllowsItsCountPerTurn()
{
    timing::LoopTurn turn;
    timing::TurnBudget budget(turn, 3, 1h);
    QVERIFY(!budget.spent());
    QVERIFY(budget.take());
    QVERIFY(budget.take());
    QVERIFY(budget.take());
    QVERIFY(budget.spent());
    QVERIFY(!budget.take());
    QCoreApplication::processEvents();
    QVERIFY(!budget.spent());
    QVERIFY(budget.take());
}

void LoopTurnTest::aBudgetWhoseTimeIsOverStillAllowsTheFirstOfATurn()
{
    timing::LoopTurn turn;
    timing::TurnBudget budget(turn, 1000, 0ns);
    QVERIFY(budget.take()); // the first of the turn, however late in it
    QVERIFY(budget.spent());
    QVERIFY(!budget.take());
    QCoreApplication::processEvents();
    QVERIFY(budget.take());
    QVERIFY(!budget.take());
}

void LoopTurnTest::postedWorkRunsInTheNextTurnWithAFreshBudget()
{
    // As the gateway uses it: work beyond the budget is posted, and the posted call is the
    // first thing of the next turn, with the whole budget again.
    timing::LoopTurn turn;
    timing::TurnBudget budget(turn, 2, 1h);
    int done = 0;
    int turnsUsed = 0;
    std::function<void()> work = [&] {
        ++turnsUsed;
        while (done < 5 && budget.take())
            ++done;
        if (done < 5)
            QMetaObject::invokeMethod(qApp, work, Qt::QueuedConnection);
    };
    work();
    QTRY_COMPARE(done, 5);
    QCOMPARE(turnsUsed, 3); // 2 + 2 + 1
}

void LoopTurnTest::followsTheLoopOfTheThreadThatAsks()
{
    // Made on this thread and asked on another, as the engine's objects are made before they
    // move to the engine thread: the turns counted are those of the thread that asks.
    timing::LoopTurn turn;
    const quint64 here = turn.number(); // first following this thread's loop
    QThread thread;
    thread.setEventDispatcher(new eventloop::EpollEventDispatcher);
    thread.start();
    QObject context;
    context.moveToThread(&thread);
    std::atomic<bool> advanced = false;
    QMetaObject::invokeMethod(
        &context,
        [&] {
            timing::TurnBudget budget(turn, 1, 1h);
            const quint64 first = turn.number();
            budget.take();
            const bool spentInThisTurn = budget.spent();
            QEventLoop loop;
            QTimer::singleShot(0, &loop, &QEventLoop::quit);
            loop.exec();
            advanced = spentInThisTurn && turn.number() > first && !budget.spent();
        },
        Qt::BlockingQueuedConnection);
    thread.quit();
    thread.wait();
    QVERIFY(advanced);
    Q_UNUSED(here);
}

QTEST_GUILESS_MAIN(LoopTurnTest)
#include "tst_loop_turn.moc"
