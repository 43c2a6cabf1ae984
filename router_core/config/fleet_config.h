#pragma once

#include <QByteArray>
#include <QString>
#include <chrono>

namespace switchyard::config {

// The `fleet` section (docs/fleet.md): this node joins the other Switchyards that share one Redis.
// A node's own, like `listen` and `state`: never published to the fleet.
struct FleetConfig {
    // `redis`: redis://HOST[:PORT][/DB], as written (checked by redis::parseAddress).
    QString redis;
    // `name`: which fleet on that Redis; every key the fleet writes starts `switchyard:NAME:`.
    QString name = QStringLiteral("default");
    // `node`: this node's name in the fleet, unique among the live nodes. Default: the host name.
    QString node;
    // `password: {env: NAME}`: Redis's AUTH password, read from the environment at load. Required
    // for a Redis off loopback.
    QByteArray password;
    QString passwordVariable; // where it came from, for messages; never the value
    // A Redis command slower than this counts as Redis being unreachable.
    std::chrono::milliseconds timeout{500};
    // How often a node exchanges its limit counters and looks for new config and keys: the limit
    // overshoot a fleet allows and the time a change takes to reach every node both follow it.
    std::chrono::milliseconds syncInterval{100};
    // How long a node stays listed after its last heartbeat (sent every third of it).
    std::chrono::milliseconds membershipTtl{3000};
};

} // namespace switchyard::config
