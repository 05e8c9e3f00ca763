#!/usr/bin/env bash
# A venv for the session benchmarks: agentkit-core and the session-sqlite/-postgres plugins
# (editable) beside langgraph and its SQLite and PostgreSQL checkpoint savers, the peer the
# resume benchmark compares with.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
bench_env sessions-langgraph -e "$root" -e "$root/plugins/session-sqlite" \
  -e "$root/plugins/session-postgres" "langgraph>=1.0" "langgraph-checkpoint-sqlite>=3.0" \
  "langgraph-checkpoint-postgres>=3.0" "psycopg[binary]>=3.1" "psycopg-pool>=3.2"
echo "$root/benchmarks/.envs/sessions-langgraph/bin/python"
