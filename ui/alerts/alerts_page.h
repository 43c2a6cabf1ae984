#pragma once

#include "alerts/alert_types.h"

#include <QWidget>

QT_BEGIN_NAMESPACE
class QFrame;
class QLabel;
class QTableView;
class QVBoxLayout;
QT_END_NAMESPACE

namespace switchyard::ui {

class ActiveAlertsModel;
class AlertEventsModel;

// The Alerts page: the alerts raised now and the newest raised and cleared events, with what the
// webhook did with them. Fed the snapshot's alerts by the main window, at most ten times a
// second; both tables merge rows in place.
class AlertsPage final : public QWidget {
    Q_OBJECT
public:
    explicit AlertsPage(QWidget *parent = nullptr);

    void applyAlerts(const alerts::AlertsState &state);
    ActiveAlertsModel *activeModel() const { return m_activeModel; }
    AlertEventsModel *eventsModel() const { return m_eventsModel; }

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void refreshHints();

    alerts::AlertsState m_state;
    ActiveAlertsModel *m_activeModel = nullptr;
    AlertEventsModel *m_eventsModel = nullptr;
    QVBoxLayout *m_page = nullptr;
    QFrame *m_activeCard = nullptr;
    QLabel *m_activeTitle = nullptr;
    QLabel *m_activeHint = nullptr;
    QLabel *m_allClear = nullptr;
    QTableView *m_activeTable = nullptr;
    QLabel *m_eventsTitle = nullptr;
    QLabel *m_eventsHint = nullptr;
    QTableView *m_eventsTable = nullptr;
};

} // namespace switchyard::ui
