#pragma once

#include "alerts/alert_types.h"

#include <QFrame>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
QT_END_NAMESPACE

namespace switchyard::ui {

// The strip across the main window while an alert is raised: the most severe alert (the newest
// of them) with its rule, subject and since when, how many more there are, a way to the Alerts
// page, and Dismiss. Coloured by the headline's severity. Dismiss hides it until an alert is
// raised that was not raised when it was dismissed.
class AlertBanner final : public QFrame {
    Q_OBJECT
public:
    explicit AlertBanner(QWidget *parent = nullptr);

    void applyAlerts(const QList<alerts::ActiveAlert> &active);
    void dismiss();
    // Whether it shows an alert now (it is hidden without one, and once dismissed).
    bool showsAlert() const { return m_showing; }
    QString headlineText() const;
    QString detailText() const;

Q_SIGNALS:
    void viewRequested();

protected:
    void changeEvent(QEvent *event) override;

private:
    void refresh();
    void retranslateUi();

    QList<alerts::ActiveAlert> m_active;
    quint64 m_dismissedUpTo = 0; // the newest raise seen when Dismiss was pressed
    bool m_showing = false;
    QLabel *m_severity = nullptr;
    QLabel *m_headline = nullptr;
    QLabel *m_detail = nullptr;
    QPushButton *m_view = nullptr;
    QPushButton *m_dismiss = nullptr;
};

} // namespace switchyard::ui
