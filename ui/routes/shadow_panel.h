#pragma once

#include "telemetry/trace_feed.h"

#include <QFrame>

QT_BEGIN_NAMESPACE
class QComboBox;
class QLabel;
class QTableView;
QT_END_NAMESPACE

namespace switchyard::ui {

class ShadowComparisonModel;

// The Routes page's shadow traffic (docs/routing.md, "Shadow traffic"): for the chosen route
// that mirrors requests, its mirrored live requests beside their shadow calls (requests, error
// rate, median latency, tokens and cost per request) and how the shadow differs. Counts start
// when the console opens; a feed that left records out (more finished between two refreshes than
// it carries) is said under the table.
class ShadowPanel final : public QFrame {
    Q_OBJECT
public:
    explicit ShadowPanel(QWidget *parent = nullptr);

    ShadowComparisonModel *model() const { return m_model; }
    QTableView *view() const { return m_view; }
    QComboBox *routeBox() const { return m_routeBox; }
    void applyFeed(const telemetry::TraceFeed &feed);

protected:
    void changeEvent(QEvent *event) override;

private:
    void retranslateUi();
    void refreshRoutes();
    void refreshControls();

    ShadowComparisonModel *m_model = nullptr;
    QLabel *m_title = nullptr;
    QComboBox *m_routeBox = nullptr;
    QLabel *m_empty = nullptr;
    QLabel *m_providers = nullptr;
    QLabel *m_leftOut = nullptr;
    QTableView *m_view = nullptr;
    quint64 m_recordsLeftOut = 0;
};

} // namespace switchyard::ui
