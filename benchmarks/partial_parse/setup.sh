#!/usr/bin/env bash
# A venv for the partial-parsing benchmark: agentkit-core (editable) beside the peers it is
# compared with, pydantic (its experimental_allow_partial re-parse) and json-repair.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
env="$root/benchmarks/.envs/partial_parse"
if [ ! -x "$env/bin/python" ]; then
  python3 -m venv "$env"
fi
"$env/bin/python" -m pip install -q -e "$root" -e "$root/plugins/schema-pydantic" \
  "pydantic>=2.10" "json-repair>=0.30"
echo "$env/bin/python"
