#pragma once

#include "control/engine_snapshot.h"
#include "health/endpoint_state.h"
#include "ui/common/merging_table_model.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>

namespace switchyard::ui {

// One row per live node of the fleet, from the engine's snapshots, merged by name: what each node
// last announced (address, version, config version, traffic) and how its endpoints stand.
class FleetNodesModel final : public MergingTableModel<FleetMemberState> {
    Q_OBJECT
public:
    enum Column {
        NodeColumn,
        AddressColumn,
        VersionColumn,
        ConfigColumn,
        InFlightColumn,
        RateColumn,
        EndpointsColumn,
        SeenColumn,
        ColumnCount
    };
    Q_ENUM(Column)

    // The role a cell's pill colour is kept under (StatePillDelegate).
    static constexpr int ColorRole = Qt::UserRole + 1;

    explicit FleetNodesModel(QObject *parent = nullptr);

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // `nowMs`: UTC milliseconds since the epoch, for "last seen".
    void applyMembers(const QList<FleetMemberState> &members, qint64 nowMs);
    void retranslate();

protected:
    QString idOf(const FleetMemberState &row) const override { return row.node; }
    std::pair<int, int> changedColumns(const FleetMemberState &before,
                                       const FleetMemberState &after) const override;

private:
    qint64 m_nowMs = 0;
};

// Each node's view of each endpoint: a row per endpoint (its id in EndpointColumn), then a column
// per node, as the nodes last published them. A node's breakers decide for it alone: this shows
// where a provider fails for some nodes only (their network, their region), it does not act on it.
class FleetEndpointsModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int ColorRole = FleetNodesModel::ColorRole;
    static constexpr int EndpointColumn = 0; // the nodes' columns follow, in the listing's order

    explicit FleetEndpointsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    void applyMembers(const QList<FleetMemberState> &members);
    void retranslate();

private:
    // The endpoint of `row` as the node of `column` published it; null when it does not list it.
    const EndpointSummary *find(int row, int column) const;
    const FleetMemberState &memberOf(int column) const { return m_members.at(column - 1); }

    QStringList m_endpoints; // in the order the nodes list them
    QList<FleetMemberState> m_members;
};

} // namespace switchyard::ui
