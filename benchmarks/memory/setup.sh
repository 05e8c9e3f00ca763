#!/usr/bin/env bash
# A venv for the memory benchmarks: agentkit-core and every plugin (editable), as the README
# installs them. The floors they compare with are plain Python (sqlite3, file reads): no peer.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
ours=(-e "$root")
for p in "$root"/plugins/*/; do
  [ -f "$p/pyproject.toml" ] && ours+=(-e "${p%/}")
done
bench_env memory-all "${ours[@]}"
echo "$root/benchmarks/.envs/memory-all/bin/python"
