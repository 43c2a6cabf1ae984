#include "ui/fleet/fleet_page.h"

#include "ui/common/state_pill_delegate.h"
#include "ui/common/widget_helpers.h"
#include "ui/fleet/fleet_models.h"

#include <QDateTime>
#include <QEvent>
#include <QFrame>
#include <QHeaderView>
#include <QLabel>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace switchyard::ui {

namespace {

QTableView *makeTable(const QString &objectName, QWidget *parent)
{
    auto *view = new QTableView(parent);
    view->setObjectName(objectName);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setShowGrid(false);
    view->setAlternatingRowColors(true);
    view->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    view->setTextElideMode(Qt::ElideRight);
    return view;
}

} // namespace

FleetPage::FleetPage(QWidget *parent)
    : QWidget(parent), m_nodes(new FleetNodesModel(this)),
      m_endpoints(new FleetEndpointsModel(this))
{
    setObjectName(QStringLiteral("fleetPage"));
    auto *page = new QVBoxLayout(this);
    page->setContentsMargins(16, 16, 16, 16);
    page->setSpacing(12);

    // The nodes' card is as tall as its rows (fitNodesTable); the endpoints take the rest.
    QFrame *nodesCard = makeCard(QStringLiteral("fleetNodesCard"), this);
    page->addWidget(nodesCard);
    auto *nodes = new QVBoxLayout(nodesCard);
    nodes->setContentsMargins(16, 14, 16, 14);
    m_title = makeLabel(TextRole::SectionTitle, nodesCard);
    m_title->setFont(sectionTitleFont(font()));
    nodes->addWidget(m_title);
    m_hint = makeLabel(TextRole::SectionHint, nodesCard);
    m_hint->setWordWrap(true);
    nodes->addWidget(m_hint);
    m_link = makeLabel(TextRole::Hint, nodesCard);
    m_link->setObjectName(QStringLiteral("fleetLinkLabel"));
    m_link->setWordWrap(true);
    nodes->addWidget(m_link);
    m_single = makeLabel(TextRole::Hint, nodesCard);
    m_single->setObjectName(QStringLiteral("fleetSingleHint"));
    m_single->setWordWrap(true);
    nodes->addWidget(m_single);
    m_nodesView = makeTable(QStringLiteral("fleetNodesTable"), nodesCard);
    m_nodesView->setModel(m_nodes);
    m_nodesView->verticalHeader()->hide();
    m_nodesView->setItemDelegateForColumn(
        FleetNodesModel::EndpointsColumn,
        new StatePillDelegate(FleetNodesModel::ColorRole, m_nodesView));
    m_nodesView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_nodesView->horizontalHeader()->setStretchLastSection(true);
    nodes->addWidget(m_nodesView);
    // Alone, the card holds only its title and hint: they stay together at the top.
    nodes->addStretch(1);

    QFrame *endpointsCard = makeCard(QStringLiteral("fleetEndpointsCard"), this);
    page->addWidget(endpointsCard, 1);
    auto *endpoints = new QVBoxLayout(endpointsCard);
    endpoints->setContentsMargins(16, 14, 16, 14);
    m_endpointsTitle = makeLabel(TextRole::SectionTitle, endpointsCard);
    m_endpointsTitle->setFont(sectionTitleFont(font()));
    endpoints->addWidget(m_endpointsTitle);
    m_endpointsHint = makeLabel(TextRole::SectionHint, endpointsCard);
    m_endpointsHint->setWordWrap(true);
    endpoints->addWidget(m_endpointsHint);
    m_endpointsView = makeTable(QStringLiteral("fleetEndpointsTable"), endpointsCard);
    m_endpointsView->setModel(m_endpoints);
    m_endpointsView->verticalHeader()->hide();
    m_endpointsView->setItemDelegate(
        new StatePillDelegate(FleetEndpointsModel::ColorRole, m_endpointsView));
    m_endpointsView->setItemDelegateForColumn(FleetEndpointsModel::EndpointColumn,
                                              new QStyledItemDelegate(m_endpointsView));
    m_endpointsView->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_endpointsView->horizontalHeader()->setStretchLastSection(true);
    // Alone, the page is one short card at the top: the stretch takes the rest.
    page->addStretch(0);
    endpoints->addWidget(m_endpointsView, 1);

    retranslateUi();
    refreshHeader();
    fitNodesTable();
}

void FleetPage::applySnapshot(const EngineSnapshot &snapshot, qint64 nowMs)
{
    m_state = snapshot.fleet;
    m_nodes->applyMembers(m_state.members, nowMs);
    m_endpoints->applyMembers(m_state.members);
    refreshHeader();
    fitNodesTable();
}

void FleetPage::fitNodesTable()
{
    // Every node in view up to a dozen; a larger fleet scrolls.
    constexpr int kRowsShown = 12;
    const int rows = std::clamp(m_nodes->rowCount(), 1, kRowsShown);
    const int rowHeight = m_nodesView->verticalHeader()->defaultSectionSize();
    const int height = m_nodesView->horizontalHeader()->sizeHint().height() + rows * rowHeight +
                       2 * m_nodesView->frameWidth();
    if (m_nodesView->maximumHeight() == height)
        return;
    m_nodesView->setFixedHeight(height);
    // Lay the card and the page out now, not a posted layout request later, so the card is
    // never drawn clipped to its previous height.
    m_nodesView->parentWidget()->layout()->activate();
    layout()->activate();
}

void FleetPage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange) {
        retranslateUi();
        m_nodes->retranslate();
        m_endpoints->retranslate();
    }
    QWidget::changeEvent(event);
}

void FleetPage::retranslateUi()
{
    m_hint->setText(tr("The nodes sharing this node's Redis, as each last announced itself. They "
                       "share the config, client keys, limits, budgets, agents and usage; each "
                       "keeps its own breakers."));
    m_single->setText(tr("This gateway runs alone. Give each node a fleet section with one Redis "
                         "to share the config, client keys, limits, budgets, agents and usage "
                         "(docs/fleet.md)."));
    m_endpointsTitle->setText(tr("Endpoints by node"));
    m_endpointsHint->setText(
        tr("Each node's view of each provider and agent. A breaker opened on one node stays "
           "that node's: the others keep calling while their own calls succeed."));
    refreshHeader();
}

void FleetPage::refreshHeader()
{
    const bool fleet = m_state.enabled;
    m_title->setText(fleet ? tr("Fleet %1").arg(m_state.fleet) : tr("Fleet"));
    m_hint->setVisible(fleet);
    m_single->setVisible(!fleet);
    m_nodesView->setVisible(fleet);
    m_link->setVisible(fleet);
    m_endpointsView->parentWidget()->setVisible(fleet);
    if (!fleet)
        return;
    if (m_state.linkUp) {
        //: %1 Redis address; %2 number of live nodes
        m_link->setText(
            tr("Redis %1 · %n live node(s)", nullptr, m_state.liveNodes).arg(m_state.redis));
        setTone(m_link, Tone::Neutral);
    } else {
        const QString since =
            QDateTime::fromMSecsSinceEpoch(m_state.linkDownSinceMs).toString(u"HH:mm:ss");
        //: %1 Redis address; %2 local time; %3 why
        m_link->setText(tr("Redis %1 unreachable since %2: %3. This node serves from its own "
                           "copies; the list shows the nodes as last seen.")
                            .arg(m_state.redis, since, m_state.problem));
        setTone(m_link, Tone::Bad);
    }
}

} // namespace switchyard::ui
