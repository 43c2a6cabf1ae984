#include "ui/overview/provider_traffic_chart.h"

#include "ui/common/chart_style.h"
#include "ui/overview/provider_traffic.h"

#include <QChart>
#include <QLegend>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>
#include <algorithm>

namespace switchyard::ui {

ProviderTrafficChart::ProviderTrafficChart(QWidget *parent) : QChartView(new QChart, parent)
{
    QChart *chart = this->chart();
    chart_style::applyChartLook(chart);

    QFont labelFont = font();
    labelFont.setPointSizeF(labelFont.pointSizeF() * 0.85);

    QLegend *legend = chart->legend();
    legend->setAlignment(Qt::AlignTop);
    legend->setFont(labelFont);
    legend->setLabelColor(chart_style::label);
    legend->setMarkerShape(QLegend::MarkerShapeCircle);
    legend->setBackgroundVisible(false);

    // A grid line every minute; the card's title says "last 5 min".
    m_timeAxis = new QValueAxis(chart);
    m_timeAxis->setRange(-double(ProviderTrafficRates::kHistoryMs) / 1000.0, 0.0);
    m_timeAxis->setTickCount(int(ProviderTrafficRates::kHistoryMs / 60'000) + 1);
    m_timeAxis->setLabelsVisible(false);
    m_timeAxis->setLineVisible(false);
    m_timeAxis->setGridLineColor(chart_style::grid);
    chart->addAxis(m_timeAxis, Qt::AlignBottom);

    m_rateAxis = new QValueAxis(chart);
    chart_style::applyRateAxisLook(m_rateAxis, labelFont);
    chart->addAxis(m_rateAxis, Qt::AlignLeft);

    setRenderHint(QPainter::Antialiasing);
    setFrameShape(QFrame::NoFrame);
    setBackgroundBrush(Qt::white);
    setMinimumHeight(140);
}

QColor ProviderTrafficChart::providerColor(int index)
{
    static const QColor palette[] = {
        QColor(0x25, 0x63, 0xeb), // blue
        QColor(0x7c, 0x3a, 0xed), // violet
        QColor(0xea, 0x58, 0x0c), // orange
        QColor(0x08, 0x91, 0xb2), // cyan
        QColor(0xdb, 0x27, 0x77), // pink
        QColor(0x4b, 0x55, 0x63), // slate
        QColor(0xa1, 0x62, 0x07), // ochre
    };
    return palette[index % int(std::size(palette))];
}

double ProviderTrafficChart::axisMaximum() const
{
    return m_rateAxis->max();
}

QStringList ProviderTrafficChart::shownProviders() const
{
    QStringList names;
    for (const QLineSeries *line : m_lines)
        names.append(line->name());
    return names;
}

void ProviderTrafficChart::setRates(const ProviderTrafficRates &rates)
{
    const QList<ProviderTrafficSeries> &series = rates.series();
    // One line per provider, in the snapshot's order; lines are kept while the providers are the
    // same, so the legend does not flicker.
    bool sameProviders = m_lines.size() == series.size();
    for (qsizetype i = 0; sameProviders && i < series.size(); ++i)
        sameProviders = m_lines.at(i)->name() == series.at(i).providerId;
    if (!sameProviders) {
        for (QLineSeries *line : std::as_const(m_lines)) {
            chart()->removeSeries(line);
            delete line;
        }
        m_lines.clear();
        for (qsizetype i = 0; i < series.size(); ++i) {
            auto *line = new QLineSeries(chart());
            line->setName(series.at(i).providerId);
            QPen pen(providerColor(int(i)));
            pen.setWidthF(2.0);
            line->setPen(pen);
            chart()->addSeries(line);
            line->attachAxis(m_timeAxis);
            line->attachAxis(m_rateAxis);
            m_lines.append(line);
        }
    }

    double peak = 0.0;
    for (qsizetype i = 0; i < series.size(); ++i) {
        QList<QPointF> points;
        points.reserve(series.at(i).points.size());
        for (const TrafficPoint &point : series.at(i).points) {
            points.append(
                QPointF(double(point.atMs - rates.nowMs()) / 1000.0, point.callsPerSecond));
            peak = std::max(peak, point.callsPerSecond);
        }
        m_lines.at(i)->replace(points);
    }
    const double axisMax = chart_style::niceAxisMaximum(peak);
    if (!qFuzzyCompare(axisMax, m_rateAxis->max()))
        m_rateAxis->setRange(0.0, axisMax);
}

} // namespace switchyard::ui
