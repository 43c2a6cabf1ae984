#include "ui/fleet/fleet_models.h"

#include "ui/common/endpoint_summary_text.h"

#include <QLocale>

namespace switchyard::ui {

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
    for (const EndpointSummary &endpoint : node.endpoints) {
        if (endpoint.state == ProviderState::Up)
            ++up;
        else
            notUp.append(endpoint.id + QStringLiteral(": ") + EndpointSummaryText::state(endpoint));
    }
    const int total = int(node.endpoints.size());
    if (role == Qt::TextAlignmentRole &&
        (index.column() == InFlightColumn || index.column() == RateColumn ||
         index.column() == ConfigColumn))
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == ColorRole && index.column() == EndpointsColumn && total > 0)
        return EndpointSummaryText::upCountColor(up, total);
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
        return EndpointSummaryText::upCount(up, total);
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
    return parent.isValid() || m_members.isEmpty() ? 0 : 1 + int(m_members.size());
}

const EndpointSummary *FleetEndpointsModel::find(int row, int column) const
{
    const QString &id = m_endpoints.at(row);
    for (const EndpointSummary &endpoint : memberOf(column).endpoints) {
        if (endpoint.id == id)
            return &endpoint;
    }
    return nullptr;
}

QVariant FleetEndpointsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (index.column() == EndpointColumn)
        return role == Qt::DisplayRole ? QVariant(m_endpoints.at(index.row())) : QVariant();
    const EndpointSummary *endpoint = find(index.row(), index.column());
    switch (role) {
    case Qt::DisplayRole:
        return endpoint ? EndpointSummaryText::state(*endpoint) : QStringLiteral("\u2014");
    case ColorRole:
        return endpoint ? QVariant(EndpointSummaryText::color(*endpoint)) : QVariant();
    case Qt::ToolTipRole:
        if (!endpoint)
            return tr("%1 does not list this endpoint").arg(memberOf(index.column()).node);
        if (endpoint->breakerReason.isEmpty())
            return {};
        return endpoint->breakerReason;
    default:
        return {};
    }
}

QVariant FleetEndpointsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole || orientation != Qt::Horizontal || section < 0 ||
        section >= columnCount())
        return {};
    if (section == EndpointColumn)
        return tr("Endpoint");
    const FleetMemberState &member = memberOf(section);
    return member.self ? tr("%1 (this node)").arg(member.node) : member.node;
}

void FleetEndpointsModel::applyMembers(const QList<FleetMemberState> &members)
{
    QStringList endpoints;
    for (const FleetMemberState &member : members) {
        for (const EndpointSummary &endpoint : member.endpoints) {
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
                emit dataChanged(index(0, 1),
                                 index(int(m_endpoints.size()) - 1, int(m_members.size())));
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
        emit headerDataChanged(Qt::Horizontal, 0, int(m_members.size()));
    if (!m_endpoints.isEmpty() && !m_members.isEmpty())
        emit dataChanged(index(0, 1), index(int(m_endpoints.size()) - 1, int(m_members.size())));
}

} // namespace switchyard::ui
