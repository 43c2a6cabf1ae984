#include "ui/routes/condition_editor.h"

#include "config/rule_validation.h"
#include "ui/common/widget_helpers.h"

#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QToolButton>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

using Kind = config::RouteCondition::Kind;

// The group kinds in the order the combo boxes list them.
constexpr Kind kGroupKinds[] = {Kind::All, Kind::Any, Kind::Not};

// Indent of a nested group, so depth reads at a glance; small, because the card is narrow.
constexpr int kNestedIndentPx = 8;

QString pathName(const ConditionPath &path)
{
    QStringList parts;
    for (int index : path)
        parts.append(QString::number(index));
    return parts.join(u'.');
}

config::RouteCondition newComparison()
{
    config::RouteCondition comparison;
    comparison.field = QStringLiteral("model");
    comparison.values = {QString()};
    return comparison;
}

// The engine's value for a group as shown: "none of" several parts is `not` of `any` of them.
config::RouteCondition engineGroup(const config::RouteCondition &shown)
{
    config::RouteCondition group = shown;
    group.children.clear();
    for (const config::RouteCondition &child : shown.children)
        group.children.append(child.kind == Kind::Compare ? child : engineGroup(child));
    if (group.kind == Kind::Not && group.children.size() > 1) {
        config::RouteCondition any;
        any.kind = Kind::Any;
        any.children = group.children;
        group.children = {any};
    }
    return group;
}

QString groupKindText(Kind kind)
{
    switch (kind) {
    case Kind::All:
        return ConditionTreeEditor::tr("all of the conditions");
    case Kind::Any:
        return ConditionTreeEditor::tr("any of the conditions");
    case Kind::Not:
        return ConditionTreeEditor::tr("none of the conditions");
    case Kind::Compare:
        break;
    }
    return {};
}

} // namespace

ConditionTreeEditor::ConditionTreeEditor(QWidget *parent) : QWidget(parent)
{
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_root.kind = Kind::All;
    rebuild();
}

void ConditionTreeEditor::setCondition(const std::optional<config::RouteCondition> &condition)
{
    m_root = {};
    m_root.kind = Kind::All;
    if (condition && condition->kind == Kind::Compare)
        m_root.children = {*condition};
    else if (condition)
        m_root = *condition;
    rebuild();
}

std::optional<config::RouteCondition> ConditionTreeEditor::condition() const
{
    if (m_root.children.isEmpty())
        return std::nullopt;
    if (m_root.kind != Kind::Not && m_root.children.size() == 1) {
        const config::RouteCondition &only = m_root.children.first();
        return only.kind == Kind::Compare ? only : engineGroup(only);
    }
    return engineGroup(m_root);
}

config::RouteCondition *ConditionTreeEditor::nodeAt(const ConditionPath &path)
{
    config::RouteCondition *node = &m_root;
    for (int index : path) {
        if (index < 0 || index >= node->children.size())
            return nullptr;
        node = &node->children[index];
    }
    return node;
}

void ConditionTreeEditor::addComparison(const ConditionPath &group)
{
    config::RouteCondition *node = nodeAt(group);
    if (!node || node->kind == Kind::Compare)
        return;
    node->children.append(newComparison());
    rebuild(ConditionPath(group) << int(node->children.size() - 1));
    Q_EMIT conditionEdited();
}

void ConditionTreeEditor::addGroup(const ConditionPath &group)
{
    config::RouteCondition *node = nodeAt(group);
    if (!node || node->kind == Kind::Compare)
        return;
    // A new group starts with one comparison: an empty group would match nothing useful, and
    // the validator would reject it.
    config::RouteCondition nested;
    nested.kind = node->kind == Kind::Any ? Kind::All : Kind::Any;
    nested.children = {newComparison()};
    node->children.append(nested);
    rebuild(ConditionPath(group) << int(node->children.size() - 1) << 0);
    Q_EMIT conditionEdited();
}

void ConditionTreeEditor::removePart(const ConditionPath &part)
{
    if (part.isEmpty())
        return;
    config::RouteCondition *parent = nodeAt(part.sliced(0, part.size() - 1));
    if (!parent || part.last() < 0 || part.last() >= parent->children.size())
        return;
    parent->children.removeAt(part.last());
    rebuild();
    Q_EMIT conditionEdited();
}

void ConditionTreeEditor::setGroupKind(const ConditionPath &group, Kind kind)
{
    config::RouteCondition *node = nodeAt(group);
    if (!node || node->kind == Kind::Compare || kind == Kind::Compare || node->kind == kind)
        return;
    node->kind = kind;
    // The combo box already shows the new kind: nothing to rebuild.
    Q_EMIT conditionEdited();
}

void ConditionTreeEditor::rebuild(const std::optional<ConditionPath> &focusPart)
{
    if (m_tree)
        retire(m_tree);
    m_tree = buildGroup(m_root, {}, this);
    m_layout->addWidget(m_tree);
    if (focusPart) {
        if (auto *field = m_tree->findChild<QComboBox *>(QStringLiteral("conditionField") +
                                                         pathName(*focusPart)))
            field->setFocus();
    }
}

