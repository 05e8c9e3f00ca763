#!/usr/bin/env bash
# The LangChain venv the guards benchmark measures PIIMiddleware in. Fast when it exists.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env guards-langchain "langchain>=1.0"
echo "$root/benchmarks/.envs/guards-langchain"
