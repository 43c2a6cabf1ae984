#!/usr/bin/env bash
# Configures (once) and builds Switchyard in build/. Extra arguments go to `cmake --build`.
set -euo pipefail
cd "$(dirname "$0")/.."

"./scripts/setup.sh"
if [ ! -f build/CMakeCache.txt ]; then
    cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSWITCHYARD_WERROR=ON
fi
cmake --build build --parallel "$(nproc)" "$@"
