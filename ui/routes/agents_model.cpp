#include "ui/routes/agents_model.h"

namespace switchyard::ui {

AgentsModel::AgentsModel(QObject *parent) : MergingTableModel(parent) {}

int AgentsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString AgentsModel::stateText(const AgentState &agent)
{
    if (!agent.live)
        return tr("silent");
    return agent.busy ? tr("busy") : tr("live");
}

QVariant AgentsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const AgentState &agent = m_rows.at(index.row());
    if (role == AgentIdRole)
        return agent.id;
    if (role == Qt::ToolTipRole) {
        if (index.column() == AgentColumn)
            return agent.baseUrl;
        if (index.column() == CapabilitiesColumn)
            return agent.capabilities.join(u'\n');
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (index.column()) {
    case AgentColumn:
        return agent.id;
    case StateColumn:
        return stateText(agent);
    case CapabilitiesColumn:
        return agent.capabilities.join(QStringLiteral(", "));
    case HeartbeatColumn: {
        const qint64 seconds =
            std::max<qint64>(0, (m_nowMsSinceEpoch - agent.lastHeartbeatMsSinceEpoch) / 1000);
        return tr("%n s ago", nullptr, int(seconds));
    }
    default:
        return {};
    }
}

QVariant AgentsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case AgentColumn:
        return tr("Agent");
    case StateColumn:
        return tr("State");
    case CapabilitiesColumn:
        return tr("Offers");
    case HeartbeatColumn:
        return tr("Last heartbeat");
    default:
        return {};
    }
}

void AgentsModel::applyAgents(const QList<AgentState> &agents, qint64 nowMsSinceEpoch)
{
    const bool clockMoved = nowMsSinceEpoch / 1000 != m_nowMsSinceEpoch / 1000;
    m_nowMsSinceEpoch = nowMsSinceEpoch;
    mergeRows(agents);
    // "N s ago" moves with the clock even when nothing else changed.
    if (clockMoved && !m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, HeartbeatColumn),
                           index(int(m_rows.size()) - 1, HeartbeatColumn));
}

std::pair<int, int> AgentsModel::changedColumns(const AgentState &before,
                                                const AgentState &after) const
{
    int first = -1;
    int last = -1;
    const auto note = [&](bool differs, int column) {
        if (!differs)
            return;
        if (first < 0)
            first = column;
        last = column;
    };
    note(before.baseUrl != after.baseUrl, AgentColumn); // its tool tip
    note(before.busy != after.busy || before.live != after.live, StateColumn);
    note(before.lastHeartbeatMsSinceEpoch != after.lastHeartbeatMsSinceEpoch, HeartbeatColumn);
    note(before.capabilities != after.capabilities, CapabilitiesColumn);
    return {first, last};
}

void AgentsModel::retranslate()
{
    Q_EMIT headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

} // namespace switchyard::ui
