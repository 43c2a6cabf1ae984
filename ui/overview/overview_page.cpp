#include "ui/overview/overview_page.h"

#include "bridge/engine_bridge.h"
#include "ui/common/endpoint_summary_text.h"
#include "ui/common/state_pill_delegate.h"
#include "ui/common/widget_helpers.h"
#include "ui/overview/breaker_timeline_panel.h"
#include "ui/overview/drills_panel.h"
#include "ui/overview/health_matrix_model.h"
#include "ui/overview/provider_traffic_chart.h"
#include "ui/overview/request_rate_chart.h"

#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace switchyard::ui {

OverviewPage::OverviewPage(EngineBridge &bridge, const timing::Clock &clock, QWidget *parent)
    : QWidget(parent), m_bridge(bridge), m_snapshot(bridge.lastSnapshot()), m_clock(clock)
{
    setObjectName(QStringLiteral("overviewPage"));
    m_startedAtMs = m_clock.msSinceEpoch();
    m_lastSnapshotAtMs = m_startedAtMs;

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(16, 16, 16, 12);
    layout->setSpacing(12);
    auto *topRow = new QHBoxLayout;
    topRow->setSpacing(12);
    topRow->addWidget(buildSummary(), 0);
    topRow->addWidget(buildChartCard(), 1);
    topRow->addWidget(buildTrafficCard(), 1);
    layout->addLayout(topRow, 5);
    layout->addWidget(buildMatrixCard(), 4);
    auto *bottomRow = new QHBoxLayout;
    bottomRow->setSpacing(12);
    m_drills = new DrillsPanel(this);
    bottomRow->addWidget(m_drills, 1);
    m_timeline = new BreakerTimelinePanel(this);
    bottomRow->addWidget(m_timeline, 1);
    layout->addLayout(bottomRow, 5);

    connect(m_drills, &DrillsPanel::knobsRequested, &m_bridge, &EngineBridge::setSimulatorKnobs);

    retranslateUi();
    applySnapshot(m_snapshot);
}

OverviewPage::~OverviewPage() = default;

BreakerEventsModel *OverviewPage::breakerEventsModel() const
{
    return m_timeline->eventsModel();
}

void OverviewPage::applySnapshot(const EngineSnapshot &snapshot)
{
    m_snapshot = snapshot;
    m_lastSnapshotAtMs = std::max(m_lastSnapshotAtMs, m_clock.msSinceEpoch());
    m_model->applySnapshot(snapshot);
    if (m_matrixView->isColumnHidden(HealthMatrixModel::OtherNodesColumn) ==
        m_model->hasOtherNodes())
        m_matrixView->setColumnHidden(HealthMatrixModel::OtherNodesColumn,
                                      !m_model->hasOtherNodes());
    m_timeline->applySnapshot(snapshot, m_lastSnapshotAtMs);
    m_drills->applySnapshot(snapshot);
    refreshActions();
    m_rateChart->addSample(double(m_lastSnapshotAtMs - m_startedAtMs) / 1000.0,
                           snapshot.requestsPerSecond);
    if (m_trafficRates.applySnapshot(snapshot, m_lastSnapshotAtMs))
        m_trafficChart->setRates(m_trafficRates);
    refreshSummary();
}

void OverviewPage::retranslateUi()
{
    m_totalCard.caption->setText(tr("Total requests"));
    m_rateCard.caption->setText(tr("Request rate"));
    m_inFlightCard.caption->setText(tr("In flight"));
    m_providersCard.caption->setText(tr("Providers up"));

    m_chartTitle->setText(tr("Requests per second"));
    m_chartHint->setText(tr("last 60 s"));
    m_trafficTitle->setText(tr("Traffic by provider"));
    //: Calls the gateway started to each provider, per second
    m_trafficHint->setText(tr("calls/s · last 5 min"));
    m_trafficHint->setToolTip(
        tr("Calls sent to each provider per second, over the last 5 s, counted when they "
           "start; retries and failovers count once per provider they reach."));
    m_matrixTitle->setText(tr("Providers"));
    m_matrixHint->setText(tr("Select a provider to act on it; right-click for the same actions"));
    m_timeline->retranslate();
    m_drills->retranslate();
    refreshActions();

    m_model->retranslate();
    fitMatrixColumns();
    refreshSummary();
}

