#include "ui/shell/main_window.h"

#include "bridge/engine_bridge.h"
#include "ui/alerts/alert_banner.h"
#include "ui/alerts/alerts_page.h"
#include "ui/common/widget_helpers.h"
#include "ui/config/config_page.h"
#include "ui/fleet/fleet_page.h"
#include "ui/keys/keys_page.h"
#include "ui/overview/overview_page.h"
#include "ui/queue/queue_page.h"
#include "ui/routes/routes_view.h"
#include "ui/traces/traces_page.h"
#include "ui/usage/usage_page.h"

#include <QDateTime>
#include <QEvent>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>
#include <cmath>

namespace switchyard::ui {

namespace {

constexpr int defaultDemoRate = 10;
constexpr int minimumDemoRate = 1;
constexpr int maximumDemoRate = 200;
constexpr qint64 localDemoChangeGraceMs = 2000;

} // namespace

MainWindow::MainWindow(EngineBridge &bridge, QWidget *parent, const timing::Clock &clock)
    : QMainWindow(parent), m_bridge(bridge), m_snapshot(bridge.lastSnapshot()), m_clock(clock)
{
    setObjectName(QStringLiteral("switchyardMainWindow"));
    // The only style sheet of the console: pages and panels are styled through it alone.
    setStyleSheet(consoleStyleSheet());

    buildControls();

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("consoleTabs"));
    m_tabs->setDocumentMode(true);
    m_overview = new OverviewPage(m_bridge, clock, m_tabs);
    m_tabs->addTab(m_overview, QString());
    m_routesView = new RoutesView(m_bridge, m_tabs);
    m_tabs->addTab(m_routesView, QString());
    m_tracesPage = new TracesPage(m_bridge, m_tabs);
    m_tabs->addTab(m_tracesPage, QString());
    m_configPage = new ConfigPage(m_bridge, m_tabs);
    m_tabs->addTab(m_configPage, QString());
    m_alertsPage = new AlertsPage(m_tabs);
    m_tabs->addTab(m_alertsPage, QString());
    m_keysPage = new KeysPage(m_bridge, m_tabs);
    m_tabs->addTab(m_keysPage, QString());
    m_usagePage = new UsagePage(m_bridge, clock, m_tabs);
    m_tabs->addTab(m_usagePage, QString());
    m_fleetPage = new FleetPage(m_tabs);
    m_tabs->addTab(m_fleetPage, QString());
    m_queuePage = new QueuePage(m_bridge, m_tabs);
    m_tabs->addTab(m_queuePage, QString());

    // The banner spans every page, above the tabs, so no page hides a raised alert.
    auto *central = new QWidget(this);
    auto *centralLayout = new QVBoxLayout(central);
    centralLayout->setContentsMargins(0, 0, 0, 0);
    centralLayout->setSpacing(0);
    m_alertBanner = new AlertBanner(central);
    centralLayout->addWidget(m_alertBanner);
    centralLayout->addWidget(m_tabs, 1);
    setCentralWidget(central);
    connect(m_alertBanner, &AlertBanner::viewRequested, this,
            [this] { m_tabs->setCurrentWidget(m_alertsPage); });

