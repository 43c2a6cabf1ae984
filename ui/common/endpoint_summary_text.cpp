#include "ui/common/endpoint_summary_text.h"

namespace switchyard::ui {

namespace {

const QColor kGreen(0x15, 0x80, 0x3d);
const QColor kAmber(0xb4, 0x53, 0x09);
const QColor kRed(0xb9, 0x1c, 0x1c);
const QColor kBlue(0x1d, 0x4e, 0xd8); // an operator's deliberate choice

} // namespace

QString EndpointSummaryText::state(const EndpointSummary &endpoint)
{
    if (endpoint.operatorState == OperatorState::Disabled)
        return tr("disabled");
    if (endpoint.operatorState == OperatorState::Draining)
        return tr("draining");
    switch (endpoint.breaker) {
    case BreakerState::Open:
        return tr("open");
    case BreakerState::HalfOpen:
        return tr("half-open");
    case BreakerState::Closed:
        break;
    }
    switch (endpoint.state) {
    case ProviderState::Up:
        return tr("up");
    case ProviderState::Degraded:
        return tr("degraded");
    case ProviderState::Down:
        break;
    }
    //: Breaker closed, yet kept out of traffic (failed health probes)
    return tr("down");
}

QColor EndpointSummaryText::color(const EndpointSummary &endpoint)
{
    if (endpoint.operatorState != OperatorState::Enabled)
        return kBlue;
    switch (endpoint.state) {
    case ProviderState::Up:
        return kGreen;
    case ProviderState::Degraded:
        return kAmber;
    case ProviderState::Down:
        break;
    }
    return kRed;
}

QString EndpointSummaryText::upCount(int up, int total)
{
    //: %1 endpoints or nodes up; %2 how many there are
    return tr("%1 of %2 up").arg(up).arg(total);
}

QColor EndpointSummaryText::upCountColor(int up, int total)
{
    if (up == total)
        return kGreen;
    return up == 0 ? kRed : kAmber;
}

} // namespace switchyard::ui
