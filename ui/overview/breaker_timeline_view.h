#pragma once

#include "ui/overview/breaker_timeline_model.h"
#include "ui/overview/timeline_axis.h"

#include <QWidget>
#include <optional>

namespace switchyard::ui {

// The breaker timeline drawn as lanes, one per provider, on a shared time axis: a band per
// breaker state (closed, ramping, half-open, open), a marker per event with its reason on hover,
// and the operator's disabled or draining state as a hatched stripe under the band, so it never
// hides what the breaker did. The wheel zooms around the cursor, a drag pans, a double-click
// returns to following the present. It paints what the model holds; refresh() after each
// snapshot, so it repaints at the snapshots' rate (at most 10 Hz).
class BreakerTimelineView : public QWidget {
    Q_OBJECT
public:
    explicit BreakerTimelineView(const BreakerTimelineModel &model, QWidget *parent = nullptr);

    void refresh();
    void followNow();

    const TimelineAxis &axis() const { return m_axis; }
    // Where the plot and each lane's breaker band and operator stripe are, in widget pixels.
    QRectF plotRect() const;
    QRectF bandRect(int lane) const;
    QRectF operatorStripeRect(int lane) const;
    // What hovering at `position` shows; empty where there is nothing to explain.
    QString toolTipAt(const QPointF &position) const;

    static QString laneStateName(LaneState state);
    static QString operatorStateName(OperatorState state);
    static QString breakerStateName(BreakerState state);
    static QColor laneStateColor(LaneState state);
    // "45 s", "2 min 5 s", "1 h 3 min": how long a band lasted.
    static QString formatDuration(qint64 milliseconds);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void followingChanged(bool following);
    void spanChanged(qint64 spanMs);

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void resizeEvent(QResizeEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseReleaseEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;
    void leaveEvent(QEvent *event) override;

private:
    struct Geometry {
        double legendHeight = 0;
        double axisHeight = 0;
        double labelWidth = 0;
        double laneHeight = 0;
        double bandHeight = 0;
        double stripeHeight = 0;
    };
    Geometry geometry() const;
    int laneAt(double y) const;
    const LaneMarker *markerNear(const TimelineLane &lane, double x) const;
    void afterAxisMoved(bool wasFollowing, qint64 oldSpanMs);

    void paintLegend(QPainter &painter, const QRectF &area) const;
    void paintLane(QPainter &painter, int index, const TimelineLane &lane) const;
    void paintAxis(QPainter &painter) const;

    const BreakerTimelineModel &m_model;
    TimelineAxis m_axis;
    std::optional<double> m_dragX;
    std::optional<double> m_hoverX;
};

} // namespace switchyard::ui
