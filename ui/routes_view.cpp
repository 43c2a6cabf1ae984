#include "routes_view.h"

#include "engine_bridge.h"
#include "route_rules_model.h"
#include "routing/rule_validation.h"
#include "widget_helpers.h"

#include <QComboBox>
#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QStyle>
#include <QTableView>
#include <QTextBrowser>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>

namespace switchyard::ui {

namespace {

// Long enough to coalesce a slider drag into a few engine calls, short enough to feel live.
constexpr int kCanaryDebounceMs = 150;
constexpr int kLongDocumentParagraphs = 400;

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

// "name: value" per line; lines without a colon are ignored.
EngineBridge::HeaderList parseHeaders(const QString &text)
{
    EngineBridge::HeaderList headers;
    for (const QString &line : text.split(u'\n', Qt::SkipEmptyParts)) {
        const qsizetype colon = line.indexOf(u':');
        if (colon <= 0)
            continue;
        headers.append(
            {line.left(colon).trimmed().toUtf8(), line.mid(colon + 1).trimmed().toUtf8()});
    }
    return headers;
}

QString cascadeStepText(routing::CascadeStep step)
{
    switch (step) {
    case routing::CascadeStep::NotUsed:
        return RoutesView::tr("not used");
    case routing::CascadeStep::ExplicitHint:
        return RoutesView::tr("1, explicit hint");
    case routing::CascadeStep::TaskTag:
        return RoutesView::tr("2, task tag");
    case routing::CascadeStep::InputTokens:
        return RoutesView::tr("3, input tokens");
    case routing::CascadeStep::Complexity:
        return RoutesView::tr("4, complexity score");
    case routing::CascadeStep::Default:
        return RoutesView::tr("5, default");
    }
    return {};
}

QString roleText(routing::CandidateRole role)
{
    switch (role) {
    case routing::CandidateRole::Primary:
        return RoutesView::tr("primary");
    case routing::CandidateRole::CrossTier:
        return RoutesView::tr("cross-tier failover");
    case routing::CandidateRole::FallbackChain:
        return RoutesView::tr("fallback chain");
    case routing::CandidateRole::LighterModel:
        return RoutesView::tr("lighter model");
    }
    return {};
}

int percentOf(int weight, int total)
{
    return total > 0 ? int(qRound(100.0 * weight / total)) : 0;
}

} // namespace

RoutesView::RoutesView(EngineBridge &bridge, QWidget *parent)
    : QWidget(parent), m_bridge(bridge), m_config(bridge.config()),
      m_model(new RouteRulesModel(this))
{
    setObjectName(QStringLiteral("routesView"));
    m_canaryDebounce.setSingleShot(true);
    m_canaryDebounce.setInterval(kCanaryDebounceMs);
    connect(&m_canaryDebounce, &QTimer::timeout, this, &RoutesView::sendCanaryWeights);

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(16, 16, 16, 12);
    layout->setSpacing(12);
    auto *left = new QVBoxLayout;
    left->setSpacing(12);
    left->addWidget(buildRulesCard(), 3);
    left->addWidget(buildCanaryCard(), 2);
    layout->addLayout(left, 5);
    layout->addWidget(buildEditorCard(), 4);
    layout->addWidget(buildDryRunCard(), 6);

    connect(&m_bridge, &EngineBridge::routesChanged, this, &RoutesView::onRoutesChanged);
    connect(&m_bridge, &EngineBridge::routesApplied, this, &RoutesView::onRoutesApplied);
    connect(&m_bridge, &EngineBridge::routeExplained, this, &RoutesView::onRouteExplained);

    retranslateUi();
    m_live = m_bridge.routesState();
    loadLiveRules();
    rebuildCanary(m_live.canarySplits);
    loadPreset(Preset::SimpleChat);
}

QWidget *RoutesView::buildRulesCard()
{
    QFrame *card = makeCard(QStringLiteral("routesRulesCard"));
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(16, 14, 16, 14);
    m_rulesTitle = makeLabel(TextRole::SectionTitle, card);
    m_rulesTitle->setFont(sectionTitleFont(font()));
    m_rulesHint = makeLabel(TextRole::SectionHint, card);
    m_rulesHint->setWordWrap(true);
    layout->addWidget(m_rulesTitle);
    layout->addWidget(m_rulesHint);

    m_rulesView = new QTableView(card);
    m_rulesView->setObjectName(QStringLiteral("routeRules"));
    m_rulesView->setModel(m_model);
    m_rulesView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_rulesView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_rulesView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_rulesView->setWordWrap(false);
    m_rulesView->verticalHeader()->hide();
    m_rulesView->setShowGrid(false);
    m_rulesView->setAlternatingRowColors(true);
    // Summaries can be long: they share the width and elide; the tooltip has the whole text.
    QHeaderView *header = m_rulesView->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(RouteRulesModel::ConditionColumn, QHeaderView::Stretch);
    header->setSectionResizeMode(RouteRulesModel::TargetColumn, QHeaderView::Stretch);
    m_rulesView->setTextElideMode(Qt::ElideRight);
    layout->addWidget(m_rulesView, 1);
    connect(m_rulesView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) { showRule(current.row()); });

