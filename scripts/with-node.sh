#!/bin/sh
# Runs its arguments under Node >= 22.19 (pi-ai's floor): the machine's own node when it
# is new enough, otherwise Node 24 LTS taken from the npm registry (the `node` package),
# which puts that node first on PATH for everything the command starts.
if node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)' 2>/dev/null; then
  exec "$@"
fi
# npx passes its own -p on to the command as npm_config_package; an inner npx would
# take it for its package list, so it is removed.
exec npx --yes -p node@24 -- env -u npm_config_package -u npm_config_yes "$@"
