#include "rule_editor_panel.h"

#include "route_rules_model.h"
#include "routing/rule_validation.h"
#include "widget_helpers.h"

#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace switchyard::ui {

namespace {

QStringList splitList(const QString &text)
{
    QStringList items;
    for (const QString &item : text.split(u',', Qt::SkipEmptyParts)) {
        const QString trimmed = item.trimmed();
        if (!trimmed.isEmpty())
            items.append(trimmed);
    }
    return items;
}

} // namespace

RuleEditorPanel::RuleEditorPanel(const config::Config &config, QWidget *parent)
    : QFrame(parent), m_config(config)
{
    setObjectName(QStringLiteral("routeEditorCard"));
    setProperty("card", true);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(16, 14, 16, 14);
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    outer->addWidget(m_title);

    m_editorForm = new QWidget(this);
    auto *layout = new QVBoxLayout(m_editorForm);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *grid = new QGridLayout;
    grid->setHorizontalSpacing(10);
    m_nameLabel = makeLabel(TextRole::Caption, m_editorForm);
    m_nameEdit = new QLineEdit(m_editorForm);
    m_nameEdit->setObjectName(QStringLiteral("ruleNameEdit"));
    m_priorityLabel = makeLabel(TextRole::Caption, m_editorForm);
    m_prioritySpin = new QSpinBox(m_editorForm);
    m_prioritySpin->setObjectName(QStringLiteral("rulePrioritySpin"));
    m_prioritySpin->setRange(-1000000, 1000000);
    m_matchLabel = makeLabel(TextRole::Caption, m_editorForm);
    m_matchCombo = new QComboBox(m_editorForm);
    m_matchCombo->setObjectName(QStringLiteral("conditionMatchCombo"));
    m_matchCombo->addItems({QString(), QString()}); // texts set by retranslateUi
    grid->addWidget(m_nameLabel, 0, 0);
    grid->addWidget(m_nameEdit, 0, 1);
    grid->addWidget(m_priorityLabel, 1, 0);
    grid->addWidget(m_prioritySpin, 1, 1);
    grid->addWidget(m_matchLabel, 2, 0);
    grid->addWidget(m_matchCombo, 2, 1);
    grid->setColumnStretch(1, 1);
    layout->addLayout(grid);

    m_conditionHeader = makeLabel(TextRole::ColumnHeader, m_editorForm);
    layout->addWidget(m_conditionHeader);
    m_conditionLayout = new QVBoxLayout;
    m_conditionLayout->setSpacing(4);
    layout->addLayout(m_conditionLayout);
    m_nestedLabel = makeLabel(TextRole::Hint, m_editorForm);
    m_nestedLabel->setObjectName(QStringLiteral("nestedConditionLabel"));
    m_nestedLabel->setWordWrap(true);
    m_nestedLabel->hide();
    layout->addWidget(m_nestedLabel);
    m_addConditionButton = new QPushButton(m_editorForm);
    m_addConditionButton->setObjectName(QStringLiteral("addConditionButton"));
    auto *addRow = new QHBoxLayout;
    addRow->addWidget(m_addConditionButton);
    addRow->addStretch(1);
    layout->addLayout(addRow);

    auto *targetGrid = new QGridLayout;
    targetGrid->setHorizontalSpacing(10);
    m_targetLabel = makeLabel(TextRole::ColumnHeader, m_editorForm);
    m_targetKind = new QComboBox(m_editorForm);
    m_targetKind->setObjectName(QStringLiteral("targetKindCombo"));
    m_targetKind->addItems({QString(), QString(), QString(), QString()});
    m_targetValue = new QComboBox(m_editorForm);
    m_targetValue->setObjectName(QStringLiteral("targetValueCombo"));
    m_targetValue->setEditable(true);
    m_targetValue->setInsertPolicy(QComboBox::NoInsert);
    targetGrid->addWidget(m_targetLabel, 0, 0, 1, 2);
    targetGrid->addWidget(m_targetKind, 1, 0);
    targetGrid->addWidget(m_targetValue, 1, 1);
    targetGrid->setColumnStretch(1, 1);
    layout->addLayout(targetGrid);

    m_problemsLabel = makeLabel(TextRole::Hint, m_editorForm);
    m_problemsLabel->setObjectName(QStringLiteral("ruleProblems"));
    setTone(m_problemsLabel, Tone::Bad);
    m_problemsLabel->setWordWrap(true);
    m_problemsLabel->setTextFormat(Qt::PlainText);
    layout->addWidget(m_problemsLabel);
    layout->addStretch(1);

    auto *scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(m_editorForm);
    m_editorForm->setAutoFillBackground(false);
    scroll->viewport()->setAutoFillBackground(false);
    outer->addWidget(scroll, 1);

    connect(m_nameEdit, &QLineEdit::textEdited, this, &RuleEditorPanel::formEdited);
    connect(m_prioritySpin, &QSpinBox::valueChanged, this, &RuleEditorPanel::formEdited);
    connect(m_matchCombo, &QComboBox::currentIndexChanged, this, &RuleEditorPanel::formEdited);
    connect(m_addConditionButton, &QPushButton::clicked, this, [this] {
        config::RouteCondition condition;
        condition.field = QStringLiteral("model");
        addConditionRow(condition);
        formEdited();
    });
    connect(m_targetKind, &QComboBox::currentIndexChanged, this, [this] {
        if (m_loadingForm)
            return;
        m_loadingForm = true;
        fillTargetChoices();
        m_targetValue->setCurrentIndex(0);
        m_loadingForm = false;
        formEdited();
    });
    connect(m_targetValue, &QComboBox::currentTextChanged, this, &RuleEditorPanel::formEdited);
    retranslateUi();
    showRule(std::nullopt);
}

