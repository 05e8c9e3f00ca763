#!/usr/bin/env bash
# Venvs for the observability benchmark. Fast when they exist already.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
# agentkit the way the README installs it: core and every plugin under plugins/ (editable; the
# OpenTelemetry plugin brings the SDK). The benchmark also measures core alone (hooks=Hooks()).
ours=(-e "$root")
for p in "$root"/plugins/*/; do
  [ -f "$p/pyproject.toml" ] && ours+=(-e "${p%/}")
done
bench_env observability-agentkit-all "${ours[@]}" "websocket-client>=1.6"
# pydantic-ai with the OpenTelemetry SDK, for its own instrument= on the same no-op exporter.
bench_env observability-pydantic-ai "pydantic-ai-slim>=1.0" "opentelemetry-sdk>=1.30"
echo "$root/benchmarks/.envs"
