#!/usr/bin/env bash
# The Debian packages the test suite needs, checked (and installed when root)
# before `pnpm check` runs anything. Keep the list here and only here.
#   chromium    the session-viewer test opens an exported page in headless Chromium
#   bubblewrap  the shell tool's OS sandbox (bwrap)
#   socat       the sandbox's network proxy bridge
#   ripgrep     the sandbox's file scans (rg)
#   postgresql  the store-postgres tests' throwaway cluster (packages/test-postgres)
#   strace      the shell analysis' differential oracle traces what bash executes
# Each entry is "debian-package:command that proves it is installed"; a command
# given as an absolute path (a glob) must match an existing file.
# As root, missing packages are installed (apt-get update once, then install);
# otherwise, or with --check, the missing ones are named and the exit code is 1.
set -euo pipefail
check_only=false
[ "${1:-}" = "--check" ] && check_only=true
PACKAGES=(
  "chromium:chromium"
  "bubblewrap:bwrap"
  "socat:socat"
  "ripgrep:rg"
  "postgresql:/usr/lib/postgresql/*/bin/initdb"
  "strace:strace"
)

installed() {
  case $1 in
  /*) compgen -G "$1" >/dev/null ;;
  *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

missing=()
for entry in "${PACKAGES[@]}"; do
  installed "${entry#*:}" || missing+=("${entry%%:*}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if $check_only || [ "$(id -u)" -ne 0 ]; then
  echo "system packages missing: ${missing[*]}" >&2
  echo "  install them: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "installing system packages: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "system-packages: apt-get failed installing: ${missing[*]}" >&2
  exit 1
fi
rm -f "$log"