QWidget *ConditionTreeEditor::buildGroup(const config::RouteCondition &group,
                                         const ConditionPath &path, QWidget *parent)
{
    const bool top = path.isEmpty();
    const QString name = pathName(path);
    auto *box = new QFrame(parent);
    auto *layout = new QVBoxLayout(box);
    layout->setSpacing(4);
    if (top) {
        box->setObjectName(QStringLiteral("conditionTree"));
        layout->setContentsMargins(0, 0, 0, 0);
    } else {
        box->setObjectName(QStringLiteral("conditionGroup") + name);
        box->setProperty("conditionGroup", true);
        layout->setContentsMargins(kNestedIndentPx, 4, 0, 4);
    }

    auto *header = new QHBoxLayout;
    if (top) {
        QLabel *match = makeLabel(TextRole::Caption, box);
        match->setText(tr("Match"));
        header->addWidget(match);
    }
    auto *kind = new QComboBox(box);
    kind->setObjectName(top ? QStringLiteral("conditionMatchCombo")
                            : QStringLiteral("conditionGroupKind") + name);
    for (Kind choice : kGroupKinds) {
        kind->addItem(groupKindText(choice), int(choice));
        if (choice == group.kind)
            kind->setCurrentIndex(kind->count() - 1);
    }
    kind->setToolTip(tr("\"None of the conditions\" matches a request that meets none of them"));
    header->addWidget(kind, 1);
    if (!top) {
        auto *remove = new QToolButton(box);
        remove->setObjectName(QStringLiteral("removeGroup") + name);
        remove->setText(QStringLiteral("✕"));
        remove->setToolTip(tr("Remove this group and everything in it"));
        header->addWidget(remove);
        connect(remove, &QToolButton::clicked, this, [this, path] { removePart(path); });
    }
    layout->addLayout(header);
    connect(kind, &QComboBox::currentIndexChanged, this,
            [this, path, kind] { setGroupKind(path, Kind(kind->currentData().toInt())); });

    for (int i = 0; i < group.children.size(); ++i) {
        const config::RouteCondition &child = group.children[i];
        const ConditionPath childPath = ConditionPath(path) << i;
        layout->addWidget(child.kind == Kind::Compare ? buildComparison(child, childPath, box)
                                                      : buildGroup(child, childPath, box));
    }

    auto *footer = new QHBoxLayout;
    auto *addComparisonButton = new QPushButton(tr("Add condition"), box);
    auto *addGroupButton = new QPushButton(tr("Add group"), box);
    addComparisonButton->setObjectName(top ? QStringLiteral("addConditionButton")
                                           : QStringLiteral("addCondition") + name);
    addGroupButton->setObjectName(top ? QStringLiteral("addGroupButton")
                                      : QStringLiteral("addGroup") + name);
    addGroupButton->setToolTip(
        tr("Add a nested group, to mix \"all of\" and \"any of\" in one condition"));
    for (QPushButton *button : {addComparisonButton, addGroupButton}) {
        button->setProperty("flat", true);
        button->setCursor(Qt::PointingHandCursor);
        footer->addWidget(button);
    }
    footer->addStretch(1);
    layout->addLayout(footer);
    connect(addComparisonButton, &QPushButton::clicked, this,
            [this, path] { addComparison(path); });
    connect(addGroupButton, &QPushButton::clicked, this, [this, path] { addGroup(path); });
    return box;
}

QWidget *ConditionTreeEditor::buildComparison(const config::RouteCondition &comparison,
                                              const ConditionPath &path, QWidget *parent)
{
    const QString name = pathName(path);
    auto *row = new QWidget(parent);
    row->setObjectName(QStringLiteral("condition") + name);
    auto *layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *field = new QComboBox(row);
    field->setObjectName(QStringLiteral("conditionField") + name);
    field->setEditable(true);
    field->setInsertPolicy(QComboBox::NoInsert);
    field->addItems(config::fieldNames());
    field->setCurrentText(comparison.field);
    auto *op = new QComboBox(row);
    op->setObjectName(QStringLiteral("conditionOperator") + name);
    op->addItems(config::operatorNames());
    op->setCurrentText(config::operatorName(comparison.op));
    auto *value = new QLineEdit(row);
    value->setObjectName(QStringLiteral("conditionValue") + name);
    value->setText(comparison.values.join(QStringLiteral(", ")));
    value->setPlaceholderText(tr("value; for `in`: a, b, c"));
    auto *remove = new QToolButton(row);
    remove->setObjectName(QStringLiteral("removeCondition") + name);
    remove->setText(QStringLiteral("✕"));
    remove->setToolTip(tr("Remove this condition"));
    // Narrow minimums: nested rows must still fit a narrow card; the value takes what is left.
    field->setMinimumContentsLength(8);
    field->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    op->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    value->setMinimumWidth(60);
    layout->addWidget(field, 4);
    layout->addWidget(op, 0);
    layout->addWidget(value, 3);
    layout->addWidget(remove);

    const auto edited = [this, path, field, op, value] {
        comparisonEdited(path, field, op, value);
    };
    connect(field, &QComboBox::currentTextChanged, this, edited);
    connect(op, &QComboBox::currentTextChanged, this, edited);
    connect(value, &QLineEdit::textChanged, this, edited);
    connect(remove, &QToolButton::clicked, this, [this, path] { removePart(path); });
    return row;
}

void ConditionTreeEditor::comparisonEdited(const ConditionPath &path, const QComboBox *field,
                                           const QComboBox *op, const QLineEdit *value)
{
    config::RouteCondition *node = nodeAt(path);
    if (!node || node->kind != Kind::Compare)
        return;
    node->field = field->currentText().trimmed();
    node->op = config::operatorFromName(op->currentText()).value_or(config::ConditionOperator::Eq);
    node->values = node->op == config::ConditionOperator::In ? splitList(value->text())
                                                             : QStringList{value->text().trimmed()};
    Q_EMIT conditionEdited();
}

void ConditionTreeEditor::changeEvent(QEvent *event)
{
    // Texts are set as the widgets are built: rebuilding from the value retranslates them all.
    if (event->type() == QEvent::LanguageChange)
        rebuild();
    QWidget::changeEvent(event);
}

} // namespace switchyard::ui
