#pragma once

#include "config/config.h"

#include <QAbstractTableModel>
#include <QList>

namespace switchyard::ui {

// A rule's `when` in one line: "sensitivity eq high AND model glob agent-*".
QString conditionSummary(const std::optional<config::RouteCondition> &condition);
// A rule's target in one line: "tier pro", "pool [a, b]", "split by user: a 95 · b 5".
QString targetSummary(const config::RouteRule &rule);

// The rules being edited on the Routes page, always in priority order (higher first; equal
// priorities keep their relative order, as the router does), so row order is routing order.
class RouteRulesModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { PriorityColumn, NameColumn, ConditionColumn, TargetColumn, ColumnCount };

    explicit RouteRulesModel(QObject *parent = nullptr);

    const QList<config::RouteRule> &rules() const { return m_rules; }
    void setRules(const QList<config::RouteRule> &rules);
    // Replaces one rule; returns its row afterwards (a new priority may move it).
    int replaceRule(int row, const config::RouteRule &rule);
    int addRule(const config::RouteRule &rule);
    void removeRule(int row);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    void retranslate();

private:
    // Sorts into priority order and returns where the rule that was at `row` went.
    int sortKeeping(int row);

    QList<config::RouteRule> m_rules;
};

} // namespace switchyard::ui
