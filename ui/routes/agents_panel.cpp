#include "ui/routes/agents_panel.h"

#include "bridge/engine_bridge.h"
#include "ui/common/widget_helpers.h"
#include "ui/routes/agents_model.h"

#include <QDateTime>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace switchyard::ui {

AgentsPanel::AgentsPanel(EngineBridge &bridge, QWidget *parent)
    : QFrame(parent), m_bridge(bridge), m_model(new AgentsModel(this))
{
    setObjectName(QStringLiteral("agentsCard"));
    setProperty("card", true);
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(16, 14, 16, 14);
    auto *header = new QHBoxLayout;
    m_title = makeLabel(TextRole::SectionTitle, this);
    m_title->setFont(sectionTitleFont(font()));
    header->addWidget(m_title);
    header->addStretch(1);
    m_remove = new QPushButton(this);
    m_remove->setObjectName(QStringLiteral("removeAgentButton"));
    header->addWidget(m_remove);
    outer->addLayout(header);
    m_empty = makeLabel(TextRole::Hint, this);
    m_empty->setWordWrap(true);
    outer->addWidget(m_empty);

    m_view = new QTableView(this);
    m_view->setObjectName(QStringLiteral("agentsTable"));
    m_view->setModel(m_model);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->verticalHeader()->hide();
    m_view->setShowGrid(false);
    m_view->setTextElideMode(Qt::ElideRight);
    m_view->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setSectionResizeMode(AgentsModel::CapabilitiesColumn,
                                                     QHeaderView::Stretch);
    outer->addWidget(m_view, 1);

    connect(m_remove, &QPushButton::clicked, this, &AgentsPanel::removeSelected);
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &AgentsPanel::refreshControls);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, &AgentsPanel::refreshControls);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, &AgentsPanel::refreshControls);
    retranslateUi();
    refreshControls();
}

void AgentsPanel::applySnapshot(const EngineSnapshot &snapshot)
{
    m_model->applyAgents(snapshot.agents, QDateTime::currentMSecsSinceEpoch());
}

void AgentsPanel::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
        m_model->retranslate();
    }
    QFrame::changeEvent(event);
}

void AgentsPanel::retranslateUi()
{
    m_title->setText(tr("Registered agents"));
    m_empty->setText(tr("No agent has registered. Agents register themselves with POST "
                        "/admin/v1/agents and take requests that carry their intent."));
    m_remove->setText(tr("Deregister"));
    m_remove->setToolTip(tr("Remove the selected agent; it takes no more requests until it "
                            "registers again"));
}

void AgentsPanel::refreshControls()
{
    const bool any = m_model->rowCount() > 0;
    m_empty->setVisible(!any);
    m_view->setVisible(any);
    m_remove->setEnabled(m_view->selectionModel()->hasSelection());
}

void AgentsPanel::removeSelected()
{
    const QModelIndexList selected = m_view->selectionModel()->selectedRows();
    if (selected.isEmpty())
        return;
    m_bridge.removeAgent(selected.first().data(AgentsModel::AgentIdRole).toString());
}

} // namespace switchyard::ui
