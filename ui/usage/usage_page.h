#pragma once

#include "control/engine_snapshot.h"
#include "timing/clock.h"
#include "ui/usage/usage_series.h"

#include <QDateTime>
#include <QWidget>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QProgressBar;
class QTableView;
class QVBoxLayout;
class QTimer;
QT_END_NAMESPACE

namespace switchyard {
class EngineBridge;
}

namespace switchyard::ui {

class UsageChart;

// The console's Usage page: spend and tokens over today (by hour) or the last 7 or 30 days (by
// day), broken down by tenant or by model, the range's totals with the share of requests whose
// tokens were estimated, and today's top spenders. Reports come from the ledger through the
// bridge, asked for when the page is shown, when a choice changes and every 10 s while it is
// shown; each asks with a ticket and only the latest answer is drawn. A banner says so when the
// ledger cannot write to its database.
class UsagePage : public QWidget {
    Q_OBJECT
public:
    // `clock`'s UTC wall time says what "today" and "this month" are; it must outlive the page.
    explicit UsagePage(EngineBridge &bridge,
                       const timing::Clock &clock = timing::SteadyClock::instance(),
                       QWidget *parent = nullptr);

    static constexpr int kRefreshIntervalMs = 10000;

    QComboBox *rangeBox() const { return m_range; }
    QComboBox *breakdownBox() const { return m_breakdown; }
    UsageChart *spendChart() const { return m_spendChart; }
    UsageChart *tokensChart() const { return m_tokensChart; }
    TopSpendersModel *topSpenders() const { return m_topModel; }
    QTableView *topSpendersView() const { return m_topView; }
    QLabel *ledgerBanner() const { return m_banner; }
    QLabel *totalsLabel() const { return m_totals; }
    // One line per budget and window, from the snapshots: name, the bar of its used share.
    QList<QProgressBar *> budgetBars() const { return m_budgetBars; }
    const UsageChartData &chartData() const { return m_data; }

    UsageRange range() const;
    UsageBreakdown breakdown() const;

public Q_SLOTS:
    // Asks for both reports now.
    void refresh();
    void applySnapshot(const switchyard::EngineSnapshot &snapshot);

protected:
    void changeEvent(QEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void hideEvent(QHideEvent *event) override;

private:
    QWidget *buildChartCard(const QString &objectName, UsageChart *chart, QLabel **title);
    void retranslateUi();
    void usageLoaded(quint64 ticket, const usage::UsageReport &report);
    void redrawCharts();
    void refreshTotals();
    void refreshBanner();
    void refreshBudgets();

    EngineBridge &m_bridge;
    const timing::Clock &m_clock;
    QComboBox *m_range = nullptr;
    QComboBox *m_breakdown = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_rangeLabel = nullptr;
    QLabel *m_breakdownLabel = nullptr;
    QLabel *m_banner = nullptr;
    QLabel *m_totals = nullptr;
    QLabel *m_spendTitle = nullptr;
    QLabel *m_tokensTitle = nullptr;
    QLabel *m_topTitle = nullptr;
    QLabel *m_topHint = nullptr;
    UsageChart *m_spendChart = nullptr;
    UsageChart *m_tokensChart = nullptr;
    TopSpendersModel *m_topModel = nullptr;
    QTableView *m_topView = nullptr;
    QTimer *m_refreshTimer = nullptr;
    QLabel *m_budgetsTitle = nullptr;
    QLabel *m_budgetsHint = nullptr;
    QVBoxLayout *m_budgetRows = nullptr;
    QList<QLabel *> m_budgetLabels;
    QList<QProgressBar *> m_budgetBars;
    QList<usage::BudgetStatus> m_budgets;

    quint64 m_nextTicket = 1;
    quint64 m_chartTicket = 0; // the latest chart query's; older answers are dropped
    quint64 m_topTicket = 0;
    UsageRange m_chartRange = UsageRange::Today; // what m_data was asked for
    UsageChartData m_data;
    usage::UsageLedgerState m_ledger;
    QStringList m_fleetNodes; // the chart report's other nodes, in a fleet
    QString m_fleetProblem;   // why it is this node's only, in a fleet
};

} // namespace switchyard::ui
