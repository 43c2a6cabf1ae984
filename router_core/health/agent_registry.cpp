#include "health/agent_registry.h"

#include <algorithm>

namespace switchyard::health {

const AgentRecord &AgentRegistry::upsert(const AgentRegistration &registration, int endpoint)
{
    AgentRecord *record = nullptr;
    for (AgentRecord &agent : m_agents) {
        if (agent.registration.id == registration.id)
            record = &agent;
    }
    if (!record) {
        record = &m_agents.emplace_back();
        record->registeredAtMsSinceEpoch = m_clock.msSinceEpoch();
    }
    record->registration = registration;
    record->endpoint = endpoint;
    record->busy = false;
    record->lastHeartbeat = m_clock.now();
    record->lastHeartbeatMsSinceEpoch = m_clock.msSinceEpoch();
    return *record;
}

bool AgentRegistry::heartbeat(const QString &id, std::optional<bool> busy)
{
    for (AgentRecord &agent : m_agents) {
        if (agent.registration.id != id || !isLive(agent))
            continue;
        agent.lastHeartbeat = m_clock.now();
        agent.lastHeartbeatMsSinceEpoch = m_clock.msSinceEpoch();
        if (busy)
            agent.busy = *busy;
        return true;
    }
    return false;
}

bool AgentRegistry::heartbeatTakenElsewhere(const QString &id, std::chrono::milliseconds age,
                                            bool busy, bool replace)
{
    for (AgentRecord &agent : m_agents) {
        if (agent.registration.id != id)
            continue;
        const timing::Clock::TimePoint at =
            m_clock.now() - std::max(age, std::chrono::milliseconds(0));
        if (!replace && at < agent.lastHeartbeat)
            return true;
        agent.lastHeartbeat = at;
        agent.lastHeartbeatMsSinceEpoch = m_clock.msSinceEpoch() - std::max<qint64>(age.count(), 0);
        agent.busy = busy;
        return true;
    }
    return false;
}

std::optional<AgentRecord> AgentRegistry::remove(const QString &id)
{
    for (qsizetype i = 0; i < m_agents.size(); ++i) {
        if (m_agents[i].registration.id == id)
            return m_agents.takeAt(i);
    }
    return std::nullopt;
}

QList<AgentRecord> AgentRegistry::expire()
{
    QList<AgentRecord> expired;
    for (qsizetype i = m_agents.size() - 1; i >= 0; --i) {
        if (!isLive(m_agents[i]))
            expired.prepend(m_agents.takeAt(i));
    }
    return expired;
}

const AgentRecord *AgentRegistry::find(const QString &id) const
{
    for (const AgentRecord &agent : m_agents) {
        if (agent.registration.id == id)
            return &agent;
    }
    return nullptr;
}

bool AgentRegistry::isLive(const AgentRecord &agent) const
{
    return m_clock.now() - agent.lastHeartbeat < m_ttl();
}

QList<const AgentRecord *> AgentRegistry::offering(const QString &intent) const
{
    QList<const AgentRecord *> found;
    for (const AgentRecord &agent : m_agents) {
        if (!agent.busy && isLive(agent) && agent.registration.capabilities.contains(intent))
            found.append(&agent);
    }
    return found;
}

} // namespace switchyard::health
