#!/usr/bin/env bash
# The package guard (scripts/check-packages.sh) on a recorded trace: it fails on the package list
# that left out what Debian's Qt packages need without declaring it, naming exactly those
# packages, and passes on scripts/setup.sh's list. Prints 'N passed, N failed'.
set -euo pipefail
cd "$(dirname "$0")/../.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
arch=$(gcc -print-multiarch) # not dpkg-architecture: its Perl reaches for optional modules

# As strace writes it: CMake opening Qt's package files, and a probe for a file that is absent
# (failed calls are not uses).
cat >"$work/trace" <<TRACE
4242  openat(AT_FDCWD, "/usr/lib/$arch/cmake/Qt6Core/Qt6CoreConfig.cmake", O_RDONLY) = 3
4242  openat(AT_FDCWD, "/usr/lib/$arch/cmake/Qt6WebSockets/Qt6WebSocketsConfig.cmake", O_RDONLY) = 3
4243  openat(AT_FDCWD, "/usr/lib/$arch/cmake/Qt6OpenGL/Qt6OpenGLConfig.cmake", O_RDONLY <unfinished ...>
4242  openat(AT_FDCWD, "/usr/lib/$arch/pkgconfig/xkbcommon.pc", O_RDONLY) = 3
4243  <... openat resumed>) = 4
4242  openat(AT_FDCWD, "/usr/share/doc/no-such-package/README", O_RDONLY) = -1 ENOENT (No such file or directory)
TRACE

# The list scripts/setup.sh had before the fresh-root proof found what it missed.
cat >"$work/old-list" <<LIST
build-essential cmake pkg-config git qt6-base-dev qt6-base-dev-tools qt6-httpserver-dev
qt6-charts-dev qt6-l10n-tools qt6-tools-dev qt6-tools-dev-tools qt6-qpa-plugins libyaml-cpp-dev
libcurl4-openssl-dev libsimdjson-dev libgl-dev fonts-noto-cjk clang-format
LIST
tr ' ' '\n' <"$work/old-list" >"$work/old-packages"

passed=0
failed=0
check() { # NAME CONDITION...
    local name="$1"
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name"
    fi
}

status=0
scripts/check-packages.sh check "$work/trace" "$work/old-packages" >"$work/old.out" || status=$?
cat "$work/old.out"
check "the old list fails" test "$status" -eq 1
missing=$(awk '/^  [a-z0-9]/ { print $1 }' "$work/old.out" | sort | tr '\n' ' ')
check "it names exactly the three undeclared packages" \
    test "$missing" = "libqt6opengl6-dev libxkbcommon-dev qt6-websockets-dev "

status=0
scripts/check-packages.sh check "$work/trace" >"$work/new.out" || status=$?
cat "$work/new.out"
check "scripts/setup.sh's list passes" test "$status" -eq 0

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
