#!/usr/bin/env bash
# Prints command N (1: the main job, 2: the tests) of README.md's Quick start: the
# Nth ```sh block of that section. .ci/run runs exactly these.
set -euo pipefail
cd "$(dirname "$0")/.."
awk -v want="$1" '
  /^## Quick start/ { inside = 1; next }
  inside && /^## / { exit }
  inside && /^```sh$/ { block++; grab = (block == want); next }
  inside && /^```$/ { grab = 0; next }
  grab { print }
' README.md
