#include "ui/overview/request_rate_chart.h"

#include "ui/common/chart_style.h"

#include <QAreaSeries>
#include <QChart>
#include <QLineSeries>
#include <QLinearGradient>
#include <QPen>
#include <QValueAxis>
#include <algorithm>

namespace switchyard::ui {

using chart_style::niceAxisMaximum;

// The chart is handed to the base constructor: QChartView(QWidget *) would make a default chart
// that setChart() later releases without deleting.
RequestRateChart::RequestRateChart(QWidget *parent) : QChartView(new QChart, parent)
{
    QChart *chart = this->chart();
    chart->legend()->hide();
    chart_style::applyChartLook(chart);

    m_line = new QLineSeries(chart);
    m_area = new QAreaSeries(m_line);
    QPen pen(chart_style::accent);
    pen.setWidthF(2.0);
    m_area->setPen(pen);
    QLinearGradient fill(QPointF(0, 0), QPointF(0, 1));
    fill.setCoordinateMode(QGradient::ObjectBoundingMode);
    QColor top = chart_style::accent;
    top.setAlpha(80);
    QColor bottom = chart_style::accent;
    bottom.setAlpha(8);
    fill.setColorAt(0.0, top);
    fill.setColorAt(1.0, bottom);
    m_area->setBrush(fill);
    chart->addSeries(m_area);

    QFont labelFont = font();
    labelFont.setPointSizeF(labelFont.pointSizeF() * 0.85);

    // The time axis shows only grid lines every ten seconds; the card title says "last 60 s".
    m_timeAxis = new QValueAxis(chart);
    m_timeAxis->setRange(-windowSeconds, 0.0);
    m_timeAxis->setTickCount(7);
    m_timeAxis->setLabelsVisible(false);
    m_timeAxis->setLineVisible(false);
    m_timeAxis->setGridLineColor(chart_style::grid);
    chart->addAxis(m_timeAxis, Qt::AlignBottom);

    m_rateAxis = new QValueAxis(chart);
    chart_style::applyRateAxisLook(m_rateAxis, labelFont);
    chart->addAxis(m_rateAxis, Qt::AlignLeft);

    m_area->attachAxis(m_timeAxis);
    m_area->attachAxis(m_rateAxis);

    setRenderHint(QPainter::Antialiasing);
    setFrameShape(QFrame::NoFrame);
    setBackgroundBrush(Qt::white);
    setMinimumHeight(140);
}

double RequestRateChart::axisMaximum() const
{
    return m_rateAxis->max();
}

void RequestRateChart::addSample(double secondsSinceStart, double requestsPerSecond)
{
    m_samples.append(QPointF(secondsSinceStart, std::max(0.0, requestsPerSecond)));
    // Keep one sample just older than the window so the line enters from the left edge.
    const double oldestKept = secondsSinceStart - windowSeconds;
    qsizetype drop = 0;
    while (drop + 1 < m_samples.size() && m_samples.at(drop + 1).x() <= oldestKept)
        ++drop;
    drop = std::max(drop, m_samples.size() - maxSamples);
    if (drop > 0)
        m_samples.remove(0, drop);

    QList<QPointF> points;
    points.reserve(m_samples.size());
    double peak = 0.0;
    for (const QPointF &sample : std::as_const(m_samples)) {
        points.append(QPointF(sample.x() - secondsSinceStart, sample.y()));
        peak = std::max(peak, sample.y());
    }
    m_line->replace(points);
    const double axisMax = niceAxisMaximum(peak);
    if (!qFuzzyCompare(axisMax, m_rateAxis->max()))
        m_rateAxis->setRange(0.0, axisMax);
}

} // namespace switchyard::ui
