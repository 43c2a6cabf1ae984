#pragma once

#include <QString>
#include <QStringBuilder>
#include <algorithm>
#include <cmath>

namespace switchyard::routing {

// "0.62" for a value in [0, 1] and up: two decimals without QString::number's general-purpose
// double formatting, which would otherwise be most of the cost of a decision's reasons.
inline QString twoDecimals(double value)
{
    const qint64 hundredths = std::llround(std::max(0.0, value) * 100.0);
    const int rest = int(hundredths % 100);
    return QString::number(hundredths / 100) % u'.' % QChar(u'0' + rest / 10) %
           QChar(u'0' + rest % 10);
}

} // namespace switchyard::routing
