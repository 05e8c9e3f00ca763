#!/usr/bin/env bash
# A venv for the checkpoint benchmarks: agentkit-core and every plugin (editable, as the README
# installs them) beside langgraph-checkpoint-sqlite, the peer they are compared with.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
ours=(-e "$root")
for p in "$root"/plugins/*/; do
  [ -f "$p/pyproject.toml" ] && ours+=(-e "${p%/}")
done
bench_env checkpoints-langgraph "${ours[@]}" "langgraph-checkpoint-sqlite>=3.1"
echo "$root/benchmarks/.envs/checkpoints-langgraph/bin/python"
