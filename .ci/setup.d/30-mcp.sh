#!/usr/bin/env bash
# Real MCP peers for the mcp-client / mcp-server tests, installed repo-locally (gitignored):
#   .ci/cache/mcp/node_modules   server-everything, server-filesystem, the MCP Inspector, the
#                                client conformance suite, and Node 22 (the `node` npm package)
#                                because the conformance suite needs it
#   .ci/cache/mcp/time-venv      PyPI mcp-server-time in its own venv
# Idempotent: a piece already present is not installed again.
set -euo pipefail
# shellcheck source=../setup-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../setup-lib.sh"
cd "$(dirname "$0")/../.."

root=.ci/cache/mcp
mkdir -p "$root"

npm_packages=(
  "@modelcontextprotocol/server-everything"
  "@modelcontextprotocol/server-filesystem"
  "@modelcontextprotocol/inspector"
  "@modelcontextprotocol/conformance"
  "node@22"
)
bins=(mcp-server-everything mcp-server-filesystem mcp-inspector conformance node)
# The PyPI server installs beside npm (each mostly waits on the network): ~35 s less on a
# fresh machine, where the tests environment waits for this script.
time_venv=
if [ ! -x "$root/time-venv/bin/mcp-server-time" ]; then
  rm -rf "$root/time-venv"
  { python3 -m venv "$root/time-venv" && "$root/time-venv/bin/pip" install -q mcp-server-time; } &
  time_venv=$!
fi

missing=0
for bin in "${bins[@]}"; do
  [ -x "$root/node_modules/.bin/$bin" ] || missing=1
done
if [ "$missing" = 1 ]; then
  npm_install 900 "$root" "${npm_packages[@]}"
fi
if [ -n "$time_venv" ]; then
  wait "$time_venv"
fi
echo "mcp peers ready in $root"
