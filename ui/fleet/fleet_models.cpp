#include "ui/fleet/fleet_models.h"

#include <QLocale>

namespace switchyard::ui {

using health::BreakerState;
using health::OperatorState;
using health::ProviderState;

namespace {

QString dash()
{
    return QStringLiteral("\u2014");
}

} // namespace

FleetNodesModel::FleetNodesModel(QObject *parent) : MergingTableModel(parent) {}

int FleetNodesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FleetNodesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const FleetMemberState &node = m_rows.at(index.row());
    int up = 0;
    QStringList notUp;
    for (const health::EndpointSummary &endpoint : node.endpoints) {
        if (endpoint.state == ProviderState::Up)
            ++up;
        else
            notUp.append(endpoint.id + QStringLiteral(": ") +
                         FleetEndpointsModel::stateText(endpoint));
    }
    const int total = int(node.endpoints.size());
    if (role == Qt::TextAlignmentRole &&
        (index.column() == InFlightColumn || index.column() == RateColumn ||
         index.column() == ConfigColumn))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == ColorRole && index.column() == EndpointsColumn && total > 0)
        return up == total ? QColor(0x15, 0x80, 0x3d)
                           : (up == 0 ? QColor(0xb9, 0x1c, 0x1c) : QColor(0xb4, 0x53, 0x09));
    if (role == Qt::ToolTipRole && index.column() == EndpointsColumn)
        return notUp.isEmpty() ? QVariant() : QVariant(notUp.join(QLatin1Char('\n')));
    if (role != Qt::DisplayRole)
        return {};
    const QLocale locale;
    switch (index.column()) {
    case NodeColumn:
        return node.self ? tr("%1 (this node)").arg(node.node) : node.node;
    case AddressColumn:
        return node.address.isEmpty() ? dash() : node.address;
    case VersionColumn:
        return node.version.isEmpty() ? dash() : node.version;
    case ConfigColumn:
        return node.configVersion > 0 ? locale.toString(node.configVersion) : dash();
    case InFlightColumn:
        return locale.toString(node.inFlight);
    case RateColumn:
        return locale.toString(node.requestsPerSecond, 'f', 1);
    case EndpointsColumn:
        if (total == 0)
            return tr("not published yet");
        //: %1 endpoints up; %2 endpoints the node has
        return tr("%1 of %2 up").arg(up).arg(total);
    case SeenColumn: {
        if (node.self)
            return tr("now");
        if (node.lastSeenMs <= 0)
            return dash();
        const qint64 seconds = std::max<qint64>(0, (m_nowMs - node.lastSeenMs) / 1000);
        return tr("%n s ago", nullptr, int(seconds));
    }
    default:
        return {};
    }
}

QVariant FleetNodesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (section) {
    case NodeColumn:
        return tr("Node");
    case AddressColumn:
        return tr("Address");
    case VersionColumn:
        return tr("Version");
    case ConfigColumn:
        return tr("Config");
    case InFlightColumn:
        return tr("In flight");
    case RateColumn:
        return tr("Req/s");
    case EndpointsColumn:
        return tr("Endpoints");
    case SeenColumn:
        return tr("Last seen");
    default:
        return {};
    }
}

void FleetNodesModel::applyMembers(const QList<FleetMemberState> &members, qint64 nowMs)
{
    const bool clockMoved = nowMs / 1000 != m_nowMs / 1000;
    m_nowMs = nowMs;
    mergeRows(members);
    // "Last seen" counts on between heartbeats.
    if (clockMoved && !m_rows.isEmpty())
        emit dataChanged(index(0, SeenColumn), index(int(m_rows.size()) - 1, SeenColumn));
}

void FleetNodesModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rows.isEmpty())
        emit dataChanged(index(0, 0), index(int(m_rows.size()) - 1, ColumnCount - 1));
}

std::pair<int, int> FleetNodesModel::changedColumns(const FleetMemberState &before,
                                                    const FleetMemberState &after) const
{
    if (before == after)
        return {-1, -1};
    // A handful of nodes: the whole row is simpler than column by column.
    return {0, ColumnCount - 1};
}

