#pragma once

#include <QDateTime>
#include <functional>

namespace switchyard::ui {

// When the console received a snapshot, in milliseconds since the epoch: the clock the engine
// stamps its breaker events with, so both land on one time axis. A seam for tests, which step a
// clock by hand so the charts and the timeline come out the same on every run.
using ConsoleClock = std::function<qint64()>;

inline ConsoleClock wallClock()
{
    return [] { return QDateTime::currentMSecsSinceEpoch(); };
}

} // namespace switchyard::ui
