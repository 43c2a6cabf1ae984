#pragma once

#include "control/engine_snapshot.h"

#include <QElapsedTimer>
#include <QMainWindow>

QT_BEGIN_NAMESPACE
class QFrame;
class QMenu;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTabWidget;
class QTableView;
class QToolBar;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class BreakerEventsModel;
class DrillsPanel;
class HealthMatrixModel;
class RequestRateChart;
class RoutesView;

// The operations console: a summary strip, a live request-rate chart and the provider health
// matrix, refreshed from engine snapshots (at most 10 per second), plus the demo traffic
// controls. It only reads snapshots and sends commands through the bridge.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(EngineBridge &bridge, QWidget *parent = nullptr);
    ~MainWindow() override;

    HealthMatrixModel *healthMatrixModel() const { return m_model; }
    DrillsPanel *drillsPanel() const { return m_drills; }
    RoutesView *routesView() const { return m_routesView; }
    BreakerEventsModel *breakerEventsModel() const { return m_eventsModel; }
    // Selects the matrix row of a provider, as a click would; false when it is not shown.
    bool selectProvider(const QString &providerId);
    // The operator action buttons above the matrix, for the selected provider.
    QPushButton *actionButton(ProviderAction action) const;

public Q_SLOTS:
    void applySnapshot(const switchyard::EngineSnapshot &snapshot);

protected:
    void changeEvent(QEvent *event) override;

private:
    struct StatCard {
        QFrame *frame = nullptr;
        QLabel *caption = nullptr;
        QLabel *value = nullptr;
        QLabel *hint = nullptr;
    };

    void buildControls();
    QWidget *buildSummary();
    QWidget *buildChartCard();
    QWidget *buildMatrixCard();
    QWidget *buildEventsCard();
    QString selectedProvider() const;
    void refreshActions();
    void applyAction(ProviderAction action);
    void showMatrixMenu(const QPoint &position);
    StatCard makeStatCard(const QString &objectName);

    void retranslateUi();
    void fitMatrixColumns();
    void refreshSummary();
    void refreshStatusBar();
    void syncDemoControls(const EngineSnapshot &snapshot);
    void sendDemoTraffic();

    EngineBridge &m_bridge;
    EngineSnapshot m_snapshot;

    HealthMatrixModel *m_model = nullptr;
    QSortFilterProxyModel *m_sortModel = nullptr;
    QTableView *m_matrixView = nullptr;
    RequestRateChart *m_rateChart = nullptr;

    QToolBar *m_controls = nullptr;
    QLabel *m_brand = nullptr;
    QPushButton *m_demoToggle = nullptr;
    QLabel *m_rateLabel = nullptr;
    QSpinBox *m_rateSpin = nullptr;

    StatCard m_totalCard;
    StatCard m_rateCard;
    StatCard m_inFlightCard;
    StatCard m_providersCard;

    QLabel *m_chartTitle = nullptr;
    QLabel *m_chartHint = nullptr;
    QLabel *m_matrixTitle = nullptr;
    QLabel *m_matrixHint = nullptr;
    QList<QPair<ProviderAction, QPushButton *>> m_actionButtons;
    DrillsPanel *m_drills = nullptr;
    QTabWidget *m_tabs = nullptr; // "Overview" and "Routes"
    RoutesView *m_routesView = nullptr;
    BreakerEventsModel *m_eventsModel = nullptr;
    QTableView *m_eventsView = nullptr;
    QLabel *m_eventsTitle = nullptr;
    QLabel *m_eventsHint = nullptr;
    QLabel *m_eventsEmpty = nullptr;

    QLabel *m_listenLabel = nullptr;
    QLabel *m_statusRate = nullptr;

    QElapsedTimer m_clock; // time base of the rate chart
    // Snapshots lag a command by up to one engine tick; for a moment after the user flips the
    // toggle, the snapshot's view of demo traffic is older than the user's and must not win.
    QElapsedTimer m_sinceLocalDemoChange;
};

} // namespace switchyard::ui