void OverviewPage::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QWidget::changeEvent(event);
}

OverviewPage::StatCard OverviewPage::makeStatCard(const QString &objectName)
{
    StatCard card;
    card.frame = makeCard(objectName, this);
    card.frame->setMinimumWidth(190);
    auto *layout = new QVBoxLayout(card.frame);
    layout->setContentsMargins(16, 12, 16, 12);
    layout->setSpacing(2);
    card.caption = makeLabel(TextRole::Caption, card.frame);
    card.caption->setFont(scaledFont(font(), 0.92, QFont::Medium));
    card.value = makeLabel(TextRole::Value, card.frame);
    card.value->setObjectName(objectName + QStringLiteral("Value"));
    card.value->setFont(scaledFont(font(), 1.9, QFont::DemiBold));
    card.hint = makeLabel(TextRole::Hint, card.frame);
    card.hint->setObjectName(objectName + QStringLiteral("Hint"));
    card.hint->setFont(scaledFont(font(), 0.88, QFont::Normal));
    layout->addStretch(1);
    layout->addWidget(card.caption);
    layout->addWidget(card.value);
    layout->addWidget(card.hint);
    layout->addStretch(1);
    return card;
}

QWidget *OverviewPage::buildSummary()
{
    auto *summary = new QWidget;
    summary->setObjectName(QStringLiteral("summaryStrip"));
    auto *grid = new QGridLayout(summary);
    grid->setContentsMargins(0, 0, 0, 0);
    grid->setSpacing(12);
    m_totalCard = makeStatCard(QStringLiteral("totalRequestsCard"));
    m_rateCard = makeStatCard(QStringLiteral("requestRateCard"));
    m_inFlightCard = makeStatCard(QStringLiteral("inFlightCard"));
    m_providersCard = makeStatCard(QStringLiteral("providersUpCard"));
    grid->addWidget(m_totalCard.frame, 0, 0);
    grid->addWidget(m_rateCard.frame, 0, 1);
    grid->addWidget(m_inFlightCard.frame, 1, 0);
    grid->addWidget(m_providersCard.frame, 1, 1);
    return summary;
}

QWidget *OverviewPage::buildChartCard()
{
    QFrame *card = makeCard(QStringLiteral("requestRateChartCard"), this);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(16, 12, 16, 8);
    layout->setSpacing(4);
    auto *header = new QHBoxLayout;
    m_chartTitle = makeLabel(TextRole::SectionTitle, card);
    m_chartTitle->setFont(sectionTitleFont(font()));
    m_chartHint = makeLabel(TextRole::SectionHint, card);
    header->addWidget(m_chartTitle);
    header->addStretch(1);
    header->addWidget(m_chartHint);
    layout->addLayout(header);
    m_rateChart = new RequestRateChart(card);
    m_rateChart->setObjectName(QStringLiteral("requestRateChart"));
    layout->addWidget(m_rateChart, 1);
    return card;
}

QWidget *OverviewPage::buildTrafficCard()
{
    QFrame *card = makeCard(QStringLiteral("providerTrafficCard"), this);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(16, 12, 16, 8);
    layout->setSpacing(4);
    auto *header = new QHBoxLayout;
    m_trafficTitle = makeLabel(TextRole::SectionTitle, card);
    m_trafficTitle->setFont(sectionTitleFont(font()));
    m_trafficHint = makeLabel(TextRole::SectionHint, card);
    header->addWidget(m_trafficTitle);
    header->addStretch(1);
    header->addWidget(m_trafficHint);
    layout->addLayout(header);
    m_trafficChart = new ProviderTrafficChart(card);
    m_trafficChart->setObjectName(QStringLiteral("providerTrafficChart"));
    layout->addWidget(m_trafficChart, 1);
    return card;
}