void RuleEditorPanel::retranslateUi()
{
    m_title->setText(tr("Edit rule"));
    m_nameLabel->setText(tr("Name"));
    m_priorityLabel->setText(tr("Priority"));
    m_matchLabel->setText(tr("Match"));
    m_matchCombo->setItemText(0, tr("all of the conditions"));
    m_matchCombo->setItemText(1, tr("any of the conditions"));
    m_conditionHeader->setText(tr("Conditions (field, operator, value)"));
    if (m_hasRule && !m_loadingForm)
        showRule(m_formBase);
    m_addConditionButton->setText(tr("Add condition"));
    m_targetLabel->setText(tr("Target"));
    m_targetKind->setItemText(0, tr("Provider"));
    m_targetKind->setItemText(1, tr("Pool"));
    m_targetKind->setItemText(2, tr("Tier"));
    m_targetKind->setItemText(3, tr("Canary split"));
    for (const ConditionRow &row : std::as_const(m_conditionRows)) {
        row.remove->setToolTip(tr("Remove this condition"));
        row.value->setPlaceholderText(tr("value; for `in`: a, b, c"));
    }
}

void RuleEditorPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QFrame::changeEvent(event);
}

void RuleEditorPanel::setProblems(const QStringList &problems)
{
    m_problemsLabel->setText(problems.join(u'\n'));
    m_problemsLabel->setVisible(!problems.isEmpty());
}

void RuleEditorPanel::focusName()
{
    m_nameEdit->setFocus();
    m_nameEdit->selectAll();
}

