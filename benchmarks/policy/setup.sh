#!/usr/bin/env bash
# The LangChain venv the policy benchmark measures HumanInTheLoopMiddleware in. Fast when it exists.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env policy-langchain "langchain>=1.0"
echo "$root/benchmarks/.envs/policy-langchain"
