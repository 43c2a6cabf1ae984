#include "main_window.h"

#include "breaker_events_model.h"
#include "drills_panel.h"
#include "engine_bridge.h"
#include "health_matrix_model.h"
#include "request_rate_chart.h"
#include "routes_view.h"
#include "state_pill_delegate.h"
#include "widget_helpers.h"

#include <QEvent>
#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QIcon>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace switchyard::ui {

namespace {

constexpr int defaultDemoRate = 10;
constexpr int minimumDemoRate = 1;
constexpr int maximumDemoRate = 200;
constexpr qint64 localDemoChangeGraceMs = 2000;

// A dot that is grey while demo traffic is off and white on the green "on" button.
QIcon toggleIcon(qreal devicePixelRatio)
{
    const auto dot = [devicePixelRatio](const QColor &color) {
        const int side = 10;
        QPixmap pixmap(QSize(side, side) * devicePixelRatio);
        pixmap.setDevicePixelRatio(devicePixelRatio);
        pixmap.fill(Qt::transparent);
        QPainter painter(&pixmap);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setPen(Qt::NoPen);
        painter.setBrush(color);
        painter.drawEllipse(QRectF(1, 1, side - 2, side - 2));
        return pixmap;
    };
    QIcon icon;
    icon.addPixmap(dot(QColor(0x9c, 0xa3, 0xaf)), QIcon::Normal, QIcon::Off);
    icon.addPixmap(dot(Qt::white), QIcon::Normal, QIcon::On);
    return icon;
}

} // namespace

MainWindow::MainWindow(EngineBridge &bridge, QWidget *parent)
    : QMainWindow(parent), m_bridge(bridge), m_snapshot(bridge.lastSnapshot())
{
    setObjectName(QStringLiteral("switchyardMainWindow"));
    setStyleSheet(consoleStyleSheet()); // the only place a style sheet is set
    m_clock.start();

    buildControls();

    auto *central = new QWidget(this);
    central->setObjectName(QStringLiteral("consoleCentral"));
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(16, 16, 16, 12);
    layout->setSpacing(12);

    auto *topRow = new QHBoxLayout;
    topRow->setSpacing(12);
    topRow->addWidget(buildSummary(), 0);
    topRow->addWidget(buildChartCard(), 1);
    layout->addLayout(topRow, 5);
    layout->addWidget(buildMatrixCard(), 5);
    auto *bottomRow = new QHBoxLayout;
    bottomRow->setSpacing(12);
    m_drills = new DrillsPanel(central);
    bottomRow->addWidget(m_drills, 1);
    bottomRow->addWidget(buildEventsCard(), 1);
    layout->addLayout(bottomRow, 4);
    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("consoleTabs"));
    m_tabs->setDocumentMode(true);
    m_tabs->addTab(central, QString());
    m_routesView = new RoutesView(m_bridge, m_tabs);
    m_tabs->addTab(m_routesView, QString());
    setCentralWidget(m_tabs);

    connect(m_drills, &DrillsPanel::knobsRequested, &m_bridge, &EngineBridge::setSimulatorKnobs);

    m_listenLabel = new QLabel(this);
    m_listenLabel->setObjectName(QStringLiteral("listenLabel"));
    m_listenLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_statusRate = new QLabel(this);
    m_statusRate->setObjectName(QStringLiteral("statusRate"));
    statusBar()->setSizeGripEnabled(false);
    statusBar()->addWidget(m_listenLabel, 1);
    statusBar()->addPermanentWidget(m_statusRate);

    connect(&m_bridge, &EngineBridge::snapshotUpdated, this, &MainWindow::applySnapshot);

    retranslateUi();
    resize(1280, 900);
    applySnapshot(m_snapshot);
}

MainWindow::~MainWindow() = default;

