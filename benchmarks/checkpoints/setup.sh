#!/usr/bin/env bash
# A venv for the checkpoint benchmarks: agentkit-core and checkpoint-sqlite (editable) beside
# langgraph-checkpoint-sqlite, the peer they are compared with.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
env="$root/benchmarks/.envs/checkpoints-langgraph"
if [ ! -x "$env/bin/python" ]; then
  python3 -m venv "$env"
fi
"$env/bin/python" -m pip install -q -e "$root" -e "$root/plugins/checkpoint-sqlite" \
  "langgraph-checkpoint-sqlite>=3.1"
echo "$env/bin/python"
