#!/usr/bin/env bash
# A venv for the compaction benchmark: agentkit-core and the two model-free compactors
# (editable) beside the peer they are compared with, langchain-core's trim_messages.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env compaction -e "$root" -e "$root/plugins/compactor-truncation" \
  -e "$root/plugins/compactor-sliding-window" "langchain-core>=0.3"
echo "$root/benchmarks/.envs/compaction/bin/python"
