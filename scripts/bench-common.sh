# shellcheck shell=bash
# What the benchmark scripts share, sourced by each after `set -euo pipefail` with the prefix of
# its messages as the one argument: the build directory and its build, a scratch directory whose
# processes the EXIT trap stops, and reading the port a started process listens on.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/bench-common.sh" bench-streams
#
# Environment: BENCH_BUILD_DIR (default build-bench).

bench_name="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BENCH_BUILD_DIR:-$root/build-bench}"

# Configures $build in Release and builds the given targets on every core. `always` configures
# each time, so the figures come from a Release build whatever the directory held; `if-new` only
# when it has no cache yet, so an existing build directory is used as it is configured.
bench_build() { # always|if-new target...
    local when="$1"
    shift
    if [[ "$when" == always || ! -f "$build/CMakeCache.txt" ]]; then
        "$root/scripts/setup.sh"
        echo "$bench_name: configuring $build (Release)" >&2
        cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSWITCHYARD_WERROR=ON >/dev/null
    fi
    echo "$bench_name: building in $build" >&2
    cmake --build "$build" --parallel "$(nproc)" --target "$@" >/dev/null
}

# Installs Debian packages a benchmark alone needs (load generators, nginx), as root or through
# sudo; scripts/setup.sh does not bring them. Without either, says what to run and exits.
bench_install() { # package...
    local sudo=()
    if (( EUID != 0 )); then
        if ! command -v sudo >/dev/null; then
            echo "$bench_name: this benchmark needs $*, and installing them needs root; there" \
                 "is no sudo here. As root, run" >&2
            echo "  apt-get update && apt-get install --no-install-recommends $*" >&2
            echo "then run this script again." >&2
            exit 1
        fi
        sudo=(sudo)
    fi
    echo "$bench_name: installing $* for this benchmark (not part of scripts/setup.sh)" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! "${sudo[@]}" apt-get update -qq ||
        ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "$@" >&2; then
        echo "$bench_name: could not install $*; install them as root and run again" >&2
        exit 1
    fi
}

# The scratch directory, $work, and the processes started for the run, each added to pids: on
# exit, whatever ended the script, they are stopped and the directory removed.
bench_start_work() {
    work="$(mktemp -d)"
    pids=()
    trap bench_cleanup EXIT
}

# shellcheck disable=SC2317  # run by the EXIT trap
bench_cleanup() {
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$work"
}

# Warns when other work already keeps the CPUs more than 10 % busy (measured over one second):
# every figure assumes an idle machine, and would come out low and noisy.
bench_warn_if_busy() {
    local a b idle total=0 i busy
    read -r -a a </proc/stat
    sleep 1
    read -r -a b </proc/stat
    idle=$(( (b[4] + b[5]) - (a[4] + a[5]) ))
    for i in 1 2 3 4 5 6 7 8; do
        total=$(( total + b[i] - a[i] ))
    done
    busy=$(( total > 0 ? 100 * (total - idle) / total : 0 ))
    if (( busy > 10 )); then
        echo "$bench_name: warning: the CPUs are already ${busy} % busy with other work;" \
             "the figures below will be low and noisy" >&2
    fi
}

# Waits up to 10 s for a line matching $2 in file $1 and prints the port it ends with.
port_from() {
    local file="$1" pattern="$2" line
    for _ in $(seq 100); do
        line="$(grep -m1 -oE "$pattern" "$file" 2>/dev/null || true)"
        if [[ -n "$line" ]]; then
            echo "${line##*:}"
            return 0
        fi
        sleep 0.1
    done
    echo "$bench_name: timed out waiting for '$pattern' in $file:" >&2
    cat "$file" >&2
    return 1
}

# Starts a Redis of the run's own on a free loopback port (tried until one binds), keeping
# nothing on disk; sets redis_port and adds the process to pids. Needs bench_start_work first.
bench_start_redis() {
    local candidate pid
    redis_port=""
    for _ in $(seq 20); do
        candidate=$(( 20000 + RANDOM % 40000 ))
        redis-server --port "$candidate" --bind 127.0.0.1 --save "" --appendonly no \
            --dir "$work" --daemonize no >"$work/redis.out" 2>&1 &
        pid=$!
        sleep 0.3
        if redis-cli -p "$candidate" ping 2>/dev/null | grep -q PONG; then
            redis_port="$candidate"
            pids+=("$pid")
            return 0
        fi
        kill "$pid" 2>/dev/null || true
    done
    echo "$bench_name: could not start redis-server" >&2
    return 1
}
