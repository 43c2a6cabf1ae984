#include "ui/routes/rule_editor_panel.h"

#include "config/rule_validation.h"
#include "ui/common/widget_helpers.h"
#include "ui/routes/condition_editor.h"
#include "ui/routes/split_editor.h"

#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QVBoxLayout>

namespace switchyard::ui {

namespace {

// The target kind combo box: the three kinds of config::RouteTarget, then a canary split.
constexpr config::RouteTarget::Kind kTargetKinds[] = {config::RouteTarget::Kind::Provider,
                                                      config::RouteTarget::Kind::Pool,
                                                      config::RouteTarget::Kind::Tier};
constexpr int kSplitIndex = 3;

} // namespace

RuleEditorPanel::RuleEditorPanel(std::shared_ptr<const config::Config> snapshot, QWidget *parent)
    : QFrame(parent), m_snapshot(std::move(snapshot))
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
    grid->addWidget(m_nameLabel, 0, 0);
    grid->addWidget(m_nameEdit, 0, 1);
    grid->addWidget(m_priorityLabel, 1, 0);
    grid->addWidget(m_prioritySpin, 1, 1);
    grid->setColumnStretch(1, 1);
    layout->addLayout(grid);

    m_conditionHeader = makeLabel(TextRole::ColumnHeader, m_editorForm);
    layout->addWidget(m_conditionHeader);
    m_conditions = new ConditionTreeEditor(m_editorForm);
    layout->addWidget(m_conditions);
    layout->addSpacing(6);

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
    m_split = new SplitEditor(m_snapshot, m_editorForm);
    m_split->hide();
    layout->addWidget(m_split);

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
    // Rows shrink to the card's width down to their fields' minimums; beyond that (deep groups,
    // a narrow window, longer words in a translation) the form scrolls sideways rather than cut
    // fields off.
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    scroll->setWidget(m_editorForm);
    m_editorForm->setAutoFillBackground(false);
    scroll->viewport()->setAutoFillBackground(false);
    outer->addWidget(scroll, 1);

    connect(m_nameEdit, &QLineEdit::textEdited, this, &RuleEditorPanel::formEdited);
    connect(m_prioritySpin, &QSpinBox::valueChanged, this, &RuleEditorPanel::formEdited);
    connect(m_conditions, &ConditionTreeEditor::conditionEdited, this,
            &RuleEditorPanel::formEdited);
    connect(m_targetKind, &QComboBox::currentIndexChanged, this, [this] {
        if (m_loadingForm)
            return;
        m_loadingForm = true;
        showTargetKind(m_targetKind->currentIndex());
        if (m_targetKind->currentIndex() == kSplitIndex && m_formBase.split.isEmpty())
            m_split->setSplit(firstSplit(), m_formBase.splitKey);
        m_targetValue->setCurrentIndex(0);
        m_loadingForm = false;
        formEdited();
    });
    connect(m_split, &SplitEditor::splitEdited, this, &RuleEditorPanel::formEdited);
    connect(m_targetValue, &QComboBox::currentTextChanged, this, &RuleEditorPanel::formEdited);
    retranslateUi();
    showRule(std::nullopt);
}

void RuleEditorPanel::retranslateUi()
{
    m_title->setText(tr("Edit rule"));
    m_nameLabel->setText(tr("Name"));
    m_priorityLabel->setText(tr("Priority"));
    m_conditionHeader->setText(tr("Conditions (field, operator, value)"));
    m_targetLabel->setText(tr("Target"));
    m_targetKind->setItemText(0, tr("Provider"));
    m_targetKind->setItemText(1, tr("Pool"));
    m_targetKind->setItemText(2, tr("Tier"));
    m_targetKind->setItemText(3, tr("Canary split"));
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
    m_editorForm->setEnabled(rule.has_value());
    if (!rule) {
        m_formBase = {};
        m_nameEdit->clear();
        m_prioritySpin->setValue(0);
        m_conditions->setCondition(std::nullopt);
        m_loadingForm = false;
        return;
    }
    m_formBase = *rule;
    m_nameEdit->setText(m_formBase.name);
    m_prioritySpin->setValue(m_formBase.priority);
    m_conditions->setCondition(m_formBase.when);

    int kind = 2;
    if (!m_formBase.split.isEmpty())
        kind = kSplitIndex;
    else if (m_formBase.to.kind == config::RouteTarget::Kind::Provider)
        kind = 0;
    else if (m_formBase.to.kind == config::RouteTarget::Kind::Pool)
        kind = 1;
    m_targetKind->setCurrentIndex(kind);
    showTargetKind(kind);
    m_targetValue->setCurrentText(targetText(m_formBase.to));
    m_split->setSplit(m_formBase.split, m_formBase.splitKey);
    m_loadingForm = false;
}

void RuleEditorPanel::showTargetKind(int index)
{
    const bool split = index == kSplitIndex;
    if (!split)
        fillTargetChoices(m_targetValue, kTargetKinds[index], *m_snapshot);
    m_targetValue->setVisible(!split);
    m_split->setVisible(split);
}

QList<config::SplitBranch> RuleEditorPanel::firstSplit() const
{
    // Turning a plain target into a split: all traffic stays on the current target, and the
    // second branch, at weight 0, names another provider for the person to raise.
    config::SplitBranch first;
    first.target = m_formBase.to;
    first.weight = 100;
    config::SplitBranch second;
    second.target.kind = config::RouteTarget::Kind::Provider;
    for (const config::ProviderConfig &provider : m_snapshot->providers) {
        if (provider.id != first.target.label()) {
            second.target.names = {provider.id};
            break;
        }
    }
    if (second.target.names.isEmpty())
        second.target = first.target;
    return {first, second};
}

config::RouteRule RuleEditorPanel::ruleFromForm() const
{
    config::RouteRule rule = m_formBase;
    rule.name = m_nameEdit->text().trimmed();
    rule.priority = m_prioritySpin->value();
    rule.when = m_conditions->condition();
    const int kind = m_targetKind->currentIndex();
    if (kind == kSplitIndex) {
        rule.split = m_split->branches();
        rule.splitKey = m_split->key();
    } else {
        rule.split.clear();
        rule.to = targetFromText(kTargetKinds[kind], m_targetValue->currentText(), rule.to);
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
