#pragma once

#include <QByteArray>
#include <QObject>

namespace switchyard::usage {
class BudgetTracker;
struct SubjectSpend;
} // namespace switchyard::usage

namespace switchyard::fleet {

class FleetNode;

// Budgets counted across the fleet (docs/fleet.md, "Budgets"). Each node writes its own spend per
// tenant and per key as an absolute figure, one hash per subject and window
// (`spend:day:2026-12-03:tenant:NAME`, field: the node, value: its US dollars), and reads the
// others' sum for every subject a budget names. An absolute figure can be written again without
// counting twice: a node that restarts (its ledger seeds its own spend), reconnects or finds
// Redis emptied simply writes it again. A window's hashes expire a day after it ends.
//
// While Redis is away each node checks budgets against its own spend and the others' as last
// read; what it spends meanwhile is written when the link is back. Engine thread only.
class SharedSpend final : public QObject {
    Q_OBJECT
public:
    SharedSpend(FleetNode &node, usage::BudgetTracker &budgets, QObject *parent = nullptr);

private:
    void sync();
    void publish(const usage::SubjectSpend &spend);
    void readOthers();
    QByteArray hashKey(bool day, bool byTenant, const QString &subject);

    FleetNode &m_node;
    usage::BudgetTracker &m_budgets;
    bool m_republishAll = true; // on joining: Redis may have been emptied, or missed a write
};

} // namespace switchyard::fleet
