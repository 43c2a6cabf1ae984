#pragma once

#include "control/engine_snapshot.h"
#include "timing/clock.h"

#include <QElapsedTimer>
#include <QMainWindow>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QToolBar;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class AlertBanner;
class AlertsPage;
class OverviewPage;
class RoutesView;
class TracesPage;
class FleetPage;
class QueuePage;
class KeysPage;
class UsagePage;
class ConfigPage;

// The console's shell: the tool bar with the demo traffic controls, the alert banner, the
// Overview, Routes, Traces and Alerts pages as tabs, the status bar, and the one style sheet. It
// hands each engine snapshot (at most 10 per second) to the Overview page; the pages send their
// commands through the bridge.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // `clock` stamps each snapshot as it arrives and says what "today" is for the usage page;
    // tests step a manual one. It must outlive the window.
    explicit MainWindow(EngineBridge &bridge, QWidget *parent = nullptr,
                        const timing::Clock &clock = timing::SteadyClock::instance());
    ~MainWindow() override;

    OverviewPage *overviewPage() const { return m_overview; }
    RoutesView *routesView() const { return m_routesView; }
    TracesPage *tracesPage() const { return m_tracesPage; }
    KeysPage *keysPage() const { return m_keysPage; }
    FleetPage *fleetPage() const { return m_fleetPage; }
    QueuePage *queuePage() const { return m_queuePage; }
    UsagePage *usagePage() const { return m_usagePage; }
    ConfigPage *configPage() const { return m_configPage; }
    AlertsPage *alertsPage() const { return m_alertsPage; }
    AlertBanner *alertBanner() const { return m_alertBanner; }
    QTabWidget *pageTabs() const { return m_tabs; }

public Q_SLOTS:
    void applySnapshot(const switchyard::EngineSnapshot &snapshot);

protected:
    void changeEvent(QEvent *event) override;

private:
    void buildControls();
    void retranslateUi();
    void refreshStatusBar();
    void refreshFleetLabel();
    void refreshAlertsTab();
    void syncDemoControls(const EngineSnapshot &snapshot);
    void sendDemoTraffic();

    EngineBridge &m_bridge;
    EngineSnapshot m_snapshot;

    QToolBar *m_controls = nullptr;
    QLabel *m_brand = nullptr;
    QPushButton *m_demoToggle = nullptr;
    QLabel *m_rateLabel = nullptr;
    QSpinBox *m_rateSpin = nullptr;

    // Overview, Routes, Traces, Config, Alerts, Keys, Usage, Fleet, Queue
    QTabWidget *m_tabs = nullptr;
    OverviewPage *m_overview = nullptr;
    RoutesView *m_routesView = nullptr;
    TracesPage *m_tracesPage = nullptr;
    KeysPage *m_keysPage = nullptr;
    FleetPage *m_fleetPage = nullptr;
    QueuePage *m_queuePage = nullptr;
    const timing::Clock &m_clock; // stamps "last seen" on the Fleet page
    UsagePage *m_usagePage = nullptr;
    QLabel *m_ledgerWarning = nullptr; // shown while the usage ledger cannot write
    QLabel *m_fleetLabel = nullptr;    // a node of a fleet: its link and the live nodes
    ConfigPage *m_configPage = nullptr;
    AlertsPage *m_alertsPage = nullptr;
    AlertBanner *m_alertBanner = nullptr; // above the pages, shown while an alert is raised

    QLabel *m_listenLabel = nullptr;
    // Shown while the listener takes other machines' connections in plain HTTP.
    QLabel *m_exposureWarning = nullptr;
    QLabel *m_statusRate = nullptr;

    // Snapshots lag a command by up to one engine tick; for a moment after the user flips the
    // toggle, the snapshot's view of demo traffic is older than the user's and must not win.
    // Real time rather than the console's clock: it measures the engine's lag behind a click.
    QElapsedTimer m_sinceLocalDemoChange;
};

} // namespace switchyard::ui
