#!/usr/bin/env bash
# Concurrent-streams sweep: N streamed chat requests opened at once against a paced upstream
# (each answer 30 events 200 ms apart), first directly, then through a fresh headless Switchyard
# per step and per engine-thread dispatcher. Prints one Markdown table; docs/benchmarks.md
# records the results.
#
#   scripts/bench-streams.sh
#
# Environment: BENCH_STREAMS (100,1000,3000,10000), BENCH_DISPATCHERS (epoll,qt: the engine
# thread's dispatcher, through SWITCHYARD_EVENT_DISPATCHER), BENCH_STREAM_EVENTS (30),
# BENCH_EVENT_INTERVAL_MS (200), BENCH_TIMEOUT_S (120, per step), BENCH_BUILD_DIR (build-bench,
# configured in Release when it does not exist yet; an existing build directory is used as it
# is configured), BENCH_UPSTREAM_THREADS (1), BENCH_PROFILE (unset; 1: sample Switchyard with
# `perf record` during each step and print the engine thread's top functions),
# BENCH_TTFT_ROUNDS (200; 0 skips it: the time to first token of one stream at a time against an
# upstream pacing 20 events 10 ms apart, directly and through Switchyard, R streams in a row,
# each on a new connection and then on one kept-alive connection),
# BENCH_CONTEXT_BYTES (0: an earlier turn of that many bytes in every request of the sweep, as an
# agent's request carries its conversation), BENCH_RUNS (1: how many times each step runs through
# Switchyard, a fresh one each time; the direct run is once per step).
set -euo pipefail

# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh" bench-streams
steps="${BENCH_STREAMS:-100,1000,3000,10000}"
dispatchers="${BENCH_DISPATCHERS:-epoll,qt}"
stream_events="${BENCH_STREAM_EVENTS:-30}"
interval_ms="${BENCH_EVENT_INTERVAL_MS:-200}"
timeout_s="${BENCH_TIMEOUT_S:-120}"
upstream_threads="${BENCH_UPSTREAM_THREADS:-1}"
ttft_rounds="${BENCH_TTFT_ROUNDS:-200}"
context_bytes="${BENCH_CONTEXT_BYTES:-0}"
runs="${BENCH_RUNS:-1}"

bench_build if-new switchyard fast_upstream streams_bench

# Every stream holds a descriptor in the driver and the upstream, and two in Switchyard (the
# client's and the upstream call's): raise the soft limit as far as the hard one allows, and
# say when the largest step cannot fit.
ulimit -n "$(ulimit -Hn)"
largest="$(tr ',' '\n' <<<"$steps" | sort -n | tail -1)"
if (( $(ulimit -n) < 2 * largest + 256 )); then
    echo "bench-streams: warning: the open-file limit is $(ulimit -n); Switchyard needs about" \
         "$(( 2 * largest + 256 )) for $largest streams, so that step will run out of" \
         "descriptors" >&2
fi

bench_start_work

"$build/tests/bench/fast_upstream" --threads "$upstream_threads" \
    --stream-events "$stream_events" --event-interval-ms "$interval_ms" \
    >"$work/upstream.out" 2>&1 &
upstream_pid=$!
pids+=("$upstream_pid")
upstream_port="$(port_from "$work/upstream.out" 'listening on 127\.0\.0\.1:[0-9]+')"

cat >"$work/streams.yaml" <<YAML
# The paced upstream as the one provider; every cap that would refuse the sweep raised.
listen: 127.0.0.1:0
limits:
  max_connections: 20000
  max_connections_per_address: 0
admission:
  max_in_flight: 20000
providers:
  - id: paced-upstream
    kind: openai
    base_url: http://127.0.0.1:$upstream_port/v1
    models: [bench-model]
    capacity: 20000
YAML

# Each closed connection keeps its local port in TIME_WAIT for a minute, and loopback has only the
# local port range to give (28,232 ports by default): a step started right after a large one
# runs out, and its failed connects look like the gateway's errors. Waits, at most 70 s, until
# the step's connections (two per stream through Switchyard) fit beside the ports still held.
wait_for_ports() { # streams
    local needed=$(( 2 * $1 )) low high held=0
    read -r low high </proc/sys/net/ipv4/ip_local_port_range
    for _ in $(seq 70); do
        held="$(awk '/^TCP:/ { for (i = 1; i < NF; ++i) if ($i == "tw") print $(i + 1) }' \
            /proc/net/sockstat)"
        if (( held + needed < high - low + 1 )); then
            return 0
        fi
        sleep 1
    done
    echo "bench-streams: warning: $held connections still in TIME_WAIT; connects may fail" \
         "for want of local ports" >&2
}

