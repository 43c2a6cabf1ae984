#include "ui/common/usd_format.h"

#include <QLocale>
#include <cmath>

namespace switchyard::ui {

QString formatUsd(double usd)
{
    const QLocale locale;
    const double size = qAbs(usd);
    // One request's cost or saving can be too small for four decimals: two significant digits
    // then, rather than a row of zeros.
    int decimals = size != 0.0 && size < 1.0 ? 4 : 2;
    if (size != 0.0 && size < 0.00005)
        decimals = 1 - int(std::floor(std::log10(size)));
    return (usd < 0.0 ? locale.negativeSign() : QString()) + u"$"_qs +
           locale.toString(size, 'f', decimals);
}

} // namespace switchyard::ui
