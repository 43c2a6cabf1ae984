#pragma once

#include "control/engine_snapshot.h"

#include <QList>
#include <QString>

namespace switchyard::ui {

// One point of a provider's traffic: calls sent to it per second, over the rate window that
// ends at `atMs`.
struct TrafficPoint {
    qint64 atMs = 0;
    double callsPerSecond = 0.0;
};

struct ProviderTrafficSeries {
    QString providerId;
    QList<TrafficPoint> points; // oldest first
};

// Calls per second to each provider, worked out on the console from the counters each snapshot
// carries, so the engine keeps no second copy of them. A call counts when it starts: finished
// calls (`requests`) plus those still in flight, so traffic leaving a tripped provider shows at
// once instead of when its last slow call ends. One point per provider per second, the rate over
// the last five seconds, for the last five minutes: bounded by age and by count.
class ProviderTrafficRates {
public:
    static constexpr qint64 kRateWindowMs = 5'000;
    static constexpr qint64 kPointIntervalMs = 1'000;
    static constexpr qint64 kHistoryMs = 5 * 60 * 1'000;
    // One per second for the history, plus the one just older that enters from the left edge.
    static constexpr qsizetype kMaxPoints = kHistoryMs / kPointIntervalMs + 1;

    // `atMs`: when the snapshot arrived. True when a new point was added, the moment a chart
    // has something new to draw.
    bool applySnapshot(const EngineSnapshot &snapshot, qint64 atMs);

    // In the snapshot's provider order.
    const QList<ProviderTrafficSeries> &series() const { return m_series; }
    const ProviderTrafficSeries *series(const QString &providerId) const;
    qint64 nowMs() const { return m_nowMs; }

    static quint64 callsStarted(const ProviderHealth &provider);

private:
    struct CounterSample {
        qint64 atMs = 0;
        quint64 calls = 0;
    };
    struct Counter {
        quint64 lastSeen = 0; // the engine's value at the last snapshot
        quint64 calls = 0;    // what this console counted: never goes down
        QList<CounterSample> samples;
    };

    QList<ProviderTrafficSeries> m_series;
    QList<Counter> m_counters; // parallel to m_series
    qint64 m_nowMs = 0;
    qint64 m_lastPointMs = 0;
    bool m_started = false;
};

} // namespace switchyard::ui
