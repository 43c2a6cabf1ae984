#!/usr/bin/env bash
# Fleet benchmark: how long a change made on one node takes to be in force on the others. Starts
# a Redis and three headless Switchyards on loopback in front of the fast local upstream, then,
# R times each: applies a config version on node 1 and times until nodes 2 and 3 run it; creates
# a client key on node 1 and times until node 3 admits a request with it. Prints one Markdown
# table; docs/fleet.md records the results. Also prints the Redis commands each node sent per
# second while idle.
#
#   scripts/bench-fleet.sh
#
# Environment: BENCH_FLEET_ROUNDS (20), BENCH_FLEET_SYNC (100ms: fleet.sync_interval),
# BENCH_BUILD_DIR (build-bench).
set -euo pipefail

# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh" bench-fleet
rounds="${BENCH_FLEET_ROUNDS:-20}"
sync_interval="${BENCH_FLEET_SYNC:-100ms}"

bench_build if-new switchyard fast_upstream
bench_start_work

"$build/tests/bench/fast_upstream" --threads 1 >"$work/upstream.out" 2>&1 &
pids+=("$!")
upstream_port="$(port_from "$work/upstream.out" 'listening on 127\.0\.0\.1:[0-9]+')"

bench_start_redis

node_config() { # name models
    cat <<YAML
listen: 127.0.0.1:0
fleet: {redis: redis://127.0.0.1:$redis_port/0, node: $1, sync_interval: $sync_interval}
providers:
  - id: bench-upstream
    kind: openai
    base_url: http://127.0.0.1:$upstream_port/v1
    models: [$2]
YAML
}

ports=()
for n in 1 2 3; do
    node_config "node$n" bench-model >"$work/node$n.yaml"
    "$build/app/switchyard" --headless --config "$work/node$n.yaml" --listen 127.0.0.1:0 \
        --state-dir "$work/state$n" --log-level warning >"$work/node$n.out" 2>&1 &
    pids+=("$!")
    ports+=("$(port_from "$work/node$n.out" 'OpenAI base URL http://127\.0\.0\.1:[0-9]+')")
done

now_ms() { date +%s%3N; }
fleet_version() { # port
    curl -s "http://127.0.0.1:$1/admin/v1/fleet" |
        grep -oE '"config":\{[^}]*"version":[0-9]+' | grep -oE '[0-9]+$' || echo 0
}
# Waits until every node lists three nodes and runs the same config version.
for _ in $(seq 200); do
    v1="$(fleet_version "${ports[0]}")"
    if [[ "$v1" != 0 && "$(fleet_version "${ports[1]}")" == "$v1" &&
          "$(fleet_version "${ports[2]}")" == "$v1" ]]; then
        break
    fi
    sleep 0.05
done

# Redis commands per second of one idle node.
sent() { curl -s "http://127.0.0.1:$1/admin/v1/fleet" | grep -oE '"sent":[0-9]+' | grep -oE '[0-9]+'; }
before="$(sent "${ports[0]}")"
sleep 5
idle_rate=$(( ($(sent "${ports[0]}") - before) / 5 ))

config_ms=()
key_ms=()
for round in $(seq "$rounds"); do
    # A config version: alternate the model list so every round is a change.
    models="bench-model"
    (( round % 2 )) && models="bench-model, extra-$round"
    target=$(( $(fleet_version "${ports[0]}") + 1 ))
    node_config node1 "$models" |
        curl -s -o /dev/null --data-binary @- "http://127.0.0.1:${ports[0]}/admin/v1/config/apply"
    start="$(now_ms)"
    until [[ "$(fleet_version "${ports[1]}")" -ge "$target" &&
             "$(fleet_version "${ports[2]}")" -ge "$target" ]]; do
        sleep 0.005
    done
    config_ms+=( $(( $(now_ms) - start )) )

    # A client key created on node 1, used on node 3.
    key="$(curl -s -d "{\"tenant\":\"bench\",\"id\":\"bench-$round\"}" \
        "http://127.0.0.1:${ports[0]}/admin/v1/keys" | grep -oE 'sk-sy-[A-Za-z0-9_-]+')"
    start="$(now_ms)"
    until [[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" \
                -d '{"model":"bench-model","messages":[{"role":"user","content":"hi"}]}' \
                "http://127.0.0.1:${ports[2]}/v1/chat/completions")" == 200 ]]; do
        sleep 0.005
    done
    key_ms+=( $(( $(now_ms) - start )) )
done

stats() { # values... -> "median / max"
    sort -n | awk '{ a[NR] = $1 } END { printf "%d ms / %d ms", a[int((NR + 1) / 2)], a[NR] }'
}
echo
echo "| change, made on node 1 | in force on every node: median / max of $rounds |"
echo "| --- | --- |"
echo "| config version (applied on node 1, running on nodes 2 and 3) | $(printf '%s\n' "${config_ms[@]}" | stats) |"
echo "| client key (created on node 1, admitted on node 3) | $(printf '%s\n' "${key_ms[@]}" | stats) |"
echo
echo "fleet.sync_interval $sync_interval; an idle node sent Redis $idle_rate commands a second."
