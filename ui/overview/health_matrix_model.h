#pragma once

#include "control/engine_snapshot.h"
#include "ui/common/merging_table_model.h"

#include <QAbstractTableModel>
#include <QColor>
#include <QHash>
#include <QList>

namespace switchyard::ui {

// One row per provider, fed by engine snapshots and merged by id (MergingTableModel). Sorting is
// the view's job (through a proxy on SortRole), so a routine update never moves rows.
class HealthMatrixModel : public MergingTableModel<ProviderHealth> {
    Q_OBJECT
public:
    enum Column {
        ProviderColumn,
        StateColumn, // the breaker and operator status, drawn as a pill
        InFlightColumn,
        RequestsColumn,
        ErrorsColumn,
        LatencyP50Column,
        LatencyP95Column,
        TimeToFirstTokenP50Column,
        ModelsColumn,
        // How the fleet's other nodes see the provider ("2 of 2 up"); the view shows it only in
        // a fleet. Each node's breakers are its own: this is shown, never acted on.
        OtherNodesColumn,
        ReasonColumn, // why it is in that status; last, so long reasons get the spare width
        ColumnCount
    };
    Q_ENUM(Column)

    enum Role {
        // Raw value to sort on: numbers as numbers, the status as its severity (Closed < Open).
        SortRole = Qt::UserRole + 1,
        // The ProviderStatus as an int.
        StateRole,
        ProviderIdRole,
        // The status's QColor, for the state pill (StatePillDelegate); in OtherNodesColumn the
        // colour of the other nodes' count.
        StatusColorRole,
    };
    Q_ENUM(Role)

    // What the Breaker column shows: the breaker state, unless an operator's choice or a
    // recovery ramp says more. Ordered by severity, so sorting puts trouble last.
    enum class ProviderStatus {
        Closed,
        Ramping,
        CoolingDown, // answered 429: no calls until its Retry-After passes; not a failure
        Failing,
        HalfOpen,
        Draining,
        Open,
        Disabled
    };
    Q_ENUM(ProviderStatus)

    explicit HealthMatrixModel(QObject *parent = nullptr);

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // Merges the snapshot's providers into the rows: inserts new ids, removes vanished ones and
    // signals dataChanged only for rows whose values differ. Never resets. The other nodes'
    // views come from snapshot.fleet.members.
    void applySnapshot(const EngineSnapshot &snapshot);
    void applyProviders(const QList<ProviderHealth> &providers);
    void applyOtherNodes(const QList<FleetMemberState> &members);

    // Whether any other node of a fleet is listed: the view hides OtherNodesColumn otherwise.
    bool hasOtherNodes() const { return m_otherNodeCount > 0; }

    const QList<ProviderHealth> &providers() const { return rows(); }

    // Re-announces headers and state names after the application language changed.
    void retranslate();

    // "84 ms", "1.2 s", or an em dash when there is no sample (negative).
    static QString formatLatency(double milliseconds);
    static ProviderStatus statusOf(const ProviderHealth &provider);
    static QString statusName(ProviderStatus status);
    // The pill's text: the name, with the countdown while open or the share while ramping.
    static QString statusText(const ProviderHealth &provider);
    // Why a provider is in its status, in the console's language where the engine gave facts.
    static QString statusReason(const ProviderHealth &provider);
    static QColor statusColor(ProviderStatus status);
    // "42 s", "3:05": time left until an open breaker admits a probe.
    static QString formatCountdown(qint64 milliseconds);

protected:
    QString idOf(const ProviderHealth &row) const override;
    std::pair<int, int> changedColumns(const ProviderHealth &before,
                                       const ProviderHealth &after) const override;

private:
    // One other node's view of one provider.
    struct NodeView {
        QString node;
        EndpointSummary endpoint;
        friend bool operator==(const NodeView &, const NodeView &) = default;
    };
    QVariant otherNodesData(const ProviderHealth &provider, int role) const;

    QHash<QString, QList<NodeView>> m_otherNodes; // by provider id, in the nodes' order
    int m_otherNodeCount = 0;
};

} // namespace switchyard::ui
