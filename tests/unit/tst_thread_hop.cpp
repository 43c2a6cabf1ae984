// The console's wait for the engine: work on the worker's thread, the rest of the coroutine back
// on the home thread, and a coroutine dropped, not resumed, when its home is gone.

#include "bridge/thread_hop.h"

#include <QCoro/QCoroTask>
#include <QTest>
#include <QThread>
#include <memory>

using namespace switchyard;

namespace {

struct Seen {
    QThread *workThread = nullptr;
    QThread *resumedOn = nullptr;
    int result = 0;
    bool frameDestroyed = false;
};

// Marks its own destruction: a local of the coroutine, so it dies with the frame.
struct FrameWitness {
    Seen *seen;
    ~FrameWitness() { seen->frameDestroyed = true; }
};

QCoro::Task<> hop(QObject *worker, QObject *home, Seen *seen)
{
    FrameWitness witness{seen};
    // A capture with a destructor, as the console's commands have (their rules, their body).
    const QStringList words{QStringLiteral("forty"), QStringLiteral("two")};
    ThreadHop<int> work(worker, home, [seen, words] {
        seen->workThread = QThread::currentThread();
        return int(words.size()) * 21;
    });
    const int result = co_await work;
    seen->resumedOn = QThread::currentThread();
    seen->result = result;
}

} // namespace

class ThreadHopTest : public QObject {
    Q_OBJECT

private slots:
    void worksThereAndResumesHere();
    void droppedWhenHomeIsGone();
};

void ThreadHopTest::worksThereAndResumesHere()
{
    QThread thread;
    QObject worker;
    worker.moveToThread(&thread);
    thread.start();
    QObject home;
    Seen seen;

    hop(&worker, &home, &seen);

    QTRY_COMPARE(seen.result, 42);
    QCOMPARE(seen.workThread, &thread);
    QCOMPARE(seen.resumedOn, QThread::currentThread());
    QVERIFY(seen.frameDestroyed); // finished and freed
    thread.quit();
    thread.wait();
}

void ThreadHopTest::droppedWhenHomeIsGone()
{
    QThread thread;
    QObject worker;
    worker.moveToThread(&thread);
    thread.start();
    auto home = std::make_unique<QObject>();
    Seen seen;

    hop(&worker, home.get(), &seen);
    // The worker handles its events in order: once this returns, the hop's work has run and
    // its answer is posted to home, where this thread has not delivered it yet.
    QMetaObject::invokeMethod(
        &worker, [] {}, Qt::BlockingQueuedConnection);
    QCOMPARE(seen.workThread, &thread);
    QVERIFY(!seen.frameDestroyed);
    home.reset();
    QCoreApplication::processEvents();

    QVERIFY(seen.frameDestroyed);
    QCOMPARE(seen.resumedOn, nullptr);
    QCOMPARE(seen.result, 0);
    thread.quit();
    thread.wait();
}

QTEST_GUILESS_MAIN(ThreadHopTest)
#include "tst_thread_hop.moc"
