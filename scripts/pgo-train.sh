#!/usr/bin/env bash
# Records the profile the README's build is compiled with (scripts/build.sh runs this when it
# first configures build/): configures build/ instrumented (SWITCHYARD_PGO=generate), builds
# Switchyard and the benchmark tools, runs Switchyard headless against the benchmark upstream on
# loopback ports of its own, and leaves what it counted in build/pgo-profile/. Then configures
# build/ to compile with that profile (SWITCHYARD_PGO=use); the next `cmake --build build`
# recompiles everything with it. About a minute of training on top of the instrumented build.
#
# The training is the gateway's everyday work and nothing else: streamed chat completions one at
# a time (on a new connection each, and on one kept alive) and fifty at once, then non-streamed
# and streamed load on 1 and 16 connections, all with the default config (traces, metrics and the
# usage ledger on). Code it never runs (the console, failover, the fleet) is compiled as it would
# be without a profile.
#
#   scripts/pgo-train.sh && cmake --build build    records a new profile and builds with it
set -euo pipefail
# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh" pgo-train
cd "$root"
build="$root/build" # the README's build, whatever BENCH_BUILD_DIR says
profile="$build/pgo-profile"

echo "pgo-train: configuring build/ instrumented" >&2
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSWITCHYARD_WERROR=ON \
    -DSWITCHYARD_PGO=generate >/dev/null
echo "pgo-train: building the instrumented switchyard and the benchmark tools" >&2
cmake --build "$build" --parallel "$(nproc)" \
    --target switchyard fast_upstream streams_bench load_bench >/dev/null

bench_start_work

# Runs one training step with its output in a log, shown only when the step fails.
quietly() {
    if ! "$@" >"$work/step.out" 2>&1; then
        echo "pgo-train: this training step failed: $*" >&2
        cat "$work/step.out" >&2
        exit 1
    fi
}

# Counters add up across runs: a new training starts from none.
rm -rf "$profile"
tools="$build/tests/bench"
"$tools/fast_upstream" --threads 1 --stream-events 20 --event-interval-ms 1 \
    >"$work/upstream.out" 2>&1 &
pids+=($!)
upstream_port="$(port_from "$work/upstream.out" 'listening on 127\.0\.0\.1:[0-9]+')"
cat >"$work/train.yaml" <<YAML
listen: 127.0.0.1:0
providers:
  - id: upstream
    kind: openai
    base_url: http://127.0.0.1:$upstream_port/v1
    models: [bench-model]
YAML

"$build/app/switchyard" --headless --config "$work/train.yaml" --listen 127.0.0.1:0 \
    --state-dir "$work/state" --log-level warning >"$work/switchyard.out" 2>&1 &
switchyard_pid=$!
pids+=("$switchyard_pid")
port="$(port_from "$work/switchyard.out" 'OpenAI base URL http://127\.0\.0\.1:[0-9]+')"
target="127.0.0.1:$port"

echo "pgo-train: training on streams one at a time, fifty at once, then load" >&2
quietly "$tools/streams_bench" --target "$target" --streams 1 --rounds 150 --label new
quietly "$tools/streams_bench" --target "$target" --streams 1 --rounds 150 --keep-alive \
    --label kept
quietly "$tools/streams_bench" --target "$target" --streams 50 --rounds 2 --label many
quietly "$tools/load_bench" --direct "127.0.0.1:$upstream_port" --via "$target" \
    --connections 1,16 --duration-s 2 --warmup-s 0.5 --model bench-model

# The counters are written when the process exits normally: SIGTERM drains it and returns from
# main.
kill -TERM "$switchyard_pid"
if ! wait "$switchyard_pid"; then
    echo "pgo-train: the instrumented switchyard did not exit cleanly:" >&2
    cat "$work/switchyard.out" >&2
    exit 1
fi
count="$(find "$profile" -name '*.gcda' 2>/dev/null | wc -l)"
if [ "$count" -eq 0 ]; then
    echo "pgo-train: no profile was written to $profile" >&2
    exit 1
fi
echo "pgo-train: a profile of $count object files in build/pgo-profile; build/ now compiles" \
     "with it" >&2
cmake -S . -B "$build" -DSWITCHYARD_PGO=use >/dev/null