void RuleEditorPanel::showRule(const std::optional<config::RouteRule> &rule)
{
    m_loadingForm = true;
    m_hasRule = rule.has_value();
    clearConditionRows();
    m_editorForm->setEnabled(rule.has_value());
    m_nestedCondition = false;
    if (!rule) {
        m_nameEdit->clear();
        m_prioritySpin->setValue(0);
        m_nestedLabel->hide();
        m_loadingForm = false;
        return;
    }
    m_formBase = *rule;
    m_nameEdit->setText(m_formBase.name);
    m_prioritySpin->setValue(m_formBase.priority);
    m_matchCombo->setCurrentIndex(0);
    if (m_formBase.when) {
        const config::RouteCondition &when = *m_formBase.when;
        const auto allCompare = [](const QList<config::RouteCondition> &children) {
            return std::all_of(children.begin(), children.end(), [](const auto &child) {
                return child.kind == config::RouteCondition::Kind::Compare;
            });
        };
        if (when.kind == config::RouteCondition::Kind::Compare) {
            addConditionRow(when);
        } else if ((when.kind == config::RouteCondition::Kind::All ||
                    when.kind == config::RouteCondition::Kind::Any) &&
                   allCompare(when.children)) {
            m_matchCombo->setCurrentIndex(when.kind == config::RouteCondition::Kind::Any ? 1 : 0);
            for (const config::RouteCondition &child : when.children)
                addConditionRow(child);
        } else {
            m_nestedCondition = true;
        }
    }
    m_nestedLabel->setVisible(m_nestedCondition);
    m_nestedLabel->setText(m_nestedCondition
                               ? conditionSummary(m_formBase.when) + QStringLiteral("\n\n") +
                                     tr("This rule's condition has nested groups, shown above as "
                                        "text. Edit it in the configuration file; the rest of "
                                        "the rule can be edited here.")
                               : QString());
    m_matchCombo->setEnabled(!m_nestedCondition);
    m_addConditionButton->setEnabled(!m_nestedCondition);

    int kind = 2;
    if (!m_formBase.split.isEmpty())
        kind = 3;
    else if (m_formBase.to.kind == config::RouteTarget::Kind::Provider)
        kind = 0;
    else if (m_formBase.to.kind == config::RouteTarget::Kind::Pool)
        kind = 1;
    m_targetKind->setCurrentIndex(kind);
    fillTargetChoices();
    m_targetValue->setCurrentText(kind == 3   ? targetSummary(m_formBase)
                                  : kind == 1 ? m_formBase.to.names.join(QStringLiteral(", "))
                                              : m_formBase.to.names.value(0));
    m_loadingForm = false;
}

RuleEditorPanel::ConditionRow &
RuleEditorPanel::addConditionRow(const config::RouteCondition &condition)
{
    const int index = int(m_conditionRows.size());
    ConditionRow row;
    row.row = new QWidget(m_editorForm);
    auto *layout = new QHBoxLayout(row.row);
    layout->setContentsMargins(0, 0, 0, 0);
    row.field = new QComboBox(row.row);
    row.field->setObjectName(QStringLiteral("conditionField%1").arg(index));
    row.field->setEditable(true);
    row.field->setInsertPolicy(QComboBox::NoInsert);
    row.field->addItems(routing::fieldNames());
    row.field->setCurrentText(condition.field);
    row.op = new QComboBox(row.row);
    row.op->setObjectName(QStringLiteral("conditionOperator%1").arg(index));
    row.op->addItems(routing::operatorNames());
    row.op->setCurrentText(routing::operatorName(condition.op));
    row.value = new QLineEdit(row.row);
    row.value->setObjectName(QStringLiteral("conditionValue%1").arg(index));
    row.value->setText(condition.values.join(QStringLiteral(", ")));
    row.value->setPlaceholderText(tr("value; for `in`: a, b, c"));
    row.remove = new QToolButton(row.row);
    row.remove->setObjectName(QStringLiteral("removeCondition%1").arg(index));
    row.remove->setText(QStringLiteral("✕"));
    row.remove->setToolTip(tr("Remove this condition"));
    layout->addWidget(row.field, 3);
    layout->addWidget(row.op, 2);
    layout->addWidget(row.value, 4);
    layout->addWidget(row.remove);
    m_conditionLayout->addWidget(row.row);

    QWidget *rowWidget = row.row;
    connect(row.field, &QComboBox::currentTextChanged, this, &RuleEditorPanel::formEdited);
    connect(row.op, &QComboBox::currentTextChanged, this, &RuleEditorPanel::formEdited);
    connect(row.value, &QLineEdit::textChanged, this, &RuleEditorPanel::formEdited);
    connect(row.remove, &QToolButton::clicked, this, [this, rowWidget] {
        for (qsizetype i = 0; i < m_conditionRows.size(); ++i) {
            if (m_conditionRows[i].row == rowWidget) {
                m_conditionRows.removeAt(i);
                retire(rowWidget);
                break;
            }
        }
        formEdited();
    });
    m_conditionRows.append(row);
    return m_conditionRows.last();
}

