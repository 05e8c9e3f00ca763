#!/usr/bin/env bash
# pydantic-ai's AG-UI adapter in a venv of its own, for bench_pydantic_ai.py. Fast when it exists.
# (agentkit's side runs where agentkit and its serve plugins are installed.)
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env serve-pydantic-ai "pydantic-ai-slim[ag-ui]>=1.0" "uvicorn>=0.29" "httpx>=0.27"
echo "$root/benchmarks/.envs"
