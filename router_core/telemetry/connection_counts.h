#pragma once

#include <QtGlobal>

namespace switchyard::telemetry {

// What the gateway's listener has counted of client connections: how many are open now, and
// since start how many it refused at the door and closed for want of progress. A value, copied
// into the console's snapshot and the admin API's answer.
struct ConnectionCounts {
    int open = 0;                   // client connections open now
    quint64 accepted = 0;           // admitted since start
    quint64 refusedOverTotal = 0;   // 503: `limits.max_connections` were open
    quint64 refusedOverAddress = 0; // 503: `limits.max_connections_per_address` were open
    quint64 headerTimeouts = 0;     // headers late, or none, after `limits.header_timeout`
    quint64 bodyTimeouts = 0;       // no complete body within `limits.body_timeout`
    quint64 idleClosed = 0;         // kept alive with nothing to do for `limits.keep_alive_idle`
    quint64 acceptErrors = 0;       // accept() failed, e.g. out of file descriptors
    // Refused connections being drained, answered or closed now: at most
    // `limits.max_refusals_draining`, beyond it only by connections let in as admitted ones
    // closed while accepting waited.
    int refusalsDraining = 0;
    quint64 acceptPauses = 0;   // accepting waited: `limits.max_refusals_draining` were draining
    quint64 refusalsCutOff = 0; // refused, and the client still connected 2 s after accept

    quint64 refused() const { return refusedOverTotal + refusedOverAddress; }
    quint64 timedOut() const { return headerTimeouts + bodyTimeouts; }
};

} // namespace switchyard::telemetry
