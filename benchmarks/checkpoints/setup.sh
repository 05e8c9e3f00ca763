#!/usr/bin/env bash
# A venv for the checkpoint benchmarks: agentkit-core and every plugin (editable, as the README
# installs them) beside langgraph-checkpoint-sqlite, the peer they are compared with.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env checkpoints-langgraph "${every_plugin[@]}" "langgraph-checkpoint-sqlite>=3.1"
echo "$root/benchmarks/.envs/checkpoints-langgraph/bin/python"
