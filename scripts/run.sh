#!/usr/bin/env bash
# Sets up, builds and starts Switchyard: the console with the embedded demo, or headless where
# there is no display. Arguments are passed to switchyard (see `scripts/run.sh --help`).
set -euo pipefail
cd "$(dirname "$0")/.."

"./scripts/build.sh" --target switchyard
exec build/app/switchyard "$@"
