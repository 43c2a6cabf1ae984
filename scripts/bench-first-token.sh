#!/usr/bin/env bash
# The engine's part of the first token, as #37 judges it, without probes built into the code:
# from the engine's system call that reads a client's request to the one that writes the
# answer's first event back, one paced stream at a time (an upstream pacing 20 events 10 ms
# apart). The kernel records those system calls and every context switch (`perf record`), so the
# same figure comes from any build, an old one included; runs of several builds alternate, as
# this machine's speed moves from one minute to the next (docs/benchmarks.md).
#
#   scripts/bench-first-token.sh                                   # the README build's switchyard
#   BENCH_BINARIES="/old/switchyard build/app/switchyard" scripts/bench-first-token.sh
#
# Prints, per run and binary, the p50 of three figures over its streams, then the median of each
# binary's runs and each binary's share of the first one's:
#   read->event  from the request's read returning to the first event's write being entered;
#   engine cpu   the part of that time the engine's thread was on a CPU;
#   upstream     the part the upstream (tests/bench/fast_upstream) was: on one vCPU it runs
#                inside the engine's send, woken by the loopback delivery;
#   read->send   from the request's read to the engine's write of the provider's request (the
#                first write to another descriptor in the interval): the request's own path;
#   answer->event from the engine's last read of the provider's answer to the first event's
#                write: the relay.
# Switchyard holds the answer's head until the first event (the opening check), so the first
# write carries both; the median size of that write is printed to show it.
#
# Environment: BENCH_BINARIES (switchyard executables, space-separated; the first is the
# reference), BENCH_RUNS (5 per binary and connection kind), BENCH_STREAMS_PER_RUN (100),
# BENCH_CONNECTIONS ("new kept": a new connection per stream, one kept-alive connection),
# BENCH_PIN (0; 1: Switchyard on CPU 1, the upstream and the driver on CPU 0, as a provider
# runs on another machine: the upstream no longer runs inside the engine's send),
# BENCH_BUILD_DIR (default build: the README's profile-guided build, built by scripts/build.sh,
# which #37 judges; another directory is configured in Release when it has no build yet, and an
# existing one is used as it is configured). Needs root (or perf_event_paranoid -1) for the
# kernel's record.
set -euo pipefail
shopt -s inherit_errexit # a failed step inside run_once's command substitution ends the run

BENCH_BUILD_DIR="${BENCH_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build}"

# shellcheck source=scripts/bench-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh" bench-first-token
runs="${BENCH_RUNS:-5}"
streams="${BENCH_STREAMS_PER_RUN:-100}"
read -r -a connections <<<"${BENCH_CONNECTIONS:-new kept}"
engine_side=()
others_side=()
if [[ "${BENCH_PIN:-0}" == 1 ]]; then
    if ! taskset -c 0 true 2>/dev/null || ! taskset -c 1 true 2>/dev/null; then
        echo "bench-first-token: BENCH_PIN=1 needs two CPUs, 0 and 1" >&2
        exit 1
    fi
    engine_side=(taskset -c 1)
    others_side=(taskset -c 0)
fi
if ! [[ "$runs" =~ ^[1-9][0-9]*$ && "$streams" =~ ^[1-9][0-9]*$ ]]; then
    echo "bench-first-token: BENCH_RUNS and BENCH_STREAMS_PER_RUN are whole numbers, at least 1" >&2
    exit 2
fi

