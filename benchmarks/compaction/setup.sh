#!/usr/bin/env bash
# A venv for the compaction benchmarks: agentkit-core and every plugin (editable), as the
# README installs them, beside the peers they are compared with: langchain-core's
# trim_messages (bench.py), and langchain's SummarizationMiddleware (fold.py).
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env compaction-all "${every_plugin[@]}" "langchain-core>=0.3" "langchain>=1.0"
echo "$root/benchmarks/.envs/compaction-all/bin/python"
