#!/usr/bin/env bash
# Two Switchyards against each other, one command: both run at once on the same CPU, in front of
# the same upstream (tests/bench/fast_upstream, on that CPU too), each driven by its own wrk with
# the same load on another CPU. Each Switchyard gets about half of the shared CPU, so the one
# that costs less per request serves more: the ratio of their requests/s is the ratio of their
# costs, measured in the same seconds. A change of a few per cent shows in it, where separate runs
# on a machine whose speed drifts by 10-30 % from one minute to the next do not (docs/benchmarks.md,
# "Two builds side by side").
#
#   scripts/bench-duel.sh                       # A against A: the method's own spread
#   BENCH_DUEL_B=/path/to/other/switchyard scripts/bench-duel.sh
#   BENCH_DUEL_B_ENV="LD_PRELOAD=/path/lib.so" scripts/bench-duel.sh
#
# Prints each round's requests/s of A and B and B / A, then the median of B / A; above 1 means B
# serves more on the same CPU time. Run A against A first: the spread of its ratios around 1 is
# what a difference has to exceed.
#
# Environment: BENCH_DUEL_A, BENCH_DUEL_B (the binaries; default the README build's switchyard),
# BENCH_DUEL_A_ENV, BENCH_DUEL_B_ENV (VAR=VALUE words to start each with), BENCH_ROUNDS (5),
# BENCH_DURATION_S (10, per round), BENCH_CONNECTIONS (32, each wrk), BENCH_STREAM (0; 1 for
# streamed requests), BENCH_LOAD_CPU (0), BENCH_SERVER_CPU (1), BENCH_BUILD_DIR (build).
set -euo pipefail

BENCH_BUILD_DIR="${BENCH_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build}"
# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh" bench-duel
rounds="${BENCH_ROUNDS:-5}"
duration="${BENCH_DURATION_S:-10}"
connections="${BENCH_CONNECTIONS:-32}"
stream="${BENCH_STREAM:-0}"
load_cpu="${BENCH_LOAD_CPU:-0}"
server_cpu="${BENCH_SERVER_CPU:-1}"
binary_a="${BENCH_DUEL_A:-$build/app/switchyard}"
binary_b="${BENCH_DUEL_B:-$build/app/switchyard}"
read -r -a env_a <<<"${BENCH_DUEL_A_ENV:-}"
read -r -a env_b <<<"${BENCH_DUEL_B_ENV:-}"
if ! [[ "$rounds" =~ ^[1-9][0-9]*$ && "$duration" =~ ^[1-9][0-9]*$ ]]; then
    echo "bench-duel: BENCH_ROUNDS and BENCH_DURATION_S are whole numbers, at least 1" >&2
    exit 2
fi
if ! taskset -c "$load_cpu" true 2>/dev/null || ! taskset -c "$server_cpu" true 2>/dev/null ||
    [[ "$load_cpu" == "$server_cpu" ]]; then
    echo "bench-duel: needs two CPUs (BENCH_LOAD_CPU $load_cpu, BENCH_SERVER_CPU $server_cpu):" \
         "the two Switchyards must share one, and the load must not" >&2
    exit 1
fi

