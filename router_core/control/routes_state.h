#pragma once

#include "config/config.h"
#include "config/routing_config.h"
#include "routing/route_decision.h"
#include "routing/router.h"

#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <memory>

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
    // The snapshot in force (immutable, shared, never copied): its rules, and the providers and
    // tiers an editor offers and validates edited rules against.
    std::shared_ptr<const config::Config> snapshot;
    QList<routing::CanarySplitState> canarySplits;
    quint64 configVersion = 0; // the store's version of that snapshot

    // The snapshot's rules in file order (the router orders them by priority); none before the
    // engine has delivered a snapshot.
    const QList<config::RouteRule> &rules() const
    {
        static const QList<config::RouteRule> none;
        return snapshot ? snapshot->routing.routes : none;
    }
};

// A registered agent as operators see it (console and GET /admin/v1/agents).
struct AgentState {
    QString id;
    QString baseUrl;
    QStringList capabilities;
    QStringList models;
    int capacity = 0;
    bool busy = false;
    bool live = true; // heartbeats arrive within the TTL
    qint64 registeredAtMsSinceEpoch = 0;
    qint64 lastHeartbeatMsSinceEpoch = 0;
};

} // namespace switchyard

Q_DECLARE_METATYPE(switchyard::RouteExplanation)
Q_DECLARE_METATYPE(switchyard::RoutesState)
Q_DECLARE_METATYPE(switchyard::AgentState)
