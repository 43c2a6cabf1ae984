#pragma once

#include "routing/request_context.h"
#include "routing/route_decision.h"
#include "timing/clock.h"

#include <QList>
#include <QString>
#include <chrono>
#include <vector>

namespace switchyard::routing {

// One live request as the impact preview replays it: what routing read, and what it decided then.
struct SampledRequest {
    // The context as routing saw it, minus what no rule reads and nobody should keep for an
    // hour: credential headers and the name of the header that carried the client's key. The
    // request id, user, session and tenant stay: canary buckets and affinity hash them.
    RequestContext context;
    timing::Clock::TimePoint routedAt{}; // steady time: what the window is measured in
    qint64 routedAtMsSinceEpoch = 0;     // wall time, for people
    // The live decision when it was made, for reference: health has moved since, so the preview
    // routes the context again under the live table rather than trusting this.
    QString rule;
    QString tier;
    QString provider; // the first candidate; empty when the request was refused
};

// A bounded sample of the routing contexts of the last hour, for the impact preview
// (docs/routing.md, "Impact preview"). Kept apart from the trace ring, which holds under a second
// of traffic at load. Engine thread only.
//
// Cheap on the hot path: a request that is not taken costs a clock read and two counters; only
// taken ones are copied. Each minute takes at most `perMinute` requests, spread by a stride: when
// the last minute saw more than that, one request in ceil(seen / perMinute) is offered. Entries
// older than `window` are never returned, and the ring holds at most `capacity`.
class ContextSample {
public:
    struct Bounds {
        int capacity = 2'000;
        std::chrono::minutes window{60};
        int perMinute = 34; // capacity / 60, rounded up: an hour of steady traffic fills the ring
    };

    explicit ContextSample(const timing::Clock &clock) : ContextSample(clock, Bounds()) {}
    ContextSample(const timing::Clock &clock, Bounds bounds);

    // Called for every routed live request, right after the router decided.
    void offer(const RequestContext &context, const RouteDecision &decision);

    // The requests of the window, oldest first.
    QList<SampledRequest> requests() const;
    const Bounds &bounds() const { return m_bounds; }
    // One request in `stride()` is taken this minute (1 below perMinute requests a minute).
    int stride() const;
    // Live requests offered since the start, taken or not.
    quint64 offered() const { return m_offered; }

private:
    qint64 minuteOf(timing::Clock::TimePoint time) const; // minutes since m_startedAt
    int strideFor(qint64 minute) const;

    const timing::Clock &m_clock;
    const Bounds m_bounds;
    const timing::Clock::TimePoint m_startedAt;
    std::vector<SampledRequest> m_ring; // grows to capacity, then wraps at m_next
    std::size_t m_next = 0;
    qint64 m_minute = 0; // minutes since m_startedAt of the counters below
    int m_seenThisMinute = 0;
    int m_takenThisMinute = 0;
    int m_stride = 1;
    quint64 m_offered = 0;
};

} // namespace switchyard::routing
