#!/usr/bin/env bash
# Venvs for the observability benchmark. Fast when they exist already.
set -euo pipefail
. "$(dirname "$0")/../_env.sh"
# agentkit as the README installs it (the OpenTelemetry plugin brings the SDK); the benchmark
# also measures core alone (hooks=Hooks()).
bench_env observability-agentkit-all "${every_plugin[@]}" "websocket-client>=1.6"
# pydantic-ai with the OpenTelemetry SDK, for its own instrument= on the same no-op exporter.
bench_env observability-pydantic-ai "pydantic-ai-slim>=1.0" "opentelemetry-sdk>=1.30"
echo "$root/benchmarks/.envs"
