#!/usr/bin/env bash
# `pnpm check`: every gate, quietly. Each step prints only its failures (vitest
# keeps its closing summary); a failing step names itself and stops the check.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$PATH"

step() {
  local name=$1
  shift
  if ! "$@"; then
    echo "check: ${name} failed" >&2
    exit 1
  fi
}

# Rein needs Node >= 22.19; say so plainly instead of failing somewhere in the build.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)'; then
  echo "check: Node $(node --version) is older than 22.19; run: sh scripts/with-node.sh npx --yes pnpm@10.34.9 check" >&2
  exit 1
fi
step "system packages" bash scripts/system-packages.sh
step "build (tsc -b)" tsc -b
step "vendor bundles (packages/cli/scripts/bundle-vendor.mjs)" node packages/cli/scripts/bundle-vendor.mjs
step "package bundles (packages/cli/scripts/bundle-packages.mjs)" node packages/cli/scripts/bundle-packages.mjs
step "typecheck (tsconfig.tests.json)" tsc -p tsconfig.tests.json
step "lint (biome)" biome check --log-level=error --diagnostic-level=warn .
# Bump lists go to stdout; a missing changeset is reported on stderr.
step "changeset status" sh -c 'changeset status >/dev/null'
# One throwaway PostgreSQL cluster for the whole test run (unless REIN_PG_URL names
# a server already); tests share it, each in its own database. Stopped on exit.
if [ -z "${REIN_PG_URL:-}" ]; then
  pg=$(node packages/test-postgres/dist/cli.js start) || {
    echo "check: starting the test PostgreSQL cluster failed" >&2
    exit 1
  }
  export REIN_PG_URL=${pg%%$'\n'*}
  pg_dir=${pg#*$'\n'}
  trap 'node packages/test-postgres/dist/cli.js stop "$pg_dir"' EXIT
fi
# The minimal reporter prints only failed files and tests (with their logs), then the summary.
step "tests (vitest)" vitest run --reporter=minimal "$@"
