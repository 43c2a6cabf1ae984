#pragma once

#include "control/routes_state.h"
#include "ui/common/merging_table_model.h"

namespace switchyard::ui {

// One row per registered agent, fed by engine snapshots and merged by id.
class AgentsModel final : public MergingTableModel<AgentState> {
    Q_OBJECT
public:
    // The agent's address is its name's tool tip: the panel is narrow, the offers matter more.
    enum Column { AgentColumn, StateColumn, HeartbeatColumn, CapabilitiesColumn, ColumnCount };
    Q_ENUM(Column)
    enum Role { AgentIdRole = Qt::UserRole + 1 };

    explicit AgentsModel(QObject *parent = nullptr);

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // `nowMsSinceEpoch` dates the last heartbeats ("4 s ago").
    void applyAgents(const QList<AgentState> &agents, qint64 nowMsSinceEpoch);
    void retranslate();

    // "live", "busy" or "silent" in the console's language.
    static QString stateText(const AgentState &agent);

protected:
    QString idOf(const AgentState &row) const override { return row.id; }
    std::pair<int, int> changedColumns(const AgentState &before,
                                       const AgentState &after) const override;

private:
    qint64 m_nowMsSinceEpoch = 0;
};

} // namespace switchyard::ui