QWidget *OverviewPage::buildMatrixCard()
{
    QFrame *card = makeCard(QStringLiteral("healthMatrixCard"), this);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(12, 12, 12, 12);
    layout->setSpacing(8);
    auto *header = new QHBoxLayout;
    header->setContentsMargins(4, 0, 4, 0);
    m_matrixTitle = makeLabel(TextRole::SectionTitle, card);
    m_matrixTitle->setFont(sectionTitleFont(font()));
    m_matrixHint = makeLabel(TextRole::SectionHint, card);
    header->addWidget(m_matrixTitle);
    header->addSpacing(12);
    header->addWidget(m_matrixHint, 1);
    for (ProviderAction action : {ProviderAction::Disable, ProviderAction::Drain,
                                  ProviderAction::Trip, ProviderAction::Reset}) {
        auto *button = new QPushButton(card);
        button->setProperty("providerAction", true);
        button->setCursor(Qt::PointingHandCursor);
        header->addSpacing(6);
        header->addWidget(button);
        m_actionButtons.append({action, button});
        connect(button, &QPushButton::clicked, this, [this, button] {
            // Disable flips to Enable for a provider that is already disabled.
            applyAction(ProviderAction(button->property("actionValue").toInt()));
        });
        button->setProperty("actionValue", int(action));
    }
    layout->addLayout(header);

    m_model = new HealthMatrixModel(this);
    m_sortModel = new QSortFilterProxyModel(this);
    m_sortModel->setSourceModel(m_model);
    m_sortModel->setSortRole(HealthMatrixModel::SortRole);
    m_sortModel->setSortCaseSensitivity(Qt::CaseInsensitive);

    m_matrixView = new QTableView(card);
    m_matrixView->setObjectName(QStringLiteral("healthMatrix"));
    m_matrixView->setModel(m_sortModel);
    m_matrixView->setItemDelegateForColumn(
        HealthMatrixModel::StateColumn,
        new StatePillDelegate(HealthMatrixModel::StatusColorRole, m_matrixView));
    m_matrixView->setItemDelegateForColumn(
        HealthMatrixModel::OtherNodesColumn,
        new StatePillDelegate(HealthMatrixModel::StatusColorRole, m_matrixView));
    m_matrixView->setAlternatingRowColors(true);
    m_matrixView->setShowGrid(false);
    m_matrixView->setWordWrap(false);
    m_matrixView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_matrixView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_matrixView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_matrixView->setFrameShape(QFrame::NoFrame);
    m_matrixView->setCornerButtonEnabled(false);
    m_matrixView->verticalHeader()->hide();
    m_matrixView->verticalHeader()->setDefaultSectionSize(QFontMetrics(font()).height() +
                                                          18); // room for the state pill
    QHeaderView *columns = m_matrixView->horizontalHeader();
    columns->setHighlightSections(false);
    columns->setStretchLastSection(true);
    columns->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    m_matrixView->setSortingEnabled(true);
    m_matrixView->sortByColumn(HealthMatrixModel::ProviderColumn, Qt::AscendingOrder);
    // Models are in the provider's tooltip; the width goes to the reason instead.
    m_matrixView->setColumnHidden(HealthMatrixModel::ModelsColumn, true);
    // Shown once the fleet lists another node (applySnapshot).
    m_matrixView->setColumnHidden(HealthMatrixModel::OtherNodesColumn, true);
    m_matrixView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_matrixView, &QWidget::customContextMenuRequested, this,
            &OverviewPage::showMatrixMenu);
    connect(m_matrixView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { refreshActions(); });
    layout->addWidget(m_matrixView, 1);
    return card;
}

QString OverviewPage::selectedProvider() const
{
    const QModelIndexList rows = m_matrixView->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return {};
    return rows.first().data(HealthMatrixModel::ProviderIdRole).toString();
}

bool OverviewPage::selectProvider(const QString &providerId)
{
    for (int row = 0; row < m_sortModel->rowCount(); ++row) {
        const QModelIndex index = m_sortModel->index(row, 0);
        if (index.data(HealthMatrixModel::ProviderIdRole).toString() == providerId) {
            m_matrixView->selectRow(row);
            return true;
        }
    }
    return false;
}

QPushButton *OverviewPage::actionButton(ProviderAction action) const
{
    for (const auto &[buttonAction, button] : m_actionButtons) {
        if (buttonAction == action)
            return button;
    }
    return nullptr;
}

