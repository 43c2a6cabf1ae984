// The background poster the alert webhook and the OpenTelemetry export share, on its real thread
// with a sender in the test: batches by weight in the order items came, what the queue refuses,
// a batch sent again before anything newer, the cut-off at stopping, and warnings that say how
// many there were. Every wait is for a condition, never for a length of time.

#include "posting/background_poster.h"

#include <QTest>
#include <condition_variable>
#include <memory>
#include <mutex>

using namespace std::chrono_literals;
using namespace Qt::StringLiterals;
using switchyard::posting::BackgroundPoster;
using switchyard::posting::BackgroundPosterOptions;
using switchyard::posting::CutOff;
using switchyard::posting::WarningThrottle;

namespace {

using Poster = BackgroundPoster<QString>;

// The far side of the seam: records each batch it is handed, holds a send while told to (until
// released or cut off, as a receiver that does not answer), and asks for the retries scripted.
class FakeSender {
public:
    struct Handed {
        QStringList items;
        quint64 weight = 0;
        int sendsBefore = 0;
        bool stopping = false;
        bool cutOff = false; // the cut-off had come when the send returned
    };

    Poster::Sender sender()
    {
        return {[this](const Poster::Batch &batch, const CutOff &cutOff) {
                    return send(batch, cutOff);
                },
                [this](const Poster::Batch &batch) {
                    std::lock_guard lock(m_mutex);
                    m_givenUp.append(batch.items);
                    m_changed.notify_all();
                },
                [this](quint64 dropped) {
                    std::lock_guard lock(m_mutex);
                    m_dropWarnings.append(dropped);
                    m_changed.notify_all();
                }};
    }

    void hold()
    {
        std::lock_guard lock(m_mutex);
        m_held = true;
    }
    void release()
    {
        std::lock_guard lock(m_mutex);
        m_held = false;
        m_changed.notify_all();
    }
    // What each next send answers; settled once the script is used up.
    void script(QList<Poster::RetryAfter> answers)
    {
        std::lock_guard lock(m_mutex);
        m_script = std::move(answers);
    }

    // Waits until `condition` holds of what was handed over; false if it never does.
    bool waitUntil(const std::function<bool(const QList<Handed> &sent)> &condition)
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, 30s, [&] { return condition(m_sent); });
    }
    bool waitForSends(qsizetype count)
    {
        return waitUntil([count](const QList<Handed> &sent) { return sent.size() >= count; });
    }

    QList<Handed> sent()
    {
        std::lock_guard lock(m_mutex);
        return m_sent;
    }
    QStringList givenUp()
    {
        std::lock_guard lock(m_mutex);
        return m_givenUp;
    }
    QList<quint64> dropWarnings()
    {
        std::lock_guard lock(m_mutex);
        return m_dropWarnings;
    }

private:
    Poster::RetryAfter send(const Poster::Batch &batch, const CutOff &cutOff)
    {
        std::unique_lock lock(m_mutex);
        m_sent.append({batch.items, batch.weight, batch.sendsBefore, batch.stopping, false});
        m_changed.notify_all();
        // Woken by release(); the cut-off is a moment rather than an event, so it is looked at
        // every few milliseconds, as libcurl's progress callback looks at it.
        while (m_held && !cutOff.reached())
            m_changed.wait_for(lock, 5ms);
        m_sent.last().cutOff = cutOff.reached();
        m_changed.notify_all();
        return m_script.isEmpty() ? Poster::RetryAfter() : m_script.takeFirst();
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_held = false;
    QList<Poster::RetryAfter> m_script;
    QList<Handed> m_sent;
    QStringList m_givenUp;
    QList<quint64> m_dropWarnings;
};

BackgroundPosterOptions options(quint64 capacity, quint64 batchWeight)
{
    BackgroundPosterOptions options;
    options.capacity = capacity;
    options.batchWeight = batchWeight;
    return options;
}

} // namespace

class BackgroundPosterTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void sendsAFullBatchAtOnceOldestFirst();
    void aBatchHoldsWholeItemsAndAHeavyOneGoesAlone();
    void whatWaitsLeavesAtTheIntervalWithoutAFullBatch();
    void anItemThatDoesNotFitIsDroppedWholeAndCounted();
    void aBatchAskedAgainGoesBeforeAnythingNewer();
    void stoppingCutsOffThePostInFlightAndGivesUpTheRest();
    void stoppingSendsWhatWaitsUntilTheCutOff();
    void dropsAreWarnedOncePerPeriod();
    void aWarningSaysHowManyItHeldBack();
    void aCutOffComesOnlyWhenSet();
};

