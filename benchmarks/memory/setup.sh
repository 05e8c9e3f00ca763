#!/usr/bin/env bash
# A venv for the memory benchmarks: agentkit-core and the memory-files/-sqlite plugins
# (editable). The floors they compare with are plain Python (sqlite3, file reads): no peer.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env memory -e "$root" -e "$root/plugins/memory-files" -e "$root/plugins/memory-sqlite"
echo "$root/benchmarks/.envs/memory/bin/python"
