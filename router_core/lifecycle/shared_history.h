#pragma once

#include "control/config_versions.h"

#include <QList>
#include <optional>

namespace switchyard::lifecycle {

// The history of versions a fleet shares (fleet/shared_config.h): when a node is part of one,
// its version numbers, list, diffs and rollbacks are the fleet's, not the node's own.
class SharedHistory {
public:
    virtual ~SharedHistory() = default;

    // Whether the fleet's history is known here: false before the node first reached Redis, so
    // it answers with its own history until then.
    virtual bool known() const = 0;
    // The fleet's version this node runs.
    virtual quint64 runningVersion() const = 0;
    // Newest first, without texts.
    virtual QList<ConfigVersionInfo> versions() const = 0;
    // The version's text as this node would run it (its own keys put back), with the diff
    // against the fleet's version before it.
    virtual std::optional<ConfigVersion> version(quint64 number) const = 0;
};

} // namespace switchyard::lifecycle
