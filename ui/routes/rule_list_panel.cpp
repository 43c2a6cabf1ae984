#include "ui/routes/rule_list_panel.h"

#include "ui/routes/route_rules_model.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace switchyard::ui {

RuleListPanel::RuleListPanel(RouteRulesModel &model, QWidget *parent)
    : QFrame(parent), m_model(model)
{
    setObjectName(QStringLiteral("routesRulesCard"));
    setProperty("card", true);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 14, 16, 14);
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    m_hint = makeLabel(TextRole::SectionHint, this);
    m_hint->setWordWrap(true);
    layout->addWidget(m_title);
    layout->addWidget(m_hint);

    m_rulesView = new QTableView(this);
    m_rulesView->setObjectName(QStringLiteral("routeRules"));
    m_rulesView->setModel(&m_model);
    m_rulesView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_rulesView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_rulesView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_rulesView->setWordWrap(false);
    m_rulesView->verticalHeader()->hide();
    m_rulesView->setShowGrid(false);
    m_rulesView->setAlternatingRowColors(true);
    // Summaries can be long: the condition and the target share the width and elide; the
    // tooltip has the whole text. The condition is sized by fitConditionColumn().
    QHeaderView *header = m_rulesView->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(RouteRulesModel::ConditionColumn, QHeaderView::Interactive);
    header->setSectionResizeMode(RouteRulesModel::TargetColumn, QHeaderView::Stretch);
    m_rulesView->viewport()->installEventFilter(this);
    connect(&m_model, &QAbstractItemModel::modelReset, this, &RuleListPanel::fitConditionColumn);
    connect(&m_model, &QAbstractItemModel::rowsInserted, this, &RuleListPanel::fitConditionColumn);
    connect(&m_model, &QAbstractItemModel::rowsRemoved, this, &RuleListPanel::fitConditionColumn);
    connect(&m_model, &QAbstractItemModel::layoutChanged, this, &RuleListPanel::fitConditionColumn);
    connect(&m_model, &QAbstractItemModel::dataChanged, this, &RuleListPanel::fitConditionColumn);
    m_rulesView->setTextElideMode(Qt::ElideRight);
    layout->addWidget(m_rulesView, 1);
    connect(m_rulesView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex &current) {
                if (!m_selectingQuietly)
                    Q_EMIT currentRowChanged(current.row());
            });

    auto *buttons = new QHBoxLayout;
    m_addButton = new QPushButton(this);
    m_addButton->setObjectName(QStringLiteral("addRuleButton"));
    m_deleteButton = new QPushButton(this);
    m_deleteButton->setObjectName(QStringLiteral("deleteRuleButton"));
    m_revertButton = new QPushButton(this);
    m_revertButton->setObjectName(QStringLiteral("revertRulesButton"));
    m_applyButton = new QPushButton(this);
    m_applyButton->setObjectName(QStringLiteral("applyRulesButton"));
    m_applyButton->setDefault(true);
    buttons->addWidget(m_addButton);
    buttons->addWidget(m_deleteButton);
    buttons->addStretch(1);
    buttons->addWidget(m_revertButton);
    buttons->addWidget(m_applyButton);
    layout->addLayout(buttons);
    m_applyResult = makeLabel(TextRole::Hint, this);
    m_applyResult->setObjectName(QStringLiteral("applyResult"));
    m_applyResult->setWordWrap(true);
    layout->addWidget(m_applyResult);

    connect(m_addButton, &QPushButton::clicked, this, &RuleListPanel::addRequested);
    connect(m_deleteButton, &QPushButton::clicked, this, &RuleListPanel::deleteRequested);
    connect(m_revertButton, &QPushButton::clicked, this, &RuleListPanel::revertRequested);
    connect(m_applyButton, &QPushButton::clicked, this, &RuleListPanel::applyRequested);
    retranslateUi();
}

void RuleListPanel::selectRowQuietly(int row)
{
    m_selectingQuietly = true;
    if (row < 0) {
        m_rulesView->selectionModel()->clearSelection();
    } else {
        m_rulesView->selectionModel()->setCurrentIndex(
            m_model.index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
    m_selectingQuietly = false;
}

void RuleListPanel::setEditState(bool ruleSelected, bool dirty, bool applicable)
{
    m_deleteButton->setEnabled(ruleSelected);
    m_revertButton->setEnabled(dirty);
    m_applyButton->setEnabled(dirty && applicable);
}

void RuleListPanel::showApplyResult(const QString &text, Tone tone)
{
    setTone(m_applyResult, tone);
    m_applyResult->setText(text);
}

void RuleListPanel::clearApplyResult()
{
    m_applyResult->clear();
}

void RuleListPanel::retranslateUi()
{
    m_title->setText(tr("Rules"));
    m_hint->setText(tr("In priority order: the first rule that matches a request wins."));
    m_addButton->setText(tr("Add rule"));
    m_deleteButton->setText(tr("Delete rule"));
    m_revertButton->setText(tr("Revert"));
    m_applyButton->setText(tr("Apply"));
}

void RuleListPanel::fitConditionColumn()
{
    // The condition is what a reader scans the list for: it gets its whole text while that
    // leaves the target a quarter of what the two share, then elides like the target.
    const QHeaderView *header = m_rulesView->horizontalHeader();
    const int shared = m_rulesView->viewport()->width() -
                       header->sectionSize(RouteRulesModel::PriorityColumn) -
                       header->sectionSize(RouteRulesModel::NameColumn);
    const int wanted = static_cast<const QAbstractItemView *>(m_rulesView)
                           ->sizeHintForColumn(RouteRulesModel::ConditionColumn);
    const int width = std::max(header->minimumSectionSize(), std::min(wanted, shared * 3 / 4));
    if (header->sectionSize(RouteRulesModel::ConditionColumn) != width)
        m_rulesView->setColumnWidth(RouteRulesModel::ConditionColumn, width);
}

bool RuleListPanel::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_rulesView->viewport() && event->type() == QEvent::Resize)
        fitConditionColumn();
    return QFrame::eventFilter(watched, event);
}

void RuleListPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QFrame::changeEvent(event);
}

} // namespace switchyard::ui
