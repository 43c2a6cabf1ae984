#!/bin/sh
# ctest's set-up for openai_sdk_check and anthropic_sdk_check: installs the SDKs that
# package-lock.json pins, with `npm ci`, when node_modules is missing or older than the lock file.
# Otherwise it does nothing, so only the first run (and a changed lock file) needs the npm registry.
#   tests/sdk/install_sdk.sh [NPM]    NPM: the npm to run (default: the one on PATH)
set -eu
cd "$(dirname "$0")"
npm="${1:-npm}"

# npm ci writes node_modules/.package-lock.json last, once everything is in place.
if [ node_modules/.package-lock.json -nt package-lock.json ]; then
    echo "tests/sdk/node_modules matches package-lock.json"
    exit 0
fi
exec "$npm" ci --no-audit --no-fund
