#!/usr/bin/env bash
# Proves the README's two commands on a brand-new Debian 12: builds a clean root from the package
# archive with mmdebstrap (nothing in it but apt), copies this checkout in, and there
#   1. checks that scripts/setup.sh, run without root and without sudo, says what to run;
#   2. runs scripts/test.sh (set-up, build, every test);
#   3. starts scripts/run.sh --headless --listen 127.0.0.1:0, sends one chat completion to the
#      embedded demo, checks /healthz, stops it with SIGTERM and checks that it exits 0;
#   4. builds the .deb, checks it declares the SQLite driver, installs it with apt, and runs the
#      installed binary twice as the systemd unit would (STATE_DIRECTORY=/var/lib/switchyard):
#      the config version and the usage ledger's row of the first run are there in the second.
# Prints one line per step and a final `N passed, N failed`. Needs root (for the chroot) and
# takes about half an hour on two cores: too slow for every CI run, run it whenever the set-up
# changes and record the result in the README.
#
#   scripts/fresh-root-check.sh [--keep] [--sources FILE]
#     --keep          leave the root in place afterwards (its path is printed)
#     --sources FILE  apt sources for the new root (default: this machine's own)
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$(pwd)

keep=0
sources=""
while [ $# -gt 0 ]; do
    case "$1" in
    --keep) keep=1 ;;
    --sources) sources="$2"; shift ;;
    *) echo "usage: $0 [--keep] [--sources FILE]" >&2; exit 2 ;;
    esac
    shift
done

if [ "$(id -u)" -ne 0 ]; then
    echo "$0: needs root to build and enter a chroot" >&2
    exit 2
fi
if ! command -v mmdebstrap >/dev/null 2>&1; then
    echo "$0: needs mmdebstrap (apt-get install mmdebstrap)" >&2
    exit 2
fi
if [ -z "$sources" ]; then
    # The archive this machine already uses, so the check needs no network beyond it.
    for candidate in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list; do
        if [ -s "$candidate" ]; then sources="$candidate"; break; fi
    done
fi

work=$(mktemp -d /var/tmp/switchyard-fresh-root.XXXXXX)
root="$work/root"
log="$work/log"
mkdir -p "$log"
server_pid=""
mounted=()

cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[$i]}" 2>/dev/null || true
    done
    if [ "$keep" -eq 1 ]; then
        echo "# root kept at $root, logs in $log"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

passed=0
failed=0
step() { # step NAME COMMAND...: runs one step, prints one line, counts it
    local name="$1" started=$SECONDS
    shift
    local file
    file="$log/$(echo "$name" | tr -c 'a-zA-Z0-9\n' '-').log"
    if "$@" >"$file" 2>&1; then
        passed=$((passed + 1))
        echo "ok   $name ($((SECONDS - started)) s)"
    else
        failed=$((failed + 1))
        echo "FAIL $name ($((SECONDS - started)) s), log: $log"
        # The logs go with the root unless --keep: the end of this one says what failed.
        tail -n 40 "$file" | sed 's/^/     | /'
        return 1
    fi
}
finish() {
    echo "# took $((SECONDS / 60)) min $((SECONDS % 60)) s on $(nproc) cores, $(date -u +%Y-%m-%d)"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

# Besides its apt sources and resolver, the root takes one thing from this machine's network
# path: the extra CA certificates Node is told to trust (NODE_EXTRA_CA_CERTS), for a path that
# inspects TLS, so the test set-up's `npm ci` can reach the npm registry. A machine with a direct
# path has none, and the root then gets none.
extra_ca="/usr/local/share/switchyard-network-path-ca.pem"
in_root() { # runs a command in the new root with a clean environment, as a new user would
    local node_ca=()
    [ -f "$root$extra_ca" ] && node_ca=("NODE_EXTRA_CA_CERTS=$extra_ca")
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb "${node_ca[@]}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

make_root() {
    local mirror=()
    [ -n "$sources" ] && mirror=("$sources")
    mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
        bookworm "$root" "${mirror[@]}"
    cp /etc/resolv.conf "$root/etc/resolv.conf"
    if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r "$NODE_EXTRA_CA_CERTS" ]; then
        mkdir -p "$(dirname "$root$extra_ca")"
        cp "$NODE_EXTRA_CA_CERTS" "$root$extra_ca"
    fi
    for fs in proc sys dev dev/pts; do
        mount --bind "/$fs" "$root/$fs"
        mounted+=("$root/$fs")
    done
    mount -t tmpfs tmpfs "$root/tmp"
    mounted+=("$root/tmp")
}

copy_checkout() {
    # The files git knows (tracked and new, not ignored): what a clone of this work would hold.
    mkdir -p "$root/src/switchyard"
    git -C "$checkout" ls-files -z --cached --others --exclude-standard |
        (cd "$checkout" && tar --null -T - -cf - 2>/dev/null) | tar -xf - -C "$root/src/switchyard"
}

setup_without_root_says_what_to_run() {
    local output
    chmod -R a+rX "$root/src"
    if output=$(chroot --userspec=nobody:nogroup "$root" /usr/bin/env -i HOME=/tmp \
        PATH=/usr/bin:/bin /src/switchyard/scripts/setup.sh 2>&1); then
        echo "setup.sh succeeded without root: $output"
        return 1
    fi
    echo "$output"
    grep -q "There is no sudo here. Run this script as root" <<<"$output"
}

run_tests() {
    in_root /bin/bash -c 'cd /src/switchyard && scripts/test.sh'
}

demo_answers_and_stops_on_sigterm() {
    local out="$log/server.out" base_url="" body status
    # Started directly, not through in_root: a function in the background is a subshell of its
    # own, and SIGTERM must reach Switchyard itself (chroot, env and run.sh all exec into it).
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /src/switchyard/scripts/run.sh --headless --listen 127.0.0.1:0 >"$out" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 600); do
        base_url=$(grep -o 'OpenAI base URL http://[^ ;]*' "$out" | awk '{print $4}' || true)
        [ -n "$base_url" ] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$out"; return 1; }
        sleep 0.5
    done
    [ -n "$base_url" ] || { echo "no base URL printed"; cat "$out"; return 1; }
    echo "server: $base_url"

    body=$(curl -sS --max-time 30 "$base_url/chat/completions" -H 'content-type: application/json' \
        -d '{"model":"demo-chat","messages":[{"role":"user","content":"Hello from a fresh root"}]}')
    echo "chat: $body"
    grep -q '"object":"chat.completion"' <<<"$body"
    grep -q '"content":"' <<<"$body"

    status=$(curl -sS --max-time 10 -o /dev/null -w '%{http_code}' "${base_url%/v1}/healthz")
    echo "healthz: $status"
    [ "$status" = 200 ]

    kill -TERM "$server_pid"
    local code=0
    wait "$server_pid" || code=$?
    server_pid=""
    echo "exit status after SIGTERM: $code"
    [ "$code" -eq 0 ]
}