void RuleEditorPanel::clearConditionRows()
{
    for (const ConditionRow &row : std::as_const(m_conditionRows))
        retire(row.row);
    m_conditionRows.clear();
}

void RuleEditorPanel::fillTargetChoices()
{
    const QString current = m_targetValue->currentText();
    m_targetValue->clear();
    switch (m_targetKind->currentIndex()) {
    case 0:
    case 1:
        for (const config::ProviderConfig &provider : m_config.providers)
            m_targetValue->addItem(provider.id);
        break;
    case 2:
        m_targetValue->addItem(QStringLiteral("auto"));
        for (const config::TierConfig &tier : m_config.routing.tiers)
            m_targetValue->addItem(tier.name);
        break;
    default:
        break;
    }
    // A split is edited live with the canary sliders, not here.
    m_targetValue->setEnabled(m_targetKind->currentIndex() != 3);
    m_targetValue->setCurrentText(current);
}

config::RouteRule RuleEditorPanel::ruleFromForm() const
{
    config::RouteRule rule = m_formBase;
    rule.name = m_nameEdit->text().trimmed();
    rule.priority = m_prioritySpin->value();
    if (!m_nestedCondition) {
        QList<config::RouteCondition> conditions;
        for (const ConditionRow &row : m_conditionRows) {
            config::RouteCondition condition;
            condition.field = row.field->currentText().trimmed();
            condition.op = routing::operatorFromName(row.op->currentText())
                               .value_or(config::ConditionOperator::Eq);
            condition.values = condition.op == config::ConditionOperator::In
                                   ? splitList(row.value->text())
                                   : QStringList{row.value->text().trimmed()};
            conditions.append(condition);
        }
        if (conditions.isEmpty()) {
            rule.when.reset();
        } else if (conditions.size() == 1) {
            rule.when = conditions.first();
        } else {
            config::RouteCondition group;
            group.kind = m_matchCombo->currentIndex() == 1 ? config::RouteCondition::Kind::Any
                                                           : config::RouteCondition::Kind::All;
            group.children = conditions;
            rule.when = group;
        }
    }
    const int kind = m_targetKind->currentIndex();
    if (kind == 3) {
        if (m_formBase.split.isEmpty()) {
            // Turning a plain target into a split: both branches start on the current target,
            // all traffic on the first, so the person can then point the second elsewhere.
            config::SplitBranch first;
            first.target = m_formBase.to;
            first.weight = 100;
            config::SplitBranch second = first;
            second.weight = 0;
            rule.split = {first, second};
        }
        return rule;
    }
    rule.split.clear();
    rule.to = {};
    const QString value = m_targetValue->currentText().trimmed();
    if (kind == 0) {
        rule.to.kind = config::RouteTarget::Kind::Provider;
        rule.to.names = {value};
    } else if (kind == 1) {
        rule.to.kind = config::RouteTarget::Kind::Pool;
        rule.to.names = splitList(value);
    } else {
        rule.to.kind = config::RouteTarget::Kind::Tier;
        rule.to.names = {value};
    }
    return rule;
}

void RuleEditorPanel::formEdited()
{
    if (m_loadingForm || !m_hasRule)
        return;
    m_formBase = ruleFromForm();
    Q_EMIT ruleEdited(m_formBase);
}

} // namespace switchyard::ui
