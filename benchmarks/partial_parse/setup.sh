#!/usr/bin/env bash
# A venv for the partial-parsing benchmark: agentkit-core (editable) beside the peers it is
# compared with, pydantic (its experimental_allow_partial re-parse) and json-repair.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env partial_parse -e "$root" -e "$root/plugins/schema-pydantic" \
  "pydantic>=2.10" "json-repair>=0.30"
echo "$root/benchmarks/.envs/partial_parse/bin/python"