# Starts the installed binary as the unit does, with a state directory; sets installed_base to
# its base URL and server_pid to its process (not in a subshell, so the caller sees both).
installed_base=""
start_installed() {
    local out="$1" base_url=""
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        STATE_DIRECTORY=/var/lib/switchyard PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        /usr/bin/switchyard --headless --config /etc/switchyard/switchyard.yaml \
        --listen 127.0.0.1:0 >"$out" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 120); do
        base_url=$(grep -o 'OpenAI base URL http://[^ ;]*' "$out" | awk '{print $4}' || true)
        [ -n "$base_url" ] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$out"; return 1; }
        sleep 0.5
    done
    [ -n "$base_url" ] || { cat "$out"; return 1; }
    installed_base="${base_url%/v1}"
}

stop_installed() {
    kill -TERM "$server_pid"
    local code=0
    wait "$server_pid" || code=$?
    server_pid=""
    echo "exit status after SIGTERM: $code"
    [ "$code" -eq 0 ]
}

package_installs_and_keeps_state() {
    # Every command is checked: a step function runs where `set -e` does not apply.
    local base answer deb
    in_root /bin/bash -c 'cd /src/switchyard/build && cpack -G DEB' || return 1
    deb=$(cd "$root/src/switchyard/build" && ls switchyard_*.deb 2>/dev/null | head -n 1)
    [ -n "$deb" ] || { echo "cpack made no switchyard_*.deb"; return 1; }
    echo "package: $deb"
    answer=$(in_root dpkg-deb -f "/src/switchyard/build/$deb" Depends) || return 1
    echo "Depends: $answer"
    grep -q 'libqt6sql6-sqlite' <<<"$answer" || return 1
    in_root apt-get install -y "/src/switchyard/build/$deb" || return 1
    grep -q '^StateDirectory=switchyard' "$root/lib/systemd/system/switchyard.service" || return 1
    mkdir -p "$root/etc/switchyard"
    cat >"$root/etc/switchyard/switchyard.yaml" <<'YAML'
providers:
  - id: local
    kind: simulated
    models: [packaged-chat]
    simulate: {latency: 10ms, first_token: 10ms}
YAML

    start_installed "$log/installed-1.out" || return 1
    base=$installed_base
    echo "first run: $base"
    answer=$(curl -sS --max-time 30 "$base/v1/chat/completions" -H 'content-type: application/json' \
        -d '{"model":"packaged-chat","messages":[{"role":"user","content":"hello"}]}') || return 1
    echo "chat: $answer"
    grep -q '"object":"chat.completion"' <<<"$answer" || return 1
    stop_installed || return 1
    test -s "$root/var/lib/switchyard/switchyard.db" || return 1

    start_installed "$log/installed-2.out" || return 1
    base=$installed_base
    echo "second run: $base"
    answer=$(curl -sS --max-time 10 "$base/admin/v1/config/versions") || return 1
    echo "versions: $answer"
    grep -Eq '"number": ?1[,}]' <<<"$answer" || return 1
    answer=$(curl -sS --max-time 10 "$base/admin/v1/usage?group_by=model") || return 1
    echo "usage: $answer"
    grep -Eq '"model": ?"packaged-chat"' <<<"$answer" || return 1
    grep -Eq '"requests": ?1[,}]' <<<"$answer" || return 1
    stop_installed
}

step "mmdebstrap a new Debian 12 root (variant apt)" make_root || finish
step "copy the checkout into the root" copy_checkout || finish
step "setup.sh without root or sudo stops and says what to run" setup_without_root_says_what_to_run || true
step "scripts/test.sh (set-up, build, every test)" run_tests || true
step "scripts/run.sh --headless: chat completion, /healthz, SIGTERM exits 0" demo_answers_and_stops_on_sigterm || true
step "the .deb installs; versions and the ledger survive a restart of the installed binary" \
    package_installs_and_keeps_state || true
finish
