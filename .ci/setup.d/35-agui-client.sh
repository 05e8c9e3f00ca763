#!/usr/bin/env bash
# The official AG-UI client (`@ag-ui/client` from npm), for serve-agui's test that runs it by
# Node against `agentkit serve --protocol agui`; installed repo-locally (gitignored):
#   .ci/cache/agui/node_modules
# Idempotent: nothing is fetched when it is there.
set -euo pipefail
# shellcheck source=../setup-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../setup-lib.sh"
cd "$(dirname "$0")/../.."

root=.ci/cache/agui
mkdir -p "$root"

if [ ! -f "$root/node_modules/@ag-ui/client/package.json" ]; then
  npm_install 600 "$root" "@ag-ui/client@^1"
fi
echo "AG-UI client ready in $root"
