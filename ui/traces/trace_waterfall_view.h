#pragma once

#include "ui/traces/trace_waterfall_layout.h"

#include <QWidget>

namespace switchyard::ui {

// One request's waterfall: a row per span on a shared axis of milliseconds from the request's
// start. Gateway steps are quiet grey bars; upstream attempts are coloured by how they ended;
// waits (a backoff, a 429's cool-down) are hatched gaps with their reason; point events (first
// byte, retry, usage, completion) are diamonds. Under them the stream's chunk arrivals are ticks
// (the arrival rhythm), and beside the legend a small histogram of the gaps between them.
// Hovering a row explains it.
class TraceWaterfallView : public QWidget {
    Q_OBJECT
public:
    explicit TraceWaterfallView(QWidget *parent = nullptr);

    void setTrace(const telemetry::Trace &trace);
    void clear();
    const telemetry::Trace &trace() const { return m_trace; }
    bool hasTrace() const { return m_hasTrace; }

    // The layout for the current size, in plot coordinates (add plotRect().left()).
    WaterfallLayout layout() const;
    QRectF plotRect() const;
    // The span row `index` occupies, in widget pixels.
    QRectF rowRect(int index) const;
    QString toolTipAt(const QPointF &position) const;

    static QString attemptToneName(AttemptTone tone);
    // "0", "250 ms", "1.5 s": an axis label or a duration.
    static QString formatMicros(qint64 micros);
    // The text beside a span's bar: what happened and how long it took.
    static QString spanCaption(const telemetry::Span &span);

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;

private:
    int contentHeight() const;
    void paintLegend(QPainter &painter, const QRectF &area) const;

    telemetry::Trace m_trace;
    bool m_hasTrace = false;
};

} // namespace switchyard::ui
