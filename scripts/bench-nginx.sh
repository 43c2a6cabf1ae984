#!/usr/bin/env bash
# Switchyard against nginx, one command: an nginx upstream (one worker) answers every chat request
# with a fixed JSON completion or a fixed SSE stream; wrk drives nginx directly, a second nginx
# proxying to it (keep-alive to the upstream, `proxy_buffering off` for SSE) and two headless
# Switchyards with that upstream as their one provider, one without client keys and one with a key
# for the benchmark's token, non-streamed and streamed, at 64 connections and at 1. Prints a
# Markdown table of requests/s, p50 and p99 latency, Switchyard's share of nginx direct and of
# nginx as a proxy and the median each proxy adds; a second of Switchyard's heap allocations and
# engine thread CPU per request (tests/bench/alloc_counter, preloaded, counts the allocations);
# the usage ledger thread's CPU per row; and peak RSS. `scripts/bench.sh nginx` runs it too.
# A proxy cannot beat the upstream it forwards to, so "nginx as a reverse proxy" is the practical
# ceiling for a gateway on this machine; docs/benchmarks.md reads the shares against it.
#
#   scripts/bench-nginx.sh
#
# wrk runs on one CPU (BENCH_LOAD_CPU, 0), every server and its upstream on another
# (BENCH_SERVER_CPU, 1), so the load generator never competes with what it measures. nginx and wrk
# are this benchmark's alone: the script installs them with apt-get when they are missing (as
# root, or through sudo); scripts/setup.sh does not bring them.
#
# Environment: BENCH_DURATION_S (5), BENCH_WARMUP_S (1), BENCH_CONNECTIONS (64,1),
# BENCH_LOAD_CPU (0), BENCH_SERVER_CPU (1), BENCH_BUILD_DIR (default build: the RelWithDebInfo
# build of the README, built by scripts/build.sh; another directory is configured in Release when
# it has no build yet).
set -euo pipefail

# The README's build unless told otherwise: the figures compare with what users run.
BENCH_BUILD_DIR="${BENCH_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build}"
# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh" bench-nginx
duration="${BENCH_DURATION_S:-5}"
warmup="${BENCH_WARMUP_S:-1}"
connections="${BENCH_CONNECTIONS:-64,1}"
load_cpu="${BENCH_LOAD_CPU:-0}"
server_cpu="${BENCH_SERVER_CPU:-1}"
# wrk takes whole seconds only.
if ! [[ "$duration" =~ ^[1-9][0-9]*$ && "$warmup" =~ ^[0-9]+$ ]]; then
    echo "bench-nginx: BENCH_DURATION_S and BENCH_WARMUP_S are whole seconds" \
         "(the duration at least 1)" >&2
    exit 2
fi

# --- The benchmark's own tools -------------------------------------------------------------------

