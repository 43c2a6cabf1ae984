#!/usr/bin/env bash
# Load benchmark, one command: builds the bench tools and Switchyard in Release, starts a fast
# local upstream and Switchyard in front of it on loopback, and measures both, non-streamed and
# streamed, at 1 and 64 connections. Prints Markdown tables with the ratios; docs/benchmarks.md
# records the results. Bounded: about a minute of measuring, plus the build the first time.
#
#   scripts/bench.sh
#   scripts/bench.sh nginx    the nginx mode: scripts/bench-nginx.sh, with its environment
#
# Environment: BENCH_BUILD_DIR (default build-bench), BENCH_DURATION_S (5), BENCH_WARMUP_S (1),
# BENCH_CONNECTIONS (1,64), BENCH_LOAD_THREADS and BENCH_UPSTREAM_THREADS (default: cores),
# BENCH_FLEET (unset; 1: Switchyard joins a fleet on a Redis the script starts, so the figures
# show what fleet mode costs a request; docs/fleet.md).
#
# The nginx mode measures Switchyard against nginx direct and nginx as a reverse proxy instead,
# with and without client keys, with allocations and the usage ledger's CPU per row: the
# yardstick issue #37 judges it by.
set -euo pipefail

if [[ "${1:-}" == nginx ]]; then
    exec "$(dirname "${BASH_SOURCE[0]}")/bench-nginx.sh"
elif [[ $# -gt 0 ]]; then
    echo "usage: scripts/bench.sh [nginx]" >&2
    exit 2
fi

# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh" bench
duration="${BENCH_DURATION_S:-5}"
warmup="${BENCH_WARMUP_S:-1}"
connections="${BENCH_CONNECTIONS:-1,64}"
cores="$(nproc)"
load_threads="${BENCH_LOAD_THREADS:-$cores}"
upstream_threads="${BENCH_UPSTREAM_THREADS:-$cores}"

bench_build always switchyard fast_upstream load_bench routing_bench
# The cost of one routing decision first: no sockets, a second or two.
"$build/tests/bench/routing_bench"

bench_warn_if_busy

bench_start_work

"$build/tests/bench/fast_upstream" --threads "$upstream_threads" >"$work/upstream.out" 2>&1 &
upstream_pid=$!
pids+=("$upstream_pid")
upstream_port="$(port_from "$work/upstream.out" 'listening on 127\.0\.0\.1:[0-9]+')"

# Fleet mode: a Redis of the run's own on a free loopback port.
fleet_section=""
if [[ "${BENCH_FLEET:-}" == 1 ]]; then
    bench_start_redis
    fleet_section="fleet: {redis: redis://127.0.0.1:$redis_port/0, node: bench}"
    echo "bench: fleet mode, Redis on 127.0.0.1:$redis_port" >&2
fi

cat >"$work/bench.yaml" <<YAML
# One OpenAI-compatible provider: the fast local upstream of the load benchmark.
listen: 127.0.0.1:0
limits:
  # Every benchmark connection comes from 127.0.0.1: no per-address cap (default 1024), so a
  # BENCH_CONNECTIONS above it measures the gateway rather than its refusals.
  max_connections_per_address: 0
$fleet_section
providers:
  - id: bench-upstream
    kind: openai
    base_url: http://127.0.0.1:$upstream_port/v1
    models: [bench-model]
    capacity: 1024
YAML

# A state directory of the run's own: the usage ledger records every benchmark request, and
# the user's would grow by hundreds of megabytes a run.
"$build/app/switchyard" --headless --config "$work/bench.yaml" --listen 127.0.0.1:0 \
    --state-dir "$work/state" --log-level warning >"$work/switchyard.out" 2>&1 &
switchyard_pid=$!
pids+=("$switchyard_pid")
switchyard_port="$(port_from "$work/switchyard.out" \
    'OpenAI base URL http://127\.0\.0\.1:[0-9]+' )"

echo "bench: upstream on 127.0.0.1:$upstream_port, Switchyard on 127.0.0.1:$switchyard_port," \
     "$cores core(s)" >&2
# A hard stop well past the planned time (each scenario: warm-up, window, at most 2 s of drain).
scenarios=$(( 4 * $(tr ',' '\n' <<<"$connections" | wc -l) ))
limit_s="$(awk -v n="$scenarios" -v w="$warmup" -v d="$duration" \
    'BEGIN { printf "%d", n * (w + d + 3) + 30 }')"
status=0
timeout "$limit_s" "$build/tests/bench/load_bench" --direct "127.0.0.1:$upstream_port" \
    --via "127.0.0.1:$switchyard_port" --direct-pid "$upstream_pid" \
    --via-pid "$switchyard_pid" --via-thread switchyard-engine --connections "$connections" \
    --duration-s "$duration" --warmup-s "$warmup" --threads "$load_threads" || status=$?
if [[ -s "$work/switchyard.out" ]] && grep -qv 'OpenAI base URL' "$work/switchyard.out"; then
    echo "bench: Switchyard said:" >&2
    grep -v 'OpenAI base URL' "$work/switchyard.out" | tail -20 >&2
fi
exit "$status"
