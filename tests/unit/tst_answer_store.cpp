// The store of answers on one node (answers::LocalAnswerStore): claims, answers, releases, the
// window on a manual clock, the count bound, and answers surviving a restart through the state
// database. The fleet's Redis store is tested against a real Redis in tst_fleet_idempotency.

#include "answers/local_answer_store.h"
#include "storage/state_database.h"

#include <QTemporaryDir>
#include <QTest>

using namespace switchyard;
using namespace switchyard::answers;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;
using Outcome = ClaimResult::Outcome;

namespace {

constexpr std::chrono::milliseconds kWindow = 10min;

StoredAnswer answerOf(const QByteArray &body, const QByteArray &requestId = "req-1")
{
    StoredAnswer answer;
    answer.status = 200;
    answer.headers = {{"x-switchyard-request-id", requestId}, {"x-switchyard-provider", "p1"}};
    answer.contentType = "application/json";
    answer.body = body;
    answer.requestId = requestId;
    return answer;
}

ClaimResult claimOf(LocalAnswerStore &store, const QByteArray &key,
                    const QByteArray &fingerprint = "f1", const QByteArray &requestId = "req-1")
{
    return store.claimNow(key, fingerprint, requestId, kWindow);
}

} // namespace

class AnswerStoreTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void aFreeKeyIsClaimedWithAToken()
    {
        timing::ManualClock clock;
        LocalAnswerStore store({}, clock);
        const ClaimResult first = claimOf(store, "k");
        QCOMPARE(first.outcome, Outcome::Claimed);
        QVERIFY(!first.token.isEmpty());
        QCOMPARE(first.where, QByteArray("local"));
        QCOMPARE(store.claimCount(), 1);
    }

    void aHeldKeyIsRunningForTheSameRequestAndAMismatchForAnother()
    {
        timing::ManualClock clock;
        LocalAnswerStore store({}, clock);
        QCOMPARE(claimOf(store, "k", "f1", "req-1").outcome, Outcome::Claimed);
        const ClaimResult same = claimOf(store, "k", "f1", "req-2");
        QCOMPARE(same.outcome, Outcome::Running);
        QCOMPARE(same.holderRequestId, QByteArray("req-1"));
        QCOMPARE(claimOf(store, "k", "f2", "req-3").outcome, Outcome::Mismatch);
        // Another key is another request.
        QCOMPARE(claimOf(store, "other", "f1").outcome, Outcome::Claimed);
    }

    void aPutAnswerIsGivenToTheNextClaim()
    {
        timing::ManualClock clock;
        LocalAnswerStore store({}, clock);
        const ClaimResult claim = claimOf(store, "k");
        store.put("k", claim.token, answerOf(R"({"id":"x"})"), kWindow);
        const ClaimResult again = claimOf(store, "k", "f1", "req-2");
        QCOMPARE(again.outcome, Outcome::Answered);
        QVERIFY(again.answer);
        QCOMPARE(*again.answer, answerOf(R"({"id":"x"})"));
        QCOMPARE(store.answerCount(), 1);
        QCOMPARE(store.claimCount(), 0);
        // The answer's key with another body is still a mismatch.
        QCOMPARE(claimOf(store, "k", "f2").outcome, Outcome::Mismatch);
    }

    void aReleasedKeyRunsAgain()
    {
        timing::ManualClock clock;
        LocalAnswerStore store({}, clock);
        const ClaimResult claim = claimOf(store, "k");
        store.release("k", claim.token);
        QCOMPARE(store.claimCount(), 0);
        QCOMPARE(claimOf(store, "k").outcome, Outcome::Claimed);
    }

    void aClaimWithAnotherTokenIsNotSettled()
    {
        timing::ManualClock clock;
        LocalAnswerStore store({}, clock);
        const ClaimResult old = claimOf(store, "k");
        clock.advance(kWindow + 1ms); // the claim ran out; another request takes the key
        const ClaimResult fresh = claimOf(store, "k", "f1", "req-2");
        QCOMPARE(fresh.outcome, Outcome::Claimed);
        store.put("k", old.token, answerOf("late"), kWindow);
        store.release("k", old.token);
        QCOMPARE(claimOf(store, "k").outcome, Outcome::Running);
        store.put("k", fresh.token, answerOf("fresh", "req-2"), kWindow);
        QCOMPARE(claimOf(store, "k").answer->body, QByteArray("fresh"));
    }

    void anAnswerExpiresWithItsWindow()
    {
        timing::ManualClock clock;
        LocalAnswerStore store({}, clock);
        store.put("k", claimOf(store, "k").token, answerOf("a"), kWindow);
        clock.advance(kWindow - 1ms);
        QCOMPARE(claimOf(store, "k").outcome, Outcome::Answered);
        clock.advance(1ms);
        QCOMPARE(claimOf(store, "k").outcome, Outcome::Claimed);
        QCOMPARE(store.answerCount(), 0);
    }

    void pastTheCountBoundTheAnswerNearestItsEndGoes()
    {
        timing::ManualClock clock;
        LocalStoreOptions options;
        options.maxAnswers = 2;
        LocalAnswerStore store(options, clock);
        for (const QByteArray key : {"a", "b", "c"}) {
            store.put(key, claimOf(store, key).token, answerOf(key), kWindow);
            clock.advance(1s);
        }
        QCOMPARE(store.answerCount(), 2);
        QCOMPARE(store.evictedAnswers(), quint64(1));
        QCOMPARE(claimOf(store, "a").outcome, Outcome::Claimed); // dropped: runs again
        QCOMPARE(claimOf(store, "b").outcome, Outcome::Answered);
        QCOMPARE(claimOf(store, "c").outcome, Outcome::Answered);
        // Claims in flight never push answers out.
        QCOMPARE(store.answerCount(), 2);
        store.setMaxAnswers(1);
        QCOMPARE(store.answerCount(), 1);
        QCOMPARE(claimOf(store, "c").outcome, Outcome::Answered);
    }

    void keepStoresAnAnswerClaimedElsewhere()
    {
        timing::ManualClock clock;
        LocalAnswerStore store({}, clock);
        store.keep("k", "f1", answerOf("from-redis"), kWindow);
        QCOMPARE(claimOf(store, "k").answer->body, QByteArray("from-redis"));
        QCOMPARE(claimOf(store, "k", "f2").outcome, Outcome::Mismatch);
    }

    void answersSurviveARestartAndClaimsDoNot()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        LocalStoreOptions options;
        options.databasePath = storage::stateDatabasePath(dir.path());
        timing::ManualClock clock;
        StoredAnswer streamed = answerOf("data: {\"x\":1}\n\ndata: [DONE]\n\n", "req-s");
        streamed.streamed = true;
        streamed.contentType.clear();
        {
            LocalAnswerStore store(options, clock);
            QCOMPARE(store.open(), QString());
            store.put("kept", claimOf(store, "kept").token, answerOf("whole"), kWindow);
            store.put("stream", claimOf(store, "stream", "f9").token, streamed, kWindow);
            store.put("short", claimOf(store, "short").token, answerOf("short"), 1s);
            store.put("gone", claimOf(store, "gone").token, answerOf("gone"), kWindow);
            store.keep("gone", "f1", answerOf("gone"), kWindow);
            QCOMPARE(claimOf(store, "running").outcome, Outcome::Claimed);
            store.waitForWrites();
        }
        clock.advance(2s);
        LocalAnswerStore restarted(options, clock);
        QCOMPARE(restarted.open(), QString());
        QCOMPARE(restarted.answerCount(), 3); // "short" expired while stopped
        QCOMPARE(*claimOf(restarted, "kept").answer, answerOf("whole"));
        QCOMPARE(*claimOf(restarted, "stream", "f9").answer, streamed);
        QCOMPARE(claimOf(restarted, "short").outcome, Outcome::Claimed);
        QCOMPARE(claimOf(restarted, "running").outcome, Outcome::Claimed);
        // The window goes on from where it was, not from the restart.
        clock.advance(kWindow - 2s);
        QCOMPARE(claimOf(restarted, "kept").outcome, Outcome::Claimed);
    }

    void anAnswerDroppedFromMemoryIsDeletedFromTheDatabase()
    {
        QTemporaryDir dir;
        LocalStoreOptions options;
        options.databasePath = storage::stateDatabasePath(dir.path());
        options.maxAnswers = 1;
        timing::ManualClock clock;
        {
            LocalAnswerStore store(options, clock);
            QCOMPARE(store.open(), QString());
            store.put("a", claimOf(store, "a").token, answerOf("a"), kWindow);
            clock.advance(1s);
            store.put("b", claimOf(store, "b").token, answerOf("b"), kWindow);
            store.waitForWrites();
        }
        options.maxAnswers = 10;
        LocalAnswerStore restarted(options, clock);
        QCOMPARE(restarted.open(), QString());
        QCOMPARE(restarted.answerCount(), 1);
        QCOMPARE(claimOf(restarted, "b").outcome, Outcome::Answered);
    }

    void anUnopenableDatabaseLeavesTheStoreServingFromMemory()
    {
        QTemporaryDir dir;
        // A folder where the database file should be: SQLite cannot open it.
        QVERIFY(QDir(dir.path()).mkpath(u"switchyard.db"_s));
        LocalStoreOptions options;
        options.databasePath = storage::stateDatabasePath(dir.path());
        timing::ManualClock clock;
        LocalAnswerStore store(options, clock);
        QVERIFY(!store.open().isEmpty());
        store.put("k", claimOf(store, "k").token, answerOf("a"), kWindow);
        store.waitForWrites();
        QCOMPARE(claimOf(store, "k").outcome, Outcome::Answered);
    }

    void anAnswerRoundTripsThroughItsEncodingByteForByte()
    {
        StoredAnswer answer = answerOf(QByteArray("\x00\xff binary \r\n", 13), "req-9");
        answer.status = 201;
        answer.headers.append({QByteArray("x-odd"), QByteArray("caf\xe9")});
        QCOMPARE(decodeAnswer(encodeAnswer(answer)), std::optional(answer));
        QCOMPARE(decodeAnswer("not json"), std::nullopt);
        QCOMPARE(decodeAnswer(R"({"status":99,"body":""})"), std::nullopt);
    }
};

QTEST_GUILESS_MAIN(AnswerStoreTest)
#include "tst_answer_store.moc"
