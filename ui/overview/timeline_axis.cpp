#include "ui/overview/timeline_axis.h"

#include <QDateTime>
#include <algorithm>
#include <cmath>

namespace switchyard::ui {

namespace {

// One wheel notch zooms by a fifth: fine enough to aim, few enough notches from 10 s to 30 min.
constexpr double kZoomPerStep = 0.8;

} // namespace

TimelineAxis::TimelineAxis(qint64 maximumSpanMs, qint64 spanMs)
    : m_maximumSpanMs(std::max(maximumSpanMs, kMinimumSpanMs)),
      m_spanMs(std::clamp(spanMs, kMinimumSpanMs, m_maximumSpanMs))
{}

void TimelineAxis::setWidth(double width)
{
    m_width = std::max(width, 1.0);
}

void TimelineAxis::setRange(qint64 earliestMs, qint64 nowMs)
{
    m_nowMs = std::max(m_nowMs, nowMs);
    m_earliestMs = std::min(earliestMs, m_nowMs);
    if (m_following)
        m_endMs = m_nowMs;
    clampEnd();
}

void TimelineAxis::follow()
{
    m_following = true;
    m_endMs = m_nowMs;
}

double TimelineAxis::xOf(qint64 atMs) const
{
    return double(atMs - startMs()) * m_width / double(m_spanMs);
}

qint64 TimelineAxis::timeAt(double x) const
{
    return startMs() + qint64(std::llround(x * double(m_spanMs) / m_width));
}

void TimelineAxis::zoom(double x, double steps)
{
    const double fraction = std::clamp(x / m_width, 0.0, 1.0);
    const double anchorMs = double(startMs()) + fraction * double(m_spanMs);
    const double span = double(m_spanMs) * std::pow(kZoomPerStep, steps);
    m_spanMs = std::clamp(qint64(std::llround(span)), kMinimumSpanMs, m_maximumSpanMs);
    m_endMs = qint64(std::llround(anchorMs + (1.0 - fraction) * double(m_spanMs)));
    // Zooming in while pointing at the present keeps following it; anywhere else looks back.
    m_following = m_endMs >= m_nowMs;
    clampEnd();
}

void TimelineAxis::pan(double dx)
{
    m_endMs -= qint64(std::llround(dx * double(m_spanMs) / m_width));
    m_following = m_endMs >= m_nowMs;
    clampEnd();
}

void TimelineAxis::clampEnd()
{
    // Never into the future, and never so far back that most of the view is before the oldest
    // history there is.
    const qint64 oldestEnd =
        std::min(m_nowMs, m_earliestMs + qint64(double(m_spanMs) * (1.0 - kLeadInFraction)));
    m_endMs = std::clamp(m_endMs, oldestEnd, m_nowMs);
    if (m_endMs == m_nowMs)
        m_following = true;
}

qint64 TimelineAxis::tickStepMs(double minimumSpacing) const
{
    static constexpr qint64 steps[] = {
        1'000,   2'000,   5'000,   10'000,  15'000,    30'000,    60'000,
        120'000, 300'000, 600'000, 900'000, 1'800'000, 3'600'000, 7'200'000,
    };
    const double pixelsPerMs = m_width / double(m_spanMs);
    for (const qint64 step : steps) {
        if (double(step) * pixelsPerMs >= minimumSpacing)
            return step;
    }
    return steps[std::size(steps) - 1];
}

QList<qint64> TimelineAxis::ticks(double minimumSpacing) const
{
    const qint64 step = tickStepMs(minimumSpacing);
    // Shift into local time so minutes and hours fall on the viewer's round marks.
    const qint64 offsetMs =
        qint64(QDateTime::fromMSecsSinceEpoch(startMs()).offsetFromUtc()) * 1000;
    const qint64 localStart = startMs() + offsetMs;
    qint64 tick = localStart - (((localStart % step) + step) % step);
    if (tick < localStart)
        tick += step;
    QList<qint64> result;
    for (; tick <= m_endMs + offsetMs; tick += step)
        result.append(tick - offsetMs);
    return result;
}

} // namespace switchyard::ui