missing=()
command -v perf >/dev/null || missing+=(linux-perf)
(( ${#missing[@]} == 0 )) || bench_install "${missing[@]}"
if (( EUID != 0 )) && [[ "$(cat /proc/sys/kernel/perf_event_paranoid)" != -1 ]]; then
    echo "bench-first-token: the kernel's record of system calls and context switches needs" \
         "root, or kernel.perf_event_paranoid = -1" >&2
    exit 1
fi

if [[ "$build" == "$root/build" ]]; then
    "$root/scripts/build.sh" --target switchyard fast_upstream streams_bench >/dev/null
else
    bench_build if-new switchyard fast_upstream streams_bench
fi
read -r -a binaries <<<"${BENCH_BINARIES:-$build/app/switchyard}"
for binary in "${binaries[@]}"; do
    [[ -x "$binary" ]] || { echo "bench-first-token: $binary is not an executable" >&2; exit 1; }
done

bench_start_work
bench_warn_if_busy

# The median of values[1..n], for both awk programs below (mawk has no sort).
awk_median='
function median(values, n,    i, j, t) {
    for (i = 2; i <= n; ++i) {
        t = values[i]
        for (j = i - 1; j >= 1 && values[j] > t; --j) values[j + 1] = values[j]
        values[j + 1] = t
    }
    return n % 2 ? values[(n + 1) / 2] : (values[n / 2] + values[n / 2 + 1]) / 2
}'

# The p50 of each figure over one run's streams, from the kernel's record: `perf script` of the
# Switchyard process's system calls, then of every CPU's context switches. Prints
# "read_to_event_us engine_cpu_us upstream_cpu_us first_write_bytes streams".
first_token_figures() { # sys-text sched-text upstream-tids
    awk -v upstream="$3" "$awk_median"'
    function hex(text,    i, value) { # perf prints system call arguments in hex
        value = 0
        for (i = 1; i <= length(text); ++i)
            value = value * 16 + index("0123456789abcdef", substr(text, i, 1)) - 1
        return value
    }
    # Time the thread `who` ("engine" or "upstream") was on a CPU within [from, to].
    function onCpu(who, from, to,    i, sum, a, b) {
        sum = 0
        for (i = 1; i <= runCount; ++i) {
            if (runWho[i] != who) continue
            a = runFrom[i] > from ? runFrom[i] : from
            b = runTo[i] < to ? runTo[i] : to
            if (b > a) sum += b - a
        }
        return sum
    }
    BEGIN {
        split(upstream, tids, " ")
        for (i in tids) isUpstream[tids[i]] = 1
        split("0 45 19 47", r, " "); for (i in r) isRead[r[i]] = 1    # read recvfrom readv recvmsg
        split("1 44 46 20", w, " "); for (i in w) isWrite[w[i]] = 1   # write sendto sendmsg writev
    }
    FNR == 1 { ++file }
    # The first file: system calls, as "tid time: raw_syscalls:sys_enter: NR n (args)" and
    # "tid time: raw_syscalls:sys_exit: NR n = ret".
    file == 1 && /raw_syscalls:sys_enter/ {
        tid = $1; t = $2 + 0; nr = $5
        fd = $6; gsub(/[(,]/, "", fd)
        enterNr[tid] = nr; enterFd[tid] = hex(fd)
        if (isWrite[nr] && open && tid == engineTid && enterFd[tid] == clientFd && !wrote) {
            wrote = 1; writeAt = t
        }
        # The first write to another descriptor in the interval: the request to the provider.
        if (isWrite[nr] && open && tid == engineTid && enterFd[tid] != clientFd && !sentAt) {
            sentAt = t; providerFd = enterFd[tid]
        }
        next
    }
    file == 1 && /raw_syscalls:sys_exit/ {
        tid = $1; t = $2 + 0; nr = $5; ret = $7 + 0
        if (!(tid in enterNr) || enterNr[tid] != nr) next
        fd = enterFd[tid]; delete enterNr[tid]
        if ((nr == 288 || nr == 43) && ret >= 0) { accepted[ret] = 1; next }  # accept4, accept
        if (nr == 3) { delete accepted[fd]; next }                           # close
        if (wrote && tid == engineTid && fd == clientFd && isWrite[nr]) {
            ++windows; from[windows] = readAt; to[windows] = writeAt; bytes[windows] = ret
            sent[windows] = sentAt; answered[windows] = answerAt
            open = 0; wrote = 0
            next
        }
        # The provider answer: the last read of its descriptor before the first event write.
        if (open && !wrote && sentAt && tid == engineTid && fd == providerFd && isRead[nr] &&
            ret > 0)
            answerAt = t
        if (isRead[nr] && ret > 0 && (fd in accepted) && !open) {
            open = 1; wrote = 0; readAt = t; clientFd = fd; engineTid = tid
            sentAt = 0; answerAt = 0; providerFd = -1
        }
        next
    }
    # The second file: "[cpu] time: prev_comm=... prev_pid=p ... ==> next_comm=... next_pid=n".
    file == 2 {
        cpu = $1; t = $2 + 0
        if (!match($0, /next_pid=[0-9]+/)) next
        next_pid = substr($0, RSTART + 9, RLENGTH - 9)
        if (cpu in current && current[cpu] != "") {
            ++runCount; runWho[runCount] = current[cpu]; runFrom[runCount] = since[cpu]
            runTo[runCount] = t
        }
        current[cpu] = next_pid == engineTid ? "engine" : (next_pid in isUpstream ? "upstream" : "")
        since[cpu] = t
    }
    END {
        if (windows == 0) { print "0 0 0 0 0 0 0"; exit }
        phased = 0
        for (i = 1; i <= windows; ++i) {
            span[i] = (to[i] - from[i]) * 1e6
            mine[i] = onCpu("engine", from[i], to[i]) * 1e6
            theirs[i] = onCpu("upstream", from[i], to[i]) * 1e6
            size[i] = bytes[i]
            if (sent[i] && answered[i]) {
                ++phased
                toSend[phased] = (sent[i] - from[i]) * 1e6
                relay[phased] = (to[i] - answered[i]) * 1e6
            }
        }
        printf "%.1f %.1f %.1f %d %d %.1f %.1f\n", median(span, windows), median(mine, windows),
            median(theirs, windows), median(size, windows), windows,
            phased ? median(toSend, phased) : 0, phased ? median(relay, phased) : 0
    }' "$1" "$2"
}

"${others_side[@]}" "$build/tests/bench/fast_upstream" --threads 1 --stream-events 20 \
    --event-interval-ms 10 >"$work/upstream.out" 2>&1 &
upstream_pid=$!
pids+=("$upstream_pid")
upstream_port="$(port_from "$work/upstream.out" 'listening on 127\.0\.0\.1:[0-9]+')"
upstream_tids=""
for task in /proc/"$upstream_pid"/task/*; do
    upstream_tids+="${task##*/} "
done
cat >"$work/first-token.yaml" <<YAML
# The paced upstream as the one provider.
listen: 127.0.0.1:0
providers:
  - id: paced
    kind: openai
    base_url: http://127.0.0.1:$upstream_port/v1
    models: [bench-model]
YAML

# One run: a fresh Switchyard, ten streams to warm it, then the recorded streams. It runs in a
# command substitution, a subshell the script's EXIT trap does not cover: its own stops what it
# started when a step fails. The processes' ids are the subshell's globals, not locals, so the
# trap still sees them when it runs after the function has returned.
run_once() { # binary connection
    local binary="$1" connection="$2" keep=() port
    pid="" recorder="" switches=""
    trap 'kill ${pid:-} ${recorder:-} ${switches:-} 2>/dev/null || true' EXIT
    [[ "$connection" == kept ]] && keep=(--keep-alive)
    rm -rf "$work/state"
    "${engine_side[@]}" "$binary" --headless --config "$work/first-token.yaml" --listen 127.0.0.1:0 \
        --state-dir "$work/state" --log-level warning >"$work/switchyard.out" 2>&1 &
    pid=$!
    port="$(port_from "$work/switchyard.out" 'OpenAI base URL http://127\.0\.0\.1:[0-9]+')"
    "${others_side[@]}" "$build/tests/bench/streams_bench" --target "127.0.0.1:$port" \
        --pid "$pid" --label warm \
        --streams 1 --rounds 10 --timeout-s 60 "${keep[@]}" >/dev/null
    perf record -q -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -p "$pid" \
        -o "$work/sys.data" >/dev/null 2>&1 &
    recorder=$!
    perf record -q -e sched:sched_switch -a -o "$work/sched.data" >/dev/null 2>&1 &
    switches=$!
    sleep 0.5
    "${others_side[@]}" "$build/tests/bench/streams_bench" --target "127.0.0.1:$port" \
        --pid "$pid" --label run \
        --streams 1 --rounds "$streams" --timeout-s 120 "${keep[@]}" >/dev/null
    kill -INT "$recorder" "$switches"
    wait "$recorder" "$switches" 2>/dev/null || true
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    perf script -i "$work/sys.data" -F tid,time,event,trace >"$work/sys.txt" 2>/dev/null
    perf script -i "$work/sched.data" -F cpu,time,trace >"$work/sched.txt" 2>/dev/null
    first_token_figures "$work/sys.txt" "$work/sched.txt" "$upstream_tids"
}

results="$work/results"
: >"$results"
echo "run  connection  binary  read->event_us  engine_cpu_us  upstream_cpu_us  first_write_bytes  streams  read->send_us  answer->event_us"
for run in $(seq "$runs"); do
    for connection in "${connections[@]}"; do
        for index in "${!binaries[@]}"; do
            line="$(run_once "${binaries[$index]}" "$connection")"
            echo "$run $connection $index $line" >>"$results"
            echo "$run  $connection  ${binaries[$index]}  $line"
        done
    done
done

echo
echo "median of the runs' p50s, µs (and the share of the first binary's)"
for connection in "${connections[@]}"; do
    for index in "${!binaries[@]}"; do
        awk -v c="$connection" -v b="$index" -v name="${binaries[$index]}" "$awk_median"'
        $2 == c && $3 == 0 { ++m; r0[m] = $4; e0[m] = $5 }
        $2 == c && $3 == b { ++n; r[n] = $4; e[n] = $5; u[n] = $6; s[n] = $9; a[n] = $10 }
        END {
            rr = median(r, n); ee = median(e, n); uu = median(u, n)
            printf "%-5s %s: read->event %.1f (%.2f), engine cpu %.1f (%.2f), upstream %.1f," \
                " read->send %.1f, answer->event %.1f\n", c, name, rr, rr / median(r0, m), ee,
                ee / median(e0, m), uu, median(s, n), median(a, n)
        }' "$results"
    done
done