void OverviewPage::refreshActions()
{
    const QString id = selectedProvider();
    OperatorState operatorState = OperatorState::Enabled;
    BreakerState breaker = BreakerState::Closed;
    for (const ProviderHealth &provider : std::as_const(m_snapshot.providers)) {
        if (provider.id == id) {
            operatorState = provider.operatorState;
            breaker = provider.breaker;
        }
    }
    const bool selected = !id.isEmpty();
    for (const auto &[action, button] : m_actionButtons) {
        switch (action) {
        case ProviderAction::Disable:
        case ProviderAction::Enable: {
            // One button that enables what is disabled or draining, and disables the rest.
            const bool enables = operatorState != OperatorState::Enabled;
            button->setProperty("actionValue",
                                int(enables ? ProviderAction::Enable : ProviderAction::Disable));
            button->setText(enables ? tr("Enable") : tr("Disable"));
            button->setToolTip(enables ? tr("Let the selected provider take traffic again")
                                       : tr("Take the selected provider out of rotation now"));
            button->setEnabled(selected);
            break;
        }
        case ProviderAction::Drain:
            button->setText(tr("Drain"));
            button->setToolTip(tr("Stop new requests to the selected provider and let open "
                                  "streams finish"));
            button->setEnabled(selected && operatorState == OperatorState::Enabled);
            break;
        case ProviderAction::Trip:
            button->setText(tr("Trip"));
            button->setToolTip(tr("Force the selected provider's breaker open, as a drill"));
            button->setEnabled(selected && breaker != BreakerState::Open);
            break;
        case ProviderAction::Reset:
            button->setText(tr("Reset"));
            button->setToolTip(tr("Close the selected provider's breaker and forget its failures"));
            button->setEnabled(selected);
            break;
        }
    }
}

void OverviewPage::applyAction(ProviderAction action)
{
    const QString id = selectedProvider();
    if (!id.isEmpty())
        m_bridge.applyProviderAction(id, action);
}

void OverviewPage::showMatrixMenu(const QPoint &position)
{
    const QModelIndex index = m_matrixView->indexAt(position);
    if (!index.isValid())
        return;
    m_matrixView->selectRow(index.row());
    QMenu menu(this);
    for (const auto &[action, button] : m_actionButtons) {
        QAction *item = menu.addAction(button->text());
        item->setEnabled(button->isEnabled());
        item->setToolTip(button->toolTip());
        connect(item, &QAction::triggered, this, [this, button] {
            applyAction(ProviderAction(button->property("actionValue").toInt()));
        });
    }
    menu.exec(m_matrixView->viewport()->mapToGlobal(position));
}

void OverviewPage::fitMatrixColumns()
{
    // Wide enough for the header (bold, plus the sort arrow) and for typical values, so no
    // column truncates in English or Chinese; the reason takes whatever is left. Together they
    // fit a 1280-pixel window with the fleet's column shown.
    const QFontMetrics body(m_matrixView->font());
    QFont headerFont = m_matrixView->horizontalHeader()->font();
    headerFont.setWeight(QFont::DemiBold);
    const QFontMetrics header(headerFont);
    const auto fit = [&](int column, const QString &typicalValue) {
        const QString title = m_model->headerData(column, Qt::Horizontal).toString();
        const int width = std::max(header.horizontalAdvance(title) + 30,
                                   body.horizontalAdvance(typicalValue) + 28);
        m_matrixView->horizontalHeader()->resizeSection(column, width);
    };
    fit(HealthMatrixModel::ProviderColumn, QStringLiteral("provider-name-long"));
    // The pill adds a dot and padding around the longest status with its countdown or share.
    const QString ramping =
        HealthMatrixModel::statusName(HealthMatrixModel::ProviderStatus::Ramping) +
        QStringLiteral(" 100%xxxxxx");
    const QString coolingDown =
        HealthMatrixModel::statusName(HealthMatrixModel::ProviderStatus::CoolingDown) +
        QStringLiteral(" · 59 sxxxxxxx");
    fit(HealthMatrixModel::StateColumn,
        body.horizontalAdvance(coolingDown) > body.horizontalAdvance(ramping) ? coolingDown
                                                                              : ramping);

    const QLocale locale;
    fit(HealthMatrixModel::InFlightColumn, locale.toString(1000));
    fit(HealthMatrixModel::RequestsColumn, locale.toString(1000000));
    fit(HealthMatrixModel::ErrorsColumn, locale.toString(10000) + QStringLiteral(" (") +
                                             locale.toString(10.0, 'f', 1) + QStringLiteral("%)"));
    fit(HealthMatrixModel::LatencyP50Column, HealthMatrixModel::formatLatency(999.0));
    fit(HealthMatrixModel::LatencyP95Column, HealthMatrixModel::formatLatency(999.0));
    fit(HealthMatrixModel::TimeToFirstTokenP50Column, HealthMatrixModel::formatLatency(999.0));
    // A pill too: "10 of 10 up" with its dot and padding.
    fit(HealthMatrixModel::OtherNodesColumn,
        EndpointSummaryText::upCount(10, 10) + QStringLiteral("xxxxxx"));
}

