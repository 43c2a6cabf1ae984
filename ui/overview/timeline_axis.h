#pragma once

#include <QList>
#include <QtGlobal>

namespace switchyard::ui {

// The time-to-pixel maths of the breaker timeline, apart from any widget so it can be tested on
// its own: which stretch of time the plot shows, where an instant lands, how the wheel zooms and
// a drag pans, and where the axis ticks go. Times are milliseconds since the epoch; x runs from
// 0 at the plot's left edge to width() at its right edge.
//
// While following, the right edge stays on "now" as new data arrives. Zooming keeps the instant
// under the cursor where it is; looking into the past (zooming in away from the right edge, or
// dragging) stops following, and reaching "now" again resumes it.
class TimelineAxis {
public:
    static constexpr qint64 kDefaultSpanMs = 5 * 60 * 1000;
    static constexpr qint64 kMinimumSpanMs = 10 * 1000;
    // A view may reach this far before the oldest history, so "older history dropped" shows.
    static constexpr double kLeadInFraction = 0.2;

    explicit TimelineAxis(qint64 maximumSpanMs, qint64 spanMs = kDefaultSpanMs);

    qint64 startMs() const { return m_endMs - m_spanMs; }
    qint64 endMs() const { return m_endMs; }
    qint64 spanMs() const { return m_spanMs; }
    qint64 maximumSpanMs() const { return m_maximumSpanMs; }
    double width() const { return m_width; }
    bool following() const { return m_following; }

    void setWidth(double width);
    // New data: the newest and the oldest instant there is to show.
    void setRange(qint64 earliestMs, qint64 nowMs);
    // Back to the present: the right edge on now, following it from here on.
    void follow();

    double xOf(qint64 atMs) const;
    qint64 timeAt(double x) const;

    // `steps` wheel notches (positive zooms in) around the instant under `x`.
    void zoom(double x, double steps);
    // A drag by `dx` pixels: positive moves the picture right, towards older times.
    void pan(double dx);

    // Round instants for labels, at least `minimumSpacing` pixels apart, aligned to the local
    // clock (a five-minute tick falls on :05, :10 ... in the viewer's time zone).
    QList<qint64> ticks(double minimumSpacing) const;
    qint64 tickStepMs(double minimumSpacing) const;

private:
    void clampEnd();

    qint64 m_maximumSpanMs;
    qint64 m_spanMs;
    qint64 m_endMs = 0;
    qint64 m_earliestMs = 0;
    qint64 m_nowMs = 0;
    double m_width = 1.0;
    bool m_following = true;
};

} // namespace switchyard::ui
