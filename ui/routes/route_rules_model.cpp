#include "ui/routes/route_rules_model.h"

#include "config/rule_validation.h"

#include <algorithm>
#include <numeric>

namespace switchyard::ui {

namespace {

QString compareText(const config::RouteCondition &condition)
{
    const QString value = condition.op == config::ConditionOperator::In
                              ? u'[' + condition.values.join(QStringLiteral(", ")) + u']'
                              : condition.values.value(0);
    return condition.field + u' ' + config::operatorName(condition.op) + u' ' + value;
}

QString conditionText(const config::RouteCondition &condition, bool nested)
{
    switch (condition.kind) {
    case config::RouteCondition::Kind::Compare:
        return compareText(condition);
    case config::RouteCondition::Kind::Not:
        return QStringLiteral("NOT ") + (condition.children.isEmpty()
                                             ? QString()
                                             : conditionText(condition.children.first(), true));
    case config::RouteCondition::Kind::All:
    case config::RouteCondition::Kind::Any: {
        QStringList parts;
        for (const config::RouteCondition &child : condition.children)
            parts.append(conditionText(child, true));
        const QString joined = parts.join(condition.kind == config::RouteCondition::Kind::All
                                              ? QStringLiteral(" AND ")
                                              : QStringLiteral(" OR "));
        return nested && parts.size() > 1 ? u'(' + joined + u')' : joined;
    }
    }
    return {};
}

} // namespace

QString conditionSummary(const std::optional<config::RouteCondition> &condition)
{
    if (!condition)
        return RouteRulesModel::tr("every request");
    return conditionText(*condition, false);
}

QString targetSummary(const config::RouteRule &rule)
{
    if (!rule.split.isEmpty()) {
        QStringList branches;
        for (const config::SplitBranch &branch : rule.split)
            branches.append(
                RouteRulesModel::tr("%1 %2").arg(branch.target.label()).arg(branch.weight));
        return RouteRulesModel::tr("split by %1: %2")
            .arg(config::splitKeyName(rule.splitKey), branches.join(QStringLiteral(" · ")));
    }
    switch (rule.to.kind) {
    case config::RouteTarget::Kind::Provider:
        return RouteRulesModel::tr("provider %1").arg(rule.to.label());
    case config::RouteTarget::Kind::Pool:
        return RouteRulesModel::tr("pool %1").arg(rule.to.label());
    case config::RouteTarget::Kind::Tier:
        break;
    }
    return RouteRulesModel::tr("tier %1").arg(rule.to.label());
}

RouteRulesModel::RouteRulesModel(QObject *parent) : QAbstractTableModel(parent) {}

void RouteRulesModel::setRules(const QList<config::RouteRule> &rules)
{
    beginResetModel();
    m_rules = rules;
    std::stable_sort(m_rules.begin(), m_rules.end(),
                     [](const config::RouteRule &a, const config::RouteRule &b) {
                         return a.priority > b.priority;
                     });
    endResetModel();
}

int RouteRulesModel::sortKeeping(int row)
{
    QList<int> order(m_rules.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [this](int a, int b) { return m_rules[a].priority > m_rules[b].priority; });
    bool moved = false;
    for (int i = 0; i < order.size(); ++i)
        moved = moved || order[i] != i;
    if (!moved)
        return row;
    emit layoutAboutToBeChanged();
    QList<config::RouteRule> sorted;
    sorted.reserve(m_rules.size());
    for (int from : order)
        sorted.append(m_rules[from]);
    const QModelIndexList before = persistentIndexList();
    QModelIndexList after;
    for (const QModelIndex &index : before)
        after.append(this->index(int(order.indexOf(index.row())), index.column()));
    m_rules = std::move(sorted);
    changePersistentIndexList(before, after);
    emit layoutChanged();
    return int(order.indexOf(row));
}

int RouteRulesModel::replaceRule(int row, const config::RouteRule &rule)
{
    if (row < 0 || row >= m_rules.size())
        return -1;
    m_rules[row] = rule;
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
    return sortKeeping(row);
}

int RouteRulesModel::addRule(const config::RouteRule &rule)
{
    const int row = int(m_rules.size());
    beginInsertRows({}, row, row);
    m_rules.append(rule);
    endInsertRows();
    return sortKeeping(row);
}

void RouteRulesModel::removeRule(int row)
{
    if (row < 0 || row >= m_rules.size())
        return;
    beginRemoveRows({}, row, row);
    m_rules.removeAt(row);
    endRemoveRows();
}

int RouteRulesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rules.size());
}

int RouteRulesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RouteRulesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const config::RouteRule &rule = m_rules[index.row()];
    if (role == Qt::DisplayRole || role == Qt::ToolTipRole) {
        switch (Column(index.column())) {
        case PriorityColumn:
            return rule.priority;
        case NameColumn:
            return rule.name;
        case ConditionColumn:
            return conditionSummary(rule.when);
        case TargetColumn:
            return targetSummary(rule);
        case ColumnCount:
            break;
        }
    }
    if (role == Qt::TextAlignmentRole && index.column() == PriorityColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant RouteRulesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return {};
    switch (Column(section)) {
    case PriorityColumn:
        return tr("Priority");
    case NameColumn:
        return tr("Rule");
    case ConditionColumn:
        return tr("When");
    case TargetColumn:
        return tr("Target");
    case ColumnCount:
        break;
    }
    return {};
}

void RouteRulesModel::retranslate()
{
    emit headerDataChanged(Qt::Horizontal, 0, ColumnCount - 1);
    if (!m_rules.isEmpty())
        emit dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
}

} // namespace switchyard::ui