void BackgroundPosterTest::sendsAFullBatchAtOnceOldestFirst()
{
    FakeSender fake;
    Poster poster(options(10, 3), fake.sender());

    QVERIFY(poster.offer(u"a"_s));
    QVERIFY(poster.offer(u"b"_s));
    QVERIFY(poster.offer(u"c"_s));

    QVERIFY(fake.waitForSends(1));
    const FakeSender::Handed batch = fake.sent().first();
    QCOMPARE(batch.items, (QStringList{u"a"_s, u"b"_s, u"c"_s}));
    QCOMPARE(batch.weight, quint64(3));
    QCOMPARE(batch.sendsBefore, 0);
    QVERIFY(!batch.stopping);
    QTRY_COMPARE(poster.queuedWeight(), quint64(0));
    QCOMPARE(poster.droppedWeight(), quint64(0));
}

void BackgroundPosterTest::aBatchHoldsWholeItemsAndAHeavyOneGoesAlone()
{
    FakeSender fake;
    fake.hold();
    Poster poster(options(20, 4), fake.sender());
    QVERIFY(poster.offer(u"first"_s, 4));
    QVERIFY(fake.waitForSends(1));

    // These wait behind the held batch, then leave as batches of at most four.
    QVERIFY(poster.offer(u"a"_s, 2));
    QVERIFY(poster.offer(u"b"_s, 2));
    QVERIFY(poster.offer(u"heavy"_s, 5));
    QVERIFY(poster.offer(u"c"_s, 1));
    fake.release();

    QVERIFY(fake.waitForSends(3));
    const QList<FakeSender::Handed> sent = fake.sent();
    QCOMPARE(sent[1].items, (QStringList{u"a"_s, u"b"_s}));
    QCOMPARE(sent[2].items, QStringList{u"heavy"_s});
    QCOMPARE(sent[2].weight, quint64(5));
    // The last one is no full batch and there is no interval: it waits.
    QTRY_COMPARE(poster.queuedWeight(), quint64(1));
    QCOMPARE(fake.sent().size(), 3);
}

void BackgroundPosterTest::whatWaitsLeavesAtTheIntervalWithoutAFullBatch()
{
    FakeSender fake;
    BackgroundPosterOptions settings = options(100, 100);
    settings.interval = 10ms;
    Poster poster(settings, fake.sender());

    QVERIFY(poster.offer(u"alone"_s));

    QVERIFY(fake.waitForSends(1));
    QCOMPARE(fake.sent().first().items, QStringList{u"alone"_s});
}

void BackgroundPosterTest::anItemThatDoesNotFitIsDroppedWholeAndCounted()
{
    FakeSender fake;
    fake.hold();
    Poster poster(options(4, 1), fake.sender());
    QVERIFY(poster.offer(u"posting"_s));
    QVERIFY(fake.waitForSends(1));

    // The batch being sent no longer takes room in the queue.
    QVERIFY(poster.offer(u"a"_s, 3));
    QVERIFY(!poster.offer(u"b"_s, 2));
    QVERIFY(poster.offer(u"c"_s, 1));
    QCOMPARE(poster.droppedWeight(), quint64(2));
    QCOMPARE(poster.queuedWeight(), quint64(5)); // the one being sent and four waiting

    fake.release();
    QTRY_COMPARE(poster.queuedWeight(), quint64(0));
    QStringList items;
    for (const FakeSender::Handed &batch : fake.sent())
        items += batch.items;
    QCOMPARE(items, (QStringList{u"posting"_s, u"a"_s, u"c"_s}));
    QCOMPARE(poster.droppedWeight(), quint64(2));
}

void BackgroundPosterTest::aBatchAskedAgainGoesBeforeAnythingNewer()
{
    FakeSender fake;
    fake.hold();
    fake.script({0ms});
    Poster poster(options(10, 1), fake.sender());
    QVERIFY(poster.offer(u"first"_s));
    QVERIFY(fake.waitForSends(1));
    QVERIFY(poster.offer(u"newer"_s));
    fake.release();

    QVERIFY(fake.waitForSends(3));
    const QList<FakeSender::Handed> sent = fake.sent();
    QCOMPARE(sent[0].items, QStringList{u"first"_s});
    QCOMPARE(sent[1].items, QStringList{u"first"_s});
    QCOMPARE(sent[1].sendsBefore, 1);
    QCOMPARE(sent[2].items, QStringList{u"newer"_s});
    QCOMPARE(sent[2].sendsBefore, 0);
    QTRY_COMPARE(poster.queuedWeight(), quint64(0));
}

