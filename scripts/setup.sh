#!/usr/bin/env bash
# Installs the Debian 12 packages Switchyard needs to build, run and test, if any are missing.
# Safe to run again: it only calls apt when something is not installed.
#   scripts/setup.sh                   install what is missing (as root, or through sudo)
#   scripts/setup.sh --print-packages  print the list, one package a line (the CI guard reads it)
set -euo pipefail

# Nothing is assumed to be there already: scripts/fresh-root-check.sh proves this list in a
# brand-new Debian 12 root, and scripts/check-packages.sh makes CI fail when a build or test uses
# a package this list does not bring in.
packages=(
    # Compiler and build tools; `file` is what CPack's .deb generator finds executables with.
    build-essential cmake pkg-config git file
    # Qt 6.4 modules the build finds.
    qt6-base-dev qt6-base-dev-tools qt6-httpserver-dev qt6-charts-dev
    qt6-l10n-tools qt6-tools-dev qt6-tools-dev-tools
    # Needed at configure time but not declared by Debian's packages: Qt6HttpServer's CMake
    # package requires Qt6WebSockets; Qt6Charts requires Qt6OpenGL, which requires XKB.
    qt6-websockets-dev libqt6opengl6-dev libxkbcommon-dev libgl-dev
    # The console's platform plugins: xcb for a real window, offscreen for the console tests.
    qt6-qpa-plugins
    # Engine libraries, and the CA certificates libcurl verifies https providers against.
    libyaml-cpp-dev libcurl4-openssl-dev libsimdjson-dev ca-certificates
    # Qt SQL's SQLite driver, a plugin loaded at run time: the state database of config versions,
    # API keys and the usage ledger (docs/operations.md).
    libqt6sql6-sqlite
    # SQLite's own header: the usage ledger writes its rows with a statement prepared once on the
    # connection Qt SQL opened (router_core/usage/usage_ledger.cpp).
    libsqlite3-dev
    # C++20 coroutines for Qt: the executor's attempt loop (docs/architecture.md).
    qcoro-qt6-dev
    # The fleet's Redis client (docs/fleet.md), and the Redis server the fleet tests start on a
    # loopback port of their own (never as a service of the machine).
    libhiredis-dev redis-server
    # The gateway's allocator, linked in place of glibc's malloc (app/CMakeLists.txt says why).
    libjemalloc-dev
    # A real load balancer in front of two nodes: tst_load_balancer starts HAProxy on a loopback
    # port of its own, in the foreground, with a config in a temporary directory (never as a
    # service of the machine), and restarts and kills a node behind it (docs/fleet.md).
    haproxy
    # scripts/bench-fleet.sh drives the fleet's nodes over HTTP with the curl command, and
    # tst_gateway_connections sends hundreds of curl requests at once past the connection caps.
    curl
    # Fonts the console renders with, Latin and Simplified Chinese alike.
    fonts-noto-cjk fonts-dejavu-core
    # CI: scripts/format.sh checks formatting; scripts/check-packages.sh traces with strace.
    clang-format strace
    # The official openai SDK's check (tests/sdk) runs on Node; npm installs the pinned SDK.
    # fetch_refusals_check drives Node's own fetch against refused connections.
    nodejs npm
    # tst_gateway_metrics checks a real GET /metrics scrape with promtool, shipped in this package.
    prometheus
    # tst_gateway_keys makes the self-signed certificates of its TLS listener with the openssl
    # command.
    openssl
)

if [ "${1:-}" = "--print-packages" ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi

# A package counts as there when it is installed, or when an installed package Provides it: a
# nodejs built elsewhere bundles npm, Provides it and Conflicts with Debian's, so asking apt for
# npm there would fail.
provided=" $(dpkg-query -W -f='${db:Status-Status}\t${Provides}\n' 2>/dev/null |
    awk -F '\t' '$1 == "installed" && $2 != "" { print $2 }' |
    tr ',' '\n' | sed 's/([^)]*)//; s/:.*//; s/[[:space:]]//g' | sort -u | tr '\n' ' ')"
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" &&
        [[ "$provided" != *" $package "* ]]; then
        missing+=("$package")
    fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
        cat >&2 <<EOF
scripts/setup.sh: these Debian packages are missing and installing them needs root:
  ${missing[*]}
There is no sudo here. Run this script as root once (for example: su -c '$0'), or run
  apt-get update && apt-get install --no-install-recommends ${missing[*]}
as root, then run the command again.
EOF
        exit 1
    fi
    sudo="sudo"
fi

echo "Installing missing packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
