#include "ui/usage/usage_chart.h"

#include "ui/common/chart_style.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QLegend>
#include <QStackedBarSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace switchyard::ui {

namespace {

// Distinct at a glance and still readable on white; the last is "other".
const QList<QColor> kSeriesColors{QColor(0x25, 0x63, 0xeb), QColor(0x0d, 0x94, 0x88),
                                  QColor(0xf5, 0x9e, 0x0b), QColor(0xdb, 0x27, 0x77),
                                  QColor(0x7c, 0x3a, 0xed)};
const QColor kOtherColor(0xb6, 0xbc, 0xc6);

// A round top for the axis: 1, 2 or 5 times a power of ten over four intervals, for dollars
// (cents and below) as for millions of tokens.
double roundMaximum(double peak)
{
    if (peak <= 0.0)
        return 1.0;
    const double wanted = peak * 1.05 / 4.0;
    const double magnitude = std::pow(10.0, std::floor(std::log10(wanted)));
    for (const double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
        if (factor * magnitude >= wanted)
            return factor * magnitude * 4.0;
    }
    return 40.0 * magnitude;
}

} // namespace

UsageChart::UsageChart(Measure measure, QWidget *parent)
    : QChartView(new QChart, parent), m_measure(measure)
{
    QChart *chart = this->chart();
    chart_style::applyChartLook(chart);
    QFont labelFont = font();
    labelFont.setPointSizeF(labelFont.pointSizeF() * 0.85);
    chart->legend()->setAlignment(Qt::AlignTop);
    chart->legend()->setFont(labelFont);
    chart->legend()->setLabelColor(chart_style::label);
    chart->legend()->setMarkerShape(QLegend::MarkerShapeCircle);

    m_bars = new QStackedBarSeries(chart);
    m_bars->setBarWidth(0.7);
    chart->addSeries(m_bars);
    m_bucketAxis = new QBarCategoryAxis(chart);
    m_bucketAxis->setLabelsFont(labelFont);
    m_bucketAxis->setLabelsColor(chart_style::label);
    m_bucketAxis->setGridLineVisible(false);
    m_bucketAxis->setLinePenColor(chart_style::grid);
    chart->addAxis(m_bucketAxis, Qt::AlignBottom);
    m_valueAxis = new QValueAxis(chart);
    chart_style::applyRateAxisLook(m_valueAxis, labelFont);
    m_valueAxis->setRange(0.0, 1.0);
    chart->addAxis(m_valueAxis, Qt::AlignLeft);
    m_bars->attachAxis(m_bucketAxis);
    m_bars->attachAxis(m_valueAxis);

    setRenderHint(QPainter::Antialiasing);
    setFrameShape(QFrame::NoFrame);
    setBackgroundBrush(Qt::white);
    setMinimumHeight(200);
}

void UsageChart::setData(const UsageChartData &data, const QString &noneLabel,
                         const QString &otherLabel)
{
    m_bars->clear();
    m_bucketAxis->setCategories(data.bucketLabels);
    // Tokens run to millions: shown in thousands or millions so the axis labels stay short.
    double tokenPeak = 0.0;
    if (m_measure == Measure::Tokens) {
        QList<double> sums(data.bucketLabels.size(), 0.0);
        for (const UsageSeries &series : data.series) {
            for (qsizetype i = 0; i < series.tokens.size() && i < sums.size(); ++i)
                sums[i] += series.tokens[i];
        }
        tokenPeak = sums.isEmpty() ? 0.0 : *std::max_element(sums.begin(), sums.end());
    }
    const double divisor = tokenPeak >= 1e6 ? 1e6 : tokenPeak >= 1e4 ? 1e3 : 1.0;
    const QString suffix = divisor == 1e6   ? QStringLiteral("M")
                           : divisor == 1e3 ? QStringLiteral("k")
                                            : QString();
    QList<double> stacked(data.bucketLabels.size(), 0.0);
    int colour = 0;
    for (const UsageSeries &series : data.series) {
        auto *set = new QBarSet(series.isOther          ? otherLabel
                                : series.name.isEmpty() ? noneLabel
                                                        : series.name);
        const QList<double> &values = m_measure == Measure::Spend ? series.spendUsd : series.tokens;
        for (qsizetype i = 0; i < values.size(); ++i) {
            const double value = m_measure == Measure::Spend ? values[i] : values[i] / divisor;
            set->append(value);
            stacked[i] += value;
        }
        const QColor color =
            series.isOther ? kOtherColor : kSeriesColors[colour++ % kSeriesColors.size()];
        set->setColor(color);
        set->setBorderColor(color);
        m_bars->append(set);
    }
    const double peak = stacked.isEmpty() ? 0.0 : *std::max_element(stacked.begin(), stacked.end());
    const double top = roundMaximum(peak);
    m_valueAxis->setRange(0.0, top);
    if (m_measure == Measure::Spend)
        m_valueAxis->setLabelFormat(top < 0.04  ? QStringLiteral("$%.4f")
                                    : top < 4.0 ? QStringLiteral("$%.2f")
                                                : QStringLiteral("$%.0f"));
    else
        m_valueAxis->setLabelFormat(
            (top < 4.0 && divisor > 1.0 ? QStringLiteral("%.1f") : QStringLiteral("%.0f")) +
            suffix);
    chart()->legend()->setVisible(!data.series.isEmpty());
}

int UsageChart::seriesCount() const
{
    return int(m_bars->count());
}

double UsageChart::axisMaximum() const
{
    return m_valueAxis->max();
}

QStringList UsageChart::legendNames() const
{
    QStringList names;
    for (const QBarSet *set : m_bars->barSets())
        names.append(set->label());
    return names;
}

} // namespace switchyard::ui
