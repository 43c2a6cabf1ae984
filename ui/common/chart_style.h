#pragma once

#include <QColor>

QT_BEGIN_NAMESPACE
class QChart;
class QFont;
class QValueAxis;
QT_END_NAMESPACE

namespace switchyard::ui {

// The one look of the Overview's live charts: white, no frame, light grid, quiet labels, so the
// request rate and the traffic by provider read as one family.
namespace chart_style {

inline const QColor accent{0x25, 0x63, 0xeb};
inline const QColor grid{0xee, 0xf0, 0xf3};
inline const QColor label{0x6b, 0x72, 0x80};

// Smallest 1, 2 or 5 times a power of ten that makes four intervals cover `peak`, so the axis
// labels stay round numbers and the scale changes only in visible steps.
double niceAxisMaximum(double peak);

// Background, margins and no animation: a live chart redraws at the snapshots' rate.
void applyChartLook(QChart *chart);
// A left axis of rates: round labels in the quiet colour, four intervals.
void applyRateAxisLook(QValueAxis *axis, const QFont &labelFont);

} // namespace chart_style

} // namespace switchyard::ui
