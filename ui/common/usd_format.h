#pragma once

#include <QString>

namespace switchyard::ui {

// "$12.34", "$0.0042", "$0.000029", "-$1.20": dollars with cents; below a dollar four decimals,
// or two significant digits when that shows nothing. The Usage page's spend and a trace's cost
// read alike.
QString formatUsd(double usd);

} // namespace switchyard::ui
