#!/usr/bin/env bash
# Sets up, builds and runs every test: unit, integration (real server on port 0 against fake
# upstreams) and console (offscreen). Arguments are passed to ctest, e.g. `-L unit`.
set -euo pipefail
cd "$(dirname "$0")/.."

"./scripts/build.sh"
ctest --test-dir build --output-on-failure --parallel "$(nproc)" "$@"
