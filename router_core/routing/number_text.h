#pragma once

#include "protocol/decimal_text.h"

#include <QString>
#include <QStringBuilder>
#include <algorithm>
#include <cmath>

namespace switchyard::routing {

// "0.62" for a value in [0, 1] and up: two decimals without QString::number's general-purpose
// double formatting, which would otherwise be most of the cost of a decision's reasons.
inline QString &appendTwoDecimals(QString &out, double value)
{
    const qint64 hundredths = std::llround(std::max(0.0, value) * 100.0);
    const int rest = int(hundredths % 100);
    return protocol::appendDecimal(out, hundredths / 100)
        .append(u'.')
        .append(QChar(u'0' + rest / 10))
        .append(QChar(u'0' + rest % 10));
}

inline QString twoDecimals(double value)
{
    QString text;
    return appendTwoDecimals(text, value);
}

} // namespace switchyard::routing
