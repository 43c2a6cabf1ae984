#pragma once

#include "control/engine_snapshot.h"
#include "timing/clock.h"
#include "ui/overview/provider_traffic.h"

#include <QList>
#include <QPair>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QFrame;
class QLabel;
class QPushButton;
class QSortFilterProxyModel;
class QTableView;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class BreakerEventsModel;
class BreakerTimelinePanel;
class DrillsPanel;
class HealthMatrixModel;
class ProviderTrafficChart;
class RequestRateChart;

// The Overview page: the summary cards, the live request-rate and traffic-by-provider charts, the
// provider health matrix with its operator actions, the failover drills and the breaker
// timeline. It shows the snapshots the main window hands it, stamped with `clock` as they
// arrive, and sends operator actions and drill knobs through the bridge.
class OverviewPage final : public QWidget {
    Q_OBJECT
public:
    explicit OverviewPage(EngineBridge &bridge, const timing::Clock &clock,
                          QWidget *parent = nullptr);
    ~OverviewPage() override;

    HealthMatrixModel *healthMatrixModel() const { return m_model; }
    DrillsPanel *drillsPanel() const { return m_drills; }
    BreakerTimelinePanel *breakerTimeline() const { return m_timeline; }
    BreakerEventsModel *breakerEventsModel() const;
    const ProviderTrafficRates &providerTraffic() const { return m_trafficRates; }
    // Selects the matrix row of a provider, as a click would; false when it is not shown.
    bool selectProvider(const QString &providerId);
    // The operator action buttons above the matrix, for the selected provider.
    QPushButton *actionButton(ProviderAction action) const;

    void applySnapshot(const EngineSnapshot &snapshot);

protected:
    void changeEvent(QEvent *event) override;

private:
    struct StatCard {
        QFrame *frame = nullptr;
        QLabel *caption = nullptr;
        QLabel *value = nullptr;
        QLabel *hint = nullptr;
    };

    QWidget *buildSummary();
    QWidget *buildChartCard();
    QWidget *buildTrafficCard();
    QWidget *buildMatrixCard();
    StatCard makeStatCard(const QString &objectName);
    QString selectedProvider() const;
    void refreshActions();
    void applyAction(ProviderAction action);
    void showMatrixMenu(const QPoint &position);
    void retranslateUi();
    void fitMatrixColumns();
    void refreshSummary();

    EngineBridge &m_bridge;
    EngineSnapshot m_snapshot;

    StatCard m_totalCard;
    StatCard m_rateCard;
    StatCard m_inFlightCard;
    StatCard m_providersCard;

    const timing::Clock &m_clock; // its wall time: the clock the engine stamps its events with
    qint64 m_startedAtMs = 0;
    qint64 m_lastSnapshotAtMs = 0; // never runs backwards, whatever the wall clock does

    QLabel *m_chartTitle = nullptr;
    QLabel *m_chartHint = nullptr;
    RequestRateChart *m_rateChart = nullptr;

    QLabel *m_trafficTitle = nullptr;
    QLabel *m_trafficHint = nullptr;
    ProviderTrafficRates m_trafficRates;
    ProviderTrafficChart *m_trafficChart = nullptr;

    QLabel *m_matrixTitle = nullptr;
    QLabel *m_matrixHint = nullptr;
    QList<QPair<ProviderAction, QPushButton *>> m_actionButtons;
    HealthMatrixModel *m_model = nullptr;
    QSortFilterProxyModel *m_sortModel = nullptr;
    QTableView *m_matrixView = nullptr;

    DrillsPanel *m_drills = nullptr;
    BreakerTimelinePanel *m_timeline = nullptr;
};

} // namespace switchyard::ui