    auto *buttons = new QHBoxLayout;
    m_addButton = new QPushButton(card);
    m_addButton->setObjectName(QStringLiteral("addRuleButton"));
    m_deleteButton = new QPushButton(card);
    m_deleteButton->setObjectName(QStringLiteral("deleteRuleButton"));
    m_revertButton = new QPushButton(card);
    m_revertButton->setObjectName(QStringLiteral("revertRulesButton"));
    m_applyButton = new QPushButton(card);
    m_applyButton->setObjectName(QStringLiteral("applyRulesButton"));
    m_applyButton->setDefault(true);
    buttons->addWidget(m_addButton);
    buttons->addWidget(m_deleteButton);
    buttons->addStretch(1);
    buttons->addWidget(m_revertButton);
    buttons->addWidget(m_applyButton);
    layout->addLayout(buttons);
    m_applyResult = makeLabel(TextRole::Hint, card);
    m_applyResult->setObjectName(QStringLiteral("applyResult"));
    m_applyResult->setWordWrap(true);
    layout->addWidget(m_applyResult);

    connect(m_addButton, &QPushButton::clicked, this, &RoutesView::addRule);
    connect(m_deleteButton, &QPushButton::clicked, this, &RoutesView::deleteRule);
    connect(m_revertButton, &QPushButton::clicked, this, [this] {
        m_applyResult->clear();
        loadLiveRules();
    });
    connect(m_applyButton, &QPushButton::clicked, this, &RoutesView::applyRules);
    return card;
}

QWidget *RoutesView::buildEditorCard()
{
    QFrame *card = makeCard(QStringLiteral("routeEditorCard"));
    auto *outer = new QVBoxLayout(card);
    outer->setContentsMargins(16, 14, 16, 14);
    m_editorTitle = makeLabel(TextRole::SectionTitle, card);
    m_editorTitle->setFont(sectionTitleFont(font()));
    outer->addWidget(m_editorTitle);

    m_editorForm = new QWidget(card);
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

    auto *scroll = new QScrollArea(card);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(m_editorForm);
    m_editorForm->setAutoFillBackground(false);
    scroll->viewport()->setAutoFillBackground(false);
    outer->addWidget(scroll, 1);

    connect(m_nameEdit, &QLineEdit::textEdited, this, &RoutesView::formEdited);
    connect(m_prioritySpin, &QSpinBox::valueChanged, this, &RoutesView::formEdited);
    connect(m_matchCombo, &QComboBox::currentIndexChanged, this, &RoutesView::formEdited);
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
    connect(m_targetValue, &QComboBox::currentTextChanged, this, &RoutesView::formEdited);
    return card;
}