void BackgroundPosterTest::stoppingCutsOffThePostInFlightAndGivesUpTheRest()
{
    FakeSender fake;
    fake.hold(); // a receiver that never answers
    auto poster = std::make_unique<Poster>(options(10, 1), fake.sender());
    QVERIFY(poster->offer(u"posting"_s));
    QVERIFY(fake.waitForSends(1));
    QVERIFY(poster->offer(u"a"_s));
    QVERIFY(poster->offer(u"b"_s));

    poster.reset(); // flushOnStop is zero: the cut-off comes at once

    const QList<FakeSender::Handed> sent = fake.sent();
    QCOMPARE(sent.size(), 1);
    QVERIFY(sent.first().cutOff);
    QCOMPARE(fake.givenUp(), (QStringList{u"a"_s, u"b"_s}));
}

void BackgroundPosterTest::stoppingSendsWhatWaitsUntilTheCutOff()
{
    FakeSender fake;
    BackgroundPosterOptions settings = options(10, 10);
    settings.flushOnStop = 1h; // never reached in this test
    auto poster = std::make_unique<Poster>(settings, fake.sender());
    QVERIFY(poster->offer(u"a"_s));
    QVERIFY(poster->offer(u"b"_s));

    poster.reset();

    const QList<FakeSender::Handed> sent = fake.sent();
    QCOMPARE(sent.size(), 1);
    QCOMPARE(sent.first().items, (QStringList{u"a"_s, u"b"_s}));
    QVERIFY(sent.first().stopping);
    QVERIFY(!sent.first().cutOff);
    QVERIFY(fake.givenUp().isEmpty());
}

void BackgroundPosterTest::dropsAreWarnedOncePerPeriod()
{
    FakeSender fake;
    fake.hold();
    BackgroundPosterOptions settings = options(1, 1);
    settings.dropWarningPeriod = 1h; // the second warning is never due in this test
    Poster poster(settings, fake.sender());
    QVERIFY(poster.offer(u"posting"_s));
    QVERIFY(fake.waitForSends(1));
    QVERIFY(poster.offer(u"waiting"_s));
    QVERIFY(!poster.offer(u"dropped 1"_s));
    QVERIFY(!poster.offer(u"dropped 2"_s));
    fake.release();
    QTRY_COMPARE(poster.queuedWeight(), quint64(0));
    QCOMPARE(fake.dropWarnings(), QList<quint64>{2});

    // More drops within the period are counted for the next warning, not warned of now.
    fake.hold();
    QVERIFY(poster.offer(u"posting again"_s));
    QVERIFY(fake.waitForSends(3));
    QVERIFY(poster.offer(u"waiting again"_s));
    QVERIFY(!poster.offer(u"dropped 3"_s));
    fake.release();
    QTRY_COMPARE(poster.queuedWeight(), quint64(0));
    QCOMPARE(fake.dropWarnings(), QList<quint64>{2});
    QCOMPARE(poster.droppedWeight(), quint64(3));
}

void BackgroundPosterTest::aWarningSaysHowManyItHeldBack()
{
    WarningThrottle throttle(60s);
    const WarningThrottle::TimePoint start{1h};

    QCOMPARE(throttle.count(start), quint64(1)); // the first at once
    QCOMPARE(throttle.count(start + 1s), quint64(0));
    QCOMPARE(throttle.count(start + 59s, 2), quint64(0));
    QCOMPARE(throttle.count(start + 60s), quint64(4)); // the three held back and this one
    // Held back ones are told once due, even when nothing new happened.
    QCOMPARE(throttle.count(start + 61s), quint64(0));
    QCOMPARE(throttle.count(start + 120s, 0), quint64(1));
    QCOMPARE(throttle.count(start + 500s, 0), quint64(0)); // nothing to tell
}

void BackgroundPosterTest::aCutOffComesOnlyWhenSet()
{
    CutOff cutOff;
    QVERIFY(!cutOff.reached());
    cutOff.arriveAfter(1h);
    QVERIFY(!cutOff.reached());
    cutOff.arriveAfter(0ms);
    QVERIFY(cutOff.reached());
}

QTEST_GUILESS_MAIN(BackgroundPosterTest)
#include "tst_background_poster.moc"
