#!/usr/bin/env bash
# A venv for the compaction benchmark: agentkit-core and the two model-free compactors
# (editable) beside the peer they are compared with, langchain-core's trim_messages.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
env="$root/benchmarks/.envs/compaction"
if [ ! -x "$env/bin/python" ]; then
  python3 -m venv "$env"
fi
"$env/bin/python" -m pip install -q -e "$root" -e "$root/plugins/compactor-truncation" \
  -e "$root/plugins/compactor-sliding-window" "langchain-core>=0.3"
echo "$env/bin/python"
