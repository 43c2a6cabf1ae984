#pragma once

#include "telemetry/request_record.h"

#include <QtGlobal>
#include <array>
#include <chrono>
#include <vector>

namespace switchyard::alerts {

// The degradation ladder's last rung (resilience::kFailSafeMessage; the engine checks they agree)
// and the rung below it, the canned answers. Neither is an answer a provider gave.
inline constexpr int kCannedAnswerLevel = 2;
inline constexpr int kFailSafeLevel = 3;

// How a finished request counts for the alert rules (docs/operations.md, "Alerts").
enum class RequestVerdict {
    NotCounted, // a client that went away (499), or a 4xx the request itself caused
    Success,    // 2xx answered by a provider (the planned model or a lighter one)
    Degraded,   // 2xx written by the ladder: a canned answer or the fail-safe message
    Error,      // 5xx, 408 or 429: the client got no answer for want of a provider
};
RequestVerdict verdictFor(const telemetry::RequestRecord &record);
// The latency a person waits for: a stream's first byte, a whole answer otherwise.
qint64 latencyMicrosOf(const telemetry::RequestRecord &record);

// A latency histogram with bins growing by 20 %: one bin index per sample, O(1), and a p95
// read back within 20 % of the truth, from 1 ms up to over half an hour.
class LatencyHistogram {
public:
    static constexpr int kBins = 80;
    static int binFor(qint64 micros);
    static double upperBoundMs(int bin); // what a sample in `bin` is read back as

    void add(int bin) { ++m_counts[std::size_t(bin)]; }
    void addAll(const LatencyHistogram &other);
    void clear() { m_counts.fill(0); }
    quint64 total() const;
    // The 95th percentile's bin's upper bound in ms; 0 when empty.
    double p95Ms() const;

private:
    std::array<quint32, kBins> m_counts{};
};

// What a window of one subject's traffic came to.
struct WindowSummary {
    quint64 counted = 0; // successes + degraded + errors
    quint64 successes = 0;
    quint64 degraded = 0;
    quint64 failSafe = 0; // of the degraded: the ladder's last rung
    quint64 errors = 0;
    LatencyHistogram latency; // successes only

    double successRate() const { return counted ? double(successes) / double(counted) : 0.0; }
    double errorRate() const { return counted ? double(errors) / double(counted) : 0.0; }
};

// One subject's traffic (a tier, or the whole gateway) in ten-second steps, for as long as the
// longest window plus the longest baseline (30 min + 1 h). A request costs an index computation
// and a few increments into a ring allocated once: nothing per request. A window is read back by
// adding its steps, on the evaluator's tick.
class TrafficWindows {
public:
    static constexpr std::chrono::seconds kStep{10};
    static constexpr std::chrono::minutes kLongestWindow{30};
    static constexpr std::chrono::minutes kLongestBaseline{60};
    static constexpr int kSteps = int((kLongestWindow + kLongestBaseline) / kStep) + 1;

    TrafficWindows();

    // Which ten seconds of the clock `at` falls in.
    static qint64 stepNumber(std::chrono::steady_clock::time_point at);
    // Whole steps in `length`, rounded up.
    static qint64 stepsIn(std::chrono::milliseconds length);

    void add(RequestVerdict verdict, bool failSafe, qint64 latencyMicros,
             std::chrono::steady_clock::time_point at);
    // The traffic of steps `first` to `last`, both included; steps older than the ring holds
    // count as empty.
    WindowSummary summary(qint64 first, qint64 last) const;

private:
    struct Step {
        qint64 number = -1; // which ten seconds since the clock's epoch; -1: never used
        quint32 successes = 0;
        quint32 degraded = 0;
        quint32 failSafe = 0;
        quint32 errors = 0;
        LatencyHistogram latency;
    };
    std::vector<Step> m_steps;
};

} // namespace switchyard::alerts