void OverviewPage::refreshSummary()
{
    const QLocale locale;
    m_totalCard.value->setText(locale.toString(m_snapshot.totalRequests));
    m_totalCard.hint->setText(tr("since start"));

    m_rateCard.value->setText(
        tr("%1 req/s").arg(locale.toString(m_snapshot.requestsPerSecond, 'f', 1)));
    m_rateCard.hint->setText(
        m_snapshot.demoTrafficRunning
            ? tr("demo traffic at %1 req/s").arg(locale.toString(m_snapshot.demoRequestsPerSecond))
            : tr("client requests"));

    m_inFlightCard.value->setText(locale.toString(m_snapshot.inFlight));
    const telemetry::ConnectionCounts &connections = m_snapshot.connections;
    const int open = connections.open;
    // Counts after a colon read right in any number, with no plural forms to translate.
    QString hint;
    if (connections.refused() == 0) {
        hint = tr("open connections: %1").arg(locale.toString(open));
    } else {
        //: %1 open client connections; %2 connections refused over the connection limits
        hint = tr("open connections: %1 · refused: %2")
                   .arg(locale.toString(open), locale.toString(connections.refused()));
    }
    if (m_snapshot.waitingToStart > 0) {
        //: Requests read during a burst, waiting for the engine to start them
        hint += QStringLiteral(" · ") +
                tr("waiting to start: %1").arg(locale.toString(m_snapshot.waitingToStart));
    }
    m_inFlightCard.hint->setText(hint);
    setTone(m_inFlightCard.hint, connections.refused() == 0 && m_snapshot.waitingToStart == 0
                                     ? Tone::Neutral
                                     : Tone::Warning);
    m_inFlightCard.frame->setToolTip(
        //: %1 requests in flight, %2 of them read and waiting for the engine to start them
        tr("Requests in flight: %1, waiting to start: %2 (a burst's backlog, started in "
           "order within admission.max_start_wait)\n")
            .arg(locale.toString(m_snapshot.inFlight), locale.toString(m_snapshot.waitingToStart)) +
        tr("Client connections open: %1\n"
           "Refused, limits.max_connections reached: %2\n"
           "Refused, limits.max_connections_per_address reached: %3\n"
           "Closed, request headers too slow: %4\n"
           "Closed, request body too slow: %5\n"
           "Closed, idle longer than limits.keep_alive_idle: %6")
            .arg(locale.toString(open), locale.toString(connections.refusedOverTotal),
                 locale.toString(connections.refusedOverAddress),
                 locale.toString(connections.headerTimeouts),
                 locale.toString(connections.bodyTimeouts),
                 locale.toString(connections.idleClosed)));

    int up = 0;
    int degraded = 0;
    int down = 0;
    for (const ProviderHealth &provider : std::as_const(m_snapshot.providers)) {
        switch (provider.state) {
        case ProviderState::Up:
            ++up;
            break;
        case ProviderState::Degraded:
            ++degraded;
            break;
        case ProviderState::Down:
            ++down;
            break;
        }
    }
    const auto total = m_snapshot.providers.size();
    //: Providers that are up, out of all providers, e.g. "2 / 3"
    m_providersCard.value->setText(
        tr("%1 / %2").arg(locale.toString(up), locale.toString(qint64(total))));
    if (total == 0) {
        m_providersCard.hint->setText(tr("no providers configured"));
        setTone(m_providersCard.hint, Tone::Neutral);
    } else if (degraded == 0 && down == 0) {
        m_providersCard.hint->setText(tr("all healthy"));
        setTone(m_providersCard.hint, Tone::Good);
    } else {
        m_providersCard.hint->setText(
            tr("%1 degraded, %2 down").arg(locale.toString(degraded), locale.toString(down)));
        setTone(m_providersCard.hint, down > 0 ? Tone::Bad : Tone::Warning);
    }
}

} // namespace switchyard::ui