void MainWindow::buildControls()
{
    m_controls = new QToolBar(this);
    m_controls->setObjectName(QStringLiteral("consoleControls"));
    m_controls->setMovable(false);
    m_controls->setFloatable(false);
    m_controls->toggleViewAction()->setVisible(false);
    addToolBar(Qt::TopToolBarArea, m_controls);

    // One container with its own layout: a tool bar's own spacing cannot be tuned per gap.
    auto *bar = new QWidget(m_controls);
    bar->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Preferred);
    auto *layout = new QHBoxLayout(bar);
    layout->setContentsMargins(16, 8, 16, 8);
    layout->setSpacing(0);

    // Name and subtitle share one rich-text label so they sit on a common baseline.
    m_brand = makeLabel(TextRole::Brand, bar);
    m_brand->setTextFormat(Qt::RichText);
    layout->addWidget(m_brand);
    layout->addStretch(1);

    m_demoToggle = new QPushButton(bar);
    m_demoToggle->setObjectName(QStringLiteral("demoTrafficToggle"));
    m_demoToggle->setCheckable(true);
    m_demoToggle->setIcon(toggleIcon(devicePixelRatioF()));
    m_demoToggle->setIconSize(QSize(10, 10));
    m_demoToggle->setCursor(Qt::PointingHandCursor);
    layout->addWidget(m_demoToggle);
    layout->addSpacing(20);

    m_rateLabel = makeLabel(TextRole::Control, bar);
    m_rateSpin = new QSpinBox(bar);
    m_rateSpin->setObjectName(QStringLiteral("demoRateSpinBox"));
    m_rateSpin->setRange(minimumDemoRate, maximumDemoRate);
    m_rateSpin->setValue(defaultDemoRate);
    m_rateSpin->setKeyboardTracking(false); // one command per finished edit, not per keystroke
    m_rateSpin->setAccelerated(true);
    m_rateSpin->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_rateSpin->setMinimumHeight(QFontMetrics(font()).height() + 14); // level with the toggle
    m_rateLabel->setBuddy(m_rateSpin);
    layout->addWidget(m_rateLabel);
    layout->addSpacing(8);
    layout->addWidget(m_rateSpin);
    m_controls->addWidget(bar);

    connect(m_demoToggle, &QPushButton::toggled, this, [this] { sendDemoTraffic(); });
    connect(m_rateSpin, &QSpinBox::valueChanged, this, [this] {
        if (m_demoToggle->isChecked())
            sendDemoTraffic();
    });
}

MainWindow::StatCard MainWindow::makeStatCard(const QString &objectName)
{
    StatCard card;
    card.frame = new QFrame;
    card.frame->setObjectName(objectName);
    card.frame->setProperty("card", true);
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
    card.hint->setFont(scaledFont(font(), 0.88, QFont::Normal));
    layout->addStretch(1);
    layout->addWidget(card.caption);
    layout->addWidget(card.value);
    layout->addWidget(card.hint);
    layout->addStretch(1);
    return card;
}

QWidget *MainWindow::buildSummary()
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

QWidget *MainWindow::buildChartCard()
{
    auto *card = new QFrame;
    card->setObjectName(QStringLiteral("requestRateChartCard"));
    card->setProperty("card", true);
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

QWidget *MainWindow::buildMatrixCard()
{
    auto *card = new QFrame;
    card->setObjectName(QStringLiteral("healthMatrixCard"));
    card->setProperty("card", true);
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
    m_matrixView->setItemDelegateForColumn(HealthMatrixModel::StateColumn,
                                           new StatePillDelegate(m_matrixView));
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
    m_matrixView->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_matrixView, &QWidget::customContextMenuRequested, this, &MainWindow::showMatrixMenu);
    connect(m_matrixView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { refreshActions(); });
    layout->addWidget(m_matrixView, 1);
    return card;
}

QWidget *MainWindow::buildEventsCard()
{
    auto *card = new QFrame;
    card->setObjectName(QStringLiteral("breakerEventsCard"));
    card->setProperty("card", true);
    auto *layout = new QVBoxLayout(card);
    layout->setContentsMargins(12, 12, 12, 8);
    layout->setSpacing(6);
    auto *header = new QHBoxLayout;
    header->setContentsMargins(4, 0, 4, 0);
    m_eventsTitle = makeLabel(TextRole::SectionTitle, card);
    m_eventsTitle->setFont(sectionTitleFont(font()));
    m_eventsHint = makeLabel(TextRole::SectionHint, card);
    header->addWidget(m_eventsTitle);
    header->addStretch(1);
    header->addWidget(m_eventsHint);
    layout->addLayout(header);

    m_eventsModel = new BreakerEventsModel(this);
    m_eventsView = new QTableView(card);
    m_eventsView->setObjectName(QStringLiteral("breakerEvents"));
    m_eventsView->setModel(m_eventsModel);
    m_eventsView->setShowGrid(false);
    m_eventsView->setWordWrap(false);
    m_eventsView->setAlternatingRowColors(true);
    m_eventsView->setSelectionMode(QAbstractItemView::NoSelection);
    m_eventsView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_eventsView->setFrameShape(QFrame::NoFrame);
    m_eventsView->verticalHeader()->hide();
    m_eventsView->verticalHeader()->setDefaultSectionSize(QFontMetrics(font()).height() + 8);
    m_eventsView->horizontalHeader()->setStretchLastSection(true);
    m_eventsView->horizontalHeader()->setHighlightSections(false);
    m_eventsView->horizontalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
    layout->addWidget(m_eventsView, 1);
    m_eventsEmpty = makeLabel(TextRole::SectionHint, card);
    m_eventsEmpty->setAlignment(Qt::AlignCenter);
    m_eventsEmpty->setWordWrap(true);
    layout->addWidget(m_eventsEmpty, 1);
    const auto showPlaceholder = [this] {
        const bool empty = m_eventsModel->rowCount() == 0;
        m_eventsView->setVisible(!empty);
        m_eventsEmpty->setVisible(empty);
    };
    connect(m_eventsModel, &QAbstractItemModel::rowsInserted, this, showPlaceholder);
    connect(m_eventsModel, &QAbstractItemModel::rowsRemoved, this, showPlaceholder);
    showPlaceholder();
    return card;
}

