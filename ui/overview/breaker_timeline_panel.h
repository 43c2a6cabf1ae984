#pragma once

#include "ui/overview/breaker_timeline_model.h"

#include <QFrame>

QT_BEGIN_NAMESPACE
class QLabel;
class QPushButton;
class QStackedWidget;
class QTableView;
QT_END_NAMESPACE

namespace switchyard::ui {

class BreakerEventsModel;
class BreakerTimelineView;

// The Overview's breaker card: the lanes of the breaker timeline, and the same events as a table
// of transitions, newest first, one switch apart. The Live button shows whether the lanes follow
// the present and brings them back to it.
class BreakerTimelinePanel : public QFrame {
    Q_OBJECT
public:
    explicit BreakerTimelinePanel(QWidget *parent = nullptr);
    ~BreakerTimelinePanel() override;

    // `receivedAtMs`: when the snapshot arrived, in milliseconds since the epoch.
    void applySnapshot(const EngineSnapshot &snapshot, qint64 receivedAtMs);
    void retranslate();

    const BreakerTimelineModel &timelineModel() const { return m_timeline; }
    BreakerTimelineView *timelineView() const { return m_view; }
    BreakerEventsModel *eventsModel() const { return m_eventsModel; }
    QPushButton *liveButton() const { return m_live; }
    // Lanes (false) or the table of transitions (true).
    void showTransitions(bool transitions);
    bool showsTransitions() const;

private:
    void refreshHint();
    void refreshLive();
    void refreshPlaceholder();
    void fitColumns();

    BreakerTimelineModel m_timeline;

    QLabel *m_title = nullptr;
    QPushButton *m_lanesButton = nullptr;
    QPushButton *m_transitionsButton = nullptr;
    QLabel *m_hint = nullptr;
    QPushButton *m_live = nullptr;
    QStackedWidget *m_pages = nullptr;
    BreakerTimelineView *m_view = nullptr;
    QWidget *m_transitionsPage = nullptr;
    BreakerEventsModel *m_eventsModel = nullptr;
    QTableView *m_eventsView = nullptr;
    QLabel *m_eventsEmpty = nullptr;
};

} // namespace switchyard::ui
