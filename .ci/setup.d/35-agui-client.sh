#!/usr/bin/env bash
# The official AG-UI client (`@ag-ui/client` from npm), for serve-agui's test that runs it by
# Node against `agentkit serve --protocol agui`; installed repo-locally (gitignored):
#   .ci/cache/agui/node_modules
# Idempotent: nothing is fetched when it is there.
set -euo pipefail
cd "$(dirname "$0")/../.."

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

root=.ci/cache/agui
mkdir -p "$root"

# npm trusts only its own CA list; hand it the system trust store (see 30-mcp.sh).
for ca in "${NODE_EXTRA_CA_CERTS:-}" "${SSL_CERT_FILE:-}" /etc/ssl/certs/ca-certificates.crt; do
  if [ -n "$ca" ] && [ -f "$ca" ]; then
    export npm_config_cafile="$ca"
    break
  fi
done

if [ ! -f "$root/node_modules/@ag-ui/client/package.json" ]; then
  if ! command -v npm >/dev/null; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
  fi
  # Bounded, so a registry that does not answer fails this step instead of the CI clock.
  timeout 600 npm install --silent --no-audit --no-fund --fetch-retries=2 \
    --prefix "$root" "@ag-ui/client@^1"
fi
echo "AG-UI client ready in $root"
