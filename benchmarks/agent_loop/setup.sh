#!/usr/bin/env bash
# One venv per framework for the agent-loop benchmark. Fast when the venvs exist already.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
# agentkit as the README installs it (every plugin discovered); the benchmark also measures core
# alone (hooks=Hooks()).
bench_env agent_loop-agentkit "${every_plugin[@]}"
bench_env agent_loop-pydantic-ai "pydantic-ai-slim>=1.0"
bench_env agent_loop-openai-agents "openai-agents>=0.3"
bench_env agent_loop-langgraph "langgraph>=0.6" "langchain-core>=0.3"
bench_env agent_loop-langchain "langchain>=1.0"
echo "$root/benchmarks/.envs"
