#pragma once

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>

namespace switchyard {

// One background task as the console lists it (GET /admin/v1/queue's `tasks` and
// `recent_failures`, as values): never its request or its answer.
struct BackgroundTaskListing {
    QString id; // resp_…
    QString tenant;
    QString keyId; // empty without client keys
    QString model;
    QString priority;        // "high", "normal", "low"
    QString status;          // the Responses API's word: "queued", "in_progress", "failed"
    qint64 createdAtMs = 0;  // UTC milliseconds since the epoch
    qint64 finishedAtMs = 0; // 0 until finished
    qint64 waitedMs = 0;     // on the queue before its last run began, or until now
    qint64 runningMs = 0;    // running for, while in progress; else 0
    int runs = 0;            // workers that started it: more than one after a restart
    QString errorCode;       // a failed task's error, as its response object says it
    QString errorMessage;

    friend bool operator==(const BackgroundTaskListing &, const BackgroundTaskListing &) = default;
};

// A task of the fleet's queue that failed its delivery limit (docs/fleet.md, "The queue"): failed
// for its client, kept for an operator to retry or discard.
struct DeadLetterListing {
    QString id;
    QString tenant;
    QString model;
    QString priority;
    int runs = 0;
    QString node;      // the node that gave it up
    qint64 atMs = 0;   // when, UTC milliseconds since the epoch
    QString errorCode; // its last run's error
    QString errorMessage;

    friend bool operator==(const DeadLetterListing &, const DeadLetterListing &) = default;
};

// The background queue of Responses tasks (docs/responses.md) as the console shows it: the
// totals GET /admin/v1/queue reports and its tasks, made on the engine thread by value.
struct BackgroundQueueState {
    int workers = 0; // responses.workers: tasks run at once
    int running = 0;
    int queuedHigh = 0;
    int queuedNormal = 0;
    int queuedLow = 0;
    qint64 oldestQueuedAgeMs = 0; // 0 with nothing queued
    // Finished tasks since this process started.
    quint64 completed = 0;
    quint64 incomplete = 0;
    quint64 failed = 0;
    quint64 cancelled = 0;
    quint64 timedOut = 0; // also counted in failed
    int storedResponses = 0;
    qint64 storedBytes = 0;
    qint64 maxStoredBytes = 0; // responses.max_stored_bytes

    // Running tasks, then queued ones in the order workers take them: at most kMaxTasks of
    // tasksTotal.
    static constexpr int kMaxTasks = 200;
    QList<BackgroundTaskListing> tasks;
    int tasksTotal = 0;
    // The latest failures, newest first (the queue report's 50).
    QList<BackgroundTaskListing> recentFailures;

    // In a fleet: the depth and age above are the fleet's; the running tasks per node, and the
    // dead letters (the newest 50 of deadLettered).
    bool fleet = false;
    QList<QPair<QString, int>> runningByNode; // node, tasks; by node name
    int deadLettered = 0;
    QList<DeadLetterListing> deadLetters;

    int queued() const { return queuedHigh + queuedNormal + queuedLow; }
};

// What an operator does with a dead letter (EngineBridge::settleDeadLetter).
enum class DeadLetterAction { Retry, Discard };

// How an operator's cancel of a background task ended (EngineBridge::cancelBackgroundTask): the
// answer POST /admin/v1/queue/{id}/cancel gives, as a value. The task's new state reaches the
// console in the next engine snapshot.
struct BackgroundTaskCommandResult {
    QString taskId;
    // Empty when the command succeeded; else the admin API's error: its message, HTTP status and
    // code.
    QString error;
    int status = 200;
    QString errorCode;

    bool ok() const { return error.isEmpty(); }
};

} // namespace switchyard

Q_DECLARE_METATYPE(switchyard::BackgroundTaskCommandResult)
