#!/usr/bin/env bash
# A venv for the compaction benchmarks: agentkit-core, the two model-free compactors and the
# summarization compactor (editable) beside the peers they are compared with: langchain-core's
# trim_messages (bench.py), and langchain's SummarizationMiddleware (fold.py).
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env compaction -e "$root" -e "$root/plugins/compactor-truncation" \
  -e "$root/plugins/compactor-sliding-window" -e "$root/plugins/compactor-summarization" \
  "langchain-core>=0.3" "langchain>=1.0"
echo "$root/benchmarks/.envs/compaction/bin/python"
