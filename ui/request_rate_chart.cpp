#include "request_rate_chart.h"

#include <QAreaSeries>
#include <QChart>
#include <QGraphicsLayout>
#include <QLineSeries>
#include <QLinearGradient>
#include <QPen>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace switchyard::ui {

namespace {

const QColor accent(0x25, 0x63, 0xeb);
const QColor gridColor(0xee, 0xf0, 0xf3);
const QColor labelColor(0x6b, 0x72, 0x80);

// Smallest 1, 2 or 5 times a power of ten that makes four intervals cover `peak`, so the axis
// labels stay round numbers and the scale changes only in visible steps.
double niceAxisMaximum(double peak)
{
    const double wanted = std::max(peak * 1.1, 4.0) / 4.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(wanted)));
    for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
        if (factor * magnitude >= wanted)
            return factor * magnitude * 4.0;
    }
    return 10.0 * magnitude * 4.0;
}

} // namespace

// The chart is handed to the base constructor: QChartView(QWidget *) would make a default chart
// that setChart() later releases without deleting.
RequestRateChart::RequestRateChart(QWidget *parent) : QChartView(new QChart, parent)
{
    QChart *chart = this->chart();
    chart->legend()->hide();
    chart->setBackgroundBrush(Qt::white);
    chart->setBackgroundPen(Qt::NoPen);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(0, 4, 4, 0));
    chart->layout()->setContentsMargins(0, 0, 0, 0);
    chart->setAnimationOptions(QChart::NoAnimation);

    m_line = new QLineSeries(chart);
    m_area = new QAreaSeries(m_line);
    QPen pen(accent);
    pen.setWidthF(2.0);
    m_area->setPen(pen);
    QLinearGradient fill(QPointF(0, 0), QPointF(0, 1));
    fill.setCoordinateMode(QGradient::ObjectBoundingMode);
    QColor top = accent;
    top.setAlpha(80);
    QColor bottom = accent;
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
    m_timeAxis->setGridLineColor(gridColor);
    chart->addAxis(m_timeAxis, Qt::AlignBottom);

    m_rateAxis = new QValueAxis(chart);
    m_rateAxis->setRange(0.0, niceAxisMaximum(0.0));
    m_rateAxis->setTickCount(5);
    m_rateAxis->setLabelFormat(QStringLiteral("%.0f"));
    m_rateAxis->setLabelsFont(labelFont);
    m_rateAxis->setLabelsColor(labelColor);
    m_rateAxis->setLineVisible(false);
    m_rateAxis->setGridLineColor(gridColor);
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
