#!/usr/bin/env bash
# A venv for the compaction benchmarks: agentkit-core and every plugin (editable), as the
# README installs them, beside the peers they are compared with: langchain-core's
# trim_messages (bench.py), and langchain's SummarizationMiddleware (fold.py).
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
ours=(-e "$root")
for p in "$root"/plugins/*/; do
  [ -f "$p/pyproject.toml" ] && ours+=(-e "${p%/}")
done
bench_env compaction-all "${ours[@]}" "langchain-core>=0.3" "langchain>=1.0"
echo "$root/benchmarks/.envs/compaction-all/bin/python"
