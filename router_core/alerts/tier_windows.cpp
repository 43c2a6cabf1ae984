#include "alerts/tier_windows.h"

#include <algorithm>
#include <cmath>

namespace switchyard::alerts {

namespace {
constexpr double kBinGrowth = 1.2;
const double kLogGrowth = std::log(kBinGrowth);
} // namespace

RequestVerdict verdictFor(const telemetry::RequestRecord &record)
{
    const int status = record.status;
    // 499: the client cancelled or stalled; the tier was never given the chance to fail it.
    if (status <= 0 || status == 499)
        return RequestVerdict::NotCounted;
    if (status < 400) {
        return record.degradedLevel >= kCannedAnswerLevel ? RequestVerdict::Degraded
                                                          : RequestVerdict::Success;
    }
    // 408 and 429 say "not now" rather than "your request is wrong": a provider's limits or the
    // gateway's own time ran out. Every other 4xx (400, 401, 403, 404, 413, 422...) is the
    // request's own fault and would be refused by any healthy tier.
    if (status < 500 && status != 408 && status != 429)
        return RequestVerdict::NotCounted;
    return RequestVerdict::Error;
}

qint64 latencyMicrosOf(const telemetry::RequestRecord &record)
{
    if (record.streamed && record.timeToFirstByteMicros >= 0)
        return record.timeToFirstByteMicros - record.queuedMicros;
    return record.totalMicros - record.queuedMicros;
}

int LatencyHistogram::binFor(qint64 micros)
{
    // Bin 0 holds everything up to 1 ms; bin i up to 1.2^i ms.
    if (micros <= 1000)
        return 0;
    const double ms = double(micros) / 1000.0;
    const int bin = int(std::ceil(std::log(ms) / kLogGrowth - 1e-9));
    return std::clamp(bin, 0, kBins - 1);
}

double LatencyHistogram::upperBoundMs(int bin)
{
    return std::pow(kBinGrowth, bin);
}

void LatencyHistogram::addAll(const LatencyHistogram &other)
{
    for (std::size_t bin = 0; bin < m_counts.size(); ++bin)
        m_counts[bin] += other.m_counts[bin];
}

quint64 LatencyHistogram::total() const
{
    quint64 sum = 0;
    for (const quint32 count : m_counts)
        sum += count;
    return sum;
}

double LatencyHistogram::p95Ms() const
{
    const quint64 all = total();
    if (all == 0)
        return 0.0;
    // The smallest bin at or below which 95 % of the samples lie (nearest rank).
    const auto rank = quint64(std::ceil(0.95 * double(all)));
    quint64 seen = 0;
    for (int bin = 0; bin < kBins; ++bin) {
        seen += m_counts[std::size_t(bin)];
        if (seen >= rank)
            return upperBoundMs(bin);
    }
    return upperBoundMs(kBins - 1);
}

TrafficWindows::TrafficWindows() : m_steps(std::size_t(kSteps)) {}

qint64 TrafficWindows::stepNumber(std::chrono::steady_clock::time_point at)
{
    return std::chrono::duration_cast<std::chrono::seconds>(at.time_since_epoch()) / kStep;
}

void TrafficWindows::add(RequestVerdict verdict, bool failSafe, qint64 latencyMicros,
                         std::chrono::steady_clock::time_point at)
{
    if (verdict == RequestVerdict::NotCounted)
        return;
    const qint64 number = stepNumber(at);
    Step &step = m_steps[std::size_t(number % kSteps)];
    if (step.number != number) {
        // The slot last held a step a whole span ago: start it afresh.
        step = Step{};
        step.number = number;
    }
    switch (verdict) {
    case RequestVerdict::Success:
        ++step.successes;
        step.latency.add(LatencyHistogram::binFor(latencyMicros));
        break;
    case RequestVerdict::Degraded:
        ++step.degraded;
        if (failSafe)
            ++step.failSafe;
        break;
    case RequestVerdict::Error:
        ++step.errors;
        break;
    case RequestVerdict::NotCounted:
        break;
    }
}

qint64 TrafficWindows::stepsIn(std::chrono::milliseconds length)
{
    return (length + kStep - std::chrono::milliseconds(1)) / kStep;
}

WindowSummary TrafficWindows::summary(qint64 first, qint64 last) const
{
    WindowSummary summary;
    first = std::max({first, last - kSteps + 1, qint64(0)});
    for (qint64 number = first; number <= last; ++number) {
        const Step &step = m_steps[std::size_t(number % kSteps)];
        if (step.number != number)
            continue; // nothing was counted in that step
        summary.successes += step.successes;
        summary.degraded += step.degraded;
        summary.failSafe += step.failSafe;
        summary.errors += step.errors;
        summary.latency.addAll(step.latency);
    }
    summary.counted = summary.successes + summary.degraded + summary.errors;
    return summary;
}

} // namespace switchyard::alerts