QString MainWindow::selectedProvider() const
{
    const QModelIndexList rows = m_matrixView->selectionModel()->selectedRows();
    if (rows.isEmpty())
        return {};
    return rows.first().data(HealthMatrixModel::ProviderIdRole).toString();
}

bool MainWindow::selectProvider(const QString &providerId)
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

QPushButton *MainWindow::actionButton(ProviderAction action) const
{
    for (const auto &[buttonAction, button] : m_actionButtons) {
        if (buttonAction == action)
            return button;
    }
    return nullptr;
}

void MainWindow::refreshActions()
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

void MainWindow::applyAction(ProviderAction action)
{
    const QString id = selectedProvider();
    if (!id.isEmpty())
        m_bridge.applyProviderAction(id, action);
}

void MainWindow::showMatrixMenu(const QPoint &position)
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

void MainWindow::retranslateUi()
{
    setWindowTitle(tr("Switchyard"));
    m_tabs->setTabText(0, tr("Overview"));
    m_tabs->setTabText(1, tr("Routes"));
    m_controls->setWindowTitle(tr("Controls"));
    const QFont brandFont = scaledFont(font(), 1.3, QFont::Bold);
    m_brand->setText(QStringLiteral("<span style=\"font-size:%1; font-weight:700;\">%2</span>"
                                    "&nbsp;&nbsp;<span style=\"color:#6b7280;\">%3</span>")
                         .arg(cssFontSize(brandFont), tr("Switchyard").toHtmlEscaped(),
                              tr("Gateway console").toHtmlEscaped()));
    m_demoToggle->setText(tr("Demo traffic"));
    m_demoToggle->setToolTip(
        tr("Send simulated client requests through the gateway, mixed streamed and not"));
    m_rateLabel->setText(tr("&Rate"));
    m_rateSpin->setSuffix(tr(" req/s"));
    m_rateSpin->setToolTip(tr("Demo traffic rate, in requests per second"));

    m_totalCard.caption->setText(tr("Total requests"));
    m_rateCard.caption->setText(tr("Request rate"));
    m_inFlightCard.caption->setText(tr("In flight"));
    m_providersCard.caption->setText(tr("Providers up"));

    m_chartTitle->setText(tr("Requests per second"));
    m_chartHint->setText(tr("last 60 s"));
    m_matrixTitle->setText(tr("Providers"));
    m_matrixHint->setText(tr("Select a provider to act on it; right-click for the same actions"));
    m_eventsTitle->setText(tr("Breaker timeline"));
    m_eventsHint->setText(tr("newest first"));
    m_eventsEmpty->setText(tr("No breaker has changed state yet. Trip a provider or start a "
                              "drill to see its breaker open, probe and close here."));
    m_eventsModel->retranslate();
    m_drills->retranslate();
    refreshActions();

    m_model->retranslate();
    fitMatrixColumns();
    refreshSummary();
    refreshStatusBar();
}

