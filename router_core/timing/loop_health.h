#pragma once

namespace switchyard::timing {

// How well the engine thread keeps up: how late it ran its last due timer, as the engine's lag
// monitor measured it. Executions read it when a provider seems slow: with the loop this late,
// the answer may be sitting unread in a socket, and the timeout is the gateway's own doing.
// Engine thread only.
struct LoopHealth {
    double lagMs = 0.0;
};

} // namespace switchyard::timing