FleetEndpointsModel::FleetEndpointsModel(QObject *parent) : QAbstractTableModel(parent) {}

int FleetEndpointsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_endpoints.size());
}

int FleetEndpointsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_members.size());
}

const health::EndpointSummary *FleetEndpointsModel::find(int row, int column) const
{
    const QString &id = m_endpoints.at(row);
    for (const health::EndpointSummary &endpoint : m_members.at(column).endpoints) {
        if (endpoint.id == id)
            return &endpoint;
    }
    return nullptr;
}

QString FleetEndpointsModel::stateText(const health::EndpointSummary &endpoint)
{
    if (endpoint.operatorState == OperatorState::Disabled)
        return tr("disabled");
    if (endpoint.operatorState == OperatorState::Draining)
        return tr("draining");
    switch (endpoint.breaker) {
    case BreakerState::Open:
        return tr("open");
    case BreakerState::HalfOpen:
        return tr("half-open");
    case BreakerState::Closed:
        break;
    }
    return endpoint.state == ProviderState::Up ? tr("up") : tr("degraded");
}

QColor FleetEndpointsModel::stateColor(const health::EndpointSummary &endpoint)
{
    if (endpoint.operatorState != OperatorState::Enabled)
        return QColor(0x1d, 0x4e, 0xd8); // blue: an operator's deliberate choice
    switch (endpoint.state) {
    case ProviderState::Up:
        return QColor(0x15, 0x80, 0x3d);
    case ProviderState::Degraded:
        return QColor(0xb4, 0x53, 0x09);
    case ProviderState::Down:
        break;
    }
    return QColor(0xb9, 0x1c, 0x1c);
}

QVariant FleetEndpointsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const health::EndpointSummary *endpoint = find(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole:
        return endpoint ? stateText(*endpoint) : QStringLiteral("\u2014");
    case ColorRole:
        return endpoint ? QVariant(stateColor(*endpoint)) : QVariant();
    case Qt::ToolTipRole:
        if (!endpoint)
            return tr("%1 does not list this endpoint").arg(m_members.at(index.column()).node);
        if (endpoint->breakerReason.isEmpty())
            return {};
        return endpoint->breakerReason;
    default:
        return {};
    }
}

QVariant FleetEndpointsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Vertical)
        return section >= 0 && section < m_endpoints.size() ? m_endpoints.at(section) : QString();
    if (section < 0 || section >= m_members.size())
        return {};
    return m_members.at(section).self ? tr("%1 (this node)").arg(m_members.at(section).node)
                                      : m_members.at(section).node;
}

void FleetEndpointsModel::applyMembers(const QList<FleetMemberState> &members)
{
    QStringList endpoints;
    for (const FleetMemberState &member : members) {
        for (const health::EndpointSummary &endpoint : member.endpoints) {
            if (!endpoints.contains(endpoint.id))
                endpoints.append(endpoint.id);
        }
    }
    if (endpoints == m_endpoints && members.size() == m_members.size()) {
        bool sameNodes = true;
        for (qsizetype i = 0; i < members.size(); ++i)
            sameNodes = sameNodes && members[i].node == m_members[i].node;
        if (sameNodes) {
            m_members = members;
            if (!m_endpoints.isEmpty() && !m_members.isEmpty())
                emit dataChanged(index(0, 0),
                                 index(int(m_endpoints.size()) - 1, int(m_members.size()) - 1));
            return;
        }
    }
    // The set of nodes or endpoints changed: few enough to lay out again.
    beginResetModel();
    m_endpoints = endpoints;
    m_members = members;
    endResetModel();
}

void FleetEndpointsModel::retranslate()
{
    if (!m_members.isEmpty())
        emit headerDataChanged(Qt::Horizontal, 0, int(m_members.size()) - 1);
    if (!m_endpoints.isEmpty() && !m_members.isEmpty())
        emit dataChanged(index(0, 0),
                         index(int(m_endpoints.size()) - 1, int(m_members.size()) - 1));
}

} // namespace switchyard::ui
