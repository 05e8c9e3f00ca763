#!/usr/bin/env bash
# The pydantic-ai venv (with its DBOS extra) the durable benchmark measures DBOSAgent in.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env durable-pydantic-ai "pydantic-ai-slim[dbos]>=1" "dbos==3.4.0"
echo "$root/benchmarks/.envs/durable-pydantic-ai"
