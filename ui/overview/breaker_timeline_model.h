#pragma once

#include "control/engine_snapshot.h"

#include <QList>
#include <QString>

namespace switchyard::ui {

// What a lane's band shows: the breaker's own state, with Closed split in two by the recovery
// ramp (closed, yet taking less than its full share of traffic).
enum class LaneState { Closed, Ramping, HalfOpen, Open };

// From `atMs` on, the lane is in `state`, until the next change.
struct LaneChange {
    qint64 atMs = 0;
    LaneState state = LaneState::Closed;
};

// From `atMs` on, the operator's setting is `state`, until the next change.
struct OperatorChange {
    qint64 atMs = 0;
    OperatorState state = OperatorState::Enabled;
};

// One engine event on a lane: a breaker transition (from != to), or an operator action or a
// change of probe health that left the breaker where it was (from == to).
struct LaneMarker {
    qint64 atMs = 0;
    BreakerState from = BreakerState::Closed;
    BreakerState to = BreakerState::Closed;
    OperatorState operatorState = OperatorState::Enabled;
    QString reason;
    quint64 sequence = 0;

    bool isTransition() const { return from != to; }
};

// A stretch of time to draw: [startMs, endMs).
struct LaneBand {
    qint64 startMs = 0;
    qint64 endMs = 0;
    LaneState state = LaneState::Closed;
};

struct OperatorBand {
    qint64 startMs = 0;
    qint64 endMs = 0;
    OperatorState state = OperatorState::Disabled;
};

// One provider's history. Breaker and operator state are kept apart, as the engine keeps them:
// a disabled endpoint's breaker still opens, probes and closes.
struct TimelineLane {
    QString providerId;
    // The lane's picture is complete from here on; nothing before it is drawn.
    qint64 knownSinceMs = 0;
    // Something happened before knownSinceMs and was dropped to bound the history (or the
    // engine's own ring had dropped it before the console saw it).
    bool olderHistoryDropped = false;
    QList<LaneChange> changes;             // oldest first, the first at knownSinceMs
    QList<OperatorChange> operatorChanges; // oldest first, the first at knownSinceMs
    QList<LaneMarker> markers;             // oldest first

    // The bands from knownSinceMs up to `untilMs`; empty stretches are left out.
    QList<LaneBand> bands(qint64 untilMs) const;
    // The stretches in which an operator had the endpoint disabled or draining.
    QList<OperatorBand> operatorBands(qint64 untilMs) const;
    LaneState stateAt(qint64 atMs) const;
    OperatorState operatorStateAt(qint64 atMs) const;
};

// How much history the timeline keeps per lane. Whichever bound bites first wins; the lane
// then says that older history was dropped.
struct TimelineLimits {
    qint64 maxAgeMs = 30 * 60 * 1000;
    // Per list of a lane (band changes, operator changes, markers). A flapping endpoint that
    // changes state every second reaches this in about four minutes, well before the age bound.
    int maxChangesPerLane = 500;
};

// The breaker timeline's data: one lane per provider, built from the engine snapshots the
// console receives. Events give the exact transitions with the engine's timestamps; the
// snapshot's provider list says which lanes exist and corrects anything no event reports, above
// all the end of a recovery ramp (the engine publishes no event for it). Plain values, no
// widgets, so the tests can drive it with chosen timestamps.
class BreakerTimelineModel {
public:
    explicit BreakerTimelineModel(TimelineLimits limits = {});

    // `receivedAtMs` is when the console got the snapshot, on the clock the engine stamps its
    // events with (milliseconds since the epoch).
    void applySnapshot(const EngineSnapshot &snapshot, qint64 receivedAtMs);

    // In the snapshot's provider order.
    const QList<TimelineLane> &lanes() const { return m_lanes; }
    const TimelineLane *lane(const QString &providerId) const;
    // The newest instant the model knows of: the right end of every lane.
    qint64 nowMs() const { return m_nowMs; }
    // The oldest instant any lane shows; nowMs() when there are no lanes.
    qint64 earliestMs() const;
    const TimelineLimits &limits() const { return m_limits; }

    // The band a provider's snapshot calls for. Ramping only while the operator lets traffic
    // through: a disabled endpoint's share is zero whatever its ramp would give.
    static LaneState laneStateOf(const ProviderHealth &provider);
    static LaneState laneStateOf(BreakerState breaker);

private:
    void applyEvent(TimelineLane &lane, const BreakerEvent &event);
    void trim(TimelineLane &lane);

    TimelineLimits m_limits;
    QList<TimelineLane> m_lanes;
    qint64 m_nowMs = 0;
    quint64 m_lastSequence = 0; // events up to this one are on the lanes
};

} // namespace switchyard::ui
