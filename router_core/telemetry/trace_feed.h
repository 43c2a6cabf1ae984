#pragma once

#include "telemetry/trace.h"

#include <QList>
#include <QMetaType>

namespace switchyard::telemetry {

// What the console's Traces page is sent with each publishing tick: the requests that finished
// since the last feed, the running ones, and the new text of the one being watched.
struct TraceFeed {
    QList<RequestRecord> finished; // oldest first
    quint64 finishedLeftOut = 0;   // finished since the last feed but beyond kMaxFinished
    // Running requests, those that started last first, at most kMaxRunning; their chunk
    // arrivals are left out except for the watched one's.
    QList<Trace> running;
    int runningCount = 0; // all running requests, listed or not

    QByteArray watchedId;   // the request watched for live text; empty: none
    QByteArray watchedData; // its events' data since the last feed, one event per line

    static constexpr int kMaxFinished = 500;
    static constexpr int kMaxRunning = 50;
};

} // namespace switchyard::telemetry

Q_DECLARE_METATYPE(switchyard::telemetry::TraceFeed)
Q_DECLARE_METATYPE(switchyard::telemetry::Trace)
