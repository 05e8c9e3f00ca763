#!/usr/bin/env bash
# Real MCP peers for the mcp-client / mcp-server tests, installed repo-locally (gitignored):
#   .ci/cache/mcp/node_modules   server-everything, server-filesystem, the MCP Inspector, the
#                                client conformance suite, and Node 22 (the `node` npm package)
#                                because the conformance suite needs it
#   .ci/cache/mcp/time-venv      PyPI mcp-server-time in its own venv
# Idempotent: a piece already present is not installed again.
set -euo pipefail
cd "$(dirname "$0")/../.."

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

root=.ci/cache/mcp
mkdir -p "$root"

# npm trusts only its own CA list; behind a TLS-inspecting proxy every fetch then fails with
# SELF_SIGNED_CERT_IN_CHAIN and is retried for minutes. Hand it the system trust store.
for ca in "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt; do
  if [ -n "$ca" ] && [ -f "$ca" ]; then
    export npm_config_cafile="$ca"
    break
  fi
done

npm_packages=(
  "@modelcontextprotocol/server-everything"
  "@modelcontextprotocol/server-filesystem"
  "@modelcontextprotocol/inspector"
  "@modelcontextprotocol/conformance"
  "node@22"
)
bins=(mcp-server-everything mcp-server-filesystem mcp-inspector conformance node)
missing=0
for bin in "${bins[@]}"; do
  [ -x "$root/node_modules/.bin/$bin" ] || missing=1
done
if [ "$missing" = 1 ]; then
  if ! command -v npm >/dev/null; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  # Bounded, so a registry that does not answer fails this step instead of the CI clock.
  timeout 900 npm install --silent --no-audit --no-fund --fetch-retries=2 \
    --prefix "$root" "${npm_packages[@]}"
fi

if [ ! -x "$root/time-venv/bin/mcp-server-time" ]; then
  python3 -m venv "$root/time-venv"
  "$root/time-venv/bin/pip" install -q mcp-server-time
fi
echo "mcp peers ready in $root"