missing=()
command -v wrk >/dev/null || missing+=(wrk)
(( ${#missing[@]} == 0 )) || bench_install "${missing[@]}"

if [[ "$build" == "$root/build" ]]; then
    "$root/scripts/build.sh" --target switchyard fast_upstream >/dev/null
else
    bench_build if-new switchyard fast_upstream
fi
for binary in "$binary_a" "$binary_b"; do
    [[ -x "$binary" ]] || { echo "bench-duel: $binary is not an executable" >&2; exit 1; }
done

bench_warn_if_busy
bench_start_work

taskset -c "$server_cpu" "$build/tests/bench/fast_upstream" --threads 1 >"$work/upstream.out" 2>&1 &
pids+=($!)
upstream_port="$(port_from "$work/upstream.out" '127\.0\.0\.1:[0-9]+')"

# Sets started_port (not printed: a subshell would lose the pid the cleanup stops).
start_switchyard() { # name binary env-words...
    local name="$1" binary="$2"
    shift 2
    mkdir -p "$work/$name"
    cat >"$work/$name/bench.yaml" <<YAML
listen: 127.0.0.1:0
limits:
  max_connections_per_address: 0
providers:
  - id: fast-upstream
    kind: openai
    base_url: http://127.0.0.1:$upstream_port/v1
    models: [bench-model]
    capacity: 1024
YAML
    env "$@" taskset -c "$server_cpu" "$binary" --headless --config "$work/$name/bench.yaml" \
        --listen 127.0.0.1:0 --state-dir "$work/$name/state" --log-level warning \
        >"$work/$name/switchyard.out" 2>&1 &
    pids+=($!)
    started_port="$(port_from "$work/$name/switchyard.out" \
        'OpenAI base URL http://127\.0\.0\.1:[0-9]+')"
}
start_switchyard a "$binary_a" "${env_a[@]}"
port_a="$started_port"
start_switchyard b "$binary_b" "${env_b[@]}"
port_b="$started_port"

request="$(<"$root/tests/bench/chat_request.json")"
[[ "$stream" == 1 ]] && request="${request%false\}}true}"
cat >"$work/request.lua" <<LUA
wrk.method = "POST"
wrk.body = [==[$request]==]
wrk.headers["Content-Type"] = "application/json"
function done(summary, latency, requests)
    io.write(string.format("RESULT %d %d %d\n", summary.requests, summary.duration,
        summary.errors.connect + summary.errors.read + summary.errors.write +
        summary.errors.status + summary.errors.timeout))
end
LUA

# Both must answer before their speed means anything.
for port in "$port_a" "$port_b"; do
    if ! curl -sf --max-time 5 -H 'Content-Type: application/json' --data-binary "$request" \
        "http://127.0.0.1:$port/v1/chat/completions" >/dev/null; then
        echo "bench-duel: the Switchyard on port $port gave no answer" >&2
        exit 1
    fi
done

echo "bench-duel: A $binary_a ${env_a[*]}; B $binary_b ${env_b[*]}; both on CPU $server_cpu" \
     "with the upstream, $connections connections each from CPU $load_cpu;" \
     "$([[ "$stream" == 1 ]] && echo streamed || echo non-streamed)" >&2
drive() { # port seconds output
    taskset -c "$load_cpu" wrk -t1 -c "$connections" -d "${2}s" --timeout 5s \
        -s "$work/request.lua" "http://127.0.0.1:$1/v1/chat/completions" >"$3" 2>&1
}
# A short warm-up of both, as in the rounds.
drive "$port_a" 2 /dev/null & warm_a=$!
drive "$port_b" 2 /dev/null & warm_b=$!
wait "$warm_a" "$warm_b"

ratios=()
printf '| round | A: req/s | B: req/s | B / A |\n| ---: | ---: | ---: | ---: |\n'
for round in $(seq "$rounds"); do
    drive "$port_a" "$duration" "$work/a.txt" & run_a=$!
    drive "$port_b" "$duration" "$work/b.txt" & run_b=$!
    wait "$run_a" "$run_b"
    read -r _ requests_a micros_a errors_a < <(grep '^RESULT' "$work/a.txt")
    read -r _ requests_b micros_b errors_b < <(grep '^RESULT' "$work/b.txt")
    if (( errors_a + errors_b > 0 )); then
        echo "bench-duel: round $round had errors (A $errors_a, B $errors_b)" >&2
    fi
    line="$(awk -v ra="$requests_a" -v ma="$micros_a" -v rb="$requests_b" -v mb="$micros_b" \
        -v n="$round" 'BEGIN { a = ra * 1e6 / ma; b = rb * 1e6 / mb;
            printf "| %d | %.0f | %.0f | %.3f |", n, a, b, b / a }')"
    echo "$line"
    ratios+=("$(awk -F'|' '{ gsub(/ /, "", $5); print $5 }' <<<"$line")")
done
median="$(printf '%s\n' "${ratios[@]}" | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
echo
echo "B / A, median of $rounds round(s): $median"
