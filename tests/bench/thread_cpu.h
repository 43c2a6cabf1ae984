#pragma once

#include <ctime>

// The calling thread's CPU time so far, in nanoseconds: what the benchmarks that run without
// sockets (routing_bench, otlp_bench, ledger_bench) measure their work with. CPU time, not wall
// time: on a machine shared with other work, wall time would also count the waits for a core.
inline double threadCpuNanoseconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e9 + double(now.tv_nsec);
}
