#include "ui/common/chart_style.h"

#include <QChart>
#include <QGraphicsLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace switchyard::ui::chart_style {

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

void applyChartLook(QChart *chart)
{
    chart->setBackgroundBrush(Qt::white);
    chart->setBackgroundPen(Qt::NoPen);
    chart->setBackgroundRoundness(0);
    chart->setMargins(QMargins(0, 4, 4, 0));
    chart->layout()->setContentsMargins(0, 0, 0, 0);
    chart->setAnimationOptions(QChart::NoAnimation);
}

void applyRateAxisLook(QValueAxis *axis, const QFont &labelFont)
{
    axis->setRange(0.0, niceAxisMaximum(0.0));
    axis->setTickCount(5);
    axis->setLabelFormat(QStringLiteral("%.0f"));
    axis->setLabelsFont(labelFont);
    axis->setLabelsColor(label);
    axis->setLineVisible(false);
    axis->setGridLineColor(grid);
}

} // namespace switchyard::ui::chart_style
