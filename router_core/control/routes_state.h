#pragma once

#include "config/routing_config.h"
#include "routing/route_decision.h"
#include "routing/router.h"

#include <QList>
#include <QMetaType>
#include <QString>

namespace switchyard {

// The answer to a dry run (EngineBridge::explainRoute): the decision the router makes for a
// sample request, or why there is none (the sample is not a valid chat request, or the rules
// tried do not validate). Made on the engine thread, handed to the console by value.
struct RouteExplanation {
    QString error; // empty when `decision` holds the answer
    routing::RouteDecision decision;
    QString requestId; // the canary key of last resort that was used
};

// The rules in force and every canary split as it runs now, for the console's Routes page.
struct RoutesState {
    QList<config::RouteRule> rules; // in file order; the router orders them by priority
    QList<routing::CanarySplitState> canarySplits;
};

} // namespace switchyard

Q_DECLARE_METATYPE(switchyard::RouteExplanation)
Q_DECLARE_METATYPE(switchyard::RoutesState)