QWidget *RoutesView::buildDryRunCard()
{
    QFrame *card = makeCard(QStringLiteral("dryRunCard"));
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(16, 14, 16, 14);
    m_dryRunTitle = makeLabel(TextRole::SectionTitle, card);
    m_dryRunTitle->setFont(sectionTitleFont(font()));
    layout->addWidget(m_dryRunTitle);

    auto *presetRow = new QHBoxLayout;
    m_presetLabel = makeLabel(TextRole::Caption, card);
    m_presetCombo = new QComboBox(card);
    m_presetCombo->setObjectName(QStringLiteral("dryRunPresetCombo"));
    m_presetCombo->addItems({QString(), QString(), QString(), QString(), QString()});
    m_runButton = new QPushButton(card);
    m_runButton->setObjectName(QStringLiteral("dryRunButton"));
    presetRow->addWidget(m_presetLabel);
    presetRow->addWidget(m_presetCombo, 1);
    presetRow->addWidget(m_runButton);
    layout->addLayout(presetRow);

    m_bodyLabel = makeLabel(TextRole::Caption, card);
    m_bodyEdit = new QPlainTextEdit(card);
    m_bodyEdit->setObjectName(QStringLiteral("dryRunBody"));
    m_bodyEdit->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_headersLabel = makeLabel(TextRole::Caption, card);
    m_headersEdit = new QPlainTextEdit(card);
    m_headersEdit->setObjectName(QStringLiteral("dryRunHeaders"));
    QFont mono = font();
    mono.setFamily(QStringLiteral("monospace"));
    mono.setStyleHint(QFont::Monospace);
    m_bodyEdit->setFont(mono);
    m_headersEdit->setFont(mono);
    layout->addWidget(m_bodyLabel);
    layout->addWidget(m_bodyEdit, 2);
    layout->addWidget(m_headersLabel);
    layout->addWidget(m_headersEdit, 1);

    auto *results = new QGridLayout;
    m_liveTitle = makeLabel(TextRole::ColumnHeader, card);
    m_editedTitle = makeLabel(TextRole::ColumnHeader, card);
    m_liveResult = new QTextBrowser(card);
    m_liveResult->setObjectName(QStringLiteral("dryRunLiveResult"));
    m_editedResult = new QTextBrowser(card);
    m_editedResult->setObjectName(QStringLiteral("dryRunEditedResult"));
    for (QTextBrowser *browser : {m_liveResult, m_editedResult}) {
        browser->setLineWrapMode(QTextEdit::WidgetWidth);
        browser->setFrameShape(QFrame::StyledPanel);
    }
    results->addWidget(m_liveTitle, 0, 0);
    results->addWidget(m_editedTitle, 0, 1);
    results->addWidget(m_liveResult, 1, 0);
    results->addWidget(m_editedResult, 1, 1);
    layout->addLayout(results, 4);

    connect(m_presetCombo, &QComboBox::activated, this,
            [this](int index) { loadPreset(Preset(index)); });
    connect(m_runButton, &QPushButton::clicked, this, &RoutesView::runDryRun);
    return card;
}

QWidget *RoutesView::buildCanaryCard()
{
    QFrame *card = makeCard(QStringLiteral("canaryCard"));
    auto *outer = new QVBoxLayout(card);
    outer->setContentsMargins(16, 14, 16, 14);
    m_canaryTitle = makeLabel(TextRole::SectionTitle, card);
    m_canaryTitle->setFont(sectionTitleFont(font()));
    outer->addWidget(m_canaryTitle);
    m_canaryEmpty = makeLabel(TextRole::Hint, card);
    m_canaryEmpty->setWordWrap(true);
    outer->addWidget(m_canaryEmpty);
    auto *holder = new QWidget(card);
    m_canaryLayout = new QVBoxLayout(holder);
    m_canaryLayout->setContentsMargins(0, 0, 0, 0);
    m_canaryLayout->addStretch(1);
    auto *scroll = new QScrollArea(card);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(holder);
    holder->setAutoFillBackground(false);
    scroll->viewport()->setAutoFillBackground(false);
    outer->addWidget(scroll, 1);
    return card;
}