results="$work/results.txt"
: >"$results"
# The caller waits for ports first (wait_for_ports): before it starts a Switchyard, so that the
# wait does not fill the loop-lag histogram with idle samples.
run_driver() { # target-port pid label streams
    timeout $(( timeout_s + 30 )) "$build/tests/bench/streams_bench" --target "127.0.0.1:$1" \
        --pid "$2" --label "$3" --streams "$4" --timeout-s "$timeout_s" \
        --context-bytes "$context_bytes" | tee -a "$results" >&2
}

# The engine loop's lateness over the run, from the fresh Switchyard's own histogram
# (`switchyard_engine_loop_lag_seconds`, a sample every 100 ms), added to the run's result line:
# the bucket bound that holds 99 % of the samples, and how many samples were later than 0.1 s.
append_loop_lag() { # switchyard-port
    local lag
    lag="$(curl -s "http://127.0.0.1:$1/metrics" | awk '
        /^switchyard_engine_loop_lag_seconds_bucket/ {
            match($0, /le="[^"]*"/); bound = substr($0, RSTART + 4, RLENGTH - 5)
            bounds[++n] = bound; counts[n] = $NF
            if (bound == "0.1") within = $NF
        }
        /^switchyard_engine_loop_lag_seconds_count/ { total = $NF }
        END {
            p99 = "-"
            for (i = 1; i <= n; ++i) if (counts[i] >= 0.99 * total) { p99 = bounds[i]; break }
            printf "loop_lag_p99_le_s=%s loop_lag_samples=%d loop_lag_over_100ms=%d",
                p99, total, total - within
        }')"
    sed -i "\$ s/\$/ $lag/" "$results"
    echo "bench-streams: engine loop lag: $lag" >&2
}

IFS=',' read -r -a step_list <<<"$steps"
IFS=',' read -r -a dispatcher_list <<<"$dispatchers"
for streams in "${step_list[@]}"; do
    wait_for_ports "$streams"
    run_driver "$upstream_port" "$upstream_pid" direct "$streams"
    for dispatcher in "${dispatcher_list[@]}"; do
        for _ in $(seq "$runs"); do
            wait_for_ports "$streams"
            # A state directory of the run's own, as in bench.sh: the usage ledger records every
            # stream.
            SWITCHYARD_EVENT_DISPATCHER="$dispatcher" "$build/app/switchyard" --headless \
                --config "$work/streams.yaml" --listen 127.0.0.1:0 --log-level warning \
                --state-dir "$work/state" >"$work/switchyard.out" 2>&1 &
            switchyard_pid=$!
            pids+=("$switchyard_pid")
            switchyard_port="$(port_from "$work/switchyard.out" \
                'OpenAI base URL http://127\.0\.0\.1:[0-9]+')"
            if [[ -n "${BENCH_PROFILE:-}" ]]; then
                perf record -q -e cpu-clock -F 2000 -p "$switchyard_pid" \
                    -o "$work/perf-$dispatcher-$streams.data" 2>/dev/null &
                perf_pid=$!
            fi
            run_driver "$switchyard_port" "$switchyard_pid" "via-$dispatcher" "$streams"
            append_loop_lag "$switchyard_port"
            if [[ -n "${BENCH_PROFILE:-}" ]]; then
                kill -INT "$perf_pid"
                wait "$perf_pid" 2>/dev/null || true
                echo "bench-streams: engine thread's top functions ($dispatcher, $streams streams):" >&2
                perf report -q -i "$work/perf-$dispatcher-$streams.data" --comms switchyard-engi \
                    --sort dso,symbol --percent-limit 1 2>/dev/null | head -40 >&2
            fi
            kill "$switchyard_pid"
            wait "$switchyard_pid" 2>/dev/null || true
            if grep -qv 'OpenAI base URL' "$work/switchyard.out"; then
                echo "bench-streams: Switchyard ($dispatcher, $streams streams) said:" >&2
                grep -v 'OpenAI base URL' "$work/switchyard.out" | sort | uniq -c | sort -rn |
                    head -8 >&2
            fi
        done
    done
done

echo
echo "| streams | target | completed | errors by kind | server CPU µs/event | server peak RSS MB |" \
     "TTFT p50 ms | TTFT p99 ms | stream p50 / p99 ms | wall s | driver CPU µs/event |" \
     "loop lag p99 (bucket) s | loop lag samples over 0.1 s |"