nginx_bin="$(command -v nginx || true)"
[[ -z "$nginx_bin" && -x /usr/sbin/nginx ]] && nginx_bin=/usr/sbin/nginx
missing=()
[[ -n "$nginx_bin" ]] || missing+=(nginx)
command -v wrk >/dev/null || missing+=(wrk)
command -v curl >/dev/null || missing+=(curl)
if (( ${#missing[@]} > 0 )); then
    # Debian's nginx package enables its own service on port 80 where systemd runs; this
    # benchmark never uses it (`systemctl disable --now nginx` turns it off).
    bench_install "${missing[@]}"
    nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
fi

# Pinning needs two CPUs this process may use; without them the figures are still printed, but
# the load generator shares a core with the server and they are not comparable with pinned runs.
load_pin=()
server_pin=()
if taskset -c "$load_cpu" true 2>/dev/null && taskset -c "$server_cpu" true 2>/dev/null &&
    [[ "$load_cpu" != "$server_cpu" ]]; then
    load_pin=(taskset -c "$load_cpu")
    server_pin=(taskset -c "$server_cpu")
    placement="wrk on CPU $load_cpu, the servers on CPU $server_cpu"
else
    placement="unpinned"
    echo "bench-nginx: warning: cannot pin wrk to CPU $load_cpu and the servers to CPU" \
         "$server_cpu; running unpinned" >&2
fi

if [[ "$build" == "$root/build" ]]; then
    "$root/scripts/build.sh" --target switchyard alloc_counter >/dev/null
else
    bench_build if-new switchyard alloc_counter
fi

bench_warn_if_busy
bench_start_work
# nginx's worker drops root for nobody and must still reach its temporary directories.
chmod 711 "$work"

# --- What nginx answers -------------------------------------------------------------------------

# The answers of tests/bench/fast_upstream, byte for byte in their content: a chat completion,
# and a stream of six chunk events and `data: [DONE]`. nginx sends them with Content-Length; the
# gateway relays the stream as chunked events either way.
completion='{"id":"chatcmpl-bench","object":"chat.completion","created":1764374400,'
completion+='"model":"bench-model","system_fingerprint":"fp_bench","choices":[{"index":0,'
completion+='"message":{"role":"assistant","content":"The function leaks the socket when '
completion+='connect fails; close it on that path and the handle count stays flat."},'
completion+='"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":412,'
completion+='"completion_tokens":24,"total_tokens":436}}'
sse_event() { # delta finish-reason; \n is nginx's escape for a newline in a quoted string
    printf '%s' 'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk",' \
        '"created":1764374400,"model":"bench-model","choices":[{"index":0,"delta":' \
        "$1" ',"logprobs":null,"finish_reason":' "$2" '}]}\n\n'
}
stream="$(sse_event '{"role":"assistant","content":""}' null)"
for piece in 'The function leaks' ' the socket when connect fails;' ' close it on that path.'; do
    stream+="$(sse_event "{\"content\":\"$piece\"}" null)"
done
stream+="$(sse_event '{}' '"stop"')"
stream+='data: [DONE]\n\n'

# What every nginx here shares: one worker, in the foreground, everything it writes inside its
# own directory, errors to stderr. nginx closes a kept-alive connection after 1000 requests by
# default; wrk and Switchyard never do, so neither does nginx here.
nginx_head() { # dir port token
    cat <<NGINX
daemon off;
worker_processes 1;
pid $1/nginx.pid;
error_log stderr;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $1/client_body;
    proxy_temp_path $1/proxy;
    fastcgi_temp_path $1/fastcgi;
    uwsgi_temp_path $1/uwsgi;
    scgi_temp_path $1/scgi;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
    server {
        listen 127.0.0.1:$2;
        # Tells this run's nginx from anything else that might answer on the port.
        location = /bench-ready { return 200 '$3'; }
NGINX
}

# The upstream. One path, as for a real provider: what the request's Accept header asks for
# (Switchyard's openai adapter sends text/event-stream for a stream, as wrk does here) picks the
# answer; nginx reads no request body to choose.
upstream_conf() { # dir port token
    nginx_head "$@"
    cat <<NGINX
        location = /v1/chat/completions {
            if (\$http_accept ~ event-stream) { rewrite ^ /sse-answer last; }
            default_type application/json;
            return 200 '$completion';
        }
        location = /sse-answer {
            internal;
            default_type text/event-stream;
            add_header Cache-Control no-cache;
            return 200 '$stream';
        }
    }
}
NGINX
}

# nginx as a reverse proxy: HTTP/1.1 with a pool of kept-alive connections to the upstream, and
# streams passed on as they arrive (proxy_buffering off), as a gateway must relay them.
proxy_conf() { # dir port token upstream-port
    nginx_head "$1" "$2" "$3"
    cat <<NGINX
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        location = /v1/chat/completions {
            if (\$http_accept ~ event-stream) { rewrite ^ /sse-proxy last; }
            proxy_pass http://bench_upstream;
        }
        location = /sse-proxy {
            internal;
            proxy_buffering off;
            proxy_pass http://bench_upstream/v1/chat/completions;
        }
    }
    upstream bench_upstream {
        server 127.0.0.1:$4;
        keepalive 128;
        keepalive_requests 1000000;
    }
}
NGINX
}

