#include "ui/overview/provider_traffic.h"

#include <algorithm>

namespace switchyard::ui {

quint64 ProviderTrafficRates::callsStarted(const ProviderHealth &provider)
{
    return provider.requests + quint64(std::max(0, provider.inFlight));
}

const ProviderTrafficSeries *ProviderTrafficRates::series(const QString &providerId) const
{
    for (const ProviderTrafficSeries &series : m_series) {
        if (series.providerId == providerId)
            return &series;
    }
    return nullptr;
}

bool ProviderTrafficRates::applySnapshot(const EngineSnapshot &snapshot, qint64 atMs)
{
    if (m_started && atMs < m_nowMs)
        return false; // a wall clock stepped back: wait until it passes the last sample again
    m_nowMs = atMs;

    // Series follow the snapshot's providers; a retired provider's line goes with it.
    QList<ProviderTrafficSeries> series;
    QList<Counter> counters;
    series.reserve(snapshot.providers.size());
    counters.reserve(snapshot.providers.size());
    for (const ProviderHealth &provider : snapshot.providers) {
        const quint64 seen = callsStarted(provider);
        qsizetype index = -1;
        for (qsizetype i = 0; i < m_series.size(); ++i) {
            if (m_series.at(i).providerId == provider.id)
                index = i;
        }
        Counter counter;
        ProviderTrafficSeries line;
        line.providerId = provider.id;
        if (index >= 0) {
            counter = std::move(m_counters[index]);
            line = std::move(m_series[index]);
            // A call cancelled before it finished leaves `requests` as it was and in-flight one
            // lower; it was counted when it started, so a step down counts as nothing.
            if (seen > counter.lastSeen)
                counter.calls += seen - counter.lastSeen;
        }
        counter.lastSeen = seen;
        counter.samples.append(CounterSample{atMs, counter.calls});
        // Keep the window and the one sample just older, which the rate is measured from.
        qsizetype drop = 0;
        while (drop + 1 < counter.samples.size() &&
               counter.samples.at(drop + 1).atMs <= atMs - kRateWindowMs)
            ++drop;
        counter.samples.remove(0, drop);
        series.append(std::move(line));
        counters.append(std::move(counter));
    }
    m_series = std::move(series);
    m_counters = std::move(counters);

    if (!m_started) {
        m_started = true;
        m_lastPointMs = atMs;
        return false;
    }
    if (atMs - m_lastPointMs < kPointIntervalMs)
        return false;
    m_lastPointMs = atMs;

    for (qsizetype i = 0; i < m_series.size(); ++i) {
        const QList<CounterSample> &samples = m_counters.at(i).samples;
        const CounterSample &from = samples.first();
        const CounterSample &to = samples.last();
        // A provider seen for less than half a second has no rate yet.
        if (to.atMs - from.atMs < kPointIntervalMs / 2)
            continue;
        QList<TrafficPoint> &points = m_series[i].points;
        points.append(TrafficPoint{atMs, double(to.calls - from.calls) * 1000.0 /
                                             double(to.atMs - from.atMs)});
        qsizetype drop = 0;
        while (drop + 1 < points.size() && points.at(drop + 1).atMs <= atMs - kHistoryMs)
            ++drop;
        drop = std::max(drop, points.size() - kMaxPoints);
        points.remove(0, drop);
    }
    return true;
}

} // namespace switchyard::ui