echo "| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |"
awk '{
    delete v
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
    lag = ("loop_lag_p99_le_s" in v) ? "≤ " v["loop_lag_p99_le_s"] : "-"
    over = ("loop_lag_over_100ms" in v) ? v["loop_lag_over_100ms"] " of " v["loop_lag_samples"] : "-"
    printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %s |\n",
        v["streams"], v["label"], v["completed"], v["error_kinds"], v["server_cpu_us_per_event"],
        v["server_peak_rss_mb"], v["ttft_p50_ms"], v["ttft_p99_ms"], v["duration_p50_ms"],
        v["duration_p99_ms"], v["wall_s"], v["driver_cpu_us_per_event"], lag, over
}' "$results"

(( ttft_rounds > 0 )) || exit 0
# Time to first token with nothing queued: one stream at a time, each 20 events 10 ms apart.
"$build/tests/bench/fast_upstream" --threads 1 --stream-events 20 --event-interval-ms 10 \
    >"$work/paced.out" 2>&1 &
paced_pid=$!
pids+=("$paced_pid")
paced_port="$(port_from "$work/paced.out" 'listening on 127\.0\.0\.1:[0-9]+')"
sed "s|127.0.0.1:$upstream_port/|127.0.0.1:$paced_port/|" "$work/streams.yaml" >"$work/ttft.yaml"
"$build/app/switchyard" --headless --config "$work/ttft.yaml" --listen 127.0.0.1:0 \
    --state-dir "$work/state" --log-level warning >"$work/switchyard.out" 2>&1 &
switchyard_pid=$!
pids+=("$switchyard_pid")
switchyard_port="$(port_from "$work/switchyard.out" 'OpenAI base URL http://127\.0\.0\.1:[0-9]+')"
ttft="$work/ttft.txt"
# A new connection per stream, as the sweep opens them; then one connection kept alive from
# stream to stream, as an SDK's connection pool reuses it.
for connection in new kept; do
    [[ "$connection" == kept ]] && reuse=(--keep-alive) || reuse=()
    for target in direct via; do
        [[ "$target" == direct ]] && port="$paced_port" pid="$paced_pid" ||
            port="$switchyard_port" pid="$switchyard_pid"
        timeout $(( timeout_s + 30 )) "$build/tests/bench/streams_bench" \
            --target "127.0.0.1:$port" --pid "$pid" --label "$target/$connection" \
            --streams 1 --rounds "$ttft_rounds" --timeout-s "$timeout_s" "${reuse[@]}" |
            tee -a "$ttft" >&2
    done
    # The engine's own part, from its traces: `ttft_ms` runs from the request handed to the
    # gateway (read whole) to the provider's first event read, before it is relayed. The ring
    # holds the rounds just run, newest first; an admin page holds at most 500.
    curl -s --max-time 10 \
        "http://127.0.0.1:$switchyard_port/admin/v1/traces?limit=$(( ttft_rounds < 500 ? ttft_rounds : 500 ))" |
        grep -oE '"ttft_ms":[0-9.]+' | cut -d: -f2 | sort -n |
        awk -v label="via/$connection" '{ v[NR] = $1 } END {
            if (NR > 0) printf "ENGINE label=%s traces=%d engine_ttft_p50_ms=%.3f\n", label, NR,
                v[int((NR + 1) / 2)] }' >>"$ttft"
done
echo
echo "One stream at a time, $ttft_rounds in a row, 20 events 10 ms apart:"
echo
echo "| target / connection | completed | errors by kind | TTFT p50 ms | TTFT p99 ms |" \
     "server CPU µs/event |"
echo "| --- | ---: | --- | ---: | ---: | ---: |"
awk '$1 == "RESULT" {
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
    printf "| %s | %s | %s | %s | %s | %s |\n", v["label"], v["completed"], v["error_kinds"],
        v["ttft_p50_ms"], v["ttft_p99_ms"], v["server_cpu_us_per_event"]
    p50[v["label"]] = v["ttft_p50_ms"]
} $1 == "ENGINE" {
    for (i = 2; i <= NF; ++i) { split($i, kv, "="); e[kv[1]] = kv[2] }
    engine[e["label"]] = e["engine_ttft_p50_ms"]
} END {
    printf "\nadded time to first token, p50: %.3f ms on a new connection per stream, " \
        "%.3f ms on a kept-alive connection\n",
        p50["via/new"] - p50["direct/new"], p50["via/kept"] - p50["direct/kept"]
    printf "the engine'"'"'s part by its own traces (request read to the first event read), p50: " \
        "%s ms on a new connection, %s ms on a kept-alive one\n",
        ("via/new" in engine) ? engine["via/new"] : "?", ("via/kept" in engine) ? engine["via/kept"] : "?"
}' "$ttft"
