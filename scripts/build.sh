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
cmake --build build --parallel "$(nproc)" "$@"
