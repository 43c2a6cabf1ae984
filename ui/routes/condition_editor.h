#pragma once

#include "config/routing_config.h"

#include <QList>
#include <QWidget>
#include <optional>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLineEdit;
class QVBoxLayout;
QT_END_NAMESPACE

namespace switchyard::ui {

// Where a part of a condition sits: its index in each group on the way down from the top group.
// {} is the top group, {1} its second part, {1, 0} the first part of that.
using ConditionPath = QList<int>;

// Edits a rule's `when` as a tree: groups that match all, any or none of their parts, holding
// comparisons and further groups, to any depth. The edited value is the config::RouteCondition
// the engine validates and applies; the widgets only show it. Typing changes the value in place;
// adding, removing or regrouping rebuilds the widgets from the value, so their object names
// always follow the tree ("conditionField1.0" is the field of the first part of the second).
class ConditionTreeEditor final : public QWidget {
    Q_OBJECT
public:
    explicit ConditionTreeEditor(QWidget *parent = nullptr);

    // Loads a condition; nullopt (every request matches) shows an empty "all" group.
    void setCondition(const std::optional<config::RouteCondition> &condition);
    // The condition as edited. No parts is nullopt; a top "all" or "any" group with one part is
    // that part alone; a "none of" group of several parts is `not` of an `any` group, because
    // the engine's `not` takes exactly one condition.
    std::optional<config::RouteCondition> condition() const;

    // The edits the group buttons make, at any depth; each rebuilds the widgets.
    void addComparison(const ConditionPath &group);
    void addGroup(const ConditionPath &group);
    void removePart(const ConditionPath &part);
    void setGroupKind(const ConditionPath &group, config::RouteCondition::Kind kind);

Q_SIGNALS:
    void conditionEdited();

protected:
    void changeEvent(QEvent *event) override;

private:
    config::RouteCondition *nodeAt(const ConditionPath &path);
    void rebuild(const std::optional<ConditionPath> &focusPart = std::nullopt);
    QWidget *buildGroup(const config::RouteCondition &group, const ConditionPath &path,
                        QWidget *parent);
    QWidget *buildComparison(const config::RouteCondition &comparison, const ConditionPath &path,
                             QWidget *parent);
    void comparisonEdited(const ConditionPath &path, const QComboBox *field, const QComboBox *op,
                          const QLineEdit *value);

    // The top group as shown: its kind is the "Match" choice, and a `when` that is a single
    // comparison is shown as the only part of an "all" group.
    config::RouteCondition m_root;
    QVBoxLayout *m_layout = nullptr;
    QWidget *m_tree = nullptr;
};

} // namespace switchyard::ui