void RoutesView::retranslateUi()
{
    m_rulesTitle->setText(tr("Rules"));
    m_rulesHint->setText(tr("In priority order: the first rule that matches a request wins."));
    m_addButton->setText(tr("Add rule"));
    m_deleteButton->setText(tr("Delete rule"));
    m_revertButton->setText(tr("Revert"));
    m_applyButton->setText(tr("Apply"));

    m_editorTitle->setText(tr("Edit rule"));
    m_nameLabel->setText(tr("Name"));
    m_priorityLabel->setText(tr("Priority"));
    m_matchLabel->setText(tr("Match"));
    m_matchCombo->setItemText(0, tr("all of the conditions"));
    m_matchCombo->setItemText(1, tr("any of the conditions"));
    m_conditionHeader->setText(tr("Conditions (field, operator, value)"));
    if (m_currentRow >= 0 && !m_loadingForm)
        showRule(m_currentRow);
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

    m_dryRunTitle->setText(tr("Dry run"));
    m_presetLabel->setText(tr("Sample"));
    m_presetCombo->setItemText(int(Preset::SimpleChat), tr("Simple chat"));
    m_presetCombo->setItemText(int(Preset::CodeGeneration), tr("Code generation (pro)"));
    m_presetCombo->setItemText(int(Preset::SensitiveData), tr("Sensitive data"));
    m_presetCombo->setItemText(int(Preset::LongDocument), tr("Long document"));
    m_presetCombo->setItemText(int(Preset::AgentCanaryUser), tr("Agent canary user"));
    m_runButton->setText(tr("Run"));
    m_bodyLabel->setText(tr("Request body"));
    m_headersLabel->setText(tr("Headers, one \"name: value\" per line"));
    m_liveTitle->setText(tr("Live rules"));
    m_editedTitle->setText(tr("With your edits"));

    m_canaryTitle->setText(tr("Canary splits"));
    m_canaryEmpty->setText(tr("No rule splits its traffic."));
    for (SplitControls &controls : m_splitControls)
        controls.reset->setText(tr("Reset to file"));
    m_model->retranslate();
    if (!m_live.canarySplits.isEmpty())
        updateCanary(m_live.canarySplits);
    validate();
}

void RoutesView::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

// ---- rules and editor ----

void RoutesView::loadLiveRules()
{
    m_model->setRules(m_live.rules);
    m_dirty = false;
    selectRow(m_model->rowCount() > 0 ? 0 : -1);
    validate();
}

void RoutesView::onRoutesChanged(const RoutesState &state)
{
    m_live = state;
    // An edit in progress is kept; otherwise the page follows the live rules.
    if (!m_dirty) {
        const int row = m_currentRow;
        m_model->setRules(m_live.rules);
        selectRow(qMin(row, m_model->rowCount() - 1));
        validate();
    }
    QStringList splitRules;
    for (const routing::CanarySplitState &split : state.canarySplits)
        splitRules.append(split.rule);
    if (splitRules == m_splitRules)
        updateCanary(state.canarySplits);
    else
        rebuildCanary(state.canarySplits);
}