    m_listenLabel = new QLabel(this);
    m_listenLabel->setObjectName(QStringLiteral("listenLabel"));
    m_listenLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_exposureWarning = new QLabel(this);
    m_exposureWarning->setObjectName(QStringLiteral("exposureWarning"));
    m_exposureWarning->setVisible(false);
    m_statusRate = new QLabel(this);
    m_statusRate->setObjectName(QStringLiteral("statusRate"));
    statusBar()->setSizeGripEnabled(false);
    statusBar()->addWidget(m_exposureWarning);
    statusBar()->addWidget(m_listenLabel, 1);
    m_ledgerWarning = makeLabel(TextRole::Hint, this);
    m_ledgerWarning->setObjectName(QStringLiteral("ledgerWarning"));
    setTone(m_ledgerWarning, Tone::Bad);
    m_ledgerWarning->hide();
    statusBar()->addPermanentWidget(m_ledgerWarning);
    m_fleetLabel = makeLabel(TextRole::Hint, this);
    m_fleetLabel->setObjectName(QStringLiteral("fleetLabel"));
    m_fleetLabel->hide();
    statusBar()->addPermanentWidget(m_fleetLabel);
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
    // A dot that is grey while demo traffic is off and white on the green "on" button.
    m_demoToggle->setIcon(onOffDotIcon(QColor(0x9c, 0xa3, 0xaf), Qt::white, devicePixelRatioF()));
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

void MainWindow::retranslateUi()
{
    setWindowTitle(tr("Switchyard"));
    m_tabs->setTabText(0, tr("Overview"));
    m_tabs->setTabText(1, tr("Routes"));
    m_tabs->setTabText(2, tr("Traces"));
    m_tabs->setTabText(m_tabs->indexOf(m_configPage), tr("Config"));
    m_tabs->setTabText(m_tabs->indexOf(m_keysPage), tr("Keys"));
    m_tabs->setTabText(m_tabs->indexOf(m_usagePage), tr("Usage"));
    m_tabs->setTabText(m_tabs->indexOf(m_fleetPage), tr("Fleet"));
    m_tabs->setTabText(m_tabs->indexOf(m_queuePage), tr("Queue"));
    refreshAlertsTab();
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
    refreshStatusBar();
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
    m_overview->applySnapshot(snapshot);
    m_alertBanner->applyAlerts(snapshot.alerts.active);
    m_alertsPage->applyAlerts(snapshot.alerts);
    refreshAlertsTab();
    m_keysPage->applySnapshot(snapshot);
    m_fleetPage->applySnapshot(snapshot, m_clock.msSinceEpoch());
    m_queuePage->applySnapshot(snapshot);
    syncDemoControls(snapshot);
    refreshStatusBar();
}

void MainWindow::refreshAlertsTab()
{
    const int active = int(m_snapshot.alerts.active.size());
    //: The Alerts tab; with alerts raised it says how many, e.g. "Alerts (2)"
    m_tabs->setTabText(m_tabs->indexOf(m_alertsPage),
                       active > 0 ? tr("Alerts (%1)").arg(active) : tr("Alerts"));
}

void MainWindow::refreshStatusBar()
{
    QString address = m_snapshot.listenAddress;
    if (address.isEmpty())
        address = m_bridge.listenAddress();
    if (address.isEmpty()) {
        m_listenLabel->setText(tr("Starting the gateway…"));
    } else if (m_snapshot.tlsEnabled) {
        m_listenLabel->setText(
            tr("Listening on %1  ·  OpenAI clients use https://%1/v1").arg(address));
    } else {
        m_listenLabel->setText(
            tr("Listening on %1  ·  OpenAI clients use http://%1/v1").arg(address));
    }
    // isHidden, not isVisible: the window itself may not be shown yet.
    if (m_exposureWarning->isHidden() == m_snapshot.exposedWithoutTls)
        m_exposureWarning->setVisible(m_snapshot.exposedWithoutTls);
    m_exposureWarning->setText(tr("⚠ Open to the network without TLS"));
    m_exposureWarning->setToolTip(
        tr("Switchyard listens on %1, which other machines can reach, in plain HTTP: API keys, "
           "the admin token and prompts cross the network readable. Configure `tls` with a "
           "certificate and key, or listen on 127.0.0.1 behind a proxy that terminates TLS.")
            .arg(address));
    const QLocale locale;
    //: %1 how late the engine thread ran a due timer, in ms; %2 requests per second
    m_statusRate->setText(tr("engine lag %1 ms  ·  %2 req/s")
                              .arg(locale.toString(m_snapshot.loopLagMs, 'f', 1),
                                   locale.toString(m_snapshot.requestsPerSecond, 'f', 1)));
    QString tip = tr("Engine lag: how late the engine thread ran a timer that was due, at the "
                     "last tick. Every request is routed and relayed on that thread: more than a "
                     "few milliseconds means requests wait for the gateway itself.");
    if (const telemetry::SpanExportCounts &spans = m_snapshot.spanExport; spans.enabled) {
        tip += QLatin1Char('\n') +
               tr("OpenTelemetry export: %1 spans exported, %2 dropped (queue full), %3 given "
                  "up, %4 failed exports, %5 queued")
                   .arg(locale.toString(spans.exportedSpans), locale.toString(spans.droppedSpans),
                        locale.toString(spans.abandonedSpans), locale.toString(spans.failedExports),
                        locale.toString(spans.queuedSpans));
    }
    m_statusRate->setToolTip(tip);
    // Spend still counts in memory, but a restart would lose it: said on every page.
    const usage::UsageLedgerState &ledger = m_snapshot.usageLedger;
    m_ledgerWarning->setVisible(!ledger.writable);
    m_ledgerWarning->setText(tr("Usage ledger not written"));
    m_ledgerWarning->setToolTip(ledger.problem);
    refreshFleetLabel();
}

void MainWindow::refreshFleetLabel()
{
    const FleetLinkState &fleet = m_snapshot.fleet;
    m_fleetLabel->setVisible(fleet.enabled);
    if (!fleet.enabled)
        return;
    if (fleet.linkUp) {
        setTone(m_fleetLabel, Tone::Neutral);
        //: The status bar of a node in a fleet: %1 the fleet's name, %n its live nodes
        m_fleetLabel->setText(
            tr("Fleet %1  ·  %n node(s)", nullptr, fleet.liveNodes).arg(fleet.fleet));
        m_fleetLabel->setToolTip(tr("This node is %1 in fleet %2, sharing keys, limits and "
                                    "config through %3.")
                                     .arg(fleet.node, fleet.fleet, fleet.redis));
        return;
    }
    // Every node keeps serving from what it holds; what it changes waits for the link.
    setTone(m_fleetLabel, Tone::Bad);
    const QString since = QDateTime::fromMSecsSinceEpoch(fleet.linkDownSinceMs)
                              .toLocalTime()
                              .toString(QStringLiteral("HH:mm:ss"));
    //: %1 the local time the link to the fleet's Redis went down
    m_fleetLabel->setText(tr("Fleet link down since %1").arg(since));
    m_fleetLabel->setToolTip(tr("%1\nThis node keeps serving from its own copy of the keys, "
                                "limits and config; changes made here are sent when the link "
                                "is back.")
                                 .arg(fleet.problem));
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
