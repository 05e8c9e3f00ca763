#!/usr/bin/env bash
# A venv for the memory benchmarks: agentkit-core and every plugin (editable), as the README
# installs them. The floors they compare with are plain Python (sqlite3, file reads): no peer.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env memory-all "${every_plugin[@]}"
echo "$root/benchmarks/.envs/memory-all/bin/python"
