#pragma once

#include "timing/clock.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>
#include <chrono>
#include <functional>
#include <optional>

namespace switchyard::health {

// What an agent says about itself when it registers (POST /admin/v1/agents).
struct AgentRegistration {
    QString id;
    QUrl baseUrl;             // OpenAI-compatible, e.g. http://127.0.0.1:9001/v1
    QStringList capabilities; // "domain/action/attribute" tags
    int capacity = 0;         // concurrent requests; 0 takes agents.default_capacity
    QStringList models;       // may be empty: the agent is sent the model the client asked for
};

struct AgentRecord {
    AgentRegistration registration;
    int endpoint = -1; // its endpoint's slot in the health registry
    bool busy = false; // said so in its last heartbeat: skipped until it says otherwise
    timing::Clock::TimePoint lastHeartbeat{};
    qint64 registeredAtMsSinceEpoch = 0;
    qint64 lastHeartbeatMsSinceEpoch = 0;
};

// Agents that registered themselves, with their heartbeats. An agent that has not sent a
// heartbeat for the TTL is gone: never chosen again and removed by the next expire(). Pure
// bookkeeping on an injected clock, owned by the health registry with the rest of the
// per-endpoint state; the Router registers agents as endpoints there.
class AgentRegistry {
public:
    // The TTL is asked for each time it matters, so a new config snapshot applies at once.
    using TtlSource = std::function<std::chrono::milliseconds()>;

    AgentRegistry(const timing::Clock &clock, TtlSource ttl) : m_clock(clock), m_ttl(std::move(ttl))
    {}

    std::chrono::milliseconds ttl() const { return m_ttl(); }

    // Adds the agent, or replaces the registration of one with the same id (a registration is
    // also a heartbeat and clears busy).
    const AgentRecord &upsert(const AgentRegistration &registration, int endpoint);
    // False when no live agent has this id. `busy` unset leaves the busy flag as it was.
    bool heartbeat(const QString &id, std::optional<bool> busy);
    // A heartbeat another node of the fleet took `age` ago, which left the agent `busy` or not
    // (docs/fleet.md, "Agents"). It counts only when newer than the last heartbeat held here,
    // since one this node took may not have reached the fleet yet; with `replace` it counts
    // whatever it is: for an agent just learnt from the fleet, whose registration here stood for
    // a heartbeat now. May revive an agent that lapsed here but not yet expired: the fleet saw
    // it beat. False when no agent has this id.
    bool heartbeatTakenElsewhere(const QString &id, std::chrono::milliseconds age, bool busy,
                                 bool replace = false);
    // Removes the agent; returns its record, or nothing when unknown.
    std::optional<AgentRecord> remove(const QString &id);
    // Removes every agent whose last heartbeat is older than the TTL; returns them.
    QList<AgentRecord> expire();

    const AgentRecord *find(const QString &id) const;
    bool isLive(const AgentRecord &agent) const;
    // Live agents, not busy, with a capability tag equal to `intent`, in registration order.
    QList<const AgentRecord *> offering(const QString &intent) const;
    const QList<AgentRecord> &agents() const { return m_agents; }

private:
    const timing::Clock &m_clock;
    TtlSource m_ttl;
    QList<AgentRecord> m_agents;
};

} // namespace switchyard::health