void MainWindow::fitMatrixColumns()
{
    // Wide enough for the header (bold, plus the sort arrow) and for typical values, so no
    // column truncates in English or Chinese; Models takes whatever is left.
    const QFontMetrics body(m_matrixView->font());
    QFont headerFont = m_matrixView->horizontalHeader()->font();
    headerFont.setWeight(QFont::DemiBold);
    const QFontMetrics header(headerFont);
    const auto fit = [&](int column, const QString &typicalValue) {
        const QString title = m_model->headerData(column, Qt::Horizontal).toString();
        const int width = std::max(header.horizontalAdvance(title) + 40,
                                   body.horizontalAdvance(typicalValue) + 28);
        m_matrixView->horizontalHeader()->resizeSection(column, width);
    };
    fit(HealthMatrixModel::ProviderColumn, QStringLiteral("provider-name-long"));
    // The pill adds a dot and padding around the longest state name.
    // The pill adds a dot and padding around the longest status with its countdown.
    fit(HealthMatrixModel::StateColumn,
        HealthMatrixModel::statusName(HealthMatrixModel::ProviderStatus::Ramping) +
            QStringLiteral(" 100%xxxxxx"));

    const QLocale locale;
    fit(HealthMatrixModel::InFlightColumn, locale.toString(1000));
    fit(HealthMatrixModel::RequestsColumn, locale.toString(1000000));
    fit(HealthMatrixModel::ErrorsColumn, locale.toString(10000) + QStringLiteral(" (") +
                                             locale.toString(10.0, 'f', 1) + QStringLiteral("%)"));
    fit(HealthMatrixModel::LatencyP50Column, HealthMatrixModel::formatLatency(999.0));
    fit(HealthMatrixModel::LatencyP95Column, HealthMatrixModel::formatLatency(999.0));
    fit(HealthMatrixModel::TimeToFirstTokenP50Column, HealthMatrixModel::formatLatency(999.0));

    const auto fitEvents = [&](int column, const QString &typicalValue) {
        const QString title = m_eventsModel->headerData(column, Qt::Horizontal).toString();
        m_eventsView->horizontalHeader()->resizeSection(
            column, std::max(header.horizontalAdvance(title) + 24,
                             body.horizontalAdvance(typicalValue) + 20));
    };
    fitEvents(BreakerEventsModel::TimeColumn, QStringLiteral("00:00:00"));
    fitEvents(BreakerEventsModel::ProviderColumn, QStringLiteral("provider-name"));
    fitEvents(BreakerEventsModel::ChangeColumn,
              BreakerEventsModel::breakerStateName(BreakerState::HalfOpen) + QStringLiteral(" → ") +
                  BreakerEventsModel::breakerStateName(BreakerState::Closed));
}

void MainWindow::changeEvent(QEvent *event)
{
    if (event->type() == QEvent::LanguageChange)
        retranslateUi();
    QMainWindow::changeEvent(event);
}

void MainWindow::applySnapshot(const EngineSnapshot &snapshot)
{
    m_snapshot = snapshot;
    m_model->applySnapshot(snapshot);
    m_eventsModel->applyEvents(snapshot.recentBreakerEvents);
    m_drills->applySnapshot(snapshot);
    refreshActions();
    m_rateChart->addSample(double(m_clock.elapsed()) / 1000.0, snapshot.requestsPerSecond);
    syncDemoControls(snapshot);
    refreshSummary();
    refreshStatusBar();
}

void MainWindow::refreshSummary()
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
    m_inFlightCard.hint->setText(tr("across all providers"));

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

void MainWindow::refreshStatusBar()
{
    QString address = m_snapshot.listenAddress;
    if (address.isEmpty())
        address = m_bridge.listenAddress();
    if (address.isEmpty()) {
        m_listenLabel->setText(tr("Starting the gateway…"));
    } else {
        m_listenLabel->setText(
            tr("Listening on %1  ·  OpenAI clients use http://%1/v1").arg(address));
    }
    m_statusRate->setText(
        tr("%1 req/s").arg(QLocale().toString(m_snapshot.requestsPerSecond, 'f', 1)));
}

void MainWindow::syncDemoControls(const EngineSnapshot &snapshot)
{
    if (m_sinceLocalDemoChange.isValid() &&
        m_sinceLocalDemoChange.elapsed() < localDemoChangeGraceMs)
        return;
    if (m_demoToggle->isChecked() != snapshot.demoTrafficRunning) {
        const QSignalBlocker blocker(m_demoToggle);
        m_demoToggle->setChecked(snapshot.demoTrafficRunning);
    }
    const int engineRate = int(std::lround(snapshot.demoRequestsPerSecond));
    if (snapshot.demoTrafficRunning && !m_rateSpin->hasFocus() && engineRate >= minimumDemoRate &&
        engineRate != m_rateSpin->value()) {
        const QSignalBlocker blocker(m_rateSpin);
        m_rateSpin->setValue(engineRate);
    }
}

void MainWindow::sendDemoTraffic()
{
    m_sinceLocalDemoChange.start();
    m_bridge.setDemoTraffic(m_demoToggle->isChecked(), double(m_rateSpin->value()));
}

} // namespace switchyard::ui
