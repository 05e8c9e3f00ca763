#!/usr/bin/env bash
# One venv per framework for the agent-loop benchmark, under benchmarks/.envs/ (gitignored), so
# no framework's dependencies change another's numbers. Fast when the venvs exist already.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
envs="$root/benchmarks/.envs"
make_env() {  # make_env NAME PIP-ARGS...
  local env="$envs/agent_loop-$1"
  shift
  if [ ! -f "$env/.installed" ]; then
    python3 -m venv "$env"
    "$env/bin/python" -m pip install -q "$@"
    touch "$env/.installed"
  fi
}
# agentkit: the core alone, so no installed plugin (a guardrail's hook) adds work to the loop.
make_env agentkit -e "$root"
make_env pydantic-ai "pydantic-ai-slim>=1.0"
make_env openai-agents "openai-agents>=0.3"
make_env langgraph "langgraph>=0.6" "langchain-core>=0.3"
make_env langchain "langchain>=1.0"
echo "$envs"
