#!/usr/bin/env bash
# A venv for the session benchmarks: agentkit-core and every plugin (editable, as the README
# installs them) beside langgraph and its SQLite and PostgreSQL checkpoint savers, the peer the
# resume benchmark compares with.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env sessions-langgraph "${every_plugin[@]}" "langgraph>=1.0" "langgraph-checkpoint-sqlite>=3.0" \
  "langgraph-checkpoint-postgres>=3.0" "psycopg[binary]>=3.1" "psycopg-pool>=3.2"
echo "$root/benchmarks/.envs/sessions-langgraph/bin/python"
