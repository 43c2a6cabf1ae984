#!/usr/bin/env bash
# Configures (once) and builds Switchyard in build/, profile-guided (scripts/pgo-train.sh); with
# SWITCHYARD_PGO=OFF in the environment, without a profile. Extra arguments go to `cmake --build`.
set -euo pipefail
cd "$(dirname "$0")/.."

"./scripts/setup.sh"
# Configured when new, or again when a training stopped before its end left it instrumented.
if [ ! -f build/CMakeCache.txt ] || grep -qx 'SWITCHYARD_PGO:STRING=generate' build/CMakeCache.txt
then
    if [ "${SWITCHYARD_PGO:-use}" != OFF ]; then
        # Configures build/, instrumented, trains it, and leaves it configured to use what
        # the training counted: the build below compiles everything with the profile.
        "./scripts/pgo-train.sh"
    else
        cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSWITCHYARD_WERROR=ON
    fi
fi
if ! grep -qx 'SWITCHYARD_PGO:STRING=use' build/CMakeCache.txt; then
    exec cmake --build build --parallel "$(nproc)" "$@"
fi
# A profile older than the code it guides: a function edited since the training is compiled
# without its profile (a warning), but a call into one from a function that kept its profile is
# an error no option turns off ("Missing counts for called function"). A build that fails on that
# trains again and builds once more; any other failure is the build's own.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if cmake --build build --parallel "$(nproc)" "$@" 2>&1 | tee "$log"; then
    exit 0
fi
if ! grep -q 'Missing counts for called function' "$log"; then
    exit 1
fi
echo "build.sh: the profile is older than the code it guides; training again" \
     "(scripts/pgo-train.sh, about 15 minutes on 2 cores)" >&2
"./scripts/pgo-train.sh"
cmake --build build --parallel "$(nproc)" "$@"
