#pragma once

#include "telemetry/request_recorder.h"
#include "usage/usage_types.h"

#include <QByteArray>
#include <QObject>
#include <QSet>
#include <functional>

namespace switchyard::usage {
class UsageLedger;
}

namespace switchyard::fleet {

class FleetNode;

// Usage reported for the whole fleet (docs/fleet.md, "Usage"). Each node keeps its per-request
// rows in its own ledger and publishes its own aggregates by hour, tenant, key, model and
// provider: one Redis hash per hour (`usage:hour:2026-12-03T14:00:00Z`), a field per node and
// group, its sums as the node's ledger holds them. Figures are absolute and come from the ledger
// itself, so writing them again never counts twice: after a Redis outage, a restart or an
// emptied Redis a node simply writes them again, and nothing it served is lost (its ledger kept
// it). A report asked of any node is this node's ledger plus the other nodes' hours.
//
// The current hour is written again at most once a second, and never sooner than ten times the
// last ledger query took, so the ledger's thread spends at most a tenth of its time on it.
class SharedUsage final : public QObject, public telemetry::TraceSink {
    Q_OBJECT
public:
    SharedUsage(FleetNode &node, usage::UsageLedger &ledger, QObject *parent = nullptr);

    // The hours kept in Redis: two months, so a monthly report of the last one is whole.
    static constexpr int kKeptHours = 62 * 24;

    // telemetry::TraceSink: a finished request changes this hour's figures.
    void traceFinished(const telemetry::Trace &trace) override;

    // Adds the other nodes' usage to `own` (this node's report of `own.query`) and hands the
    // fleet's report to `done`, on this thread; `own` alone, with fleetProblem, when Redis is
    // unreachable.
    void complete(usage::UsageReport own, std::function<void(usage::UsageReport)> done);

private:
    void sync();
    void publish(qint64 fromHourMs, qint64 toHourMs);
    QByteArray hourKey(qint64 hourStartMs) const;

    FleetNode &m_node;
    usage::UsageLedger &m_ledger;
    QSet<qint64> m_dirtyHours;  // hour starts (UTC ms) whose figures changed since written
    qint64 m_currentHourMs = 0; // the hour the last request finished in
    bool m_republishAll = true; // on joining: Redis may have been emptied, or missed writes
    bool m_publishing = false;  // a ledger query is running for it
    qint64 m_nextPublishMs = 0; // steady milliseconds before which no query starts
};

} // namespace switchyard::fleet