# Starts nginx with the config a writer function prints, on a free loopback port below the
# ephemeral range (so no outgoing connection holds it): tries random ports until this run's nginx
# answers on one. Sets nginx_port and nginx_pid and adds the process to pids.
start_nginx() { # name writer [writer args...]
    local name="$1" writer="$2" dir="$work/$1" token port pid
    shift 2
    mkdir -p "$dir"
    chmod 755 "$dir"
    for _ in $(seq 20); do
        port=$(( 20000 + RANDOM % 12000 ))
        # Something already listening there: try another port.
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            continue
        fi
        token="$name-$$-$RANDOM"
        "$writer" "$dir" "$port" "$token" "$@" >"$dir/nginx.conf"
        "${server_pin[@]}" "$nginx_bin" -p "$dir" -c "$dir/nginx.conf" -e stderr \
            >"$dir/stderr" 2>&1 &
        pid=$!
        for _ in $(seq 50); do
            # nginx retries a port it cannot bind for 2.5 s before it gives up: move on at once.
            if ! kill -0 "$pid" 2>/dev/null || grep -q 'bind()' "$dir/stderr"; then
                break
            fi
            if [[ "$(curl -s --max-time 1 "http://127.0.0.1:$port/bench-ready" || true)" == "$token" ]]
            then
                nginx_port="$port"
                nginx_pid="$pid"
                pids+=("$pid")
                return 0
            fi
            sleep 0.1
        done
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    echo "bench-nginx: could not start nginx ($name):" >&2
    cat "$dir/stderr" >&2
    return 1
}

start_nginx upstream upstream_conf
upstream_port="$nginx_port"
upstream_pid="$nginx_pid"
start_nginx proxy proxy_conf "$upstream_port"
proxy_port="$nginx_port"
proxy_pid="$nginx_pid"

# Two Switchyards, one without client keys and one with a key for wrk's bearer token: the issue
# judges both. Otherwise the defaults (traces, metrics, the usage ledger), as the issue judges them.
write_config() { # file with-keys
    cat >"$1" <<YAML
# One OpenAI-compatible provider: the nginx upstream.
listen: 127.0.0.1:0
limits:
  # Every benchmark connection comes from 127.0.0.1.
  max_connections_per_address: 0
providers:
  - id: nginx-upstream
    kind: openai
    base_url: http://127.0.0.1:$upstream_port/v1
    models: [bench-model]
    capacity: 1024
YAML
    if [[ "$2" == keys ]]; then
        # The SHA-256 of "bench-key", the token wrk and curl send.
        cat >>"$1" <<YAML
auth:
  keys:
    - id: bench
      tenant: bench
      key: sha256:$(printf '%s' bench-key | sha256sum | cut -d' ' -f1)
YAML
    fi
}

# Each Switchyard counts its heap allocations through tests/bench/alloc_counter, preloaded: the
# count lands in a file of its own, read before and after each measured run.
start_switchyard() { # name with-keys
    local dir="$work/$1"
    mkdir -p "$dir"
    write_config "$dir/bench.yaml" "$2"
    # A state directory of the run's own: the usage ledger records every benchmark request.
    env LD_PRELOAD="$build/tests/bench/liballoc_counter.so" \
        SWITCHYARD_BENCH_ALLOC_FILE="$dir/allocations" \
        "${server_pin[@]}" "$build/app/switchyard" --headless --config "$dir/bench.yaml" \
        --listen 127.0.0.1:0 --state-dir "$dir/state" --log-level warning \
        >"$dir/switchyard.out" 2>&1 &
    switchyard_pid=$!
    pids+=("$switchyard_pid")
    switchyard_port="$(port_from "$dir/switchyard.out" \
        'OpenAI base URL http://127\.0\.0\.1:[0-9]+')"
}
start_switchyard switchyard plain
plain_pid="$switchyard_pid"
plain_port="$switchyard_port"
start_switchyard switchyard-keys keys
keys_pid="$switchyard_pid"
keys_port="$switchyard_port"
echo "bench-nginx: nginx upstream on 127.0.0.1:$upstream_port, nginx proxy on" \
     "127.0.0.1:$proxy_port, Switchyard on 127.0.0.1:$plain_port, with keys on" \
     "127.0.0.1:$keys_port; $placement" >&2

# What a Switchyard has spent so far: its allocations, and the CPU time (clock ticks) of its engine
# thread and of its usage ledger's thread. One line: "allocations engine-ticks ledger-ticks".
thread_ticks() { # pid thread-name
    local task
    for task in /proc/"$1"/task/*; do
        if [[ "$(cat "$task/comm" 2>/dev/null)" == "$2" ]]; then
            # utime and stime, the 14th and 15th fields; the name before them is in parentheses.
            sed 's/^.*) //' "$task/stat" | awk '{ print $12 + $13 }'
            return
        fi
    done
    echo 0
}
switchyard_spent() { # pid
    local allocations
    sleep 0.05 # the counter's file is written every 20 ms
    allocations="$(tr -d ' \n' <"$work/$(name_of "$1")/allocations" 2>/dev/null || echo 0)"
    echo "${allocations:-0} $(thread_ticks "$1" switchyard-engi) $(thread_ticks "$1" usage-ledger)"
}
name_of() { # pid
    [[ "$1" == "$plain_pid" ]] && echo switchyard || echo switchyard-keys
}
ticks_per_second="$(getconf CLK_TCK)"

# --- The request ---------------------------------------------------------------------------------

# The ~2 KB chat request of tests/bench/load_bench (tests/bench/chat_request.json, one line), up to
# the value of its "stream", which each mode fills in.
request="$(<"$root/tests/bench/chat_request.json")"
body="${request%false\}}"

# One wrk script per mode. done() prints the figures from wrk's own latency histogram (the one
# `--latency` prints as a distribution), in microseconds, on one line the table is built from.
for mode in json sse; do
    [[ "$mode" == sse ]] && stream_flag=true accept=text/event-stream ||
        stream_flag=false accept=application/json
    printf '%s' "$body$stream_flag}" >"$work/$mode.body"
    cat >"$work/$mode.lua" <<LUA
wrk.method = "POST"
wrk.body = [==[$body$stream_flag}]==]
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "$accept"
wrk.headers["Authorization"] = "Bearer bench-key"
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d errors=%d\n",
        summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
        e.connect + e.read + e.write + e.status + e.timeout))
end
LUA
done

# Every target must give the right answer before its speed means anything: a completion with
# choices, and a stream that ends in [DONE].
for target in "nginx direct:$upstream_port" "nginx proxy:$proxy_port" "Switchyard:$plain_port" \
    "Switchyard with keys:$keys_port"
do
    for mode in json sse; do
        [[ "$mode" == sse ]] && accept=text/event-stream expect='data: [DONE]' ||
            accept=application/json expect='"choices"'
        answer="$(curl -s --max-time 5 -w '\n%{http_code}' -H 'Content-Type: application/json' \
            -H "Accept: $accept" -H 'Authorization: Bearer bench-key' \
            --data-binary "@$work/$mode.body" \
            "http://127.0.0.1:${target##*:}/v1/chat/completions" || true)"
        if [[ "${answer##*$'\n'}" != 200 || "$answer" != *"$expect"* ]]; then
            echo "bench-nginx: ${target%:*} gave a wrong $mode answer:" >&2
            echo "$answer" | head -c 2000 >&2
            echo >&2
            exit 1
        fi
    done
done

# --- Measuring ----------------------------------------------------------------------------------

results="$work/results.txt"
: >"$results"
run_wrk() { # seconds connections lua url
    timeout $(( $1 + 30 )) "${load_pin[@]}" wrk -t1 -c "$2" -d "${1}s" --timeout 5s --latency \
        -s "$3" "$4"
}
IFS=',' read -r -a connection_list <<<"$connections"
# Each case runs its three targets back to back, so a drift in the machine's speed touches all.
for mode in json sse; do
    for conns in "${connection_list[@]}"; do
        for target in "direct:$upstream_port" "proxy:$proxy_port" "switchyard:$plain_port" \
            "keys:$keys_port"
        do
            url="http://127.0.0.1:${target##*:}/v1/chat/completions"
            pid=""
            [[ "${target%:*}" == switchyard ]] && pid="$plain_pid"
            [[ "${target%:*}" == keys ]] && pid="$keys_pid"
            if (( warmup > 0 )); then
                run_wrk "$warmup" "$conns" "$work/$mode.lua" "$url" >/dev/null
            fi
            [[ -n "$pid" ]] && read -r allocs_before engine_before _ <<<"$(switchyard_spent "$pid")"
            line="$(run_wrk "$duration" "$conns" "$work/$mode.lua" "$url" | grep '^RESULT')"
            costs=""
            if [[ -n "$pid" ]]; then
                read -r allocs_after engine_after _ <<<"$(switchyard_spent "$pid")"
                costs=" allocations=$(( allocs_after - allocs_before ))"
                costs+=" engine_us=$(( (engine_after - engine_before) * 1000000 / ticks_per_second ))"
            fi
            echo "$mode $conns ${target%:*} ${line#RESULT }$costs" >>"$results"
            echo "bench-nginx: $mode, $conns connection(s), ${target%:*}: ${line#RESULT }$costs" >&2
        done
    done
done

# The usage ledger writes its rows in batches, a little after the requests: wait for the last
# batch, then divide each ledger thread's CPU time by the rows it wrote.
sleep 2
ledger_line=""
for pid in "$plain_pid" "$keys_pid"; do
    name="$(name_of "$pid")"
    port="$plain_port"
    [[ "$pid" == "$keys_pid" ]] && port="$keys_port"
    rows="$(curl -s --max-time 5 "http://127.0.0.1:$port/admin/v1/usage" |
        grep -o '"written_rows":[0-9]*' | cut -d: -f2 || true)"
    read -r _ _ ledger_ticks <<<"$(switchyard_spent "$pid")"
    if [[ -n "$rows" && "$rows" != 0 ]]; then
        ledger_line+="$(awk -v t="$ledger_ticks" -v hz="$ticks_per_second" -v r="$rows" -v n="$name" \
            'BEGIN { printf "%s: %.2f µs of CPU per row (%d rows); ", n, t * 1e6 / hz / r, r }')"
    fi
done

# Peak resident memory over the whole run: Switchyard's process, and each nginx's worker.
peak_rss_mb() { # pid
    awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo "?"
}
worker_rss_mb() { # nginx master pid
    local worker
    read -r worker _ 2>/dev/null <"/proc/$1/task/$1/children" || true
    if [[ -n "${worker:-}" ]]; then peak_rss_mb "$worker"; else echo "?"; fi
}
switchyard_rss="$(peak_rss_mb "$plain_pid") / $(peak_rss_mb "$keys_pid")"
upstream_rss="$(worker_rss_mb "$upstream_pid")"
proxy_rss="$(worker_rss_mb "$proxy_pid")"

echo
echo "| mode | connections | nginx direct: req/s (p50 / p99 ms) |" \
     "nginx as a reverse proxy: req/s (p50 / p99 ms) | Switchyard: req/s (p50 / p99 ms) |" \
     "Switchyard with keys: req/s (p50 / p99 ms) |" \
     "Switchyard / nginx direct, without / with keys |" \
     "Switchyard / nginx as a proxy, without / with keys |" \
     "added p50 ms: nginx as a proxy / Switchyard / with keys |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
awk -v rss="$switchyard_rss" -v up_rss="$upstream_rss" -v proxy_rss="$proxy_rss" \
    -v ledger="$ledger_line" '
function group(n) {
    s = sprintf("%d", n); out = ""
    while (length(s) > 3) { out = "," substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
    return s out
}
function mode_name(m) { return m == "sse" ? "streamed" : "non-streamed" }
{
    delete v
    for (i = 4; i <= NF; ++i) { split($i, kv, "="); v[kv[1]] = kv[2] }
    key = $1 " " $2
    if (!(key in seen)) { seen[key] = 1; order[++cases] = key }
    rps[key, $3] = v["requests"] / (v["duration_us"] / 1e6)
    p50[key, $3] = v["p50_us"] / 1000
    p99[key, $3] = v["p99_us"] / 1000
    if ("allocations" in v && v["requests"] > 0) {
        allocs[key, $3] = v["allocations"] / v["requests"]
        engine[key, $3] = v["engine_us"] / v["requests"]
    }
    if (v["errors"] > 0) bad = bad sprintf("\n%s, %s connection(s), %s: %d errors", \
        mode_name($1), $2, $3, v["errors"])
}
END {
    for (c = 1; c <= cases; ++c) {
        split(order[c], k, " ")
        key = order[c]
        row = sprintf("| %s | %s |", mode_name(k[1]), k[2])
        split("direct proxy switchyard keys", targets, " ")
        for (t = 1; t <= 4; ++t)
            row = row sprintf(" %s (%.3f / %.3f) |", group(rps[key, targets[t]]), \
                p50[key, targets[t]], p99[key, targets[t]])
        row = row sprintf(" %.1f %% / %.1f %% | %.1f %% / %.1f %% | %+.3f / %+.3f / %+.3f |", \
            100 * rps[key, "switchyard"] / rps[key, "direct"], \
            100 * rps[key, "keys"] / rps[key, "direct"], \
            100 * rps[key, "switchyard"] / rps[key, "proxy"], \
            100 * rps[key, "keys"] / rps[key, "proxy"], \
            p50[key, "proxy"] - p50[key, "direct"], p50[key, "switchyard"] - p50[key, "direct"], \
            p50[key, "keys"] - p50[key, "direct"])
        print row
        share[key] = 100 * rps[key, "switchyard"] / rps[key, "proxy"]
        keyshare[key] = 100 * rps[key, "keys"] / rps[key, "proxy"]
    }
    print ""
    print "| mode | connections | heap allocations per request, without / with keys | engine thread CPU µs per request, without / with keys |"
    print "| --- | ---: | ---: | ---: |"
    for (c = 1; c <= cases; ++c) {
        split(order[c], k, " ")
        key = order[c]
        printf "| %s | %s | %.1f / %.1f | %.1f / %.1f |\n", mode_name(k[1]), k[2], \
            allocs[key, "switchyard"], allocs[key, "keys"], engine[key, "switchyard"], \
            engine[key, "keys"]
    }
    printf "\nPeak RSS (VmHWM) over the run: Switchyard %s MB (without / with keys), nginx upstream" \
        " worker %s MB, nginx proxy worker %s MB.\n", rss, up_rss, proxy_rss
    if (ledger != "") printf "Usage ledger thread: %s\n", ledger
    if (("json 64") in share)
        printf "Non-streamed at 64 connections: %.1f %% / %.1f %% of nginx as a proxy without / with keys (#37 aims at 60 %% or more).\n", \
            share["json 64"], keyshare["json 64"]
    if (("sse 64") in share)
        printf "Streamed at 64 connections: %.1f %% / %.1f %% of nginx as a proxy without / with keys (#37 aims at 30 %% or more).\n", \
            share["sse 64"], keyshare["sse 64"]
    if (bad != "") printf "\nErrors (failed connections, reads, timeouts or non-2xx answers):%s\n", bad
}' "$results"

for name in switchyard switchyard-keys; do
    if grep -qv 'OpenAI base URL' "$work/$name/switchyard.out"; then
        echo "bench-nginx: $name said:" >&2
        grep -v 'OpenAI base URL' "$work/$name/switchyard.out" | sort | uniq -c | sort -rn |
            head -8 >&2
    fi
done
