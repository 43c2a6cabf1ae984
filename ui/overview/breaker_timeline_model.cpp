#include "ui/overview/breaker_timeline_model.h"

#include <QHash>
#include <algorithm>

namespace switchyard::ui {

namespace {

// Sets the state from `atMs` on. A change at the same instant as the last one replaces it, so a
// close followed, in the same snapshot, by the news that it ramps leaves one band, not two.
template <typename Change, typename State>
void setStateFrom(QList<Change> &changes, qint64 atMs, State state)
{
    if (changes.isEmpty()) {
        changes.append(Change{atMs, state});
        return;
    }
    if (changes.last().state == state)
        return;
    if (changes.last().atMs >= atMs) {
        changes.last().state = state;
        if (changes.size() >= 2 && changes.at(changes.size() - 2).state == state)
            changes.removeLast();
        return;
    }
    changes.append(Change{atMs, state});
}

// Drops every change before `cutMs` but keeps the one in force then, moved to `cutMs`, so the
// lane still shows what it was at its new start.
template <typename Change>
void cutBefore(QList<Change> &changes, qint64 cutMs)
{
    qsizetype inForce = -1;
    for (qsizetype i = 0; i < changes.size() && changes.at(i).atMs <= cutMs; ++i)
        inForce = i;
    if (inForce < 0)
        return;
    changes.remove(0, inForce);
    changes.first().atMs = cutMs;
}

template <typename Change>
qint64 countCut(const QList<Change> &changes, int maxCount, qint64 cutMs)
{
    if (changes.size() <= maxCount)
        return cutMs;
    return std::max(cutMs, changes.at(changes.size() - maxCount).atMs);
}

template <typename Change>
auto stateAtTime(const QList<Change> &changes, qint64 atMs, decltype(Change::state) fallback)
{
    auto state = fallback;
    for (const Change &change : changes) {
        if (change.atMs > atMs)
            break;
        state = change.state;
    }
    return state;
}

} // namespace

QList<LaneBand> TimelineLane::bands(qint64 untilMs) const
{
    QList<LaneBand> result;
    result.reserve(changes.size());
    for (qsizetype i = 0; i < changes.size(); ++i) {
        const qint64 end = i + 1 < changes.size() ? changes.at(i + 1).atMs : untilMs;
        if (end > changes.at(i).atMs)
            result.append(LaneBand{changes.at(i).atMs, end, changes.at(i).state});
    }
    return result;
}

QList<OperatorBand> TimelineLane::operatorBands(qint64 untilMs) const
{
    QList<OperatorBand> result;
    for (qsizetype i = 0; i < operatorChanges.size(); ++i) {
        const OperatorChange &change = operatorChanges.at(i);
        const qint64 end =
            i + 1 < operatorChanges.size() ? operatorChanges.at(i + 1).atMs : untilMs;
        if (change.state != OperatorState::Enabled && end > change.atMs)
            result.append(OperatorBand{change.atMs, end, change.state});
    }
    return result;
}

LaneState TimelineLane::stateAt(qint64 atMs) const
{
    return stateAtTime(changes, atMs, LaneState::Closed);
}

OperatorState TimelineLane::operatorStateAt(qint64 atMs) const
{
    return stateAtTime(operatorChanges, atMs, OperatorState::Enabled);
}

BreakerTimelineModel::BreakerTimelineModel(TimelineLimits limits) : m_limits(limits) {}

LaneState BreakerTimelineModel::laneStateOf(BreakerState breaker)
{
    switch (breaker) {
    case BreakerState::Closed:
        return LaneState::Closed;
    case BreakerState::Open:
        return LaneState::Open;
    case BreakerState::HalfOpen:
        return LaneState::HalfOpen;
    }
    return LaneState::Closed;
}

LaneState BreakerTimelineModel::laneStateOf(const ProviderHealth &provider)
{
    if (provider.breaker == BreakerState::Closed &&
        provider.operatorState == OperatorState::Enabled && provider.trafficShare < 1.0)
        return LaneState::Ramping;
    return laneStateOf(provider.breaker);
}

const TimelineLane *BreakerTimelineModel::lane(const QString &providerId) const
{
    for (const TimelineLane &lane : m_lanes) {
        if (lane.providerId == providerId)
            return &lane;
    }
    return nullptr;
}

qint64 BreakerTimelineModel::earliestMs() const
{
    qint64 earliest = m_nowMs;
    for (const TimelineLane &lane : m_lanes)
        earliest = std::min(earliest, lane.knownSinceMs);
    return earliest;
}

void BreakerTimelineModel::applySnapshot(const EngineSnapshot &snapshot, qint64 receivedAtMs)
{
    // Time never runs backwards on the lanes, whatever the wall clock does.
    m_nowMs = std::max(m_nowMs, receivedAtMs);

    // The engine's ring repeats what earlier snapshots carried; its sequence numbers tell the
    // new events apart.
    QHash<QString, QList<BreakerEvent>> fresh;
    const bool firstEvents = m_lastSequence == 0;
    bool engineDroppedOlder = false;
    for (const BreakerEvent &event : snapshot.recentBreakerEvents) {
        if (event.sequence <= m_lastSequence)
            continue;
        if (firstEvents && fresh.isEmpty() && event.sequence > 1)
            engineDroppedOlder = true; // the engine's ring wrapped before the console looked
        fresh[event.providerId].append(event);
        m_lastSequence = event.sequence;
        m_nowMs = std::max(m_nowMs, event.atMsSinceEpoch);
    }

    // Lanes follow the snapshot's providers: new ones start now (or at their first event), a
    // retired one goes with its history.
    QList<TimelineLane> lanes;
    lanes.reserve(snapshot.providers.size());
    for (const ProviderHealth &provider : snapshot.providers) {
        const QList<BreakerEvent> events = fresh.value(provider.id);
        auto existing =
            std::find_if(m_lanes.begin(), m_lanes.end(), [&](const TimelineLane &candidate) {
                return candidate.providerId == provider.id;
            });
        TimelineLane lane;
        if (existing != m_lanes.end()) {
            lane = std::move(*existing);
        } else {
            lane.providerId = provider.id;
            lane.knownSinceMs = events.isEmpty() ? m_nowMs : events.first().atMsSinceEpoch;
            lane.olderHistoryDropped = engineDroppedOlder;
        }
        for (const BreakerEvent &event : events)
            applyEvent(lane, event);

        // What no event reports: a ramp that ended, or began with a close or an enable (then at
        // that event's time). Also repairs a lane whose events the engine dropped.
        const qint64 correctionMs =
            std::max(lane.changes.isEmpty() ? lane.knownSinceMs : lane.changes.last().atMs,
                     events.isEmpty() ? m_nowMs : events.last().atMsSinceEpoch);
        setStateFrom(lane.changes, correctionMs, laneStateOf(provider));
        const qint64 operatorCorrectionMs = std::max(
            lane.operatorChanges.isEmpty() ? lane.knownSinceMs : lane.operatorChanges.last().atMs,
            events.isEmpty() ? m_nowMs : events.last().atMsSinceEpoch);
        setStateFrom(lane.operatorChanges, operatorCorrectionMs, provider.operatorState);

        trim(lane);
        lanes.append(std::move(lane));
    }
    m_lanes = std::move(lanes);
}

void BreakerTimelineModel::applyEvent(TimelineLane &lane, const BreakerEvent &event)
{
    // Events arrive in the engine's order; a clock step back must not fold a lane over itself.
    qint64 atMs = std::max(event.atMsSinceEpoch, lane.knownSinceMs);
    if (!lane.changes.isEmpty())
        atMs = std::max(atMs, lane.changes.last().atMs);
    if (!lane.operatorChanges.isEmpty())
        atMs = std::max(atMs, lane.operatorChanges.last().atMs);

    lane.markers.append(
        LaneMarker{atMs, event.from, event.to, event.operatorState, event.reason, event.sequence});
    // An operator action or a probe-health note leaves the breaker where it was; whether a ramp
    // began with it, the snapshot says.
    if (event.from != event.to || lane.changes.isEmpty())
        setStateFrom(lane.changes, atMs, laneStateOf(event.to));
    setStateFrom(lane.operatorChanges, atMs, event.operatorState);
}

void BreakerTimelineModel::trim(TimelineLane &lane)
{
    qint64 cutMs = m_nowMs - m_limits.maxAgeMs;
    cutMs = countCut(lane.changes, m_limits.maxChangesPerLane, cutMs);
    cutMs = countCut(lane.operatorChanges, m_limits.maxChangesPerLane, cutMs);
    cutMs = countCut(lane.markers, m_limits.maxChangesPerLane, cutMs);
    if (cutMs <= lane.knownSinceMs)
        return;
    cutBefore(lane.changes, cutMs);
    cutBefore(lane.operatorChanges, cutMs);
    lane.markers.removeIf([cutMs](const LaneMarker &marker) { return marker.atMs < cutMs; });
    // Changes at one instant merge into one, but markers do not: many events in the same
    // millisecond can still exceed the bound.
    if (lane.markers.size() > m_limits.maxChangesPerLane)
        lane.markers.remove(0, lane.markers.size() - m_limits.maxChangesPerLane);
    lane.knownSinceMs = cutMs;
    lane.olderHistoryDropped = true;
}

} // namespace switchyard::ui