void RoutesView::selectRow(int row)
{
    if (row < 0) {
        m_rulesView->selectionModel()->clearSelection();
        showRule(-1);
        return;
    }
    m_rulesView->selectionModel()->setCurrentIndex(
        m_model->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    showRule(row);
}

void RoutesView::showRule(int row)
{
    if (m_loadingForm)
        return;
    m_currentRow = row;
    m_loadingForm = true;
    clearConditionRows();
    m_editorForm->setEnabled(row >= 0);
    m_deleteButton->setEnabled(row >= 0);
    m_nestedCondition = false;
    if (row < 0) {
        m_formBase = {};
        m_nameEdit->clear();
        m_prioritySpin->setValue(0);
        m_nestedLabel->hide();
        m_loadingForm = false;
        return;
    }
    m_formBase = m_model->rules().at(row);
    const config::RouteRule &rule = m_formBase;
    m_nameEdit->setText(rule.name);
    m_prioritySpin->setValue(rule.priority);
    m_matchCombo->setCurrentIndex(0);
    if (rule.when) {
        const config::RouteCondition &when = *rule.when;
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
                               ? conditionSummary(rule.when) + QStringLiteral("\n\n") +
                                     tr("This rule's condition has nested groups, shown above as "
                                        "text. Edit it in the configuration file; the rest of "
                                        "the rule can be edited here.")
                               : QString());
    m_matchCombo->setEnabled(!m_nestedCondition);
    m_addConditionButton->setEnabled(!m_nestedCondition);

    int kind = 2;
    if (!rule.split.isEmpty())
        kind = 3;
    else if (rule.to.kind == config::RouteTarget::Kind::Provider)
        kind = 0;
    else if (rule.to.kind == config::RouteTarget::Kind::Pool)
        kind = 1;
    m_targetKind->setCurrentIndex(kind);
    fillTargetChoices();
    m_targetValue->setCurrentText(kind == 3   ? targetSummary(rule)
                                  : kind == 1 ? rule.to.names.join(QStringLiteral(", "))
                                              : rule.to.names.value(0));
    m_loadingForm = false;
}

RoutesView::ConditionRow &RoutesView::addConditionRow(const config::RouteCondition &condition)
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
    connect(row.field, &QComboBox::currentTextChanged, this, &RoutesView::formEdited);
    connect(row.op, &QComboBox::currentTextChanged, this, &RoutesView::formEdited);
    connect(row.value, &QLineEdit::textChanged, this, &RoutesView::formEdited);
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

void RoutesView::clearConditionRows()
{
    for (const ConditionRow &row : std::as_const(m_conditionRows))
        retire(row.row);
    m_conditionRows.clear();
}

void RoutesView::fillTargetChoices()
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

config::RouteRule RoutesView::ruleFromForm() const
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

void RoutesView::formEdited()
{
    if (m_loadingForm || m_currentRow < 0)
        return;
    const config::RouteRule rule = ruleFromForm();
    m_loadingForm = true; // the model's reordering moves the selection: keep the form as it is
    const int row = m_model->replaceRule(m_currentRow, rule);
    m_formBase = rule;
    m_currentRow = row;
    m_rulesView->selectionModel()->setCurrentIndex(
        m_model->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    m_loadingForm = false;
    m_dirty = true;
    m_applyResult->clear();
    validate();
}

void RoutesView::validate()
{
    QStringList lines;
    if (m_currentRow >= 0 && m_currentRow < m_model->rowCount()) {
        for (const routing::RuleProblem &problem :
             routing::validateRule(m_model->rules().at(m_currentRow), m_config))
            lines.append(problem.message);
    }
    const QList<routing::RuleProblem> all = routing::validateRoutes(m_model->rules(), m_config);
    // Problems of other rules (or a name used twice) still block Apply: say so below the form.
    for (const routing::RuleProblem &problem : all) {
        if (!lines.contains(problem.message))
            lines.append(problem.message);
    }
    m_problemsLabel->setText(lines.join(u'\n'));
    m_problemsLabel->setVisible(!lines.isEmpty());
    m_applyButton->setEnabled(m_dirty && all.isEmpty());
    m_revertButton->setEnabled(m_dirty);
}

void RoutesView::addRule()
{
    QStringList names;
    for (const config::RouteRule &rule : m_model->rules())
        names.append(rule.name);
    config::RouteRule rule;
    int suffix = 1;
    do {
        rule.name = QStringLiteral("new-rule-%1").arg(suffix++);
    } while (names.contains(rule.name));
    rule.to.kind = config::RouteTarget::Kind::Tier;
    rule.to.names = {QStringLiteral("auto")};
    config::RouteCondition condition;
    condition.field = QStringLiteral("model");
    condition.values = {QString()};
    rule.when = condition;
    const int row = m_model->addRule(rule);
    m_dirty = true;
    selectRow(row);
    validate();
    m_nameEdit->setFocus();
    m_nameEdit->selectAll();
}

void RoutesView::deleteRule()
{
    if (m_currentRow < 0)
        return;
    const int row = m_currentRow;
    m_loadingForm = true;
    m_model->removeRule(row);
    m_loadingForm = false;
    m_dirty = true;
    selectRow(qMin(row, m_model->rowCount() - 1));
    validate();
}

void RoutesView::applyRules()
{
    m_applyButton->setEnabled(false);
    setTone(m_applyResult, Tone::Neutral);
    m_applyResult->setText(tr("Applying..."));
    m_bridge.applyRoutes(m_model->rules());
}

void RoutesView::onRoutesApplied(bool ok, const QStringList &problems)
{
    setTone(m_applyResult, ok ? Tone::Good : Tone::Bad);
    if (ok) {
        m_applyResult->setText(tr("Applied: new requests use these rules now."));
        m_dirty = false;
        const int row = m_currentRow;
        m_live.rules = m_model->rules();
        m_model->setRules(m_live.rules);
        selectRow(qMin(row, m_model->rowCount() - 1));
    } else {
        m_applyResult->setText(tr("Not applied: %1").arg(problems.join(u'\n')));
    }
    validate();
}

// ---- dry run ----

void RoutesView::loadPreset(Preset preset)
{
    m_presetCombo->setCurrentIndex(int(preset));
    QString model;
    for (const config::ProviderConfig &provider : m_config.providers) {
        if (!provider.models.isEmpty()) {
            model = provider.models.first().publicName;
            break;
        }
    }
    QString content = QStringLiteral("Hi! Can you suggest a name for a grey cat?");
    QString headers;
    switch (preset) {
    case Preset::SimpleChat:
        headers = QStringLiteral("x-switchyard-task: chat");
        break;
    case Preset::CodeGeneration:
        content = QStringLiteral("Write a C++ function that parses an ISO 8601 date.");
        headers = QStringLiteral("x-switchyard-task: code_gen\nx-switchyard-tier: pro");
        break;
    case Preset::SensitiveData:
        content = QStringLiteral("Summarise this patient record: ...");
        headers = QStringLiteral("x-switchyard-sensitivity: high\nx-switchyard-tenant: clinic");
        break;
    case Preset::LongDocument: {
        const QString paragraph =
            QStringLiteral("The quarterly report covers revenue, costs and the outlook. ");
        content = QStringLiteral("Summarise this document: ") +
                  paragraph.repeated(kLongDocumentParagraphs);
        headers = QStringLiteral("x-switchyard-task: summarize");
        break;
    }
    case Preset::AgentCanaryUser:
        model = QStringLiteral("agent-support");
        content = QStringLiteral("Where is my order #1234?");
        headers = QStringLiteral("x-switchyard-user: user-42\nx-switchyard-session: s-7");
        break;
    }
    const QString body = QStringLiteral(R"({
  "model": "%1",
  "messages": [
    {"role": "user", "content": "%2"}
  ]
})")
                             .arg(model, content);
    m_bodyEdit->setPlainText(body);
    m_headersEdit->setPlainText(headers);
}

void RoutesView::runDryRun()
{
    const EngineBridge::HeaderList headers = parseHeaders(m_headersEdit->toPlainText());
    const QByteArray body = m_bodyEdit->toPlainText().toUtf8();
    m_liveTicket = m_nextTicket++;
    m_editedTicket = m_nextTicket++;
    m_liveResult->setPlainText(tr("Running..."));
    m_editedResult->setPlainText(tr("Running..."));
    m_bridge.explainRoute(m_liveTicket, std::nullopt, headers, body);
    m_bridge.explainRoute(m_editedTicket, m_model->rules(), headers, body);
}

void RoutesView::onRouteExplained(quint64 ticket, const RouteExplanation &explanation)
{
    if (ticket == m_liveTicket)
        m_liveResult->setPlainText(describe(explanation));
    else if (ticket == m_editedTicket)
        m_editedResult->setPlainText(describe(explanation));
}

QString RoutesView::describe(const RouteExplanation &explanation)
{
    if (!explanation.error.isEmpty())
        return tr("No decision: %1").arg(explanation.error);
    const routing::RouteDecision &decision = explanation.decision;
    QStringList lines;
    lines.append(tr("Rule: %1").arg(decision.rule.isEmpty() ? tr("none matched") : decision.rule));
    if (decision.tier.isEmpty())
        lines.append(tr("Tier: none (the rule pins the target)"));
    else
        lines.append(tr("Tier: %1, cascade step %2")
                         .arg(decision.tier, cascadeStepText(decision.cascadeStep)));
    if (decision.complexityScore >= 0)
        lines.append(tr("Complexity score: %1").arg(decision.complexityScore));
    if (!decision.canarySide.isEmpty())
        lines.append(tr("Canary side: %1").arg(decision.canarySide));
    switch (decision.refusal) {
    case routing::RouteDecision::Refusal::None:
        break;
    case routing::RouteDecision::Refusal::UnknownModel:
        lines.append(tr("Refused: no provider serves model %1").arg(decision.model));
        break;
    case routing::RouteDecision::Refusal::NoCandidate:
        lines.append(tr("Refused: no endpoint of the target can take the request"));
        break;
    }
    if (!decision.candidates.isEmpty()) {
        lines.append(QString());
        lines.append(tr("Candidates:"));
        int place = 1;
        for (const routing::RouteCandidate &candidate : decision.candidates) {
            lines.append(tr("%1. %2 (%3), score %4, %5")
                             .arg(place++)
                             .arg(candidate.providerId, candidate.upstreamModel)
                             .arg(candidate.score, 0, 'f', 2)
                             .arg(roleText(candidate.role)));
            if (!candidate.reason.isEmpty())
                lines.append(QStringLiteral("    ") + candidate.reason);
        }
    }
    if (!decision.steps.isEmpty()) {
        lines.append(QString());
        lines.append(tr("Why:"));
        for (const routing::RouteStep &step : decision.steps)
            lines.append(tr("%1: %2").arg(step.stage, step.detail));
    }
    return lines.join(u'\n');
}

// ---- canary sliders ----

void RoutesView::rebuildCanary(const QList<routing::CanarySplitState> &splits)
{
    for (const SplitControls &controls : std::as_const(m_splitControls))
        retire(controls.box);
    m_splitControls.clear();
    m_splitRules.clear();
    m_canaryEmpty->setVisible(splits.isEmpty());
    for (const routing::CanarySplitState &split : splits) {
        SplitControls controls;
        controls.box = new QWidget;
        auto *grid = new QGridLayout(controls.box);
        grid->setContentsMargins(0, 4, 0, 8);
        controls.title = makeLabel(TextRole::Value, controls.box);
        controls.reset = new QPushButton(tr("Reset to file"), controls.box);
        controls.reset->setObjectName(QStringLiteral("canaryReset:%1").arg(split.rule));
        grid->addWidget(controls.title, 0, 0, 1, 2);
        grid->addWidget(controls.reset, 0, 2, Qt::AlignRight);
        const QString rule = split.rule;
        for (int i = 0; i < split.branches.size(); ++i) {
            BranchSlider branch;
            auto *name = makeLabel(TextRole::Caption, controls.box);
            name->setText(split.branches[i].target);
            branch.slider = new QSlider(Qt::Horizontal, controls.box);
            branch.slider->setObjectName(QStringLiteral("canarySlider:%1:%2").arg(rule).arg(i));
            branch.slider->setRange(0, 100);
            branch.label = makeLabel(TextRole::Hint, controls.box);
            branch.label->setObjectName(QStringLiteral("canaryWeight:%1:%2").arg(rule).arg(i));
            grid->addWidget(name, i + 1, 0);
            grid->addWidget(branch.slider, i + 1, 1);
            grid->addWidget(branch.label, i + 1, 2);
            connect(branch.slider, &QSlider::valueChanged, this,
                    [this, rule, i](int value) { sliderMoved(rule, i, value); });
            controls.branches.append(branch);
            controls.targets.append(split.branches[i].target);
        }
        grid->setColumnStretch(1, 1);
        connect(controls.reset, &QPushButton::clicked, this, [this, rule] {
            m_pendingWeights.remove(rule);
            m_bridge.resetCanaryWeights(rule);
        });
        m_canaryLayout->insertWidget(m_canaryLayout->count() - 1, controls.box);
        m_splitControls.append(controls);
        m_splitRules.append(rule);
    }
    updateCanary(splits);
}

void RoutesView::updateCanary(const QList<routing::CanarySplitState> &splits)
{
    for (int s = 0; s < splits.size() && s < m_splitControls.size(); ++s) {
        const routing::CanarySplitState &split = splits[s];
        SplitControls &controls = m_splitControls[s];
        controls.title->setText(
            split.overridden
                ? tr("%1, by %2 (live weights)").arg(split.rule, routing::splitKeyName(split.key))
                : tr("%1, by %2").arg(split.rule, routing::splitKeyName(split.key)));
        controls.reset->setEnabled(split.overridden);
        int total = 0;
        int configuredTotal = 0;
        for (const routing::CanaryBranchState &branch : split.branches) {
            total += branch.weight;
            configuredTotal += branch.configuredWeight;
        }
        const bool pending = m_pendingWeights.contains(split.rule);
        for (int i = 0; i < split.branches.size() && i < controls.branches.size(); ++i) {
            const routing::CanaryBranchState &branch = split.branches[i];
            const BranchSlider &widgets = controls.branches[i];
            const int live = percentOf(branch.weight, total);
            if (!pending && !widgets.slider->isSliderDown()) {
                const QSignalBlocker blocker(widgets.slider);
                widgets.slider->setValue(live);
            }
            widgets.label->setText(tr("live %1 % · file %2 %")
                                       .arg(live)
                                       .arg(percentOf(branch.configuredWeight, configuredTotal)));
        }
    }
}

void RoutesView::sliderMoved(const QString &rule, int branch, int value)
{
    const qsizetype index = m_splitRules.indexOf(rule);
    if (index < 0)
        return;
    SplitControls &controls = m_splitControls[index];
    QList<int> weights;
    for (const BranchSlider &slider : std::as_const(controls.branches))
        weights.append(slider.slider->value());
    if (weights.size() == 2) {
        // Two ways: the other branch takes what is left, so the sliders read as percentages.
        const int other = 1 - branch;
        weights[other] = 100 - value;
        const QSignalBlocker blocker(controls.branches[other].slider);
        controls.branches[other].slider->setValue(weights[other]);
    }
    m_pendingWeights.insert(rule, weights);
    m_canaryDebounce.start();
}

void RoutesView::sendCanaryWeights()
{
    for (auto it = m_pendingWeights.cbegin(); it != m_pendingWeights.cend(); ++it) {
        QList<int> weights = it.value();
        // The router needs some traffic somewhere: all sliders at zero means nothing changes.
        if (std::all_of(weights.begin(), weights.end(), [](int weight) { return weight == 0; }))
            continue;
        m_bridge.setCanaryWeights(it.key(), weights);
    }
    m_pendingWeights.clear();
}

} // namespace switchyard::ui
