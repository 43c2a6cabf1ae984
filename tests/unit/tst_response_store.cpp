// The store of Responses API responses on its own: records and event logs written to the state
// database and read back by a new store (what a restart sees), the bytes bound dropping the
// oldest finished responses first and never an unfinished task, retention by age on a clock
// the test moves, and ids of 128 random bits.

#include "responses/response_store.h"
#include "storage/state_database.h"

#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace switchyard::responses;
using namespace Qt::StringLiterals;

namespace {

StoredResponse record(const QByteArray &id, qint64 createdAtMs, Status status,
                      qint64 payloadBytes = 100)
{
    StoredResponse response;
    response.id = id;
    response.owner = u"tenant:"_s; // the empty tenant: an empty text, not NULL
    response.model = u"m"_s;
    response.background = true;
    response.status = status;
    response.createdAtMs = createdAtMs;
    response.expiresAtMs = createdAtMs + 3'600'000;
    response.request = QByteArray(payloadBytes, 'r');
    return response;
}

bool waitForWrite(ResponseStore &store)
{
    bool written = false;
    store.afterWrite([&] { written = true; });
    return QTest::qWaitFor([&] { return written; }, 5000);
}

} // namespace

class ResponseStoreTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void idsCarry128RandomBits()
    {
        QSet<QByteArray> seen;
        for (int index = 0; index < 1000; ++index) {
            const QByteArray id = ResponseStore::newId();
            QVERIFY(QRegularExpression(u"^resp_[0-9a-f]{32}$"_s)
                        .match(QString::fromLatin1(id))
                        .hasMatch());
            seen.insert(id);
        }
        QCOMPARE(seen.size(), 1000);
    }

    void recordsAndEventsAreReadBackByANewStore()
    {
        QTemporaryDir directory;
        const QString path = storage::stateDatabasePath(directory.path());
        timing::ManualClock clock;
        {
            ResponseStore store({path, std::chrono::hours(1), 1 << 20}, clock);
            QCOMPARE(store.open(), QString());
            StoredResponse &kept =
                store.put(record("resp_a", clock.msSinceEpoch(), Status::InProgress));
            store.appendEvents(kept, {{0, "response.created", "{\"sequence_number\":0}"},
                                      {1, "response.queued", "{\"sequence_number\":1}"}});
            kept.runs = 2;
            store.update(kept);
            store.appendEvents(kept, {{2, "response.in_progress", "{\"sequence_number\":2}"}});
            QVERIFY(waitForWrite(store));
        }
        ResponseStore reopened({path, std::chrono::hours(1), 1 << 20}, clock);
        QCOMPARE(reopened.open(), QString());
        StoredResponse *read = reopened.find("resp_a");
        QVERIFY(read);
        QCOMPARE(read->status, Status::InProgress);
        QCOMPARE(read->runs, 2);
        QCOMPARE(read->owner, u"tenant:"_s);
        QCOMPARE(read->tenant, QString(u""_s));
        QCOMPARE(read->request, QByteArray(100, 'r'));
        QCOMPARE(read->events.size(), 3);
        QCOMPARE(read->events.last().type, QByteArray("response.in_progress"));
        QCOMPARE(read->nextSequenceNumber(), 3);
    }

    void theBytesBoundDropsTheOldestFinishedFirst()
    {
        timing::ManualClock clock;
        ResponseStore store({{}, std::chrono::hours(1), 1 << 20}, clock);
        QCOMPARE(store.open(), QString());
        const qint64 now = clock.msSinceEpoch();
        // The oldest is a task still queued: it is never dropped.
        store.put(record("resp_queued", now - 5, Status::Queued, 300'000));
        store.put(record("resp_old", now - 4, Status::Completed, 300'000));
        store.put(record("resp_middle", now - 3, Status::Completed, 300'000));
        QCOMPARE(store.expiredByBytes(), quint64(0));
        store.put(record("resp_new", now - 2, Status::Completed, 300'000));
        // Four of 300 KB are over 1 MiB: the oldest finished one went, the queued task stayed.
        QVERIFY(!store.find("resp_old"));
        QVERIFY(store.find("resp_queued"));
        QVERIFY(store.find("resp_middle"));
        QVERIFY(store.find("resp_new"));
        QCOMPARE(store.expiredByBytes(), quint64(1));
        QVERIFY(store.bytes() <= 1 << 20);
        // One far larger than the bound is kept alone with the task, the others dropped.
        store.put(record("resp_huge", now - 1, Status::Completed, 2 << 20));
        QVERIFY(store.find("resp_huge"));
        QVERIFY(store.find("resp_queued"));
        QVERIFY(!store.find("resp_middle"));
        QVERIFY(!store.find("resp_new"));
        QCOMPARE(store.expiredByBytes(), quint64(3));
    }

    void retentionDropsByAge()
    {
        timing::ManualClock clock;
        ResponseStore store({{}, std::chrono::hours(1), 1 << 20}, clock);
        QCOMPARE(store.open(), QString());
        QList<QByteArray> removed;
        store.onRemoved = [&](const QByteArray &id) { removed.append(id); };
        store.put(record("resp_done", clock.msSinceEpoch(), Status::Completed));
        store.put(record("resp_waiting", clock.msSinceEpoch(), Status::Queued));
        clock.advance(std::chrono::hours(2));
        QVERIFY(!store.find("resp_done"));
        QVERIFY(store.find("resp_waiting")); // past its time, but unfinished: kept
        QCOMPARE(store.expiredByAge(), quint64(1));
        QCOMPARE(removed, QList<QByteArray>{"resp_done"});
    }
};

QTEST_GUILESS_MAIN(ResponseStoreTest)
#include "tst_response_store.moc"
