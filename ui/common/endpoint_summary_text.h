#pragma once

#include "health/endpoint_state.h"

#include <QColor>
#include <QCoreApplication>
#include <QList>
#include <QString>

namespace switchyard::ui {

// How the console words and colours an endpoint as another node sees it (an EndpointSummary
// that node published): one wording for the Fleet page and the health matrix's "Other nodes".
class EndpointSummaryText {
    Q_DECLARE_TR_FUNCTIONS(EndpointSummaryText)
public:
    // "up", "degraded", "open", "half-open", "draining" or "disabled".
    static QString state(const EndpointSummary &endpoint);
    // Green when up, amber when degraded, red when down, blue for an operator's choice.
    static QColor color(const EndpointSummary &endpoint);
    // "2 of 3 up": how many of `total` are up.
    static QString upCount(int up, int total);
    // Green when all are up, red when none is, amber between.
    static QColor upCountColor(int up, int total);
};

} // namespace switchyard::ui
